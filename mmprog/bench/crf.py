"""``python -m mmprog.bench crf``: mmprog against CRFsuite on the same CoNLL files, in one run.

CRFsuite (python-crfsuite, the ``bench`` extra) is trained as in the sklearn-crfsuite tutorial: L-BFGS with
c1 = c2 = 0.1, 100 iterations, all possible transitions, and the tutorial's token features (lower-cased word, 2- and
3-letter suffixes, is-upper / is-title / is-digit, POS and its 2-letter prefix, the same for the neighbours,
BOS/EOS). mmprog is trained by its own command line (``mmprog train --templates ...``; default the ``rich`` preset
with the 1-slack structural SVM). Each system runs in a child process of its own, so the peak resident memory printed
is that system's alone (``os.wait4``); training time is wall-clock seconds of the fit (CRFsuite: ``Trainer.train``;
mmprog: feature extraction and the cutting-plane loop). Both are scored by :func:`mmprog.metrics.chunk_prf`
(conlleval).

``--same-features`` runs :mod:`mmprog.bench.certify` instead (every other option is that bench's): CRFsuite given
mmprog's exact input features beside mmprog's certified fit (P0 by the bcfw route to a relative duality gap), for
chunking and for Spanish NER with the second-order chain, with the back-end swap rows on a slice.

``--routes`` measures the engine routes SequenceTagger's default was chosen from. ``--tutorial`` runs sklearn-crfsuite's CoNLL-2002 tutorial instead, on both systems with the same call: CRFsuite
through python-crfsuite, mmprog through ``mmprog.crfsuite.CRF`` (fit, flat weighted F1, RandomizedSearchCV over
c1/c2), with mmprog's certified gap beside each fit.

Examples::

    python -m mmprog.bench crf --same-features --task chunk,esp --order 1,2 --record certify.json
    python -m mmprog.bench crf --tutorial --record docs/records/crf-tutorial.json
    python -m mmprog.bench crf --routes --limit 2000 --record docs/records/crf-routes.json
    python -m mmprog.bench crf --task esp
    python -m mmprog.bench crf --task chunk --mmprog-args "--C 1 --eps 0.5 --drop-after 50"
    python -m mmprog.bench crf --task chunk --dev 0.2 --skip crfsuite --mmprog-args "--templates chunk ..."
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import time

from ._child import run_child
from .tasks import TASKS


DEFAULT_MMPROG_ARGS = "--templates rich --program m3n --slack one --C 1 --eps 0.5 --drop-after 50 --max-iter 2000"


def word2features(sent, i):
    """The sklearn-crfsuite tutorial's features of token ``i`` of ``sent`` (list of (word, POS))."""
    word, pos = sent[i]
    f = {"bias": 1.0, "word.lower()": word.lower(), "word[-3:]": word[-3:], "word[-2:]": word[-2:],
         "word.isupper()": word.isupper(), "word.istitle()": word.istitle(), "word.isdigit()": word.isdigit(),
         "postag": pos, "postag[:2]": pos[:2]}
    if i > 0:
        w1, p1 = sent[i - 1]
        f.update({"-1:word.lower()": w1.lower(), "-1:word.istitle()": w1.istitle(), "-1:word.isupper()": w1.isupper(),
                  "-1:postag": p1, "-1:postag[:2]": p1[:2]})
    else:
        f["BOS"] = True
    if i < len(sent) - 1:
        w1, p1 = sent[i + 1]
        f.update({"+1:word.lower()": w1.lower(), "+1:word.istitle()": w1.istitle(), "+1:word.isupper()": w1.isupper(),
                  "+1:postag": p1, "+1:postag[:2]": p1[:2]})
    else:
        f["EOS"] = True
    return f


def sent2features(corpus, k):
    s = corpus.sentences[k]
    pairs = list(zip(s["form"], s["pos"]))
    return [word2features(pairs, i) for i in range(len(pairs))]


