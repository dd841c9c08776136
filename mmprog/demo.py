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


#: rounds of n-slack P1 on OCR in the demo (each round adds up to 626 cuts of ~2,500 non-zeros to the LP)
OCR_L1_ROUNDS = 15


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


COLUMNS = ["data", "program", "slack", "solver", "iterations", "cuts", "time_s", "objective", "train_error",
           "test_error", "nonzero_w", "termination"]


def main(json_out=False, data_root=None, quick=False):
    """Run the demo runs one after another, printing each row as it finishes (the whole table at the end)."""
    from .cli import table
    from .datasets.synthetic import synthetic_chain
    rows = []

    def add(row):
        rows.append(row)
        if not json_out:
            print("  ".join(f"{k}={row[k]}" for k in COLUMNS), flush=True)

    syn = synthetic_chain(n_instances=300 if not quick else 100, seed=0)
    n_tr = len(syn) // 2
    tr, te = syn[np.arange(n_tr)], syn[np.arange(n_tr, len(syn))]
    # 1-slack cutting planes need O(1/eps) rounds (Joachims et al. 2009) and the LP has no quadratic term to
    # steady them; eps is on the averaged-risk scale there, so 0.01 is already tight
    for program in ("m3n", "l1m3n"):
        add(_row("synthetic", program, "n", tr, te, C=1.0, eps=1e-3))
        add(_row("synthetic", program, "one", tr, te, C=1.0, eps=1e-2, max_iter=300))
    root = data_root or os.environ.get("MMPROG_DATA", DEFAULT_DATA_ROOT)
    ocr_path = os.path.join(root, "ocr_letters", "letters.npz")
    if os.path.exists(ocr_path) and not quick:
        from .datasets.ocr import load_ocr
        ocr = load_ocr(ocr_path)
        f0 = np.asarray(ocr.fold_ids) == 0
        tr, te = ocr[np.nonzero(f0)[0]], ocr[np.nonzero(~f0)[0]]
        C = 100.0 / len(tr)        # SVM^hmm's -c 100 on the n-slack scale
        add(_row("ocr(fold0)", "m3n", "one", tr, te, C=C, eps=0.1))
        add(_row("ocr(fold0)", "l1m3n", "n", tr, te, C=C, eps=0.01, max_iter=OCR_L1_ROUNDS))
    elif not quick:
        print(f"(OCR letters not found at {ocr_path}: set MMPROG_DATA or --data-root to include them)")
    if json_out:
        print(json.dumps(rows, indent=1))
    else:
        print()
        print(table(rows, COLUMNS))
    return 0
