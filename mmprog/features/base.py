"""The joint feature map interface every structure (chain, dependency tree, ...) implements.

A joint feature map f(x, y) ∈ R^dim turns an example x and a structured label y into a vector, so that the score of
y is wᵀf(x, y). The cutting-plane engine and the programs see structures only through this interface:

* ``prepare(dataset)`` turns a validated dataset into a :class:`Prepared` batch (stacked sparse inputs, padded gold
  labels, offsets) once, so that every later call is array arithmetic;
* ``decode(w, prepared, idx, loss_augmented)`` runs the batched kernel (Viterbi, Chu-Liu-Edmonds, Eisner) on the
  scores wᵀf and returns one labeling per example, optionally loss-augmented: argmax_y wᵀf(xᵢ, y) + Δℓᵢ(y);
* ``delta(prepared, idx, labelings)`` returns ΔF (rows Δfᵢ(y) = f(xᵢ, yᵢ) − f(xᵢ, y), scipy CSR (m, dim)) and
  Δℓᵢ(y) (m,);
* ``groups`` (dim,) int gives the template group of every joint feature; ``group_names`` names them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp


def csr_view(data, indices, indptr, shape):
    """A CSR matrix over the given arrays, never a copy of them.

    ``scipy.sparse.csr_matrix((data, indices, indptr))`` checks its input and then copies ``data`` and ``indices``
    whenever they are views of less than half of a larger array (its ``prune``): rows a:b of a corpus's stacked
    token matrix became one copy per sentence. The arrays are assigned after the check instead.

    Parameters
    ----------
    data : ndarray, shape (nnz,)
    indices : ndarray of int, shape (nnz,)
    indptr : ndarray of int, shape (m + 1,)
        ``indptr[0] == 0`` and ``indptr[-1] == nnz``.
    shape : tuple (m, d)

    Returns
    -------
    scipy.sparse.csr_matrix
        Its ``data`` and ``indices`` are ``data`` and ``indices`` (views share their base's memory).
    """
    X = sp.csr_matrix((data, indices, indptr), shape=shape)
    if X.indices.dtype == indices.dtype and X.data.dtype == data.dtype:
        X.data, X.indices = data, indices
    return X


def csr_rows(X, a, b):
    """Rows a:b of a CSR matrix sharing its data and indices (scipy's ``X[a:b]`` copies them)."""
    lo, hi = X.indptr[a], X.indptr[b]
    return csr_view(X.data[lo:hi], X.indices[lo:hi], X.indptr[a:b + 1] - lo, (b - a, X.shape[1]))


def stacked_view(blocks):
    """The row blocks of one CSR matrix put back together without copying, when they are consecutive views of the
    same ``data`` and ``indices`` arrays (what :class:`~mmprog.features.templates.TemplateExtractor` hands out: the
    sentences of one stacked matrix); None when they are not.

    Parameters
    ----------
    blocks : list of scipy.sparse.csr_matrix, shapes (T_i, d)

    Returns
    -------
    scipy.sparse.csr_matrix, shape (Σ T_i, d), or None
    """
    if not blocks or not all(isinstance(x, sp.csr_matrix) for x in blocks):
        return None
    first = blocks[0]
    base_d, base_i = first.data.base, first.indices.base
    if base_d is None or base_i is None or base_d.ndim != 1 or base_i.ndim != 1:
        return None

    def start(a, base):
        return a.__array_interface__["data"][0] - base.__array_interface__["data"][0]

    lo = start(first.data, base_d) // base_d.itemsize
    at = lo
    for x in blocks:
        if (x.data.base is not base_d or x.indices.base is not base_i or x.indptr[0] != 0
                or x.data.dtype != base_d.dtype or x.indices.dtype != base_i.dtype
                or start(x.data, base_d) != at * base_d.itemsize or start(x.indices, base_i) != at * base_i.itemsize
                or not x.data.flags.c_contiguous or not x.indices.flags.c_contiguous):
            return None
        at += x.data.size
    counts = np.concatenate([np.diff(x.indptr) for x in blocks])
    indptr = np.zeros(len(counts) + 1, dtype=base_i.dtype if at < np.iinfo(base_i.dtype).max else np.int64)
    np.cumsum(counts, out=indptr[1:])
    return csr_view(base_d[lo:at], base_i[lo:at], indptr, (len(counts), first.shape[1]))


@dataclass
class Prepared:
    """A dataset made ready for batched scoring.

    Attributes
    ----------
    n : int
        Number of examples.
    lengths : ndarray, shape (n,)
        Number of positions (tokens, letters, words) of each example.
    gold : ndarray, shape (n, T_max)
        Gold labels padded with -1 past each length (for trees: gold heads, 0 = root, 1-based tokens; -1 padding).
        Unobserved positions inside a length are also -1 (hidden labels).
    data : dict
        Structure-specific arrays (e.g. stacked token features and offsets for chains, arc feature matrices for
        trees).
    """

    n: int
    lengths: np.ndarray
    gold: np.ndarray
    data: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class JointFeatureMap(Protocol):
    """What the oracle and the programs need from a structure (see module docstring)."""

    dim: int
    groups: np.ndarray
    group_names: list[str]

    def prepare(self, dataset) -> Prepared: ...

    def decode(self, w: np.ndarray, prepared: Prepared, idx: np.ndarray | None = None,
               loss_augmented: bool = False) -> np.ndarray: ...

    def delta(self, prepared: Prepared, idx: np.ndarray, labelings: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]: ...

    def loss(self, prepared: Prepared, idx: np.ndarray, labelings: np.ndarray) -> np.ndarray: ...

    def describe(self) -> dict: ...


def predict(fmap, w, dataset):
    """Highest-scoring structure of every example under ``fmap`` and weights ``w`` (what
    :meth:`mmprog.result.Predictor.predict` returns, here for the programs' statements that compare two w).

    Parameters
    ----------
    fmap : JointFeatureMap
    w : ndarray, shape (fmap.dim,)
    dataset
        Anything ``fmap.prepare`` takes.

    Returns
    -------
    list of ndarray of int
        Labels (shape (Tᵢ,)), or heads for trees with index 0 the root (shape (Tᵢ + 1,)).
    """
    prep = fmap.prepare(dataset)
    lab = fmap.decode(w, prep, np.arange(prep.n))
    # trees carry the root at index 0 (heads[0] = -1), so each row is one longer than the sentence
    extra = 1 if getattr(fmap, "kind", "chain") == "arcs" else 0
    return [lab[i, : prep.lengths[i] + extra] for i in range(prep.n)]
