"""Named faults: the registry of typed switches, the fault table and what each kind of fault
changes.
"""
