"""Running the product suite: the pytest plugin, the runner, run events, recorded exchanges and
requirement selection.
"""
