"""``python -m gcc.reproduce``: see :mod:`gcc.reproduce.cli`."""
import sys

from .cli import main

sys.exit(main())
