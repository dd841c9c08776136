"""``python -m mmprog.bench startup [--file F] [--sentences N] [--repeat R] [--record PATH]``: what mmprog costs
before its first round, phase by phase, each in fresh processes.

Rows (each the best and the median of ``--repeat`` fresh child processes, run one after the other; wall clock and
the child's CPU time, user + system, since on a shared machine the wall clock mostly measures the other jobs):

* the libraries alone: the interpreter, ``numpy``, ``scipy.sparse``, ``numba``, ``pyomo.core`` and
  ``pyomo.environ`` (Pyomo's modelling layer and its plugins: solver interfaces, writers, GDP, DAE, …);
* ``import mmprog`` (the package: loaders and kernels are imported on use, so this is cheap) and the fit path
  (``mmprog.api``, ``mmprog.tagging``, ``mmprog.cli.train``: the engine, the programs registry (a program's module
  loads when it is asked for), the solvers' registry);
* the first call of a compiled kernel (Viterbi on a 3-token chain) in a fresh process: numba loading the kernel
  from its on-disk cache *and* setting up its compiler target, which it does once per process on the first call;
* ``mmprog train`` on the first ``--sentences`` sentences of ``--file`` (CoNLL-2000 chunking, ``--templates rich``,
  one round): the process's wall and CPU, the round itself (the fit's ``timings.total``, which includes the first
  kernel call above), and their difference — start-up before the first round plus the summary after it;
* the peer, CRFsuite (python-crfsuite, the ``bench`` extra), on the same sentences: ``import pycrfsuite`` and a
  process that reads the file, builds word/POS attributes and trains one L-BFGS iteration.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

#: (system, setting, code run by ``python -c``)
IMPORTS = [
    ("python", "interpreter (python -c pass)", "pass"),
    ("python", "import numpy", "import numpy"),
    ("python", "import scipy.sparse", "import scipy.sparse"),
    ("python", "import numba", "import numba"),
    ("python", "import pyomo.core", "import pyomo.core"),
    ("python", "import pyomo.environ", "import pyomo.environ"),
    ("mmprog", "import mmprog", "import mmprog"),
    ("mmprog", "import the fit path (mmprog.api, tagging, cli.train)",
     "import mmprog.api, mmprog.tagging, mmprog.cli.train"),
]

#: the first kernel call in a fresh process, timed inside it (seconds printed on stdout)
FIRST_KERNEL = """
import time, numpy as np
from mmprog.inference.chain import viterbi
node = np.zeros((1, 3, 2)); edge = np.zeros((2, 2)); lengths = np.array([3])
t0 = time.perf_counter(); viterbi(node, edge, lengths); print(time.perf_counter() - t0)
"""

#: CRFsuite reading the same sentences and training one iteration (the peer's start-up to its first iteration)
CRFSUITE = """
import sys, tempfile, pycrfsuite
X, Y, x, y = [], [], [], []
for line in open(sys.argv[1]):
    f = line.split()
    if not f:
        if x: X.append(x); Y.append(y); x, y = [], []
        continue
    x.append({"w": f[0].lower(), "pos": f[1]}); y.append(f[-1])
