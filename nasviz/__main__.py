"""``python -m nasviz``: see :mod:`nasviz.cli`."""

import sys

from nasviz.cli import main

if __name__ == "__main__":
    sys.exit(main())
