"""``python -m mmprog.bench certify``: time to a certified duality gap of P0 against CRFsuite's training, same
features, same run.

Both systems get exactly the same input: mmprog's template features of the training file (``--templates``,
default ``rich``), every active input feature of a token handed to CRFsuite as one attribute. CRFsuite
(python-crfsuite, the ``bench`` extra) trains by L-BFGS with c1 = 0, c2 = 1, 100 iterations, all transitions;
mmprog solves P0 (½‖w‖² + C Σᵢ ξᵢ) by block-coordinate Frank–Wolfe on its n-slack dual (:mod:`mmprog.engine.bcfw`) until
the relative duality gap (P(w) − D(α)) / max(1, |P(w)|) is ≤ ``--gap-tol``, then on from that working set to
``--stretch`` (a resumed fit: the time is the sum of both). Both are timed in this process one after the other, wall
clock and CPU seconds of the training alone (features are built once, before either): on a machine shared with
other jobs, the CPU seconds of the pair are the steadier comparison and the wall seconds the user's. Test F1 by
:func:`mmprog.metrics.chunk_prf` (conlleval) on each task's test files.

Examples::

    python -m mmprog.bench certify --task chunk --record docs/records/certify.json
    python -m mmprog.bench certify --task chunk --limit 500 --skip crfsuite
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from .crf import TASKS


def _features(task, root, templates, limit):
    """Training and test corpora of the task with mmprog's template features (fitted on the training file)."""
    from ..datasets import load_conll
    from ..features.templates import TemplateExtractor
    cols, train_path, tests = TASKS[task]
    cols = tuple(cols.split("/"))
    train = load_conll(os.path.join(root, train_path), columns=cols)
    if limit:
        train = train.subset(list(range(min(limit, len(train)))))
    ex = TemplateExtractor(templates)
    ds = ex.to_dataset(train)
    test = {}
    for name, p in tests.items():
        corpus = load_conll(os.path.join(root, p), columns=cols)
        test[name] = (corpus, corpus.to_sequence_dataset(ex.transform(corpus), label_names=ds.label_names,
                                                         unknown="hide"))
    return train, ds, test, ex


def _attributes(X):
    """Each token's active input features as CRFsuite attribute names (one per feature index, value 1: the template
    features are 0/1, anything else is refused)."""
    if X.nnz and not (X.data == 1).all():
        raise ValueError("CRFsuite gets each active feature as an attribute of value 1; these token rows hold other "
                         "values")
    return [[str(j) for j in X.indices[X.indptr[t]:X.indptr[t + 1]]] for t in range(X.shape[0])]


def _f1(gold_corpus, pred):
    from ..metrics import chunk_prf
    sc = chunk_prf(list(gold_corpus.labels), pred)
    return 100 * sc.f1


def run_crfsuite(train, ds, test, c2=1.0, max_iter=100):
    """CRFsuite on mmprog's features; returns the row."""
    import tempfile

    import pycrfsuite
    trainer = pycrfsuite.Trainer(verbose=False)
    for X, y in zip(ds.X, train.labels):
        trainer.append(_attributes(X), list(y))
    trainer.set_params({"c1": 0.0, "c2": c2, "max_iterations": max_iter, "feature.possible_transitions": True})
    row = {"system": "CRFsuite", "setting": f"L-BFGS c1=0 c2={c2:g} {max_iter} it., mmprog's input features"}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.crfsuite")
        w0, c0 = time.perf_counter(), time.process_time()
        trainer.train(path)
        row.update(train_seconds=time.perf_counter() - w0, cpu_seconds=time.process_time() - c0)
        tagger = pycrfsuite.Tagger()
        tagger.open(path)
        for name, (corpus, tds) in test.items():
            row[f"{name}_f1"] = _f1(corpus, [tagger.tag(_attributes(X)) for X in tds.X])
    return row


def _mmprog_f1(fmap, w, ds, test):
    import numpy as np
    names = np.asarray(ds.label_names, dtype=object)
    out = {}
    for name, (corpus, tds) in test.items():
        prep = fmap.prepare(tds)
        labels = fmap.decode(w, prep)
        out[f"{name}_f1"] = _f1(corpus, [names[labels[i, :L]].tolist() for i, L in enumerate(prep.lengths)])
    return out


def run_mmprog(ds, test, C, gap_tol, stretch, time_limit, inner, cache_size, verbose=False):
    """mmprog's BCFW route to ``gap_tol`` and on to ``stretch``; returns the rows (the certificates' trace last)."""
    from ..engine import bcfw
    from ..features import feature_map_for
    from ..engine.oracle import Oracle
    w0, c0 = time.perf_counter(), time.process_time()
    fmap = feature_map_for(ds)
    orc = Oracle(fmap, fmap.prepare(ds))
    run = bcfw.fit(orc, C=C, gap_tol=gap_tol, time_limit=time_limit, inner=inner, cache_size=cache_size,
                   verbose=verbose)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    setting = f"bcfw C={C:g} inner={inner} cache={cache_size}"
    rows = [dict(system="mmprog", setting=f"{setting} gap_tol={gap_tol:g}", train_seconds=wall, cpu_seconds=cpu,
                 gap=run.gap, upper_bound=run.upper_bound, lower_bound=run.lower_bound, passes=run.n_passes,
                 termination=run.termination, working_set=run.history[-1].cached,
                 certificate_seconds=run.timings["certificate"], **_mmprog_f1(fmap, run.w, ds, test))]
    trace = [(gap_tol, h) for h in run.history]
    if stretch is not None and stretch < gap_tol and run.termination == "converged":
        w1, c1 = time.perf_counter(), time.process_time()
        left = None if time_limit is None else max(1.0, time_limit - wall)
        more = bcfw.fit(orc, C=C, gap_tol=stretch, time_limit=left, inner=inner, cache_size=cache_size,
                        resume=run.state_arrays(), verbose=verbose)
        rows.append(dict(system="mmprog", setting=f"{setting} gap_tol={stretch:g} (resumed from gap_tol={gap_tol:g})",
                         train_seconds=wall + time.perf_counter() - w1, cpu_seconds=cpu + time.process_time() - c1,
                         gap=more.gap, upper_bound=more.upper_bound, lower_bound=more.lower_bound,
                         passes=run.n_passes + more.n_passes, termination=more.termination,
                         working_set=more.history[-1].cached, **_mmprog_f1(fmap, more.w, ds, test)))
        trace += [(stretch, h) for h in more.history]
    orc.close()
    for target, h in trace:
        rows.append(dict(system="mmprog", setting=f"{setting} trace to gap_tol={target:g}", passes=h.passes,
                         seconds=h.elapsed, upper_bound=h.upper, lower_bound=h.lower, gap=h.gap,
                         working_set=h.cached))
    return rows


