"""``mmprog reproduce NAME``: the papers' experiments, one module per experiment (``main(argv) -> int``).

Each module of this package is an experiment; it is found by name, so adding one means writing one module (the
sub-command itself is :mod:`mmprog.cli.reproduce`).
"""
import pkgutil


def experiments():
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))
