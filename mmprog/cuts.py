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
    """

    example: np.ndarray
    dF: sp.csr_matrix
    dl: np.ndarray
    labelings: np.ndarray | None = None
    meta: dict = field(default_factory=dict)

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
