"""`python -m textpile.cli` runs the command line."""

import sys

from textpile.cli import main

sys.exit(main())
