"""The working set of a master program: every cut added so far, in order, with its Pyomo component.

Programs keep one :class:`WorkingSet` on their model (``model.ws``) so the engine, the duality checks and the
exports can read the cut data (ΔF_r, Δℓ_r, the slack each cut belongs to) without walking Pyomo expressions.
"""
from __future__ import annotations

import contextlib

import numpy as np
import scipy.sparse as sp

from ..features.base import csr_view
from ._sparse_rows import row_dots, row_group_dots, rows_dot, rows_tdot, weighted_union


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
        # ΔF rows in segments, one CSR block per add() (a round's cuts; one row in the 1-slack form), each held by its
        # own arrays: adding copies nothing that is held already, and a released row frees its memory. One growable
        # buffer for all rows had to be copied whole when it grew (old and new buffer at once: 2 GB at 83 million
        # entries on full CoNLL-2002 NER) and compacted on every release.
        # A block's values are B.data / div: float64 data and div 1.0, or (a 1-slack cut of 0/1 features, see
        # CountCut) the integer counts of the cut (int32, or int16 when they fit) and div = n, 8 or 6 bytes an entry
        # instead of 12; every product divides on the fly, which gives the same floats as the divided row (see
        # _sparse_rows).
        self._itype = np.int32 if dim < np.iinfo(np.int32).max else np.int64
        self._segments = []           # [first row, CSR block (rows, dim), div], in row order
        # how many of them are LabelingBlocks: read by every product (_use_dense), where a scan of the segments
        # was O(r) Python a call (85,000 steps over the 291 rounds of the OCR fold-0 fit)
        self._n_labeling = 0
        self._nnz = 0
        self._dF = None
        self._example = []
        self._dl = []
        self.components = []
        self.active = []
        self.added_round = []
        self.released = set()
        self.round = 0
        # the explicit row of one labeling cut (position, indices, values, divisor): the newest cut's row is read
        # for its Gram row right after it is added
        self._row_cache = None

    @property
    def size(self):
        return len(self._dl)

    def add(self, cuts):
        """Append a batch of cuts; returns their positions.

        Cuts that carry their ΔF as integer counts (:attr:`~mmprog.cuts.Cuts.counts`, a 1-slack cut of 0/1
        features) are kept as those counts, without making the float rows; a cut held as its labeling
        (:class:`~mmprog.cuts.LabelingCut`) is kept as that (:class:`LabelingBlock`)."""
        start = self.size
        self._row_cache = None
        labeling = getattr(cuts, "labeling", None)
        if labeling is not None:
            B, div = LabelingBlock(labeling, self.dim), labeling["n"]
        else:
            counts = getattr(cuts, "counts", None)
            if counts is not None:
                B, div = counts
                div = float(div)
            else:
                B, div = sp.csr_matrix(cuts.dF), 1.0
            B.sum_duplicates()
            if B.data.base is not None or B.indices.base is not None or B.indices.dtype != self._itype:
                # the block is kept: it must own its arrays (a view would keep a larger buffer alive)
                B = sp.csr_matrix((B.data.copy(), B.indices.astype(self._itype), B.indptr.copy()), shape=B.shape)
        if B.shape[0]:
            self._segments.append([start, B, div])
            self._n_labeling += isinstance(B, LabelingBlock)
            self._nnz += B.nnz
        self._dF = None
        self._example.extend(int(e) for e in cuts.example)
        self._dl.extend(float(v) for v in cuts.dl)
        self.active.extend([True] * len(cuts))
        self.added_round.extend([self.round] * len(cuts))
        return list(range(start, self.size))

    @property
    def nnz(self):
        """Entries held for the ΔF rows: non-zeros of explicit rows (≈ 8 bytes each in a counts block, 12 in a
        float block) and wrong tokens of labeling cuts (6 bytes each, plus K² transition counts)."""
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
        gone = np.zeros(self.size, dtype=bool)
        gone[pos] = True
        for seg in self._segments:
            first, B = seg[0], seg[1]
            mine = gone[first: first + B.shape[0]]
            if not mine.any() or not B.nnz:
                continue
            self._nnz -= B.nnz
            self._n_labeling -= isinstance(B, LabelingBlock)      # replaced below by a CSR block either way
            if mine.all():             # a whole block (a 1-slack cut): its arrays are freed with it
                seg[1] = sp.csr_matrix(B.shape)
                continue
            lengths = np.where(mine, 0, np.diff(B.indptr))
            keep = np.repeat(~mine, np.diff(B.indptr))
            indptr = np.zeros(B.shape[0] + 1, dtype=B.indptr.dtype)
            np.cumsum(lengths, out=indptr[1:])
            # a fresh (smaller) block; the old one's arrays are freed with it
            seg[1] = sp.csr_matrix((B.data[keep], B.indices[keep], indptr), shape=B.shape)
            self._nnz += seg[1].nnz
        self._dF = None
        if self._row_cache is not None and self._row_cache[0] in set(pos.tolist()):
            self._row_cache = None
        if getattr(self, "_D", None) is not None:
            self._D[pos[pos < self._D.shape[0]]] = 0.0
        self.released.update(int(p) for p in pos)

    def combine(self, positions, weights):
        """Σ_p weights_p ΔF_p and Σ_p weights_p Δℓ_p over ``positions`` (an aggregated cut).

        Built from the stored entries alone, row by row by a merge of sorted indices
        (:func:`~mmprog.cuts._sparse_rows.weighted_union`): a sparse product (weightsᵀ F[S]) would allocate work
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
        # wa·a + wb·b pairwise (the first row enters with its weight, uncopied): the aggregate of S on full NER is
        # tens of millions of entries, so each copy of it counts
        idx, val, scale, div = np.zeros(0, dtype=self._itype), np.zeros(0), 1.0, 1.0
        for k, p in enumerate(positions):
            p_idx, p_val, p_div = self._row(p)
            if k == 0:
                idx, val, scale, div = p_idx, p_val, weights[0], p_div
            else:
                idx, val = weighted_union(idx, val, scale, p_idx, p_val, weights[k], div, p_div)
                scale, div = 1.0, 1.0
        if len(positions) == 1:
            idx, val = weighted_union(idx, val, scale, idx[:0], val[:0], 0.0, div, 1.0)
        row = csr_view(val, idx, np.array([0, len(idx)], dtype=self._itype), (1, self.dim))
        dl = float(weights @ self.dl_array()[positions])
        return row, dl

    def _row(self, p):
        """ΔF_p's sorted indices, stored values (views of its block) and their divisor: ΔF_p = values / div. A
        labeling cut's row is made (:func:`~mmprog.cuts.labeling_counts`); the last one made is kept until the next
        add."""
        first, B, div = self._segments[self._segment_of(p)]
        if isinstance(B, LabelingBlock):
            if self._row_cache is None or self._row_cache[0] != p:
                C = B.csr()
                self._row_cache = (p, C.indices, C.data, div)
            return self._row_cache[1:]
        lo, hi = B.indptr[p - first], B.indptr[p - first + 1]
        return B.indices[lo:hi], B.data[lo:hi], div

    def _segment_of(self, p):
        starts = [seg[0] for seg in self._segments]
        return int(np.searchsorted(starts, p, side="right")) - 1

    @contextlib.contextmanager
    def _dense_cut(self, p, like):
        """Cut p held dense, undivided, in a buffer of length dim (kept for the fit: 424 MB on full CoNLL-2002 NER)
        whose entries are zeroed again afterwards; X's entries then look it up with one cache line each.

        A labeling cut is scattered from its wrong tokens (its sorted row, a counting sort over all their
        features, is not made: 0.21 s of a 1.4 s MTL round on 2,000 NER sentences), any other cut written from its
        row. Yields (V, transition part (K²,), divisor), or None for an empty (released) row.

        Parameters
        ----------
        p : int
        like : LabelingBlock
            A block of the same layout (K, d·K).
        """
        V = getattr(self, "_V", None)
        if V is None:
            V = self._V = np.zeros(self.dim)
        B, div = self._segments[self._segment_of(p)][1:]
        if isinstance(B, LabelingBlock):
            if not B.nnz:
                yield None
                return
            B.scatter(V)
            try:
                yield V, np.asarray(B.trans, dtype=np.float64), div
            finally:
                B.scatter(V, zero=True)
            return
        p_idx, p_val, p_div = self._row(p)
        if not len(p_idx):
            yield None
            return
        V[p_idx] = p_val
        try:
            yield V, LabelingBlock.transitions(like, p_idx, p_val), p_div
        finally:
            V[p_idx] = 0.0

    def labeling_of(self, p):
        """The labeling dict of cut p when it is held as one (:class:`LabelingBlock`), else None."""
        B = self._segments[self._segment_of(p)][1] if self._segments else None
        return B.lab if isinstance(B, LabelingBlock) else None

    def explicit_rows(self, positions):
        """The float rows ΔF_p of ``positions`` stacked, CSR (len(positions), dim), from the blocks one row at a time
        (no stacked copy of the working set; a labeling cut's row is made)."""
        parts = [self._row(int(p)) for p in positions]
        indptr = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum([len(idx) for idx, _, _ in parts], out=indptr[1:])
        indices = np.concatenate([idx for idx, _, _ in parts]) if parts else np.zeros(0, dtype=self._itype)
        data = np.concatenate([val / div for _, val, div in parts]) if parts else np.zeros(0)
        return sp.csr_matrix((data.astype(np.float64, copy=False), indices, indptr), shape=(len(parts), self.dim))

    def dF(self):
        """All ΔF_r stacked, CSR (r, dim): the one block itself, or the blocks concatenated (a copy, kept until the
        next add or release; the engine's m3n/1-slack path never asks for it)."""
        if self._dF is None:
            blocks = [self._float_block(B, div) for _, B, div in self._segments]     # (labeling cuts made)
            if len(blocks) == 1:
                self._dF = blocks[0]
            elif not blocks:
                self._dF = sp.csr_matrix((0, self.dim))
            else:
                self._dF = sp.vstack(blocks, format="csr")
        return self._dF

    @staticmethod
    def _float_block(B, div):
        """The block with its values as float64 (B itself when it holds them): counts divided by their n, the
        floats the divided row held; a labeling cut's row is made."""
        if isinstance(B, LabelingBlock):
            B = B.csr()
        if div == 1.0 and B.data.dtype == np.float64:
            return B
        return sp.csr_matrix((B.data / div, B.indices, B.indptr), shape=B.shape)

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
        done = 0 if getattr(self, "_D", None) is None else self._D.shape[0]
        r = self.size
        if done < r:
            buf = getattr(self, "_D_buffer", None)
            if buf is None or buf.shape[0] < r:
                grown = np.zeros((max(r, 2 * (0 if buf is None else buf.shape[0]), 16), self.dim))
                grown[:done] = self._D[:done] if done else 0.0
                self._D_buffer = buf = grown
            # the blocks holding rows done..r-1: the last ones (blocks are in row order), found from the end rather
            # than by a scan of every block, which made each call O(r) Python (44,800 block look-ups in the 291
            # rounds of the OCR fold-0 fit)
            todo = []
            for seg in reversed(self._segments):
                if seg[0] + seg[1].shape[0] <= done:
                    break
                todo.append(seg)
            for first, B, div in reversed(todo):
                rows = self._float_block(B, div)[max(0, done - first):]
                buf[max(first, done): first + B.shape[0]] = rows.toarray()
            self._D = buf[:r]          # a view: release() zeroes freed rows in place
        return self._D

    def _use_dense(self):
        """Whether products go through the dense copy (BLAS): ΔF dense enough and not too wide. Decided by the
        data alone, so every program on the same cuts computes the same numbers."""
        r = self.size
        if self._n_labeling:
            return False       # labeling cuts are read through X (their rows are never made for a product)
        return self.dim <= self.DENSE_MAX_DIM and self._nnz > self.DENSE_MIN_DENSITY * r * self.dim

    def dot(self, w):
        """ΔF w, shape (r,): every cut's margin at w."""
        if self._use_dense():
            return self._dense() @ w
        if not self._segments:
            return np.zeros(0)
        w = np.asarray(w, dtype=np.float64)
        parts = []
        for _, B, div in self._segments:
            if isinstance(B, LabelingBlock):
                parts.append(np.array([B.dot(w)]))
            elif div == 1.0 and B.data.dtype == np.float64:
                parts.append(B @ w)
            else:           # scipy would upcast the counts (a float copy) and not divide
                out = np.empty(B.shape[0])
                rows_dot(B.indptr, B.indices, B.data, div, w, out)
                parts.append(out)
        return np.concatenate(parts)

    def tdot(self, alpha, out=None, dense=None):
        """ΔFᵀ α, shape (dim,), without copying rows out (a row selection of the support copied most of the
        working set's non-zeros every round on NER).

        Parameters
        ----------
        alpha : ndarray, shape (r,)
        out : ndarray of float64, shape (dim,), optional
            Overwritten with the result (sparse rows only), so that a caller done with its previous w need not hold
            two w-sized vectors at once (424 MB each on full CoNLL-2002 NER).
        dense : bool, optional
            Through the dense copy (BLAS) or the blocks; by default decided by the data (:meth:`_use_dense`). The
            blocks give scipy's floats of ``F.T @ alpha`` on the stacked rows whatever the density (the template
            programs pass False: their w was always that product).
        """
        if self._use_dense() if dense is None else dense:
            return alpha @ self._dense()
        alpha = np.asarray(alpha, dtype=np.float64)
        if out is None:
            out = np.zeros(self.dim)
        else:
            out[:] = 0.0
        labeled = []
        for first, B, div in self._segments:
            if isinstance(B, LabelingBlock):
                labeled.append((B, alpha[first] / div))
            else:
                rows_tdot(B.indptr, B.indices, B.data, div, alpha[first: first + B.shape[0]], out)
        LabelingBlock.tdot(labeled, out)
        return out

    def gram_rows(self, positions):
        """Rows ⟨ΔF_p, ΔF_q⟩ for p in ``positions`` against every cut q so far, dense (len(positions), r)."""
        if self._use_dense():
            D = self._dense()
            return D[positions] @ D.T
        # each new row against every row by a merge of sorted indices (_sparse_rows.row_dots): the same sums in the
        # same order as scipy's F @ (F[positions])ᵀ (the products of the shared columns in ascending column order),
        # without its CSR copy of the transposed row, an index pointer as long as dim (212 MB on full NER);
        # F[positions] @ Fᵀ would transpose the whole working set every round (40 % of a round there)
        out = np.zeros((len(positions), self.size))
        labeled = [(first, B, div) for first, B, div in self._segments if isinstance(B, LabelingBlock) and B.nnz]
        explicit = [(first, B, div) for first, B, div in self._segments
                    if B.nnz and not isinstance(B, LabelingBlock)]
        touched = LabelingBlock.touched([B for _, B, _ in labeled])
        for k, p in enumerate(positions):
            if labeled:
                # against the labeling cuts through X: U = X·ΔF_p once, then a sum over each cut's wrong tokens
                with self._dense_cut(p, labeled[0][1]) as held:
                    if held is None:
                        continue
                    V, p_trans, p_div = held
                    U = LabelingBlock.token_products(labeled[0][1], touched, V)
                for first, B, div in labeled:
                    out[k, first] = B.pair_sum(U, p_trans) / (p_div * div)
                del U
            if explicit:
                p_idx, p_val, p_div = self._row(p)
                for first, B, div in explicit:
                    row_dots(B.indptr, B.indices, B.data, div, p_idx, p_val, p_div,
                             out[k, first: first + B.shape[0]])
        return out

    def template_gram_rows(self, positions, groups, m):
        """Rows Qʲ_{p,q} = ⟨ΔF_{p,j}, ΔF_{q,j}⟩ of every group j for p in ``positions`` against every cut q so far.

        The per-template Gram rows of the template programs (mtl, pblock) from the blocks: against an explicit row
        by a merge of sorted rows (:func:`~mmprog.cuts._sparse_rows.row_group_dots`, each bin summed in
        ascending column order: the floats of the product split by template); against the labeling cuts through X,
        all of them in one pass over their wrong tokens with row p held dense
        (:meth:`LabelingBlock.group_entries`; integer sums divided once, so exact for count rows). The stacked
        float copy of the working set (:meth:`dF`) is never made; released rows read 0.

        Parameters
        ----------
        positions : sequence of int, length k
        groups : ndarray of int, shape (dim,)
            Group of every joint feature, ids in [0, m) (int16 or int32 keeps it small).
        m : int

        Returns
        -------
        ndarray of float64, shape (m, k, r)
        """
        out = np.zeros((m, len(positions), self.size))
        labeled = [(first, B, div) for first, B, div in self._segments if isinstance(B, LabelingBlock) and B.nnz]
        feature_group = self._feature_groups(labeled[0][1], groups) if labeled else None
        lists = LabelingBlock.token_lists([B for _, B, _ in labeled]) if feature_group is not None else None
        explicit = [(first, B, div) for first, B, div in self._segments
                    if B.nnz and (lists is None or not isinstance(B, LabelingBlock))]
        for k, p in enumerate(positions):
            if lists is not None:
                with self._dense_cut(p, labeled[0][1]) as held:
                    if held is None:
                        continue
                    V, p_trans, p_div = held
                    E = LabelingBlock.group_entries(labeled, lists, feature_group, V, p_trans, groups, m)
                for l, (first, B, div) in enumerate(labeled):
                    out[:, k, first] = E[l] / (p_div * div)
            if explicit:
                p_idx, p_val, p_div = self._row(p)
                for first, B, div in explicit:
                    if isinstance(B, LabelingBlock):
                        B = B.csr()        # (groups that differ between a feature's labels: through the row)
                    row_group_dots(B.indptr, B.indices, B.data, div, p_idx, p_val, p_div, groups,
                                   out[:, k, first: first + B.shape[0]])
        return out

    def _feature_groups(self, block, groups):
        """The group of every input feature of a labeling block's X, shape (d,), when all K joint features of each
        share it (the chain map's templates), else None. Kept for the groups array it was read from."""
        cached = getattr(self, "_fgroups", None)
        if cached is not None and cached[0] is groups:
            return cached[1]
        d, K = block.X.shape[1], block.K
        G = np.asarray(groups)[: d * K].reshape(d, K)
        first = G[:, 0]
        uniform = all(np.array_equal(G[:, k], first) for k in range(1, K))
        fg = None
        if uniform:
            # the narrowest integer type that holds the group ids: the Gram-entry kernel reads fg[f] at random
            # places once per (token, feature), and 1 byte a feature (5.9 MB on full NER) stays in cache where int64
            # (47 MB) does not — 0.266 against 0.307 s for the kernel on a synthetic NER-sized state (/tmp probe,
            # 134 templates, 5.9 M features, 300,000 (cut, token) entries)
            n_groups = int(first.max(initial=0)) + 1
            dtype = np.int64 if first.min(initial=0) < 0 else np.uint8 if n_groups <= 1 << 8 \
                else np.uint16 if n_groups <= 1 << 16 else np.int64
            fg = np.ascontiguousarray(first, dtype=dtype)
        self._fgroups = (groups, fg)
        return fg

    def rows(self):
        """The ΔF rows as they are now, stacked only when asked (:class:`RowsSnapshot`)."""
        return RowsSnapshot(self)

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


class RowsSnapshot:
    """The ΔF rows r = 0..size−1 of a working set at one moment, stacked into a float CSR only when asked
    (:meth:`tocsr`).

    Holds no block of its own: a solution keeps it for every round (``cut_p`` of mtl and pblock), and a snapshot that
    kept the blocks released after it (the aggregated and dropped cuts of ``max_cuts`` / ``drop_after``) held them
    for one more round, the round's largest rows (+180 MB of peak on full CoNLL-2002 NER at 15 rounds, more as the
    aggregate grows). Cuts added later are not in it; rows released since it was taken are gone, and reading it then
    raises instead of returning them as empty rows.

    Parameters
    ----------
    ws : WorkingSet
    """

    def __init__(self, ws):
        self._ws = ws
        self._released = frozenset(ws.released)
        self.shape = (ws.size, ws.dim)

    def _segments(self):
        gone = sorted(p for p in self._ws.released if p < self.shape[0] and p not in self._released)
        if gone:
            from ..exceptions import ParameterError
            raise ParameterError(f"cuts {gone} were released (drop_after / max_cuts) after this solution: their ΔF "
                                 f"rows are gone; read the model's working set (model.ws) for the current cuts")
        # an add is one block, so the blocks that start below size are exactly rows 0..size-1
        return [(B, div) for first, B, div in self._ws._segments if first < self.shape[0]]

    @property
    def nnz(self):
        return sum(B.nnz for B, _ in self._segments())

    def tocsr(self):
        """Rows 0..size−1 stacked, float64 CSR (size, dim) (a copy unless they are one float block)."""
        blocks = [WorkingSet._float_block(B, div) for B, div in self._segments()]
        if not blocks:
            return sp.csr_matrix(self.shape)
        return blocks[0] if len(blocks) == 1 else sp.vstack(blocks, format="csr")


class LabelingBlock:
    """A 1-slack cut held as its labeling (:class:`mmprog.cuts.LabelingCut`): the working set's block of one row.

    n·ΔF = Xᵀ(E_gold − E_pred) ⊕ T over the wrong tokens, so the products of the Gram-dual master are taken through
    the token matrix X (kernels in :mod:`mmprog.features._binary`), never through the row:

    - ΔF·w: Σ over the wrong tokens of w[j·K + gold] − w[j·K + pred] over their features j, plus T·w_T;
    - Σ_q α_q ΔF_q = Xᵀ M ⊕ Σ_q (α_q/n) T_q with M (N, K) = Σ_q (α_q/n)(E_gold − E_pred) of q's tokens;
    - ⟨ΔF_p, ΔF_q⟩ = Σ over q's wrong tokens of U[t, gold] − U[t, pred], plus T_p·T_q, with U = X·ΔF_p (N, K),
      one pass over X per new cut whatever the number of cuts held.

    The counts are integers (exact in float64), so a Gram entry is an exact integer divided once by n_p·n_q.

    Attributes
    ----------
    shape : (1, dim)
    nnz : int
        Entries held: wrong tokens plus K² transition counts.
    """

    def __init__(self, lab, dim):
        self.lab = lab
        self.X, self.K = lab["X"], lab["K"]
        self.tok, self.gold, self.pred, self.trans = lab["tok"], lab["gold"], lab["pred"], lab["trans"]
        self.shape = (1, dim)
        self.d_state = self.X.shape[1] * self.K
        if dim != self.d_state + self.K * self.K:
            from ..exceptions import ParameterError
            raise ParameterError(f"a labeling cut of {self.X.shape[1]} token features and {self.K} labels is "
                                 f"{self.d_state + self.K * self.K} wide, the working set {dim}")
        self.nnz = len(self.tok) + len(self.trans) if len(self.tok) else 0

    def csr(self):
        """The explicit row n·ΔF (integer counts), CSR (1, dim)."""
        from .base import labeling_counts
        return labeling_counts(self.lab)

    def dot(self, w):
        from .base import labeling_dot
        return labeling_dot(self.lab, w)

    @staticmethod
    def touched(blocks):
        """Bool mask (N,) of the tokens some block holds (None without blocks)."""
        if not blocks:
            return None
        mask = np.zeros(blocks[0].X.shape[0], dtype=bool)
        for B in blocks:
            if B.X is not blocks[0].X:
                from ..exceptions import ParameterError
                raise ParameterError("labeling cuts of different token matrices in one working set")
            mask[B.tok] = True
        return mask

    @staticmethod
    def transitions(block, p_idx, p_val):
        """The transition part (K²,) of row p, from its sorted flat indices and stored values (undivided)."""
        K, dK = block.K, block.d_state
        p_trans = np.zeros(K * K)
        tail = np.searchsorted(p_idx, dK)
        p_trans[np.asarray(p_idx[tail:], dtype=np.int64) - dK] = p_val[tail:]
        return p_trans

    @staticmethod
    def token_products(block, touched, V):
        """U = X·(state part of the row p) on the touched tokens, shape (N, K); V is row p held dense (undivided
        values)."""
        from ..features._binary import in_threads, masked_row_scores
        X, K = block.X, block.K
        U = np.zeros((X.shape[0], K))
        in_threads(lambda a, b: masked_row_scores(X.indptr, X.indices, touched, V, K, U, a, b), X.shape[0])
        return U

    def scatter(self, V, zero=False):
        """Add the state part of n·ΔF into the dense row V (or, with ``zero``, set those entries back to 0)."""
        from ..features._binary import labeling_scatter
        labeling_scatter(self.X.indptr, self.X.indices, self.tok, self.gold, self.pred, self.K, V, zero)


    @staticmethod
    def token_lists(blocks):
        """The blocks' wrong tokens listed per token (:func:`~mmprog.features._binary.token_cut_lists`): (tptr (N +
        1,), tq (E,) block index, ty (E,) decoded label, gold (N,)), E the wrong tokens of all blocks."""
        from ..features._binary import token_cut_lists
        X = blocks[0].X
        for B in blocks:
            if B.X is not X:
                from ..exceptions import ParameterError
                raise ParameterError("labeling cuts of different token matrices in one working set")
        starts = np.zeros(len(blocks) + 1, dtype=np.int64)
        np.cumsum([len(B.tok) for B in blocks], out=starts[1:])
        toks = np.concatenate([B.tok for B in blocks])
        preds = np.concatenate([B.pred for B in blocks])
        golds = np.concatenate([B.gold for B in blocks])
        N = X.shape[0]
        tptr = np.zeros(N + 1, dtype=np.int64)
        tq = np.empty(len(toks), dtype=np.int32)
        ty = np.empty(len(toks), dtype=preds.dtype)
        gold = np.zeros(N, dtype=golds.dtype)
        token_cut_lists(N, toks, preds, golds, starts, tptr, tq, ty, gold)
        return tptr, tq, ty, gold

    @staticmethod
    def group_entries(labeled, lists, feature_group, V, p_trans, groups, m):
        """⟨row p, n·ΔF_l⟩ (undivided) within every group, for all the labeling blocks l at once, shape (L, m); V is
        row p held dense (undivided values), ``lists`` the blocks' :meth:`token_lists`.

        Integer counts (a labeling or count row p) give integer sums, exact in any order; the threads' tables are
        added in range order."""
        from ..features._binary import in_threads, labeling_group_entries
        block = labeled[0][1]
        X, K, dK = block.X, block.K, block.d_state
        tptr, tq, ty, gold = lists
        L = len(labeled)
        parts = {}

        def run(lo, hi):
            part = np.zeros((L, m))
            labeling_group_entries(X.indptr, X.indices, feature_group, gold, tptr, tq, ty, V, K, part, lo, hi)
            parts[lo] = part

        in_threads(run, X.shape[0])
        out = parts[0]
        for lo in sorted(parts)[1:]:
            out += parts[lo]
        trans_groups = np.asarray(groups[dK: dK + K * K], dtype=np.int64)
        for l, (_, B, _) in enumerate(labeled):
            np.add.at(out[l], trans_groups, p_trans * B.trans)
        return out

    def pair_sum(self, U, p_trans):
        """⟨row p, n·ΔF⟩ (undivided) from p's U and transition part."""
        from ..features._binary import labeling_pair_sum
        return labeling_pair_sum(U, self.tok, self.gold, self.pred) + float(p_trans @ self.trans)

    @staticmethod
    def tdot(weighted, out):
        """out += Σ c·n·ΔF over (block, c) pairs: Xᵀ M and the transition sums."""
        from ..features._binary import in_threads, scatter_labels, xt_rows
        weighted = [(B, c) for B, c in weighted if c != 0.0 and B.nnz]
        if not weighted:
            return
        X, K, dK = weighted[0][0].X, weighted[0][0].K, weighted[0][0].d_state
        M = np.zeros((X.shape[0], K))
        touched = np.zeros(X.shape[0], dtype=bool)
        trans = np.zeros(K * K)
        for B, c in weighted:
            if B.X is not X:
                from ..exceptions import ParameterError
                raise ParameterError("labeling cuts of different token matrices in one working set")
            scatter_labels(M, B.tok, B.gold, B.pred, float(c), touched)
            trans += c * B.trans
        in_threads(lambda a, b: xt_rows(X.indptr, X.indices, touched, M, out, a, b), X.shape[1])
        out[dK: dK + K * K] += trans
