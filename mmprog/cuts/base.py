"""Cuts: the separation oracle's output and the programs' input.

A cut r is one linear constraint of a max-margin program, wᵀΔF_r ≥ Δℓ_r − ξ_{e(r)}, where for the n-slack form
ΔF_r = Δfᵢ(y) = f(xᵢ, yᵢ) − f(xᵢ, y) and Δℓ_r = Δℓᵢ(y) for one example i = e(r), and for the 1-slack form
(Joachims, Finley & Yu 2009) ΔF_r and Δℓ_r are averages over all examples of their most violated labelings and
e(r) = 0 (the single slack).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp


@dataclass
class Cuts:
    """A batch of cuts.

    Attributes
    ----------
    example : ndarray of int, shape (m,)
        Slack index of each cut (the example for n-slack, 0 for 1-slack).
    dF : scipy.sparse.csr_matrix, shape (m, dim)
        Rows ΔF_r.
    dl : ndarray, shape (m,)
        Losses Δℓ_r.
    labelings : ndarray or None
        The labelings behind each cut (n-slack), for inspection.
    counts : None
        Only :class:`CountCut` holds its ΔF as integer counts.
    """

    example: np.ndarray
    dF: sp.csr_matrix
    dl: np.ndarray
    labelings: np.ndarray | None = None
    meta: dict = field(default_factory=dict)
    counts = None            # a class attribute, not a field (see CountCut)

    def __len__(self):
        return len(self.dl)

    def select(self, mask):
        """The cuts where ``mask`` (bool (m,) or int indices) holds."""
        return Cuts(self.example[mask], self.dF[mask], self.dl[mask],
                    None if self.labelings is None else self.labelings[mask], dict(self.meta))

    def violation(self, w, xi):
        """Δℓ_r − wᵀΔF_r − ξ_{e(r)}: how far each cut is from holding at (w, ξ), shape (m,)."""
        return self.dl - self.dF @ w - np.asarray(xi)[self.example]

    @staticmethod
    def one_slack(cuts, n):
        """Average n per-example cuts (one per example) into the single 1-slack cut: (1/n)Σᵢ."""
        dF = sp.csr_matrix(cuts.dF.sum(axis=0) / n)
        return Cuts(np.zeros(1, dtype=np.int64), dF, np.array([cuts.dl.sum() / n]))


class CountCut(Cuts):
    """The 1-slack cut of integer-valued features kept as its integer counts: ΔF = counts / n.

    Σᵢ Δfᵢ of 0/1 template features counts tokens, so the averaged cut is an integer count vector over n; held that
    way it takes 8 bytes an entry (int32 index and count; 6 with int16 counts) instead of 12 (:class:`~mmprog.cuts.working_set.
    WorkingSet` keeps the counts, on full CoNLL-2002 NER tens of millions of entries a cut). ``dF`` is the float
    row counts / n made on demand (a copy, for the programs that read rows), the same floats as dividing the sum in
    place; :meth:`violation` reads the counts directly.

    Parameters
    ----------
    counts : scipy.sparse.csr_matrix, shape (1, dim)
        Σᵢ Δfᵢ with integer values (int16 or int32), sorted indices, no explicit zeros.
    n : int
        The number of examples averaged over.
    dl : float
        (1/n) Σᵢ Δℓᵢ.
    """

    def __init__(self, counts, n, dl):
        self.example = np.zeros(1, dtype=np.int64)
        self.counts = (counts, float(n))
        self.dl = np.array([dl], dtype=np.float64)
        self.labelings = None
        self.meta = {}

    @property
    def dF(self):
        C, n = self.counts
        return sp.csr_matrix((C.data / n, C.indices, C.indptr), shape=C.shape)

    def violation(self, w, xi):
        """Δℓ − wᵀΔF − ξ₀, shape (1,): the same floats as :meth:`Cuts.violation` on the float row (ΔF w summed
        in the order of scipy's product), without making it."""
        from ._sparse_rows import rows_dot
        C, n = self.counts
        margin = np.empty(1)
        rows_dot(C.indptr, C.indices, C.data, n, np.asarray(w, dtype=np.float64), margin)
        return self.dl - margin - np.asarray(xi)[self.example]


class LabelingCut(CountCut):
    """The 1-slack cut of a first-order chain with 0/1 token features, held as the labeling that made it.

    Its state block is Xᵀ(E_gold − E_ŷ) over the wrong tokens, so the tokens, their gold and decoded labels and the
    K × K transition counts determine ΔF = (Xᵀ(E_gold − E_ŷ) ⊕ T) / n: 6 bytes a wrong token instead of 6–8 bytes for
    each of the 6–12 million joint features the block touches on full CoNLL-2002 NER (≈ 1 MB against ≈ 100 MB a
    cut). The working set keeps it that way (:class:`~mmprog.cuts.working_set.WorkingSet`) and computes the
    Gram-dual master's products through X (:mod:`mmprog.features._binary`); ``counts`` and ``dF`` make the explicit
    row on demand, the very counts the oracle's explicit cut has (:func:`~mmprog.features._binary.binary_state_cut`).

    Parameters
    ----------
    X : scipy.sparse.csr_matrix, shape (N, d)
        The stacked token rows the oracle decoded (every stored value 1).
    tok, gold, pred : ndarray of int, shape (m,)
        Rows of X whose decoded label ``pred`` differs from ``gold``.
    trans : ndarray, shape (K, K)
        Transition counts of Σᵢ Δfᵢ (integer-valued).
    K : int
    n : int
        The number of examples averaged over.
    dl : float
        (1/n) Σᵢ Δℓᵢ.
    """

    def __init__(self, X, tok, gold, pred, trans, K, n, dl):
        self.example = np.zeros(1, dtype=np.int64)
        ltype = np.int8 if K <= np.iinfo(np.int8).max else np.int16
        self.labeling = dict(X=X, tok=np.ascontiguousarray(tok, dtype=np.int32),
                             gold=np.ascontiguousarray(gold, dtype=ltype), pred=np.ascontiguousarray(pred, dtype=ltype),
                             trans=np.asarray(trans, dtype=np.float64).ravel().copy(), K=int(K), n=float(n))
        self.dl = np.array([dl], dtype=np.float64)
        self.labelings = None
        self.meta = {}

    @property
    def counts(self):
        return labeling_counts(self.labeling), self.labeling["n"]

    def violation(self, w, xi):
        """Δℓ − wᵀΔF − ξ₀, shape (1,), read through X (:func:`labeling_dot`)."""
        return self.dl - labeling_dot(self.labeling, np.asarray(w, dtype=np.float64)) - np.asarray(xi)[self.example]


def labeling_counts(lab):
    """The explicit integer row n·ΔF of a labeling cut, CSR (1, d·K + K²), sorted indices, no zeros."""
    from ..features._binary import binary_state_cut
    from ..features.base import csr_view
    X, K = lab["X"], lab["K"]
    dim = X.shape[1] * K + K * K
    flat, vals = binary_state_cut(X, lab["tok"], lab["gold"], lab["pred"], K, lab["trans"].reshape(K, K), dim, True)
    return csr_view(vals, flat, np.array([0, len(flat)], dtype=flat.dtype), (1, dim))


def labeling_dot(lab, w):
    """ΔF·w of a labeling cut (a float)."""
    from ..features._binary import labeling_margin
    X, K = lab["X"], lab["K"]
    dK = X.shape[1] * K
    s = labeling_margin(X.indptr, X.indices, lab["tok"], lab["gold"], lab["pred"], w, K)
    return (s + float(lab["trans"] @ w[dK: dK + K * K])) / lab["n"]
