"""``mmprog reproduce templates``: the experiments of Mao & Tsang, "Efficient multi-template learning for structured
prediction" (section 3), with mmprog's ``mtl`` and ``pblock`` programs and the plain structural SVM (``m3n`` in its
1-slack form, the p = 2 member of the family) on the same templates.

Tasks (``--task``):

* ``ner`` — CoNLL-2002 Spanish named-entity recognition with the 134-template set (uni- and bi-grams of words and
  POS in [−3, 3], POS tri-grams, transitions; :data:`mmprog.features.templates.PRESETS` ``"ner"``): entity
  precision / recall / F1 (conlleval) on testa and testb beside Table 5 (and Table 8(b) for p-block), the number of
  templates with μ < 1e-5 (the paper removed 75 of 134), training time and iterations.
* ``cws`` — Chinese word segmentation with TP1 and TP2 (Table 2) and B/I/E tags. The SIGHAN 2005 training sets are
  not in the shared data (only the PKU and CityU test gold files are), so this is k-fold cross-validation on the
  gold test files and the numbers are **not comparable** with Table 4; they are printed beside it for orientation
  only. Word P/R/F1 and R_iv (in-vocabulary recall against the training folds' words).
* ``dep`` — dependency parsing (first-order MSTParser templates, :mod:`mmprog.features.arcs`) on UD
  Swedish-Talbanken v1.0 pre-release (train/test; Chu-Liu-Edmonds, non-projective) and on NLTK's 10 % PTB sample
  (wsj_0001-0159 train, wsj_0160-0199 test; Eisner, projective): UAS with and without punctuation, complete-sentence
  accuracy, templates removed; beside Table 7 (CoNLL-X Swedish Talbanken: same kind of data, not the same corpus).

Every fit is the 1-slack cutting-plane loop with the program's master; ``--limit`` caps training sentences (and
``--test-limit`` the evaluation sentences) for quick runs, ``--max-iter``/``--time-limit`` cap each fit — the
tables say what was run. Output: the tables on stdout (``--json`` for a JSON document), and under ``--out``
(default ``out/templates``) ``results.json`` and PNG plots of the learned template weights (like the paper's
Figures 2, 5, 6 and 7).

Scales: mmprog's C multiplies Σᵢ ξᵢ (n-slack scale); the paper's C multiplies the 1-slack ξ, so the paper's
C = n × mmprog's C and its grid n × {10⁻², …, 10²} is mmprog's C ∈ {10⁻², …, 10²}. ``--eps`` is the paper's
stopping tolerance on R_emp − R_s (average loss per sentence; the paper uses SVM^hmm's -e 0.5).
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

__all__ = ["main", "PAPER", "run_ner", "run_cws", "run_dep", "fit_method", "parse_methods"]

log = logging.getLogger("mmprog.reproduce.templates")

#: The paper's numbers the tables are printed beside.
PAPER = {
    # Table 5 (a), Spanish: (precision, recall, F1) on the validation set (testa) and the test set (testb);
    # Table 8 (b), large template set, ESP test set, for the p-block norms (p = 1 is MTL)
    "ner": {
        "mtl": {"testa": (77.47, 63.21, 69.62), "testb": (79.26, 68.39, 73.42)},
        "svm": {"testa": (72.23, 57.01, 63.72), "testb": (74.83, 61.23, 67.35)},
        "crf-l2": {"testa": (74.38, 55.97, 63.88), "testb": (78.16, 60.72, 68.34)},
        "pblock-4/3": {"testb": (78.29, 64.65, 70.82)},
        "pblock-2": {"testb": (75.52, 61.11, 67.56)},
        "pblock-4": {"testb": (72.74, 53.93, 61.58)},
        "removed": (75, 134),
    },
    # Table 4 (official SIGHAN split; recall, precision, F1, R_iv) for TP1 / TP2 — not comparable with the
    # cross-validation here (other training data)
    "cws": {
        "pku": {"mtl": {"tp1": (93.8, 93.3, 93.6, 96.1), "tp2": (94.0, 93.6, 93.8, 96.2)},
                "svm": {"tp1": (92.6, 93.7, 93.2, 94.9), "tp2": (93.0, 93.4, 93.2, 95.0)}},
        "cityu": {"mtl": {"tp1": (95.2, 94.2, 94.7, 97.6), "tp2": (95.2, 94.3, 94.8, 97.6)},
                  "svm": {"tp1": (94.3, 94.1, 94.2, 96.4), "tp2": (94.1, 93.5, 93.8, 96.4)}},
    },
    # Table 7, Swedish (CoNLL-X Talbanken): ACC (complete), UASP (with punctuation), UAS (without)
    "dep": {"mstparser": (37.28, 83.65, 85.76), "mtl": (37.53, 84.14, 86.40), "removed": (508, 612)},
}

METHODS = ("mtl", "pblock-4/3", "pblock-2", "pblock-4", "svm")


def parse_methods(text, pblock_method="pg"):
    """``"mtl,pblock-4/3,svm"`` → list of (name, program, params). ``pblock-P`` takes any P > 1 (``4/3`` allowed);
    its master is solved by ``pblock_method`` ("pg": the paper's projected gradient; "nlp": Ipopt on the Pyomo
    NLP)."""
    from ..exceptions import ParameterError
    out = []
    for name in [t.strip() for t in text.split(",") if t.strip()]:
        if name == "mtl":
            out.append((name, "mtl", {}))
        elif name == "svm":
            # the plain structural SVM: P0 in its 1-slack form, Gram dual master (the p = 2 member of the family)
            out.append((name, "m3n", {"master": "dual"}))
        elif name.startswith("pblock-"):
            spec = name[len("pblock-"):]
            try:
                num, _, den = spec.partition("/")
                p = float(num) / (float(den) if den else 1.0)
            except ValueError:
                raise ParameterError(f"method {name!r}: p must be a number or a fraction like 4/3") from None
            out.append((name if pblock_method == "pg" else f"{name}:{pblock_method}", "pblock",
                        {"p": p, "method": pblock_method}))
        else:
            raise ParameterError(f"method {name!r} is not one of mtl, svm, pblock-P (e.g. pblock-4/3)")
    if not out:
        raise ParameterError("--methods is empty; give e.g. mtl,svm")
    return out


def fit_method(program, params, train, C, eps, max_iter, time_limit, drop_after, feature_map=None):
    """One 1-slack cutting-plane fit; returns (result, seconds)."""
    import mmprog
    t0 = time.perf_counter()
    res = mmprog.fit(train, program=program, C=C, slack="one", eps=eps, max_iter=max_iter, time_limit=time_limit,
                     drop_after=drop_after, feature_map=feature_map, **params)
    return res, time.perf_counter() - t0


def _template_record(res):
    mu = getattr(res, "template_weights", None)
    if mu is None:
        return {}
    mu = np.asarray(mu, dtype=np.float64)
    return {"template_names": list(res.template_names), "template_weights": mu.tolist(),
            "templates_removed": int(np.sum(mu / max(mu.sum(), 1e-300) < 1e-5)), "n_templates": int(len(mu))}


def _run_record(name, program, params, res, seconds):
    rec = {"method": name, "program": program, "params": {k: v for k, v in params.items()}, "C": res.params["C"],
           "seconds": round(seconds, 2), "iterations": res.n_iter, "termination": res.termination,
           "objective": res.primal_objective, "upper_bound": res.upper_bound, "gap": res.gap,
           "timings": {k: round(v, 2) for k, v in res.timings.items()}}
    rec.update(_template_record(res))
    return rec


# ----------------------------------------------------------------------------------------------------------------
# NER
# ----------------------------------------------------------------------------------------------------------------

def run_ner(root, methods, C=1.0, eps=0.5, max_iter=200, time_limit=None, limit=None, test_limit=None,
            drop_after=None, keep_predictions=False, on_record=None):
    """CoNLL-2002 Spanish NER with the 134 templates (see the module docstring). ``on_record(partial)`` is called
    with the results so far after each method (the CLI writes them to disk, so a long run keeps what finished).

    Returns
    -------
    dict
        ``setup`` (sizes, what was run) and ``runs`` (one record per method: testa/testb P/R/F1 in %, seconds,
        iterations, template weights; with ``keep_predictions`` also the predicted and gold tag sequences).
    """
    from ..datasets import load_conll
    from ..features.templates import TemplateExtractor
    from ..metrics import chunk_prf
    folder = Path(root) / "conll2002"
    cols = ("form", "pos", "ne")
    train = load_conll(folder / "esp.train.gz", columns=cols)
    tests = {"testa": load_conll(folder / "esp.testa.gz", columns=cols),
             "testb": load_conll(folder / "esp.testb.gz", columns=cols)}
    if limit:
        train = train.subset(np.arange(min(limit, len(train))))
    if test_limit:
        tests = {k: v.subset(np.arange(min(test_limit, len(v)))) for k, v in tests.items()}
    ex = TemplateExtractor("ner")
    t0 = time.perf_counter()
    dtrain = ex.to_dataset(train)
    # a tag unseen in the (limited) training part cannot be predicted; it is hidden, and scored as missed below
    dtests = {k: ex.to_dataset(v, unknown="hide") for k, v in tests.items()}
    names = list(dtrain.label_names)
    setup = {"train_sentences": len(train), "train_tokens": int(dtrain.n_tokens),
             "test_sentences": {k: len(v) for k, v in tests.items()}, "n_input_features": int(ex.n_features_),
             "n_templates": len(ex.group_names_) + 1, "feature_seconds": round(time.perf_counter() - t0, 2),
             "C": C, "eps": eps, "max_iter": max_iter, "time_limit": time_limit}
    runs = []
    out = {"setup": setup, "runs": runs}
    for name, program, params in methods:
        log.info("ner: training %s on %d sentences", name, len(train))
        res, secs = fit_method(program, params, dtrain, C, eps, max_iter, time_limit, drop_after)
        rec = _run_record(name, program, params, res, secs)
        rec["dim"] = int(res.fmap.dim)
        for split, ds in dtests.items():
            pred = res.predict(ds)
            gold_tags = list(tests[split].labels)
            pred_tags = [[names[k] for k in y] for y in pred]
            sc = chunk_prf(gold_tags, pred_tags)
            rec[split] = {"precision": 100 * sc.precision, "recall": 100 * sc.recall, "f1": 100 * sc.f1}
            if keep_predictions:
                rec.setdefault("predictions", {})[split] = {"gold": gold_tags, "pred": pred_tags}
        runs.append(rec)
        if on_record:
            on_record(out)
    return out


# ----------------------------------------------------------------------------------------------------------------
# CWS
# ----------------------------------------------------------------------------------------------------------------

def run_cws(root, methods, corpora=("pku",), template_sets=("tp1", "tp2"), folds=10, C=1.0, eps=0.5, max_iter=200,
            time_limit=None, limit=None, drop_after=None, seed=0, on_record=None):
    """k-fold cross-validation on the SIGHAN 2005 gold test files (the training sets are not available): word
    P/R/F1 and R_iv per fold and their mean and standard deviation. Not comparable with the paper's Table 4.
    ``on_record(partial)`` is called after each (corpus, templates, method)."""
    from ..datasets import load_sighan, tags_to_words
    from ..features.templates import TemplateExtractor
    from ..metrics import segmentation_prf
    folder = Path(root) / "sighan2005_icwb2" / "gold"
    out = {"setup": {"folds": folds, "C": C, "eps": eps, "max_iter": max_iter, "time_limit": time_limit,
                     "comparable_with_paper": False,
                     "why": "the SIGHAN 2005 training sets are absent; cross-validation on the test gold files"},
           "runs": []}
    for corpus_name in corpora:
        corpus = load_sighan(folder / f"{corpus_name}_test_gold.utf8.gz", tagset="BIE")
        if limit:
            corpus = corpus.subset(np.arange(min(limit, len(corpus))))
        splits = corpus.folds(folds, seed=seed)
        out["setup"][f"{corpus_name}_sentences"] = len(corpus)
        for tp in template_sets:
            for name, program, params in methods:
                per_fold = []
                secs, iters, terms, mus = 0.0, [], [], []
                for k, (tr, te) in enumerate(splits):
                    ctr, cte = corpus.subset(tr), corpus.subset(te)
                    ex = TemplateExtractor(tp)
                    dtr = ex.to_dataset(ctr, label_names=["B", "I", "E"])
                    dte = ex.to_dataset(cte, label_names=["B", "I", "E"])
                    log.info("cws %s %s %s: fold %d/%d", corpus_name, tp, name, k + 1, len(splits))
                    res, s = fit_method(program, params, dtr, C, eps, max_iter, time_limit, drop_after)
                    secs += s
                    iters.append(res.n_iter)
                    terms.append(res.termination)
                    pred = res.predict(dte)
                    chars = [sent["char"] for sent in cte.sentences]
                    gold_w = [tags_to_words(c, t, "BIE") for c, t in zip(chars, cte.labels)]
                    pred_w = [tags_to_words(c, ["BIE"[k_] for k_ in y], "BIE") for c, y in zip(chars, pred)]
                    vocab = {w for c, t in zip((s_["char"] for s_ in ctr.sentences), ctr.labels)
                             for w in tags_to_words(c, t, "BIE")}
                    sc = segmentation_prf(gold_w, pred_w, train_vocab=vocab)
                    per_fold.append([100 * sc.recall, 100 * sc.precision, 100 * sc.f1, 100 * sc.r_iv])
                    if getattr(res, "template_weights", None) is not None:
                        mus.append(np.asarray(res.template_weights) / max(np.sum(res.template_weights), 1e-300))
                arr = np.array(per_fold)
                rec = {"corpus": corpus_name, "templates": tp, "method": name, "program": program,
                       "params": dict(params), "C": C, "folds": len(splits),
                       "mean": dict(zip(("recall", "precision", "f1", "r_iv"), arr.mean(axis=0).tolist())),
                       "std": dict(zip(("recall", "precision", "f1", "r_iv"), arr.std(axis=0).tolist())),
                       "seconds": round(secs, 2), "iterations": iters, "terminations": terms}
                if mus:
                    mu = np.mean(mus, axis=0)
                    rec.update({"template_names": list(res.template_names), "template_weights": mu.tolist(),
                                "templates_removed": int(np.sum(mu < 1e-5)), "n_templates": len(mu)})
                out["runs"].append(rec)
                if on_record:
                    on_record(out)
    return out


# ----------------------------------------------------------------------------------------------------------------
# Dependency parsing
# ----------------------------------------------------------------------------------------------------------------

def _ptb_split(root):
    """NLTK's PTB sample split by file: wsj_0001-0159 train, wsj_0160-0199 test (sentence indices)."""
    import csv
    from ..datasets import load_malt_tab
    folder = Path(root) / "ptb_dependency_sample_nltk"
    ds = load_malt_tab(folder / "wsj_0001-0199.dp.gz")
    with open(folder / "file_sentence_counts.tsv", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    counts = np.array([int(r["sentences"]) for r in rows])
    numbers = np.array([int(r["file"][4:8]) for r in rows])
    n_train = int(counts[numbers <= 159].sum())
    return ds.subset(np.arange(n_train)), ds.subset(np.arange(n_train, len(ds)))


def run_dep(root, methods, treebanks=("talbanken", "ptb"), arc_templates="mcdonald05", C=1.0, eps=0.5,
            max_iter=200, time_limit=None, limit=None, test_limit=None, drop_after=None, on_record=None):
    """Dependency parsing with MSTParser's first-order templates: UAS with/without punctuation, complete match.
    ``on_record(partial)`` is called after each (treebank, method)."""
    from ..datasets import load_conllx
    from ..features.arcs import ArcFeatureMap
    from ..metrics import attachment_scores
    out = {"setup": {"arc_templates": arc_templates, "C": C, "eps": eps, "max_iter": max_iter,
                     "time_limit": time_limit}, "runs": []}
    for tb in treebanks:
        if tb == "talbanken":
            folder = Path(root) / "ud_swedish_talbanken" / "v1.0-pre_2015-01-05"
            train = load_conllx(folder / "sv-ud-train.conll.gz")
            test = load_conllx(folder / "sv-ud-test.conll.gz")
            projective, pos_col, punct = False, "cpos", "ud"
        elif tb == "ptb":
            train, test = _ptb_split(root)
            projective, pos_col, punct = True, "pos", "ptb"
        else:
            from ..exceptions import ParameterError
            raise ParameterError(f"treebank {tb!r} is not one of talbanken, ptb")
        if limit:
            train = train.subset(np.arange(min(limit, len(train))))
        if test_limit:
            test = test.subset(np.arange(min(test_limit, len(test))))
        fmap = ArcFeatureMap(arc_templates, projective=projective).fit(train)
        out["setup"][tb] = {"train_sentences": len(train), "test_sentences": len(test), "dim": int(fmap.dim),
                            "n_templates": len(fmap.group_names), "decoder": "Eisner" if projective else "CLE"}
        for name, program, params in methods:
            log.info("dep %s: training %s on %d sentences", tb, name, len(train))
            res, secs = fit_method(program, params, train, C, eps, max_iter, time_limit, drop_after,
                                   feature_map=fmap)
            pred = res.predict(test)
            sc = attachment_scores(list(test.heads), pred, pos=[s[pos_col] for s in test.sentences],
                                   punct_tags=punct)
            rec = _run_record(name, program, params, res, secs)
            rec.update({"treebank": tb, "uas": 100 * sc.uas, "uas_no_punct": 100 * sc.uas_no_punct,
                        "complete": 100 * sc.complete, "complete_no_punct": 100 * sc.complete_no_punct})
            out["runs"].append(rec)
            if on_record:
                on_record(out)
    return out


# ----------------------------------------------------------------------------------------------------------------
# Tables and plots
# ----------------------------------------------------------------------------------------------------------------

def _f(x, w=6, d=2):
    return f"{x:{w}.{d}f}" if x is not None and np.isfinite(x) else " " * (w - 1) + "–"


def format_ner(doc):
    s = doc["setup"]
    lines = [f"NER, CoNLL-2002 Spanish — {s['train_sentences']} training sentences ({s['train_tokens']} tokens), "
             f"{s['n_input_features']} input features from {s['n_templates']} templates; testa/testb "
             f"{s['test_sentences']['testa']}/{s['test_sentences']['testb']} sentences; C={s['C']}, eps={s['eps']}, "
             f"max_iter={s['max_iter']}",
             f"{'method':12s} {'testa P':>7s} {'R':>6s} {'F1':>6s} | {'testb P':>7s} {'R':>6s} {'F1':>6s} | "
             f"{'paper testb P/R/F1':>20s} | {'removed':>8s} {'iters':>5s} {'seconds':>8s} term"]
    paper = PAPER["ner"]
    for r in doc["runs"]:
        a, b = r["testa"], r["testb"]
        pp = paper.get(r["method"].split(":")[0], {}).get("testb")
        ptxt = "/".join(f"{v:.2f}" for v in pp) if pp else "–"
        rem = f"{r['templates_removed']}/{r['n_templates']}" if "templates_removed" in r else "–"
        lines.append(f"{r['method']:12s} {_f(a['precision'], 7)} {_f(a['recall'])} {_f(a['f1'])} | "
                     f"{_f(b['precision'], 7)} {_f(b['recall'])} {_f(b['f1'])} | {ptxt:>20s} | {rem:>8s} "
                     f"{r['iterations']:5d} {r['seconds']:8.1f} {r['termination']}")
    lines.append("paper (Table 5, all 8,323 sentences): MTL testa 77.47/63.21/69.62, testb 79.26/68.39/73.42; SVM^hmm "
                 "testb 74.83/61.23/67.35; CRF l2 testb 78.16/60.72/68.34; MTL removed 75 of 134 templates "
                 "(pblock rows: Table 8(b))")
    return "\n".join(lines)


def format_cws(doc):
    s = doc["setup"]
    lines = [f"CWS, SIGHAN 2005 gold test files, {s['folds']}-fold cross-validation — NOT COMPARABLE with the paper "
             f"({s['why']}); C={s['C']}, eps={s['eps']}, max_iter={s['max_iter']}",
             f"{'corpus':6s} {'tp':4s} {'method':10s} {'R':>6s} {'P':>6s} {'F1':>6s} {'R_iv':>6s} {'±F1':>5s} | "
             f"{'paper Table 4 R/P/F1/Riv':>24s} | {'removed':>8s} {'seconds':>8s} {'rounds':>9s} stops"]
    for r in doc["runs"]:
        m, sd = r["mean"], r["std"]
        pp = PAPER["cws"].get(r["corpus"], {}).get(r["method"], {}).get(r["templates"])
        ptxt = "/".join(f"{v:.1f}" for v in pp) if pp else "–"
        rem = f"{r['templates_removed']}/{r['n_templates']}" if "templates_removed" in r else "–"
        lines.append(f"{r['corpus']:6s} {r['templates']:4s} {r['method']:10s} {_f(m['recall'])} {_f(m['precision'])} "
                     f"{_f(m['f1'])} {_f(m['r_iv'])} {_f(sd['f1'], 5)} | {ptxt:>24s} | {rem:>8s} {r['seconds']:8.1f} "
                     f"{_rounds(r['iterations']):>9s} {_stops(r.get('terminations', []))}")
    return "\n".join(lines)


def _rounds(iterations):
    """Range of the folds' rounds, e.g. ``72–75``."""
    return f"{min(iterations)}–{max(iterations)}" if iterations else "–"


def _stops(terminations):
    """How the folds' fits ended, e.g. ``converged 8, time_limit 2``."""
    return ", ".join(f"{k} {v}" for k, v in Counter(terminations).most_common()) or "–"


def format_dep(doc):
    s = doc["setup"]
    lines = [f"Dependency parsing, first-order templates {s['arc_templates']!r}; C={s['C']}, eps={s['eps']}, "
             f"max_iter={s['max_iter']}"]
    for tb in ("talbanken", "ptb"):
        if tb in s:
            t = s[tb]
            lines.append(f"  {tb}: {t['train_sentences']} train / {t['test_sentences']} test sentences, "
                         f"{t['n_templates']} templates, {t['dim']} features, {t['decoder']}")
    lines.append(f"{'treebank':10s} {'method':10s} {'ACC':>6s} {'UASP':>6s} {'UAS':>6s} | {'removed':>8s} "
                 f"{'iters':>5s} {'seconds':>8s} term")
    for r in doc["runs"]:
        rem = f"{r['templates_removed']}/{r['n_templates']}" if "templates_removed" in r else "–"
        lines.append(f"{r['treebank']:10s} {r['method']:10s} {_f(r['complete'])} {_f(r['uas'])} "
                     f"{_f(r['uas_no_punct'])} | {rem:>8s} {r['iterations']:5d} {r['seconds']:8.1f} "
                     f"{r['termination']}")
    ms, mt = PAPER["dep"]["mstparser"], PAPER["dep"]["mtl"]
    lines.append(f"paper (Table 7, CoNLL-X Swedish Talbanken, a different release of the corpus): MSTParser "
                 f"ACC/UASP/UAS {ms[0]}/{ms[1]}/{ms[2]}, MTLparse {mt[0]}/{mt[1]}/{mt[2]}; MTLparse removed 508 of "
                 f"612 templates (Mao & Tsang count every relative in-between position as its own template)")
    return "\n".join(lines)


def plot_weights(runs, path, title):
    """Bar plots of the learned template weights (normalised to sum 1, log scale), one panel per run."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    runs = [r for r in runs if r.get("template_weights")]
    if not runs:
        return None
    fig, axes = plt.subplots(len(runs), 1, figsize=(max(6, 0.08 * len(runs[0]["template_weights"]) + 4),
                                                     2.4 * len(runs)), squeeze=False)
    for ax, r in zip(axes[:, 0], runs):
        mu = np.asarray(r["template_weights"], dtype=np.float64)
        mu = mu / max(mu.sum(), 1e-300)
        ax.bar(np.arange(len(mu)), np.maximum(mu, 1e-12), color="tab:blue")
        ax.axhline(1.0 / len(mu), color="k", lw=0.8, ls="--", label="average weight")
        ax.axhline(1e-5, color="tab:red", lw=0.8, ls=":", label="1e-5 (removed below)")
        ax.set_yscale("log")
        ax.set_ylim(1e-12, 1.5)
        label = " ".join(str(r.get(k)) for k in ("corpus", "treebank", "templates") if r.get(k))
        ax.set_title(f"{r['method']} {label}".strip(), fontsize=9)
        ax.set_ylabel("μ (normalised)")
        if len(mu) <= 40:
            ax.set_xticks(np.arange(len(mu)))
            ax.set_xticklabels(r["template_names"], rotation=90, fontsize=6)
        else:
            ax.set_xlabel("template index")
    axes[0, 0].legend(fontsize=7, loc="lower right")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return str(path)


# ----------------------------------------------------------------------------------------------------------------
# CLI
# ----------------------------------------------------------------------------------------------------------------

def _parser():
    p = argparse.ArgumentParser(prog="mmprog reproduce templates",
                                description="Mao & Tsang's multiple-template learning experiments (NER, CWS, "
                                            "dependency parsing) beside the paper's tables.")
    p.add_argument("--task", default="all", choices=["all", "ner", "cws", "dep"])
    p.add_argument("--methods", default=None,
                   help="comma list of mtl, svm, pblock-P (default: NER mtl,pblock-4/3,pblock-2,pblock-4,svm; "
                        "CWS and dep mtl,svm)")
    p.add_argument("--data", default=None, help="shared data folder (default: mmprog's data root, ../shared/data)")
    p.add_argument("--limit", type=int, default=None, help="training sentences per task (default: all)")
    p.add_argument("--test-limit", type=int, default=None, help="evaluation sentences per test file (default: all)")
    p.add_argument("--C", type=float, default=None, help="slack weight, n-slack scale (default 1; dep 100 as the "
                                                         "paper's C = n x 10^2)")
    p.add_argument("--eps", type=float, default=0.5, help="stopping tolerance on R_emp - R_s (default 0.5, as the "
                                                          "paper's SVM^hmm -e 0.5)")
    p.add_argument("--max-iter", type=int, default=200)
    p.add_argument("--time-limit", type=float, default=None, help="seconds per fit")
    p.add_argument("--drop-after", type=int, default=None, help="drop cuts inactive for this many rounds")
    p.add_argument("--pblock-method", default="pg", choices=["pg", "nlp"],
                   help="p-block master: projected gradient (the paper's, default) or Ipopt on the Pyomo NLP")
    p.add_argument("--folds", type=int, default=10, help="CWS cross-validation folds (default 10)")
    p.add_argument("--cws-corpora", default="pku", help="comma list of pku, cityu (default pku)")
    p.add_argument("--cws-templates", default="tp1,tp2")
    p.add_argument("--treebanks", default="talbanken,ptb")
    p.add_argument("--arc-templates", default="mcdonald05")
    p.add_argument("--out", default=os.path.join("out", "templates"))
    p.add_argument("--json", action="store_true", help="print the results as JSON instead of tables")
    p.add_argument("--quiet", action="store_true", help="no progress log on stderr")
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    from ..datasets import default_data_root
    from ..datasets.reading import atomic_write_text
    root = Path(args.data) if args.data else Path(default_data_root())
    if not args.quiet:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    tasks = ["ner", "cws", "dep"] if args.task == "all" else [args.task]
    doc = {"argv": list(argv) if argv is not None else sys.argv[1:], "data": str(root), "tasks": {}}
    needs = {"ner": ["conll2002"], "cws": ["sighan2005_icwb2"],
             "dep": [{"talbanken": "ud_swedish_talbanken", "ptb": "ptb_dependency_sample_nltk"}[t]
                     for t in args.treebanks.split(",") if t]}
    texts = []
    for task in tasks:
        missing = [d for d in needs[task] if not (root / d).is_dir()]
        if missing:
            msg = f"{task}: skipped — {', '.join(str(root / d) for d in missing)} absent"
            doc["tasks"][task] = {"skipped": msg}
            texts.append(msg)
            continue
        default = "mtl,pblock-4/3,pblock-2,pblock-4,svm" if task == "ner" else "mtl,svm"
        methods = parse_methods(args.methods or default, args.pblock_method)

        def checkpoint(partial, task=task):
            # what has finished so far, marked partial, replaced atomically (a killed run keeps its finished fits)
            doc["tasks"][task] = dict(partial, partial=True)
            atomic_write_text(out_dir / "results.json", json.dumps(doc, indent=1, default=float))

        common = dict(eps=args.eps, max_iter=args.max_iter, time_limit=args.time_limit, limit=args.limit,
                      drop_after=args.drop_after, on_record=checkpoint)
        if task == "ner":
            res = run_ner(root, methods, C=args.C or 1.0, test_limit=args.test_limit, **common)
            texts.append(format_ner(res))
            png = plot_weights(res["runs"], out_dir / "ner_template_weights.png",
                               "NER (CoNLL-2002 ESP): learned template weights (cf. Figures 5 and 7)")
        elif task == "cws":
            res = run_cws(root, methods, corpora=tuple(args.cws_corpora.split(",")),
                          template_sets=tuple(args.cws_templates.split(",")), folds=args.folds, C=args.C or 1.0,
                          **common)
            texts.append(format_cws(res))
            png = plot_weights(res["runs"], out_dir / "cws_template_weights.png",
                               "CWS (SIGHAN 2005 gold, cross-validation): template weights (cf. Figure 2)")
        else:
            res = run_dep(root, methods, treebanks=tuple(args.treebanks.split(",")),
                          arc_templates=args.arc_templates, C=args.C or 100.0, test_limit=args.test_limit, **common)
            texts.append(format_dep(res))
            png = plot_weights(res["runs"], out_dir / "dep_template_weights.png",
                               "Dependency parsing: template weights (cf. Figure 6)")
        if png:
            res["png"] = png
        doc["tasks"][task] = res
    atomic_write_text(out_dir / "results.json", json.dumps(doc, indent=1, default=float))
    if args.json:
        print(json.dumps(doc, indent=1, default=float))
    else:
        print("\n\n".join(texts))
        print(f"\nresults: {out_dir / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
