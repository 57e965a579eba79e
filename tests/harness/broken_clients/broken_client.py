"""`python broken_client.py NAME [delivery-client arguments]`: the reference client's CLI with
one broken rule installed (see variants.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from variants import VARIANTS, apply


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in VARIANTS:
        print(f"broken_client: name one of {', '.join(VARIANTS)}", file=sys.stderr)
        return 2
    apply(sys.argv[1])
    from delivery_client.cli import main as client_main

    return client_main(sys.argv[2:])


if __name__ == "__main__":
    raise SystemExit(main())
