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
    python -m mmprog.bench certify --task chunk,esp --order 1,2 --cache-passes 1,2,3,4,6 --stretch 0 \
        --record docs/records/cache-passes.json
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from .tasks import TASKS


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
    test = {name: _held(ex, load_conll(os.path.join(root, p), columns=cols), ds) for name, p in tests.items()}
    return train, ds, test, ex


def _held(ex, corpus, ds):
    """(corpus, its dataset) with the features of ``ex`` (fitted on ``ds``'s corpus), labels unseen there hidden."""
    return corpus, corpus.to_sequence_dataset(ex.transform(corpus), label_names=ds.label_names, unknown="hide")


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
    """CRFsuite on mmprog's features, F1 on each of ``test`` ({name: (corpus, dataset)}); returns the row."""
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


def _fmap(ds, order, transitions):
    """mmprog's chain map of the training set: first order, or second order over all or the seen label bigrams."""
    from ..features import feature_map_for
    if order == 1:
        return feature_map_for(ds)
    from ..features.chain import allowed_bigrams
    return feature_map_for(ds, order=2, allowed=allowed_bigrams(ds.Y, ds.n_labels) if transitions == "seen" else None)


def _split(run):
    """Seconds in the oracle (token scores and loss-augmented Viterbi of the passes, the bounds' inference) and
    outside it (steps inside the caches, passes without the oracle, w rebuilt, the Gram matrices), and per round (an
    oracle pass with the passes inside the caches that follow it) the ratio of the two."""
    t = run.timings
    oracle = t["oracle"] + t["certificate_oracle"]
    return dict(oracle_seconds=oracle, non_oracle_seconds=t["total"] - oracle,
                non_oracle_per_oracle=(t["total"] - oracle) / oracle if oracle > 0 else None,
                cache_passes=run.n_cache_passes, certificates=len(run.history))


def run_mmprog(ds, test, C, gap_tol, stretch, time_limit, settings, order=1, transitions="seen", verbose=False,
               swap=None, work_log=None):
    """mmprog's BCFW route to ``gap_tol`` and on to ``stretch``; returns the rows (the swap rows after the certified
    row, the certificates' trace last).

    ``settings`` are keyword settings of :func:`mmprog.engine.bcfw.fit` (empty: the route's defaults, what
    ``mmprog.fit(route="bcfw")`` runs). ``swap``: keyword arguments of :func:`run_swap` (``solvers``, ``oracles``,
    ``form``), run at the ``gap_tol`` certificate (not timed with the fit). ``work_log``: a list extended with the
    fits' :attr:`~mmprog.engine.bcfw.BCFWRun.work_log` entries."""
    from ..engine import bcfw
    from ..engine.oracle import Oracle
    w0, c0 = time.perf_counter(), time.process_time()
    fmap = _fmap(ds, order, transitions)
    orc = Oracle(fmap, fmap.prepare(ds))
    run = bcfw.fit(orc, C=C, gap_tol=gap_tol, time_limit=time_limit, verbose=verbose, **settings)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    shown = " ".join(f"{k}={v}" for k, v in settings.items())
    setting = f"bcfw C={C:g}" + (f" order 2 transitions {transitions}" if order == 2 else "") + \
        (f" {shown}" if shown else "")
    rows = [dict(system="mmprog", setting=f"{setting} gap_tol={gap_tol:g}", route="bcfw", gap_tol=gap_tol,
                 train_seconds=wall, cpu_seconds=cpu, gap=run.gap, upper_bound=run.upper_bound,
                 lower_bound=run.lower_bound, passes=run.n_passes, termination=run.termination,
                 working_set=run.history[-1].cached, certificate_seconds=run.timings["certificate"], **_split(run),
                 **_mmprog_f1(fmap, run.w, ds, test))]
    trace = [(gap_tol, h) for h in run.history]
    if work_log is not None:
        work_log += run.work_log
    if swap:
        rows += run_swap(run, fmap, orc.prepared, ds, test, C, gap_tol, **swap)
    if stretch is not None and stretch < gap_tol and run.termination == "converged":
        w1, c1 = time.perf_counter(), time.process_time()
        left = None if time_limit is None else max(1.0, time_limit - wall)
        more = bcfw.fit(orc, C=C, gap_tol=stretch, time_limit=left, resume=run.state_arrays(), verbose=verbose,
                        **settings)
        rows.append(dict(system="mmprog", setting=f"{setting} gap_tol={stretch:g} (resumed from gap_tol={gap_tol:g})",
                         route="bcfw", gap_tol=stretch, stretch=True,
                         train_seconds=wall + time.perf_counter() - w1, cpu_seconds=cpu + time.process_time() - c1,
                         gap=more.gap, upper_bound=more.upper_bound, lower_bound=more.lower_bound,
                         passes=run.n_passes + more.n_passes, termination=more.termination,
                         working_set=more.history[-1].cached, **_split(more), **_mmprog_f1(fmap, more.w, ds, test)))
        trace += [(stretch, h) for h in more.history]
        if work_log is not None:
            work_log += more.work_log
    orc.close()
    for target, h in trace:
        rows.append(dict(system="mmprog", setting=f"{setting} trace to gap_tol={target:g}", passes=h.passes,
                         cache_passes=h.cache_passes, seconds=h.elapsed, oracle_seconds=h.oracle_seconds,
                         upper_bound=h.upper, lower_bound=h.lower, gap=h.gap, working_set=h.cached))
    return rows


