"""The data of the L∞ program: non-negative sparse Φ, Ψ and the implicit joint rows zᵢ = ψ(yᵢ) ⊗ φ(xᵢ)
(:class:`TensorSamples`), or the rows of a joint kernel (:class:`KernelSamples`)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...exceptions import DataError


# ------------------------------------------------------------------------------------------------------------
# Data: non-negative sparse Φ, Ψ and the implicit joint rows
# ------------------------------------------------------------------------------------------------------------

def check_nonnegative(name, M):
    """``M`` as a float64 CSR matrix with sorted indices, or a :class:`DataError` (a ``ValueError``).

    Parameters
    ----------
    name : str
        The matrix's name for messages (``"Phi"``, ``"Psi"``).
    M : array-like or scipy.sparse matrix, shape (m, n)

    Raises
    ------
    DataError
        Not 2-d, NaN/inf entries, or a negative entry — naming the first such entry ``name[row, col] = value``.
    """
    if sp.issparse(M):
        A = sp.csr_matrix(M, dtype=np.float64, copy=True)
    else:
        arr = np.asarray(M)
        if arr.ndim != 2 or arr.dtype.kind not in "biuf":
            raise DataError(f"{name} must be a 2-d numeric array or scipy.sparse matrix (rows = samples); got "
                            f"{type(M).__name__} with shape {getattr(arr, 'shape', None)}")
        A = sp.csr_matrix(arr.astype(np.float64))
    A.sum_duplicates()
    A.sort_indices()
    bad = ~np.isfinite(A.data)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        r = int(np.searchsorted(A.indptr, k, side="right") - 1)
        raise DataError(f"{name}[{r}, {A.indices[k]}] = {A.data[k]}: entries must be finite; remove or impute it")
    neg = A.data < 0
    if neg.any():
        k = int(np.flatnonzero(neg)[0])
        r = int(np.searchsorted(A.indptr, k, side="right") - 1)
        raise DataError(f"{name}[{r}, {A.indices[k]}] = {A.data[k]:g}: {name} must be non-negative (the L-inf "
                        f"program of Szedmak et al. needs z_i = psi(y_i) (x) phi(x_i) >= 0); shift or clip the "
                        f"features, or encode signs as separate non-negative features")
    A.eliminate_zeros()
    return A


def _empty_rows(name, A):
    empty = np.flatnonzero(np.diff(A.indptr) == 0)
    if empty.size:
        raise DataError(f"row {int(empty[0])} of {name} is all zero ({empty.size} such rows): its z_i = 0 cannot "
                        f"satisfy z_i'w >= b > 0, so (10) is infeasible; drop those samples")


class TensorSamples:
    """The joint vectors zᵢ = ψ(yᵢ) ⊗ φ(xᵢ), kept implicit.

    Parameters
    ----------
    Phi : sparse or array, shape (m, n_inputs), ≥ 0
    Psi : sparse or array, shape (m, n_outputs), ≥ 0
    require_nonzero : bool
        Reject samples with zᵢ = 0 (they make (10) infeasible).

    Attributes
    ----------
    n : int
        m, the number of samples.
    dim : int
        n_outputs · n_inputs, the joint dimension (indices int64; may exceed 2³¹).
    """

    kind = "tensor"

    #: above this many joint non-zeros Σᵢ|supp zᵢ| the rows are not cached (see :meth:`margins`)
    cache_limit = 20_000_000

    def __init__(self, Phi, Psi, require_nonzero=True):
        self.Phi = check_nonnegative("Phi", Phi)
        self.Psi = check_nonnegative("Psi", Psi)
        if self.Phi.shape[0] != self.Psi.shape[0]:
            raise DataError(f"Phi has {self.Phi.shape[0]} rows but Psi has {self.Psi.shape[0]}: rows are samples "
                            f"and must pair up")
        if require_nonzero:
            _empty_rows("Phi", self.Phi)
            _empty_rows("Psi", self.Psi)
        self.n = self.Phi.shape[0]
        self.n_inputs = self.Phi.shape[1]
        self.n_outputs = self.Psi.shape[1]
        self.dim = int(self.n_inputs) * int(self.n_outputs)
        self._norms = None
        self._counts = None
        self._column_matrix = {}

    def rows(self, idx, aggregate=False):
        """The rows zᵢ for the samples ``idx`` as a CSR matrix with int64 sorted column indices: the sparse
        Kronecker product of each row's ψ and φ non-zeros, built in one vectorised pass.

        Parameters
        ----------
        idx : array of int, shape (r,)
        aggregate : bool
            Replace the joint indices private to one sample (see :meth:`private_mask`) of row i by one virtual
            column ``dim + i`` carrying their sum sᵢ (the exact reduction of the module docstring).

        Returns
        -------
        scipy.sparse.csr_matrix, shape (r, dim), or (r, dim + m) with ``aggregate``
        """
        idx = np.asarray(idx, dtype=np.int64)
        P = self.Psi[idx]
        F = self.Phi[idx]
        a = np.diff(P.indptr)
        c = np.diff(F.indptr)
        counts = a * c
        row_of_p = np.repeat(np.arange(len(idx)), a)
        rep = c[row_of_p]                                  # φ non-zeros each ψ non-zero pairs with
        p_idx = np.repeat(np.arange(P.nnz), rep)
        starts = np.cumsum(rep) - rep
        offs = np.arange(int(rep.sum())) - np.repeat(starts, rep)
        q_idx = F.indptr[row_of_p[p_idx]] + offs
        cols = P.indices[p_idx].astype(np.int64) * self.n_inputs + F.indices[q_idx].astype(np.int64)
        vals = P.data[p_idx] * F.data[q_idx]
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        if not aggregate:
            return sp.csr_matrix((vals, cols, indptr), shape=(len(idx), self.dim))
        row = np.repeat(np.arange(len(idx)), counts)
        private = self.private_mask(cols)
        s = np.bincount(row[private], weights=vals[private], minlength=len(idx))
        has = np.flatnonzero(s > 0)
        r_all = np.concatenate([row[~private], has])
        c_all = np.concatenate([cols[~private], self.dim + idx[has]])
        v_all = np.concatenate([vals[~private], s[has]])
        Z = sp.csr_matrix((v_all, (r_all, c_all)), shape=(len(idx), self.dim + self.n))
        Z.sort_indices()
        return Z

    def column_counts(self):
        """For every joint index of U = ∪ᵢ supp(zᵢ): in how many samples it occurs.

        Returns
        -------
        (ndarray of int64, ndarray of int64)
            U sorted, and the counts: the pattern product (Ψ ≠ 0)ᵀ(Φ ≠ 0), one sparse product.
        """
        if self._counts is None:
            Pb = sp.csr_matrix((np.ones(self.Psi.nnz), self.Psi.indices, self.Psi.indptr), shape=self.Psi.shape)
            Fb = sp.csr_matrix((np.ones(self.Phi.nnz), self.Phi.indices, self.Phi.indptr), shape=self.Phi.shape)
            B = (Pb.T @ Fb).tocoo()
            keys = B.row.astype(np.int64) * self.n_inputs + B.col.astype(np.int64)
            order = np.argsort(keys)
            self._counts = (keys[order], np.rint(B.data[order]).astype(np.int64))
        return self._counts

    def private_mask(self, cols):
        """Whether each joint index in ``cols`` (all from U) occurs in exactly one sample."""
        keys, counts = self.column_counts()
        return counts[np.searchsorted(keys, cols)] == 1

    def operator(self, J, values):
        """W (n_outputs, n_inputs), CSR, from w given on the joint indices J."""
        J = np.asarray(J, dtype=np.int64)
        return sp.csr_matrix((np.asarray(values, dtype=np.float64), (J // self.n_inputs, J % self.n_inputs)),
                             shape=(self.n_outputs, self.n_inputs))

    def scores(self, W, Phi=None):
        """d = Wφ(x) for every row of ``Phi`` (default: the training inputs), CSR (rows, n_outputs)."""
        F = self.Phi if Phi is None else Phi
        return sp.csr_matrix(F @ W.T)

    def margins(self, J, values):
        """zᵢᵀw for all samples, shape (m,), with w given on the joint indices J (0 elsewhere).

        One sparse product: Z_U w_U with the rows restricted to the union of supports U (cached, see
        :meth:`column_matrix`) when Σᵢ|supp zᵢ| ≤ ``cache_limit``; else ψ(yᵢ)ᵀ(Wφ(xᵢ)) through W, which never
        materialises any zᵢ but costs one row of Wφ(xᵢ) per sample."""
        J = np.asarray(J, dtype=np.int64)
        if int(self.support_sizes().sum()) <= self.cache_limit:
            return self.margins_of_columns(J, values, aggregate=False)
        D = self.scores(self.operator(J, values))
        return np.asarray(D.multiply(self.Psi).sum(axis=1)).ravel()

    def column_matrix(self, aggregate=False):
        """All rows over the compact column space of their keys: (keys, Zc) with keys sorted (joint indices, and
        ``dim + i`` for aggregated private columns) and Zc CSR (m, len(keys)) with Zc[i, p] = (zᵢ)_{keys[p]}.
        Built once (Σᵢ|supp zᵢ| non-zeros) and cached."""
        if aggregate not in self._column_matrix:
            Z = self.rows(np.arange(self.n), aggregate=aggregate)
            cols = Z.indices.astype(np.int64)
            keys = np.unique(cols)
            Zc = sp.csr_matrix((Z.data, np.searchsorted(keys, cols), Z.indptr), shape=(self.n, keys.size))
            self._column_matrix[aggregate] = (keys, Zc)
        return self._column_matrix[aggregate]

    def margins_of_columns(self, keys, values, aggregate=False):
        """zᵢᵀw for all samples from w given on column keys (joint indices, or ``dim + i`` for the aggregated
        private column of sample i), as one sparse matrix-vector product Zc · w over the cached
        :meth:`column_matrix`. Keys outside the union of supports carry no sample and are ignored."""
        all_keys, Zc = self.column_matrix(aggregate)
        keys = np.asarray(keys, dtype=np.int64)
        pos = np.searchsorted(all_keys, keys)
        ok = pos < all_keys.size
        ok[ok] = all_keys[pos[ok]] == keys[ok]
        w = np.zeros(all_keys.size)
        w[pos[ok]] = np.asarray(values, dtype=np.float64)[ok]
        return Zc @ w

    def norms(self):
        """‖zᵢ‖₁ = ‖φ(xᵢ)‖₁ ‖ψ(yᵢ)‖₁ (non-negative entries), shape (m,)."""
        if self._norms is None:
            self._norms = (np.asarray(self.Phi.sum(axis=1)).ravel() * np.asarray(self.Psi.sum(axis=1)).ravel())
        return self._norms

    def support_sizes(self):
        """|supp zᵢ| = nnz(φᵢ) · nnz(ψᵢ), shape (m,)."""
        return np.diff(self.Phi.indptr).astype(np.int64) * np.diff(self.Psi.indptr).astype(np.int64)

    def union_support(self):
        """U = ∪ᵢ supp(zᵢ), sorted int64 joint indices: the support of ΨᵀΦ (no cancellation, both ≥ 0)."""
        return self.column_counts()[0].copy()


class KernelSamples:
    """The kernelised rows Φ(zᵢ)ₖ = κφ(xₖ, xᵢ) κψ(yₖ, yᵢ) of (19), computed a block of rows at a time.

    Parameters
    ----------
    X : inputs the input kernel takes (a matrix, or a list of token sequences for :class:`mmprog.kernels.NGram`)
    Psi : sparse or array, shape (m, n_outputs), ≥ 0
    kernel_x, kernel_y : mmprog.kernels.Kernel
    block : int
        Rows per Gram block in :meth:`margins` and :meth:`norms` (bounds memory at block · m floats).

    Notes
    -----
    The joint dimension is m: w_Φ has one entry per training sample, and W = Σₖ (w_Φ)ₖ ψ(yₖ) ⊗ φ(xₖ) (22) is never
    formed.
    """

    kind = "kernel"

    def __init__(self, X, Psi, kernel_x, kernel_y, block=2048, require_nonzero=True):
        self.kx, self.ky = kernel_x, kernel_y
        if sp.issparse(X) or (isinstance(X, np.ndarray) and X.ndim == 2):
            X = check_nonnegative("Phi", X)
        self.A = kernel_x.represent(X)
        self.Psi = check_nonnegative("Psi", Psi)
        self.P = kernel_y.represent(self.Psi)
        self.n = kernel_x.size(self.A)
        if self.n != self.Psi.shape[0]:
            raise DataError(f"the inputs have {self.n} items but Psi has {self.Psi.shape[0]} rows: rows are samples "
                            f"and must pair up")
        self.dim = self.n
        self.n_outputs = self.Psi.shape[1]
        self.block = int(block)
        self._norms = None
        if require_nonzero:
            dz = self.diag()
            if np.any(dz <= 0):
                i = int(np.flatnonzero(dz <= 0)[0])
                raise DataError(f"sample {i} has kappa_phi(x_i, x_i) kappa_psi(y_i, y_i) = {dz[i]:g}: its "
                                f"Phi(z_i) = 0 cannot satisfy the margin, so (21) is infeasible; drop it")

    def diag(self):
        return self.kx.diag(self.A) * self.ky.diag(self.P)

    def _block(self, rows, cols):
        from ...kernels import joint_gram
        kx, ky = self.kx, self.ky
        return joint_gram(kx, ky, kx.take(self.A, rows), kx.take(self.A, cols),
                          ky.take(self.P, rows), ky.take(self.P, cols))

    def rows(self, idx):
        """Φ(zᵢ) for the samples ``idx``, CSR (len(idx), m)."""
        idx = np.asarray(idx, dtype=np.int64)
        R = sp.csr_matrix(self._block(idx, np.arange(self.n)))
        R.eliminate_zeros()
        R.sort_indices()
        return R

    def margins(self, J, values):
        """Φ(zᵢ)ᵀw_Φ for all i, with w_Φ given on J: K[:, J] @ values, a block of rows at a time."""
        J = np.asarray(J, dtype=np.int64)
        out = np.zeros(self.n)
        if J.size == 0:
            return out
        v = np.asarray(values, dtype=np.float64)
        for s in range(0, self.n, self.block):
            rows = np.arange(s, min(self.n, s + self.block))
            out[rows] = np.asarray(self._block(rows, J) @ v).ravel()
        return out

    def norms(self):
        """‖Φ(zᵢ)‖₁ = Σₖ Kᵢₖ (non-negative kernels), shape (m,)."""
        if self._norms is None:
            self._norms = self.margins(np.arange(self.n), np.ones(self.n))
        return self._norms

    def support_sizes(self):
        """|supp Φ(zᵢ)|, shape (m,), a block of rows at a time."""
        out = np.zeros(self.n, dtype=np.int64)
        for s in range(0, self.n, self.block):
            R = self.rows(np.arange(s, min(self.n, s + self.block)))
            out[s:s + R.shape[0]] = np.diff(R.indptr)
        return out

    def union_support(self):
        """Samples k with Φ(zᵢ)ₖ > 0 for some i. For a positive semi-definite kernel Kₖₖ = 0 forces Kᵢₖ = 0 for all
        i (Cauchy–Schwarz), so U = {k : Kₖₖ > 0}."""
        return np.flatnonzero(self.diag() > 0).astype(np.int64)
