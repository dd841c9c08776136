"""The validated data model of mmprog.

Four containers, all validated on construction (one-line :class:`~mmprog.exceptions.DataError` naming the example
and the problem) and all indexable the same way:

* :class:`SequenceDataset` — chains: per sequence a feature matrix X_i (T_i × d) and labels y_i (T_i,), −1 marking
  an unobserved (hidden) position (the partially observed setting of PoMEN, Zhu, Xing & Zhang, NIPS 2008).
* :class:`TreeDataset` — dependency trees: token columns (form, lemma, cpos, pos, ...) and gold heads, 0 = root.
* :class:`HierarchicalDataset` — forests of nodes with features, parents and labels (the two-level web-extraction
  hierarchies of the PoMEN paper, section 4).
* :class:`TokenCorpus` — token columns as strings with string labels, before feature extraction (CoNLL, SIGHAN).

Indexing (all four): ``ds[i]`` with an integer returns one example as a tuple (``(x, y)``, ``(sentence, heads)``,
``(x, parents, y)``, ``(sentence, labels)``); a slice, an integer array or a boolean mask returns a container of the
same kind carrying names, groups, fold ids and ``info``. ``folds(k, seed)`` gives shuffled k-fold splits and
``folds()`` the source's own folds (``fold_ids``).
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from ..exceptions import DataError, ParameterError

__all__ = ["SequenceDataset", "TreeDataset", "HierarchicalDataset", "TokenCorpus"]


# ---------------------------------------------------------------------------------------------- shared machinery
class _Collection:
    """Indexing, subsets and folds shared by every container. Subclasses set ``self._n`` and implement
    ``_item(i)`` (one example) and ``_take(idx)`` (a container of the examples ``idx``, not re-validated)."""

    _n: int
    fold_ids: np.ndarray | None
    name: str | None
    info: dict

    def __len__(self) -> int:
        return self._n

    def __iter__(self):
        for i in range(self._n):
            yield self._item(i)

    def _resolve(self, key) -> np.ndarray:
        """Turn a slice / int array / bool mask into int64 indices (in the given order), checking bounds."""
        n = self._n
        if isinstance(key, slice):
            return np.arange(n, dtype=np.int64)[key]
        idx = np.asarray(key)
        if idx.ndim != 1:
            raise IndexError(f"index must be an int, a slice, or a 1-D int array / bool mask; got shape {idx.shape}")
        if idx.dtype == bool:
            if idx.shape[0] != n:
                raise IndexError(f"boolean mask has length {idx.shape[0]} but the {type(self).__name__} has {n} "
                                 f"examples")
            return np.flatnonzero(idx).astype(np.int64)
        if idx.size == 0:
            return np.zeros(0, dtype=np.int64)
        if idx.dtype.kind not in "iu":
            raise IndexError(f"index array must hold integers or booleans; got dtype {idx.dtype}")
        idx = idx.astype(np.int64)
        if idx.min() < -n or idx.max() >= n:
            bad = idx[(idx < -n) | (idx >= n)][0]
            raise IndexError(f"index {bad} is out of range for a {type(self).__name__} of {n} examples")
        return np.where(idx < 0, idx + n, idx)

    def __getitem__(self, key):
        if isinstance(key, (bool, np.bool_)):
            raise IndexError("a single boolean is not an index; use a boolean mask of one entry per example")
        if isinstance(key, (int, np.integer)):
            i = int(key)
            if i < -self._n or i >= self._n:
                raise IndexError(f"index {i} is out of range for a {type(self).__name__} of {self._n} examples")
            return self._item(i % self._n if self._n else i)
        return self._take(self._resolve(key))

    def subset(self, idx):
        """A container of the same kind holding the examples ``idx`` (int array, slice or bool mask)."""
        if isinstance(idx, (int, np.integer)) and not isinstance(idx, (bool, np.bool_)):
            idx = [int(idx)]
        return self._take(self._resolve(idx))

    def folds(self, k: int | None = None, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
        """Cross-validation splits.

        Parameters
        ----------
        k : int, optional
            Number of folds of a shuffled k-fold split (2 ≤ k ≤ n). If omitted, the source's own folds are used
            (``fold_ids``, e.g. the 10 OCR folds), one split per distinct fold id in increasing order.
        seed : int
            Seed of the shuffle (ignored for the source's folds).

        Returns
        -------
        list of (train_idx, test_idx)
            k pairs of sorted int64 index arrays; every example is in exactly one test part. Papers that train on
            one fold and test on the rest (Taskar et al. 2003; Zhu et al. 2009) swap the two.
        """
        n = self._n
        if k is None:
            if self.fold_ids is None:
                raise ParameterError(f"k must be given: this {type(self).__name__} has no fold_ids of its own")
            ids = np.asarray(self.fold_ids)
            out = []
            for f in np.unique(ids):
                test = np.flatnonzero(ids == f).astype(np.int64)
                train = np.flatnonzero(ids != f).astype(np.int64)
                out.append((train, test))
            return out
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 2 <= int(k) <= n:
            raise ParameterError(f"k must be an int in [2, {n}] (the number of examples); got {k!r}")
        perm = np.random.default_rng(seed).permutation(n)
        out = []
        for part in np.array_split(perm, int(k)):
            test = np.sort(part).astype(np.int64)
            mask = np.ones(n, dtype=bool)
            mask[test] = False
            out.append((np.flatnonzero(mask).astype(np.int64), test))
        return out

    def _take_common(self, new, idx):
        new.fold_ids = None if self.fold_ids is None else self.fold_ids[idx]
        new.name = self.name
        new.info = dict(self.info)
        return new


def _who(kind: str, name) -> str:
    return f"{kind} {name!r}" if name else kind


def _check_n_labels(n_labels, who) -> int:
    if isinstance(n_labels, (bool, np.bool_)) or not isinstance(n_labels, (int, np.integer)) or n_labels < 1:
        raise DataError(f"{who}: n_labels must be an int ≥ 1; got {n_labels!r}")
    return int(n_labels)


def _check_fold_ids(fold_ids, n, who):
    if fold_ids is None:
        return None
    f = np.asarray(fold_ids)
    if f.shape != (n,) or (f.size and f.dtype.kind not in "iu"):
        raise DataError(f"{who}: fold_ids must be an int array of one fold id per example, shape ({n},); "
                        f"got dtype {f.dtype} shape {f.shape}")
    return f.astype(np.int64)


def _check_matrix(x, i, who, unit, width):
    """Validate one feature matrix; return it as float CSR or float ndarray (ints/bools become float64)."""
    if sp.issparse(x):
        if not isinstance(x, sp.csr_matrix):  # other formats, and sparse *arrays* (whose row indexing differs)
            x = sp.csr_matrix(x)
        kind = x.dtype.kind
        if kind in "biu":
            x = x.astype(np.float64)
        elif kind != "f":
            raise DataError(f"{who}: {unit} {i}: X has dtype {x.dtype}; features must be real numbers")
        if x.data.size and not np.isfinite(x.data).all():
            raise DataError(f"{who}: {unit} {i}: X contains NaN or inf; replace them with finite values")
    else:
        if not isinstance(x, np.ndarray) or isinstance(x, np.matrix):
            try:
                x = np.asarray(x)
            except ValueError:  # ragged nested lists
                raise DataError(f"{who}: {unit} {i}: X is ragged; every row must have the same width") from None
        kind = x.dtype.kind
        if kind in "biu":
            x = x.astype(np.float64)
        elif kind != "f":
            raise DataError(f"{who}: {unit} {i}: X has dtype {x.dtype}; features must be a float (or int/bool) "
                            f"array or a scipy.sparse matrix")
        if x.ndim != 2:
            raise DataError(f"{who}: {unit} {i}: X must be 2-D (rows × features); got shape {x.shape}")
        if not np.isfinite(x).all():
            r = int(np.argwhere(~np.isfinite(x))[0][0])
            raise DataError(f"{who}: {unit} {i}: X contains NaN or inf (row {r}); replace them with finite values")
    if x.shape[0] == 0:
        raise DataError(f"{who}: {unit} {i}: empty (0 rows); drop empty examples before building the dataset")
    if width is not None and x.shape[1] != width:
        raise DataError(f"{who}: {unit} {i}: X has {x.shape[1]} features but {unit} 0 has {width}; all examples "
                        f"must have the same feature width")
    return x


def _check_labels(y, i, who, unit, row, T, n_labels):
    """Validate one label vector against its length T and [-1, n_labels); return it as int64."""
    y = np.asarray(y)
    kind = y.dtype.kind
    if kind in "OUS":
        raise DataError(f"{who}: {unit} {i}: labels have dtype {y.dtype}; labels must be ints in [-1, {n_labels}) "
                        f"(map strings to ints, e.g. with TokenCorpus.to_sequence_dataset)")
    if kind == "b":
        raise DataError(f"{who}: {unit} {i}: labels are booleans; give int labels in [-1, {n_labels})")
    if kind == "f":
        if not np.isfinite(y).all():
            raise DataError(f"{who}: {unit} {i}: labels contain NaN or inf; use -1 for an unobserved label")
        if (y != np.round(y)).any():
            j = int(np.flatnonzero(y != np.round(y))[0])
            raise DataError(f"{who}: {unit} {i}: label at {row} {j} is {y[j]!r}, not an integer")
    elif kind not in "iu":
        raise DataError(f"{who}: {unit} {i}: labels have dtype {y.dtype}; labels must be ints in [-1, {n_labels})")
    if y.ndim != 1:
        raise DataError(f"{who}: {unit} {i}: labels must be 1-D; got shape {y.shape}")
    y = y.astype(np.int64, copy=False)
    if y.shape[0] != T:
        raise DataError(f"{who}: {unit} {i}: X has {T} rows but Y has {y.shape[0]} labels; they must match")
    bad = (y < -1) | (y >= n_labels)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise DataError(f"{who}: {unit} {i}: label {int(y[j])} at {row} {j} is outside [-1, {n_labels}) "
                        f"(n_labels={n_labels}; -1 marks an unobserved label)")
    return y


def _check_xy(X, Y, n_labels, who, unit, row):
    if isinstance(X, (np.ndarray,)) and X.ndim == 2 or sp.issparse(X):
        raise DataError(f"{who}: X must be a list of per-{unit} matrices, not one matrix; wrap it as [X] for a "
                        f"single {unit}")
    X, Y = list(X), list(Y)
    if len(X) != len(Y):
        raise DataError(f"{who}: X has {len(X)} {unit}s but Y has {len(Y)}; give one label vector per {unit}")
    if not X:
        raise DataError(f"{who}: no {unit}s; a dataset needs at least one")
    Xs, Ys = [], []
    width = None
    for i, (x, y) in enumerate(zip(X, Y)):
        x = _check_matrix(x, i, who, unit, width)
        width = x.shape[1]
        Xs.append(x)
        Ys.append(_check_labels(y, i, who, unit, row, x.shape[0], n_labels))
    return Xs, Ys, width


def _check_feature_meta(d, groups, group_names, label_names, feature_names, n_labels, who):
    if groups is None:
        g = np.zeros(d, dtype=np.int64)
    else:
        g = np.asarray(groups)
        if g.shape != (d,):
            raise DataError(f"{who}: groups must have one template id per input feature, shape ({d},); "
                            f"got shape {g.shape}")
        if g.size and g.dtype.kind not in "iu":
            raise DataError(f"{who}: groups must be non-negative ints; got dtype {g.dtype}")
        g = g.astype(np.int64)
        if g.size and g.min() < 0:
            raise DataError(f"{who}: groups must be non-negative; feature {int(np.argmin(g))} has group "
                            f"{int(g.min())}")
    n_groups = int(g.max()) + 1 if g.size else 1
    if group_names is None:
        names = ["x"] if n_groups == 1 else [f"g{j}" for j in range(n_groups)]
    else:
        names = [str(s) for s in group_names]
        if len(names) < n_groups:
            raise DataError(f"{who}: group_names has {len(names)} names but groups uses ids up to {n_groups - 1}; "
                            f"give one name per group id")
    if label_names is not None:
        label_names = [str(s) for s in label_names]
        if len(label_names) != n_labels:
            raise DataError(f"{who}: label_names has {len(label_names)} names but n_labels is {n_labels}")
    if feature_names is not None:
        feature_names = [str(s) for s in feature_names]
        if len(feature_names) != d:
            raise DataError(f"{who}: feature_names has {len(feature_names)} names but X has {d} features")
    return g, names, label_names, feature_names


# ---------------------------------------------------------------------------------------------- SequenceDataset
class SequenceDataset(_Collection):
    """Sequences for linear-chain models: per sequence a feature matrix and a label vector.

    Parameters
    ----------
    X : list of ndarray or scipy.sparse matrix, each shape (T_i, d)
        Per-sequence input features. Dense float arrays and CSR matrices are kept as given (not copied); int and
        bool arrays become float64, other sparse formats and sparse arrays ``csr_matrix``.
    Y : list of array of int, each shape (T_i,)
        Labels in [0, n_labels), or −1 for an unobserved (hidden) position. Float arrays with integral values
        are accepted and converted.
    n_labels : int
        Number of labels K ≥ 1.
    groups : array of int, shape (d,), optional
        Template id of each input feature (default: all 0). Joint state features inherit it.
    label_names : list of str, optional
        One name per label (length n_labels).
    feature_names : list of str, optional
        One name per input feature (length d).
    group_names : list of str, optional
        One name per group id (default ``["x"]`` for a single group, else ``g0, g1, ...``).
    fold_ids : array of int, shape (n,), optional
        Fold of each sequence where the source defines folds.
    name : str, optional
        Dataset name (used in messages and reports).

    Attributes
    ----------
    X, Y : lists as above (Y as int64 arrays)
    n_labels : int
    n_features : int
        d.
    lengths : ndarray of int64, shape (n,)
        T_i.
    groups : ndarray of int64, shape (d,)
    group_names, label_names, feature_names, fold_ids, name
    info : dict
        Free-form provenance carried along subsets (source file, generator parameters, true weights).

    Raises
    ------
    DataError
        One line naming the sequence and the problem: X/Y count mismatch, empty sequence, length mismatch between
        X_i and Y_i, mixed feature widths, NaN/inf, wrong dtypes, labels outside [−1, n_labels), bad groups/names.
    """

    def __init__(self, X, Y, n_labels, groups=None, label_names=None, feature_names=None, group_names=None,
                 fold_ids=None, name=None):
        who = _who("SequenceDataset", name)
        self.n_labels = _check_n_labels(n_labels, who)
        self.X, self.Y, self.n_features = _check_xy(X, Y, self.n_labels, who, "sequence", "position")
        self._n = len(self.X)
        self.lengths = np.fromiter((x.shape[0] for x in self.X), dtype=np.int64, count=self._n)
        self.groups, self.group_names, self.label_names, self.feature_names = _check_feature_meta(
            self.n_features, groups, group_names, label_names, feature_names, self.n_labels, who)
        self.fold_ids = _check_fold_ids(fold_ids, self._n, who)
        self.name = name
        self.info = {}

    @property
    def is_sparse(self) -> bool:
        """True when the feature matrices are scipy.sparse (CSR)."""
        return bool(self._n) and sp.issparse(self.X[0])

    @property
    def n_tokens(self) -> int:
        """Total number of positions Σ T_i."""
        return int(self.lengths.sum())

    @property
    def n_observed(self) -> int:
        """Number of positions with an observed label (≠ −1)."""
        return int(sum(int((y >= 0).sum()) for y in self.Y))

    def observed(self, i: int) -> np.ndarray:
        """Boolean mask (T_i,) of the observed positions of sequence ``i``."""
        return self.Y[i] >= 0

    def hide_labels(self, fraction: float, seed: int = 0) -> "SequenceDataset":
        """A copy with a random ``fraction`` of the observed labels of every sequence set to −1 (hidden).

        Each sequence hides ``round(fraction · T_i)`` of its positions, drawn uniformly (the partially labelled OCR
        words of the PoMEN experiments).
        """
        if not 0.0 <= float(fraction) <= 1.0:
            raise ParameterError(f"fraction must be in [0, 1]; got {fraction!r}")
        rng = np.random.default_rng(seed)
        Y = []
        for y in self.Y:
            y = y.copy()
            k = int(round(float(fraction) * y.shape[0]))
            if k:
                y[rng.choice(y.shape[0], size=k, replace=False)] = -1
            Y.append(y)
        new = self._take(np.arange(self._n))
        new.Y = Y
        return new

    def _item(self, i):
        return self.X[i], self.Y[i]

    def _take(self, idx):
        new = object.__new__(SequenceDataset)
        new.X = [self.X[i] for i in idx]
        new.Y = [self.Y[i] for i in idx]
        new._n = len(idx)
        new.n_labels, new.n_features = self.n_labels, self.n_features
        new.lengths = self.lengths[idx]
        new.groups, new.group_names = self.groups, self.group_names
        new.label_names, new.feature_names = self.label_names, self.feature_names
        return self._take_common(new, idx)

    def __repr__(self):
        kind = "sparse" if self.is_sparse else "dense"
        return (f"SequenceDataset(name={self.name!r}, n={self._n}, tokens={self.n_tokens}, d={self.n_features}, "
                f"K={self.n_labels}, {kind})")


# ---------------------------------------------------------------------------------------------- TreeDataset
_TREE_FIRST = ("form", "lemma", "cpos", "pos")


def check_tree(h, n, i, who):
    """Check that ``h`` (n,) int64 is a tree over tokens 1..n with root 0; raise one-line DataError otherwise."""
    out = (h < 0) | (h > n)
    if out.any():
        j = int(np.flatnonzero(out)[0])
        raise DataError(f"{who}: sentence {i}: token {j + 1} has head {int(h[j])} outside [0, {n}] "
                        f"(0 = root, tokens are 1-based)")
    own = h == np.arange(1, n + 1)
    if own.any():
        raise DataError(f"{who}: sentence {i}: token {int(np.flatnonzero(own)[0]) + 1} is its own head (a cycle)")
    if not (h == 0).any():
        raise DataError(f"{who}: sentence {i}: no token has head 0; a tree needs at least one child of the root")
    # pointer doubling: after ⌈log2(n+1)⌉ squarings every token that reaches the root points at 0 (absorbing)
    p = np.concatenate([[0], h])
    for _ in range(max(1, math.ceil(math.log2(n + 1))) + 1):
        p = p[p]
    bad = np.flatnonzero(p[1:] != 0)
    if bad.size:
        full = np.concatenate([[0], h])
        j = int(bad[0]) + 1
        for _ in range(n):  # walk onto the cycle
            j = int(full[j])
        cycle = [j]
        k = int(full[j])
        while k != j:
            cycle.append(k)
            k = int(full[k])
        start = cycle.index(min(cycle))
        cycle = cycle[start:] + cycle[:start]
        path = " -> ".join(str(c) for c in cycle + [cycle[0]])
        raise DataError(f"{who}: sentence {i}: heads form a cycle ({path}, following token -> head), so token "
                        f"{cycle[0]} has no path to the root")


class TreeDataset(_Collection):
    """Dependency-parsed sentences: token columns and gold heads.

    Parameters
    ----------
    sentences : list of dict str -> list of str
        Per sentence its token columns, each a list of n_i strings. ``"form"`` and ``"pos"`` are required;
        ``"lemma"`` defaults to ``"_"`` (as in CoNLL files without lemmas) and ``"cpos"`` (coarse tag) to a copy of
        ``"pos"``. Other columns (``"feats"``, ``"deprel"``, ...) are kept. Columns are ordered form, lemma, cpos,
        pos, then the extras in the given order.
    heads : list of array of int, each shape (n_i,)
        Head of every token: 0 = the artificial root, otherwise the 1-based index of the head token.
    name : str, optional
    fold_ids : array of int, shape (n,), optional

    Attributes
    ----------
    sentences : list of dict
    heads : list of ndarray of int64, each (n_i,)
    lengths : ndarray of int64, shape (n,)
    fold_ids, name, info

    Raises
    ------
    DataError
        Exactly the tree constraints, naming the sentence (and token): every token has one head in [0, n_i], at
        least one token attaches to the root, no cycles (a token being its own head included); plus missing
        form/pos columns, columns of unequal length, non-string tokens, empty sentences, non-integer heads.
        Several root children are allowed (the UD v1.0 pre-release has such a sentence).
    """

    def __init__(self, sentences, heads, name=None, fold_ids=None):
        who = _who("TreeDataset", name)
        sentences, heads = list(sentences), list(heads)
        if len(sentences) != len(heads):
            raise DataError(f"{who}: {len(sentences)} sentences but {len(heads)} head vectors; give one per sentence")
        if not sentences:
            raise DataError(f"{who}: no sentences; a dataset needs at least one")
        sents, hs = [], []
        for i, (s, h) in enumerate(zip(sentences, heads)):
            if not isinstance(s, dict):
                raise DataError(f"{who}: sentence {i}: must be a dict column -> list of str; got {type(s).__name__}")
            for col in ("form", "pos"):
                if col not in s:
                    raise DataError(f"{who}: sentence {i}: missing column {col!r} (has {sorted(s)}); 'form' and "
                                    f"'pos' are required")
            n = len(s["form"])
            if n == 0:
                raise DataError(f"{who}: sentence {i}: empty (no tokens); drop empty sentences")
            cols = {}
            for col in _TREE_FIRST + tuple(c for c in s if c not in _TREE_FIRST):
                if col in s:
                    vals = s[col]
                    if isinstance(vals, str) or not all(isinstance(v, str) for v in vals):
                        raise DataError(f"{who}: sentence {i}: column {col!r} must be a list of str")
                    vals = list(vals)
                    if len(vals) != n:
                        raise DataError(f"{who}: sentence {i}: column {col!r} has {len(vals)} entries but 'form' "
                                        f"has {n}; all columns must have one entry per token")
                elif col == "lemma":
                    vals = ["_"] * n
                else:  # cpos
                    vals = list(s["pos"])
                cols[col] = vals
            h = np.asarray(h)
            if h.dtype.kind not in "iu" and not (h.dtype.kind == "f" and np.isfinite(h).all()
                                                 and (h == np.round(h)).all()):
                raise DataError(f"{who}: sentence {i}: heads must be integers; got dtype {h.dtype}")
            if h.ndim != 1 or h.shape[0] != n:
                raise DataError(f"{who}: sentence {i}: {n} tokens but {h.size if h.ndim == 1 else h.shape} heads; "
                                f"give one head per token")
            h = h.astype(np.int64, copy=False)
            check_tree(h, n, i, who)
            sents.append(cols)
            hs.append(h)
        self.sentences, self.heads = sents, hs
        self._n = len(sents)
        self.lengths = np.fromiter((len(h) for h in hs), dtype=np.int64, count=self._n)
        self.fold_ids = _check_fold_ids(fold_ids, self._n, who)
        self.name = name
        self.info = {}

    @property
    def n_tokens(self) -> int:
        """Total number of tokens Σ n_i."""
        return int(self.lengths.sum())

    @property
    def columns(self) -> list[str]:
        """Column names of the first sentence (form, lemma, cpos, pos, then extras)."""
        return list(self.sentences[0]) if self._n else []

    def projective(self) -> np.ndarray:
        """Boolean (n,): whether each tree is projective (no two arcs cross, the root arcs from position 0
        included), i.e. whether Eisner's algorithm can produce it."""
        out = np.ones(self._n, dtype=bool)
        for i, h in enumerate(self.heads):
            m = np.arange(1, h.shape[0] + 1)
            lo, hi = np.minimum(h, m), np.maximum(h, m)
            # arcs a, b cross iff lo_a < lo_b < hi_a < hi_b
            cross = (lo[:, None] < lo[None, :]) & (lo[None, :] < hi[:, None]) & (hi[:, None] < hi[None, :])
            out[i] = not cross.any()
        return out

    def _item(self, i):
        return self.sentences[i], self.heads[i]

    def _take(self, idx):
        new = object.__new__(TreeDataset)
        new.sentences = [self.sentences[i] for i in idx]
        new.heads = [self.heads[i] for i in idx]
        new._n = len(idx)
        new.lengths = self.lengths[idx]
        return self._take_common(new, idx)

    def __repr__(self):
        return f"TreeDataset(name={self.name!r}, n={self._n}, tokens={self.n_tokens})"


# ---------------------------------------------------------------------------------------------- HierarchicalDataset
class HierarchicalDataset(_Collection):
    """Forests of labelled nodes (e.g. the two-level web-extraction hierarchies of PoMEN, NIPS 2008, section 4).

    Parameters
    ----------
    X : list of ndarray or scipy.sparse matrix, each shape (N_i, d)
        Node features of each example.
    parents : list of array of int, each shape (N_i,)
        Parent of every node: −1 for a root, otherwise the index of a node that comes *earlier* (parents precede
        children, so the nodes are in topological order and form a forest; node 0 is always a root).
    Y : list of array of int, each shape (N_i,)
        Node labels in [0, n_labels), −1 for hidden (e.g. inner nodes in the partially observed setting).
    n_labels : int
    groups, label_names, feature_names, group_names, fold_ids, name
        As in :class:`SequenceDataset`.

    Attributes
    ----------
    X, parents, Y, n_labels, n_features, lengths (= N_i, also ``sizes``), groups, group_names, label_names,
    feature_names, fold_ids, name, info

    Raises
    ------
    DataError
        As :class:`SequenceDataset` (naming the example and node), plus parents of the wrong length or dtype,
        a parent outside [−1, j) for node j.
    """

    def __init__(self, X, parents, Y, n_labels, groups=None, label_names=None, feature_names=None,
                 group_names=None, fold_ids=None, name=None):
        who = _who("HierarchicalDataset", name)
        self.n_labels = _check_n_labels(n_labels, who)
        self.X, self.Y, self.n_features = _check_xy(X, Y, self.n_labels, who, "example", "node")
        parents = list(parents)
        if len(parents) != len(self.X):
            raise DataError(f"{who}: X has {len(self.X)} examples but parents has {len(parents)}")
        ps = []
        for i, p in enumerate(parents):
            p = np.asarray(p)
            N = self.X[i].shape[0]
            if p.dtype.kind not in "iu" or p.ndim != 1:
                raise DataError(f"{who}: example {i}: parents must be a 1-D int array; got dtype {p.dtype} "
                                f"shape {p.shape}")
            if p.shape[0] != N:
                raise DataError(f"{who}: example {i}: X has {N} nodes but parents has {p.shape[0]} entries")
            p = p.astype(np.int64, copy=False)
            bad = (p < -1) | (p >= np.arange(N))
            if bad.any():
                j = int(np.flatnonzero(bad)[0])
                raise DataError(f"{who}: example {i}: node {j} has parent {int(p[j])}; a parent must be -1 (root) or "
                                f"an earlier node in [0, {j}) so that parents precede children")
            ps.append(p)
        self.parents = ps
        self._n = len(self.X)
        self.lengths = np.fromiter((x.shape[0] for x in self.X), dtype=np.int64, count=self._n)
        self.groups, self.group_names, self.label_names, self.feature_names = _check_feature_meta(
            self.n_features, groups, group_names, label_names, feature_names, self.n_labels, who)
        self.fold_ids = _check_fold_ids(fold_ids, self._n, who)
        self.name = name
        self.info = {}

    @property
    def sizes(self) -> np.ndarray:
        """Number of nodes N_i of every example (same as ``lengths``)."""
        return self.lengths

    @property
    def is_sparse(self) -> bool:
        return bool(self._n) and sp.issparse(self.X[0])

    @property
    def n_observed(self) -> int:
        """Number of nodes with an observed label."""
        return int(sum(int((y >= 0).sum()) for y in self.Y))

    def observed(self, i: int) -> np.ndarray:
        """Boolean mask (N_i,) of the observed nodes of example ``i``."""
        return self.Y[i] >= 0

    def leaf_mask(self, i: int) -> np.ndarray:
        """Boolean mask (N_i,) of the nodes of example ``i`` that have no children."""
        p = self.parents[i]
        has_child = np.zeros(p.shape[0], dtype=bool)
        has_child[p[p >= 0]] = True
        return ~has_child

    def depth(self, i: int) -> np.ndarray:
        """Depth (N_i,) of every node of example ``i`` (roots 0); one pass since parents precede children."""
        p = self.parents[i]
        d = np.zeros(p.shape[0], dtype=np.int64)
        for j in range(p.shape[0]):
            if p[j] >= 0:
                d[j] = d[p[j]] + 1
        return d

    def _item(self, i):
        return self.X[i], self.parents[i], self.Y[i]

    def _take(self, idx):
        new = object.__new__(HierarchicalDataset)
        new.X = [self.X[i] for i in idx]
        new.parents = [self.parents[i] for i in idx]
        new.Y = [self.Y[i] for i in idx]
        new._n = len(idx)
        new.n_labels, new.n_features = self.n_labels, self.n_features
        new.lengths = self.lengths[idx]
        new.groups, new.group_names = self.groups, self.group_names
        new.label_names, new.feature_names = self.label_names, self.feature_names
        return self._take_common(new, idx)

    def __repr__(self):
        return (f"HierarchicalDataset(name={self.name!r}, n={self._n}, nodes={int(self.lengths.sum())}, "
                f"d={self.n_features}, K={self.n_labels})")


# ---------------------------------------------------------------------------------------------- TokenCorpus
class TokenCorpus(_Collection):
    """Tokenised text with string columns and string labels, before feature extraction.

    The template extractor (:mod:`mmprog.features.templates`) reads ``sentences`` (column order matters: CRF++
    templates address columns by index) and ``labels``; :meth:`to_sequence_dataset` then pairs its feature
    matrices with integer labels.

    Parameters
    ----------
    sentences : list of dict str -> list of str
        Token columns of each sentence (every sentence has the same columns, in the same order).
    labels : list of list of str, or None
        One label per token; None for unlabelled text (e.g. a raw test file).
    columns : sequence of str, optional
        Column names in order (default: those of the first sentence).
    label_column : str, optional
        Name of the column the labels came from (e.g. ``"chunk"``, ``"ne"``, ``"tag"``).
    name : str, optional
    fold_ids : array of int, optional
    source_lines : array of int, shape (n,), optional
        1-based line of the file where each sentence starts (for messages and for writing output in file order).

    Raises
    ------
    DataError
        Naming the sentence: missing or extra columns, columns of unequal length, non-string entries, empty
        sentences, label lists of the wrong length.
    """

    def __init__(self, sentences, labels=None, columns=None, label_column=None, name=None, fold_ids=None,
                 source_lines=None):
        who = _who("TokenCorpus", name)
        sentences = list(sentences)
        if labels is not None:
            labels = list(labels)
            if len(labels) != len(sentences):
                raise DataError(f"{who}: {len(sentences)} sentences but {len(labels)} label lists")
        if columns is None:
            columns = tuple(sentences[0]) if sentences else ()
        self.columns = tuple(str(c) for c in columns)
        for i, s in enumerate(sentences):
            if not isinstance(s, dict) or tuple(s) != self.columns:
                got = tuple(s) if isinstance(s, dict) else type(s).__name__
                raise DataError(f"{who}: sentence {i}: columns {got} differ from {self.columns}; every sentence "
                                f"needs the same columns in the same order")
            n = len(s[self.columns[0]]) if self.columns else 0
            if n == 0:
                raise DataError(f"{who}: sentence {i}: empty (no tokens); drop empty sentences")
            for c in self.columns:
                v = s[c]
                if isinstance(v, str) or len(v) != n or not all(isinstance(t, str) for t in v):
                    raise DataError(f"{who}: sentence {i}: column {c!r} must be a list of {n} strings (one per token)")
            if labels is not None:
                lab = labels[i]
                if isinstance(lab, str) or len(lab) != n or not all(isinstance(t, str) for t in lab):
                    raise DataError(f"{who}: sentence {i}: labels must be a list of {n} strings (one per token); got "
                                    f"{type(lab).__name__} of length {len(lab)}")
        self.sentences = sentences
        self.labels = labels
        self.label_column = label_column
        self._n = len(sentences)
        first = self.columns[0] if self.columns else None
        self.lengths = np.fromiter((len(s[first]) for s in sentences), dtype=np.int64, count=self._n)
        self.fold_ids = _check_fold_ids(fold_ids, self._n, who)
        self.source_lines = None if source_lines is None else np.asarray(source_lines, dtype=np.int64)
        self.name = name
        self.info = {}

    @property
    def n_tokens(self) -> int:
        """Total number of tokens."""
        return int(self.lengths.sum())

    def label_set(self) -> list[str]:
        """Sorted list of the distinct labels (empty when unlabelled)."""
        if self.labels is None:
            return []
        return sorted({t for lab in self.labels for t in lab})

    def to_sequence_dataset(self, X_list, label_names=None, groups=None, group_names=None, feature_names=None,
                            name=None, unknown="error") -> SequenceDataset:
        """Pair per-sentence feature matrices with the labels mapped to ints.

        Parameters
        ----------
        X_list : list of ndarray or scipy.sparse matrix, each (n_i, d)
            Features of each sentence (e.g. from the template extractor).
        label_names : list of str, optional
            Label order (label k is ``label_names[k]``). Default :meth:`label_set` — pass the *training* label
            names when converting a test corpus so that both use the same ints. Required for unlabelled corpora.
        groups, group_names, feature_names : optional
            Passed to :class:`SequenceDataset`.
        name : str, optional
            Default: the corpus name.
        unknown : {"error", "hide"} or str
            What to do with a label missing from ``label_names`` (a test corpus can hold labels its training
            corpus never saw, e.g. ``I-LST`` in CoNLL-2000 test): raise, make it −1 (unobserved), or map it to the
            named label (e.g. ``"O"``).

        Returns
        -------
        SequenceDataset
            Labels as ints; unlabelled corpora get −1 everywhere.

        Raises
        ------
        DataError
            If a label is not in ``label_names`` (naming sentence, token and label).
        """
        if label_names is None:
            if self.labels is None:
                raise DataError("to_sequence_dataset: this corpus has no labels; pass label_names (the training "
                                "corpus's label_set())")
            label_names = self.label_set()
        label_names = [str(s) for s in label_names]
        index = {s: k for k, s in enumerate(label_names)}
        if unknown == "error":
            fallback = None
        elif unknown == "hide":
            fallback = -1
        elif unknown in index:
            fallback = index[unknown]
        else:
            raise ParameterError(f"unknown must be 'error', 'hide' or one of label_names {label_names}; "
                                 f"got {unknown!r}")
        Y = []
        for i in range(self._n):
            if self.labels is None:
                Y.append(np.full(int(self.lengths[i]), -1, dtype=np.int64))
                continue
            lab = self.labels[i]
            if fallback is not None:
                Y.append(np.fromiter((index.get(t, fallback) for t in lab), dtype=np.int64, count=len(lab)))
                continue
            try:
                Y.append(np.fromiter((index[t] for t in lab), dtype=np.int64, count=len(lab)))
            except KeyError as exc:
                j = list(lab).index(exc.args[0])
                line = f" (file line {int(self.source_lines[i]) + j})" if self.source_lines is not None else ""
                raise DataError(f"{_who('TokenCorpus', self.name)}: sentence {i}, token {j}{line}: label "
                                f"{exc.args[0]!r} is not in label_names {label_names}; pass unknown='hide' or "
                                f"unknown='O' to map unseen labels") from None
        if len(X_list) != self._n:
            raise DataError(f"to_sequence_dataset: {len(X_list)} feature matrices for {self._n} sentences")
        ds = SequenceDataset(X_list, Y, len(label_names), groups=groups, label_names=label_names,
                             feature_names=feature_names, group_names=group_names, fold_ids=self.fold_ids,
                             name=name if name is not None else self.name)
        ds.info = dict(self.info)
        return ds

    def _item(self, i):
        return self.sentences[i], (None if self.labels is None else self.labels[i])

    def _take(self, idx):
        new = object.__new__(TokenCorpus)
        new.sentences = [self.sentences[i] for i in idx]
        new.labels = None if self.labels is None else [self.labels[i] for i in idx]
        new.columns, new.label_column = self.columns, self.label_column
        new._n = len(idx)
        new.lengths = self.lengths[idx]
        new.source_lines = None if self.source_lines is None else self.source_lines[idx]
        return self._take_common(new, idx)

    def __repr__(self):
        return (f"TokenCorpus(name={self.name!r}, n={self._n}, tokens={self.n_tokens}, columns={self.columns}, "
                f"labels={'none' if self.labels is None else len(self.label_set())})")

