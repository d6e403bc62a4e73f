"""``python -m minijax``: the same as the ``minijax`` command."""

from minijax.cli import main

raise SystemExit(main())