def write_work_log(path, log):
    """Write the passes' (kind, thread CPU seconds, counted work…) to ``path`` (JSON, written then renamed) and
    print the seconds per unit of work a non-negative least-squares fit of them gives (relative error, as for
    :data:`mmprog.engine.bcfw.WORK_SECONDS`) beside the route's, with each pass kind's predicted / measured seconds
    under the route's weights: the ``"rate"`` rule compares a cache pass with its oracle pass, so what matters is
    that the two kinds' ratios agree."""
    import json

    import numpy as np
    from scipy.optimize import nnls

    from ..engine.bcfw import WORK_SECONDS
    from ..inference.frank_wolfe import WORK
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"work": list(WORK), "passes": log}, f)
    os.replace(tmp, path)
    A = np.array([p[2:] for p in log], dtype=float)
    t = np.array([p[1] for p in log], dtype=float)
    keep = t > 0
    fitted = nnls(A[keep] / t[keep, None], np.ones(int(keep.sum())))[0] if keep.any() else np.zeros(len(WORK))
    print("work: " + " ".join(f"{k} {w:.3g} (route {r:.3g})" for k, w, r in zip(WORK, fitted, WORK_SECONDS)) +
          " seconds per unit", flush=True)
    for kind in ("oracle", "cache"):
        m = keep & np.array([p[0] == kind for p in log])
        if m.any():
            print(f"work: {kind} passes {int(m.sum())}: {t[m].sum():.1f} CPU s, the route's weights predict "
                  f"{float((A[m] @ WORK_SECONDS).sum()):.1f}", flush=True)


def run_swap(run, fmap, prepared, ds, test, C, gap_tol, solvers, oracles, form="auto"):
    """The swap check at ``run``'s certificate, one row per (solver, oracle back end).

    P0's master on the route's working set (:func:`mmprog.engine.bcfw.master`) is solved by each master back end
    through the engine's route (status-checked, time-capped: the path of ``mmprog verify`` on a bcfw fit,
    :func:`mmprog.duality.master_of_bcfw`), then P(w) of each solver's w is computed by each oracle back end.

    Each row: the master's form (``n``: one cut per cached labeling; ``one``: the working set aggregated into one
    1-slack cut, :meth:`~mmprog.engine.bcfw.BCFWRun.aggregated_cut`, the same certified lower bound), its optimum
    (``master_objective``, which must lie in [D(α), P(w)] of the run: ``in_bounds``), its distance to the first
    solver's optimum relative to the run's absolute gap (``objective_diff_over_gap``), the full objective of the
    solver's w by that oracle (``upper_bound``) and its certificate against D(α) (``w_gap``), test F1 and whether
    it is within 0.1 of the route's own w's (``f1_within_0_1``) and of the first solver's
    (``f1_within_0_1_of_first``)."""
    import numpy as np

    from ..duality import master_of_bcfw
    from ..engine import bcfw
    from ..engine.oracle import Oracle
    from ..exceptions import SolverError, SolverUnavailable
    from ..programs import get_program
    from ..result import Result
    ref_f1, first_f1 = _mmprog_f1(fmap, run.w, ds, test), None
    absolute = run.upper_bound - run.lower_bound
    rows, ref = [], None
    cached = int(np.count_nonzero(run.state["alpha"][:, 1:] > 0))
    if form == "n" and cached > bcfw.MAX_MASTER_CUTS:
        # the Gram dual of m cuts holds m² entries, written into Pyomo term by term: 300 CoNLL-2000 sentences (9,120
        # labelings at gap 1e-2) took over 10 minutes and 1.7 GB before the first solve
        return [dict(system="mmprog", route="bcfw", master_solver=name, master_form="n", master_cuts=cached,
                     gap=run.gap, gap_tol=gap_tol, lower_bound=run.lower_bound, run_upper_bound=run.upper_bound,
                     setting=f"swap: n-slack master solved by {name}", error=f"the n-slack master would hold "
                     f"{cached} cuts, above the engine's {bcfw.MAX_MASTER_CUTS} (its Gram dual has m² entries); "
                     f"use --swap-form one or auto") for name in solvers]
    for name in solvers:
        prog = get_program("m3n", C=C)
        t0 = time.perf_counter()
        er, used = bcfw.engine_run(run, fmap, prepared, prog, form)
        res = Result(fmap, er, prog.name, prog.params(), "bcfw", used, label_names=ds.label_names, gap_tol=gap_tol)
        _ = res.model                 # stated on first reading: its build is timed here, not in the solve
        build = time.perf_counter() - t0
        base = dict(system="mmprog", route="bcfw", master_solver=name, master_form=used, master_cuts=len(er.solution.alpha),
                    gap=run.gap, gap_tol=gap_tol, lower_bound=run.lower_bound, run_upper_bound=run.upper_bound,
                    master_build_seconds=build)
        t0 = time.perf_counter()
        try:
            view, check = master_of_bcfw(res, [name])
        except (SolverError, SolverUnavailable) as e:
            rows.append(dict(base, setting=f"swap: {used}-slack master solved by {name}", master_seconds=
                             time.perf_counter() - t0, error=str(e).splitlines()[0]))
            continue
        solved = time.perf_counter() - t0
        obj = float(view.primal_objective)
        f1 = _mmprog_f1(fmap, view.w, ds, test)
        if ref is None:
            ref, first_f1 = obj, f1
        w = np.asarray(view.w, dtype=np.float64)
        for backend in oracles:
            t1 = time.perf_counter()
            orc = Oracle(fmap, prepared, backend=backend, n_jobs=None if backend == "serial" else 2)
            try:
                hinge = np.asarray(orc.separate_one_slack(w)[1])
            finally:
                orc.close()
            upper = 0.5 * float(w @ w) + C * float(np.maximum(hinge, 0.0).sum())
            rows.append(dict(base, setting=f"swap: {used}-slack master solved by {name}, P(w) by the {backend} oracle",
                             oracle=backend, master_objective=obj, master_seconds=solved, in_bounds=check.status,
                             objective_diff_over_gap=abs(obj - ref) / absolute if absolute > 0 else None,
                             upper_bound=upper, oracle_seconds=time.perf_counter() - t1,
                             w_gap=(upper - run.lower_bound) / max(1.0, abs(upper)),
                             f1_within_0_1=all(abs(f1[k] - ref_f1[k]) <= 0.1 for k in f1),
                             f1_within_0_1_of_first=all(abs(f1[k] - first_f1[k]) <= 0.1 for k in f1), **f1))
    return rows


