"""``mmprog reproduce linf``: sparse-to-sparse prediction with the L∞ max-margin program of Szedmak, Ni, Saunders &
Rousu ("Max-margin structured output learning in L1 norm space"), which has no experiments of its own.

1. **Real sparse-to-sparse tasks** from the shared data (skipped, with the reason, when a corpus is absent), inputs
   φ(x) the L1-normalised bag of lower-cased words of a sentence:

   * ``conll2002-types``: the set of entity types (PER, LOC, ORG, MISC) of a CoNLL-2002 Spanish sentence
     (esp.train → esp.testb);
   * ``conll2000-heads``: the set of ``chunk type:head word`` patterns of a CoNLL-2000 sentence (the head taken as
     the chunk's last word, the usual approximation for English base chunks; patterns seen at least three times in
     training form the output vocabulary, unseen test patterns count as misses for every method).

   Methods: the LP (10) by constraint generation (``support="any"``), the minimum-support solution (17) (which
   predicts the same sets as the scale-free (18): they differ by the factor d), the kernelised program (19)–(22)
   with linear kernels on a subsample, the set perceptron (Algorithm 1), each decoded by (27) with g = √t and
   g = log(1 + t); against scikit-learn's one-vs-rest linear SVM on the L2-normalised bags (plain and with
   ``class_weight="balanced"``). Micro precision / recall / F1 of the predicted sets, mean predicted set size, LP
   sizes, rounds and times.
2. **The sparse generator** (:func:`mmprog.datasets.sparse_sets`): the same comparison at n_inputs = 1,000,
   n_outputs = 100, and the scaling of the LP at n_inputs = n_outputs = 10⁴ (joint dimension 10⁸) for growing m
   (up to 10⁵): rounds, rows and columns of the final master, the time split (separation products, Kronecker rows,
   Pyomo, HiGHS) and the growth exponent of time in m; beside it the closed forms (Proposition 2, (17)) and the set
   perceptron's updates against the bounds (30)/(31).

Tables go to stdout and, with a PNG of time against m and a JSON of every number, to ``--out`` (default
``out/linf``). ``--quick`` runs a small version in one to two minutes.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter

import numpy as np
import scipy.sparse as sp


def _parser():
    p = argparse.ArgumentParser(prog="mmprog reproduce linf", description=__doc__.split("\n\n")[0])
    p.add_argument("--which", default="real,synthetic,scaling",
                   help="comma list of parts: real, synthetic, scaling (default all)")
    p.add_argument("--tasks", default="conll2002-types,conll2000-heads",
                   help="real: comma list of tasks (default conll2002-types,conll2000-heads)")
    p.add_argument("--quick", action="store_true", help="small version (one to two minutes)")
    p.add_argument("--out", default="out/linf", help="folder for tables, plot and raw JSON")
    p.add_argument("--data", default=None, help="shared data root (default $MMPROG_DATA or ../shared/data)")
    p.add_argument("--b", type=float, default=1.0, help="the margin b of (10)")
    p.add_argument("--max-train", type=int, default=None, help="real: cap on training sentences (default all; "
                                                                 "--quick 1000)")
    p.add_argument("--max-test", type=int, default=None, help="real: cap on test sentences (default all; --quick 300)")
    p.add_argument("--kernel-train", type=int, default=None,
                   help="real/synthetic: training samples of the kernelised program (default 1000; --quick 300)")
    p.add_argument("--sizes", default=None, help="scaling: comma list of m (default 1000,10000,100000; --quick "
                                                  "500,2000)")
    p.add_argument("--lam", type=float, default=0.5, help="λ of the set perceptron")
    p.add_argument("--seed", type=int, default=0)
    return p


# ---------------------------------------------------------------------------------------------- data
def _bags(token_lists, vocab=None):
    """Counts of lower-cased words per sentence, CSR (n, |vocab|); the vocabulary is built when not given."""
    grow = vocab is None
    vocab = {} if grow else vocab
    rows, cols = [], []
    for i, toks in enumerate(token_lists):
        for w in toks:
            j = vocab.get(w)
            if j is None:
                if not grow:
                    continue
                j = vocab[w] = len(vocab)
            rows.append(i)
            cols.append(j)
    X = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(token_lists), max(len(vocab), 1)))
    X.sum_duplicates()
    return X, vocab


def _sets(pattern_lists, vocab):
    """0/1 indicator CSR (n, |vocab|) of the patterns in the vocabulary, and how many true patterns per row fell
    outside it."""
    rows, cols, unseen = [], [], np.zeros(len(pattern_lists), dtype=np.int64)
    for i, pats in enumerate(pattern_lists):
        for p in set(pats):
            j = vocab.get(p)
            if j is None:
                unseen[i] += 1
            else:
                rows.append(i)
                cols.append(j)
    Y = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(pattern_lists), len(vocab)))
    return Y, unseen


def entity_types(labels):
    """Entity types of a sentence from its IOB2 tags (B-PER, I-PER, O, ...)."""
    return sorted({t[2:] for t in labels if t != "O"})


def chunk_heads(words, labels):
    """``TYPE:head`` for every chunk of a sentence from its IOB chunk tags (head = the chunk's last word)."""
    out, typ, last = [], None, None
    for w, t in zip(words, labels):
        if t == "O" or t.startswith("B-") or (t.startswith("I-") and t[2:] != typ):
            if typ is not None:
                out.append(f"{typ}:{last}")
            typ = None if t == "O" else t[2:]
        last = w.lower()
    if typ is not None:
        out.append(f"{typ}:{last}")
    return out


def real_task(name, root, max_train, max_test):
    """(Phi_train, Psi_train, Phi_test, Psi_test, unseen_test, info) of a real task, or a skip reason (str)."""
    from ..datasets import load_conll
    if name == "conll2002-types":
        tr_p, te_p = os.path.join(root, "conll2002", "esp.train.gz"), os.path.join(root, "conll2002", "esp.testb.gz")
        cols = ("form", "pos", "ne")
    else:
        tr_p, te_p = os.path.join(root, "conll2000", "train.txt.gz"), os.path.join(root, "conll2000", "test.txt.gz")
        cols = ("form", "pos", "chunk")
    for p in (tr_p, te_p):
        if not os.path.exists(p):
            return f"{p} not found"
    tr, te = load_conll(tr_p, columns=cols), load_conll(te_p, columns=cols)

    def sentences(corpus, cap):
        n = len(corpus.sentences) if cap is None else min(cap, len(corpus.sentences))
        words = [[w.lower() for w in corpus.sentences[i]["form"]] for i in range(n)]
        if name == "conll2002-types":
            pats = [entity_types(corpus.labels[i]) for i in range(n)]
        else:
            pats = [chunk_heads(corpus.sentences[i]["form"], corpus.labels[i]) for i in range(n)]
        return words, pats

    w_tr, p_tr = sentences(tr, max_train)
    w_te, p_te = sentences(te, max_test)
    X_tr, vocab = _bags(w_tr)
    X_te, _ = _bags(w_te, vocab)
    counts = Counter(p for ps in p_tr for p in set(ps))
    min_count = 1 if name == "conll2002-types" else 3
    out_vocab = {p: j for j, p in enumerate(sorted(p for p, c in counts.items() if c >= min_count))}
    Y_tr, _ = _sets(p_tr, out_vocab)
    Y_te, unseen = _sets(p_te, out_vocab)
    info = {"train_sentences": len(w_tr), "test_sentences": len(w_te), "n_inputs": X_tr.shape[1],
            "n_outputs": Y_tr.shape[1], "joint_dim": int(X_tr.shape[1]) * int(Y_tr.shape[1]),
            "test_patterns": int(Y_te.sum() + unseen.sum()), "test_patterns_unseen": int(unseen.sum())}
    return X_tr, Y_tr, X_te, Y_te, unseen, info


# ---------------------------------------------------------------------------------------------- methods
def _l1(X):
    s = np.asarray(X.sum(axis=1)).ravel()
    return sp.csr_matrix(sp.diags(1.0 / np.where(s > 0, s, 1.0)) @ X)


def _prf(pred, truth, unseen=None):
    from ..programs.linf.prediction import set_prf
    r = set_prf(pred, truth)
    if unseen is not None and unseen.sum():
        n_true = r["n_true"] + int(unseen.sum())
        rec = r["tp"] / n_true if n_true else 0.0
        f = 2 * r["precision"] * rec / (r["precision"] + rec) if r["precision"] + rec else 0.0
        r.update(recall=rec, f1=f, n_true=n_true)
    r["set_size"] = r["n_pred"] / max(1, np.shape(pred)[0])
    return r


def _row(method, g, scores, fit_s, pred_s, lp=None):
    row = {"method": method, "g": g, "precision": scores["precision"], "recall": scores["recall"],
           "f1": scores["f1"], "set_size": scores["set_size"], "fit_s": fit_s, "predict_s": pred_s}
    if lp is not None:
        row.update(lp)
    return row


def _lp_info(res):
    return {"rounds": res.rounds, "rows": res.n_rows, "samples": res.n_samples, "vars": res.n_vars,
            "cons": res.n_cons, "private_cols": res.n_private, "objective": res.objective, "nnz_w": res.nnz,
            "min_margin": res.min_margin, "lp_s": res.timings["lp_total"],
            "model_s": res.timings["model"], "solver_s": res.timings["solver"],
            "separation_s": res.timings["separation"]}


def compare(X_tr, Y_tr, X_te, Y_te, unseen, b, lam, kernel_train, seed, log):
    """Every method on one train/test split; returns the table rows."""
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.preprocessing import normalize
    from sklearn.svm import LinearSVC

    from ..programs.linf import TensorSamples
    from ..linf import LInfMaxMargin
    from ..programs.linf.perceptron import set_perceptron
    from ..programs.linf.prediction import select_sets
    rows = []
    # the L∞ program needs zᵢ ≠ 0: samples without an output (or an input) carry no constraint
    keep = np.flatnonzero((np.diff(Y_tr.indptr) > 0) & (np.diff(X_tr.indptr) > 0))
    F_tr, P_tr, F_te = _l1(X_tr[keep]), Y_tr[keep], _l1(X_te)
    log(f"  L-inf on {len(keep)} of {X_tr.shape[0]} training samples (the others have psi(y) = 0)")
    for support in ("any", "min"):
        t0 = time.perf_counter()
        est = LInfMaxMargin(b=b, support=support).fit(F_tr, P_tr)
        fit_s = time.perf_counter() - t0
        lp = _lp_info(est.result_)
        for g in ("sqrt", "log"):
            t0 = time.perf_counter()
            pred = est.predict(F_te, g=g)
            rows.append(_row(f"L-inf {support}" + (" (17)=(18)" if support == "min" else " (10)"), g,
                             _prf(pred, Y_te, unseen), fit_s, time.perf_counter() - t0, lp))
            log(f"  {rows[-1]['method']:<22} g={g:<4} F1 {rows[-1]['f1']:.3f}  ({fit_s:.1f} s fit)")
    # kernelised (19)-(22), linear kernels, on a subsample
    rng = np.random.default_rng(seed)
    sub = np.sort(rng.choice(len(keep), size=min(kernel_train, len(keep)), replace=False))
    t0 = time.perf_counter()
    est = LInfMaxMargin(b=b, support="min", kernel="linear").fit(F_tr[sub], P_tr[sub])
    fit_s = time.perf_counter() - t0
    lp = _lp_info(est.result_)
    for g in ("sqrt", "log"):
        t0 = time.perf_counter()
        pred = est.predict(F_te, g=g)
        rows.append(_row(f"L-inf kernel lin (m={len(sub)})", g, _prf(pred, Y_te, unseen), fit_s,
                         time.perf_counter() - t0, lp))
        log(f"  {rows[-1]['method']:<22} g={g:<4} F1 {rows[-1]['f1']:.3f}  ({fit_s:.1f} s fit)")
    # Algorithm 1
    t0 = time.perf_counter()
    pr = set_perceptron(F_tr, P_tr, lam=lam)
    fit_s = time.perf_counter() - t0
    W = TensorSamples(F_tr, P_tr).operator(pr.W, np.ones(pr.W.size))
    for g in ("sqrt", "log"):
        t0 = time.perf_counter()
        pred = select_sets(F_te @ W.T, g)
        info = {"updates": pr.updates, "bound30_printed": pr.bound_updates["printed"],
                "bound30_euclidean": pr.bound_updates["euclidean"], "nnz_w": int(pr.W.size)}
        rows.append(_row(f"set perceptron (lam={lam})", g, _prf(pred, Y_te, unseen), fit_s,
                         time.perf_counter() - t0, info))
        log(f"  {rows[-1]['method']:<22} g={g:<4} F1 {rows[-1]['f1']:.3f}  ({fit_s:.1f} s fit)")
    # scikit-learn one-vs-rest linear SVMs on L2-normalised bags, every training sample
    Yd = (Y_tr > 0).astype(np.int64)
    used = np.flatnonzero(np.asarray(Yd.sum(axis=0)).ravel() > 0)
    Yd = Yd[:, used].toarray()
    for cw in (None, "balanced"):
        t0 = time.perf_counter()
        clf = OneVsRestClassifier(LinearSVC(class_weight=cw), n_jobs=1).fit(normalize(X_tr), Yd)
        fit_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        P = clf.predict(normalize(X_te))
        pred = sp.csr_matrix((np.ones(int(P.sum())), (np.nonzero(P)[0], used[np.nonzero(P)[1]])),
                             shape=Y_te.shape)
        rows.append(_row("one-vs-rest LinearSVC" + (" balanced" if cw else ""), "-", _prf(pred, Y_te, unseen),
                         fit_s, time.perf_counter() - t0))
        log(f"  {rows[-1]['method']:<22}        F1 {rows[-1]['f1']:.3f}  ({fit_s:.1f} s fit)")
    return rows


def scaling(sizes, b, lam, seed, log):
    """LP (10) and closed forms on sparse_sets with n_inputs = n_outputs = 10⁴ for growing m."""
    from ..datasets import sparse_sets
    from ..linf import solve_linf
    from ..programs.linf import TensorSamples, proposition2
    from ..programs.linf.perceptron import set_perceptron
    from ..programs.linf.prediction import select_sets, set_prf
    out = []
    for m in sizes:
        t0 = time.perf_counter()
        Phi_all, Psi_all = sparse_sets(m=m + 1000, n_inputs=10_000, n_outputs=10_000, input_density=0.001,
                                       output_size=3, seed=seed)
        Phi, Psi = Phi_all[:m], Psi_all[:m]
        gen_s = time.perf_counter() - t0
        S = TensorSamples(Phi, Psi)
        t0 = time.perf_counter()
        d, _ = proposition2(S, b)
        U = S.union_support()
        closed_s = time.perf_counter() - t0
        c0 = time.process_time()
        run = solve_linf(S, b)
        lp_cpu = time.process_time() - c0
        # (17) from the LP's optimum, then (27) on 1000 held-out samples
        t0 = time.perf_counter()
        pred = select_sets(Phi_all[m:] @ S.operator(U, np.full(U.size, run.objective)).T, "sqrt")
        pred_s = time.perf_counter() - t0
        scores = set_prf(pred, Psi_all[m:])
        t0 = time.perf_counter()
        pr = set_perceptron(Phi, Psi, lam=lam)
        perc_s = time.perf_counter() - t0
        rec = {"m": m, "joint_dim": S.dim, "nnz_z": int(S.support_sizes().sum()), "union": int(U.size),
               "rounds": run.rounds, "rows": len(run.working_set), "cols": run.n_vars - 1,
               "private_cols": run.n_private, "vars": run.n_vars, "cons": run.n_cons,
               "objective": run.objective, "prop2": d, "gap": abs(run.objective - d) / d,
               "max_violation": run.max_violation, "termination": run.termination,
               "time_s": run.timings["total"], "cpu_s": lp_cpu, "separation_s": run.timings["separation"],
               "rows_s": run.timings["rows"], "model_s": run.timings["model"], "solver_s": run.timings["solver"],
               "closed_form_s": closed_s, "generate_s": gen_s, "predict_1000_s": pred_s,
               "f1_17_sqrt": scores["f1"], "set_size_17": scores["n_pred"] / 1000,
               "perceptron_updates": pr.updates,
               "bound30_printed": pr.bound_updates["printed"], "bound30_euclidean": pr.bound_updates["euclidean"],
               "margin_printed": pr.margin["printed"], "bound31_printed": pr.bound_margin["printed"],
               "margin_euclidean": pr.margin["euclidean"], "bound31_euclidean": pr.bound_margin["euclidean"],
               "perceptron_s": perc_s}
        out.append(rec)
        log(f"  m={m:>7}: {rec['rounds']} rounds, {rec['rows']} rows, {rec['cols']} columns, {rec['time_s']:.1f} s "
            f"(model {rec['model_s']:.1f}, solver {rec['solver_s']:.1f}, separation {rec['separation_s']:.2f}); "
            f"t = {rec['objective']:.6g} vs Prop. 2 {d:.6g}")
    return out


# ---------------------------------------------------------------------------------------------- output
def _fmt_table(rows, cols):
    head = " | ".join(c for c, _ in cols)
    lines = [f"| {head} |", "|" + "|".join("---" for _ in cols) + "|"]
    for r in rows:
        cells = []
        for c, f in cols:
            v = r.get(c, "")
            cells.append(("" if v == "" or v is None else f.format(v)) if f else str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


COMPARE_COLS = [("method", None), ("g", None), ("precision", "{:.3f}"), ("recall", "{:.3f}"), ("f1", "{:.3f}"),
                ("set_size", "{:.2f}"), ("fit_s", "{:.1f}"), ("predict_s", "{:.2f}"), ("rounds", "{}"),
                ("rows", "{}"), ("vars", "{}"), ("cons", "{}"), ("private_cols", "{}"), ("nnz_w", "{}")]
SCALING_COLS = [("m", "{}"), ("joint_dim", "{:.0e}"), ("nnz_z", "{}"), ("union", "{}"), ("rounds", "{}"),
                ("rows", "{}"), ("cols", "{}"), ("private_cols", "{}"), ("cons", "{}"), ("time_s", "{:.1f}"),
                ("cpu_s", "{:.1f}"),
                ("separation_s", "{:.2f}"), ("rows_s", "{:.2f}"), ("model_s", "{:.1f}"), ("solver_s", "{:.1f}"),
                ("closed_form_s", "{:.2f}"), ("gap", "{:.1e}"), ("predict_1000_s", "{:.2f}"),
                ("f1_17_sqrt", "{:.3f}"), ("set_size_17", "{:.1f}")]
PERCEPTRON_COLS = [("m", "{}"), ("perceptron_updates", "{}"), ("bound30_euclidean", "{:.4g}"),
                   ("bound30_printed", "{:.4g}"), ("margin_euclidean", "{:.4g}"), ("bound31_euclidean", "{:.4g}"),
                   ("margin_printed", "{:.4g}"), ("bound31_printed", "{:.4g}"), ("perceptron_s", "{:.2f}")]


def growth_exponent(ms, ts):
    """Least-squares slope of log(time) against log(m)."""
    if len(ms) < 2:
        return float("nan")
    return float(np.polyfit(np.log(ms), np.log(ts), 1)[0])


def plot_scaling(out, recs):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ms = [r["m"] for r in recs]
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for key, label in (("time_s", "total"), ("model_s", "master bookkeeping"), ("solver_s", "HiGHS"),
                       ("separation_s", "separation (sparse products)"), ("closed_form_s", "closed forms (17)")):
        ax.loglog(ms, [max(r[key], 1e-4) for r in recs], marker="o", label=label)
    ax.set_xlabel("samples m (joint dimension 1e8)")
    ax.set_ylabel("seconds")
    ax.set_title("LP (10) by constraint generation")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(out, "linf_scaling.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv=None):
    args = _parser().parse_args(argv)
    from ..datasets.registry import default_data_root
    which = {w.strip() for w in args.which.split(",") if w.strip()}
    bad = which - {"real", "synthetic", "scaling"}
    if bad:
        print(f"--which takes real, synthetic, scaling; got {', '.join(sorted(bad))}")
        return 2
    root = args.data or str(default_data_root())
    quick = args.quick
    max_train = args.max_train if args.max_train is not None else (1000 if quick else None)
    max_test = args.max_test if args.max_test is not None else (300 if quick else None)
    kernel_train = args.kernel_train if args.kernel_train is not None else (300 if quick else 1000)
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else ([500, 2000] if quick else
                                                                         [1000, 10_000, 100_000])
    os.makedirs(args.out, exist_ok=True)
    results = {"args": vars(args), "real": {}, "synthetic": None, "scaling": None,
               "load_average_start": os.getloadavg()[0], "cpus": os.cpu_count()}
    text = []

    def log(msg):
        print(msg, flush=True)

    def emit(block):
        print(block, flush=True)
        text.append(block)

    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    unknown = set(tasks) - {"conll2002-types", "conll2000-heads"}
    if unknown:
        print(f"--tasks takes conll2002-types, conll2000-heads; got {', '.join(sorted(unknown))}")
        return 2
    emit(f"# mmprog reproduce linf{' --quick' if quick else ''}: {os.cpu_count()} CPUs, load average "
         f"{os.getloadavg()[0]:.1f} at the start (wall times stretch with the load)")
    if "real" in which:
        for name in tasks:
            log(f"[{name}] loading from {root}")
            task = real_task(name, root, max_train, max_test)
            if isinstance(task, str):
                emit(f"\n## {name}: skipped: {task}")
                results["real"][name] = {"skipped": task}
                continue
            X_tr, Y_tr, X_te, Y_te, unseen, info = task
            rows = compare(X_tr, Y_tr, X_te, Y_te, unseen, args.b, args.lam, kernel_train, args.seed, log)
            results["real"][name] = {"info": info, "rows": rows}
            emit(f"\n## {name}: {info['train_sentences']} training / {info['test_sentences']} test sentences, "
                 f"{info['n_inputs']} input words x {info['n_outputs']} output patterns (joint dimension "
                 f"{info['joint_dim']:,}); {info['test_patterns_unseen']} of {info['test_patterns']} true test "
                 f"patterns are outside the output vocabulary\n")
            emit(_fmt_table(rows, COMPARE_COLS))
    if "synthetic" in which:
        from ..datasets import sparse_sets
        m = 1000 if quick else 5000
        log(f"[synthetic] sparse_sets m={m} + 1000 test, n_inputs=1000, n_outputs=100")
        Phi, Psi = sparse_sets(m=m + 1000, n_inputs=1000, n_outputs=100, input_density=0.01, output_size=3,
                               seed=args.seed)
        rows = compare(Phi[:m], Psi[:m], Phi[m:], Psi[m:], None, args.b, args.lam, kernel_train, args.seed, log)
        results["synthetic"] = {"m": m, "rows": rows}
        emit(f"\n## sparse_sets: {m} training / 1000 test samples, 1000 inputs x 100 outputs, 10 inputs and 3 "
             f"outputs per sample\n")
        emit(_fmt_table(rows, COMPARE_COLS))
    if "scaling" in which:
        log(f"[scaling] sparse_sets with n_inputs = n_outputs = 10^4 (joint dimension 10^8), m in {sizes}")
        recs = scaling(sizes, args.b, args.lam, args.seed, log)
        expo = growth_exponent([r["m"] for r in recs], [r["time_s"] for r in recs])
        expo_cpu = growth_exponent([r["m"] for r in recs], [r["cpu_s"] for r in recs])
        results["scaling"] = {"records": recs, "time_exponent": expo, "cpu_exponent": expo_cpu}
        emit("\n## LP (10) scaling on sparse_sets (10 inputs, 3 outputs per sample, joint dimension 1e8)\n")
        emit(_fmt_table(recs, SCALING_COLS))
        emit(f"\nwall time grows like m^{expo:.2f}, CPU time like m^{expo_cpu:.2f} (least-squares slopes of log time "
             f"on log m)")
        emit("\n## set perceptron (Algorithm 1) on the same data: updates against (30), margin against (31)\n")
        emit(_fmt_table(recs, PERCEPTRON_COLS))
        results["scaling"]["plot"] = plot_scaling(args.out, recs)
    results["load_average_end"] = os.getloadavg()[0]
    emit(f"\nload average {results['load_average_end']:.1f} at the end")
    with open(os.path.join(args.out, "linf_tables.md"), "w") as f:
        f.write("\n".join(text) + "\n")
    with open(os.path.join(args.out, "linf_results.json"), "w") as f:
        json.dump(results, f, indent=1, default=float)
    log(f"\nwrote {args.out}/linf_tables.md, linf_results.json" +
        (", linf_scaling.png" if results.get("scaling") else ""))
    return 0
