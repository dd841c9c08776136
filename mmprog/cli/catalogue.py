"""``mmprog catalogue``: regenerate the formulation catalogue (the generated blocks of models/*.md and the exported
instances) from the fixed tiny data file, or check it for drift."""
from __future__ import annotations

from .common import print_result

NAME = "catalogue"
HELP = ("regenerate the formulation catalogue (models/*.md generated blocks and exported instances) "
        "from data/tiny_chain.tsv, or --check it")
ORDER = 100


def add_arguments(p):
    p.add_argument("--out", default=None, help="catalogue folder (default: models/ of the checkout)")
    p.add_argument("--data", default=None, help="the fixed tiny data file (default: data/tiny_chain.tsv)")
    p.add_argument("--check", action="store_true", help="regenerate into a temporary folder and report drift")
    p.add_argument("--json", action="store_true")


def run(args):
    from .. import catalogue
    if args.check:
        drift = catalogue.check(args.out, data=args.data)
        if args.json:
            print_result(drift, True)
        elif drift:
            print("\n".join(drift))
        else:
            print("catalogue is up to date")
        return 1 if drift else 0
    written = catalogue.regenerate(args.out, data=args.data)
    print_result(written if args.json else "\n".join(written), args.json)
    return 0
