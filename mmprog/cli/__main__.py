"""``python -m mmprog.cli``: the ``mmprog`` command."""
import sys

from . import main

sys.exit(main())
