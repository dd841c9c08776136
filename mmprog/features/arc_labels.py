"""Dependency labels of a given tree: the per-arc multiclass structure of the labeller.

Given the heads of a tree (gold when training, the parser's when parsing), the label of the arc into token m is
chosen among the K dependency relations seen in training. The joint feature map is

    f(x, h, y) = Σ_m φ(x, h_m → m) ⊗ e_{y_m},

the arc features φ of :class:`~mmprog.features.arcs.ArcFeatureMap` (any of its templates, e.g. :data:`LABEL_PRESETS`)
conjoined with the label; only the (arc feature, label) pairs seen on the gold arcs of the training data are kept
(MSTParser's choice). The labels of different arcs do not interact, so the decoder is one argmax over K per arc and
the Hamming loss Δℓ(y) = #{m : y_m ≠ y*_m} decomposes over arcs, as does the loss-augmented argmax.

Trained by the registered program ``m3n`` (P0), this is the per-arc multiclass max-margin program: with a
decomposable loss, P0's slack of a sentence, ξ_i = max_y [Δℓ_i(y) − wᵀΔf_i(y)]₊, is the sum over its arcs of the
multiclass hinge max_l [1(l ≠ y*_m) − wᵀ(φ ⊗ e_{y*_m} − φ ⊗ e_l)] (each arc's term is ≥ 0 at l = y*_m), i.e. Crammer
& Singer's (2001) multiclass SVM with one slack per arc summed per sentence — no separate program module is needed
(McDonald, Lerman & Pereira, CoNLL-X 2006, label the arcs of the first-stage tree in the same two-stage way; they
add a chain over a head's children, which this map does not).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..exceptions import DataError, ModelFileError, ParameterError
from .arcs import ArcFeatureMap, resolve_templates
from .base import Prepared

__all__ = ["ArcLabelFeatureMap", "LABEL_PRESETS"]

#: Arc templates for labelling (the label is conjoined with each): the modifier's and the head's own fields, their
#: pairs with direction and distance, the modifier's POS context; lemma templates are dropped on files without one.
LABEL_PRESETS: dict[str, list[str]] = {
    "labels": ["mw", "mx", "mc", "ms", "mp", "mf", "ml", "hw", "hx", "hc", "hs", "hp", "hl",
               "mc|dd", "ms|dd", "hc/mc", "hs/ms", "hc/mc|dd", "hs/ms|dd", "hp/mp|dd", "hw/mc|dd", "hc/mw|dd",
               "hw/mw", "hl/ml", "mf/mc|dd", "hc/mc/mf|dd", "mc-1/mc/mc+1", "hc/hc+1/mc-1/mc|dd",
               "hc/mc+1|dd", "hc/mc-1|dd"],
}


class ArcLabelFeatureMap:
    """The labels of a tree's arcs as a joint feature map (see the module docstring).

    Parameters
    ----------
    templates : str or list of str, optional
        A key of :data:`LABEL_PRESETS` (default ``"labels"``) or arc template specs (:mod:`mmprog.features.arcs`).
    min_count : int
        Keep arc features and (feature, label) pairs seen at least this often on the gold arcs.

    Attributes (after :meth:`fit`)
    ------------------------------
    label_names : list of str
        The K relations (sorted); label id k is ``label_names[k]``.
    n_labels : int
    dim : int
        Number of kept (arc feature, label) pairs.
    groups : ndarray of int64, shape (dim,)
        Template of every joint feature; ``group_names`` are the templates.
    """

    kind = "arclabels"

    def __init__(self, templates=None, min_count=1):
        self.preset, templates = resolve_templates(templates, LABEL_PRESETS, "labels")
        self.templates = list(templates)
        self.min_count = min_count
        self._arcs = ArcFeatureMap(self.templates, min_count=min_count)
        self._fitted = False

    # ------------------------------------------------------------------ fitting
    @staticmethod
    def _relations(dataset):
        for i, s in enumerate(dataset.sentences):
            if "deprel" not in s:
                raise DataError(f"sentence {i} has no 'deprel' column; the labeller is trained on labelled trees "
                                f"(CoNLL-U/CoNLL-X DEPREL)")
        return [s["deprel"] for s in dataset.sentences]

    def fit(self, dataset):
        """Relations, arc feature dictionary and (feature, label) pairs from the gold arcs of ``dataset``.

        Returns
        -------
        self
        """
        rels = self._relations(dataset)
        names = sorted({r for rs in rels for r in rs if r != "_"})
        if not names:
            raise DataError("no token of the training data has a DEPREL (every value is '_'); the labeller needs "
                            "labelled trees")
        self.label_names = names
        self.n_labels = len(names)
        self._arcs.fit(dataset)
        self.templates = list(self._arcs.templates)
        B = self._arcs.tree_arc_matrix(dataset)
        y = self._label_ids(rels)
        rows = np.repeat(np.arange(B.shape[0]), np.diff(B.indptr))
        keep = y[rows] >= 0
        pairs = B.indices[keep].astype(np.int64) * self.n_labels + y[rows[keep]]
        # a feature that fires twice on one arc (in-between templates) counts once per arc here, as in the dictionary
        u, c = np.unique(pairs, return_counts=True)
        self._pairs = u[c >= self.min_count]
        self._finish()
        return self

    def _finish(self):
        self.dim = int(self._pairs.shape[0])
        self.groups = self._arcs.groups[self._pairs // self.n_labels].astype(np.int64)
        self.group_names = list(self._arcs.group_names)
        self._index = {r: k for k, r in enumerate(self.label_names)}
        self._fitted = True

    def _label_ids(self, rels):
        """Label id of every token (concatenated), -1 for '_' or a relation unseen in training."""
        idx = self._index if self._fitted else {r: k for k, r in enumerate(self.label_names)}
        return np.fromiter((idx.get(r, -1) for rs in rels for r in rs), dtype=np.int64,
                           count=sum(len(rs) for rs in rels))

    def _check_fitted(self):
        if not self._fitted:
            raise ParameterError("this ArcLabelFeatureMap is not fitted; call fit(labelled_treebank) first")

    # ------------------------------------------------------------------ prepare
    def prepare(self, dataset, heads=None):
        """Arc feature rows of the trees to label.

        Parameters
        ----------
        dataset : TreeDataset
        heads : list of int arrays, optional
            The trees whose arcs are labelled (default the dataset's heads; at parse time the parser's).

        Returns
        -------
        Prepared
            ``gold`` (S, T_max): label id of token m at column m − 1 (-1 where unknown or '_', and padding);
            ``data["B"]`` CSR (Σ n_i, arc-feature dim), row ``offsets[i] + m − 1`` = φ(x_i, h_m → m);
            ``data["offsets"]`` (S+1,).
        """
        self._check_fitted()
        if len(dataset) == 0:
            raise DataError("the dataset is empty; pass at least one sentence")
        lengths = np.asarray([len(s["form"]) for s in dataset.sentences], dtype=np.int64)
        B = self._arcs.tree_arc_matrix(dataset, heads)
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        T = int(lengths.max())
        gold = np.full((len(lengths), T), -1, dtype=np.int64)
        rels = [s.get("deprel", ["_"] * len(s["form"])) for s in dataset.sentences]
        sent = np.repeat(np.arange(len(lengths)), lengths)
        pos = np.arange(sent.shape[0]) - offsets[sent]
        gold[sent, pos] = self._label_ids(rels)
        return Prepared(n=len(lengths), lengths=lengths, gold=gold, data={"B": B, "offsets": offsets})

    # ------------------------------------------------------------------ scores and decoding
    def _weight_matrix(self, w):
        """w as a dense (arc-feature dim, K) matrix W[j, k] (zeros where the pair was never seen)."""
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.dim,):
            raise DataError(f"w has shape {w.shape}; this label feature map needs ({self.dim},)")
        W = np.zeros(self._arcs.dim * self.n_labels)
        W[self._pairs] = w
        return W.reshape(self._arcs.dim, self.n_labels)

    def _rows(self, prepared, idx):
        off = prepared.data["offsets"]
        n = prepared.lengths[idx]
        k = np.repeat(np.arange(idx.shape[0]), n)
        t = np.arange(k.shape[0]) - np.repeat(np.cumsum(n) - n, n)
        return k, t, off[idx][k] + t

    def scores(self, w, prepared, idx=None):
        """Label scores s[m−1, k] = wᵀ(φ(x_i, h_m → m) ⊗ e_k) of every arc: a list of (n_i, K) arrays."""
        self._check_fitted()
        idx = np.arange(prepared.n) if idx is None else np.asarray(idx, dtype=np.int64)
        k, t, rows = self._rows(prepared, idx)
        S = np.asarray(prepared.data["B"][rows] @ self._weight_matrix(w))
        ends = np.cumsum(prepared.lengths[idx])
        return np.split(S, ends[:-1]) if idx.shape[0] else []

    def decode(self, w, prepared, idx=None, loss_augmented=False, loss_weight=1.0):
        """Best labels per arc, argmax_k s[m, k] [+ loss_weight · 1(k ≠ y*_m)] (tokens with unknown gold get no
        loss term).

        Returns
        -------
        ndarray of int64, shape (len(idx), T)
            T = the longest sentence of ``idx``; -1 padding.
        """
        self._check_fitted()
        idx = np.arange(prepared.n) if idx is None else np.asarray(idx, dtype=np.int64)
        k, t, rows = self._rows(prepared, idx)
        S = np.asarray(prepared.data["B"][rows] @ self._weight_matrix(w))
        if loss_augmented:
            g = prepared.gold[idx[k], t]
            S = S + loss_weight * ((np.arange(self.n_labels)[None, :] != g[:, None]) & (g[:, None] >= 0))
        T = int(prepared.lengths[idx].max()) if idx.shape[0] else 0
        out = np.full((idx.shape[0], T), -1, dtype=np.int64)
        if k.shape[0]:
            out[k, t] = S.argmax(axis=1)
        return out

    # ------------------------------------------------------------------ features, ΔF and loss
    def _check_labels(self, prepared, idx, labelings):
        idx = np.asarray(idx, dtype=np.int64)
        lab = np.asarray(labelings)
        n = prepared.lengths[idx]
        if lab.ndim != 2 or lab.shape[0] != idx.shape[0] or (idx.shape[0] and lab.shape[1] < int(n.max())):
            raise DataError(f"labelings must be (len(idx), T) = ({idx.shape[0]}, >= {int(n.max()) if n.size else 0})"
                            f" label arrays; got shape {lab.shape}")
        return idx, lab.astype(np.int64, copy=False)

    def joint_features(self, prepared, idx, labelings):
        """f(x_i, h, y) = Σ_m φ(x_i, h_m → m) ⊗ e_{y_m}, one row per labeling (tokens with unknown gold left out).

        Returns
        -------
        scipy.sparse.csr_matrix, shape (len(idx), dim)
        """
        idx, lab = self._check_labels(prepared, idx, labelings)
        k, t, rows = self._rows(prepared, idx)
        use = prepared.gold[idx[k], t] >= 0
        y = lab[k, t]
        bad = use & ((y < 0) | (y >= self.n_labels))
        if bad.any():
            j = int(np.argmax(bad))
            raise DataError(f"labeling {int(k[j])}: token {int(t[j]) + 1} has label {int(y[j])}, outside "
                            f"[0, {self.n_labels})")
        k, rows, y = k[use], rows[use], y[use]
        B = prepared.data["B"][rows]
        per = np.diff(B.indptr)
        key = B.indices.astype(np.int64) * self.n_labels + np.repeat(y, per)
        pos = np.minimum(np.searchsorted(self._pairs, key), max(self.dim - 1, 0))
        hit = (self._pairs[pos] == key) if self.dim else np.zeros(key.shape[0], dtype=bool)
        r = np.repeat(k, per)
        return sp.csr_matrix((B.data[hit], (r[hit], pos[hit])), shape=(idx.shape[0], self.dim))

    def loss(self, prepared, idx, labelings):
        """Δℓ_i(y): number of tokens whose label differs from the gold one (unknown gold ignored), (r,)."""
        idx, lab = self._check_labels(prepared, idx, labelings)
        T = prepared.gold.shape[1]
        g = prepared.gold[idx]
        lab = np.pad(lab, ((0, 0), (0, max(0, T - lab.shape[1]))), constant_values=-1)[:, :T]
        return ((g >= 0) & (lab != g)).sum(axis=1).astype(np.float64)

    def delta(self, prepared, idx, labelings):
        """ΔF rows f(x_i, h, y*_i) − f(x_i, h, y) and Δℓ_i(y).

        Returns
        -------
        dF : scipy.sparse.csr_matrix, shape (r, dim)
        dl : ndarray, shape (r,)
        """
        idx, lab = self._check_labels(prepared, idx, labelings)
        gold = prepared.gold[idx]
        dF = (self.joint_features(prepared, idx, gold) - self.joint_features(prepared, idx, lab)).tocsr()
        dF.eliminate_zeros()
        return dF, self.loss(prepared, idx, lab)

    # ------------------------------------------------------------------ persistence
    def describe(self) -> dict:
        """JSON-able description (templates, relations, sizes)."""
        d = {"kind": self.kind, "templates": list(self.templates), "preset": self.preset,
             "min_count": self.min_count}
        if self._fitted:
            d.update(dim=self.dim, n_labels=self.n_labels, label_names=list(self.label_names),
                     group_names=self.group_names)
        return d

    def to_state(self):
        """(json_dict, arrays_dict) for :meth:`from_state` (JSON + .npz, no pickle)."""
        self._check_fitted()
        js = self.describe()
        a_js, a_arr = self._arcs.to_state()
        js["arcs"] = a_js
        arrays = {f"arcs_{k}": v for k, v in a_arr.items()}
        arrays["pairs"] = self._pairs
        return js, arrays

    @classmethod
    def from_state(cls, desc, arrays):
        """Rebuild a fitted map from :meth:`to_state` output."""
        try:
            fm = cls(desc["templates"], min_count=desc["min_count"])
            fm.preset = desc.get("preset")
            fm._arcs = ArcFeatureMap.from_state(desc["arcs"], {k[5:]: v for k, v in arrays.items()
                                                              if k.startswith("arcs_")})
            fm.label_names = [str(r) for r in desc["label_names"]]
            fm.n_labels = len(fm.label_names)
            pairs = np.asarray(arrays["pairs"])
        except KeyError as e:
            raise ModelFileError(f"arc label map state lacks field {e.args[0]!r}; save it with to_state()") from None
        bound = fm._arcs.dim * fm.n_labels
        if pairs.dtype.kind not in "iu" or pairs.ndim != 1 or (pairs.size and (
                pairs.min() < 0 or pairs.max() >= bound or (np.diff(pairs) <= 0).any())):
            raise ModelFileError(f"array 'fmap__pairs' must be strictly increasing integers in [0, {bound}); got "
                                 f"dtype {pairs.dtype}, shape {pairs.shape}")
        fm._pairs = pairs.astype(np.int64)
        fm._finish()
        return fm
