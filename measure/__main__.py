"""python -m measure: see measure.cli."""

from measure.cli import main

raise SystemExit(main())