def run_crfsuite(task, root, limit=None, c1=0.1, c2=0.1, max_iter=100, spec=None):
    """Train and test CRFsuite in this process; returns the JSON-able record (``spec``: (columns, train, tests)
    instead of the task's files, e.g. from :func:`holdout_split`)."""
    import pycrfsuite

    from ..datasets import load_conll
    from ..metrics import chunk_prf
    cols, train_path, tests = spec or TASKS[task]
    cols = tuple(cols.split("/"))
    train = load_conll(os.path.join(root, train_path), columns=cols)
    if limit:
        train = train.subset(list(range(min(limit, len(train)))))
    t0 = time.perf_counter()
    trainer = pycrfsuite.Trainer(verbose=False)
    for k in range(len(train)):
        trainer.append(sent2features(train, k), train.labels[k])
    trainer.set_params({"c1": c1, "c2": c2, "max_iterations": max_iter, "feature.possible_transitions": True})
    feature_seconds = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.crfsuite")
        t1 = time.perf_counter()
        trainer.train(path)
        train_seconds = time.perf_counter() - t1
        tagger = pycrfsuite.Tagger()
        tagger.open(path)
        rec = {"system": f"CRFsuite (L-BFGS, c1={c1}, c2={c2}, {max_iter} it., tutorial features)",
               "train_seconds": round(train_seconds + feature_seconds, 2), "n_iter": max_iter}
        for name, p in tests.items():
            te = load_conll(os.path.join(root, p), columns=cols)
            pred = [tagger.tag(sent2features(te, k)) for k in range(len(te))]
            sc = chunk_prf(list(te.labels), pred)
            rec[name] = {"precision": 100 * sc.precision, "recall": 100 * sc.recall, "f1": 100 * sc.f1}
        rec["n_features"] = len(tagger.info().attributes)
    return rec


def run_mmprog(task, root, mmprog_args, limit=None, save=None, spec=None):
    """Train and test mmprog through its command line in a child process; returns the record (``spec`` as in
    :func:`run_crfsuite`)."""
    from ..datasets import load_conll
    from ..metrics import chunk_prf
    cols, train_path, tests = spec or TASKS[task]
    with tempfile.TemporaryDirectory() as d:
        train_file = os.path.join(root, train_path)
        if limit:
            tr = load_conll(train_file, columns=tuple(cols.split("/")))
            train_file = os.path.join(d, "train.txt")
            with open(train_file, "w", encoding="utf-8") as fh:
                for k in range(min(limit, len(tr))):
                    s = tr.sentences[k]
                    for row in zip(*[s[c] for c in tr.columns], tr.labels[k]):
                        fh.write(" ".join(row) + "\n")
                    fh.write("\n")
        model = save or os.path.join(d, "model")
        argv = [sys.executable, "-m", "mmprog.cli", "train", "--data", f"conll:{train_file},columns={cols}",
                "--out", model, "--json"] + shlex.split(mmprog_args)
        out, peak_mb, _ = run_child(argv)
        summary = json.loads(out)
        rec = {"system": f"mmprog {mmprog_args}", "train_seconds": summary["train_seconds"], "peak_mb": round(peak_mb),
               "n_iter": summary["n_iter"], "termination": summary["termination"],
               "n_features": summary["n_input_features"]}
        import mmprog
        from ..tagging import predict_tags
        pred = mmprog.load(model)
        for name, p in tests.items():
            te = load_conll(os.path.join(root, p), columns=tuple(cols.split("/")))
            sc = chunk_prf(list(te.labels), predict_tags(pred, te))
            rec[name] = {"precision": 100 * sc.precision, "recall": 100 * sc.recall, "f1": 100 * sc.f1}
    return rec


def holdout_split(task, root, fraction, folder):
    """Cut the task's training file into its first sentences (train) and its last ``fraction`` (dev), written to
    ``folder``; the spec (columns, train, {"dev": dev}) that scores on the held-out part and never on the test files.

    For choosing settings (C, templates, program) without looking at the test set, as CoNLL-2000 has no dev set.
    """
    from ..datasets import load_conll
    if not 0 < fraction < 1:
        raise ValueError(f"the held-out fraction must lie in (0, 1); got {fraction!r}")
    cols, train_path, _ = TASKS[task]
    tr = load_conll(os.path.join(root, train_path), columns=tuple(cols.split("/")))
    cut = len(tr) - int(round(fraction * len(tr)))
    paths = {}
    for name, idx in (("train", range(cut)), ("dev", range(cut, len(tr)))):
        paths[name] = os.path.join(folder, f"{name}.txt")
        with open(paths[name], "w", encoding="utf-8") as fh:
            for k in idx:
                s = tr.sentences[k]
                for row in zip(*[s[c] for c in tr.columns], tr.labels[k]):
                    fh.write(" ".join(row) + "\n")
                fh.write("\n")
    return cols, paths["train"], {"dev": paths["dev"]}


