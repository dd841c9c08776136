"""``mmprog report``: one self-contained HTML page for a saved model — its master and explicit dual typeset by
MathJax, the convergence plot, the ``verify`` table and, for MTL/p-block, the template weights
(:mod:`mmprog.report`)."""
from __future__ import annotations

import os

from ..exceptions import ParameterError
from .common import load_data

NAME = "report"
HELP = ("write one self-contained HTML page for a saved model: master and dual typeset, convergence plot, the "
        "verify table, template weights (the fit is re-run on --data and must give the saved weights)")
ORDER = 85


def add_arguments(p):
    p.add_argument("--model", required=True, help="saved model (PATH.json with PATH.npz beside it)")
    p.add_argument("--data", required=True, help="the data spec the model was trained on (it is refitted: a saved "
                                                 "model keeps its weights, not its master)")
    p.add_argument("--train-fold", type=int, default=None)
    p.add_argument("--eps", type=float, default=1e-3, help="the eps the model was trained with (default 1e-3)")
    p.add_argument("--max-iter", type=int, default=500, help="the max-iter it was trained with (default 500)")
    p.add_argument("--solver", action="append", default=None, help="solvers of the verify table (repeatable)")
    p.add_argument("--out", default=None, help="the page to write (default MODEL.report.html)")


def run(args):
    from ..report import refit_saved, write_report
    base = args.model
    for ext in (".json", ".npz"):
        base = base[:-len(ext)] if base.endswith(ext) else base
    out = args.out or base + ".report.html"
    if os.path.abspath(out) in {os.path.abspath(base + e) for e in (".json", ".npz")}:
        raise ParameterError(f"--out {out}: that is the model's own file; a report never overwrites its input")
    ds = load_data(args.data, args.train_fold, "train")
    res = refit_saved(args.model, ds, eps=args.eps, max_iter=args.max_iter, data_name=args.data)
    print(write_report(res, out, dataset=ds, solvers=args.solver))
    return 0
