"""``python -m mmprog.bench NAME [options]`` runs ``mmprog.bench.NAME.main(options)``."""
import importlib
import pkgutil
import sys

import mmprog.bench as _pkg
from mmprog.engine.memory import keep_freed_memory


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    names = sorted(m.name for m in pkgutil.iter_modules(_pkg.__path__) if not m.name.startswith("_"))
    if not argv or argv[0] not in names:
        print(f"usage: python -m mmprog.bench {{{','.join(names)}}} [options]", file=sys.stderr)
        return 2
    keep_freed_memory()      # as the command line does (see mmprog.engine.memory)
    return importlib.import_module(f"mmprog.bench.{argv[0]}").main(argv[1:]) or 0


if __name__ == "__main__":
    sys.exit(main())
