"""The working set of a master program: every cut added so far, in order, with its Pyomo component.

Programs keep one :class:`WorkingSet` on their model (``model.ws``) so the engine, the duality checks and the
exports can read the cut data (ΔF_r, Δℓ_r, the slack each cut belongs to) without walking Pyomo expressions.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._sparse_rows import row_dots, rows_tdot, weighted_union


def _move_down(a, lo, hi, at, chunk=1 << 20):
    """a[at: at + hi − lo] = a[lo:hi] for at < lo, in chunks: one overlapping assignment of the whole run would make
    numpy buffer all of it (a copy of up to the whole working set)."""
    for s in range(lo, hi, chunk):
        e = min(s + chunk, hi)
        a[at + s - lo: at + e - lo] = a[s:e]


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
            self._grow(need)
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

    #: capacity growth factor of the ΔF buffers; release() compacts in place, so the capacity only grows when the
    #: rows held outgrow every earlier round's (on full CoNLL-2002 NER 12 bytes per entry, ~1 GB a buffer)
    GROWTH = 1.25

    def _grow(self, need):
        """Buffers of capacity max(need, GROWTH × the old), the held entries copied. np.empty, not np.resize: resize
        fills the new tail with repeats of the old entries, touching every page of a buffer that is mostly free."""
        cap = max(need, int(self.GROWTH * len(self._data)))
        data, indices = np.empty(cap), np.empty(cap, dtype=self._indices.dtype)
        data[: self._nnz] = self._data[: self._nnz]
        indices[: self._nnz] = self._indices[: self._nnz]
        self._data, self._indices = data, indices

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
        # kept rows move down in place, as contiguous runs (a boolean mask over every stored entry cost a second a
        # round at 100 million entries; fresh buffers held the old and the new copy at once, 2 × 12 bytes an entry)
        edges = np.flatnonzero(np.diff(np.r_[0, keep_row.astype(np.int8), 0]))
        at = 0
        for first, stop in zip(edges[::2], edges[1::2]):          # runs of kept rows [first, stop)
            lo, hi = int(indptr[first]), int(indptr[stop])
            if lo != at:
                _move_down(self._data, lo, hi, at)
                _move_down(self._indices, lo, hi, at)
            at += hi - lo
        self._nnz = nnz
        self._indptr = np.concatenate([[0], np.cumsum(lengths)]).tolist()
        self._dF = None
        if getattr(self, "_D", None) is not None:
            self._D[pos[pos < self._D.shape[0]]] = 0.0
        self.released.update(int(p) for p in pos)

    def combine(self, positions, weights):
        """Σ_p weights_p ΔF_p and Σ_p weights_p Δℓ_p over ``positions`` (an aggregated cut).

        Built from the stored entries alone, row by row by a merge of sorted indices
        (:func:`~mmprog.programs._sparse_rows.weighted_union`): a sparse product (weightsᵀ F[S]) would allocate work
        arrays as long as ``dim`` (53 million on CoNLL-2002 NER), a dense sum ΔFᵀλ a 424 MB vector, and one sort of
        all of S's entries (as before) ~32 bytes an entry.

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
        idx, val = np.zeros(0, dtype=self._indices.dtype), np.zeros(0)
        for k, p in enumerate(positions):
            lo, hi = indptr[p], indptr[p + 1]
            if k == 0:
                idx, val = self._indices[lo:hi].copy(), weights[0] * self._data[lo:hi]
            else:
                idx, val = weighted_union(idx, val, self._indices[lo:hi], self._data[lo:hi], weights[k])
        keep = val != 0
        row = sp.csr_matrix((val[keep], idx[keep], [0, int(keep.sum())]), shape=(1, self.dim))
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

    def tdot(self, alpha, out=None):
        """ΔFᵀ α, shape (dim,), without copying rows out (a row selection of the support copied most of the
        working set's non-zeros every round on NER).

        Parameters
        ----------
        alpha : ndarray, shape (r,)
        out : ndarray of float64, shape (dim,), optional
            Overwritten with the result (sparse rows only), so that a caller done with its previous w need not hold
            two w-sized vectors at once (424 MB each on full CoNLL-2002 NER).
        """
        if self._use_dense():
            return alpha @ self._dense()
        F = self.dF()
        if out is None:
            return F.T @ alpha
        rows_tdot(F.indptr, F.indices, F.data, np.asarray(alpha, dtype=np.float64), out)
        return out
    def gram_rows(self, positions):
        """Rows ⟨ΔF_p, ΔF_q⟩ for p in ``positions`` against every cut q so far, dense (len(positions), r)."""
        F = self.dF()
        if self._use_dense():
            D = self._dense()
            return D[positions] @ D.T
        # each new row against every row by a merge of sorted indices (_sparse_rows.row_dots): the same sums in the
        # same order as scipy's F @ (F[positions])ᵀ (the products of the shared columns in ascending column order),
        # without its CSR copy of the transposed row, an index pointer as long as dim (212 MB on full NER);
        # F[positions] @ Fᵀ would transpose the whole working set every round (40 % of a round there)
        out = np.zeros((len(positions), F.shape[0]))
        for k, p in enumerate(positions):
            lo, hi = F.indptr[p], F.indptr[p + 1]
            row_dots(F.indptr, F.indices, F.data, F.indices[lo:hi], F.data[lo:hi], out[k])
        return out

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