def run_swap_fits(ds, test, C, gap_tol, time_limit, solvers, oracles, order=1, transitions="seen"):
    """The swap as a user runs it: ``mmprog.fit`` (what ``mmprog train --solver X --oracle Y`` runs, route auto)
    once per (master back end, oracle back end), each timed; one row per fit with its certificate, the solver's
    solve of the master on the route's working set (``master_objective``, :func:`mmprog.api.solve_master_of_record`),
    test F1, and against the first fit: the objective difference relative to the first fit's absolute gap, the
    largest weight difference and whether F1 is within 0.1."""
    import numpy as np

    import mmprog
    rows, first = [], None
    for name in solvers:
        for backend in oracles:
            w0, c0 = time.perf_counter(), time.process_time()
            res = mmprog.fit(ds, C=C, solver=name, oracle=backend, n_jobs=None if backend == "serial" else 2,
                             gap_tol=gap_tol, time_limit=time_limit, order=order,
                             transitions=transitions if order == 2 else "all")
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            f1 = _mmprog_f1(res.fmap, res.w, ds, test)
            m = res.master_solve or {}
            row = dict(system="mmprog", setting=f"swap fit: mmprog.fit(C={C:g}, solver={name}, oracle={backend})",
                       swap_fit=True, route=res.route, master_solver=name, oracle=backend, gap=res.gap, gap_tol=gap_tol,
                       termination=res.termination, train_seconds=wall, cpu_seconds=cpu, passes=res.n_iter,
                       upper_bound=res.upper_bound, lower_bound=res.primal_objective,
                       master_objective=m.get("objective"), master_form=m.get("form"), master_cuts=m.get("cuts"),
                       in_bounds=m.get("in_bounds"), **f1)
            if first is None:
                first = (row, res.w, res.upper_bound - res.primal_objective)
            ref, w_ref, absolute = first
            if row["master_objective"] is not None and ref["master_objective"] is not None and absolute > 0:
                row["objective_diff_over_gap"] = abs(row["master_objective"] - ref["master_objective"]) / absolute
            row["w_max_diff"] = float(np.max(np.abs(res.w - w_ref))) if len(res.w) else 0.0
            row["f1_within_0_1_of_first"] = all(abs(f1[k] - ref[k]) <= 0.1 for k in f1)
            rows.append(row)
    return rows


