"""``python -m mmprog.bench ocr``: P0 on the OCR letters beside SVM^hmm, and the OCR100 protocol of the papers.

Taskar split: train on fold 0 (626 words), test on folds 1–9; 128 pixels, default chain map; C = 100/626 on the
n-slack scale (SVM^hmm's ``-c 100``). With ``--svmhmm PATH`` the user's own ``svm_hmm_learn`` binary is run in the
same invocation on the same training words and C (``-c 100 -e EPS --t 1 --e 0``: first-order transitions, emissions
of the current token, the chain map mmprog uses), and both tools are measured the same way: each fit runs in a
child process whose wall time, CPU time (user + system, its worker processes included) and peak resident memory are
read from the operating system when it ends. Without the flag the table shows SVM^hmm's recorded figures and says so.
mmprog runs twice per ε (``--stabilise``): separating at the master's optimum (Kelley's method, as SVM^hmm does),
and in-out stabilised (separating between the best point so far and the master's, ``stabilise="in-out"``); both stop
by the same ε test at the master's point.
SVM^hmm is non-commercial software: mmprog never ships, downloads or builds it.

OCR100 (``--ocr100``): 100 words drawn from each of the 10 folds; for each fold k train on its 100 words and test on
the other 900 (KDD 2009, ICML 2008), P0 and P1; mean error, deviation and training time.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
from ..engine.records import relative_gap

#: SVM^hmm V3.10 on this machine, measured before this bench could run it (engine issue): primal objective and wall
#: seconds of ``svm_hmm_learn -c 100 -e EPS --t 1 --e 0`` on fold 0
SVMHMM = {0.1: (291.3, 2.0), 0.01: (284.95, 5.3)}


def _tree_rss_kb(pid):
    """(Σ VmRSS over ``pid`` and its descendants, VmHWM of ``pid``) in kB from /proc; (0, 0) once it is gone."""
    total, hwm, todo = 0, 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                    elif line.startswith("VmHWM:") and p == pid:
                        hwm = int(line.split()[1])
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            continue
    return total, hwm


def measure_process(cmd, out_path):
    """Run ``cmd`` with stdout to ``out_path``; (wall s, CPU s, peak MB, return code).

    CPU: user + system of the child and its waited-for workers, from ``os.wait4``. Peak: the largest resident
    memory of the child and all its descendants together, sampled from /proc every 20 ms (and the child's own
    high-water mark): ``ru_maxrss`` of a child started from Python counts the Python parent's pages it was forked
    from, 115 MB where SVM^hmm itself peaks at 31 MB."""
    t = time.perf_counter()
    peak = 0
    with open(out_path, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, *_tree_rss_kb(proc.pid))
            time.sleep(0.02)
    wall = time.perf_counter() - t
    return wall, ru.ru_utime + ru.ru_stime, peak / 1024.0, os.waitstatus_to_exitcode(status)


def _write_svmhmm(ds, path):
    """SVM^hmm's input: one token a line, ``TAG qid:SEQ FEAT:VALUE ...`` with 1-based tags and features."""
    with open(path, "w") as fh:
        for q, (x, y) in enumerate(zip(ds.X, ds.Y)):
            for t in range(len(y)):
                nz = np.nonzero(x[t])[0]
                fh.write(f"{int(y[t]) + 1} qid:{q + 1} " + " ".join(f"{j + 1}:{x[t, j]:.10g}" for j in nz) + "\n")


def svmhmm_numbers(log_path):
    text = open(log_path).read()
    out = {}
    for key, pat in (("dual", r"dval=([-0-9.eE+]+)"), ("primal", r"pval=([-0-9.eE+]+)"),
                     ("iterations", r"Number of iterations: (\d+)")):
        m = re.search(pat, text)
        out[key] = float(m.group(1)) if m else float("nan")
    return out


def _child(args):
    """One mmprog fit in this (child) process; writes the model to ``--child-model`` (as ``svm_hmm_learn`` writes
    its own; the test words are scored by the parent, outside both tools' timed processes) and prints one JSON line.

    The child ends as ``mmprog train`` does (:func:`mmprog.cli.no_collection_at_exit`: no final garbage collections
    over the heap the process hands back anyway), so its wall and CPU time are what a user of the command line gets."""
    from ..cli import no_collection_at_exit
    no_collection_at_exit()
    import mmprog
    from mmprog.datasets.ocr import load_ocr
    ds = load_ocr(args.path)
    folds = np.asarray(ds.fold_ids)
    tr = ds[np.nonzero(folds == 0)[0]]
    t = time.perf_counter()
    stab = {} if args.child_stabilise == "none" else {"stabilise": args.child_stabilise}
    res = mmprog.fit(tr, program="m3n", C=100.0 / len(tr), slack=args.slack, eps=args.child, max_iter=5000,
                     oracle=args.oracle, n_jobs=args.n_jobs, **stab)
    fit_s = time.perf_counter() - t
    res.save(args.child_model)
    print(json.dumps({"objective": res.primal_objective, "upper": res.upper_bound, "iters": res.n_iter,
                      "termination": res.termination, "gap": res.gap,
                      "cuts": res.n_cuts, "fit_s": fit_s, "solver": res.solver, "timings": res.timings}))
    return 0