# ---------------------------------------------------------------------------------------------------- the tutorial
#: sklearn-crfsuite's CoNLL-2002 tutorial setting (its CRF(...) call), which `--tutorial` runs on both systems
TUTORIAL = {"algorithm": "lbfgs", "c1": 0.1, "c2": 0.1, "max_iterations": 100, "all_possible_transitions": True}

#: the fits ``run_tutorial`` can make, by name: the tutorial's call; the same without an iteration budget (mmprog: to
#: its certificate); the tutorial's call without its ℓ1 term (P0 for mmprog: what c1's ℓ1 term adds, on each system);
#: ``CRF()`` with no argument, each system's defaults (CRFsuite: c2 = 1, L-BFGS until its own stopping test; mmprog:
#: P0 at C = 1/(2·1) to its certified gap); the tutorial's call with ``all_possible_states=True``, CRFsuite's state
#: weights for every (attribute, label) pair as mmprog's always are (CRFsuite's default has the pairs seen in
#: training only): whether that feature set, rather than the loss, moves CRFsuite's F1
SETTINGS = {"tutorial": TUTORIAL, "certified": {"c1": 0.1, "c2": 0.1}, "l2-only": {**TUTORIAL, "c1": 0.0},
            "defaults": {}, "all-states": {**TUTORIAL, "all_possible_states": True}}


def _base_estimator():
    from sklearn.base import BaseEstimator
    return BaseEstimator


class PyCRFsuiteCRF(_base_estimator()):
    """The peer side of ``--tutorial``: python-crfsuite's Trainer/Tagger behind the scikit-learn estimator calls the
    tutorial makes (what sklearn-crfsuite's ``CRF`` does; sklearn-crfsuite itself is not installed). Only the
    arguments the tutorial passes are taken, and ``all_possible_states`` for the ``all-states`` row."""

    def __init__(self, algorithm="lbfgs", c1=0.0, c2=1.0, max_iterations=None, all_possible_transitions=False,
                 all_possible_states=False):
        self.algorithm = algorithm
        self.c1 = c1
        self.c2 = c2
        self.max_iterations = max_iterations
        self.all_possible_transitions = all_possible_transitions
        self.all_possible_states = all_possible_states

    def fit(self, X, y):
        import pycrfsuite
        trainer = pycrfsuite.Trainer(algorithm=self.algorithm, verbose=False)
        for xseq, yseq in zip(X, y):
            trainer.append(xseq, yseq)
        params = {"c1": self.c1, "c2": self.c2, "feature.possible_transitions": bool(self.all_possible_transitions),
                  "feature.possible_states": bool(self.all_possible_states)}
        if self.max_iterations is not None:
            params["max_iterations"] = self.max_iterations
        trainer.set_params(params)
        fd, self.path_ = tempfile.mkstemp(suffix=".crfsuite")
        os.close(fd)
        trainer.train(self.path_)
        tagger = pycrfsuite.Tagger()
        tagger.open(self.path_)
        self.classes_ = tagger.labels()
        self.tagger_ = tagger
        return self

    def predict(self, X):
        return [self.tagger_.tag(x) for x in X]

    def __getstate__(self):      # the searches pickle estimators between processes: keep the model file's bytes
        state = {k: v for k, v in self.__dict__.items() if k != "tagger_"}
        if "path_" in state:
            with open(state["path_"], "rb") as f:
                state["model_bytes_"] = f.read()
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if "model_bytes_" in state:
            import pycrfsuite
            fd, self.path_ = tempfile.mkstemp(suffix=".crfsuite")
            with os.fdopen(fd, "wb") as f:
                f.write(state.pop("model_bytes_"))
            self.tagger_ = pycrfsuite.Tagger()
            self.tagger_.open(self.path_)