def run_dev(train, templates, dev, Cs, c2s, tests, gap_tol, time_limit, order=1, transitions="seen",
            crfsuite=True, refit=None):
    """C chosen on held-out sentences, for both systems: the last ``dev`` fraction of ``train`` held out
    (:func:`mmprog.parsing.split_dev`, as ``mmprog train --dev`` takes it), the template features fitted on the rest
    and given to both; mmprog's warm-started C path (``mmprog.fit(route="bcfw", warm_start=previous)``, C
    increasing, what ``mmprog train --dev --C-grid`` runs) and CRFsuite at each c2 of ``c2s``, every candidate's dev
    F1 in its row, the best by dev F1 (the first on ties) scored on the test files.

    With ``refit`` = (train, dataset, tests) of the whole training file (its features fitted on all of it), each
    system's chosen C (c2) is then trained again on the whole file and scored on the test files, in a row of its own
    (``refit: True``): what ``mmprog train --dev FRACTION`` does unless ``--no-refit``, and what scikit-learn's
    searches do with ``refit=True``. The held-out fits keep their own test F1, so both protocols are in the record.
    Returns (rows, notes)."""
    import mmprog
    from ..features.templates import TemplateExtractor
    from ..parsing import split_dev
    part, held = split_dev(train, dev)
    ex = TemplateExtractor(templates)
    ds = ex.to_dataset(part)
    dev_set = {"dev": _held(ex, held, ds)}
    rows = []
    best, prev, path_wall, path_cpu = None, None, 0.0, 0.0
    for C in sorted(Cs):
        w0, c0 = time.perf_counter(), time.process_time()
        res = mmprog.fit(ds, C=C, route="bcfw", gap_tol=gap_tol, time_limit=time_limit, order=order,
                         transitions=transitions if order == 2 else "all", warm_start=prev)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        path_wall, path_cpu = path_wall + wall, path_cpu + cpu
        row = dict(system="mmprog", setting=f"bcfw C={C:g} on {1 - float(dev):g} of the training file"
                   + (f" (warm start from C={prev.params['C']:g})" if prev is not None else ""), dev_path=True,
                   C=C, route=res.route, gap=res.gap, gap_tol=gap_tol, termination=res.termination, passes=res.n_iter,
                   seconds=wall, cpu_seconds=cpu, warm_start=prev is not None,
                   **_mmprog_f1(res.fmap, res.w, ds, dev_set))
        rows.append(row)
        if best is None or row["dev_f1"] > best[0]["dev_f1"]:
            best = (row, res)
        prev = res
    test = {name: _held(ex, corpus, ds) for name, corpus in tests.items()}
    best[0].update(chosen=True, path_seconds=path_wall, path_cpu_seconds=path_cpu,
                   **_mmprog_f1(best[1].fmap, best[1].w, ds, test))
    if crfsuite:
        # every c2 is tagged on the test files too (tagging is cheap beside training), but only the chosen row keeps
        # its test F1
        cands = []
        for c2 in c2s:
            r = run_crfsuite(part, ds, {**dev_set, **test}, c2=c2)
            r.update(setting=r["setting"] + f", on {1 - float(dev):g} of the training file", dev_path=True, c2=c2)
            cands.append(r)
        pick = max(cands, key=lambda r: (r["dev_f1"], -cands.index(r)))
        for r in cands:
            if r is not pick:
                for name in test:
                    r.pop(f"{name}_f1")
        pick.update(chosen=True, path_seconds=sum(r["train_seconds"] for r in cands),
                    path_cpu_seconds=sum(r["cpu_seconds"] for r in cands))
        rows += cands
    if refit is not None:
        rows += _refit_rows(refit, best[0], pick if crfsuite else None, gap_tol, time_limit, order, transitions)
    notes = [f"--dev {dev}: the last {len(held)} of {len(train)} training sentences held out, features fitted on the "
             f"other {len(part)} ({ex.n_features_} input features) and given to both systems; each system's C (c2) "
             f"is the one of best dev F1, scored on the test files (test F1 only on the chosen row)"]
    if refit is not None:
        notes.append("refit rows: each system's chosen C (c2) trained again, cold, on the whole training file with "
                     "the features of the whole file (what `mmprog train --dev FRACTION` does by default) and scored "
                     "on the test files")
    return rows, notes


def _refit_rows(refit, chosen, pick, gap_tol, time_limit, order, transitions):
    """The chosen C of mmprog (row ``chosen``) and the chosen c2 of CRFsuite (row ``pick``, or None) trained on the
    whole training file, ``refit`` = (train, dataset, tests); one row each."""
    import mmprog
    train, ds, test = refit
    C = chosen["C"]
    w0, c0 = time.perf_counter(), time.process_time()
    res = mmprog.fit(ds, C=C, route="bcfw", gap_tol=gap_tol, time_limit=time_limit, order=order,
                     transitions=transitions if order == 2 else "all")
    rows = [dict(system="mmprog", setting=f"bcfw C={C:g} refit on the whole training file (C chosen on dev)",
                 dev_path=True, refit=True, C=C, route=res.route, gap=res.gap, gap_tol=gap_tol,
                 termination=res.termination, passes=res.n_iter, seconds=time.perf_counter() - w0,
                 cpu_seconds=time.process_time() - c0, **_mmprog_f1(res.fmap, res.w, ds, test))]
    if pick is not None:
        r = run_crfsuite(train, ds, test, c2=pick["c2"])
        r.update(setting=r["setting"] + ", refit on the whole training file (c2 chosen on dev)", dev_path=True,
                 refit=True, c2=pick["c2"])
        rows.append(r)
    return rows


