"""``mmprog solvers``: the solver registry (classes, duals, persistence, availability)."""
from __future__ import annotations

from .common import print_result

NAME = "solvers"
HELP = "list the solver registry: classes, duals, persistence, availability"
ORDER = 50


def add_arguments(p):
    p.add_argument("--json", action="store_true")


def run(args):
    from ..solvers import format_table
    from ..solvers import table as solver_table
    rows = solver_table()
    if args.json:
        print_result(rows, True)
    else:
        print(format_table(rows))
