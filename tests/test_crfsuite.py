"""mmprog.crfsuite as a drop-in for sklearn-crfsuite (issue 41): the tutorial with one import changed, the argument
mapping, the metrics against scikit-learn's, pickling, clone and the searches with n_jobs, model files."""
import itertools
import pickle
import warnings

import numpy as np
import pytest

#: every argument of sklearn_crfsuite.CRF.__init__ (sklearn-crfsuite 0.3.6 / 0.5.0), in its order
SKLEARN_CRFSUITE_ARGS = ["algorithm", "min_freq", "all_possible_states", "all_possible_transitions", "c1", "c2",
                         "max_iterations", "num_memories", "epsilon", "period", "delta", "linesearch",
                         "max_linesearch", "calibration_eta", "calibration_rate", "calibration_samples",
                         "calibration_candidates", "calibration_max_trials", "pa_type", "c", "error_sensitive",
                         "averaging", "variance", "gamma", "verbose", "model_filename", "keep_tempfiles",
                         "trainer_cls"]


def _conll(name, n):
    """The first n sentences of a CoNLL-2002 Spanish file as the tutorial's (word, POS, label) triples (what
    ``nltk.corpus.conll2002.iob_sents`` gives it)."""
    from mmprog.datasets import load_conll
    from mmprog.datasets.registry import default_data_root
    path = default_data_root() / "conll2002" / name
    if not path.exists():
        pytest.skip(f"CoNLL-2002 not found at {path}")
    c = load_conll(path, columns=("form", "pos", "ne"))
    return [list(zip(s["form"], s["pos"], lab)) for s, lab in zip(c.sentences[:n], c.labels[:n])]


