"""Proposition 1 (the distance program (3) and its dual (6)), the closed forms of Proposition 2, (17) and
(18), and the exact second stage (16)."""
from __future__ import annotations

import numpy as np
import pyomo.core as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from ...exceptions import ParameterError, check_param


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
