"""``python -m mmprog.bench scale``: round time and peak memory of the NER structural SVM against training size.

The fit of ``python -m mmprog.bench ner`` (134 templates, ``m3n`` 1-slack, C = 1, eps 0.5, ``--drop-after 10``,
the working set unbounded unless ``--max-cuts`` is given)
on the first 1,000 / 2,000 / 4,000 / 8,323 CoNLL-2002 Spanish training sentences (``--sizes``), each in its own
child process measured by :func:`mmprog.bench.ocr.measure_process` (peak resident memory of the process tree, CPU with
workers), without the testb evaluation. Per size: tokens, joint features, rounds, seconds per round (the fit's
wall time over its rounds, and the oracle's share), the fit's wall time, the largest number of ΔF non-zeros the
working set held and the peak memory.
"""
from __future__ import annotations

import os
import sys
import tempfile

from .ner import bench_parser, run_mmprog
from ..engine.records import relative_gap


def main(argv=None):
    ap = bench_parser("python -m mmprog.bench scale", __doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000, 8323],
                    help="training sentences per fit (the first N; 8323 is all)")
    args = ap.parse_args(argv)
    print(f"CoNLL-2002 Spanish NER, 134 templates, {args.program} 1-slack, C = {args.C:g}, eps {args.eps:g}, "
          f"drop_after {args.drop_after}, max_cuts {args.max_cuts or 'unbounded'}, oracle {args.oracle}; "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    print(f"{'sentences':>9} {'tokens':>8} {'joint_M':>7} {'rounds':>6} {'s/round':>7} {'oracle/rd':>9} "
          f"{'fit_s':>7} {'cpu_s':>7} {'cut_nnz_M':>9} {'peak_MB':>8} {'load':>5} {'objective':>10}")
    tmp = tempfile.mkdtemp(prefix="mmprog_bench_scale_")
    rows = []
    for size in args.sizes:
        args.limit = size
        load = os.getloadavg()[0]
        try:
            wall, cpu, peak, r = run_mmprog(args, os.path.join(tmp, f"fit_{size}.log"), ["--no-test"])
        except RuntimeError as e:
            print(e, file=sys.stderr)
            return 1
        k = max(1, r["iters"])
        print(f"{r['n']:9d} {r['tokens']:8d} {r['dim'] / 1e6:7.1f} {r['iters']:6d} {r['fit_s'] / k:7.2f} "
              f"{r['timings']['oracle'] / k:9.2f} {r['fit_s']:7.0f} {cpu:7.0f} {r['max_cut_nnz'] / 1e6:9.1f} "
              f"{peak:8.0f} {load:5.1f} {r['objective']:10.4f}   ({r['termination']})", flush=True)
        rows.append({"system": "mmprog", "setting": f"{args.program} 1-slack sentences={r['n']}", "tokens": r["tokens"],
                     "joint_features": r["dim"], "rounds": r["iters"], "s_per_round": r["fit_s"] / k,
                     "oracle_s_per_round": r["timings"]["oracle"] / k, "fit_s": r["fit_s"], "cpu_s": cpu,
                     "cut_nnz_max": r["max_cut_nnz"], "peak_mb": peak, "objective": r["objective"],
                     "termination": r["termination"], "gap": relative_gap(r["upper"], r["objective"])})
    if args.record:
        from . import record
        record.write(args.record, "scale", rows, argv=argv,
                     notes=[f"CoNLL-2002 Spanish NER, 134 templates, C = {args.C:g}, eps {args.eps:g}; the first N "
                            f"training sentences per fit, each in a child process"])
        print(f"record written to {args.record}")
    return 0