def main(argv=None):
    from ..datasets.registry import default_data_root
    ap = argparse.ArgumentParser(prog="python -m mmprog.bench certify", description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="chunk", help=f"one or more of {', '.join(sorted(TASKS))}, comma-separated "
                    f"(run one after the other, one record)")
    ap.add_argument("--data-root", default=None, help="folder with conll2000/ and conll2002/ (default: the shared "
                    "data root)")
    ap.add_argument("--templates", default="rich", help="mmprog's template preset (both systems get its features)")
    ap.add_argument("--C", type=float, default=1.0, help="P0's C (n-slack scale)")
    ap.add_argument("--gap-tol", type=float, default=1e-2, help="relative duality gap to certify (default 1e-2)")
    ap.add_argument("--stretch", type=float, default=1e-3, help="then resume to this gap (0: no stretch)")
    ap.add_argument("--time-limit", type=float, default=1800.0, help="mmprog's wall-clock cap in seconds")
    ap.add_argument("--inner", type=int, default=10, help="pairwise steps per visit")
    ap.add_argument("--cache-size", type=int, default=64, help="labelings kept per example")
    ap.add_argument("--crfsuite-c2", type=float, default=1.0)
    ap.add_argument("--limit", type=int, default=None, help="train on the first N sentences only (quick runs)")
    ap.add_argument("--skip", choices=["mmprog", "crfsuite"], default=None)
    ap.add_argument("--record", default=None, metavar="PATH", help="write the machine-readable record here")
    ap.add_argument("--verbose", action="store_true", help="print every certificate")
    args = ap.parse_args(argv)
    root = args.data_root or str(default_data_root())
    tasks = args.task.split(",")
    bad = [t for t in tasks if t not in TASKS]
    if bad:
        print(f"mmprog.bench certify: --task must name tasks among {', '.join(sorted(TASKS))}; got {bad[0]!r}",
              file=sys.stderr)
        return 2
    rows, notes = [], []
    for task in tasks:
        t0 = time.perf_counter()
        train, ds, test, ex = _features(task, root, args.templates, args.limit)
        feature_seconds = time.perf_counter() - t0
        notes.append(f"task {task}: {len(ds)} training sentences, {ex.n_features_} input features (templates "
                     f"{args.templates}, built once in {feature_seconds:.1f} s and given to both systems)")
        task_rows = []
        if args.skip != "crfsuite":
            try:
                task_rows.append(run_crfsuite(train, ds, test, c2=args.crfsuite_c2))
            except ImportError:
                print("mmprog.bench certify: python-crfsuite is missing; install the bench extra or give --skip "
                      "crfsuite", file=sys.stderr)
                return 2
        if args.skip != "mmprog":
            task_rows += run_mmprog(ds, test, args.C, args.gap_tol, args.stretch or None, args.time_limit,
                                    args.inner, args.cache_size, args.verbose)
        tests = list(test)
        print(f"{task}: {'system':<10} {'setting':<70} {'wall s':>8} {'CPU s':>8} {'gap':>9} " +
              " ".join(f"{t + ' F1':>9}" for t in tests))
        for r in task_rows:
            r["task"] = task
            if "train_seconds" not in r:
                continue
            gap = f"{r['gap']:9.2e}" if "gap" in r else " " * 9
            print(f"{task}: {r['system']:<10} {r['setting'][:70]:<70} {r['train_seconds']:8.1f} "
                  f"{r['cpu_seconds']:8.1f} {gap} " + " ".join(f"{r[t + '_f1']:9.2f}" for t in tests), flush=True)
        rows += task_rows
    if args.record:
        from . import record
        notes += ["the two systems ran one after the other in this process (paired): the machine has 2 cores "
                 "shared with other jobs, so only the pair's ratio is meaningful, and CPU seconds are the steadier "
                 "one; wall seconds include time lost to the other jobs; CPU seconds count every thread of the "
                 "process (CRFsuite trains on one, mmprog's oracle may score tokens on two)",
                 "mmprog's gap is certified: upper = P0's full objective at the returned w (loss-augmented "
                 "inference on every example), lower = the n-slack dual value of the route's α",
                 "CRFsuite minimises a different objective (CRF likelihood with c2 = 1): its time is that of its "
                 "100 L-BFGS iterations, not of a certificate"]
        record.write(args.record, "certify", rows, packages=("python-crfsuite", "numba", "scipy"), notes=notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
