"""Token feature dicts, as sklearn-crfsuite and python-crfsuite take them, turned into sparse input features.

Each token is a dict ``{name: value}`` named the way python-crfsuite's ``ItemSequence`` names its attributes, so
that a model's features read like a CRFsuite model's (``state_features_`` keys ``(attribute, label)``):

* a string value gives the binary attribute ``name:value``;
* a number or bool gives the attribute ``name`` with that value (``False`` is 0: the attribute is absent);
* a nested dict ``{sub: value}`` gives ``name:sub`` (string values ``name:sub:value``), recursively;
* a list or tuple of strings gives one binary attribute ``name:item`` per item.

A token may also be a list of attribute strings (each binary, taken as written). Every distinct top-level dict key is
one feature group (the template of all its attributes), so the multi-template programs weigh keys as they weigh
CRF++ templates; a bare attribute string's group is the text before its first ``:`` or ``=``. Attributes not seen in
training are dropped, as CRFsuite drops them.
"""
from __future__ import annotations

import re

import numpy as np
import scipy.sparse as sp

from ..exceptions import DataError, ParameterError

__all__ = ["TokenDictExtractor"]

_NUMBER = (int, float, np.integer, np.floating)


def _value_items(name, v, where):
    """(attribute, value) pairs of one dict entry (see the module docstring)."""
    if isinstance(v, str):
        yield f"{name}:{v}", 1.0
    elif isinstance(v, (bool, np.bool_)):
        yield name, float(v)
    elif isinstance(v, _NUMBER):
        yield name, float(v)
    elif isinstance(v, dict):
        for k2, v2 in v.items():
            yield from _value_items(f"{name}:{k2}", v2, where)
    elif isinstance(v, (list, tuple)) and all(isinstance(s, str) for s in v):
        for s in v:
            yield f"{name}:{s}", 1.0
    else:
        raise DataError(f"{where}: feature {name!r} has a {type(v).__name__} value; use str, int, float, bool, a "
                        f"dict of those or a list of str")


def _items(tok, i, t):
    """(attribute, group key, value) of one token."""
    where = f"sentence {i}, token {t}"
    if isinstance(tok, dict):
        for k, v in tok.items():
            for f, x in _value_items(str(k), v, where):
                yield f, str(k), x
    elif isinstance(tok, (list, tuple)):
        for f in tok:
            yield str(f), re.split("[:=]", str(f), maxsplit=1)[0], 1.0
    else:
        raise DataError(f"{where} is a {type(tok).__name__}; give a dict of features or a list of feature strings")


class TokenDictExtractor:
    """Sparse input features of token dicts (see the module docstring).

    Parameters
    ----------
    min_count : int
        Keep attributes seen in at least this many training tokens.

    Attributes (after :meth:`fit`)
    ------------------------------
    n_features_ : int
    feature_names_ : list of str
        The attributes (``name:value`` or ``name``), grouped by key in the order keys were first seen.
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
        self._set_vocabulary(kept, list(groups), [group_of[f] for f in kept])
        return self

    def _set_vocabulary(self, names, group_names, groups):
        self.vocabulary_ = {f: j for j, f in enumerate(names)}
        self.feature_names_ = list(names)
        self.n_features_ = len(names)
        self.group_names_ = list(group_names)
        self.groups_ = np.asarray(groups, dtype=np.int64).reshape(len(names))

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

    # ------------------------------------------------------------------ persistence (JSON + .npz, no pickle)
    def to_state(self):
        """(json_dict, arrays_dict) from which :meth:`from_state` rebuilds the fitted extractor."""
        if not hasattr(self, "vocabulary_"):
            raise ParameterError("this TokenDictExtractor is not fitted; call fit(X) first")
        js = {"kind": "token_dicts", "min_count": int(self.min_count), "group_names": self.group_names_}
        return js, {"feature_names": np.array(self.feature_names_, dtype=str), "groups": self.groups_}

    @classmethod
    def from_state(cls, js, arrays):
        """Rebuild a fitted extractor from :meth:`to_state` output; a mismatch raises ParameterError."""
        names = [str(s) for s in arrays["feature_names"]]
        groups = np.asarray(arrays["groups"])
        group_names = [str(g) for g in js["group_names"]]
        if groups.shape != (len(names),) or groups.dtype.kind not in "iu" \
                or (len(groups) and not 0 <= groups.min() <= groups.max() < len(group_names)):
            raise ParameterError(f"token-dict extractor: 'groups' must hold {len(names)} group indices in "
                                 f"[0, {len(group_names)}); got shape {groups.shape}, dtype {groups.dtype}")
        if len(set(names)) != len(names):
            raise ParameterError("token-dict extractor: 'feature_names' repeats a name")
        ex = cls(min_count=int(js["min_count"]))
        ex._set_vocabulary(names, group_names, groups)
        return ex
