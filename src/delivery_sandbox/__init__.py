"""The Delivery API v1 reference server (the sandbox). Never imports the harness."""

from importlib.metadata import PackageNotFoundError, version

try:  # one version for the three packages: pyproject reads delivery_conformance.__version__
    __version__ = version("delivery-conformance")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"
