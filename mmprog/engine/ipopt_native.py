"""A QCQP dual solved by Ipopt (cyipopt) from its arrays: MTL's (6) (Mao & Tsang, "Multiple template learning for
structured prediction", eq. 6) on the active cuts, min θ − qᵀα s.t. ½αᵀQʲα ≤ θ for every template j, the budgets
Σ_{r∈Sᵢ} αᵣ ≤ B, α ≥ 0; the multipliers μ of the quadratic constraints are the template weights.

Through Pyomo, Ipopt would read the statement through the NL writer, r² terms a template a solve; here the callbacks
evaluate the constraints, their Jacobian and the Hessian of the Lagrangian from the Gram blocks directly. The
program states the arrays (:meth:`mmprog.programs.mtl.MTL.qcqp_dual`) and loads the answer
(:meth:`~mmprog.programs.mtl.MTL.load_qcqp_dual`); :class:`mmprog.engine.masters.QCQPDualIpoptRoute` joins them.
"""
from __future__ import annotations

import time

import numpy as np



class QCQPCallbacks:
    """min t − q̃ᵀβ s.t. ½βᵀQ̃ʲβ − t ≤ 0 (j), Σ_{r∈Sᵢ} βᵣ ≤ 1 (i), β ≥ 0 — problem (6) in the scaled variables
    β = α/B, t = θ/B with Q̃ = B·Q (B the budget C·scale): same multipliers μ, variables of order one for Ipopt."""

    def __init__(self, Q, q, slack_idx, n_budgets):
        self.Q, self.q = Q, q
        self.m, self.s = Q.shape[0], Q.shape[1]
        self.slack_idx, self.n_budgets = slack_idx, n_budgets
        self._key, self._Qb = None, None
        self.tril = np.tril_indices(self.s)

    def _Qbeta(self, x):
        key = x.tobytes()
        if key != self._key:
            self._key, self._Qb = key, self.Q @ x[:-1]           # (m, s)
        return self._Qb

    def objective(self, x):
        return float(x[-1] - self.q @ x[:-1])

    def gradient(self, x):
        return np.concatenate([-self.q, [1.0]])

    def constraints(self, x):
        b = x[:-1]
        quad = 0.5 * (self._Qbeta(x) @ b) - x[-1]
        return np.concatenate([quad, np.bincount(self.slack_idx, weights=b, minlength=self.n_budgets)])

    def jacobianstructure(self):
        m, s = self.m, self.s
        rows = np.concatenate([np.repeat(np.arange(m), s + 1), m + self.slack_idx])
        cols = np.concatenate([np.tile(np.arange(s + 1), m), np.arange(s)])
        return rows, cols

    def jacobian(self, x):
        J = np.hstack([self._Qbeta(x), -np.ones((self.m, 1))])
        return np.concatenate([J.ravel(), np.ones(self.s)])

    def hessianstructure(self):
        return self.tril

    def hessian(self, x, lagrange, obj_factor):
        H = np.tensordot(lagrange[: self.m], self.Q, axes=1)
        return H[self.tril]


def solve_qcqp_ipopt(Q, q, slack_idx, n_budgets, budget, beta0=None, options=None):
    """Solve the QCQP (6) with Ipopt (cyipopt) from its arrays.

    Parameters
    ----------
    Q : ndarray, shape (m, s, s)
        Gram matrices of the active cuts.
    q : ndarray, shape (s,)
    slack_idx : ndarray of int, shape (s,)
        Budget (slack) of every cut, ids 0..n_budgets−1.
    budget : float
        B: Σ_{r∈Sᵢ} αᵣ ≤ B.
    beta0 : ndarray, shape (s,), optional
        Starting α/B.
    options : dict, optional
        Ipopt options.

    Returns
    -------
    alpha : ndarray, shape (s,)
    theta : float
    mu : ndarray, shape (m,)
        Multipliers of the quadratic constraints (Ipopt's λ ≥ 0 of ``g ≤ 0``; Σμ = 1 at a KKT point).
    info : dict
        ``status`` (Ipopt code), ``message``, ``solver_time``.
    """
    import cyipopt
    m, s = Q.shape[0], Q.shape[1]
    Qs = Q * budget
    cb = QCQPCallbacks(Qs, np.asarray(q, dtype=np.float64), np.asarray(slack_idx, np.int64), n_budgets)
    inf = 2e19
    lb = np.concatenate([np.zeros(s), [-inf]])
    ub = np.full(s + 1, inf)
    cl = np.full(m + n_budgets, -inf)
    cu = np.concatenate([np.zeros(m), np.ones(n_budgets)])
    prob = cyipopt.Problem(n=s + 1, m=m + n_budgets, problem_obj=cb, lb=lb, ub=ub, cl=cl, cu=cu)
    opts = {"print_level": 0, "sb": "yes", "tol": 1e-10, "acceptable_tol": 1e-7, "max_iter": 3000,
            "mu_strategy": "adaptive"}
    opts.update(options or {})
    for k, v in opts.items():
        prob.add_option(k, v)
    if beta0 is None or len(beta0) != s:
        beta0 = np.full(s, 0.5 / max(1, np.bincount(slack_idx, minlength=n_budgets).max()))
    beta0 = np.clip(beta0, 1e-9, None)
    t0 = 0.5 * float(np.max(np.einsum("jrs,r,s->j", Qs, beta0, beta0))) + 1e-6 if m else 0.0
    x0 = np.concatenate([beta0, [t0]])
    x, info, out = run_problem(prob, x0)
    mu = np.asarray(info["mult_g"][:m], dtype=np.float64)
    return np.maximum(x[:-1], 0.0) * budget, float(x[-1]) * budget, mu, out


