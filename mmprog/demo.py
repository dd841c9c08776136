"""The main job (``make demo`` / ``mmprog demo``): P0 and P1, n-slack and 1-slack, on synthetic data and — when
``../shared/data`` has them — on the OCR letters (Taskar split: train on fold 0, test on folds 1–9).

Prints one table: program, slack form, solver, iterations, cuts, time, train and test error, non-zero weights.
"""
from __future__ import annotations

import json
import os
import time

import numpy as np

DEFAULT_DATA_ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                 "..", "shared", "data")


def _row(name, program, slack, ds_tr, ds_te, **kw):
    import mmprog
    t = time.perf_counter()
    res = mmprog.fit(ds_tr, program=program, slack=slack, **kw)
    elapsed = time.perf_counter() - t
    return {"data": name, "program": program, "slack": slack, "solver": res.solver, "iterations": res.n_iter,
            "cuts": res.n_cuts, "time_s": round(elapsed, 2), "objective": round(res.primal_objective, 4),
            "train_error": round(res.evaluate(ds_tr)["token_error"], 4),
            "test_error": round(res.evaluate(ds_te)["token_error"], 4),
            "nonzero_w": int(np.count_nonzero(np.abs(res.w) > 1e-8)), "termination": res.termination}


def main(json_out=False, data_root=None, quick=False):
    from .cli import table
    from .datasets.synthetic import synthetic_chain
    rows = []
    syn = synthetic_chain(n_instances=300 if not quick else 100, seed=0)
    n_tr = len(syn) // 2
    tr, te = syn[np.arange(n_tr)], syn[np.arange(n_tr, len(syn))]
    for program in ("m3n", "l1m3n"):
        for slack in ("n", "one"):
            rows.append(_row("synthetic", program, slack, tr, te, C=1.0, eps=1e-3))
    root = data_root or os.environ.get("MMPROG_DATA", DEFAULT_DATA_ROOT)
    ocr_path = os.path.join(root, "ocr_letters", "letters.npz")
    if os.path.exists(ocr_path) and not quick:
        from .datasets.ocr import load_ocr
        ocr = load_ocr(ocr_path)
        f0 = np.asarray(ocr.fold_ids) == 0
        tr, te = ocr[np.nonzero(f0)[0]], ocr[np.nonzero(~f0)[0]]
        C = 100.0 / len(tr)        # SVM^hmm's -c 100 on the n-slack scale
        for program, eps in (("m3n", 0.1), ("l1m3n", 0.1)):
            rows.append(_row("ocr(fold0)", program, "one", tr, te, C=C, eps=eps))
    elif not quick:
        print(f"(OCR letters not found at {ocr_path}: set MMPROG_DATA or --data-root to include them)")
    cols = ["data", "program", "slack", "solver", "iterations", "cuts", "time_s", "objective", "train_error",
            "test_error", "nonzero_w", "termination"]
    if json_out:
        print(json.dumps(rows, indent=1))
    else:
        print(table(rows, cols))
    return 0
