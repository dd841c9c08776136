"""The working set of a master program: every cut added so far, in order, with its Pyomo component.

Programs keep one :class:`WorkingSet` on their model (``model.ws``) so the engine, the duality checks and the
exports can read the cut data (ΔF_r, Δℓ_r, the slack each cut belongs to) without walking Pyomo expressions.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def values_of(variables):
    """Values of a list of Pyomo variables as a float array (None → 0, as for never-touched variables)."""
    return np.fromiter(((v.value if v.value is not None else 0.0) for v in variables), dtype=np.float64,
                       count=len(variables))


class WorkingSet:
    """Cuts in insertion order.

    Attributes
    ----------
    components : list
        The Pyomo component of every cut (a constraint in primal masters, a variable α_r in dual masters).
    active : list of bool
        False once a cut was dropped.
    released : set of int
        Dropped cuts whose ΔF row was freed (:meth:`release`); their Δℓ, example and round are kept.
    """

    def __init__(self, dim):
        self.dim = dim
        # ΔF rows in one growable CSR (capacity doubling): adding a round's cuts copies only the new rows, and
        # dF() is a view — re-stacking every cut after each add was O(total non-zeros) a round
        self._data = np.zeros(1024)
        self._indices = np.zeros(1024, dtype=np.int32 if dim < 2**31 else np.int64)
        self._indptr = [0]
        self._nnz = 0
        self._dF = None
        self._example = []
        self._dl = []
        self.components = []
        self.active = []
        self.added_round = []
        self.released = set()
        self.round = 0

    @property
    def size(self):
        return len(self._dl)

    def add(self, cuts):
        """Append a batch of cuts; returns their positions."""
        start = self.size
        B = sp.csr_matrix(cuts.dF)
        B.sum_duplicates()
        need = self._nnz + B.nnz
        if need > len(self._data):
            cap = max(need, 2 * len(self._data))
            self._data = np.resize(self._data, cap)
            self._indices = np.resize(self._indices, cap)
        self._data[self._nnz:need] = B.data
        self._indices[self._nnz:need] = B.indices
        self._indptr.extend((self._nnz + B.indptr[1:]).tolist())
        self._nnz = need
        self._dF = None
        self._example.extend(int(e) for e in cuts.example)
        self._dl.extend(float(v) for v in cuts.dl)
        self.active.extend([True] * len(cuts))
        self.added_round.extend([self.round] * len(cuts))
        return list(range(start, self.size))

    @property
    def nnz(self):
        """Non-zeros held for the ΔF rows (the working set's memory is ≈ 12 bytes per non-zero)."""
        return self._nnz

    def release(self, positions):
        """Free the ΔF rows of dropped cuts: they become empty rows, positions stay.

        A 1-slack cut on a large corpus holds one entry per joint feature touched by any wrong token (tens of
        millions on CoNLL-2002 NER while most tokens are wrong) and the early, densest cuts are the first to go
        inactive; without this their rows stayed in memory for the whole run. A dropped cut never re-enters (its α
        is fixed at 0 or its row deactivated), so its products with later cuts are not needed: Gram rows against it
        read 0, which is the value they are multiplied by.

        Parameters
        ----------
        positions : sequence of int
            Cuts already marked inactive.
        """
        pos = np.asarray([p for p in positions if p not in self.released], dtype=np.int64)
        if not len(pos):
            return
        if any(self.active[p] for p in pos):
            from ..exceptions import ParameterError
            raise ParameterError(f"cuts {[int(p) for p in pos if self.active[p]]} are still active: drop them "
                                 f"(Program.drop_cuts) before releasing their rows")
        indptr = np.asarray(self._indptr, dtype=np.int64)
        lengths = np.diff(indptr)
        keep_row = np.ones(len(lengths), dtype=bool)
        keep_row[pos] = False
        lengths = np.where(keep_row, lengths, 0)
        nnz = int(lengths.sum())
        cap = max(1024, nnz + nnz // 2)
        # fresh arrays (not views) so the old buffers are freed; kept rows are copied as contiguous runs (a
        # boolean mask over every stored entry cost a second a round at 100 million entries)
        data, indices = np.zeros(cap), np.zeros(cap, dtype=self._indices.dtype)
        edges = np.flatnonzero(np.diff(np.r_[0, keep_row.astype(np.int8), 0]))
        at = 0
        for first, stop in zip(edges[::2], edges[1::2]):          # runs of kept rows [first, stop)
            lo, hi = indptr[first], indptr[stop]
            data[at: at + hi - lo] = self._data[lo:hi]
            indices[at: at + hi - lo] = self._indices[lo:hi]
            at += hi - lo
        self._data, self._indices, self._nnz = data, indices, nnz
        self._indptr = np.concatenate([[0], np.cumsum(lengths)]).tolist()
        self._dF = None
        if getattr(self, "_D", None) is not None:
            self._D[pos[pos < self._D.shape[0]]] = 0.0
        self.released.update(int(p) for p in pos)

    def combine(self, positions, weights):
        """Σ_p weights_p ΔF_p and Σ_p weights_p Δℓ_p over ``positions`` (an aggregated cut).

        Built from the stored entries alone, merged per coordinate by one sort: a sparse product (weightsᵀ F[S])
        would allocate work arrays as long as ``dim`` (53 million on CoNLL-2002 NER) and a dense sum ΔFᵀλ a
        424 MB vector.

        Parameters
        ----------
        positions : ndarray of int, shape (s,)
            Cuts whose rows are still held (not released).
        weights : ndarray, shape (s,)

        Returns
        -------
        row : scipy.sparse.csr_matrix, shape (1, dim)
            Sorted indices, one entry per coordinate, explicit zeros removed.
        dl : float
        """
        positions = np.asarray(positions, dtype=np.int64)
        weights = np.asarray(weights, dtype=np.float64)
        released = [int(p) for p in positions if int(p) in self.released]
        if released:
            from ..exceptions import ParameterError
            raise ParameterError(f"cuts {released} were released: their ΔF rows are gone")
        indptr = np.asarray(self._indptr, dtype=np.int64)
        lo, hi = indptr[positions], indptr[positions + 1]
        idx = np.concatenate([self._indices[a:b] for a, b in zip(lo, hi)]) if len(positions) else np.zeros(0, int)
        val = np.concatenate([weights[k] * self._data[a:b] for k, (a, b) in enumerate(zip(lo, hi))]) \
            if len(positions) else np.zeros(0)
        order = np.argsort(idx, kind="stable")
        idx, val = idx[order], val[order]
        start = np.flatnonzero(np.r_[True, idx[1:] != idx[:-1]]) if len(idx) else np.zeros(0, dtype=np.int64)
        cols, sums = idx[start], np.add.reduceat(val, start) if len(idx) else np.zeros(0)
        keep = sums != 0
        row = sp.csr_matrix((sums[keep], cols[keep], [0, int(keep.sum())]), shape=(1, self.dim))
        dl = float(weights @ self.dl_array()[positions])
        return row, dl

    def dF(self):
        """All ΔF_r stacked, CSR (r, dim)."""
        if self._dF is None:
            r = len(self._indptr) - 1
            self._dF = sp.csr_matrix((self._data[: self._nnz], self._indices[: self._nnz],
                                      np.asarray(self._indptr, dtype=np.int64)), shape=(r, self.dim), copy=False)
        return self._dF

    def dl_array(self):
        return np.asarray(self._dl, dtype=np.float64)

    def example_array(self):
        return np.asarray(self._example, dtype=np.int64)

    def active_mask(self):
        return np.asarray(self.active, dtype=bool)

    #: above this density (and below DENSE_MAX_DIM features) the Gram rows are computed with dense BLAS: ΔF rows
    #: of dense inputs (OCR pixels) are 60–80 % full, where sparse-sparse products are ten times slower
    DENSE_MIN_DENSITY = 0.1
    DENSE_MAX_DIM = 50_000

    def _dense(self):
        """Dense copy of ΔF grown incrementally (only used when ΔF is dense enough), rows in a buffer of doubling
        capacity: re-stacking the whole copy each round (np.vstack) was 1.5 of the 16 s of the OCR fold-0 fit."""
        F = self.dF()
        done = 0 if getattr(self, "_D", None) is None else self._D.shape[0]
        r = F.shape[0]
        if done < r:
            buf = getattr(self, "_D_buffer", None)
            if buf is None or buf.shape[0] < r:
                grown = np.zeros((max(r, 2 * (0 if buf is None else buf.shape[0]), 16), F.shape[1]))
                grown[:done] = self._D[:done] if done else 0.0
                self._D_buffer = buf = grown
            buf[done:r] = F[done:].toarray()
            self._D = buf[:r]          # a view: release() zeroes freed rows in place
        return self._D

    def _use_dense(self):
        """Whether products go through the dense copy (BLAS): ΔF dense enough and not too wide. Decided by the
        data alone, so every program on the same cuts computes the same numbers."""
        F = self.dF()
        return F.shape[1] <= self.DENSE_MAX_DIM and F.nnz > self.DENSE_MIN_DENSITY * F.shape[0] * F.shape[1]

    def dot(self, w):
        """ΔF w, shape (r,): every cut's margin at w."""
        if self._use_dense():
            return self._dense() @ w
        return self.dF() @ w

    def tdot(self, alpha):
        """ΔFᵀ α, shape (dim,), without copying rows out (a row selection of the support copied most of the
        working set's non-zeros every round on NER)."""
        if self._use_dense():
            return alpha @ self._dense()
        return self.dF().T @ alpha
    def gram_rows(self, positions):
        """Rows ⟨ΔF_p, ΔF_q⟩ for p in ``positions`` against every cut q so far, dense (len(positions), r)."""
        F = self.dF()
        if self._use_dense():
            D = self._dense()
            return D[positions] @ D.T
        # F @ (F[positions])ᵀ walks F's rows once; F[positions] @ Fᵀ would transpose the whole working set every
        # round (CSC → CSR of every cut: 40 % of a round on full CoNLL-2002 NER). Same sums in the same order: rows
        # keep sorted indices, so each entry adds the products of the shared columns in ascending column order.
        return np.asarray((F @ F[positions].T).T.todense())

    def gram(self):
        """The full Gram matrix G (r, r)."""
        F = self.dF()
        return np.asarray((F @ F.T).todense())

    def duals(self, model):
        """Multipliers of the cut constraints, sign-normalised to α ≥ 0 (a ≥ cut in a minimisation)."""
        from ..solvers import duals as solver_duals
        if not self.size:
            return np.zeros(0)
        cons = self.components
        solver_name = getattr(model, "solved_with", None)
        alpha = np.asarray(solver_duals(model, cons, solver_name), dtype=np.float64)
        # a deactivated row is not in the program that was solved: its multiplier is 0, whatever value the suffix
        # still holds from the solves before it was dropped or aggregated
        return np.where(self.active_mask(), alpha, 0.0)
