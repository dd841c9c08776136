"""Token feature dicts, as sklearn-crfsuite and python-crfsuite take them, turned into sparse input features.

Each token is a dict ``{name: value}``: a string value gives the binary feature ``name=value``, a number (or bool)
the feature ``name`` with that value — CRFsuite's convention (``ItemSequence``). A token may also be a list of
feature strings (each a binary feature). Every distinct dict key is one feature group (for a string value, all its
``name=value`` features; the key is the template), so the multi-template programs weigh keys as they weigh CRF++
templates. Features not seen in training are dropped, as CRFsuite drops them.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..exceptions import DataError, ParameterError

__all__ = ["TokenDictExtractor"]


def _items(tok, i, t):
    """(feature string, group key, value) of one token."""
    if isinstance(tok, dict):
        for k, v in tok.items():
            if isinstance(v, str):
                yield f"{k}={v}", k, 1.0
            elif isinstance(v, (bool, np.bool_)):
                yield k, k, float(v)
            elif isinstance(v, (int, float, np.integer, np.floating)):
                yield k, k, float(v)
            else:
                raise DataError(f"sentence {i}, token {t}: feature {k!r} has a {type(v).__name__} value; use str, "
                                f"int, float or bool")
    elif isinstance(tok, (list, tuple)):
        for f in tok:
            yield str(f), str(f).split("=", 1)[0], 1.0
    else:
        raise DataError(f"sentence {i}, token {t} is a {type(tok).__name__}; give a dict of features or a list of "
                        f"feature strings")


class TokenDictExtractor:
    """Sparse input features of token dicts (see the module docstring).

    Parameters
    ----------
    min_count : int
        Keep features seen in at least this many training tokens.

    Attributes (after :meth:`fit`)
    ------------------------------
    n_features_ : int
    feature_names_ : list of str
        ``name=value`` or ``name``, grouped by key in the order keys were first seen.
    groups_ : ndarray, shape (n_features_,), int
        Group (key) index of every feature.
    group_names_ : list of str
    """

    def __init__(self, min_count=1):
        self.min_count = min_count

    def fit(self, X):
        """X: list of sentences, each a list of token dicts (or of lists of feature strings)."""
        if not isinstance(self.min_count, (int, np.integer)) or self.min_count < 1:
            raise ParameterError(f"min_count must be an int >= 1; got {self.min_count!r}")
        count, group_of = {}, {}
        groups = {}
        for i, sent in enumerate(X):
            for t, tok in enumerate(sent):
                for f, g, _ in _items(tok, i, t):
                    count[f] = count.get(f, 0) + 1
                    if f not in group_of:
                        group_of[f] = groups.setdefault(g, len(groups))
        kept = [f for f in count if count[f] >= self.min_count]
        kept.sort(key=lambda f: group_of[f])          # stable: within a group, first-seen order
        self.vocabulary_ = {f: j for j, f in enumerate(kept)}
        self.feature_names_ = kept
        self.n_features_ = len(kept)
        self.group_names_ = list(groups)
        self.groups_ = np.fromiter((group_of[f] for f in kept), dtype=np.int64, count=len(kept))
        return self

    def transform(self, X):
        """List of (T_i, n_features_) CSR matrices."""
        if not hasattr(self, "vocabulary_"):
            raise ParameterError("this TokenDictExtractor is not fitted; call fit(X) first")
        voc = self.vocabulary_
        out = []
        for i, sent in enumerate(X):
            if len(sent) == 0:
                raise DataError(f"sentence {i} is empty; drop empty sentences")
            rows, cols, vals = [], [], []
            for t, tok in enumerate(sent):
                for f, _, v in _items(tok, i, t):
                    j = voc.get(f)
                    if j is not None and v != 0.0:
                        rows.append(t)
                        cols.append(j)
                        vals.append(v)
            out.append(sp.csr_matrix((np.asarray(vals, dtype=np.float64), (rows, cols)),
                                     shape=(len(sent), self.n_features_)))
        return out
