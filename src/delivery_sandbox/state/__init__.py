"""The state of one sandbox: its data store and seed, accounts and keys, clock, and the `Sandbox`
object that holds them.
"""