# ---------------------------------------------------------------------------------------------------- the tutorial
def test_the_sklearn_crfsuite_tutorial_runs_with_one_import_changed(capsys):
    """sklearn-crfsuite's CoNLL-2002 tutorial, its code as published, with the import changed and the data cut to a
    slice (and the search to 2 candidates) to keep the test short; every result it prints is checked against an
    independent computation."""
    from collections import Counter

    import scipy.stats
    from sklearn.metrics import make_scorer
    from sklearn.model_selection import RandomizedSearchCV

    from mmprog import crfsuite as sklearn_crfsuite          # was: import sklearn_crfsuite
    from mmprog.crfsuite import metrics, scorers              # was: from sklearn_crfsuite import metrics, scorers

    train_sents = _conll("esp.train.gz", 150)                  # was: list(nltk.corpus.conll2002.iob_sents(...))
    test_sents = _conll("esp.testb.gz", 60)

    # ---- the tutorial's code from here on
    def word2features(sent, i):
        word = sent[i][0]
        postag = sent[i][1]
        features = {
            'bias': 1.0,
            'word.lower()': word.lower(),
            'word[-3:]': word[-3:],
            'word[-2:]': word[-2:],
            'word.isupper()': word.isupper(),
            'word.istitle()': word.istitle(),
            'word.isdigit()': word.isdigit(),
            'postag': postag,
            'postag[:2]': postag[:2],
        }
        if i > 0:
            word1 = sent[i - 1][0]
            postag1 = sent[i - 1][1]
            features.update({
                '-1:word.lower()': word1.lower(),
                '-1:word.istitle()': word1.istitle(),
                '-1:word.isupper()': word1.isupper(),
                '-1:postag': postag1,
                '-1:postag[:2]': postag1[:2],
            })
        else:
            features['BOS'] = True
        if i < len(sent) - 1:
            word1 = sent[i + 1][0]
            postag1 = sent[i + 1][1]
            features.update({
                '+1:word.lower()': word1.lower(),
                '+1:word.istitle()': word1.istitle(),
                '+1:word.isupper()': word1.isupper(),
                '+1:postag': postag1,
                '+1:postag[:2]': postag1[:2],
            })
        else:
            features['EOS'] = True
        return features

    def sent2features(sent):
        return [word2features(sent, i) for i in range(len(sent))]

    def sent2labels(sent):
        return [label for token, postag, label in sent]

    X_train = [sent2features(s) for s in train_sents]
    y_train = [sent2labels(s) for s in train_sents]
    X_test = [sent2features(s) for s in test_sents]
    y_test = [sent2labels(s) for s in test_sents]

    crf = sklearn_crfsuite.CRF(
        algorithm='lbfgs',
        c1=0.1,
        c2=0.1,
        max_iterations=100,
        all_possible_transitions=True
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        crf.fit(X_train, y_train)

    labels = list(crf.classes_)
    labels.remove('O')
    y_pred = crf.predict(X_test)
    f1 = metrics.flat_f1_score(y_test, y_pred, average='weighted', labels=labels)

    sorted_labels = sorted(labels, key=lambda name: (name[1:], name[0]))
    report = metrics.flat_classification_report(y_test, y_pred, labels=sorted_labels, digits=3)
    print(report)

    def print_transitions(trans_features):
        for (label_from, label_to), weight in trans_features:
            print("%-6s -> %-7s %0.6f" % (label_from, label_to, weight))

    print_transitions(Counter(crf.transition_features_).most_common(20))
    print_transitions(Counter(crf.transition_features_).most_common()[-20:])

    def print_state_features(state_features):
        for (attr, label), weight in state_features:
            print("%0.6f %-8s %s" % (weight, label, attr))

    print_state_features(Counter(crf.state_features_).most_common(30))
    print_state_features(Counter(crf.state_features_).most_common()[-30:])
    print('model size: {:0.2f}M'.format(crf.size_ / 1000000))

    crf_search = sklearn_crfsuite.CRF(
        algorithm='lbfgs',
        max_iterations=100,
        all_possible_transitions=True
    )
    params_space = {
        'c1': scipy.stats.expon(scale=0.5),
        'c2': scipy.stats.expon(scale=0.05),
    }
    f1_scorer = make_scorer(metrics.flat_f1_score, average='weighted', labels=labels)
    rs = RandomizedSearchCV(crf_search, params_space, cv=3, verbose=1, n_jobs=2, n_iter=2,   # tutorial: n_iter=50
                            scoring=f1_scorer, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rs.fit(X_train, y_train)
    print('best params:', rs.best_params_)
    print('best CV score:', rs.best_score_)
    print('model size: {:0.2f}M'.format(rs.best_estimator_.size_ / 1000000))
    best_pred = rs.best_estimator_.predict(X_test)
    print(metrics.flat_classification_report(y_test, best_pred, labels=sorted_labels, digits=3))
    # ---- end of the tutorial's code
    out = capsys.readouterr().out

    # the mapping: c1 with c2 -> the elastic-net M³N, C = 1/(2 c2), λ = c1/(2 c2), on route bcfw (no warning about
    # c1); max_iterations is the round budget
    assert crf.route_["program"] == "enm3n" and crf.route_["C"] == pytest.approx(1 / (2 * 0.1))
    assert crf.route_["lam"] == pytest.approx(0.1 / (2 * 0.1)) and crf.route_["route"] == "bcfw"
    assert crf.result_.params["lam"] == pytest.approx(0.5)
    assert not any("c1" in str(w.message) for w in caught)
    assert crf.result_.n_iter <= 100
    assert (crf.result_.gap <= crf.route_["gap_tol"]) == \
        (not any(w.category.__name__ == "ConvergenceWarning" for w in caught))
    assert crf.result_.upper_bound >= crf.result_.primal_objective - 1e-6 * abs(crf.result_.upper_bound)
    # the scores against scikit-learn's own on the flattened tokens (the referee)
    from sklearn.metrics import classification_report, f1_score
    flat_t, flat_p = list(itertools.chain(*y_test)), list(itertools.chain(*y_pred))
    assert f1 == pytest.approx(f1_score(flat_t, flat_p, average='weighted', labels=labels))
    assert report == classification_report(flat_t, flat_p, labels=sorted_labels, digits=3)
    assert f1 > 0.3         # a model, not chance (CRFsuite: 0.56 on this slice)
    # the read-outs are the model's weights, keyed as sklearn-crfsuite keys them
    blocks = crf.result_.weights()
    K = len(crf.classes_)
    assert len(crf.transition_features_) == K * K
    for (a, b), v in crf.transition_features_.items():
        assert v == blocks["transition"][crf.classes_.index(a), crf.classes_.index(b)]
    sf = crf.state_features_
    assert len(sf) == np.count_nonzero(blocks["state"]) > 0
    vocab = crf.extractor_.vocabulary_
    for (attr, lab), v in sf.items():
        assert v != 0 and v == blocks["state"][vocab[attr], crf.classes_.index(lab)]
    # attributes named as python-crfsuite names them (the elastic net may zero any one of them)
    assert {"bias", "BOS", "word.istitle()", "word.lower():de"} <= set(vocab)
    assert "%-6s -> %-7s" % ("O", "O") in out and "best CV score:" in out
    assert crf.size_ > 0 and rs.best_estimator_.size_ > 0
    # the search: every candidate fitted on 3 folds, the best one refitted and predicting
    assert set(rs.best_params_) == {"c1", "c2"} and len(rs.cv_results_["params"]) == 2
    assert np.all(np.isfinite(rs.cv_results_["mean_test_score"]))
    assert rs.best_estimator_.route_["C"] == pytest.approx(1 / (2 * rs.best_params_["c2"]))
    assert len(best_pred) == len(y_test) and all(len(p) == len(t) for p, t in zip(best_pred, y_test))
    # sklearn-crfsuite's scorers module
    assert scorers.flat_accuracy(crf, X_test, y_test) == pytest.approx(crf.score(X_test, y_test))
    assert scorers.sequence_accuracy(crf, X_test, y_test) == pytest.approx(
        np.mean([p == t for p, t in zip(y_pred, y_test)]))


# ---------------------------------------------------------------------------------------------------- metrics
def test_flat_metrics_against_scikit_learn_and_by_hand():
    from sklearn import metrics as sk

    from mmprog.crfsuite import metrics
    from mmprog.exceptions import DataError
    rng = np.random.default_rng(3)
    names = ["O", "B-PER", "I-PER", "B-LOC"]
    lengths = rng.integers(1, 9, size=40)
    y_true = [[names[k] for k in rng.integers(0, 4, size=n)] for n in lengths]
    y_pred = [[t if rng.random() < 0.6 else names[rng.integers(0, 4)] for t in s] for s in y_true]
    ft, fp = list(itertools.chain(*y_true)), list(itertools.chain(*y_pred))
    labels = names[1:]
    for avg in ("weighted", "macro", "micro"):
        assert metrics.flat_f1_score(y_true, y_pred, average=avg, labels=labels) == \
            pytest.approx(sk.f1_score(ft, fp, average=avg, labels=labels))
        assert metrics.flat_precision_score(y_true, y_pred, average=avg) == \
            pytest.approx(sk.precision_score(ft, fp, average=avg))
        assert metrics.flat_recall_score(y_true, y_pred, average=avg) == \
            pytest.approx(sk.recall_score(ft, fp, average=avg))
    # the weighted F1 by hand: per-label counts, weighted by support
    f1s, supports = [], []
    for lab in labels:
        tp = sum(a == b == lab for a, b in zip(ft, fp))
        p = tp / max(1, sum(b == lab for b in fp))
        r = tp / max(1, sum(a == lab for a in ft))
        f1s.append(0.0 if p + r == 0 else 2 * p * r / (p + r))
        supports.append(sum(a == lab for a in ft))
    assert metrics.flat_f1_score(y_true, y_pred, average="weighted", labels=labels) == \
        pytest.approx(np.dot(f1s, supports) / sum(supports))
    assert metrics.flat_accuracy_score(y_true, y_pred) == pytest.approx(np.mean([a == b for a, b in zip(ft, fp)]))
    assert metrics.flat_fbeta_score(y_true, y_pred, beta=2, average="macro") == \
        pytest.approx(sk.fbeta_score(ft, fp, beta=2, average="macro"))
    assert metrics.flat_classification_report(y_true, y_pred, labels=labels, digits=4) == \
        sk.classification_report(ft, fp, labels=labels, digits=4)
    exact = sum(a == b for a, b in zip(y_true, y_pred))
    assert exact > 0 and metrics.sequence_accuracy_score(y_true, y_pred) == exact / len(y_true)
    with pytest.raises(DataError, match="sequence 2: y_true has"):
        metrics.flat_f1_score(y_true, y_pred[:2] + [y_pred[2][:-1]] + y_pred[3:], average="weighted")


# ---------------------------------------------------------------------------------------------------- the arguments
def test_every_sklearn_crfsuite_argument_is_accepted_and_stored_untouched():
    """No argument of sklearn_crfsuite.CRF is a TypeError; get_params gives back what was given (the mapping happens
    in fit)."""
    from sklearn.base import clone

    from mmprog.crfsuite import CRF
    given = {name: object() for name in SKLEARN_CRFSUITE_ARGS}
    est = CRF(**given)
    params = est.get_params()
    assert all(params[k] is v for k, v in given.items())
    est = CRF(c2=0.1, c1=0.3, max_iterations=7, all_possible_transitions=True)
    twin = clone(est)
    assert twin.get_params() == est.get_params() and twin.c2 == 0.1 and twin.C is None
    # positional order is sklearn-crfsuite's
    assert CRF("lbfgs", None, None, True).all_possible_transitions is True


def _tiny():
    """Three tagged sentences of token dicts, the gold given by a rule the model can learn."""
    sents = [["Ana", "vive", "en", "Lima"], ["Lima", "es", "grande"], ["en", "Roma", "vive", "Ana"]]
    gold = {"Ana": "B-PER", "Lima": "B-LOC", "Roma": "B-LOC"}
    X = [[{"w": w.lower(), "title": w.istitle(), "bias": 1.0} for w in s] for s in sents]
    y = [[gold.get(w, "O") for w in s] for s in sents]
    return X, y


@pytest.mark.parametrize("kw, program, C", [
    ({}, "m3n", 0.5),                                       # CRFsuite's default c2 = 1
    ({"c2": 0.1}, "m3n", 5.0),
    ({"c2": 0.25, "c1": 0.0}, "m3n", 2.0),
    ({"c1": 0.2}, "l1m3n", 2.5),
    ({"c1": 0.2, "c2": 0.0}, "l1m3n", 2.5),
    ({"C": 3.0}, "m3n", 3.0),
    ({"c1": 0.1, "c2": 0.1}, "enm3n", 5.0),
    ({"c1": 0.4, "c2": 0.25}, "enm3n", 2.0),
])
def test_c1_c2_map_to_the_program_and_C(kw, program, C):
    """C = 1/(2 c2) for P0, 1/(2 c1) for P1 alone, 1/(2 c2) with λ = c1/(2 c2) for the elastic net; and the fitted
    objective is CRFsuite's with the hinge in place of the NLL: 2c·(Ω(w) + C Σ ξ) = c‖w‖² + Σ ξ (c‖w‖₁ + Σ ξ for P1,
    c2‖w‖² + c1‖w‖₁ + Σ ξ for the elastic net), recomputed from the weights."""
    from mmprog.crfsuite import CRF
    X, y = _tiny()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = CRF(**kw, max_iterations=300).fit(X, y)
    assert est.route_["program"] == program and est.route_["C"] == pytest.approx(C)
    r = est.result_
    assert r.program == program and r.termination == "converged" and r.gap <= 1e-2
    w, c = r.w, 1 / (2 * C)
    crfsuite_reg = c * (w @ w if program in ("m3n", "enm3n") else np.abs(w).sum())
    if program == "enm3n":
        assert est.route_["lam"] == pytest.approx(kw["c1"] / (2 * kw["c2"]))
        crfsuite_reg += kw["c1"] * np.abs(w).sum()
    if r.route == "bcfw":
        # P0 by its dual (the default route for m3n): no primal master; the full objective at w, its upper bound, is
        # CRFsuite's with the hinge Σᵢ Hᵢ(w) (loss-augmented Viterbi at w, an oracle call outside the fit) in place
        # of the NLL
        from mmprog.engine.oracle import Oracle
        orc = Oracle(r.fmap, r.fmap.prepare(est._dataset(X, y)))
        total = float(np.maximum(orc.separate(w)[1], 0.0).sum())
        orc.close()
        assert 2 * c * r.upper_bound == pytest.approx(crfsuite_reg + total, rel=1e-6, abs=1e-6)
        return
    # Σᵢ ξᵢ of the master (the 1-slack ξ is the average over the n sentences)
    total_xi = len(X) * r.xi.sum() / len(r.xi)
    assert 2 * c * r.primal_objective == pytest.approx(crfsuite_reg + total_xi, rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("kw, match", [
    ({"c2": -1.0}, r"c2.*finite float >= 0.*-1"),
    ({"c1": 0.0, "c2": 0.0}, r"c2 must be > 0"),
    ({"C": 1.0, "c2": 0.1}, r"C=1.0 .* c2=0.1"),
    ({"max_iter": 5, "max_iterations": 5}, r"max_iter=5 and max_iterations=5"),
    ({"max_iterations": 0}, r"max_iterations.*int >= 1.*0"),
    ({"algorithm": "newton"}, r"algorithm.*'lbfgs'.*newton"),
    ({"min_freq": -2}, r"min_freq.*float >= 0.*-2"),
    ({"min_freq": 1, "min_count": 3}, r"min_count=3 and min_freq=1"),
    ({"all_possible_states": "yes"}, r"all_possible_states.*True or False.*yes"),
])
def test_bad_arguments_name_parameter_range_and_value_in_fit(kw, match):
    from mmprog.crfsuite import CRF
    from mmprog.exceptions import ParameterError
    X, y = _tiny()
    est = CRF(**kw)                                   # stored untouched: no error before fit
    with pytest.raises(ParameterError, match=match):
        est.fit(X, y)


@pytest.mark.parametrize("kw, words", [
    ({"num_memories": 6, "epsilon": 1e-5}, ["num_memories, epsilon", "ignored"]),
    ({"algorithm": "pa", "c": 1.0}, ["passive-aggressive", "c: CRFsuite optimiser"]),
    ({"all_possible_transitions": False}, ["all_possible_transitions=False", "K×K transition"]),
    ({"keep_tempfiles": True}, ["keep_tempfiles=True"]),
    ({"c1": 0.1, "c2": 0.1, "program": "m3n"}, ["c1=0.1", "c1 is ignored", "enm3n"]),
])
def test_arguments_without_a_max_margin_meaning_warn(kw, words):
    from mmprog.crfsuite import CRF
    X, y = _tiny()
    with pytest.warns(UserWarning) as rec:
        est = CRF(**kw).fit(X, y)
    text = " ".join(str(w.message) for w in rec)
    assert all(w in text for w in words), text
    assert est.predict(X) == y                           # and the fit goes on


def test_max_iterations_is_the_round_budget_and_min_freq_the_cut_off():
    from sklearn.exceptions import ConvergenceWarning

    from mmprog.crfsuite import CRF
    X, y = _tiny()
    with pytest.warns(ConvergenceWarning, match="not certified"):
        est = CRF(c2=0.001, max_iterations=2).fit(X, y)
    assert est.result_.n_iter == 2 and est.result_.gap > 1e-2
    # min_freq=1: attributes seen more than once (CRFsuite's rule), i.e. min_count 2
    est = CRF(min_freq=1).fit(X, y)
    counts = {}
    for s in X:
        for tok in s:
            for k, v in tok.items():
                name = f"{k}:{v}" if isinstance(v, str) else k
                counts[name] = counts.get(name, 0) + (1 if v is not False else 0)
    assert set(est.attributes_) == {a for a, c in counts.items() if c > 1}


def test_hold_out_data_is_scored_after_the_fit():
    from mmprog.crfsuite import CRF
    from mmprog.exceptions import ParameterError
    X, y = _tiny()
    est = CRF().fit(X[:2], y[:2], X_dev=X[2:], y_dev=y[2:])
    assert est.dev_score_ == est.score(X[2:], y[2:])
    assert not hasattr(est.fit(X, y), "dev_score_")
    with pytest.raises(ParameterError, match="X_dev and y_dev go together"):
        est.fit(X, y, X_dev=X)


def test_verbose_prints_the_rounds(capsys):
    from mmprog.crfsuite import CRF
    X, y = _tiny()
    CRF(verbose=True).fit(X, y)
    err = capsys.readouterr().err
    assert "termination: converged" in err and "iter" in err.splitlines()[0]


def test_token_dict_attributes_are_named_as_python_crfsuite_names_them():
    """The names python-crfsuite 0.9.12's ItemSequence gives the same token (its ``items()`` output, recorded)."""
    from mmprog.features.dicts import TokenDictExtractor
    tok = {"a": "x", "b": True, "c": False, "d": 2.5, "e": {"f": "g", "h": 1.5}, "l": ["p", "q"], "m": 3}
    crfsuite_items = {'a:x': 1.0, 'b': 1.0, 'c': 0.0, 'd': 2.5, 'e:f:g': 1.0, 'e:h': 1.5, 'l:p': 1.0, 'l:q': 1.0,
                      'm': 3.0}
    ex = TokenDictExtractor().fit([[tok]])
    x = ex.transform([[tok]])[0].toarray()[0]
    got = {ex.feature_names_[j]: x[j] for j in range(ex.n_features_)}
    assert got == crfsuite_items
    assert ex.group_names_ == list("abcdelm")


# ---------------------------------------------------------------------------------------------------- persistence
def test_pickle_clone_and_searches_with_n_jobs():
    """scikit-learn's habits: a pickled estimator predicts as the original; GridSearchCV and cross_val_score give
    the same scores with n_jobs=2 as serially."""
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, cross_val_score

    from mmprog.crfsuite import CRF, scorers
    train = _conll("esp.train.gz", 45)
    X = [[{"w": w.lower(), "p": p, "t": w.istitle()} for w, p, _ in s] for s in train]
    y = [[lab for *_, lab in s] for s in train]
    est = CRF(c2=0.5, max_iterations=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
        twin = pickle.loads(pickle.dumps(est))
        assert twin.predict(X) == est.predict(X) and twin.state_features_ == est.state_features_
        assert twin.result_.gap == est.result_.gap and twin.result_.model is None
        assert est.result_.model is not None                       # the original keeps its master
        assert not hasattr(clone(est), "result_")
        serial = cross_val_score(est, X, y, cv=3, scoring=scorers.flat_accuracy, n_jobs=1)
        parallel = cross_val_score(est, X, y, cv=3, scoring=scorers.flat_accuracy, n_jobs=2)
        np.testing.assert_allclose(parallel, serial)
        gs = GridSearchCV(CRF(max_iterations=30), {"c2": [0.5, 5.0]}, cv=2, n_jobs=2).fit(X, y)
    assert gs.best_params_["c2"] in (0.5, 5.0) and gs.best_estimator_.route_["C"] == 1 / (2 * gs.best_params_["c2"])
    assert len(gs.cv_results_["mean_test_score"]) == 2


def test_model_filename_is_mmprogs_json_and_npz(tmp_path):
    from mmprog.crfsuite import CRF
    from mmprog.exceptions import ModelFileError
    X, y = _tiny()
    path = tmp_path / "ner"
    est = CRF(model_filename=str(path)).fit(X, y)
    assert (tmp_path / "ner.json").exists() and (tmp_path / "ner.npz").exists()
    assert est.size_ == (tmp_path / "ner.json").stat().st_size + (tmp_path / "ner.npz").stat().st_size
    again = CRF(model_filename=str(path))                    # unfitted: reads the model on first use
    assert again.predict(X) == est.predict(X) and again.classes_ == est.classes_
    assert again.state_features_ == est.state_features_
    (tmp_path / "crf.json").write_bytes(b"lCRF\x00\x00binary CRFsuite model")
    (tmp_path / "crf.npz").write_bytes(b"")
    with pytest.raises(ModelFileError, match="crf.json"):
        CRF(model_filename=str(tmp_path / "crf")).predict(X)


def test_bench_tutorial_writes_a_record_with_the_certificate(tmp_path, capsys):
    """``python -m mmprog.bench crf --tutorial --record PATH`` (mmprog's side, on 25 sentences, no search): the
    record holds the fit's time, scores and the gap its result reports."""
    from mmprog.bench import crf, record
    _conll("esp.train.gz", 1)                       # skips without the data
    path = tmp_path / "rec.json"
    assert crf.main(["--tutorial", "--limit", "25", "--search-iter", "0", "--skip", "crfsuite", "--settings",
                     "tutorial,l2-only,defaults", "--record", str(path)]) == 0
    rec = record.read(path)
    assert rec["bench"] == "crf" and [r["system"] for r in rec["rows"]] == ["mmprog"] * 3
    tut, l2, default = rec["rows"]
    # CRF() with no argument: CRFsuite's default c2 = 1 is P0 at C = 0.5, fitted to its certificate
    assert default["setting"] == "defaults: CRF()" and json_route(default)["program"] == "m3n"
    assert json_route(default)["C"] == pytest.approx(0.5) and default["gap"] <= 1e-2
    assert tut["setting"].startswith("tutorial: algorithm='lbfgs', c1=0.1, c2=0.1, max_iterations=100")
    assert tut["train_sentences"] == 25 and 0 <= tut["flat_f1_weighted"] <= 1 and tut["n_iter"] <= 100
    assert tut["upper_bound"] >= tut["lower_bound"] and tut["gap"] == pytest.approx(
        (tut["upper_bound"] - tut["lower_bound"]) / max(1.0, abs(tut["upper_bound"])))
    # c1 beside c2 is the elastic net at λ = c1/(2 c2), c1 = 0 P0 at the same C: the elastic net's optimum is the
    # larger (its regulariser is), so its certified upper bound lies above P0's lower one
    assert json_route(tut)["program"] == "enm3n" and json_route(tut)["lam"] == pytest.approx(0.5)
    assert json_route(l2)["program"] == "m3n" and "lam" not in json_route(l2)
    assert json_route(tut)["C"] == json_route(l2)["C"] == pytest.approx(5.0)
    assert tut["upper_bound"] >= l2["lower_bound"]


def test_bench_tutorial_crfsuite_rows_follow_their_settings(tmp_path):
    """CRFsuite's side runs each of ``--crfsuite-settings``: the l2-only row is CRFsuite's own fit with c1 = 0 (the
    regulariser of mmprog's l2-only row, P0), so it differs from the tutorial row; an unknown setting exits 2."""
    pytest.importorskip("pycrfsuite")
    from mmprog.bench import crf, record
    _conll("esp.train.gz", 1)
    path = tmp_path / "rec.json"
    assert crf.main(["--tutorial", "--limit", "25", "--search-iter", "0", "--skip", "mmprog",
                     "--crfsuite-settings", "tutorial,l2-only", "--record", str(path)]) == 0
    tut, l2 = record.read(path)["rows"]
    assert tut["system"] == l2["system"] == "CRFsuite"
    assert "c1=0.1" in tut["setting"] and "c1=0.0" in l2["setting"] and tut["train_sentences"] == 25
    with pytest.raises(SystemExit) as e:
        crf.main(["--tutorial", "--crfsuite-settings", "tutorial,bogus"])
    assert e.value.code == 2


def test_bench_tutorial_peer_all_states_weights_every_pair():
    """The peer's ``all_possible_states`` reaches CRFsuite: without it the model's state weights are the (attribute,
    label) pairs seen in training, with it every pair (as mmprog's state block always is), both recomputed here from
    the data."""
    pytest.importorskip("pycrfsuite")
    from mmprog.bench.crf import SETTINGS, PyCRFsuiteCRF
    X = [[["a", "b"], ["c"]], [["b"], ["a", "c"]], [["c"], ["b"]], [["a"], ["a"]]]
    y = [["P", "Q"], ["Q", "R"], ["P", "R"], ["R", "P"]]
    seen = {(f, t) for xs, ys in zip(X, y) for fs, t in zip(xs, ys) for f in fs}
    every = {(f, t) for f in "abc" for t in "PQR"}
    assert seen < every
    for all_states, want in ((False, seen), (True, every)):
        est = PyCRFsuiteCRF(c1=0.0, c2=0.1, max_iterations=50, all_possible_states=all_states).fit(X, y)
        assert set(est.tagger_.info().state_features) == want
    assert SETTINGS["all-states"]["all_possible_states"] is True


def json_route(row):
    import json
    return json.loads(row["route"])
