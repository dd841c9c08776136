"""Kernels for the kernelised L∞ max-margin program (Szedmak, Ni, Saunders & Rousu, section 5, eqs. (19)–(22)).

The kernelised program replaces the joint vectors zᵢ = ψ(yᵢ) ⊗ φ(xᵢ) by the m-vectors

    Φ(zᵢ)ₖ = ⟨zₖ, zᵢ⟩ = κφ(xₖ, xᵢ) · κψ(yₖ, yᵢ)                                           (19)

so the constraints become Φ(zᵢ)ᵀw_Φ ≥ b (21) and the operator is W = Σₖ (w_Φ)ₖ ψ(yₖ) ⊗ φ(xₖ) (22).

Every kernel here maps its inputs to a *representation* once (:meth:`Kernel.represent`) and computes Gram blocks
between representations (:meth:`Kernel.gram`), so a training set is encoded once and its Gram rows are computed on
demand, a block at a time, during constraint generation. All kernels are non-negative on non-negative inputs, which
keeps Φ(zᵢ) ≥ 0, the setting of Proposition 2:

* :class:`Linear` ``⟨a, b⟩``;
* :class:`Polynomial` ``(γ⟨a, b⟩ + c₀)^p`` with γ > 0, c₀ ≥ 0;
* :class:`RBF` ``exp(−γ‖a − b‖²)``;
* :class:`NGram` for token sequences: ``Σ_g count_a(g) count_b(g)`` over the n-grams g of the chosen orders (the
  p-spectrum kernel; orders (1, ..., n) give the blended spectrum kernel).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from .exceptions import DataError, ParameterError, check_param

__all__ = ["Kernel", "Linear", "Polynomial", "RBF", "NGram", "get_kernel", "joint_gram"]


def _as_matrix(X, name):
    """A float64 CSR matrix or 2-d ndarray, finite."""
    if sp.issparse(X):
        M = sp.csr_matrix(X, dtype=np.float64)
        data = M.data
    else:
        M = np.asarray(X, dtype=np.float64)
        if M.ndim != 2:
            raise DataError(f"{name} must be a 2-d array or sparse matrix (rows = samples); got shape {M.shape}")
        data = M
    if not np.all(np.isfinite(data)):
        raise DataError(f"{name} has NaN or infinite entries; remove or impute them")
    return M


def _dense(G):
    return G.toarray() if sp.issparse(G) else np.asarray(G)


class Kernel:
    """A kernel κ(a, b) on one side (inputs or outputs) of the joint kernel (19)."""

    name = "?"

    def represent(self, X, reference=None):
        """Encode the items X (rows of a matrix, or a list of sequences) once.

        Parameters
        ----------
        X : array-like, shape (n, d), sparse matrix, or list
        reference : representation, optional
            The training representation, for kernels whose encoding depends on a vocabulary (:class:`NGram`).
        """
        return _as_matrix(X, "X")

    def gram(self, A, B):
        """Gram block κ(Aₖ, Bₗ), shape (len(A), len(B)); sparse for :class:`Linear` on sparse input."""
        raise NotImplementedError

    def diag(self, A):
        """κ(Aₖ, Aₖ), shape (len(A),)."""
        raise NotImplementedError

    def size(self, A):
        return A.shape[0]

    def take(self, A, idx):
        """The representation of the items ``idx`` (a subset of A)."""
        return A[idx]

    def __call__(self, X, Y):
        A = self.represent(X)
        return self.gram(A, self.represent(Y, reference=A))

    def get_params(self, deep=True):
        """The constructor's parameters (scikit-learn's protocol, so estimators holding a kernel can be cloned)."""
        return {}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other):
        return type(self) is type(other) and self.get_params() == other.get_params()

    __hash__ = None


class Linear(Kernel):
    """κ(a, b) = ⟨a, b⟩. On sparse input the Gram block stays sparse."""

    name = "linear"

    def gram(self, A, B):
        G = A @ B.T
        return sp.csr_matrix(G) if sp.issparse(G) else np.asarray(G)

    def diag(self, A):
        if sp.issparse(A):
            return np.asarray(A.multiply(A).sum(axis=1)).ravel()
        return np.einsum("ij,ij->i", A, A)


class Polynomial(Kernel):
    """κ(a, b) = (γ⟨a, b⟩ + c₀)^p.

    Parameters
    ----------
    degree : int ≥ 1
    gamma : float > 0
    coef0 : float ≥ 0
        Non-negative so that κ ≥ 0 on non-negative inputs (Proposition 2 needs Φ(zᵢ) ≥ 0).
    """

    name = "poly"

    def __init__(self, degree=2, gamma=1.0, coef0=1.0):
        check_param("degree", degree, isinstance(degree, (int, np.integer)) and degree >= 1, "an int >= 1")
        check_param("gamma", gamma, isinstance(gamma, (int, float)) and np.isfinite(gamma) and gamma > 0,
                    "a float > 0")
        check_param("coef0", coef0, isinstance(coef0, (int, float)) and np.isfinite(coef0) and coef0 >= 0,
                    "a float >= 0 (a negative offset makes kernel values negative, outside Proposition 2)")
        self.degree, self.gamma, self.coef0 = degree, gamma, coef0

    def get_params(self, deep=True):
        return {"degree": self.degree, "gamma": self.gamma, "coef0": self.coef0}

    def gram(self, A, B):
        return (self.gamma * _dense(A @ B.T) + self.coef0) ** self.degree

    def diag(self, A):
        return (self.gamma * Linear().diag(A) + self.coef0) ** self.degree


class RBF(Kernel):
    """κ(a, b) = exp(−γ‖a − b‖²), with ‖a − b‖² = ‖a‖² + ‖b‖² − 2⟨a, b⟩ (no dense difference tensor).

    Parameters
    ----------
    gamma : float > 0
    """

    name = "rbf"

    def __init__(self, gamma=1.0):
        check_param("gamma", gamma, isinstance(gamma, (int, float)) and np.isfinite(gamma) and gamma > 0,
                    "a float > 0")
        self.gamma = gamma

    def get_params(self, deep=True):
        return {"gamma": self.gamma}

    def gram(self, A, B):
        lin = Linear()
        sq = lin.diag(A)[:, None] + lin.diag(B)[None, :] - 2.0 * _dense(A @ B.T)
        return np.exp(-self.gamma * np.maximum(sq, 0.0))

    def diag(self, A):
        return np.ones(A.shape[0])


class _NGramCounts:
    """Sparse n-gram count matrix of a list of sequences plus the vocabulary it was encoded with."""

    def __init__(self, counts, vocabulary):
        self.counts = counts
        self.vocabulary = vocabulary

    @property
    def shape(self):
        return self.counts.shape


class NGram(Kernel):
    """The n-gram (spectrum) kernel on token sequences: κ(s, u) = Σ_g c_s(g) c_u(g), g over the n-grams of s and u.

    Parameters
    ----------
    n : int or tuple of int
        The n-gram order, or several orders (``(1, 2, 3)``: the blended spectrum kernel).

    Notes
    -----
    A sequence is a list/tuple of tokens (strings or ints); a plain ``str`` is taken as its sequence of characters.
    Test sequences are encoded in the training vocabulary (``reference``): n-grams never seen in training add
    nothing to an inner product with a training sequence, so dropping them is exact for the Gram blocks the
    predictor needs.
    """

    name = "ngram"

    def __init__(self, n=2):
        orders = (n,) if isinstance(n, (int, np.integer)) else tuple(n) if isinstance(n, (tuple, list)) else None
        check_param("n", n, orders is not None and len(orders) > 0
                    and all(isinstance(k, (int, np.integer)) and k >= 1 for k in orders),
                    "an int >= 1 or a tuple of ints >= 1")
        self.n = n
        self.orders = tuple(sorted({int(k) for k in orders}))

    def get_params(self, deep=True):
        return {"n": self.n}

    def _grams(self, seq, where):
        if isinstance(seq, str):
            seq = tuple(seq)
        elif isinstance(seq, Sequence) or isinstance(seq, np.ndarray):
            seq = tuple(seq)
        else:
            raise DataError(f"{where} is a {type(seq).__name__}; the n-gram kernel takes sequences of tokens "
                            f"(lists of strings) or strings")
        for k in self.orders:
            for s in range(len(seq) - k + 1):
                yield seq[s:s + k]

    def represent(self, X, reference=None):
        if sp.issparse(X) or (isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype.kind == "f"):
            raise DataError("the n-gram kernel takes a list of token sequences, not a numeric matrix; use "
                            "kernel='linear' (or rbf/poly) for feature matrices")
        vocab = dict(reference.vocabulary) if reference is not None else {}
        grow = reference is None
        rows, cols = [], []
        for i, seq in enumerate(X):
            for g in self._grams(seq, f"item {i}"):
                j = vocab.get(g)
                if j is None:
                    if not grow:
                        continue
                    j = vocab[g] = len(vocab)
                rows.append(i)
                cols.append(j)
        n = len(X)
        counts = sp.csr_matrix((np.ones(len(rows)), (np.asarray(rows, dtype=np.int64),
                                                     np.asarray(cols, dtype=np.int64))),
                               shape=(n, max(len(vocab), 1)))
        counts.sum_duplicates()
        return _NGramCounts(counts, vocab)

    def gram(self, A, B):
        d = max(A.counts.shape[1], B.counts.shape[1])
        Ac = sp.csr_matrix(A.counts, shape=(A.counts.shape[0], d)) if A.counts.shape[1] != d else A.counts
        Bc = sp.csr_matrix(B.counts, shape=(B.counts.shape[0], d)) if B.counts.shape[1] != d else B.counts
        return sp.csr_matrix(Ac @ Bc.T)

    def diag(self, A):
        return np.asarray(A.counts.multiply(A.counts).sum(axis=1)).ravel()

    def size(self, A):
        return A.counts.shape[0]

    def take(self, A, idx):
        return _NGramCounts(A.counts[idx], A.vocabulary)

    def __call__(self, X, Y):
        # one shared vocabulary, so n-grams of Y unseen in X still count between two Y items
        both = self.represent(list(X) + list(Y))
        n = len(X)
        return self.gram(self.take(both, np.arange(n)), self.take(both, np.arange(n, n + len(Y))))


_BY_NAME = {"linear": Linear, "poly": Polynomial, "polynomial": Polynomial, "rbf": RBF, "ngram": NGram}


def get_kernel(spec):
    """A :class:`Kernel` from a name (``"linear"``, ``"poly"``, ``"rbf"``, ``"ngram"``, default parameters) or an
    instance (returned as is)."""
    if isinstance(spec, Kernel):
        return spec
    if isinstance(spec, str) and spec.lower() in _BY_NAME:
        return _BY_NAME[spec.lower()]()
    raise ParameterError(f"kernel must be None, one of {', '.join(sorted(set(_BY_NAME)))} or a mmprog.kernels.Kernel "
                         f"instance; got {spec!r}")


def joint_gram(kx, ky, A, B, PA, PB):
    """The joint Gram block (19): K[k, l] = κφ(Aₖ, Bₗ) · κψ(PAₖ, PBₗ), shape (len(A), len(B)).

    CSR when either factor is sparse (a zero of one factor is a zero of the product), else a dense ndarray.

    Parameters
    ----------
    kx, ky : Kernel
        Input and output kernels.
    A, B : representations (``kx.represent``) of the input rows.
    PA, PB : representations (``ky.represent``) of the output rows.
    """
    Gx = kx.gram(A, B)
    Gy = ky.gram(PA, PB)
    if sp.issparse(Gx) and sp.issparse(Gy):
        return sp.csr_matrix(Gx.multiply(Gy))
    if sp.issparse(Gx):
        return sp.csr_matrix(Gx.multiply(_dense(Gy)))
    if sp.issparse(Gy):
        return sp.csr_matrix(Gy.multiply(Gx))
    return Gx * Gy
