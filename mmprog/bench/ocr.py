"""``python -m mmprog.bench ocr``: P0 on the OCR letters beside SVM^hmm, and the OCR100 protocol of the papers.

Taskar split: train on fold 0 (626 words), test on folds 1–9; 128 pixels, default chain map; C = 100/626 on the
n-slack scale (SVM^hmm's ``-c 100``). SVM^hmm V3.10 on this machine (figures from the engine issue): primal
objective 285.0 (``-e 0.01``, 6.9 s) and 291.3 (``-e 0.1``, 2.5 s), 21.7 % letter error.

OCR100 (``--ocr100``): 100 words drawn from each of the 10 folds; for each fold k train on its 100 words and test on
the other 900 (KDD 2009, ICML 2008), P0 and P1; mean error, deviation and training time.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

SVMHMM = {0.1: (291.3, 2.5), 0.01: (285.0, 6.9)}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m mmprog.bench ocr", description=__doc__.splitlines()[0])
    ap.add_argument("--path", default=None, help="letters.npz (default: $MMPROG_DATA or ../shared/data)")
    ap.add_argument("--eps", type=float, nargs="+", default=[0.1, 0.01])
    ap.add_argument("--slack", default="one", choices=["n", "one"])
    ap.add_argument("--ocr100", action="store_true", help="also run the OCR100 10-fold protocol for P0 and P1")
    ap.add_argument("--C100", type=float, nargs="+", default=[1.0], help="C values (n-slack scale) for OCR100")
    args = ap.parse_args(argv)
    import mmprog
    from mmprog.datasets.ocr import load_ocr
    from mmprog.datasets.registry import default_data_root
    path = args.path or os.path.join(default_data_root(), "ocr_letters", "letters.npz")
    if not os.path.exists(path):
        print(f"OCR letters not found at {path}; pass --path or set MMPROG_DATA")
        return 2
    ds = load_ocr(path)
    folds = np.asarray(ds.fold_ids)
    tr, te = ds[np.nonzero(folds == 0)[0]], ds[np.nonzero(folds != 0)[0]]
    C = 100.0 / len(tr)
    print(f"Taskar split: {len(tr)} training words, {len(te)} test words, C = 100/{len(tr)} (SVM^hmm -c 100), "
          f"{args.slack}-slack")
    print(f"{'eps':>6} {'objective':>10} {'upper':>10} {'iters':>6} {'cuts':>6} {'time_s':>7} {'oracle':>7} "
          f"{'pyomo':>7} {'solver':>7} {'test_err':>8} | {'svmhmm_obj':>10} {'svmhmm_s':>8}")
    for eps in args.eps:
        t = time.perf_counter()
        res = mmprog.fit(tr, program="m3n", C=C, slack=args.slack, eps=eps, max_iter=2000)
        el = time.perf_counter() - t
        err = res.evaluate(te)["token_error"]
        ref = SVMHMM.get(eps, (float("nan"), float("nan")))
        tm = res.timings
        print(f"{eps:6g} {res.primal_objective:10.2f} {res.upper_bound:10.2f} {res.n_iter:6d} {res.n_cuts:6d} "
              f"{el:7.1f} {tm['oracle']:7.1f} {tm['pyomo']:7.1f} {tm['solver']:7.1f} {err:8.4f} | "
              f"{ref[0]:10.1f} {ref[1]:8.1f}")
    if args.ocr100:
        rng = np.random.default_rng(0)
        picks = [rng.choice(np.nonzero(folds == k)[0], size=min(100, int(np.sum(folds == k))), replace=False)
                 for k in range(10)]
        print("\nOCR100: train on 100 words of fold k, test on the other 900 drawn words")
        print(f"{'program':>8} {'C':>6} {'mean_err':>9} {'std':>7} {'mean_time_s':>11}")
        for program in ("m3n", "l1m3n"):
            for C100 in args.C100:
                errs, times = [], []
                for k in range(10):
                    test_idx = np.concatenate([p for j, p in enumerate(picks) if j != k])
                    t = time.perf_counter()
                    res = mmprog.fit(ds[picks[k]], program=program, C=C100, slack="one", eps=0.01)
                    times.append(time.perf_counter() - t)
                    errs.append(res.evaluate(ds[test_idx])["token_error"])
                print(f"{program:>8} {C100:6g} {np.mean(errs):9.4f} {np.std(errs):7.4f} {np.mean(times):11.1f}")
    return 0