def _tutorial_data(root, limit):
    from ..datasets import load_conll
    cols = ("form", "pos", "ne")
    tr = load_conll(os.path.join(root, "conll2002/esp.train.gz"), columns=cols)
    if limit:
        tr = tr.subset(list(range(min(limit, len(tr)))))
    te = load_conll(os.path.join(root, "conll2002/esp.testb.gz"), columns=cols)
    X = [sent2features(tr, k) for k in range(len(tr))]
    Xt = [sent2features(te, k) for k in range(len(te))]
    return X, [list(v) for v in tr.labels], Xt, [list(v) for v in te.labels]


def run_tutorial(system, root, limit=None, search_iter=4, search_limit=1000, n_jobs=2, settings=("tutorial",)):
    """The tutorial's steps for one system, timed: fit with :data:`TUTORIAL` (and, for mmprog, each further setting
    named in ``settings``: ``"certified"`` is ``CRF(c1=0.1, c2=0.1)`` without an iteration budget, so the fit ends at
    its certificate), flat weighted F1 on esp.testb without 'O' (the tutorial's score) and the CoNLL entity F1
    beside it, then the tutorial's RandomizedSearchCV over c1/c2 (expon(scale=0.5), expon(scale=0.05), 3 folds,
    ``search_iter`` candidates on the first ``search_limit`` training sentences); returns the rows."""
    import warnings

    import scipy.stats
    from sklearn.metrics import make_scorer
    from sklearn.model_selection import RandomizedSearchCV

    from ..crfsuite import CRF
    from ..metrics import chunk_prf, flat_f1_score
    X, y, Xt, yt = _tutorial_data(root, limit)
    make = (lambda **kw: PyCRFsuiteCRF(**kw)) if system == "CRFsuite" else (lambda **kw: CRF(**kw))
    rows = []
    for setting in settings:
        kw = dict(SETTINGS[setting])
        est = make(**kw)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
        seconds = time.perf_counter() - t0
        labels = [c for c in est.classes_ if c != "O"]
        pred = est.predict(Xt)
        row = {"system": system, "setting": setting + ": " + (", ".join(f"{k}={v!r}" for k, v in kw.items())
                                                              or "CRF()"),
               "train_sentences": len(X), "train_seconds": seconds,
               "flat_f1_weighted": flat_f1_score(yt, pred, average="weighted", labels=labels),
               "entity_f1": chunk_prf(yt, pred).f1}
        if system == "mmprog":
            r = est.result_
            row.update(termination=r.termination, gap=r.gap, upper_bound=r.upper_bound,
                       lower_bound=r.primal_objective, n_iter=r.n_iter, route=json.dumps(est.route_))
        rows.append(row)
    if search_iter:
        labels = sorted({t for v in y for t in v} - {"O"})
        search = RandomizedSearchCV(make(**TUTORIAL), {"c1": scipy.stats.expon(scale=0.5),
                                                       "c2": scipy.stats.expon(scale=0.05)},
                                    cv=3, n_jobs=n_jobs, n_iter=search_iter, random_state=0,
                                    scoring=make_scorer(flat_f1_score, average="weighted", labels=labels))
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search.fit(X[:search_limit], y[:search_limit])
        rows.append({"system": system, "setting": f"RandomizedSearchCV: {search_iter} candidates x 3 folds on "
                     f"{min(search_limit, len(X))} sentences, n_jobs={n_jobs}, tutorial CRF(...)",
                     "search_seconds": time.perf_counter() - t0, "best_cv_flat_f1_weighted": search.best_score_,
                     "best_params": json.dumps({k: float(v) for k, v in search.best_params_.items()})})
    return rows


