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
