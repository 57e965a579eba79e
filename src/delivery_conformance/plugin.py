"""The product suite's pytest plugin under its older public name (`-p delivery_conformance.plugin`
or `pytest_plugins = ["delivery_conformance.plugin"]` in a partner's conftest).

The code lives in `suite/plugin.py`; importing this name gives that very module (one module
object, so pytest never sees the plugin twice under two names as long as one name is used).
"""

import sys

from delivery_conformance.suite import plugin as _plugin

sys.modules[__name__] = _plugin