def tutorial_main(args, root):
    """``--tutorial``: :func:`run_tutorial` for CRFsuite and mmprog, each in a child process of its own."""
    rows = []
    for system in ("CRFsuite", "mmprog"):
        if args.skip == system.lower():
            continue
        settings = tuple((args.crfsuite_settings if system == "CRFsuite" else args.settings).split(","))
        got = _child_rows(system, f"run_tutorial({system!r}, {root!r}, {args.limit!r}, {args.search_iter!r}, "
                                  f"{args.search_limit!r}, settings={settings!r})")
        if got is None:
            return 2
        rows += got
    if args.record:
        from .record import write
        write(args.record, "crf", rows, packages=("python-crfsuite", "scikit-learn"),
              notes=["sklearn-crfsuite's CoNLL-2002 tutorial: its features and CRF(algorithm='lbfgs', c1=0.1, c2=0.1, "
                     "max_iterations=100, all_possible_transitions=True), trained on esp.train"
                     + (f" (first {args.limit} sentences)" if args.limit else "") + ", scored on esp.testb",
                     "CRFsuite = python-crfsuite (what sklearn-crfsuite wraps); mmprog = mmprog.crfsuite.CRF with the "
                     "same call; flat_f1_weighted is the tutorial's token score without 'O', entity_f1 conlleval's",
                     "mmprog maps c1, c2 to the elastic-net M3N (enm3n) with C = 1/(2 c2), lambda = c1/(2 c2), and c2 "
                     "alone (the l2-only rows, c1=0) to P0 with C = 1/(2 c2); "
                     "max_iterations=100 is its round budget, so the tutorial row may stop before its certificate: "
                     "gap is the certified relative gap it reached",
                     "defaults rows: CRF() on the tutorial's features, each system's own defaults (CRFsuite: c1 = 0, "
                     "c2 = 1, L-BFGS until its stopping test; mmprog: P0 at C = 0.5 to its certified gap 1e-2)",
                     "all-states row: CRFsuite's tutorial fit with all_possible_states=True (feature.possible_states: "
                     "a state weight for every attribute x label pair, as mmprog always has; CRFsuite's default has "
                     "the pairs seen in training only)"])
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for r in rows:
        _print_row(r)
    return 0


def _child_rows(name, call):
    """The rows returned by ``call`` (a call of this module's functions, as text) run in a child process, each with
    the child's peak resident memory; None (after saying why on stderr) when the child failed."""
    code = f"import json; from mmprog.bench.crf import run_tutorial, run_route; print(json.dumps({call}))"
    try:
        out, peak, _ = run_child([sys.executable, "-c", code])
    except RuntimeError as e:
        print(f"mmprog.bench crf: {name} failed ({e})", file=sys.stderr)
        return None
    rows = json.loads(out)
    for r in rows:
        r["peak_mb"] = round(peak)
    return rows


