"""The product suite runs through the harness plugin (options, markers, fixtures, reports)."""

pytest_plugins = ["delivery_conformance.plugin"]
