"""Euclidean projection onto the ℓ1 ball, the projection step Π_W of the projected sub-gradient method for P1′.

Duchi, Shalev-Shwartz, Singer & Chandra, "Efficient projections onto the ℓ1-ball for learning in high dimensions"
(ICML 2008), used by Zhu, Xing & Zhang (KDD 2009, section 4.2.2, eq. 3):

    Π_W(v) = argmin_{‖w‖₁ ≤ z} ½‖w − v‖²  =  sign(v) ∘ max(|v| − θ, 0),

where θ = 0 when v is already inside the ball and otherwise θ > 0 solves Σₖ max(|vₖ| − θ, 0) = z. Finding θ is the
projection of |v| onto the simplex {u ≥ 0, Σ u = z}; two ways are given:

* ``method="sort"`` — Figure 1 of Duchi et al.: sort |v| descending, ρ = the largest j with
  u_(j) − (Σ_{r≤j} u_(r) − z)/j > 0, θ = (Σ_{r≤ρ} u_(r) − z)/ρ; O(n log n).
* ``method="linear"`` — Figure 2 of Duchi et al.: a randomised pivot search (quick-select on the same criterion)
  that discards about half of the remaining candidates per pivot, expected O(n). Each pivot step is one vectorised
  pass over the surviving candidates.

Both return exact zeros for the coordinates below the threshold: that is where the sparsity of P1′'s iterates
comes from.
"""
from __future__ import annotations

import numpy as np

from .exceptions import ParameterError, check_param

__all__ = ["l1_ball", "simplex", "simplex_threshold"]

METHODS = ("sort", "linear")


