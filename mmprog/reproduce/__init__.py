"""``mmprog reproduce NAME``: the papers' experiments, one module per experiment (``main(argv) -> int``).

Each module of this package is an experiment; it is found by name, so adding one means writing one module.
"""
import importlib
import pkgutil

from ..commands import command


def experiments():
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


@command("reproduce", "run one of the papers' experiments (tables, PNG plots): mmprog reproduce NAME [options]")
def _reproduce(p):
    p.add_argument("experiment", choices=experiments() or ["none"])
    p.add_argument("options", nargs="...", help="options of the experiment (see mmprog reproduce NAME --help)")

    def run(args):
        return importlib.import_module(f"{__name__}.{args.experiment}").main(args.options)
    return run
