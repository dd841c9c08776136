"""``mmprog reproduce NAME``: run one of the papers' experiments, each a module of :mod:`mmprog.reproduce`."""
from __future__ import annotations

import importlib

NAME = "reproduce"
HELP = "run one of the papers' experiments (tables, PNG plots): mmprog reproduce NAME [options]"
ORDER = 110


def add_arguments(p):
    from ..reproduce import experiments
    p.add_argument("experiment", choices=experiments() or ["none"])
    p.add_argument("options", nargs="...", help="options of the experiment (see mmprog reproduce NAME --help)")


def run(args):
    return importlib.import_module(f"mmprog.reproduce.{args.experiment}").main(args.options)
