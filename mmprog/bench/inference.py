"""``python -m mmprog.bench inference [--repeat N] [--seed S] [--c-reference] [--clock cpu|wall] [--record PATH]``: kernel speed.

Prints two tables measured in the same run on random scores:

* tokens/s of batched :func:`mmprog.inference.viterbi` (compiled with numba; float64, and float32 opt-in) at
  (B, T, K) = (2000, 20, 26), (200, 40, 9), (5000, 30, 3), beside a straightforward per-sequence numpy loop, with the
  speed-up and the floor the issue sets (1.8×, 6×, 15×); ``--c-reference`` adds a plain C Viterbi (compiled at run
  time with ``gcc -O3 -march=native``, loaded with ctypes) to show how far the kernel is from plain C;
* sentences/s of :func:`chu_liu_edmonds` and :func:`eisner`, called sentence by sentence and as one
  ``chu_liu_edmonds_batch`` / ``eisner_batch``, at n = 20 and 40 beside per-sentence pure-Python reference
  implementations written here.

Every timing is the best of ``--repeat`` runs (default 5; the slow references run once), in process CPU time unless
``--clock wall``. Every fast result is checked against its reference (scores must agree) before it is reported.
Exit status 1 when a floor is missed.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

from mmprog.inference import chu_liu_edmonds, chu_liu_edmonds_batch, eisner, eisner_batch, tree_score, viterbi

VITERBI_SHAPES = [((2000, 20, 26), 1.8), ((200, 40, 9), 6.0), ((5000, 30, 3), 15.0)]
PARSER_SIZES = [(20, 200), (40, 60)]  # (tokens per sentence, number of sentences)


# ----------------------------------------------------------------------------------------------------------------
# references
# ----------------------------------------------------------------------------------------------------------------

def viterbi_per_sequence(node_scores, edge_scores, lengths):
    """The straightforward baseline: one sequence at a time, one numpy step per position, back-pointers, Python
    backtracking. Same contract as :func:`mmprog.inference.viterbi` with shared edge scores."""
    B, T, K = node_scores.shape
    labels = np.full((B, T), -1, dtype=np.int64)
    scores = np.empty(B)
    for b in range(B):
        L = int(lengths[b])
        x = node_scores[b]
        delta = x[0]
        back = np.empty((L, K), dtype=np.intp)
        for t in range(1, L):
            cand = delta[:, None] + edge_scores
            back[t] = cand.argmax(axis=0)
            delta = cand.max(axis=0) + x[t]
        y = int(delta.argmax())
        scores[b] = delta[y]
        labels[b, L - 1] = y
        for t in range(L - 1, 0, -1):
            y = int(back[t, y])
            labels[b, t - 1] = y
    return labels, scores


def _prepare_python(scores):
    """Nested lists with arcs into the root and self-loops forbidden."""
    S = np.array(scores, dtype=float)
    S[:, 0] = -np.inf
    np.fill_diagonal(S, -np.inf)
    return S.tolist()


def _find_cycle_python(heads):
    visited = [0] * len(heads)
    for start in range(1, len(heads)):
        if visited[start]:
            continue
        path, v = [], start
        while v != 0 and not visited[v]:
            visited[v] = start
            path.append(v)
            v = heads[v]
        if v != 0 and visited[v] == start:
            return path[path.index(v):]
    return None


def _cle_python(S):
    N = len(S)
    neg = float("-inf")
    heads = [0] * N
    for m in range(1, N):
        best, arg = neg, 0
        for h in range(N):
            if S[h][m] > best:
                best, arg = S[h][m], h
        heads[m] = arg
    cycle = _find_cycle_python(heads)
    if cycle is None:
        return heads
    in_cycle = set(cycle)
    rest = [v for v in range(N) if v not in in_cycle]
    c = len(rest)
    S2 = [[S[h][m] for m in rest] + [neg] for h in rest] + [[neg] * (c + 1)]
    src, dst = [0] * c, [0] * c
    for j, m in enumerate(rest):
        best, arg = neg, cycle[0]
        for v in cycle:
            if S[v][m] > best:
                best, arg = S[v][m], v
        S2[c][j], src[j] = best, arg
    for i, h in enumerate(rest):
        best, arg = neg, cycle[0]
        for v in cycle:
            gain = S[h][v] - S[heads[v]][v]
            if gain > best:
                best, arg = gain, v
        S2[i][c], dst[i] = best, arg
    inner = _cle_python(S2)
    out = heads[:]
    for j, m in enumerate(rest):
        out[m] = src[j] if inner[j] == c else rest[inner[j]]
    out[dst[inner[c]]] = rest[inner[c]]
    return out


def chu_liu_edmonds_python(scores):
    """Pure-Python Chu-Liu-Edmonds (recursive contraction on nested lists): the per-sentence reference."""
    heads = _cle_python(_prepare_python(scores))
    heads[0] = -1
    return heads


def eisner_python(scores):
    """Pure-Python Eisner (triple loop over spans and split points): the per-sentence reference."""
    S = _prepare_python(scores)
    N = len(S)
    neg = float("-inf")
    Ir = [[neg] * N for _ in range(N)]
    Il = [[neg] * N for _ in range(N)]
    Cr = [[0.0 if s == t else neg for t in range(N)] for s in range(N)]
    Cl = [[0.0 if s == t else neg for t in range(N)] for s in range(N)]
    bI = [[0] * N for _ in range(N)]
    bCr = [[0] * N for _ in range(N)]
    bCl = [[0] * N for _ in range(N)]
    for w in range(1, N):
        for s in range(N - w):
            t = s + w
            best, arg = neg, s
            for r in range(s, t):
                v = Cr[s][r] + Cl[r + 1][t]
                if v > best:
                    best, arg = v, r
            Ir[s][t], Il[s][t], bI[s][t] = best + S[s][t], best + S[t][s], arg
            best, arg = neg, t
            for r in range(s + 1, t + 1):
                v = Ir[s][r] + Cr[r][t]
                if v > best:
                    best, arg = v, r
            Cr[s][t], bCr[s][t] = best, arg
            best, arg = neg, s
            for r in range(s, t):
                v = Cl[s][r] + Il[r][t]
                if v > best:
                    best, arg = v, r
            Cl[s][t], bCl[s][t] = best, arg
    heads = [-1] * N
    stack = [(0, N - 1, "Cr")]
    while stack:
        s, t, kind = stack.pop()
        if s == t:
            continue
        if kind == "Cr":
            r = bCr[s][t]
            stack += [(s, r, "Ir"), (r, t, "Cr")]
        elif kind == "Cl":
            r = bCl[s][t]
            stack += [(s, r, "Cl"), (r, t, "Il")]
        else:
            if kind == "Ir":
                heads[t] = s
            else:
                heads[s] = t
            r = bI[s][t]
            stack += [(s, r, "Cr"), (r + 1, t, "Cl")]
    return heads


_C_SOURCE = r"""
#include <math.h>
#include <stdint.h>
/* Plain per-sequence Viterbi with back-pointers: what a C programmer writes first. */
void viterbi_c(int64_t B, int64_t T, int64_t K, const double *node, const double *E, const int64_t *lengths,
               int64_t *labels, double *scores, double *delta, int32_t *bp) {
    for (int64_t b = 0; b < B; b++) {
        const double *x = node + b * T * K;
        int64_t L = lengths[b];
        for (int64_t k = 0; k < K; k++) delta[k] = x[k];
        for (int64_t t = 1; t < L; t++) {
            const double *prev = delta + (t - 1) * K;
            for (int64_t j = 0; j < K; j++) {
                double best = -INFINITY; int32_t arg = 0;
                for (int64_t i = 0; i < K; i++) {
                    double v = prev[i] + E[i * K + j];
                    if (v > best) { best = v; arg = (int32_t)i; }
                }
                delta[t * K + j] = best + x[t * K + j];
                bp[t * K + j] = arg;
            }
        }
        double best = -INFINITY; int64_t arg = 0;
        for (int64_t k = 0; k < K; k++) if (delta[(L - 1) * K + k] > best) { best = delta[(L - 1) * K + k]; arg = k; }
        scores[b] = best;
        int64_t *lab = labels + b * T;
        for (int64_t t = L; t < T; t++) lab[t] = -1;
        lab[L - 1] = arg;
        for (int64_t t = L - 1; t > 0; t--) { arg = bp[t * K + arg]; lab[t - 1] = arg; }
    }
}
"""


def _compile_c_reference():
    """Compile the plain C Viterbi with gcc into a temporary shared library; return a Python callable or None."""
    tmp = tempfile.mkdtemp(prefix="mmprog-bench-")
    src, lib = os.path.join(tmp, "viterbi.c"), os.path.join(tmp, "viterbi.so")
    with open(src, "w") as f:
        f.write(_C_SOURCE)
    try:
        subprocess.run(["gcc", "-O3", "-march=native", "-shared", "-fPIC", "-o", lib, src, "-lm"], check=True,
                       capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError) as err:
        print(f"--c-reference: gcc failed ({err}); skipping the C column", file=sys.stderr)
        shutil.rmtree(tmp, ignore_errors=True)
        return None
    so = ctypes.CDLL(lib)
    shutil.rmtree(tmp, ignore_errors=True)  # the loaded library stays mapped
    f64 = np.ctypeslib.ndpointer(np.float64, flags="C_CONTIGUOUS")
    i64 = np.ctypeslib.ndpointer(np.int64, flags="C_CONTIGUOUS")
    i32 = np.ctypeslib.ndpointer(np.int32, flags="C_CONTIGUOUS")
    so.viterbi_c.argtypes = [ctypes.c_int64] * 3 + [f64, f64, i64, i64, f64, f64, i32]
    so.viterbi_c.restype = None

    def run(node, edge, lengths):
        B, T, K = node.shape
        labels = np.empty((B, T), np.int64)
        scores = np.empty(B)
        so.viterbi_c(B, T, K, np.ascontiguousarray(node, np.float64), np.ascontiguousarray(edge, np.float64),
                     np.ascontiguousarray(lengths, np.int64), labels, scores, np.empty(T * K),
                     np.empty(T * K, np.int32))
        return labels, scores
    return run


# ----------------------------------------------------------------------------------------------------------------
# measurement
# ----------------------------------------------------------------------------------------------------------------

_CLOCK = {"cpu": time.process_time, "wall": time.perf_counter}
_clock = time.process_time


def _best_time(fn, repeat):
    """Best time of ``repeat`` calls (the minimum is the least disturbed run).

    The default clock is this process's CPU time: every kernel here is single-threaded, so on an idle machine it
    equals wall time, and on a shared one it does not count the time other processes hold the CPU.
    """
    best, out = float("inf"), None
    for _ in range(max(1, repeat)):
        t0 = _clock()
        out = fn()
        best = min(best, _clock() - t0)
    return best, out


def _fmt_rate(x):
    return f"{x / 1e6:7.2f} M" if x >= 1e6 else f"{x / 1e3:7.1f} k"


#: rows of the run for ``--record`` (:mod:`mmprog.bench.record`): one per (system, setting) measured
ROWS = []


def _row(system, setting, items, seconds, unit, **extra):
    ROWS.append({"system": system, "setting": setting, f"{unit}_per_s": items / seconds, "seconds": seconds,
                 "clock": "cpu" if _clock is time.process_time else "wall", **extra})


def bench_viterbi(rng, repeat, c_run):
    header = (f"{'B, T, K':>14} | {'batched f64':>11} | {'batched f32':>11} | {'per-seq loop':>12} | {'speed-up':>8} | "
              f"{'floor':>5} | ok")
    if c_run is not None:
        header += f" | {'plain C':>9} | {'C / f64':>7}"
    print("Viterbi, tokens/s (best of %d; per-sequence loop and C once each)" % repeat)
    print(header)
    print("-" * len(header))
    all_ok = True
    for (B, T, K), floor in VITERBI_SHAPES:
        node = rng.normal(size=(B, T, K))
        edge = rng.normal(size=(K, K))
        lengths = np.full(B, T)
        tokens = B * T
        t64, (lab64, sc64) = _best_time(lambda: viterbi(node, edge, lengths), repeat)
        node32, edge32 = node.astype(np.float32), edge.astype(np.float32)
        t32, (lab32, sc32) = _best_time(lambda: viterbi(node32, edge32, lengths), repeat)
        tloop, (labref, scref) = _best_time(lambda: viterbi_per_sequence(node, edge, lengths), 1)
        if not np.allclose(sc64, scref, rtol=0, atol=1e-9) or not np.allclose(sc32, scref, rtol=0, atol=1e-3):
            raise AssertionError(f"viterbi scores disagree with the per-sequence loop at {(B, T, K)}")
        speedup = tloop / t64
        ok = speedup >= floor
        setting = f"viterbi B={B} T={T} K={K}"
        _row("mmprog batched f64", setting, tokens, t64, "tokens", floor=floor, floor_met=bool(ok))
        _row("mmprog batched f32", setting, tokens, t32, "tokens")
        _row("per-sequence loop", setting, tokens, tloop, "tokens")
        all_ok &= ok
        row = (f"{str((B, T, K)):>14} | {_fmt_rate(tokens / t64):>11} | {_fmt_rate(tokens / t32):>11} | "
               f"{_fmt_rate(tokens / tloop):>12} | {speedup:7.1f}x | {floor:4.1f}x | {'yes' if ok else 'NO'}")
        if c_run is not None:
            tc, (labc, scc) = _best_time(lambda: c_run(node, edge, lengths), repeat)
            if not np.allclose(scc, scref, rtol=0, atol=1e-9):
                raise AssertionError(f"C reference disagrees with the per-sequence loop at {(B, T, K)}")
            row += f" | {_fmt_rate(tokens / tc):>9} | {t64 / tc:6.2f}x"
            _row("plain C (gcc -O3)", setting, tokens, tc, "tokens")
        print(row)
    return all_ok


def bench_parsers(rng, repeat):
    print()
    print("Dependency parsers, sentences/s (numpy best of %d; pure-Python references once)" % repeat)
    header = (f"{'n':>3} | {'sents':>5} | {'CLE 1-by-1':>10} | {'CLE batch':>9} | {'CLE python':>10} | "
              f"{'×1-by-1':>7} | {'×batch':>6} | {'Eisner 1-by-1':>13} | {'Eisner batch':>12} | "
              f"{'Eisner python':>13} | {'×1-by-1':>7} | {'×batch':>6}")
    print(header)
    print("-" * len(header))
    for n, count in PARSER_SIZES:
        mats = [rng.normal(size=(n + 1, n + 1)) for _ in range(count)]
        t_cle, cle = _best_time(lambda: [chu_liu_edmonds(S) for S in mats], repeat)
        t_cleb, cleb = _best_time(lambda: chu_liu_edmonds_batch(mats), repeat)
        t_cle_py, cle_py = _best_time(lambda: [chu_liu_edmonds_python(S) for S in mats], 1)
        t_eis, eis = _best_time(lambda: [eisner(S) for S in mats], repeat)
        t_eisb, eisb = _best_time(lambda: eisner_batch(mats), repeat)
        t_eis_py, eis_py = _best_time(lambda: [eisner_python(S) for S in mats], 1)
        for S, a, ab, b, c, d, e in zip(mats, cle, cleb, cle_py, eis, eisb, eis_py):
            ref = tree_score(S, b)
            if max(abs(tree_score(S, a) - ref), abs(tree_score(S, ab) - ref)) > 1e-9:
                raise AssertionError(f"chu_liu_edmonds disagrees with the Python reference at n = {n}")
            ref = tree_score(S, e)
            if max(abs(tree_score(S, c) - ref), abs(tree_score(S, d) - ref)) > 1e-9:
                raise AssertionError(f"eisner disagrees with the Python reference at n = {n}")
        for system, t in (("mmprog chu_liu_edmonds 1-by-1", t_cle), ("mmprog chu_liu_edmonds_batch", t_cleb),
                          ("pure-Python Chu-Liu-Edmonds", t_cle_py), ("mmprog eisner 1-by-1", t_eis),
                          ("mmprog eisner_batch", t_eisb), ("pure-Python Eisner", t_eis_py)):
            _row(system, f"parse n={n} sentences={count}", count, t, "sentences")
        print(f"{n:>3} | {count:>5} | {count / t_cle:10.0f} | {count / t_cleb:9.0f} | {count / t_cle_py:10.0f} | "
              f"{t_cle_py / t_cle:6.1f}x | {t_cle_py / t_cleb:5.1f}x | {count / t_eis:13.0f} | "
              f"{count / t_eisb:12.0f} | {count / t_eis_py:13.0f} | {t_eis_py / t_eis:6.1f}x | "
              f"{t_eis_py / t_eisb:5.1f}x")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m mmprog.bench inference", description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per fast kernel; the best is reported")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random scores")
    parser.add_argument("--c-reference", action="store_true",
                        help="also time a plain C Viterbi compiled now with gcc -O3 -march=native")
    parser.add_argument("--skip-parsers", action="store_true", help="only the Viterbi table")
    parser.add_argument("--clock", choices=sorted(_CLOCK), default="cpu",
                        help="cpu: process CPU time (default; robust on a shared machine), wall: elapsed time")
    parser.add_argument("--record", metavar="PATH", help="also write the run's rows as a JSON record (mmprog.bench.record)")
    args = parser.parse_args(argv)
    ROWS.clear()
    global _clock
    _clock = _CLOCK[args.clock]
    rng = np.random.default_rng(args.seed)
    print(f"numpy {np.__version__}, Python {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs, clock: {args.clock} time, load average {os.getloadavg()[0]:.1f}")
    c_run = _compile_c_reference() if args.c_reference else None
    ok = bench_viterbi(rng, args.repeat, c_run)
    if not args.skip_parsers:
        bench_parsers(rng, args.repeat)
    print()
    print("floors met" if ok else "FLOORS MISSED")
    if args.record:
        from . import record
        record.write(args.record, "inference", ROWS, argv=argv,
                     notes=[f"random scores, seed {args.seed}; best of {args.repeat} runs for the batched kernels, one "
                            f"run for the per-sequence loops and pure-Python references; clock: {args.clock} time",
                            "every kernel's answer is checked against the reference's in the same run"])
        print(f"record written to {args.record}")
    return 0 if ok else 1