#: The settings of the OCR100 protocol. P0: its 1-slack QP master. P1 (``--p1-algorithm``): "factored" (default)
#: solves the whole polynomial-size LP once (:mod:`mmprog.engine.factored_lp`); "cutting_plane" grows the n-slack
#: LP with the in-out stabilised master (see :func:`mmprog.engine.loop.run`), stopped at a relative gap of 1e-3
#: between the best full objective (an upper bound) and the master's optimum (a lower bound)
OCR100_SETTINGS = {"m3n": dict(slack="one", eps=0.01),
                   "l1m3n": dict(algorithm="factored"),
                   "l1m3n/cutting_plane": dict(slack="n", eps=0.01, stabilise="in-out", line_search=10,
                                               drop_after=1, gap_tol=1e-3)}


def ocr100_picks(folds, size=100, seed=0):
    """The OCR100 words: ``size`` word indices drawn from each of the 10 folds (as ``mmprog demo`` draws them).

    Parameters
    ----------
    folds : ndarray of int, shape (n_words,)
        Fold of each word.

    Returns
    -------
    list of 10 ndarray of int, each shape (min(size, words in the fold),)
    """
    rng = np.random.default_rng(seed)
    return [rng.choice(np.nonzero(folds == k)[0], size=min(size, int(np.sum(folds == k))), replace=False)
            for k in range(10)]


def _ocr100(ds, folds, args):
    """KDD 2009's OCR100 protocol: for each fold k, train on its 100 drawn words and test on the other 900; one row
    per fit (error, wall and CPU seconds of the fit, rounds, relative gap, termination), then mean ± sd per program
    and C. CPU seconds (this process: the oracle and HiGHS run in it) say what the fit costs on a machine whose other
    jobs stretch the wall time. SIGINT/SIGTERM ends the fit under way with its best point (its row is printed) and
    the protocol with it; returns the exit code (0, or 130 when interrupted)."""
    import mmprog
    from ..engine import interrupts
    picks = ocr100_picks(folds)
    interrupts.forget()
    print(f"\nOCR100: train on 100 words of fold k, test on the other 900 drawn words; load average "
          f"{os.getloadavg()[0]:.1f} at the start")
    p1_key = "l1m3n" if args.p1_algorithm == "factored" else "l1m3n/cutting_plane"
    if "l1m3n" in args.programs:
        print(f"P1 (l1m3n): algorithm {args.p1_algorithm!r}, settings {OCR100_SETTINGS[p1_key]}")
    print(f"{'program':>8} {'C':>6} {'fold':>4} {'test_err':>8} {'time_s':>7} {'cpu_s':>7} {'rounds':>6} {'gap':>8} "
          f"{'objective':>10} {'upper':>10}  termination", flush=True)
    for program in args.programs:
        for C100 in args.C100:
            errs, times, cpus = [], [], []
            for k in args.folds:
                test_idx = np.concatenate([p for j, p in enumerate(picks) if j != k])
                t, c = time.perf_counter(), time.process_time()
                key = p1_key if program == "l1m3n" else program
                res = mmprog.fit(ds[picks[k]], program=program, C=C100, time_limit=args.time_limit,
                                 **OCR100_SETTINGS[key])
                times.append(time.perf_counter() - t)
                cpus.append(time.process_time() - c)
                errs.append(res.evaluate(ds[test_idx])["token_error"])
                print(f"{program:>8} {C100:6g} {k:4d} {errs[-1]:8.4f} {times[-1]:7.1f} {cpus[-1]:7.1f} {res.n_iter:6d} "
                      f"{res.gap:8.1e} {res.primal_objective:10.4f} {res.upper_bound:10.4f}  {res.termination} "
                      f"(load {os.getloadavg()[0]:.1f})", flush=True)
                if interrupts.pending():
                    # the signal was meant for the run, not for this one fit (also when it came in the round that
                    # finished the fit): stop here, the rows so far stand
                    print(f"interrupted during fold {k}: the remaining fits were not started", flush=True)
                    return 130
            print(f"{program:>8} {C100:6g} {'mean':>4} {np.mean(errs):8.4f} {np.mean(times):7.1f} {np.mean(cpus):7.1f}"
                  f"   error sd "
                  f"{np.std(errs):.4f}, time sd {np.std(times):.1f}, total {np.sum(times):.0f} s", flush=True)
    return 0