def _print_row(r):
    print(" | ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()), flush=True)


# ---------------------------------------------------------------------------------------------------- the routes
#: the engine settings ``--routes`` compares for SequenceTagger's default (P0, C = 1/(2·0.1) = 5, the tutorial's c2)
ROUTES = {
    "n-slack": {"slack": "n"},
    "1-slack": {"slack": "one"},
    "1-slack in-out": {"slack": "one", "stabilise": "in-out"},
    "1-slack in-out drop 50": {"slack": "one", "stabilise": "in-out", "drop_after": 50},
    "1-slack in-out drop 50 line search 5": {"slack": "one", "stabilise": "in-out", "drop_after": 50,
                                             "line_search": 5},
    "1-slack in-out(0.9) drop 50 (default)": {"slack": "one", "stabilise": "in-out", "inout_weight": 0.9,
                                              "drop_after": 50},
    # what c1 alone maps to: P1 with C = 1/(2·c1), c1 = 0.1, on the default route
    "P1 (l1m3n, c1 = 0.1 alone), 1-slack in-out drop 50": {"program": "l1m3n", "slack": "one",
                                                          "stabilise": "in-out", "drop_after": 50},
}


def run_route(name, root, limit, time_limit, C=5.0):
    """One route of :data:`ROUTES` on the tutorial's features of the first ``limit`` sentences of esp.train, to the
    certificate gap ≤ 1e-2 (ε = 1e-9) or ``time_limit``; the record row."""
    import numpy as np

    import mmprog

    from ..datasets.base import SequenceDataset
    from ..features.dicts import TokenDictExtractor
    from ..metrics import chunk_prf, flat_f1_score
    X, y, Xt, yt = _tutorial_data(root, limit)
    t0 = time.perf_counter()
    ex = TokenDictExtractor().fit(X)
    classes = sorted({t for v in y for t in v})
    index = {c: k for k, c in enumerate(classes)}
    ds = SequenceDataset(ex.transform(X), [np.array([index[t] for t in v]) for v in y], len(classes),
                         groups=ex.groups_, group_names=ex.group_names_, label_names=classes)
    route = dict(ROUTES[name])
    program = route.pop("program", "m3n")
    res = mmprog.fit(ds, program=program, C=C, eps=1e-9, gap_tol=1e-2, max_iter=100_000, time_limit=time_limit,
                     **route)
    seconds = time.perf_counter() - t0
    dt = SequenceDataset(ex.transform(Xt), [np.zeros(len(s), dtype=np.int64) for s in Xt], len(classes))
    pred = [[classes[j] for j in p] for p in res.predict(dt)]
    labels = [c for c in classes if c != "O"]
    return {"system": "mmprog", "setting": f"route {name}: {program}, C={C:g}, gap_tol=1e-2, "
                                           f"time_limit={time_limit:g}",
            "route": json.dumps(ROUTES[name]), "train_sentences": len(X), "train_seconds": seconds,
            "termination": res.termination, "gap": res.gap, "n_iter": res.n_iter,
            "oracle_seconds": res.timings["oracle"], "solver_seconds": res.timings["solver"],
            "pyomo_seconds": res.timings["pyomo"],
            "flat_f1_weighted": flat_f1_score(yt, pred, average="weighted", labels=labels),
            "entity_f1": chunk_prf(yt, pred).f1}


def routes_main(args, root):
    """``--routes``: CRFsuite's tutorial fit and every route of :data:`ROUTES`, one child process each, in turn."""
    rows = []
    limit = args.limit or 2000
    jobs = [("CRFsuite", f"run_tutorial('CRFsuite', {root!r}, {limit!r}, 0, settings=('tutorial', 'l2-only'))")]
    jobs += [(name, f"[run_route({name!r}, {root!r}, {limit!r}, {args.route_time_limit!r})]") for name in ROUTES]
    for name, call in jobs:
        got = _child_rows(name, call)
        if got is None:
            return 2
        for r in got:
            _print_row(r)
        rows += got
    if args.record:
        from .record import write
        write(args.record, "crf", rows, packages=("python-crfsuite",),
              notes=[f"engine routes for SequenceTagger's default: the tutorial's features on the first {limit} "
                     "sentences of esp.train, P0 with C = 5 (c2 = 0.1), each run to gap <= 1e-2 or its time limit, "
                     "in turn; the P1 row is what c1 = 0.1 alone maps to (C = 1/(2 c1) = 5); CRFsuite's tutorial "
                     "fit (c1 = c2 = 0.1) and the same without c1 on the same sentences, for scale and to show "
                     "what dropping c1 costs CRFsuite; scored on esp.testb"])
    return 0


def main(argv=None):
    from ..datasets.registry import default_data_root
    argv = list(sys.argv[2:] if argv is None else argv)
    if "--same-features" in argv:
        # one code path: the same-features comparison is the certify bench
        from .certify import main as same_features
        return same_features(argv)
    ap = argparse.ArgumentParser(prog="python -m mmprog.bench crf", description=__doc__.splitlines()[0])
    ap.add_argument("--same-features", action="store_true", help="run `bench certify` (CRFsuite given mmprog's "
                    "input features beside mmprog's certified fit); the other options are that bench's")
    ap.add_argument("--task", choices=sorted(TASKS), default="esp")
    ap.add_argument("--data-root", default=None, help="folder with conll2000/ and conll2002/ (default: the shared "
                    "data root)")
    ap.add_argument("--mmprog-args", default=DEFAULT_MMPROG_ARGS, help="options of `mmprog train` (quoted)")
    ap.add_argument("--limit", type=int, default=None, help="train on the first N sentences only (quick runs)")
    ap.add_argument("--skip", choices=["mmprog", "crfsuite"], default=None)
    ap.add_argument("--save-model", default=None, metavar="PATH", help="keep mmprog's model as PATH.json/.npz (for "
                    "`python -m mmprog.bench tag --model PATH`)")
    ap.add_argument("--dev", type=float, default=None, metavar="FRACTION", help="hold out the last FRACTION of "
                    "the training file's sentences, train on the rest and score on them only (no test file is read): "
                    "for choosing settings")
    ap.add_argument("--tutorial", action="store_true", help="run sklearn-crfsuite's CoNLL-2002 tutorial on both "
                    "systems (CRFsuite through python-crfsuite, mmprog through mmprog.crfsuite.CRF): fit, flat F1, "
                    "RandomizedSearchCV; the --task, --mmprog-args, --dev options do not apply")
    ap.add_argument("--settings", default="tutorial,l2-only,defaults", help="with --tutorial: mmprog's fits, "
                    "comma-separated names of SETTINGS: 'tutorial' (the tutorial's CRF call: the elastic-net M3N), "
                    "'certified' (CRF(c1=0.1, c2=0.1): no round budget), 'l2-only' (the tutorial's call with c1=0: "
                    "P0), 'defaults' (CRF() with no argument)")
    ap.add_argument("--crfsuite-settings", default="tutorial,all-states,l2-only,defaults", help="with --tutorial: "
                    "CRFsuite's fits, names of SETTINGS as for --settings; the l2-only rows of both systems say what "
                    "c1's l1 term adds to each, apart from the choice of loss; 'all-states' is the tutorial's call "
                    "with CRFsuite's state weights for every (attribute, label) pair, as mmprog's always are")
    ap.add_argument("--search-iter", type=int, default=4, help="with --tutorial: RandomizedSearchCV candidates "
                    "(0: no search)")
    ap.add_argument("--search-limit", type=int, default=1000, help="with --tutorial: sentences the search runs on")
    ap.add_argument("--routes", action="store_true", help="compare the engine routes of ROUTES (the choice of "
                    "SequenceTagger's default) on the tutorial's features of --limit sentences (default 2000)")
    ap.add_argument("--route-time-limit", type=float, default=200.0, help="with --routes: seconds per route")
    ap.add_argument("--record", default=None, metavar="PATH", help="write the rows as a bench record "
                    "(mmprog.bench.record) to PATH")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    for opt in ("settings", "crfsuite_settings"):
        bad = [n for n in getattr(args, opt).split(",") if n not in SETTINGS]
        if bad:
            ap.error(f"--{opt.replace('_', '-')}: {', '.join(map(repr, bad))} not among {', '.join(SETTINGS)}")
    root = args.data_root or str(default_data_root())
    if args.tutorial:
        return tutorial_main(args, root)
    if args.routes:
        return routes_main(args, root)
    if args.dev is not None:
        with tempfile.TemporaryDirectory() as d:
            return _main(args, root, holdout_split(args.task, root, args.dev, d))
    return _main(args, root, None)


def _main(args, root, spec):
    rows = []
    if args.skip != "crfsuite":
        code = (f"import json; from mmprog.bench.crf import run_crfsuite; "
                f"print(json.dumps(run_crfsuite({args.task!r}, {root!r}, {args.limit!r}, spec={spec!r})))")
        try:
            out, peak, _ = run_child([sys.executable, "-c", code])
        except RuntimeError as e:
            print(f"mmprog.bench crf: CRFsuite failed ({e}); install the bench extra (python-crfsuite)",
                  file=sys.stderr)
            return 2
        rec = json.loads(out)
        rec["peak_mb"] = round(peak)
        rows.append(rec)
    if args.skip != "mmprog":
        rows.append(run_mmprog(args.task, root, args.mmprog_args, args.limit, args.save_model, spec=spec))
    if args.record:
        from .record import write
        for r in rows:
            r.setdefault("setting", f"task {args.task}" + (f", first {args.limit} sentences" if args.limit else ""))
        write(args.record, "crf", [_flat(r) for r in rows], packages=("python-crfsuite",))
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    tests = list((spec or TASKS[args.task])[2])
    head = f"{'system':<78} {'train s':>8} {'peak MB':>8} " + " ".join(f"{t + ' P/R/F1':>22}" for t in tests)
    print(head)
    for r in rows:
        prf = " ".join(f"{r[t]['precision']:6.2f}/{r[t]['recall']:6.2f}/{r[t]['f1']:6.2f}".rjust(22) for t in tests)
        print(f"{r['system'][:78]:<78} {r['train_seconds']:>8.1f} {r['peak_mb']:>8} {prf}")
    return 0


def _flat(row):
    """A row with its per-test-file dicts flattened (``testb_f1``): records hold JSON scalars only."""
    out = {}
    for k, v in row.items():
        if isinstance(v, dict):
            out.update({f"{k}_{k2}": v2 for k2, v2 in v.items()})
        else:
            out[k] = v
    return out
