"""The ``mmprog`` command line: train, predict, evaluate, export, solvers, data, demo (and more as programs land).

Data are given as a loader name and a path or generator parameters, e.g. ``--data ocr:../shared/data/ocr_letters/letters.npz``,
``--data tsv:my.tsv``, ``--data synthetic:seed=0,n_instances=200`` (``mmprog data`` lists them).
Every command takes ``--json`` for machine-readable output. Errors are one line on stderr with exit code 2.

One module of this package per sub-command, found by name: a module that defines ``NAME`` (the sub-command),
``HELP`` (its line in ``mmprog --help``), ``ORDER`` (its place in that list), ``add_arguments(parser)`` and
``run(args) -> exit code`` is a command, so adding a command means adding one module. What the commands share is
in :mod:`mmprog.cli.common`.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys

from ..version import __version__
from ..exceptions import MMProgError
from ..engine.memory import keep_freed_memory
from .common import EXIT_INTERRUPTED


def commands():
    """The command modules of this package, in their ``ORDER`` (then by name)."""
    mods = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(mod, "NAME") and hasattr(mod, "run"):
            mods.append(mod)
    return sorted(mods, key=lambda m: (getattr(m, "ORDER", 1000), m.NAME))


def build_parser():
    ap = argparse.ArgumentParser(prog="mmprog", description=__doc__.splitlines()[0])
    ap.add_argument("--version", action="version", version=f"mmprog {__version__}")
    ap.add_argument("-v", "--verbose", action="store_true", help="log the cutting-plane progress table")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for mod in commands():
        p = sub.add_parser(mod.NAME, help=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(fn=mod.run)
    return ap


def main(argv=None):
    ap = build_parser()
    args = ap.parse_args(argv)
    # before any large array exists: large rounds otherwise pay the kernel to zero fresh pages (see mmprog.engine.memory)
    keep_freed_memory()
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(message)s")
    try:
        rc = args.fn(args)
    except MMProgError as e:
        print(f"mmprog: error: {e}", file=sys.stderr)
        return 2
    except (FileNotFoundError, IsADirectoryError, PermissionError) as e:
        print(f"mmprog: error: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # outside a fit (loading data, evaluating): nothing to keep
        print("mmprog: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return int(rc or 0)
