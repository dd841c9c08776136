"""``python -m mmprog.bench oracle [--record PATH]``: the separation oracle's round time, serial against the process pool and Dask.

Fits P0 in its 1-slack form (``m3n``, C = 1, eps 0.5, a fixed number of rounds, ``drop_after`` 10) on the first
``--limit`` CoNLL-2002 Spanish training sentences with the 134 NER templates (``--task ner``) or on OCR fold 0
(``--task ocr``, C = 100/626), once per oracle backend, and prints the oracle's seconds per round, the whole round's,
the fit's wall time, its CPU time (this process and its worker processes) and the objective, which must agree across
backends. ``--oracle dask`` runs on a LocalCluster of ``--n-jobs`` single-threaded workers started for the fit.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np


def _data(args):
    from mmprog.datasets.registry import default_data_root
    root = default_data_root()
    if args.task == "ocr":
        from mmprog.datasets.ocr import load_ocr
        ds = load_ocr(root / "ocr_letters" / "letters.npz")
        tr = ds[np.nonzero(np.asarray(ds.fold_ids) == 0)[0]]
        return tr, 100.0 / len(tr), 0.1
    from mmprog.datasets import load_conll
    from mmprog.features.templates import TemplateExtractor
    train = load_conll(root / "conll2002" / "esp.train.gz", columns=("form", "pos", "ne"))
    train = train.subset(np.arange(min(args.limit, len(train))))
    return TemplateExtractor("ner").to_dataset(train), 1.0, 0.5


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m mmprog.bench oracle", description=__doc__.splitlines()[0])
    ap.add_argument("--task", choices=["ner", "ocr"], default="ner")
    ap.add_argument("--limit", type=int, default=2000, help="NER training sentences (default 2000)")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--oracle", nargs="+", default=["serial", "process", "dask"],
                    choices=["serial", "thread", "process", "dask"])
    ap.add_argument("--record", metavar="PATH", help="also write the run's rows as a JSON record (mmprog.bench.record)")
    args = ap.parse_args(argv)
    rows = []
    import mmprog
    ds, C, eps = _data(args)
    print(f"{args.task}: {len(ds)} training examples, m3n 1-slack, C = {C:g}, {args.rounds} rounds, "
          f"n_jobs {args.n_jobs}; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    print(f"{'oracle':>8} {'rounds':>6} {'oracle_s/round':>14} {'round_s':>8} {'fit_s':>7} {'cpu_s':>7} "
          f"{'objective':>12}")
    # one round first, untimed: the first fit of a process also pays for imports and first-call set-ups
    mmprog.fit(ds, program="m3n", C=C, slack="one", eps=eps, max_iter=1)
    for backend in args.oracle:
        t, c0 = time.perf_counter(), os.times()
        res = mmprog.fit(ds, program="m3n", C=C, slack="one", eps=eps, max_iter=args.rounds, oracle=backend,
                         n_jobs=args.n_jobs, drop_after=10)
        wall, c1 = time.perf_counter() - t, os.times()
        # workers are waited for when the oracle closes, so their CPU time is in the children's counters
        cpu = sum(c1[:4]) - sum(c0[:4])
        k = max(1, res.n_iter)
        print(f"{backend:>8} {res.n_iter:6d} {res.timings['oracle'] / k:14.3f} {res.timings['total'] / k:8.3f} "
              f"{wall:7.1f} {cpu:7.1f} {res.primal_objective:12.6f}")
        rows.append({"system": f"mmprog oracle={backend}", "setting": f"{args.task} m3n 1-slack C={C:g}",
                     "rounds": res.n_iter, "oracle_s_per_round": res.timings["oracle"] / k,
                     "round_s": res.timings["total"] / k, "fit_wall_s": wall, "fit_cpu_s": cpu,
                     "objective": res.primal_objective, "termination": res.termination, "gap": res.gap})
    if args.record:
        from . import record
        record.write(args.record, "oracle", rows, argv=argv,
                     notes=[f"{args.task}: {len(ds)} training examples, {args.rounds} rounds, n_jobs {args.n_jobs}; "
                            f"one untimed round first (imports, first-call set-ups)",
                            "the objectives must agree across backends: the oracles return the same cuts"])
        print(f"record written to {args.record}")
    return 0
