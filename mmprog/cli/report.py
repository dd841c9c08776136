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
ORDER = 95


def add_arguments(p):
    p.add_argument("--model", required=True, help="saved model (PATH.json with PATH.npz beside it)")
    p.add_argument("--data", required=True, help="the data spec the model was trained on (it is refitted: a saved "
                                                 "model keeps its weights, not its master)")
    p.add_argument("--train-fold", type=int, default=None)
    p.add_argument("--eps", type=float, default=None, help="the eps the model was trained with (default: none, the "
                   "certified gap it records; 1e-3 for models saved before the gap rule)")
    p.add_argument("--max-iter", type=int, default=None, help="the max-iter it was trained with (default: the "
                   "route's)")
    p.add_argument("--solver", action="append", default=None, help="solvers of the verify table (repeatable)")
    p.add_argument("--out", default=None, help="the page to write (default MODEL.report.html)")


def run(args):
    from ..report import write_report
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


def refit_saved(model_path, dataset, eps=None, max_iter=None, rtol=1e-6, data_name="the data"):
    """The fit behind a saved model, run again: a saved model (``.json`` + ``.npz``) keeps its weights, not its
    master, so the report re-runs the fit it records (program, parameters, solver, slack form) on ``dataset`` and
    accepts the result only when its weights are the saved ones.

    Parameters
    ----------
    model_path : str
        The saved model (``M`` or ``M.json``).
    dataset : SequenceDataset or TreeDataset
        The training data.
    eps, max_iter : float, int, optional
        The stopping settings the model was trained with, where they are not the defaults (a saved model records
        its route and gap_tol, not these; a model saved before it recorded its route was trained with eps 1e-3).
    rtol : float
        Largest accepted ``max|w − w_saved| / max(1, max|w_saved|)``.
    data_name : str
        How the data are named in an error message (the data spec).

    Returns
    -------
    Result

    Raises
    ------
    ParameterError
        One line when the model is a text model (trained with ``--templates``) or when the refit's weights differ
        from the saved ones (naming the difference and the settings to pass).
    """
    import numpy as np

    from ..api import fit
    from ..result import load
    saved = load(model_path)
    if getattr(saved, "extractor", None) is not None:
        raise ParameterError(f"{model_path}: a text model (trained with --templates); mmprog report refits models "
                             f"trained on a data spec. In Python: mmprog.tagging.fit_text(...).to_html(PATH)")
    meta = saved.meta or {}
    params = dict(saved.params or {})
    C = params.pop("C", None)
    route = meta.get("route")
    if route is None:                   # saved before the gap rule: the cutting plane with the ε rule at 1e-3
        route, eps = "cutting-plane", 1e-3 if eps is None else eps
    kw = dict(route=route, gap_tol=meta.get("gap_tol") if eps is None else None)
    if route not in ("bcfw", "cutting-plane"):      # the factored LP and the sub-gradient method: l1m3n's algorithm
        kw = {}
    res = fit(dataset, program=saved.program, C=C, solver=None if route == "bcfw" else meta.get("solver"),
              slack=meta.get("slack"), eps=eps, max_iter=max_iter, **kw, **params)
    w0 = np.asarray(saved.w, dtype=float)
    if res.w.shape != w0.shape:
        raise ParameterError(f"{model_path}: the refit on {data_name} has {res.w.size} weights, the model "
                             f"{w0.size}; pass the data the model was trained on")
    diff = float(np.max(np.abs(res.w - w0))) / max(1.0, float(np.max(np.abs(w0))) if w0.size else 1.0)
    if diff > rtol:
        raise ParameterError(f"{model_path}: the refit on {data_name} (eps {eps}, max_iter {max_iter}) gives "
                             f"weights {diff:.3g} away from the model's (relative; tolerance {rtol:g}); pass the "
                             f"--data, --eps and --max-iter the model was trained with")
    return res