def run_problem(prob, x0):
    """Solve a cyipopt Problem from ``x0`` and close it; returns (x, cyipopt's info, {``status`` (Ipopt code),
    ``message``, ``solver_time``, ``objective``})."""
    tic = time.perf_counter()
    x, info = prob.solve(x0)
    elapsed = time.perf_counter() - tic
    prob.close()
    msg = info["status_msg"]
    msg = msg.decode() if isinstance(msg, bytes) else str(msg)
    return x, info, {"status": int(info["status"]), "message": msg, "solver_time": elapsed,
                     "objective": float(info["obj_val"])}


def with_wall_time(options, time_limit):
    """Ipopt options with the solve capped at ``time_limit`` seconds (Ipopt then ends with
    Maximum_WallTime_Exceeded, which the status check reports)."""
    out = dict(options or {})
    if time_limit is not None:
        out["max_wall_time"] = min(float(time_limit), float(out.get("max_wall_time", np.inf)))
    return out


class DiagonalQPCallbacks:
    """min ½xᵀdiag(h)x + cᵀx s.t. A x ≥ b, lower ≤ x ≤ upper — Ipopt's callbacks from the arrays: the Jacobian is A
    (sparse, constant), the Hessian of the Lagrangian diag(h) (the rows are linear)."""

    def __init__(self, h, c, A):
        self.h, self.c = h, c
        A = A.tocoo()
        self.rows, self.cols, self.vals = A.row.astype(np.int64), A.col.astype(np.int64), A.data.astype(float)
        self.A = A.tocsr()
        self.hnz = np.flatnonzero(h)

    def objective(self, x):
        return float(0.5 * (self.h * x) @ x + self.c @ x)

    def gradient(self, x):
        return self.h * x + self.c

    def constraints(self, x):
        return self.A @ x

    def jacobianstructure(self):
        return self.rows, self.cols

    def jacobian(self, x):
        return self.vals

    def hessianstructure(self):
        return self.hnz, self.hnz

    def hessian(self, x, lagrange, obj_factor):
        return obj_factor * self.h[self.hnz]


def solve_diagonal_qp_ipopt(h, c, lower, upper, A, b, x0=None, options=None):
    """Solve min ½xᵀdiag(h)x + cᵀx s.t. A x ≥ b, lower ≤ x ≤ upper with Ipopt (cyipopt) from its arrays (form
    ``"qp_rows"``: the elastic-net M³N's μ, ν, ξ master), without Pyomo's NL writer walking 2·dim quadratic terms
    and every row a solve (13 s of Pyomo for a one-cut master at dim 100,000).

    Parameters
    ----------
    h, c, lower, upper : ndarray, shape (n,)
        Hessian diagonal (≥ 0), cost, bounds (±inf for none).
    A : sparse matrix, shape (m, n)
    b : ndarray, shape (m,)
    x0 : ndarray, shape (n,), optional
        Start (moved inside the bounds).
    options : dict, optional
        Ipopt options.

    Returns
    -------
    x : ndarray, shape (n,)
    alpha : ndarray, shape (m,)
        Multipliers of the rows, ≥ 0 (d optimum / d b; Ipopt's own λ is −α for a row at its lower bound).
    info : dict
        ``status`` (Ipopt code), ``message``, ``solver_time``, ``objective``.
    """
    import cyipopt
    n, m = len(c), A.shape[0]
    inf = 2e19
    lb = np.where(np.isfinite(lower), lower, -inf)
    ub = np.where(np.isfinite(upper), upper, inf)
    cb = DiagonalQPCallbacks(np.asarray(h, dtype=float), np.asarray(c, dtype=float), A)
    prob = cyipopt.Problem(n=n, m=m, problem_obj=cb, lb=lb, ub=ub, cl=np.asarray(b, dtype=float),
                           cu=np.full(m, inf))
    # bounds kept exactly (bound_relax_factor 0) and tol 1e-12: with Ipopt's defaults (bounds relaxed by 1e-8, tol
    # 1e-10) ξ ended at −1e-8 or was put back to 0 with its cut violated by 1e-7, which times a 1-slack weight C·n
    # (1,000) left ½‖w‖² + λ‖w‖₁ + C·s·Σξ 1e-6 (dim 100,000) to 3e-5 (dim 500,000) off the optimum while Σ α Δℓ −
    # ½‖soft(ΔFᵀα, λ)‖² was right to 1e-9; with these settings the two agree to 3e-8 (dim 100,000) and 1e-6
    # (dim 500,000: 54 s for a one-cut master of 100,000 non-zeros, against 42 s before)
    opts = {"print_level": 0, "sb": "yes", "tol": 1e-12, "acceptable_tol": 1e-7, "max_iter": 3000,
            "mu_strategy": "adaptive", "hessian_constant": "yes", "jac_c_constant": "yes",
            "bound_relax_factor": 0.0}
    opts.update(options or {})
    for k, v in opts.items():
        prob.add_option(k, v)
    x0 = np.zeros(n) if x0 is None or len(x0) != n else np.asarray(x0, dtype=float)
    x0 = np.clip(x0, np.where(np.isfinite(lower), lower + 1e-8, -inf), np.where(np.isfinite(upper), upper, inf))
    x, info, out = run_problem(prob, x0)
    return np.asarray(x, dtype=float), -np.asarray(info["mult_g"], dtype=float), out
