"""The kill rate: the suite run against every fault of the target's catalogue, its pytest cycle,
its reports and the requirement proofs.
"""