def run_cli(task, root, templates, order, transitions, solvers, time_limit):
    """The command a user types, timed as a whole process: ``mmprog train --data conll:TRAIN --templates T --out M``
    (with ``--order 2 --transitions T`` for a second-order task), no ``--C`` and no ``--eps``, so the route, C and
    the certificate are the command's defaults; then the same command with ``--solver S`` for each of ``solvers``.
    Each row holds the command's wall seconds (start-up, reading, features, fit and save: more than the fit that
    CRFsuite's time is set against), the gap and termination it printed, and the saved model's F1 on the test
    files (scored afterwards, untimed). The solver rows also say how far their master's objective and F1 lie from
    the first row's: within its gap and 0.1 is what a swap must keep."""
    import json
    import subprocess
    import tempfile

    import mmprog
    from ..datasets.registry import load_spec
    from ..tagging import score_text
    cols, train_path, tests = TASKS[task]

    def spec(path):
        return f"conll:{os.path.join(root, path)},columns={cols}"

    base = [sys.executable, "-m", "mmprog.cli", "train", "--data", spec(train_path), "--templates", templates]
    if order == 2:
        base += ["--order", "2", "--transitions", transitions]
    test = {name: load_spec(spec(path)) for name, path in tests.items()}
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for solver in [None] + list(solvers or []):
            model = os.path.join(d, f"model-{solver or 'default'}")
            argv = base + (["--solver", solver] if solver else []) + ["--time-limit", f"{time_limit:g}", "--out",
                                                                        model, "--json"]
            t0 = time.perf_counter()
            try:
                done = subprocess.run(argv, capture_output=True, text=True, timeout=time_limit + 600)
            except subprocess.TimeoutExpired:
                # the command's own --time-limit should have ended it long before: a hang, reported as such
                done = subprocess.CompletedProcess(argv, -1, "", f"no result {time_limit + 600:g} s after the start "
                                                   f"(--time-limit {time_limit:g})")
            wall = time.perf_counter() - t0
            shown = " ".join(["mmprog", "train", "--data", f"conll:{train_path}", "--templates", templates]
                             + (["--order", "2", "--transitions", transitions] if order == 2 else [])
                             + (["--solver", solver] if solver else []) + ["--out", "M"])
            row = dict(system="mmprog", setting=f"command: {shown}", cli=True, solver=solver,
                       command_rc=done.returncode, command_seconds=wall)
            if done.returncode != 0:
                row["error"] = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
                rows.append(row)
                continue
            out = json.loads(done.stdout)
            row.update(route=out["route"], C=out["params"].get("C"), termination=out["termination"], gap=out["gap"],
                       gap_tol=out["gap_tol"], upper_bound=out["upper_bound"], lower_bound=out["primal_objective"],
                       fit_seconds=out["train_seconds"])
            if "master_solve" in out:
                row.update(master_objective=out["master_solve"]["objective"],
                           in_bounds=out["master_solve"].get("in_bounds"))
            pred = mmprog.load(model)
            for name, corpus in test.items():
                row[f"{name}_f1"] = score_text(pred, corpus)["f1"]
            if rows and "gap" in rows[0]:
                ref = rows[0]
                width = ref["upper_bound"] - ref["lower_bound"]
                mine = row.get("master_objective", row["lower_bound"])
                row["objective_diff_over_gap"] = abs(mine - ref["lower_bound"]) / width if width > 0 else None
                row["f1_within_0_1_of_first"] = all(abs(row[f"{n}_f1"] - ref[f"{n}_f1"]) <= 0.1 for n in tests)
            rows.append(row)
    return rows


def print_cli(task, rows, tests):
    """The command rows as a table."""
    if not rows:
        return
    print(f"{task}: command: {'solver':<8} {'wall s':>8} {'fit s':>8} {'termination':<11} {'gap':>9} "
          + " ".join(f"{t + ' F1':>9}" for t in tests) + "  swap: |obj diff|/gap, F1 within 0.1")
    for r in rows:
        if "error" in r:
            print(f"{task}: command: {str(r['solver'] or 'default'):<8} failed: {r['error']}", flush=True)
            continue
        swap = "" if "objective_diff_over_gap" not in r else \
            f"  {r['objective_diff_over_gap']:.2e}, {'yes' if r['f1_within_0_1_of_first'] else 'no'}"
        print(f"{task}: command: {str(r['solver'] or 'default'):<8} {r['command_seconds']:8.1f} "
              f"{r['fit_seconds']:8.1f} {r['termination']:<11} {r['gap']:9.2e} "
              + " ".join(f"{r[t + '_f1']:9.2f}" for t in tests) + swap, flush=True)


def print_swap(task, rows, tests):
    """The swap rows as a table."""
    if not rows:
        return
    print(f"{task}: swap at the certificate: {'solver':<7} {'oracle':<8} {'form':<4} {'master obj':>14} "
          f"{'in [D,P]':>8} {'|diff|/gap':>10} {'P(w)':>14} {'w gap':>9} {'master s':>8} " +
          " ".join(f"{t + ' F1':>9}" for t in tests) + "  F1 within 0.1")
    for r in rows:
        if "error" in r:
            print(f"{task}: swap at the certificate: {r['master_solver']:<7} failed: {r['error']}")
            continue
        diff = "" if r["objective_diff_over_gap"] is None else f"{r['objective_diff_over_gap']:10.2e}"
        print(f"{task}: swap at the certificate: {r['master_solver']:<7} {r['oracle']:<8} {r['master_form']:<4} "
              f"{r['master_objective']:14.8g} {r['in_bounds']:>8} {diff:>10} {r['upper_bound']:14.8g} "
              f"{r['w_gap']:9.2e} {r['master_seconds']:8.2f} " + " ".join(f"{r[t + '_f1']:9.2f}" for t in tests) +
              f"  {'yes' if r['f1_within_0_1'] else 'NO'} (of the route's w), "
              f"{'yes' if r['f1_within_0_1_of_first'] else 'NO'} (of the first solver's)", flush=True)


