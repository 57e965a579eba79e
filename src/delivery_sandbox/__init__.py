"""The Delivery API v1 reference server (the sandbox). Never imports the harness."""

__version__ = "0.1.0"