if x: X.append(x); Y.append(y)
tr = pycrfsuite.Trainer(verbose=False)
for a, b in zip(X, Y): tr.append(a, b)
tr.set_params({"max_iterations": 1})
with tempfile.TemporaryDirectory() as d: tr.train(d + "/m.crfsuite")
"""


def child(args, env=None):
    """Run one child process; returns (wall seconds, CPU seconds of the child, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(args, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:3])} … exited {out.returncode}: {out.stderr.strip()[-400:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out.stdout


def summarise(system, setting, samples, **extra):
    """A row from (wall, cpu, …) samples: best and median of each."""
    row = {"system": system, "setting": setting, "repeat": len(samples)}
    for i, name in enumerate(("wall_s", "cpu_s")):
        vals = [s[i] for s in samples]
        row[f"best_{name}"], row[f"median_{name}"] = min(vals), statistics.median(vals)
    row.update(extra)
    return row


def first_sentences(path, n, out):
    """The first ``n`` blank-line separated sentences of a (gzipped) CoNLL file, written to ``out``."""
    from ..datasets.reading import iter_lines
    kept, lines = 0, []
    for _, line in iter_lines(path):
        lines.append(line + "\n")
        if not line.strip():
            kept += 1
            if kept >= n:
                break
    with open(out, "w") as g:
        g.writelines(lines)
    return kept


def main(argv=None):
    from ..datasets.registry import resolve_path
    from . import record
    ap = argparse.ArgumentParser(prog="python -m mmprog.bench startup", description=__doc__.splitlines()[0])
    ap.add_argument("--file", default="conll2000/train.txt.gz", help="CoNLL file (default CoNLL-2000 train)")
    ap.add_argument("--sentences", type=int, default=100)
    ap.add_argument("--templates", default="rich")
    ap.add_argument("--repeat", type=int, default=3, help="fresh processes per row (best and median printed)")
    ap.add_argument("--record", metavar="PATH", help="also write the run's rows as a JSON record (mmprog.bench.record)")
    args = ap.parse_args(argv)
    py, env = sys.executable, dict(os.environ)
    load_start = os.getloadavg()[0]
    rows = []
    for system, setting, code in IMPORTS:
        rows.append(summarise(system, setting, [child([py, "-c", code], env) for _ in range(args.repeat)]))
    runs = [child([py, "-c", FIRST_KERNEL], env) for _ in range(args.repeat)]
    inside = [float(r[2].strip().splitlines()[-1]) for r in runs]
    rows.append(summarise("mmprog", "first kernel call (numba cache + target set-up)", runs,
                          best_call_s=min(inside), median_call_s=statistics.median(inside)))
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "first.txt")
        n = first_sentences(resolve_path(args.file), args.sentences, data)
        cmd = [py, "-m", "mmprog.cli", "train", "--data", f"conll:{data}", "--templates", args.templates, "--max-iter",
               "1", "--json"]
        runs = [child(cmd, env) for _ in range(args.repeat)]
        rounds = [json.loads(r[2])["timings"]["total"] for r in runs]
        before = [w - t for (w, _, _), t in zip(runs, rounds)]
        rows.append(summarise("mmprog", f"train {n} sentences, --templates {args.templates}, one round", runs,
                              best_round_s=min(rounds), median_round_s=statistics.median(rounds),
                              best_before_round_s=min(before), median_before_round_s=statistics.median(before)))
        try:
            import pycrfsuite  # noqa: F401  (the bench extra)
            rows.append(summarise("crfsuite", "import pycrfsuite",
                                  [child([py, "-c", "import pycrfsuite"], env) for _ in range(args.repeat)]))
            rows.append(summarise("crfsuite", f"read {n} sentences, word/POS attributes, one L-BFGS iteration",
                                  [child([py, "-c", CRFSUITE, data], env) for _ in range(args.repeat)]))
        except ImportError:
            print("python-crfsuite is not installed (pip install mmprog[bench]): no peer rows")
    print(f"# mmprog start-up, best / median of {args.repeat} fresh processes (load average "
          f"{os.getloadavg()[0]:.1f}; seconds)")
    for r in rows:
        extra = "".join(f"  {k[5:-2]} {r[k]:.3f}/{r['median' + k[4:]]:.3f}" for k in r if k.startswith("best_")
                        and k not in ("best_wall_s", "best_cpu_s"))
        print(f"{r['system']:9s} {r['setting']:62s} wall {r['best_wall_s']:.3f}/{r['median_wall_s']:.3f}  "
              f"cpu {r['best_cpu_s']:.3f}/{r['median_cpu_s']:.3f}{extra}")
    if args.record:
        record.write(args.record, "startup", rows, packages=("numpy", "scipy", "numba", "pyomo", "python-crfsuite"),
                     notes=[f"{args.sentences} sentences of {args.file}; children run one after the other; load "
                            f"average {load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end (wall "
                            f"clocks stretch with it, CPU times much less)",
                            "before_round = process wall - the fit's timings.total (start-up before round 1 plus "
                            "the summary after it)"])
    return 0
