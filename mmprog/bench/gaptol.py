"""The default ``gap_tol``, measured: test F1 and training time against the certified relative gap a fit stops at.

    python -m mmprog.bench gaptol [--sentences 2000] [--gap-tol 0.1,0.03,0.01,0.003,0.001] [--record PATH]

Trains P0 (``m3n``, C = 1, the default route) on the first ``--sentences`` sentences of CoNLL-2000's train.txt.gz
with the ``rich`` templates (features built once), once per ``gap_tol``, each fit from scratch, and scores every
model on the whole of test.txt.gz by conlleval's chunk F1. A fit stopped at a larger gap is cheaper; the default should
be the largest gap whose F1 is that of the tightest fit to within the spread F1 shows between nearby certified
models. The rows print as they finish; ``--record`` writes them (``mmprog.bench.record``).
"""
from __future__ import annotations

import argparse
import os
import sys
import time


def main(argv=None):
    import numpy as np

    import mmprog
    from ..datasets.conll import load_conll
    from ..datasets.registry import default_data_root
    from ..features.templates import TemplateExtractor
    from ..tagging import score_text
    ap = argparse.ArgumentParser(prog="python -m mmprog.bench gaptol", description=__doc__.split("\n")[0])
    ap.add_argument("--data-root", default=None, help="folder with conll2000/ (default ../shared/data)")
    ap.add_argument("--sentences", type=int, default=2000, help="training sentences (the file's first)")
    ap.add_argument("--gap-tol", default="0.1,0.03,0.01,0.003,0.001", help="comma-separated gap_tol values")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--route", default="auto", choices=["auto", "cutting-plane", "bcfw"])
    ap.add_argument("--templates", default="rich")
    ap.add_argument("--time-limit", type=float, default=900.0, help="seconds per fit")
    ap.add_argument("--record", default=None, metavar="PATH")
    args = ap.parse_args(argv)
    root = args.data_root or default_data_root()
    train_path = os.path.join(root, "conll2000", "train.txt.gz")
    test_path = os.path.join(root, "conll2000", "test.txt.gz")
    for p in (train_path, test_path):
        if not os.path.exists(p):
            print(f"{p}: not found (set MMPROG_DATA or --data-root)", file=sys.stderr)
            return 2
    corpus = load_conll(train_path)
    corpus = corpus[np.arange(min(args.sentences, len(corpus)))]
    test = load_conll(test_path)
    t0 = time.perf_counter()
    ex = TemplateExtractor(args.templates)
    ds = ex.to_dataset(corpus)
    feature_s = time.perf_counter() - t0
    tols = sorted((float(v) for v in args.gap_tol.split(",")), reverse=True)
    print(f"CoNLL-2000, first {len(corpus)} training sentences, {args.templates} templates "
          f"({ex.n_features_} input features, {feature_s:.1f} s), C = {args.C:g}, route {args.route}; test: "
          f"{len(test)} sentences")
    print(f"{'gap_tol':>8} {'route':>13} {'term':>10} {'gap':>9} {'iters':>6} {'fit_s':>7} {'test_f1':>8}")
    rows = []
    for tol in tols:
        t = time.perf_counter()
        res = mmprog.fit(ds, program="m3n", C=args.C, gap_tol=tol, route=args.route, time_limit=args.time_limit)
        fit_s = time.perf_counter() - t
        res.extractor = ex
        f1 = score_text(res, test)["f1"]
        print(f"{tol:8.0e} {res.route:>13} {res.termination:>10} {res.gap:9.2e} {res.n_iter:6d} {fit_s:7.1f} "
              f"{f1:8.2f}", flush=True)
        rows.append({"system": "mmprog", "setting": f"m3n C={args.C:g} gap_tol={tol:g} route={res.route}",
                     "gap_tol": tol, "route": res.route, "termination": res.termination, "gap": res.gap,
                     "iters": res.n_iter, "fit_s": fit_s, "upper": res.upper_bound,
                     "lower": res.primal_objective, "test_f1": f1})
    if args.record:
        from . import record
        record.write(args.record, "gaptol", rows, argv=argv,
                     notes=[f"CoNLL-2000: the first {len(corpus)} sentences of train.txt.gz, {args.templates} "
                            f"templates, test.txt.gz whole ({len(test)} sentences), conlleval chunk F1",
                            "each fit from scratch; fit_s is wall time on a shared machine (rerun idle to compare)"])
        print(f"record written to {args.record}")
    return 0
