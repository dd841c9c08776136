"""``python -m mmprog.cli``: the ``mmprog`` command."""
import sys

from . import main

if __name__ == "__main__":      # importing the module (autosummary, a test) must not run the command
    sys.exit(main())