def print_swap_fits(task, rows):
    """The swap fits against the first one."""
    for r in rows:
        obj = "" if r["master_objective"] is None else f"{r['master_objective']:.10g}"
        diff = f"{r['objective_diff_over_gap']:.2e}" if "objective_diff_over_gap" in r else "-"
        print(f"{task}: swap fit {r['master_solver']}/{r['oracle']}: route {r['route']}, {r['termination']}, gap "
              f"{r['gap']:.2e}; master optimum {obj} ({r['master_form']}-slack, {r['in_bounds']}), |diff|/gap vs the "
              f"first fit {diff}, max |w - w_first| {r['w_max_diff']:.2e}, F1 within 0.1 of the first: "
              f"{'yes' if r['f1_within_0_1_of_first'] else 'NO'}", flush=True)


def print_dev(task, rows, tests):
    """The C-on-dev rows as a table."""
    if not rows:
        return
    print(f"{task}: C on dev: {'system':<9} {'C / c2':>7} {'wall s':>8} {'gap':>9} {'dev F1':>7} " +
          " ".join(f"{t + ' F1':>9}" for t in tests))
    for r in rows:
        c = r.get("C", r.get("c2"))
        sec = r.get("seconds", r.get("train_seconds"))
        gap = f"{r['gap']:9.2e}" if "gap" in r else " " * 9
        test = " ".join(f"{r[t + '_f1']:9.2f}" if t + "_f1" in r else " " * 9 for t in tests)
        dev_f1 = f"{r['dev_f1']:7.2f}" if "dev_f1" in r else " " * 7
        print(f"{task}: C on dev: {r['system']:<9} {c:7.3g} {sec:8.1f} {gap} {dev_f1} {test}"
              + ("  chosen" if r.get("chosen") else "") + ("  refit on the whole file" if r.get("refit") else ""),
              flush=True)


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
    ap.add_argument("--order", default="1", help="Markov order of mmprog's chain per task, comma-separated (one value: "
                    "every task); CRFsuite is first-order whatever this says")
    ap.add_argument("--transitions", choices=["all", "seen"], default="seen", help="with order 2: the label bigrams "
                    "the pair Viterbi searches (default: those seen in the training labels)")
    ap.add_argument("--inner", type=int, default=None, help="pairwise steps per visit (default: the route's)")
    ap.add_argument("--cache-size", type=int, default=None, help="labelings kept per example (default: the route's)")
    ap.add_argument("--cache-passes", default=None, metavar="N[,N...]", help="passes inside the caches after each "
                    "oracle pass (default: the route's); several, comma-separated: one mmprog fit per count beside "
                    "the same CRFsuite row, each with its time and its non-oracle seconds per oracle second")
    ap.add_argument("--cache-rule", choices=["fixed", "rate"], default=None, help="when a round's passes inside the "
                    "caches stop (default: the route's)")
    ap.add_argument("--cost-power", type=float, default=None, help="κ of the gap samplings: blocks drawn in "
                    "proportion to gap / (tokens × cached labelings)^κ (0: in proportion to gap; default: the route's)")
    ap.add_argument("--ema", type=float, default=None, help="weight of each pass's point in the exponential average "
                    "whose P is the other upper bound (default: the route's)")
    ap.add_argument("--work-log", default=None, metavar="PATH", help="write every mmprog pass's thread CPU seconds "
                    "and counted work (JSON) here, and print the seconds per unit of work they fit beside the "
                    "route's WORK_SECONDS")
    ap.add_argument("--crfsuite-c2", type=float, default=1.0)
    ap.add_argument("--swap", default=None, metavar="SOLVER,...", help="at the gap_tol certificate, solve P0's master "
                    "on the route's working set with each of these master back ends (e.g. daqp,highs) and evaluate "
                    "P(w) of each solver's w with each --swap-oracles back end: one row per pair")
    ap.add_argument("--swap-oracles", default="serial,process", metavar="BACKEND,...",
                    help="oracle back ends of the swap rows (default serial,process)")
    ap.add_argument("--swap-fits", action="store_true", help="with --swap: also one whole mmprog.fit per (solver, "
                    "oracle back end), as `mmprog train --solver X --oracle Y` runs it (timed; each a full fit)")
    ap.add_argument("--swap-form", choices=["auto", "n", "one"], default="auto", help="the swap master: n (one cut "
                    "per cached labeling), one (the working set aggregated into one 1-slack cut, the same certified "
                    "lower bound) or auto (n up to the engine's limit of cached labelings, else one)")
    ap.add_argument("--dev", default=None, metavar="FRACTION", help="also choose C on the last FRACTION of the "
                    "training sentences (held out, features fitted on the rest) for both systems: mmprog's warm-started "
                    "C path over --C-grid, CRFsuite over --crfsuite-c2-grid; every candidate's dev F1 and the "
                    "chosen one's test F1 are recorded")
    ap.add_argument("--no-refit", dest="refit", action="store_false", help="with --dev: do not train each system's "
                    "chosen C (c2) again on the whole training file (by default it is, and scored on the test files)")
    ap.add_argument("--C-grid", default="0.1,0.3,1,3", metavar="C1,C2,...", help="with --dev: mmprog's C path "
                    "(default 0.1,0.3,1,3)")
    ap.add_argument("--crfsuite-c2-grid", default=None, metavar="C2,...", help="with --dev: CRFsuite's c2 to choose "
                    "from (default 1/(2C) for each C of --C-grid: CRFsuite's L-BFGS penalty is c2 ||w||^2, P0's is "
                    "||w||^2 / (2C) on the hinge losses' scale)")
    ap.add_argument("--cli", action="store_true", help="also time the command a user types, `mmprog train --data "
                    "conll:TRAIN --templates T --out M` with its defaults (and --order 2 --transitions T for a "
                    "second-order task), as a whole process, then the same with --solver S for each --swap solver; "
                    "the saved models are scored on the test files (the whole training file, whatever --limit says)")
    ap.add_argument("--limit", type=int, default=None, help="train on the first N sentences only (quick runs)")
    ap.add_argument("--skip", choices=["mmprog", "crfsuite"], default=None)
    ap.add_argument("--record", default=None, metavar="PATH", help="write the machine-readable record here")
    ap.add_argument("--verbose", action="store_true", help="print every certificate")
    ap.add_argument("--same-features", action="store_true", help="accepted (no effect): `bench crf --same-features` "
                    "runs this bench")
    args = ap.parse_args(argv)
    root = args.data_root or str(default_data_root())
    tasks = args.task.split(",")
    bad = [t for t in tasks if t not in TASKS]
    if bad:
        print(f"mmprog.bench certify: --task must name tasks among {', '.join(sorted(TASKS))}; got {bad[0]!r}",
              file=sys.stderr)
        return 2
    orders = [int(o) for o in args.order.split(",")]
    if len(orders) == 1:
        orders *= len(tasks)
    if len(orders) != len(tasks) or any(o not in (1, 2) for o in orders):
        print(f"mmprog.bench certify: --order must be 1 or 2, one value or one per task ({len(tasks)}); got "
              f"{args.order!r}", file=sys.stderr)
        return 2
    try:
        Cs = [float(c) for c in args.C_grid.split(",")]
        c2s = [float(c) for c in args.crfsuite_c2_grid.split(",")] if args.crfsuite_c2_grid else \
            [1 / (2 * C) for C in Cs]
        dev = None if args.dev is None else float(args.dev)
    except ValueError:
        print(f"mmprog.bench certify: --dev takes a fraction and --C-grid/--crfsuite-c2-grid comma-separated "
              f"floats; got --dev {args.dev!r} --C-grid {args.C_grid!r} --crfsuite-c2-grid {args.crfsuite_c2_grid!r}",
              file=sys.stderr)
        return 2
    if dev is not None and not 0 < dev < 1 or not all(c > 0 for c in Cs + c2s):
        print(f"mmprog.bench certify: --dev must be in (0, 1) and every C and c2 > 0; got --dev {args.dev!r} "
              f"--C-grid {args.C_grid!r} --crfsuite-c2-grid {args.crfsuite_c2_grid!r}", file=sys.stderr)
        return 2
    counts = [None] if args.cache_passes is None else args.cache_passes.split(",")
    if counts != [None] and not all(c.strip().isdigit() for c in counts):
        print(f"mmprog.bench certify: --cache-passes takes comma-separated ints >= 0; got {args.cache_passes!r}",
              file=sys.stderr)
        return 2
    counts = [None if c is None else int(c) for c in counts]
    swap = None
    if args.swap:
        swap = dict(solvers=args.swap.split(","), oracles=args.swap_oracles.split(","), form=args.swap_form)
    settings = {k: v for k, v in (("inner", args.inner), ("cache_size", args.cache_size),
                                  ("cache_rule", args.cache_rule),
                                  ("cost_power", args.cost_power), ("ema", args.ema))
                if v is not None}
    rows, notes = [], []
    work_log = [] if args.work_log else None
    for task, order in zip(tasks, orders):
        t0 = time.perf_counter()
        train, ds, test, ex = _features(task, root, args.templates, args.limit)
        feature_seconds = time.perf_counter() - t0
        notes.append(f"task {task}: {len(ds)} training sentences, {ex.n_features_} input features (templates "
                     f"{args.templates}, built once in {feature_seconds:.1f} s and given to both systems); mmprog's "
                     f"chain of order {order}" + (f" over the {args.transitions} label bigrams" if order == 2 else ""))
        task_rows = []
        if args.skip != "crfsuite":
            try:
                task_rows.append(run_crfsuite(train, ds, test, c2=args.crfsuite_c2))
            except ImportError:
                print("mmprog.bench certify: python-crfsuite is missing; install the bench extra or give --skip "
                      "crfsuite", file=sys.stderr)
                return 2
        for count in counts if args.skip != "mmprog" else []:
            s = settings if count is None else {**settings, "cache_passes": count}
            task_rows += run_mmprog(ds, test, args.C, args.gap_tol, args.stretch or None, args.time_limit,
                                    s, order, args.transitions, args.verbose, swap, work_log)
        if swap and args.swap_fits and args.skip != "mmprog":
            task_rows += run_swap_fits(ds, test, args.C, args.gap_tol, args.time_limit, swap["solvers"],
                                       swap["oracles"], order, args.transitions)
        if args.cli:
            task_rows += run_cli(task, root, args.templates, order, args.transitions,
                                 swap["solvers"] if swap else [], args.time_limit)
            notes.append(f"task {task}: command rows (--cli): the mmprog command with its defaults run as a whole "
                         f"process; command_seconds counts start-up, reading, features, fit and save, fit_seconds "
                         f"what the command reports for features and fit; command_seconds_over_crfsuite sets the "
                         f"first against CRFsuite's training alone; test F1 of the saved model, scored afterwards")
        if dev is not None:
            dev_rows, dev_notes = run_dev(train, args.templates, dev, Cs, c2s, {k: c for k, (c, _) in test.items()},
                                          args.gap_tol, args.time_limit, order, args.transitions,
                                          crfsuite=args.skip != "crfsuite",
                                          refit=(train, ds, test) if args.refit else None)
            task_rows += dev_rows
            notes += [f"task {task}: {n}" for n in dev_notes]
        peer = [r for r in task_rows if r["system"] == "CRFsuite" and "train_seconds" in r and not r.get("dev_path")]
        for r in task_rows:
            if peer and r["system"] == "mmprog" and "train_seconds" in r:
                # the targets are stated against CRFsuite's training time on the same features (this run)
                r["seconds_over_crfsuite"] = r["train_seconds"] / peer[0]["train_seconds"]
            if peer and r.get("cli") and "command_seconds" in r:
                r["command_seconds_over_crfsuite"] = r["command_seconds"] / peer[0]["train_seconds"]
        tests = list(test)
        print(f"{task}: {'system':<10} {'setting':<58} {'wall s':>8} {'CPU s':>8} {'oracle s':>8} {'other s':>8} "
              f"{'gap':>9} " + " ".join(f"{t + ' F1':>9}" for t in tests))
        for r in task_rows:
            r["task"] = task
            if "train_seconds" not in r or r.get("dev_path"):
                continue
            gap = f"{r['gap']:9.2e}" if "gap" in r else " " * 9
            split = f"{r['oracle_seconds']:8.1f} {r['non_oracle_seconds']:8.1f}" if "oracle_seconds" in r else \
                " " * 17
            print(f"{task}: {r['system']:<10} {r['setting'][:58]:<58} {r['train_seconds']:8.1f} "
                  f"{r['cpu_seconds']:8.1f} {split} {gap} " + " ".join(f"{r[t + '_f1']:9.2f}" for t in tests),
                  flush=True)
        print_swap(task, [r for r in task_rows if "master_solver" in r and not r.get("swap_fit")], tests)
        print_swap_fits(task, [r for r in task_rows if r.get("swap_fit")])
        print_dev(task, [r for r in task_rows if r.get("dev_path")], tests)
        print_cli(task, [r for r in task_rows if r.get("cli")], tests)
        rows += task_rows
    if len(counts) > 1:
        notes.append(f"--cache-passes {args.cache_passes}: one mmprog fit per count of passes inside the caches after "
                     f"each oracle pass, the route's other settings as given; each row sets the time to its "
                     f"certificate beside its non-oracle seconds per oracle second")
    if work_log is not None:
        write_work_log(args.work_log, work_log)
    if args.record:
        from . import record
        notes += ["the two systems ran one after the other in this process (paired): on a machine shared with other "
                 "jobs only the pair's ratio is meaningful and CPU seconds are the steadier one (wall seconds include "
                 "time lost to the other jobs); CPU seconds count every thread of the process",
                 "mmprog's oracle_seconds: token scores and loss-augmented Viterbi inside the passes (split from the "
                 "rest of each pass by the kernel's cycle counts) plus the inference of the upper bounds; "
                 "non_oracle_seconds: everything else of the fit (steps inside the caches, passes without the "
                 "oracle, w rebuilt at the certificates, the token Gram matrices); non_oracle_per_oracle is their "
                 "ratio over the fit's rounds (an oracle pass and the passes inside the caches after it)",
                 "mmprog's gap is certified: upper = P0's full objective at the returned w (loss-augmented "
                 "inference on every example), lower = the n-slack dual value of the route's α",
                 "swap rows (--swap): P0's master on the route's working set at the gap_tol certificate, built by "
                 "mmprog.engine.bcfw.master (master_form n: one cut per cached labeling; one: the working set "
                 "aggregated into one 1-slack cut, whose optimum certifies the same lower bound D(α)) and solved by "
                 "each master back end through the engine's route as `mmprog verify` does (status-checked, 60 s cap); "
                 "in_bounds: its optimum lies in [D(α), P(w)] of the run; upper_bound: P0's full objective at that "
                 "solver's w by that oracle back end; w_gap: (that P − D(α)) / max(1, |P|); F1 within 0.1 of the "
                 "route's own w",
                 "swap fit rows (--swap-fits): one whole mmprog.fit per (solver, oracle back end), what `mmprog "
                 "train --solver X --oracle Y` runs: route bcfw, the solver solving the master on the route's "
                 "working set once the gap is certified (master_objective)",
                 "CRFsuite minimises a different objective (CRF likelihood with c2 = 1): its time is that of its "
                 "100 L-BFGS iterations, not of a certificate"]
        record.write(args.record, "certify", rows, packages=("python-crfsuite", "numba", "scipy"), notes=notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
