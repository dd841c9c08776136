"""Euclidean projections onto the simplex and onto the capped simplex, the projection step of the projected-gradient
solver of the p-block-norm dual (Mao & Tsang, section 2: "the projection step can be readily solved by efficient
projections onto simplex method [10]").

[10] Duchi, Shalev-Shwartz, Singer & Chandra, "Efficient projections onto the l1-ball for learning in high
dimensions", ICML 2008, Figure 1 (the O(s log s) sort-based algorithm).

Both functions work on many independent blocks at once (one budget per slack of the n-slack form), without a Python
loop over blocks: the blocks are sorted together with one ``lexsort`` and thresholded with segment-wise cumulative
sums.
"""
from __future__ import annotations

import numpy as np

from .exceptions import ParameterError

__all__ = ["project_simplex", "project_capped_simplex", "capped_simplex_projector"]


def _blocks(v, blocks):
    v = np.asarray(v, dtype=np.float64)
    if v.ndim != 1:
        raise ParameterError(f"v must be a 1-d array; got shape {v.shape}")
    if blocks is None:
        return v, np.zeros(v.shape[0], dtype=np.int64), 1
    blocks = np.asarray(blocks, dtype=np.int64)
    if blocks.shape != v.shape:
        raise ParameterError(f"blocks must have one entry per element of v ({v.shape[0]}); got shape {blocks.shape}")
    if blocks.size and blocks.min() < 0:
        raise ParameterError(f"blocks must be ids >= 0; got minimum {blocks.min()}")
    n_blocks = int(blocks.max()) + 1 if blocks.size else 0
    return v, blocks, n_blocks


def _radius(b, n_blocks):
    b = np.broadcast_to(np.asarray(b, dtype=np.float64), (n_blocks,)).copy() if n_blocks else np.zeros(0)
    if b.size and (not np.all(np.isfinite(b)) or b.min() <= 0):
        raise ParameterError(f"the simplex radius b must be finite and > 0; got minimum {b.min()}")
    return b


def project_simplex(v, b=1.0, blocks=None):
    """Euclidean projection onto {x ≥ 0, Σ x = b} (per block).

    Duchi et al. (2008), Fig. 1: sort u = v descending, ρ = max{j : u_j − (Σ_{r≤j} u_r − b)/j > 0},
    τ = (Σ_{r≤ρ} u_r − b)/ρ, x = max(v − τ, 0).

    Parameters
    ----------
    v : ndarray, shape (s,)
    b : float or ndarray, shape (n_blocks,)
        Radius of each block's simplex (> 0).
    blocks : ndarray of int, shape (s,), optional
        Block id of every element (default: one block). Each block is projected onto its own simplex.

    Returns
    -------
    ndarray, shape (s,)
    """
    v, blocks, n_blocks = _blocks(v, blocks)
    b = _radius(b, n_blocks)
    if v.size == 0:
        return v.copy()
    # sort by block, then descending value
    order = np.lexsort((-v, blocks))
    u = v[order]
    blk = blocks[order]
    starts = np.searchsorted(blk, np.arange(n_blocks), side="left")
    csum = np.cumsum(u)
    # cumulative sum restarted at every block start
    base = np.where(starts > 0, csum[np.maximum(starts - 1, 0)], 0.0)
    present = np.bincount(blk, minlength=n_blocks) > 0
    base = np.where(present, base, 0.0)
    seg_csum = csum - base[blk]
    j = np.arange(u.size) - starts[blk] + 1          # 1-based rank inside the block
    cond = u - (seg_csum - b[blk]) / j > 0
    # ρ = the largest rank satisfying the condition (the condition holds on a prefix)
    rho = np.zeros(n_blocks, dtype=np.int64)
    np.maximum.at(rho, blk[cond], j[cond])
    rho = np.maximum(rho, 1)
    last = starts + rho - 1
    tau = (seg_csum[np.minimum(last, u.size - 1)] - b) / rho
    return np.maximum(v - tau[blocks], 0.0)


def project_capped_simplex(v, b=1.0, blocks=None):
    """Euclidean projection onto {x ≥ 0, Σ x ≤ b} (per block): the feasible set 𝒜 of the duals (6) and (11).

    Where clipping at 0 already satisfies the budget, the projection is the clip; otherwise the budget is active and
    the projection is the one onto {x ≥ 0, Σ x = b} (the KKT conditions of the two problems then coincide).

    Parameters
    ----------
    v : ndarray, shape (s,)
    b : float or ndarray, shape (n_blocks,)
    blocks : ndarray of int, shape (s,), optional

    Returns
    -------
    ndarray, shape (s,)
    """
    v, blocks, n_blocks = _blocks(v, blocks)
    b = _radius(b, n_blocks)
    clipped = np.maximum(v, 0.0)
    if v.size == 0:
        return clipped
    over = np.bincount(blocks, weights=clipped, minlength=n_blocks) > b
    if not over.any():
        return clipped
    proj = project_simplex(v, b, blocks)
    return np.where(over[blocks], proj, clipped)


def capped_simplex_projector(b, blocks=None):
    """A projection onto {x ≥ 0, Σ_{block} x ≤ b} with the checks and the block bookkeeping done once, for iterative
    solvers that project thousands of times onto the same set (one block: a plain sort, no ``lexsort``).

    Parameters
    ----------
    b : float or ndarray, shape (n_blocks,)
    blocks : ndarray of int, shape (s,), optional

    Returns
    -------
    callable
        ``proj(v) -> ndarray (s,)``, equal to ``project_capped_simplex(v, b, blocks)``.
    """
    if blocks is None or np.unique(np.asarray(blocks)).size <= 1:
        radius = float(np.max(np.atleast_1d(_radius(b, 1))))

        def proj(v):
            x = np.maximum(v, 0.0)
            if x.sum() <= radius:
                return x
            u = np.sort(v)[::-1]
            css = np.cumsum(u) - radius
            ind = np.arange(1, u.size + 1)
            rho = int(np.nonzero(u - css / ind > 0)[0][-1])
            return np.maximum(v - css[rho] / (rho + 1), 0.0)

        return proj
    _, blocks_, n_blocks = _blocks(np.zeros(len(blocks)), blocks)
    radius = _radius(b, n_blocks)
    return lambda v: project_capped_simplex(v, radius, blocks_)
