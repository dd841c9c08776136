"""Algorithm 1 of the L∞ paper: the set-based perceptron.

The set perceptron
------------------
Algorithm 1 keeps a set W of joint indices (w its indicator) and, for every sample with ⟨w, zᵢ⟩ < λ, adds the support
Zᵢ of zᵢ to W, until an epoch makes no update. Theorem 3 bounds the number of updates by ℓ_max/Δ² (30) and the final
margin γ(w_t, S) = minᵢ⟨w_t, zᵢ⟩/‖w_t‖₂ from below by λΔ/ℓ_max (31), with Δ = δ(λ, w*)/‖w*‖₂ for a w* that satisfies
every constraint and δ(λ, w*) = minᵢ|W* ∩ Zᵢ|. The paper writes ‖w‖₂ = ⟨w, w⟩ = |W| in the definitions but uses
‖w_t‖₂² = |W_t| in the proof (32); :func:`set_perceptron` reports the bounds under both readings ("printed":
‖w‖ = |W|; "euclidean": ‖w‖ = √|W|). Under the Euclidean reading (30) can fail: on a chain Zᵢ = {eᵢ, eᵢ₊₁} with
masses ½, λ = 0.9, every sample costs one update (n − 1 in all) while ℓ_max|W*|/δ² = 2n/4 = n/2 — the proof's step
(34), ⟨w*, w_t⟩ ≥ δ(λ)t, assumes every update adds δ new elements, but an update adds only Zᵢ minus what W already
holds. It fails on the sparse generator as well (``mmprog reproduce linf``: 10⁵ updates against 8.9·10⁴ at
m = 10⁵). With W* = ∪ᵢZᵢ (the set of (18)) the printed reading gives ℓ_max|W*|²/δ² ≥ |W*| ≥ the number of updates
(each update adds at least one element of W*), so it always holds.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...exceptions import DataError, ParameterError, check_param


# ------------------------------------------------------------------------------------------------------------
# Algorithm 1: the set perceptron
# ------------------------------------------------------------------------------------------------------------

@dataclass
class PerceptronResult:
    """What :func:`set_perceptron` returns.

    Attributes
    ----------
    W : ndarray of int64
        The learned set W_t (sorted joint indices); w_t is its indicator.
    updates : int
        t, the number of set updates.
    epochs : int
        Passes over the sample (the last one makes no update when ``converged``).
    converged : bool
    l_min, l_max : int
        minᵢ and maxᵢ |Zᵢ|.
    w_star_size : int
        |W*| of the reference solution the bounds use.
    delta : int
        δ(λ, w*) = minᵢ |W* ∩ Zᵢ|.
    bound_updates : dict
        (30) ℓ_max/Δ² under the ``"printed"`` (‖w‖ = |W|) and ``"euclidean"`` (‖w‖ = √|W|) readings.
    margin : dict
        γ(w_t, S) = minᵢ⟨w_t, zᵢ⟩/‖w_t‖ under both readings.
    bound_margin : dict
        (31) λΔ/ℓ_max under both readings.
    margins : ndarray, shape (m,)
        ⟨w_t, zᵢ⟩.
    seconds : float
    """

    W: np.ndarray
    updates: int
    epochs: int
    converged: bool
    l_min: int
    l_max: int
    w_star_size: int
    delta: int
    bound_updates: dict
    margin: dict
    bound_margin: dict
    margins: np.ndarray
    seconds: float


def set_perceptron(Phi, Psi, lam=0.5, normalize=True, w_star=None, max_epochs=100):
    """Algorithm 1, the primal perceptron for sets, with the bounds (30) and (31) of Theorem 3.

    Parameters
    ----------
    Phi, Psi : non-negative, shape (m, n_inputs) and (m, n_outputs)
    lam : float in (0, 1)
        λ, the margin ⟨w, zᵢ⟩ ≥ λ.
    normalize : bool
        L1-normalise every φ(xᵢ) and ψ(yᵢ) first (the measures of section 7; then ‖zᵢ‖₁ = 1).
    w_star : array of int, optional
        Joint indices of W*, the reference solution of the bounds; default the union of the supports (18), which
        satisfies every constraint when ‖zᵢ‖₁ ≥ λ.
    max_epochs : int

    Returns
    -------
    PerceptronResult

    Notes
    -----
    The sample order is the row order. Each update adds Zᵢ \\ W and raises the margins of the samples that hold the
    new elements (their columns' entries only); the next violated sample is found by a vectorised scan of the
    samples violated at the start of the epoch (margins only grow), so the loop runs over updates, not samples.
    """
    from .samples import TensorSamples, check_nonnegative
    check_param("lam", lam, isinstance(lam, (int, float)) and 0 < lam < 1, "a float in (0, 1)")
    check_param("max_epochs", max_epochs, isinstance(max_epochs, (int, np.integer)) and max_epochs >= 1,
                "an int >= 1")
    t_start = time.perf_counter()
    F = check_nonnegative("Phi", Phi)
    P = check_nonnegative("Psi", Psi)
    if normalize:
        F = sp.csr_matrix(sp.diags(1.0 / np.maximum(np.asarray(F.sum(axis=1)).ravel(), 1e-300)) @ F)
        P = sp.csr_matrix(sp.diags(1.0 / np.maximum(np.asarray(P.sum(axis=1)).ravel(), 1e-300)) @ P)
    samples = TensorSamples(F, P)
    short = np.flatnonzero(samples.norms() < lam)
    if short.size:
        i = int(short[0])
        raise DataError(f"sample {i} has ||z_i||_1 = {samples.norms()[i]:.4g} < lam = {lam}: no set W satisfies "
                        f"<w, z_i> >= lam, so Algorithm 1 would never stop; lower lam or normalize=True")
    keys, Zc = samples.column_matrix(aggregate=False)
    Zcsc = Zc.tocsc()
    m = samples.n
    in_W = np.zeros(keys.size, dtype=bool)
    margins = np.zeros(m)
    updates = epochs = 0
    converged = False
    while epochs < max_epochs:
        epochs += 1
        # margins only grow, so only the samples violated at the start of an epoch can be updated in it; they are
        # visited in order and re-checked a block at a time (the loop runs over updates, not samples)
        cands = np.flatnonzero(margins < lam)
        ptr, epoch_updates, block = 0, 0, 64
        while ptr < cands.size:
            chunk = cands[ptr:ptr + block]
            hit = np.flatnonzero(margins[chunk] < lam)
            if hit.size == 0:
                ptr += chunk.size
                block = min(2 * block, 1 << 16)
                continue
            i = int(chunk[hit[0]])
            ptr += int(hit[0]) + 1
            block = 64
            cols = Zc.indices[Zc.indptr[i]:Zc.indptr[i + 1]]
            new = cols[~in_W[cols]]
            in_W[new] = True
            # raise every sample's margin by its mass on the new elements: the new columns' entries only
            starts, ends = Zcsc.indptr[new], Zcsc.indptr[new + 1]
            lengths = ends - starts
            idx = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths) + np.arange(int(lengths.sum()))
            np.add.at(margins, Zcsc.indices[idx], Zcsc.data[idx])
            updates += 1
            epoch_updates += 1
        if epoch_updates == 0:
            converged = True
            break
    sizes = np.diff(Zc.indptr)
    l_min, l_max = int(sizes.min()), int(sizes.max())
    # the reference solution W* and δ(λ, w*) = minᵢ |W* ∩ Zᵢ|
    if w_star is None:
        star = np.ones(keys.size, dtype=bool)
    else:
        ws = np.unique(np.asarray(w_star, dtype=np.int64))
        star = np.isin(keys, ws)
    star_margins = Zc @ star.astype(np.float64)
    if np.any(star_margins < lam - 1e-12):
        i = int(np.argmin(star_margins))
        raise ParameterError(f"w_star violates the margin of sample {i}: <w*, z_i> = {star_margins[i]:.4g} < lam = "
                             f"{lam}; Theorem 3 needs a w* with <w*, z_i> >= lam for all i")
    Zb = sp.csr_matrix((np.ones(Zc.nnz), Zc.indices, Zc.indptr), shape=Zc.shape)
    delta = int((Zb @ star.astype(np.float64)).min())
    n_star = int(star.sum())
    n_W = int(in_W.sum())
    norms_star = {"printed": float(n_star), "euclidean": float(np.sqrt(n_star))}
    norms_t = {"printed": float(n_W), "euclidean": float(np.sqrt(n_W))}
    bound_updates, bound_margin, margin = {}, {}, {}
    for k in ("printed", "euclidean"):
        Delta = delta / norms_star[k]
        bound_updates[k] = l_max / Delta ** 2
        bound_margin[k] = lam * Delta / l_max
        margin[k] = float(margins.min() / norms_t[k]) if n_W else 0.0
    return PerceptronResult(W=keys[in_W], updates=updates, epochs=epochs, converged=converged, l_min=l_min,
                            l_max=l_max, w_star_size=n_star, delta=delta, bound_updates=bound_updates,
                            margin=margin, bound_margin=bound_margin, margins=margins,
                            seconds=time.perf_counter() - t_start)
