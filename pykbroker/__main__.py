"""`python -m pykbroker` runs the broker command."""

import sys

from .cli import main

sys.exit(main())