def _mmprog_row(path, args, eps, stab, tmp, test):
    """One mmprog fit of the Taskar split in a child process (separation point ``stab``), its model then scored on
    ``test`` here, printed; its row, or None when the child failed (said on stderr)."""
    import mmprog
    model = os.path.join(tmp, f"mmprog_{eps}_{stab}")
    cmd = [sys.executable, "-m", "mmprog.bench", "ocr", "--path", path, "--slack", args.slack,
           "--oracle", args.oracle, "--child", repr(eps), "--child-stabilise", stab, "--child-model", model] + \
          (["--n-jobs", str(args.n_jobs)] if args.n_jobs else [])
    log = os.path.join(tmp, f"mmprog_{eps}_{stab}.log")
    wall, cpu, peak, rc = measure_process(cmd, log)
    lines = open(log).read().strip().splitlines()
    if rc != 0 or not lines:
        print(f"mmprog child failed (exit {rc}): {' '.join(lines[-3:])}", file=sys.stderr)
        return None
    r = json.loads(lines[-1])
    r["test_err"] = mmprog.load(model + ".json").evaluate(test)["token_error"]
    tm = r["timings"]
    print(f"{eps:5g} {'mmprog':>7} {r['objective']:10.2f} {r['upper']:9.2f} {r['iters']:6d} {wall:7.1f} "
          f"{cpu:7.1f} {peak:8.0f} {r['fit_s']:6.1f} {tm['oracle']:7.1f} {tm['pyomo']:6.1f} "
          f"{tm['solver']:7.1f} {r['test_err']:8.4f}   ({r['solver']}, separation: {stab})")
    where = "" if stab == "none" else f" {stab}"
    return {"system": "mmprog", "setting": f"eps={eps:g} {args.slack}-slack{where} oracle={args.oracle}",
            "objective": r["objective"], "upper": r["upper"], "iters": r["iters"], "wall_s": wall,
            "cpu_s": cpu, "peak_mb": peak, "fit_s": r["fit_s"], "oracle_s": tm["oracle"],
            "pyomo_s": tm["pyomo"], "solver_s": tm["solver"], "test_err": r["test_err"],
            "solver": r["solver"], "termination": r.get("termination"),
            "gap": relative_gap(r["upper"], r["objective"])}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m mmprog.bench ocr", description=__doc__.splitlines()[0])
    ap.add_argument("--path", default=None, help="letters.npz (default: $MMPROG_DATA or ../shared/data)")
    ap.add_argument("--eps", type=float, nargs="*", default=[0.1, 0.01],
                    help="P0 tolerances on the Taskar split (none: skip that part, e.g. with --ocr100)")
    ap.add_argument("--slack", default="one", choices=["n", "one"])
    ap.add_argument("--ocr100", action="store_true", help="also run the OCR100 10-fold protocol for P0 and P1")
    ap.add_argument("--C100", type=float, nargs="+", default=[1.0], help="C values (n-slack scale) for OCR100")
    ap.add_argument("--programs", nargs="+", default=["m3n", "l1m3n"], choices=["m3n", "l1m3n"],
                    help="programs of the OCR100 protocol")
    ap.add_argument("--p1-algorithm", default="factored", choices=["factored", "cutting_plane"],
                    help="P1 in the OCR100 protocol: the whole factored LP solved once (default) or the stabilised "
                         "cutting plane")
    ap.add_argument("--folds", type=int, nargs="+", default=list(range(10)), help="OCR100 folds to run")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="wall-clock seconds per OCR100 fit (the termination column says whether it was reached)")
    ap.add_argument("--svmhmm", default=None, metavar="PATH",
                    help="your svm_hmm_learn binary, run on the same data and C in this invocation")
    ap.add_argument("--oracle", default="serial", choices=["serial", "thread", "process", "dask"])
    ap.add_argument("--n-jobs", type=int, default=None)
    ap.add_argument("--stabilise", nargs="+", default=["none", "in-out"], choices=["none", "in-out"],
                    help="mmprog's separation point, one row each (default both): the master's optimum (none: "
                         "Kelley's method, as SVM^hmm) or in-out stabilised (mmprog.fit's stabilise='in-out', "
                         "weight 0.8); the eps test reads the master's point either way")
    ap.add_argument("--child", type=float, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child-stabilise", default="none", help=argparse.SUPPRESS)
    ap.add_argument("--child-model", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--record", metavar="PATH",
                    help="also write the Taskar-split rows (mmprog, and SVM^hmm when run) as a JSON record")
    args = ap.parse_args(argv)
    rows = []
    import mmprog
    from mmprog.datasets.ocr import load_ocr
    from mmprog.datasets.registry import default_data_root
    path = args.path or os.path.join(default_data_root(), "ocr_letters", "letters.npz")
    if not os.path.exists(path):
        print(f"OCR letters not found at {path}; pass --path or set MMPROG_DATA")
        return 2
    if args.child is not None:
        args.path = path
        return _child(args)
    if args.svmhmm and not os.access(args.svmhmm, os.X_OK):
        print(f"--svmhmm {args.svmhmm}: not an executable file", file=sys.stderr)
        return 2
    ds = load_ocr(path)
    folds = np.asarray(ds.fold_ids)
    tr, te = ds[np.nonzero(folds == 0)[0]], ds[np.nonzero(folds != 0)[0]]
    if not args.eps:
        return _ocr100(ds, folds, args) if args.ocr100 else 0
    print(f"Taskar split: {len(tr)} training words, {len(te)} test words, C = 100/{len(tr)} (SVM^hmm -c 100), "
          f"{args.slack}-slack, oracle {args.oracle}; {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f} at the start")
    print("each fit in a child process that reads the training words and writes its model: wall and CPU seconds "
          "(user + system, workers included) and peak resident memory of that process and its workers (sampled "
          "every 20 ms); fit_s: mmprog's fit alone (no start-up, data loading or model writing); the test words are "
          "scored outside the timed processes; mmprog's child ends as the mmprog command does (heap frozen at exit, "
          "no final garbage collections)")
    print(f"{'eps':>5} {'tool':>7} {'objective':>10} {'upper':>9} {'iters':>6} {'wall_s':>7} {'cpu_s':>7} "
          f"{'peak_MB':>8} {'fit_s':>6} {'oracle':>7} {'pyomo':>6} {'solver':>7} {'test_err':>8}")
    tmp = tempfile.mkdtemp(prefix="mmprog_bench_ocr_")
    try:
        if args.svmhmm:
            _write_svmhmm(tr, os.path.join(tmp, "train.dat"))
        for eps in args.eps:
            for stab in args.stabilise:
                row = _mmprog_row(path, args, eps, stab, tmp, te)
                if row is None:
                    return 1
                rows.append(row)
            if args.svmhmm:
                log = os.path.join(tmp, f"svmhmm_{eps}.log")
                wall, cpu, peak, rc = measure_process([args.svmhmm, "-c", "100", "-e", repr(eps), "--t", "1", "--e", "0",
                                                os.path.join(tmp, "train.dat"), os.path.join(tmp, "model")], log)
                if rc != 0:
                    print(f"svm_hmm_learn failed (exit {rc}): {open(log).read()[-300:]}", file=sys.stderr)
                    return 1
                h = svmhmm_numbers(log)
                print(f"{eps:5g} {'svm_hmm':>7} {h['dual']:10.2f} {h['primal']:9.2f} {int(h['iterations']):6d} "
                      f"{wall:7.1f} {cpu:7.1f} {peak:8.0f}")
                rows.append({"system": "svm_hmm", "setting": f"eps={eps:g} -c 100", "objective": h["dual"],
                             "upper": h["primal"], "iters": int(h["iterations"]), "wall_s": wall, "cpu_s": cpu,
                             "peak_mb": peak})
            else:
                ref = SVMHMM.get(eps, (float("nan"), float("nan")))
                print(f"{eps:5g} {'svm_hmm':>7} {'':>10} {ref[0]:9.2f} {'':>6} {ref[1]:7.1f}   recorded earlier, "
                      f"not run now (pass --svmhmm PATH to run your svm_hmm_learn here)")
    finally:
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    print("objective: mmprog's master optimum (a lower bound) and SVM^hmm's dual value; upper: the primal "
          "objective at the returned w")
    if args.record:
        from . import record
        record.write(args.record, "ocr", rows, argv=argv,
                     notes=[f"Taskar split: {len(tr)} training words (fold 0), {len(te)} test words, C = 100/{len(tr)} "
                            f"(SVM^hmm -c 100), {args.slack}-slack; each fit in a child process that reads the "
                            "training words and writes its model (the test words scored outside it)",
                            "mmprog's separation point: none = the master's optimum (Kelley's method, as SVM^hmm), "
                            "in-out = between the best point so far and the master's (stabilise='in-out', weight "
                            "0.8); both stop by the eps test at the master's point",
                            "objective: mmprog's master optimum (a lower bound) and SVM^hmm's dual value; upper: the "
                            "primal objective at the returned w",
                            "SVM^hmm rows only when --svmhmm ran it in this run; the OCR100 rows are printed, not "
                            "recorded",
                            "mmprog's child process ends as the mmprog command does: the heap frozen at exit "
                            "(gc.freeze), without Python's final garbage collections"])
        print(f"record written to {args.record}")
    return _ocr100(ds, folds, args) if args.ocr100 else 0
