"""``python -m tswarp``: the same command line as the ``tswarp`` script."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
