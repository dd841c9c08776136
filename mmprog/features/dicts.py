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
from array import array

import numpy as np
import scipy.sparse as sp

from ..exceptions import DataError, ParameterError
from .base import csr_rows

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


def _walk(X, intern, transform):
    """One pass over X: the id of every (token, attribute) item in traversal order, its value, and where each token
    and sentence ends (in items and in tokens).

    ``intern(attribute, group key)`` gives an attribute's id (-1: drop it); it is called once per distinct
    (key, value) of the common entries (a str key with a str, float, int or bool value), which are cached here, and
    once per item otherwise (nested dicts, lists, non-str keys, numpy scalars, tokens that are not plain dicts go
    through :func:`_items`, so their names and errors are that function's). ``transform``: an empty sentence is an
    error, raised when it is reached (as :meth:`TokenDictExtractor.transform` did before this pass existed).
    """
    # typed arrays, not lists: 12 bytes an item (an attribute id < 2**31, a float) where lists hold 16 bytes of
    # pointers and a float object per number
    ids, vals, tok_end, sent_end = array("i"), array("d"), array("q"), array("q")
    ids_append, vals_append, tok_end_append = ids.append, vals.append, tok_end.append
    by_str, by_num = {}, {}          # key -> {str value -> id}; key -> id (a number's attribute is its key)
    for i, sent in enumerate(X):
        if transform and len(sent) == 0:
            raise DataError(f"sentence {i} is empty; drop empty sentences")
        for t, tok in enumerate(sent):
            if type(tok) is dict:
                for k, v in tok.items():
                    tv = type(v)
                    if type(k) is not str:
                        pass
                    elif tv is str:
                        c = by_str.get(k)
                        if c is None:
                            c = by_str[k] = {}
                        j = c.get(v)
                        if j is None:
                            j = c[v] = intern(k + ":" + v, k)
                        ids_append(j)
                        vals_append(1.0)
                        continue
                    elif tv is float or tv is int or tv is bool:
                        j = by_num.get(k)
                        if j is None:
                            j = by_num[k] = intern(k, k)
                        ids_append(j)
                        vals_append(float(v))
                        continue
                    name = str(k)
                    for f, x in _value_items(name, v, f"sentence {i}, token {t}"):
                        ids_append(intern(f, name))
                        vals_append(x)
            else:
                for f, g, x in _items(tok, i, t):
                    ids_append(intern(f, g))
                    vals_append(x)
            tok_end_append(len(ids))
        sent_end.append(len(tok_end))
    return (np.frombuffer(ids, dtype=np.int32), np.frombuffer(vals, dtype=np.float64),
            np.frombuffer(tok_end, dtype=np.int64), np.frombuffer(sent_end, dtype=np.int64))


def _matrices(cols, vals, tok_end, sent_end, n_features):
    """Per sentence the (T_i, n_features) CSR matrix of the items with a column (>= 0) and a non-zero value.

    Built as one CSR matrix of all tokens, made canonical by scipy (indices sorted within a row, repeated
    attributes of a token summed: the same sparsetools calls, row by row on the same entries, that the per-sentence
    ``csr_matrix((vals, (rows, cols)))`` of the former transform made), then cut into sentences that are row views
    of it (:func:`~mmprog.features.base.csr_rows`), as a template extractor's are.
    """
    keep = vals != 0.0
    keep &= cols >= 0
    n_tok = len(tok_end)
    cum = np.cumsum(keep, dtype=np.int32 if len(keep) < np.iinfo(np.int32).max else np.int64)
    indptr = np.zeros(n_tok + 1, dtype=np.int64)
    ends = tok_end > 0
    indptr[1:][ends] = cum[tok_end[ends] - 1]
    del cum
    idx = np.int32 if max(n_features, int(indptr[-1]), n_tok) < np.iinfo(np.int32).max else np.int64
    allm = sp.csr_matrix((vals[keep], cols[keep].astype(idx, copy=False), indptr.astype(idx)),
                         shape=(n_tok, n_features))
    del keep
    allm.sum_duplicates()
    out, t0 = [], 0
    for t1 in sent_end.tolist():
        # views of the one matrix, not copies: the chain map's prepare stacks them back into it without a copy
        # (features.base.stacked_view), where owned rows cost a second copy of every token row and vstack's transients
        m = csr_rows(allm, t0, t1)
        m.has_canonical_format = True            # rows of a canonical matrix
        out.append(m)
        t0 = t1
    return out


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
        self._fit(X, transform=False)
        return self

    def fit_transform(self, X):
        """``fit(X).transform(X)`` in one pass over the dicts: list of (T_i, n_features_) CSR matrices."""
        return self._fit(X, transform=True)

    def _fit(self, X, transform):
        if not isinstance(self.min_count, (int, np.integer)) or self.min_count < 1:
            raise ParameterError(f"min_count must be an int >= 1; got {self.min_count!r}")
        attr, names, group_of, groups = {}, [], [], {}

        def intern(f, g):                       # ids in first-seen order; the group of the key that first gave f
            j = attr.get(f)
            if j is None:
                j = attr[f] = len(names)
                names.append(f)
                group_of.append(groups.setdefault(g, len(groups)))
            return j

        ids, vals, tok_end, sent_end = _walk(X, intern, transform=False)
        group_of = np.array(group_of, dtype=np.int64)
        kept = np.flatnonzero(np.bincount(ids, minlength=len(names)) >= self.min_count)
        kept = kept[np.argsort(group_of[kept], kind="stable")]   # by group; within a group, first-seen order
        self._set_vocabulary([names[j] for j in kept.tolist()], list(groups), group_of[kept])
        if not transform:
            return None
        starts = np.concatenate(([0], sent_end[:-1]))
        empty = np.flatnonzero(sent_end == starts)
        if len(empty):
            raise DataError(f"sentence {int(empty[0])} is empty; drop empty sentences")
        col = np.full(len(names), -1, dtype=np.int32)
        col[kept] = np.arange(len(kept), dtype=np.int32)
        return _matrices(col[ids], vals, tok_end, sent_end, self.n_features_)

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
        get = self.vocabulary_.get
        cols, vals, tok_end, sent_end = _walk(X, lambda f, g: get(f, -1), transform=True)
        return _matrices(cols, vals, tok_end, sent_end, self.n_features_)

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
