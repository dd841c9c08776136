"""``mmprog export``: train, then write the master program (.lp, .mps, .nl, .gms)."""
from __future__ import annotations

from .common import load_data, print_result, program_params, training_arguments

NAME = "export"
HELP = "train and write the master program (.lp, .mps, .nl, .gms)"
ORDER = 40


def add_arguments(p):
    training_arguments(p)
    p.add_argument("--out", required=True, help="file to write; the extension picks the format")
    p.add_argument("--at-iter", type=int, default=None, help="stop after this many rounds and write the master then")
    p.add_argument("--json", action="store_true")


def run(args):
    import mmprog
    ds = load_data(args.data, args.train_fold, "train")
    extra = program_params(args)
    if args.at_iter:
        res = mmprog.fit(ds, program=args.program, C=args.C, solver=args.solver, slack=args.slack, eps=args.eps,
                         max_iter=args.at_iter, **extra)
    else:
        res = mmprog.fit(ds, program=args.program, C=args.C, solver=args.solver, slack=args.slack, eps=args.eps,
                         max_iter=args.max_iter, **extra)
    path = res.export(args.out)
    print_result({"written": path, "n_iter": res.n_iter, "n_cuts": res.n_cuts,
                  "primal_objective": res.primal_objective}, args.json)
