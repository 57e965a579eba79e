from delivery_client.cli import main

raise SystemExit(main())
