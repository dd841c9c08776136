"""The L∞-regularised max-margin LP of Szedmak, Ni, Saunders & Rousu, "Max-margin structured output learning in
L1 norm space", as explicit Pyomo models grown by constraint generation over samples.

Inputs and outputs are non-negative sparse vectors φ(xᵢ) (n_inputs) and ψ(yᵢ) (n_outputs); the joint vector
zᵢ = ψ(yᵢ) ⊗ φ(xᵢ) has the joint index j = o · n_inputs + k for output o and input k, so w read row-major is the
operator W (n_outputs, n_inputs) of ψ(y) ⇐ Wφ(x), and zᵢᵀw = ψ(yᵢ)ᵀWφ(xᵢ) (eq. 1).

The programs
------------
(10), the master (``LInf``, registered as ``"linf"``)::

    min_{t, w}  t                       (= ‖w‖∞)
    s.t.        zᵢᵀw ≥ b                 margin[i],   i in the working set S
                w_j − t ≤ 0              w_upper[j],  j ∈ J
                w_j + t ≥ 0              w_lower[j],  j ∈ J
                (w_private[i] with private_upper[i], private_lower[i]: the aggregated columns below)

(3), the L1 distance of the hyperplane {u : wᵀu = b} from the origin (:func:`distance_model`), and its dual (6)
(:func:`distance_dual_model`); Proposition 1: both equal b/‖w‖∞, which is why (10) maximises the L1 margin.

Why the master holds only the columns J of active rows, and only some rows
--------------------------------------------------------------------------
The joint dimension n_outputs · n_inputs can be 10⁸ and m can be 10⁵, so neither z nor w is ever dense. The master
holds a variable w_j only for the joint indices J = ∪_{i∈S} supp(zᵢ) of its rows. This loses nothing: take any
feasible (t, w) of the master over *all* joint indices and set w_j = 0 for j ∉ J; no row in S involves such j, so
the rows still hold, and |w_j| ≤ t still holds, so the objective is unchanged. Hence the restricted master has the
same optimum, and its solution extended by zeros is an optimal solution of the master over all indices — the
zero extension picks the point 0 of the interval [−d, d] that the paper's (15) leaves free for components no sample
touches (section 4.1, the structure behind Proposition 2).

Rows are generated (:func:`solve_linf`): the master starts from a few samples; each round one sparse product gives
zᵢᵀw for all m samples (:meth:`TensorSamples.margins_of_columns`: the rows restricted to the union of supports, a
sparse (m, |U|) matrix built once — never a dense z), the violated samples are added — their rows zᵢ built as sparse
Kronecker products (:meth:`TensorSamples.rows`) — and the master is re-solved warm. When no sample is violated, the
zero-extended w is feasible for all m constraints and optimal for a relaxation of (10), hence optimal for (10). The
LP dual of the master (not in the paper; :meth:`LInf.dual_model`) is max b·Σᵢαᵢ s.t. ‖Σᵢ αᵢzᵢ‖₁ ≤ 1, α ≥ 0, and
the master's multipliers, padded with zeros, are feasible for the dual of the full (10): they certify the optimum.
Whether the master stays small depends on the data: with equal ‖zᵢ‖₁ every row forces w = d on its whole support, and
where samples share few joint indices (the sparse generator at joint dimension 10⁸) every sample ends up in the
master; the geometric batch schedule then keeps the rounds near log₂(m / batch).

Private columns. A joint index that occurs in exactly one sample over the whole data (its count in the pattern
product (Ψ ≠ 0)ᵀ(Φ ≠ 0) is 1) appears in one row only, forever. All such indices of sample i share one column
``w_private[i]`` with coefficient sᵢ = Σ_{j private to i} z_ij and the bounds −t ≤ w_private[i] ≤ t: a solution
of this master gives w_j = w_private[i] on those j with the same row value and bounds; conversely any w gives
w_private[i] = Σⱼ z_ij w_j / sᵢ, a weighted mean of values in [−t, t], with the same row value. The two masters
have the same optimum, and in sparse data most joint indices are private (a rare word with a given output).

Two routes solve the master. The explicit Pyomo model (components ``t``, ``w``, ``w_private``, ``w_upper``,
``w_lower``, ``private_upper``, ``private_lower``, ``margin``) grown round by round and solved through the solver
registry (HiGHS through its persistent handle) is ``route="pyomo"``. Writing rows through Pyomo costs about 0.4 ms
per column and per row (13 of 16 s at m = 10⁴ on the sparse generator), so with HiGHS the default is
``route="native"``: the same rows go to one highspy object as CSR blocks (:class:`NativeMaster`, 2.7 s at m = 10⁴,
46 s at m = 10⁵) and the Pyomo model is written on demand (:meth:`LInf.materialise`, on first access to
``LInfRun.model``) with the solution loaded, for inspection, export and the dualities. A test checks that both
routes reach the same optimum and that the written model holds every row and column.

Closed forms for non-negative z (the paper's setting)
----------------------------------------------------
* Proposition 2: the optimum of (10) is d = b / minᵢ‖zᵢ‖₁, attained by w = d·𝟙 (:func:`proposition2`).
* (17), the minimum-support solution of (16): w_j = d on the union of the supports U = ∪ᵢ supp(zᵢ), 0 elsewhere
  (:func:`min_support_solution`); U is the support of ΨᵀΦ, one sparse product.
* (18), the scale-free solution: 𝟙 on U (:func:`scale_free_solution`).

(17) is optimal for (10) (zᵢᵀw = d‖zᵢ‖₁ ≥ b). It is the *minimum*-support optimum — the solution of (16) — when
every ‖zᵢ‖₁ is equal (L1-normalised φ and ψ, as in section 7): then each row forces w_j = d on its whole support.
With unequal norms a row with ‖zᵢ‖₁ > minₖ‖zₖ‖₁ needs only part of its support at d, and (16) can have a smaller
support than U. :func:`min_support_model` states (16) exactly (a mixed-integer program, for small instances) so the
claim can be checked.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp
from pyomo.core.expr.numeric_expr import LinearExpression

from ...cuts import Cuts
from ...exceptions import DataError, ParameterError, SolverError, check_param
from ...solvers import ProblemClass, get_solver
from ..base import Dims, Program, Solution, register
from ..working_set import WorkingSet, values_of

log = logging.getLogger("mmprog.linf")

__all__ = ["check_nonnegative", "TensorSamples", "KernelSamples", "LInf", "LInfRun", "solve_linf",
           "distance_model", "distance_dual_model", "proposition2", "min_support_solution", "scale_free_solution",
           "min_support_model", "duality_report", "restrict_to_columns", "joint_solution", "NativeMaster",
           "linf_checks"]


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

    def private_columns(self, i):
        """The joint indices private to sample i (sorted int64)."""
        Z = self.rows([i])
        cols = Z.indices.astype(np.int64)
        return cols[self.private_mask(cols)]

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


# ------------------------------------------------------------------------------------------------------------
# The master (10) as an explicit Pyomo model
# ------------------------------------------------------------------------------------------------------------

@register("linf")
class LInf(Program):
    """(10): min ‖w‖∞ s.t. zᵢᵀw ≥ b, as the LP min t s.t. zᵢᵀw ≥ b, −t ≤ w_j ≤ t (module docstring).

    Parameters
    ----------
    b : float > 0
        The margin. The optimum scales linearly with it (Proposition 2: b / minᵢ‖zᵢ‖₁).
    C : None
        Not a parameter of this program (hard margins, no slack); accepted only to say so.

    Notes
    -----
    Rows are *samples*, not loss-augmented labelings: the program is trained by :func:`solve_linf` (or
    :class:`mmprog.linf.LInfMaxMargin`), not by :func:`mmprog.fit`. A batch of rows is given to :meth:`record`
    (arrays only) or :meth:`add_cuts` (arrays and Pyomo components) as :class:`mmprog.cuts.Cuts` with ``dF`` = the
    rows zᵢ over column keys, ``example`` = the sample ids and ``dl`` = b, so the model's working set
    (``model.ws``) is readable by the generic tools; :meth:`materialise` writes the Pyomo components of whatever
    was only recorded.
    """

    problem_class = ProblemClass.LP
    paper = "Szedmak, Ni, Saunders & Rousu, Max-margin structured output learning in L1 norm space"
    equations = "(10); (3) and (6); (16)-(18)"
    params_doc = {"b": "a float > 0 (the margin of z_i'w >= b)"}

    def __init__(self, b=1.0, C=None):
        if C is not None:
            raise ParameterError("program 'linf' has no slack weight C (the hard-margin LP (10)); its parameter is "
                                 "b, the margin")
        check_param("b", b, isinstance(b, (int, float, np.floating)) and np.isfinite(b) and b > 0, "a float > 0")
        self.b = float(b)

    def params(self):
        return {"b": self.b}

    def regulariser(self, w):
        return float(np.max(np.abs(w), initial=0.0))

    def objective_at(self, w, hinge=None):
        return self.regulariser(w)

    def fit(self, oracle, **engine_kw):
        raise ParameterError("program 'linf' learns from non-negative sparse (Phi, Psi) sets, not from a "
                             "structured data set: use mmprog.linf.LInfMaxMargin().fit(Phi, Psi) or "
                             "mmprog.programs.linf.solve_linf")

    # --- the model ----------------------------------------------------------------------------------------
    def build(self, dims: Dims, joint_dim=None):
        """The empty master.

        Parameters
        ----------
        dims : Dims
            ``n`` samples; ``dim`` the column key space: the joint dimension, plus n when rows carry aggregated
            private columns (keys ``joint_dim + i``).
        joint_dim : int, optional
            n_outputs · n_inputs (default ``dims.dim``): keys below it are joint indices, keys from it up are the
            private columns of samples.
        """
        m = pyo.ConcreteModel(name="linf")
        m.dims = dims
        m.joint_dim = int(dims.dim if joint_dim is None else joint_dim)
        m.ws = WorkingSet(dims.dim)
        m.b = float(self.b)
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        # t >= 0 is implied by -t <= w_j <= t once a column exists; stated so the empty master is bounded
        m.t = pyo.Var(domain=pyo.NonNegativeReals, initialize=0.0)
        m.J = pyo.Set(initialize=[], ordered=True, doc="joint indices j = o * n_inputs + k of the columns")
        m.w = pyo.Var(m.J, dense=False, initialize=0.0)
        m.w_upper = pyo.Constraint(m.J, doc="w_j - t <= 0")
        m.w_lower = pyo.Constraint(m.J, doc="w_j + t >= 0")
        m.P = pyo.Set(initialize=[], ordered=True, doc="samples whose private joint indices share one column")
        m.w_private = pyo.Var(m.P, dense=False, initialize=0.0)
        m.private_upper = pyo.Constraint(m.P, doc="w_private_i - t <= 0")
        m.private_lower = pyo.Constraint(m.P, doc="w_private_i + t >= 0")
        m.I = pyo.Set(initialize=[], ordered=True, doc="samples in the working set")
        m.margin = pyo.Constraint(m.I, doc="z_i'w >= b")
        m.objective = pyo.Objective(expr=m.t, sense=pyo.minimize)
        # the master's columns and rows as arrays; the Pyomo components above follow them (materialise)
        m.keys = []                       # column keys in column order: joint index j, or joint_dim + i
        m.col_keys = np.zeros(0, dtype=np.int64)    # the keys sorted ...
        m.col_pos = np.zeros(0, dtype=np.int64)     # ... and their column positions
        m.in_master = np.zeros(dims.n, dtype=bool)   # samples with a row
        m.w_list = []                     # the Pyomo variable of every materialised column, in column order
        m.col_values = None               # the last solution on the columns (ndarray) and t
        m.t_value = 0.0
        m.native_duals = None             # multipliers of the native HiGHS route (margin, upper, lower rows)
        return m

    def record(self, model, cuts):
        """Enter the rows zᵢᵀw ≥ b of ``cuts`` (``dF`` rows zᵢ over column keys, ``example`` the sample ids) and
        their new columns into the master's arrays, without writing Pyomo components (:meth:`materialise` does).
        Samples already in the master are skipped.

        Returns
        -------
        (int, scipy.sparse.csr_matrix)
            How many columns are new (they are the last ones), and the new rows over column positions
            (rows, n_columns).
        """
        Z = sp.csr_matrix(cuts.dF)
        ids = np.asarray(cuts.example, dtype=np.int64)
        # a sample enters once (also when listed twice in one batch)
        _, first = np.unique(ids, return_index=True)
        keep = np.zeros(len(ids), dtype=bool)
        keep[first] = True
        keep &= ~model.in_master[ids]
        if not keep.all():
            Z, ids = Z[keep], ids[keep]
        if len(ids) == 0:
            return 0, sp.csr_matrix((0, len(model.keys)))
        cols = np.unique(Z.indices.astype(np.int64))
        fresh = cols[~np.isin(cols, model.col_keys, assume_unique=True)]
        base = len(model.keys)
        if fresh.size:
            model.keys.extend(fresh.tolist())
            keys = np.concatenate([model.col_keys, fresh])
            pos = np.concatenate([model.col_pos, base + np.arange(fresh.size)])
            order = np.argsort(keys, kind="stable")
            model.col_keys, model.col_pos = keys[order], pos[order]
        model.in_master[ids] = True
        model.ws.add(Cuts(ids, Z, np.full(len(ids), model.b)))
        return int(fresh.size), restrict_to_columns(model, Z)

    def _add_column(self, model, key):
        t = model.t
        if key < model.joint_dim:
            model.J.add(key)
            v = model.w[key]
            up, lo = model.w_upper, model.w_lower
        else:
            key = key - model.joint_dim
            model.P.add(key)
            v = model.w_private[key]
            up, lo = model.private_upper, model.private_lower
        up[key] = LinearExpression(constant=0.0, linear_coefs=[1.0, -1.0], linear_vars=[v, t]) <= 0.0
        lo[key] = LinearExpression(constant=0.0, linear_coefs=[1.0, 1.0], linear_vars=[v, t]) >= 0.0
        return v, up[key], lo[key]

    def materialise(self, model):
        """Write the Pyomo variables, bound rows and margin rows of the columns and rows recorded since the last
        call, and load the last solution (when there is one) into every variable.

        Returns
        -------
        (list, list)
            The new variables and the new constraints (bound rows first), for a persistent solver handle.
        """
        new_vars, new_cons = [], []
        for key in model.keys[len(model.w_list):]:
            v, up, lo = self._add_column(model, key)
            model.w_list.append(v)
            new_vars.append(v)
            new_cons.append(up)
            new_cons.append(lo)
        ws = model.ws
        done = len(ws.components)
        if ws.size > done:
            rows = np.arange(done, ws.size)
            Zr = restrict_to_columns(model, ws.dF()[rows])
            ids = ws.example_array()[rows]
            w_list, b = model.w_list, model.b
            for r, i in enumerate(ids.tolist()):
                lo, hi = Zr.indptr[r], Zr.indptr[r + 1]
                body = LinearExpression(constant=0.0, linear_coefs=Zr.data[lo:hi].tolist(),
                                        linear_vars=[w_list[p] for p in Zr.indices[lo:hi].tolist()])
                model.I.add(i)
                model.margin[i] = body >= b
                con = model.margin[i]
                if not ws.active[done + r]:
                    con.deactivate()
                ws.components.append(con)
                new_cons.append(con)
        if model.col_values is not None and len(model.col_values) == len(model.w_list):
            for v, x in zip(model.w_list, model.col_values.tolist()):
                v.set_value(x, skip_validation=True)
            model.t.set_value(model.t_value, skip_validation=True)
        return new_vars, new_cons

    def add_cuts(self, model, cuts):
        """:meth:`record` the rows of ``cuts`` and :meth:`materialise` them at once (the Pyomo route)."""
        self.record(model, cuts)
        return self.materialise(model)

    def drop_cuts(self, model, positions):
        self.materialise(model)
        for pos in positions:
            model.ws.components[pos].deactivate()
            model.ws.active[pos] = False

    def columns(self, model):
        """The keys of the master's columns in column order, int64: joint index j for w[j], joint_dim + i for
        w_private[i]."""
        return np.asarray(model.keys, dtype=np.int64)

    def bound_rows(self, model):
        """The rows (w_j ≤ t, −t ≤ w_j) of every column, in column order: two lists of constraints."""
        self.materialise(model)
        jd = model.joint_dim
        up = [model.w_upper[k] if k < jd else model.private_upper[k - jd] for k in model.keys]
        lo = [model.w_lower[k] if k < jd else model.private_lower[k - jd] for k in model.keys]
        return up, lo

    def read_solution(self, model):
        """The master's point: ``w`` on the columns (``extra["keys"]`` their keys; 0 elsewhere), the margins'
        multipliers ``alpha`` (≥ 0) when the last solve gave them, ``objective`` t and ``dual_objective`` b·Σα."""
        if model.col_values is not None and len(model.col_values) == len(model.keys):
            w, t = np.asarray(model.col_values, dtype=np.float64), float(model.t_value)
        else:
            w, t = values_of(model.w_list), float(model.t.value or 0.0)
        alpha = None
        if model.native_duals is not None:
            alpha = model.native_duals["margin"]
        else:
            try:
                alpha = model.ws.duals(model)
            except SolverError:
                alpha = None
        dual = None if alpha is None else float(model.b * alpha.sum())
        return Solution(w=w, xi=np.zeros(0), alpha=alpha if alpha is not None else np.zeros(0), objective=t,
                        dual_objective=dual, extra={"keys": self.columns(model), "t": t})

    def dual_model(self, model):
        """The LP dual of the master on its working set, as its own Pyomo model (not in the paper)::

            max_{α, s}  b Σᵢ αᵢ
            s.t.        Σᵢ αᵢ z_ij − s_j ≤ 0,  Σᵢ αᵢ z_ij + s_j ≥ 0   (stat_upper[j], stat_lower[j]),  j ∈ J
                        Σ_j s_j ≤ 1                                  (budget)
                        α ≥ 0

        i.e. max b·1ᵀα s.t. ‖Σᵢ αᵢ zᵢ‖₁ ≤ 1: with multipliers β⁺, β⁻ ≥ 0 of w_j ≤ t and −t ≤ w_j, stationarity in w
        gives Zᵀα = β⁺ − β⁻ and in t gives Σ(β⁺ + β⁻) = 1. Columns outside J have (Zᵀα)_j = 0. The index set J is
        the master's column keys, aggregated private columns included (for them (Zᵀα)_j = sᵢαᵢ, which equals the
        sum of |(Zᵀα)_j| over the joint indices they stand for, since z, α ≥ 0: the same dual value).
        """
        ws = model.ws
        ids = ws.example_array()
        J = self.columns(model)
        Zc = restrict_to_columns(model, ws.dF()).tocsc()
        D = pyo.ConcreteModel(name="linf_dual")
        D.I = pyo.Set(initialize=ids.tolist(), ordered=True)
        D.J = pyo.Set(initialize=J.tolist(), ordered=True)
        D.alpha = pyo.Var(D.I, domain=pyo.NonNegativeReals)
        D.s = pyo.Var(D.J, domain=pyo.NonNegativeReals)
        D.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        alpha_list = [D.alpha[int(i)] for i in ids]
        D.stat_upper = pyo.Constraint(D.J)
        D.stat_lower = pyo.Constraint(D.J)
        for p, j in enumerate(J.tolist()):
            lo, hi = Zc.indptr[p], Zc.indptr[p + 1]
            coefs = Zc.data[lo:hi].tolist()
            vars_ = [alpha_list[r] for r in Zc.indices[lo:hi].tolist()]
            D.stat_upper[j] = LinearExpression(constant=0.0, linear_coefs=coefs + [-1.0],
                                               linear_vars=vars_ + [D.s[j]]) <= 0.0
            D.stat_lower[j] = LinearExpression(constant=0.0, linear_coefs=coefs + [1.0],
                                               linear_vars=vars_ + [D.s[j]]) >= 0.0
        D.budget = pyo.Constraint(expr=pyo.quicksum(D.s[j] for j in D.J) <= 1.0)
        D.objective = pyo.Objective(expr=model.b * pyo.quicksum(alpha_list), sense=pyo.maximize)
        return D


def restrict_to_columns(model, Z):
    """Rows Z (CSR over column keys) re-indexed by the master's column positions: CSR (rows, n_columns), column p
    is the p-th column (``model.keys[p]``). Every row of the master has its support among the columns."""
    Z = sp.csr_matrix(Z)
    where = model.col_pos[np.searchsorted(model.col_keys, Z.indices.astype(np.int64))]
    return sp.csr_matrix((Z.data, where, Z.indptr), shape=(Z.shape[0], len(model.keys)))


def duality_report(model):
    """LP duality of the master (10) recomputed from the numbers, after a solve that gave duals (the native HiGHS
    route's row multipliers, or the Pyomo route's ``model.dual`` read through :func:`mmprog.solvers.duals`).

    Returns
    -------
    dict
        ``primal`` t; ``dual`` b·Σα from the solver's multipliers α of the margins; ``alpha_min`` (≥ 0 for dual
        feasibility); ``l1_of_Zt_alpha`` ‖Σᵢ αᵢzᵢ‖₁ (≤ 1); ``beta_sum`` Σ(β⁺ + β⁻) from the bound rows' multipliers
        (= 1, stationarity in t); ``beta_min`` (≥ 0); ``stationarity`` ‖Zᵀα − (β⁺ − β⁻)‖∞ (= 0, stationarity in
        w); ``complementarity`` maxᵢ |αᵢ·(zᵢᵀw − b)| (= 0); ``primal_violation`` maxᵢ (b − zᵢᵀw)⁺ on the working set;
        ``bound_violation`` ‖w‖∞ − t (≤ 0).
    """
    from ...solvers import duals
    ws = model.ws
    prog = LInf(b=model.b)
    sol = prog.read_solution(model)
    if model.native_duals is not None:
        alpha, up, lo = (model.native_duals[k] for k in ("margin", "upper", "lower"))
    else:
        solver_name = getattr(model, "solved_with", None)
        alpha = ws.duals(model)
        up_rows, lo_rows = prog.bound_rows(model)
        up = duals(model, up_rows, solver_name)      # ≤ 0 for a ≤ row of a min
        lo = duals(model, lo_rows, solver_name)      # ≥ 0 for a ≥ row of a min
    beta_plus, beta_minus = -np.asarray(up), np.asarray(lo)
    Zj = restrict_to_columns(model, ws.dF())
    Zt_alpha = np.asarray(Zj.T @ alpha).ravel()
    margins = np.asarray(Zj @ sol.w).ravel()
    return {
        "primal": sol.objective,
        "dual": float(model.b * alpha.sum()),
        "alpha_min": float(alpha.min(initial=0.0)),
        "l1_of_Zt_alpha": float(np.abs(Zt_alpha).sum()),
        "beta_sum": float(beta_plus.sum() + beta_minus.sum()),
        "beta_min": float(min(beta_plus.min(initial=0.0), beta_minus.min(initial=0.0))),
        "stationarity": float(np.max(np.abs(Zt_alpha - (beta_plus - beta_minus)), initial=0.0)),
        "complementarity": float(np.max(np.abs(alpha * (margins - model.b)), initial=0.0)),
        "primal_violation": float(np.max(np.maximum(model.b - margins, 0.0), initial=0.0)),
        "bound_violation": float(np.max(np.abs(sol.w), initial=0.0) - sol.objective),
    }


class NativeMaster:
    """(10) in one highspy object, fed with CSR blocks from the master's arrays (the native HiGHS route).

    Column 0 is t (cost 1, t ≥ 0), column p + 1 the master's p-th column; per new column the rows w − t ≤ 0 and
    w + t ≥ 0, per sample its margin row ≥ b. Writing the same LP through Pyomo's persistent interface costs about
    0.4 ms per column and per row (expression walks and per-row interface calls): 150 of 250 s at m = 10⁵ on the
    sparse generator. The Pyomo model is then written on demand (:meth:`LInf.materialise`); a test checks both
    routes reach the same optimum.
    """

    def __init__(self):
        import highspy
        self.highspy = highspy
        self.h = highspy.Highs()
        self.h.setOptionValue("output_flag", False)
        self.inf = highspy.kHighsInf
        self.h.addVar(0.0, self.inf)
        self.h.changeColCost(0, 1.0)
        self.n_cols = 0
        self.upper_rows, self.lower_rows, self.margin_rows = [], [], []
        self.n_rows = 0

    def _add_rows(self, lower, upper, A):
        A = sp.csr_matrix(A)
        self.h.addRows(A.shape[0], np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64),
                       A.nnz, A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32),
                       A.data.astype(np.float64))
        first = self.n_rows
        self.n_rows += A.shape[0]
        return np.arange(first, self.n_rows)

    def add(self, n_new, Zr, b):
        """Append ``n_new`` columns with their bound rows and the margin rows ``Zr`` (over column positions)."""
        if n_new:
            self.h.addVars(n_new, np.full(n_new, -self.inf), np.full(n_new, self.inf))
            cols = 1 + self.n_cols + np.arange(n_new)
            # rows (w_c, t) with coefficients (1, -1) and (1, 1)
            idx = np.stack([np.zeros(n_new, dtype=np.int64), cols], axis=1).ravel()
            ptr = np.arange(0, 2 * n_new + 1, 2)
            up = sp.csr_matrix((np.tile([-1.0, 1.0], n_new), idx, ptr), shape=(n_new, 1 + self.n_cols + n_new))
            lo = sp.csr_matrix((np.tile([1.0, 1.0], n_new), idx, ptr), shape=up.shape)
            self.upper_rows.extend(self._add_rows(np.full(n_new, -self.inf), np.zeros(n_new), up).tolist())
            self.lower_rows.extend(self._add_rows(np.zeros(n_new), np.full(n_new, self.inf), lo).tolist())
            self.n_cols += n_new
        if Zr.shape[0]:
            Zr = sp.csr_matrix(Zr)
            A = sp.csr_matrix((Zr.data, Zr.indices + 1, Zr.indptr), shape=(Zr.shape[0], 1 + self.n_cols))
            self.margin_rows.extend(self._add_rows(np.full(Zr.shape[0], b), np.full(Zr.shape[0], self.inf),
                                                   A).tolist())

    def solve(self, cold=False, time_limit=None):
        """Run HiGHS (from scratch when ``cold``); return (SolveStatus, column values (n_cols,), t)."""
        from .._highs_native import run_highs
        if cold:
            self.h.clearSolver()
        status = run_highs(self.h, time_limit)
        x = np.asarray(self.h.getSolution().col_value, dtype=np.float64)
        return status, x[1:], float(x[0])

    def duals(self):
        """Row multipliers (HiGHS: ≥ 0 on an active ≥ row, ≤ 0 on an active ≤ row of a minimisation, the sign
        convention of :func:`mmprog.solvers.duals`): margins (≥ 0), upper and lower bound rows, in column order."""
        y = np.asarray(self.h.getSolution().row_dual, dtype=np.float64)
        return {"margin": y[self.margin_rows], "upper": y[self.upper_rows],
                "lower": y[self.lower_rows]}


# ------------------------------------------------------------------------------------------------------------
# Constraint generation over samples
# ------------------------------------------------------------------------------------------------------------

@dataclass
class LInfRun:
    """What :func:`solve_linf` returns.

    Attributes
    ----------
    objective : float
        t = ‖w‖∞ at the optimum of (10).
    J : ndarray of int64, shape (nnz,)
        Sorted joint indices where w may be non-zero (the master's joint columns and the private joint indices of
        its aggregated columns); w is 0 at every other index.
    w : ndarray, shape (nnz,)
        w on J.
    alpha : ndarray, shape (n_rows,)
        Multipliers of the master's margin rows (≥ 0 up to solver tolerance), in working-set order.
    working_set : ndarray of int64, shape (n_rows,)
        Sample ids in the master.
    rounds : int
        Constraint-generation rounds (master solves).
    history : list of dict
        Per round: ``round``, ``objective``, ``violated``, ``added``, ``n_rows``, ``n_cols``, ``separation``,
        ``rows``, ``model``, ``solver`` (seconds).
    timings : dict
        Totals in seconds: ``separation`` (the sparse products zᵢᵀw), ``rows`` (Kronecker rows), ``model`` (the
        master's bookkeeping; on the Pyomo route also building the Pyomo rows and loading values), ``solver``,
        ``total``.
    termination : str
        ``"converged"`` (no sample violated), ``"max_rounds"`` or ``"time_limit"``.
    n_vars, n_cons : int
        LP size: columns + 1 (t) variables, 2 · columns + rows constraints.
    n_private : int
        How many of the columns are aggregated private columns.
    max_violation : float
        maxᵢ (b − zᵢᵀw)⁺ over all m samples at the returned w.
    route : str
        ``"native"`` (HiGHS fed with CSR blocks) or ``"pyomo"`` (the registry solver through Pyomo).
    model : pyomo ConcreteModel
        The master as an explicit Pyomo model (written on first access on the native route).
    """

    objective: float
    J: np.ndarray
    w: np.ndarray
    alpha: np.ndarray
    working_set: np.ndarray
    master: object = field(repr=False)
    rounds: int = 0
    history: list = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    termination: str = "converged"
    n_vars: int = 0
    n_cons: int = 0
    n_private: int = 0
    max_violation: float = 0.0
    solver: str = "highs"
    route: str = "pyomo"

    @property
    def model(self):
        LInf(b=self.master.b).materialise(self.master)
        return self.master


def _cold(handle):
    """Drop the basis of a persistent HiGHS handle so the next solve presolves from scratch.

    The master (10) is highly degenerate (every column is tied to t by two rows): after a round that adds many
    columns, a HiGHS simplex hot-started from the old basis took 9-18 s on 16-41 thousand columns where a presolved
    cold solve took 0.3-1 s. Solvers without such a handle are left alone."""
    highs = getattr(getattr(handle, "_opt", None), "_solver_model", None)
    if highs is not None and hasattr(highs, "clearSolver"):
        highs.clearSolver()


def joint_solution(samples, model):
    """w of the master over joint indices: its joint columns as they are and each aggregated column w_private[i]
    copied to every joint index private to sample i.

    Returns
    -------
    (ndarray of int64, ndarray)
        Sorted joint indices and the values there.
    """
    keys = np.asarray(model.keys, dtype=np.int64)
    vals = LInf(b=model.b).read_solution(model).w
    jd = model.joint_dim
    joint = keys < jd
    J, w = [keys[joint]], [vals[joint]]
    if (~joint).any():
        ids = keys[~joint] - jd
        Z = samples.rows(ids)
        cols = Z.indices.astype(np.int64)
        private = samples.private_mask(cols)
        row = np.repeat(np.arange(len(ids)), np.diff(Z.indptr))
        J.append(cols[private])
        w.append(vals[~joint][row[private]])
    J, w = np.concatenate(J), np.concatenate(w)
    order = np.argsort(J)
    return J[order], w[order]


def _margins(samples, model, keys, vals, aggregate):
    """zᵢᵀw for all samples at the master's point (its columns ``keys`` with values ``vals``)."""
    if hasattr(samples, "margins_of_columns") and int(samples.support_sizes().sum()) <= samples.cache_limit:
        return samples.margins_of_columns(keys, vals, aggregate=aggregate)
    if aggregate:
        return samples.margins(*joint_solution(samples, model))
    return samples.margins(keys, vals)


def solve_linf(samples, b=1.0, *, solver="highs", route="auto", n_start=100, batch=100, growth=2.0,
               aggregate=True, tol=1e-7, max_rounds=1000, time_limit=None, warm_fraction=0.05):
    """Solve (10) by constraint generation over samples (module docstring).

    Parameters
    ----------
    samples : TensorSamples or KernelSamples
    b : float > 0
    solver : str
        A registered LP solver with duals.
    route : {"auto", "native", "pyomo"}
        ``"native"``: one highspy object fed with CSR blocks (:class:`NativeMaster`), the Pyomo model written on
        demand; ``"pyomo"``: the Pyomo model grown round by round and solved through the registry (HiGHS through
        its persistent handle, warm); ``"auto"``: native for ``solver="highs"``, else Pyomo.
    n_start : int
        Rows of the first master.
    batch : int
        Most violated samples added in the second round; each later round adds ``growth`` times more (a
        geometric schedule: when the optimum needs most samples — sparse joint spaces, where samples share few
        joint indices — the rounds stay logarithmic in m).
    growth : float ≥ 1
    aggregate : bool
        Give the joint indices private to one sample one shared column per sample (exact; module docstring).
        Only for :class:`TensorSamples`.
    tol : float
        A sample is violated when b − zᵢᵀw > tol · b.
    max_rounds : int
    time_limit : float, optional
        Wall-clock seconds.
    warm_fraction : float
        Re-solve warm (from the previous basis) when a round adds at most this fraction of new columns, else cold
        (see :func:`_cold`).

    Returns
    -------
    LInfRun

    Notes
    -----
    Samples are ranked by their violation per unit of ‖zᵢ‖₁, (b − zᵢᵀw)/‖zᵢ‖₁: the least increase of ‖w‖∞ that
    sample i alone would force (zᵢᵀΔw ≤ ‖zᵢ‖₁‖Δw‖∞). At w = 0 this picks the samples of smallest norm, where
    Proposition 2 locates the binding constraint.
    """
    check_param("route", route, route in ("auto", "native", "pyomo"), '"auto", "native" or "pyomo"')
    check_param("n_start", n_start, isinstance(n_start, (int, np.integer)) and n_start >= 1, "an int >= 1")
    check_param("batch", batch, isinstance(batch, (int, np.integer)) and batch >= 1, "an int >= 1")
    check_param("growth", growth, isinstance(growth, (int, float)) and growth >= 1, "a float >= 1")
    check_param("tol", tol, isinstance(tol, (int, float)) and 0 < tol < 1, "a float in (0, 1)")
    check_param("max_rounds", max_rounds, isinstance(max_rounds, (int, np.integer)) and max_rounds >= 1,
                "an int >= 1")
    if time_limit is not None:
        check_param("time_limit", time_limit, isinstance(time_limit, (int, float)) and time_limit > 0,
                    "a number of seconds > 0 or None")
    aggregate = bool(aggregate) and getattr(samples, "kind", "") == "tensor"
    prog = LInf(b=b)
    slv = get_solver(solver)
    slv.require(ProblemClass.LP)
    if not slv.gives_duals:
        raise ParameterError(f"solver {solver!r} returns no duals, which certify the optimum of (10); use one that "
                             f"does, e.g. 'highs'")
    if route == "auto":
        route = "native" if slv.name == "highs" else "pyomo"
    elif route == "native" and slv.name != "highs":
        raise ParameterError(f'route="native" feeds HiGHS directly; with solver={solver!r} use route="pyomo"')
    t_start = time.perf_counter()
    timings = {"separation": 0.0, "rows": 0.0, "model": 0.0, "solver": 0.0}
    key_dim = samples.dim + (samples.n if aggregate else 0)
    model = prog.build(Dims(n=samples.n, dim=key_dim, n_slacks=0), joint_dim=samples.dim)
    model.solved_with = "highs-native" if route == "native" else slv.name
    native = NativeMaster() if route == "native" else None
    norms = samples.norms()
    in_ws = np.zeros(samples.n, dtype=bool)
    # first master: the samples of smallest ‖zᵢ‖₁ (the ranking below at w = 0)
    chosen = np.argsort(norms, kind="stable")[:min(n_start, samples.n)]
    handle = None
    history = []
    termination = "max_rounds"
    t = 0.0
    rnd = 0
    size = float(batch)
    while True:
        rnd += 1
        t0 = time.perf_counter()
        Z = samples.rows(chosen, aggregate=True) if aggregate else samples.rows(chosen)
        t_rows = time.perf_counter() - t0
        t0 = time.perf_counter()
        n_cols_before = len(model.keys)
        if native is not None:
            n_new, Zr = prog.record(model, Cuts(chosen, Z, np.full(len(chosen), prog.b)))
            native.add(n_new, Zr, prog.b)
            t_py = time.perf_counter() - t0
            status, vals, t = native.solve(cold=n_new > warm_fraction * max(n_cols_before, 1))
            t_solve = status.solver_time
        else:
            if handle is None and slv.persistent:
                # set up on the empty master: columns then go to the solver in one batch per round (discovering
                # them row by row inside the solver interface costs seconds per thousand columns)
                handle = slv.persistent_handle(model)
                model._handle = handle
            new_vars, new_cons = prog.add_cuts(model, Cuts(chosen, Z, np.full(len(chosen), prog.b)))
            if handle is not None:
                handle.add_variables(new_vars)
                handle.add_constraints(new_cons)
                if len(new_vars) > warm_fraction * max(n_cols_before, 1):
                    _cold(handle)
            t_py = time.perf_counter() - t0
            t0 = time.perf_counter()
            status = handle.solve(load_duals=False) if handle is not None else slv.solve(model, load_duals=False)
            t_solve = time.perf_counter() - t0
            t0 = time.perf_counter()
            vals, t = values_of(model.w_list), float(model.t.value)
            t_py += time.perf_counter() - t0 + max(0.0, t_solve - status.solver_time)
        model.col_values, model.t_value = vals, t
        in_ws[chosen] = True
        keys = prog.columns(model)
        t0 = time.perf_counter()
        viol = prog.b - _margins(samples, model, keys, vals, aggregate)
        t_sep = time.perf_counter() - t0
        bad = np.flatnonzero((viol > tol * prog.b) & ~in_ws)
        timings["rows"] += t_rows
        timings["model"] += t_py
        timings["solver"] += status.solver_time
        timings["separation"] += t_sep
        history.append({"round": rnd, "objective": t, "violated": int(bad.size), "added": int(len(chosen)),
                        "n_rows": int(model.ws.size), "n_cols": len(model.keys), "separation": t_sep,
                        "rows": t_rows, "model": t_py, "solver": status.solver_time})
        log.info("round %d: t = %.10g, %d rows, %d columns, %d violated", rnd, t, model.ws.size, len(model.keys),
                 bad.size)
        if bad.size == 0:
            termination = "converged"
            break
        if rnd >= max_rounds:
            break
        if time_limit is not None and time.perf_counter() - t_start >= time_limit:
            termination = "time_limit"
            break
        score = viol[bad] / norms[bad]
        chosen = bad[np.argsort(-score, kind="stable")[:int(size)]]
        size *= growth
    # the certificate: multipliers of the final master (a warm re-solve of an optimal LP)
    t0 = time.perf_counter()
    if native is not None:
        model.native_duals = native.duals()
        alpha = model.native_duals["margin"]
    else:
        status = handle.solve(load_duals=True) if handle is not None else slv.solve(model, load_duals=True)
        timings["solver"] += status.solver_time
        alpha = model.ws.duals(model)
    timings["model"] += time.perf_counter() - t0
    t0 = time.perf_counter()
    J, w = joint_solution(samples, model) if aggregate else (keys, np.asarray(vals))
    if not aggregate:
        order = np.argsort(J)
        J, w = J[order], w[order]
    timings["model"] += time.perf_counter() - t0
    timings["total"] = time.perf_counter() - t_start
    n_cols = len(model.keys)
    n_private = int(np.count_nonzero(keys >= model.joint_dim))
    return LInfRun(objective=t, J=J, w=w, alpha=alpha, working_set=model.ws.example_array(), master=model,
                   rounds=rnd, history=history, timings=timings, termination=termination,
                   n_vars=n_cols + 1, n_cons=2 * n_cols + model.ws.size, n_private=n_private,
                   max_violation=float(np.max(viol, initial=0.0)), solver=slv.name, route=route)


# ------------------------------------------------------------------------------------------------------------
# Proposition 1: the distance program (3) and its dual (6)
# ------------------------------------------------------------------------------------------------------------

def _support(w):
    w = np.asarray(w, dtype=np.float64).ravel()
    K = np.flatnonzero(w != 0)
    if K.size == 0:
        raise ParameterError("w must have a non-zero entry: the hyperplane w'u = b is empty for w = 0")
    return K, w


def distance_model(w, b=1.0):
    """(3): the L1 distance of the hyperplane {u : wᵀu = b} from the origin, min ‖u‖₁ s.t. wᵀu = b, as the LP::

        min  Σ_k (u_plus[k] + u_minus[k])   s.t.  Σ_k w_k (u_plus[k] − u_minus[k]) = b  (on_hyperplane),  u± ≥ 0

    over the support of w (entries where w_k = 0 take no part in the constraint, so they are 0 at the optimum).
    Proposition 1: the optimum is b/‖w‖∞.

    Parameters
    ----------
    w : ndarray, shape (n,)
    b : float > 0
    """
    K, w = _support(w)
    check_param("b", b, np.isfinite(b) and b > 0, "a float > 0")
    M = pyo.ConcreteModel(name="linf_distance_3")
    M.K = pyo.Set(initialize=K.tolist(), ordered=True)
    M.u_plus = pyo.Var(M.K, domain=pyo.NonNegativeReals)
    M.u_minus = pyo.Var(M.K, domain=pyo.NonNegativeReals)
    M.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    wk = w[K].tolist()
    M.on_hyperplane = pyo.Constraint(expr=LinearExpression(
        constant=0.0, linear_coefs=wk + [-c for c in wk],
        linear_vars=[M.u_plus[k] for k in K.tolist()] + [M.u_minus[k] for k in K.tolist()]) == float(b))
    M.objective = pyo.Objective(expr=pyo.quicksum(M.u_plus[k] + M.u_minus[k] for k in M.K), sense=pyo.minimize)
    return M


def distance_dual_model(w, b=1.0):
    """(6), the dual of (3) in the paper's scaling w_b = w/b::

        max γ   s.t.   γ (w_b)_k ≤ 1  (upper[k]),   −γ (w_b)_k ≤ 1  (lower[k]),   γ free

    over the support of w. Its optimum is 1/‖w_b‖∞ = b/‖w‖∞ (eqs. 7–9).
    """
    K, w = _support(w)
    check_param("b", b, np.isfinite(b) and b > 0, "a float > 0")
    wb = w[K] / float(b)
    M = pyo.ConcreteModel(name="linf_distance_dual_6")
    M.K = pyo.Set(initialize=K.tolist(), ordered=True)
    M.gamma = pyo.Var()
    M.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    M.upper = pyo.Constraint(M.K, rule=lambda M, k: float(wb[np.searchsorted(K, k)]) * M.gamma <= 1.0)
    M.lower = pyo.Constraint(M.K, rule=lambda M, k: -float(wb[np.searchsorted(K, k)]) * M.gamma <= 1.0)
    M.objective = pyo.Objective(expr=M.gamma, sense=pyo.maximize)
    return M


# ------------------------------------------------------------------------------------------------------------
# Closed forms (Proposition 2, (17), (18)) and the exact second stage (16)
# ------------------------------------------------------------------------------------------------------------

def proposition2(samples, b=1.0):
    """Proposition 2 for non-negative zᵢ: the optimum of (10) is d = b / minᵢ‖zᵢ‖₁, attained by d·𝟙.

    Returns
    -------
    (float, int)
        d and i* = argminᵢ ‖zᵢ‖₁.
    """
    norms = samples.norms()
    i_star = int(np.argmin(norms))
    return float(b) / float(norms[i_star]), i_star


def min_support_solution(samples, d):
    """(17): w_j = d on the union of the supports U = ∪ᵢ supp(zᵢ), 0 elsewhere.

    Returns
    -------
    (ndarray of int64, ndarray)
        U (sorted joint indices) and the values (all d).
    """
    U = samples.union_support()
    return U, np.full(U.size, float(d))


def scale_free_solution(samples):
    """(18): w_j = 1 on the union of the supports, 0 elsewhere (the shape of (17) without its scale d)."""
    U = samples.union_support()
    return U, np.ones(U.size)


def min_support_model(samples, b=1.0, t_star=None):
    """(16) stated exactly: the fewest non-zeros among the optima of (10), as a mixed-integer program::

        min Σ_j y_j   s.t.  zᵢᵀw ≥ b ∀i (margin),  w_j − t* y_j ≤ 0 (on_upper),  −w_j − t* y_j ≤ 0 (on_lower),
                            y_j ∈ {0, 1}

    over j ∈ U (a column outside every support is 0 in a minimum-support optimum). ‖w‖∞ ≤ t* is implied by the
    on-rows, so the feasible w are exactly the optima of (10) when t* is its optimum. All m rows are explicit: a
    weighted set multicover, NP-hard in general — for small instances and tests only.

    Parameters
    ----------
    samples : TensorSamples or KernelSamples
    b : float > 0
    t_star : float, optional
        The optimum of (10); default Proposition 2's d.
    """
    if t_star is None:
        t_star, _ = proposition2(samples, b)
    U = samples.union_support()
    Z = samples.rows(np.arange(samples.n))
    M = pyo.ConcreteModel(name="linf_min_support_16")
    M.U = pyo.Set(initialize=U.tolist(), ordered=True)
    M.w = pyo.Var(M.U)
    M.y = pyo.Var(M.U, domain=pyo.Binary)
    pos = {int(j): p for p, j in enumerate(U)}
    w_list = [M.w[int(j)] for j in U]
    M.on_upper = pyo.Constraint(M.U, rule=lambda M, j: M.w[j] - float(t_star) * M.y[j] <= 0.0)
    M.on_lower = pyo.Constraint(M.U, rule=lambda M, j: -M.w[j] - float(t_star) * M.y[j] <= 0.0)
    M.margin = pyo.ConstraintList()
    for r in range(Z.shape[0]):
        lo, hi = Z.indptr[r], Z.indptr[r + 1]
        M.margin.add(LinearExpression(constant=0.0, linear_coefs=Z.data[lo:hi].tolist(),
                                      linear_vars=[w_list[pos[int(c)]] for c in Z.indices[lo:hi]]) >= float(b))
    M.objective = pyo.Objective(expr=pyo.quicksum(M.y[j] for j in M.U), sense=pyo.minimize)
    return M


# ------------------------------------------------------------------------------------------------------------
# The paper's statements and the LP dualities, as rows for ``mmprog verify``
# ------------------------------------------------------------------------------------------------------------

def linf_checks(run, samples, solvers=("highs",), tol=1e-7):
    """Propositions 1 and 2, (17) and the LP duality of (10) at a solved master, recomputed from the numbers.

    Parameters
    ----------
    run : LInfRun
    samples : TensorSamples or KernelSamples
        The samples ``run`` was solved on.
    solvers : sequence of str
        Solvers for the explicit dual model and for (3)/(6); one row each, ``skipped`` when unusable here.
    tol : float
        Relative tolerance (scaled by max(1, |number|)).

    Returns
    -------
    list of dict
        Rows with the fields of :class:`mmprog.duality.Check` (``statement``, ``lhs``, ``rhs``, ``gap``,
        ``tolerance``, ``status`` ∈ pass/fail/skipped, ``reason``, ``relation``).
    """
    rows = []

    def add(statement, lhs, rhs, relation="=", reason=""):
        lhs, rhs = float(lhs), float(rhs)
        gap = abs(lhs - rhs) if relation == "=" else lhs - rhs
        tolerance = tol * max(1.0, abs(lhs), abs(rhs))
        ok = bool(np.isfinite(gap) and gap <= tolerance)
        rows.append({"statement": statement, "lhs": lhs, "rhs": rhs, "gap": gap, "tolerance": tolerance,
                     "status": "pass" if ok else "fail", "reason": reason, "relation": relation})

    def skip(statement, reason):
        rows.append({"statement": statement, "lhs": None, "rhs": None, "gap": None, "tolerance": None,
                     "status": "skipped", "reason": reason, "relation": "="})

    model = run.master
    b = model.b
    d, i_star = proposition2(samples, b)
    add("Proposition 2: optimum t of (10) = b / min_i ||z_i||_1", run.objective, d, reason=f"i* = {i_star}")
    margins = samples.margins(run.J, run.w)
    add("primal feasibility over all m samples: b <= min_i z_i'w", b, margins.min(), "≤",
        f"{len(run.working_set)} of {samples.n} samples in the master")
    add("||w||_inf <= t", np.max(np.abs(run.w), initial=0.0), run.objective, "≤")
    rep = duality_report(model)
    add("strong duality with the solver's duals: t = b * sum(alpha)", rep["primal"], rep["dual"],
        reason=f"route {run.route}")
    add("dual feasibility: alpha >= 0", 0.0, rep["alpha_min"], "≤")
    add("dual feasibility: ||sum_i alpha_i z_i||_1 <= 1", rep["l1_of_Zt_alpha"], 1.0, "≤")
    add("stationarity in t: sum(beta+ + beta-) = 1", rep["beta_sum"], 1.0)
    add("stationarity in w: Z'alpha = beta+ - beta-", rep["stationarity"], 0.0)
    add("complementary slackness: alpha_i (z_i'w - b) = 0", rep["complementarity"], 0.0)
    U, w17 = min_support_solution(samples, run.objective)
    add("(17) is optimal for (10): b <= min_i z_i'w17 (||w17||_inf = t)", b, samples.margins(U, w17).min(), "≤",
        f"|U| = {U.size}")
    for name in solvers:
        slv = get_solver(name)
        why = slv.availability(ProblemClass.LP)
        if not why:
            skip(f"explicit dual of (10) ({name}) = t", why.reason)
            skip(f"Proposition 1 ({name}): (3) = (6) = b/||w||_inf", why.reason)
            continue
        D = LInf(b=b).dual_model(model)
        slv.solve(D, load_duals=False)
        add(f"explicit dual of (10) ({name}) = t", pyo.value(D.objective), run.objective)
        if np.any(run.w != 0):
            P3, P6 = distance_model(run.w, b), distance_dual_model(run.w, b)
            slv.solve(P3, load_duals=False)
            slv.solve(P6, load_duals=False)
            expected = b / np.max(np.abs(run.w))
            add(f"Proposition 1 ({name}): value of (3) = b/||w||_inf", pyo.value(P3.objective), expected)
            add(f"Proposition 1 ({name}): value of (6) = value of (3)", pyo.value(P6.objective),
                pyo.value(P3.objective))
    return rows
