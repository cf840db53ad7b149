"""``python -m app.cli``: the ``domeng`` command."""

import sys

from app.cli import main

sys.exit(main())
