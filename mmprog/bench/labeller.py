"""``python -m mmprog.bench labeller``: the arc labeller's settings scored on the gold trees of a dev file.

The labeller (:class:`~mmprog.features.arc_labels.ArcLabelFeatureMap`, trained by :func:`mmprog.parsing.
train_labeller`) labels a given tree; this bench trains it on the task's training file at every C of ``--C-grid``,
with and without the context views (grandparent and dependents), and scores the relations it gives the *gold* trees
of the dev file — the labeller alone, free of the parser's head errors, which is what its settings are chosen on.
Each row: label accuracy with and without punctuation, the fit's seconds, termination, certified gap and width.
There is no peer in this bench (UDPipe's labels come with its own trees: ``python -m mmprog.bench parse`` compares
whole parsers); it records why the labeller's defaults are what they are::

    python -m mmprog.bench labeller --record docs/records/labeller.json
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from .parse import TASKS

#: C values tried by default (n-slack scale)
DEFAULT_C_GRID = "0.03,0.1,0.3,1"


def score_rows(train, dev, C_grid, contexts, time_limit):
    """One row per (context, C): the labeller trained on ``train``, scored on the gold trees of ``dev``.

    Parameters
    ----------
    train, dev : TreeDataset
        Labelled treebanks.
    C_grid : list of float
    contexts : list of bool
        Whether the context views are added.
    time_limit : float
        Seconds each fit may take.

    Returns
    -------
    list of dict
    """
    from ..metrics import is_punct
    from ..parsing import predict_relations, train_labeller
    gold = np.array([r for s in dev.sentences for r in s["deprel"]], dtype=object)
    keep = ~is_punct([t for s in dev.sentences for t in s["pos"]])
    rows = []
    for context in contexts:
        for C in C_grid:
            t0 = time.perf_counter()
            lab = train_labeller(train, C=C, context=context, time_limit=time_limit)
            seconds = time.perf_counter() - t0
            pred = np.array([r for rs in predict_relations(lab, dev, dev.heads) for r in rs], dtype=object)
            ok = pred == gold
            rows.append({"system": "mmprog", "setting": f"labeller C={C:g} views={'+'.join(lab.fmap.views)}",
                         "C": C, "context": context, "train_seconds": round(seconds, 1),
                         "termination": lab.termination, "gap": lab.gap, "route": lab.route,
                         "n_features": int(lab.fmap.n_features), "dim": int(lab.fmap.dim),
                         "dev_label_accuracy": round(100 * float(ok.mean()), 2),
                         "dev_label_accuracy_no_punct": round(100 * float(ok[keep].mean()), 2)})
            print(rows[-1], file=sys.stderr, flush=True)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m mmprog.bench labeller", description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", default="talbanken", choices=[t for t, f in TASKS.items() if f[2]])
    ap.add_argument("--data-root", default=None, help="folder of the shared data (default $MMPROG_DATA or "
                    "../shared/data beside the checkout)")
    ap.add_argument("--limit", type=int, default=None, help="train on the first LIMIT sentences only")
    ap.add_argument("--C-grid", default=DEFAULT_C_GRID, help=f"comma-separated C values (default {DEFAULT_C_GRID})")
    ap.add_argument("--context", choices=["both", "on", "off"], default="both",
                    help="with the context views, without, or both (default)")
    ap.add_argument("--time-limit", type=float, default=900.0, help="seconds per fit (default 900)")
    ap.add_argument("--record", default=None, metavar="PATH", help="write the machine-readable record here")
    args = ap.parse_args(argv)
    try:
        C_grid = [float(c) for c in args.C_grid.split(",") if c.strip()]
    except ValueError:
        ap.error(f"--C-grid must be comma-separated numbers; got {args.C_grid!r}")
    if not C_grid or min(C_grid) <= 0:
        ap.error(f"--C-grid must list positive numbers; got {args.C_grid!r}")
    from ..datasets import load_conllu
    from ..datasets.base import TreeDataset
    from ..datasets.registry import default_data_root
    from . import record
    root = args.data_root or str(default_data_root())
    train_rel, _, dev_rel = TASKS[args.task]
    train = load_conllu(os.path.join(root, train_rel))
    if args.limit:
        train = TreeDataset(train.sentences[:args.limit], train.heads[:args.limit])
    dev = load_conllu(os.path.join(root, dev_rel))
    contexts = {"both": [False, True], "on": [True], "off": [False]}[args.context]
    rows = score_rows(train, dev, C_grid, contexts, args.time_limit)
    for r in rows:
        r["task"] = args.task
    print(f"{'setting':<44} {'train s':>8} {'termination':>11} {'gap':>8} {'LA':>6} {'LA-p':>6}")
    for r in rows:
        print(f"{r['setting']:<44} {r['train_seconds']:>8.1f} {r['termination']:>11} {r['gap']:>8.2g} "
              f"{r['dev_label_accuracy']:>6.2f} {r['dev_label_accuracy_no_punct']:>6.2f}")
    if args.record:
        record.write(args.record, "labeller", rows, notes=[
            f"task {args.task}: trained on {os.path.basename(train_rel)}"
            + (f" (first {args.limit} sentences)" if args.limit else "")
            + f", scored on the gold trees of {os.path.basename(dev_rel)}",
            "label accuracy = relations right / tokens; no_punct leaves out punctuation (mmprog.metrics.is_punct)"])
    return 0
