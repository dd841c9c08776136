"""``mmprog data``: the data loaders and generators a ``--data`` spec can name."""
from __future__ import annotations

from .common import print_result, table

NAME = "data"
HELP = "list the data loaders and generators"
ORDER = 60


def add_arguments(p):
    p.add_argument("--json", action="store_true")


def run(args):
    from ..datasets.registry import describe_loaders
    rows = describe_loaders()
    for r in rows:
        if isinstance(r.get("options"), list):
            r["options"] = ",".join(r["options"])
    if args.json:
        print_result(rows, True)
    else:
        print(table(rows, list(rows[0].keys())))
