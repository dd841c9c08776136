"""scikit-learn–compatible estimators over lists of per-sequence feature arrays and label arrays.

Hyper-parameters are stored untouched in ``__init__`` and validated in ``fit`` (messages name the parameter, its
allowed range and the value got); learned state has a trailing underscore.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator

from .exceptions import check_param


class M3N(BaseEstimator):
    """Max-margin Markov network for linear chains, P0 (``norm="l2"``) or the ℓ1 LP P1 (``norm="l1"``).

    Parameters
    ----------
    norm : {"l2", "l1"}
    C : float
        Slack weight, n-slack scale (objective Ω(w) + C Σᵢ ξᵢ).
    solver : str or None
        Registered solver name; None picks the default for the program's class.
    slack : {"n", "one"}
    eps : float
    max_iter : int
    n_labels : int or None
        Number of labels; None takes 1 + the largest label seen in ``fit``.

    Attributes
    ----------
    result_ : mmprog.result.Result
    coef_ : ndarray, shape (dim,)
    n_labels_ : int
    n_features_in_ : int
    """

    def __init__(self, norm="l2", C=1.0, solver=None, slack="n", eps=1e-3, max_iter=500, n_labels=None):
        self.norm = norm
        self.C = C
        self.solver = solver
        self.slack = slack
        self.eps = eps
        self.max_iter = max_iter
        self.n_labels = n_labels

    def _validate(self):
        check_param("norm", self.norm, self.norm in ("l2", "l1"), '"l2" or "l1"')
        check_param("C", self.C, isinstance(self.C, (int, float)) and np.isfinite(self.C) and self.C > 0,
                    "a finite float > 0")
        check_param("slack", self.slack, self.slack in ("n", "one"), '"n" or "one"')
        check_param("eps", self.eps, isinstance(self.eps, (int, float)) and self.eps > 0, "a float > 0")
        check_param("max_iter", self.max_iter, isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 1,
                    "an int >= 1")

    def _dataset(self, X, y=None):
        from .datasets.base import SequenceDataset
        X = list(X)
        if y is None:
            y = [np.zeros(np.shape(x)[0], dtype=np.int64) for x in X]
        return SequenceDataset(X, [np.asarray(v) for v in y], self.n_labels_)

    def fit(self, X, y):
        """X: list of (Tᵢ, d) arrays (dense or CSR); y: list of (Tᵢ,) int label arrays."""
        import mmprog
        self._validate()
        y = [np.asarray(v) for v in y]
        seen = int(max((v.max() for v in y if len(v)), default=0)) + 1
        self.n_labels_ = int(self.n_labels) if self.n_labels is not None else seen
        ds = self._dataset(X, y)
        self.n_features_in_ = ds.n_features
        self.result_ = mmprog.fit(ds, program="m3n" if self.norm == "l2" else "l1m3n", C=float(self.C),
                                  solver=self.solver, slack=self.slack, eps=float(self.eps),
                                  max_iter=int(self.max_iter))
        self.coef_ = self.result_.w
        return self

    def _check_fitted(self):
        if not hasattr(self, "result_"):
            from sklearn.exceptions import NotFittedError
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit(X, y) first")

    def predict(self, X):
        """List of (Tᵢ,) label arrays."""
        self._check_fitted()
        return self.result_.predict(self._dataset(X))

    def score(self, X, y):
        """Token (per-position) accuracy, 1 − Hamming error rate."""
        pred = self.predict(X)
        y = [np.asarray(v) for v in y]
        total = sum(len(v) for v in y)
        right = sum(int(np.sum(p == t)) for p, t in zip(pred, y))
        return right / max(total, 1)


class SequenceTagger(BaseEstimator):
    """A max-margin tagger with sklearn-crfsuite's interface: ``X`` is a list of sentences, each a list of token
    feature dicts (or lists of feature strings), ``y`` a list of lists of label strings.

    A CRFsuite user switches with one import (``from mmprog.estimators import SequenceTagger as CRF``) and keeps the
    feature functions. The dict keys are the feature groups (templates) of the multi-template programs.

    Parameters
    ----------
    program : str
        A registered program: ``"m3n"`` (structural SVM), ``"mtl"``, ``"pblock"``, ``"l1m3n"``, ...
    C : float
        Slack weight, n-slack scale.
    slack : {"n", "one"}, optional
        Default: the program's own.
    eps : float
        Violation tolerance of the stopping rule.
    max_iter : int
    drop_after : int or None
        Drop cuts inactive for this many rounds.
    min_count : int
        Keep features seen in at least this many training tokens.
    solver : str or None
    time_limit : float or None
        Wall-clock seconds for the fit.
    program_params : dict or None
        The program's own hyper-parameters (e.g. ``{"master": "dual"}``, ``{"p": 4/3}``).

    Attributes
    ----------
    result_ : mmprog.result.Result
    extractor_ : mmprog.features.dicts.TokenDictExtractor
    classes_ : list of str
        Label names (``result_`` predicts their indices).
    """

    def __init__(self, program="m3n", C=1.0, slack=None, eps=0.1, max_iter=500, drop_after=None, min_count=1,
                 solver=None, time_limit=None, program_params=None):
        self.program = program
        self.C = C
        self.slack = slack
        self.eps = eps
        self.max_iter = max_iter
        self.drop_after = drop_after
        self.min_count = min_count
        self.solver = solver
        self.time_limit = time_limit
        self.program_params = program_params

    def _dataset(self, X, y=None):
        from .datasets.base import SequenceDataset
        Xs = self.extractor_.transform(X)
        if y is None:
            Y = [np.full(x.shape[0], -1, dtype=np.int64) for x in Xs]
        else:
            index = {c: k for k, c in enumerate(self.classes_)}
            Y = [np.fromiter((index.get(t, -1) for t in lab), dtype=np.int64, count=len(lab)) for lab in y]
        return SequenceDataset(Xs, Y, len(self.classes_), groups=self.extractor_.groups_,
                               group_names=self.extractor_.group_names_, label_names=self.classes_)

    def fit(self, X, y):
        """X: list of sentences of token dicts; y: list of lists of label strings (same lengths)."""
        import mmprog
        from .features.dicts import TokenDictExtractor
        check_param("C", self.C, isinstance(self.C, (int, float)) and np.isfinite(self.C) and self.C > 0,
                    "a finite float > 0")
        check_param("eps", self.eps, isinstance(self.eps, (int, float)) and self.eps > 0, "a float > 0")
        check_param("max_iter", self.max_iter, isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 1,
                    "an int >= 1")
        X, y = list(X), [list(v) for v in y]
        check_param("y", f"{len(y)} label lists", len(y) == len(X), f"one label list per sentence ({len(X)})")
        for i, (x, v) in enumerate(zip(X, y)):
            check_param(f"y[{i}]", f"{len(v)} labels", len(v) == len(x), f"one label per token ({len(x)})")
        self.classes_ = sorted({t for v in y for t in v})
        self.extractor_ = TokenDictExtractor(min_count=self.min_count).fit(X)
        ds = self._dataset(X, y)
        self.n_features_in_ = ds.n_features
        self.result_ = mmprog.fit(ds, program=self.program, C=float(self.C), solver=self.solver, slack=self.slack,
                                  eps=float(self.eps), max_iter=int(self.max_iter), time_limit=self.time_limit,
                                  drop_after=self.drop_after, **dict(self.program_params or {}))
        return self

    _check_fitted = M3N._check_fitted

    def predict(self, X):
        """List of lists of label strings."""
        self._check_fitted()
        names = np.asarray(self.classes_, dtype=object)
        return [names[p].tolist() for p in self.result_.predict(self._dataset(list(X)))]

    def predict_single(self, xseq):
        """Labels of one sentence (sklearn-crfsuite's ``predict_single``)."""
        return self.predict([xseq])[0]

    def predict_marginals(self, X):
        """Per-token ``{label: marginal}`` dicts (forward-backward on the scores wᵀf, as sklearn-crfsuite returns)."""
        self._check_fitted()
        M = self.result_.predict_marginals(self._dataset(list(X)))
        return [[dict(zip(self.classes_, row.tolist())) for row in m] for m in M]

    def score(self, X, y):
        """Token accuracy (sklearn-crfsuite's ``score``)."""
        pred = self.predict(X)
        total = sum(len(v) for v in y)
        right = sum(a == b for p, t in zip(pred, y) for a, b in zip(p, t))
        return right / max(total, 1)


def __getattr__(name):
    if name == "LInfMaxMargin":
        from .linf import LInfMaxMargin
        return LInfMaxMargin
    raise AttributeError(f"module 'mmprog.estimators' has no attribute {name!r}")