def _check(v, z, method):
    v = np.asarray(v, dtype=np.float64)
    if v.ndim != 1:
        raise ParameterError(f"v must be a 1-d array; got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ParameterError("v must be finite; got NaN or infinity in it")
    if not (isinstance(z, (int, float, np.number)) and not isinstance(z, bool) and np.isfinite(z) and z >= 0):
        raise ParameterError(f"radius must be a finite number >= 0; got {z!r}")
    if method not in METHODS:
        raise ParameterError(f'method must be "sort" or "linear"; got {method!r}')
    return v, float(z)


def _threshold_sort(u, z):
    """θ for u ≥ 0 with Σu > z > 0 (Duchi et al., Figure 1)."""
    s = np.sort(u)[::-1]
    css = np.cumsum(s)
    j = np.arange(1, len(s) + 1)
    # the criterion holds for a prefix of the sorted order; ρ is its last index
    rho = int(np.nonzero(s - (css - z) / j > 0)[0][-1]) + 1
    return (css[rho - 1] - z) / rho


def _threshold_linear(u, z, rng):
    """θ for u ≥ 0 with Σu > z > 0 by randomised pivoting (Duchi et al., Figure 2), expected O(n)."""
    cand = u
    s = 0.0       # sum of the values known to lie above θ
    rho = 0       # how many there are
    while cand.size:
        k = int(rng.integers(cand.size))
        pivot = cand[k]
        ge = cand >= pivot
        ds, drho = float(cand[ge].sum()), int(ge.sum())
        if (s + ds) - (rho + drho) * pivot < z:
            # every value ≥ pivot is above θ: count them, continue among the smaller ones
            s += ds
            rho += drho
            cand = cand[~ge]
        else:
            # θ ≥ pivot: only the values ≥ pivot other than the pivot itself stay candidates (G \ {k})
            ge[k] = False
            cand = cand[ge]
    return (s - z) / rho


def simplex_threshold(u, z, method="sort", rng=None):
    """The threshold θ ≥ 0 of the projection of u ≥ 0 onto {x ≥ 0, Σx ≤ z}: 0 when Σu ≤ z, else Σ max(u−θ,0) = z.

    Parameters
    ----------
    u : ndarray, shape (n,)
        Non-negative values.
    z : float
        Radius ≥ 0.
    method : {"sort", "linear"}
    rng : numpy.random.Generator, optional
        Pivot draws of ``method="linear"`` (default: a generator seeded with 0, so results are reproducible).

    Returns
    -------
    float
    """
    u = np.asarray(u, dtype=np.float64)
    if u.sum() <= z:
        return 0.0
    if z == 0.0:
        return float(u.max())
    if method == "sort":
        return float(_threshold_sort(u, z))
    return float(_threshold_linear(u, z, rng if rng is not None else np.random.default_rng(0)))


def simplex(v, z=1.0, method="sort", rng=None):
    """Euclidean projection onto the simplex {x ≥ 0, Σx = z} (Duchi et al. 2008, eq. 3).

    Parameters
    ----------
    v : ndarray, shape (n,)
    z : float
        Radius > 0.
    method : {"sort", "linear"}
    rng : numpy.random.Generator, optional

    Returns
    -------
    ndarray, shape (n,)
    """
    v, z = _check(v, z, method)
    if z <= 0:
        raise ParameterError(f"z must be > 0 for the simplex {{x >= 0, sum x = z}}; got {z!r}")
    # x = max(v − θ, 0) with θ possibly negative; shifting v so that every entry is ≥ z makes Σ > z (or n = 1)
    # and θ ≥ 0, the case simplex_threshold handles
    u = v - (v.min() - z)
    return np.maximum(u - simplex_threshold(u, z, method, rng), 0.0)


def l1_ball(v, radius, method="sort", rng=None):
    """Euclidean projection of v onto the ℓ1 ball {w : ‖w‖₁ ≤ radius} (Duchi et al. 2008, section 4).

    Parameters
    ----------
    v : array_like, shape (n,)
    radius : float
        z ≥ 0 (``radius=0`` gives the zero vector).
    method : {"sort", "linear"}
        Sort-based O(n log n) (Figure 1) or randomised expected-linear-time pivoting (Figure 2).
    rng : numpy.random.Generator, optional
        Pivot draws of ``method="linear"`` (the result does not depend on them; only the work does).

    Returns
    -------
    ndarray, shape (n,)
        A new array; v itself (copied) when it is already inside the ball. Coordinates below the threshold are exact
        zeros.

    Examples
    --------
    >>> l1_ball([3.0, -1.0, 0.2], 2.0)
    array([2., 0., 0.])
    """
    v, z = _check(v, radius, method)
    u = np.abs(v)
    if u.sum() <= z:
        return v.copy()
    theta = simplex_threshold(u, z, method, rng)
    # + 0.0 turns the −0.0 of clipped negative entries into 0.0
    return np.sign(v) * np.maximum(u - theta, 0.0) + 0.0


# ---------------------------------------------------------------------------------------------------------------
# The settings of the projected sub-gradient method (mmprog.engine.subgradient), checked where a program takes them
# ---------------------------------------------------------------------------------------------------------------

SCHEDULES = ("inv_sqrt", "inv", "constant")
VARIANTS = ("batch", "online")
OUTPUTS = ("last", "best")

#: keyword settings accepted by :func:`projected_subgradient` beside the oracle and the radius
SETTINGS = ("eta0", "schedule", "variant", "batch_size", "seed", "output", "projection")


def check_settings(eta0=None, schedule="inv_sqrt", variant="batch", batch_size=1, seed=0, output="last",
                   projection="sort"):
    """Validate the sub-gradient settings; returns them as a dict (raises :class:`ParameterError`)."""
    if eta0 is not None:
        check_param("eta0", eta0, isinstance(eta0, (int, float, np.number)) and not isinstance(eta0, bool)
                    and np.isfinite(eta0) and eta0 > 0, "a finite float > 0 or None (automatic)")
        eta0 = float(eta0)
    check_param("schedule", schedule, schedule in SCHEDULES, '"inv_sqrt", "inv" or "constant"')
    check_param("variant", variant, variant in VARIANTS, '"batch" or "online"')
    check_param("batch_size", batch_size, isinstance(batch_size, (int, np.integer)) and not isinstance(
        batch_size, bool) and batch_size >= 1, "an int >= 1")
    check_param("seed", seed, isinstance(seed, (int, np.integer)) and not isinstance(seed, bool), "an int")
    check_param("output", output, output in OUTPUTS, '"last" or "best"')
    check_param("projection", projection, projection in ("sort", "linear"), '"sort" or "linear"')
    return dict(eta0=eta0, schedule=schedule, variant=variant, batch_size=int(batch_size), seed=int(seed),
                output=output, projection=projection)
