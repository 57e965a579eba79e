"""`python -m delivery_sandbox`: the same as the `delivery-sandbox` command."""

from delivery_sandbox.cli import main

raise SystemExit(main())
