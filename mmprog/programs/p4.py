"""P4 — the squared-ℓ1 M³N of Theorem 2 of Zhu, Xing & Zhang (KDD 2009, appendix A), built directly.

    min_{μ, ν, t, ξ}  (λ/K) t² + C Σᵢ ξᵢ
    s.t.              t ≥ Σₖ (μₖ + νₖ)                                          (``l1_bound``)
                      (μ − ν)ᵀΔfᵢ(y) ≥ Δℓᵢ(y) − ξᵢ,   ∀i, ∀y ∈ Sᵢ               (``cuts``)
                      μ, ν, t, ξ ≥ 0

with w = μ − ν, so t = ‖w‖₁ at the optimum and the objective is (λ/K)(Σₖ|wₖ|)² + C Σᵢ ξᵢ; K is the number of joint
features. Theorem 2 says the EM fixed point of the adaptive M³N (program ``adapm3n``, same C and λ) attains this
optimum. A convex QP with a single quadratic term (t²), grown cut by cut like P1.

Its dual on the working set (conjugate of (λ/K)‖w‖₁² is K‖η‖∞²/(4λ)):
max Σ_r α_r Δℓ_r − (K/4λ) maxₖ |ηₖ|²  with η = Σ_r α_r ΔF_r,  Σ_{r∈Sᵢ} α_r ≤ C, α ≥ 0.
"""
from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from ..exceptions import check_param
from ..solvers import ProblemClass
from .base import Dims, Program, Solution, register
from .working_set import WorkingSet, values_of


@register("p4")
class P4(Program):
    """P4 of Theorem 2 (KDD 2009); see the module docstring.

    Parameters
    ----------
    C : float
        Slack weight (n-slack scale).
    lam : float
        λ > 0; the regulariser is (λ/K)‖w‖₁².
    """

    problem_class = ProblemClass.QP
    paper = "Zhu, Xing & Zhang, KDD 2009"
    equations = "P4 (Theorem 2, appendix A)"
    params_doc = {"lam": "λ > 0 (regulariser (λ/K)‖w‖₁²)"}

    def __init__(self, C=1.0, lam=1.0):
        super().__init__(C)
        check_param("lam", lam, isinstance(lam, (int, float, np.number)) and not isinstance(lam, bool)
                    and np.isfinite(lam) and lam > 0, "a finite float > 0")
        self.lam = float(lam)
        self._K = None

    def params(self):
        return {"C": self.C, "lam": self.lam}

    def regulariser(self, w):
        w = np.asarray(w, dtype=np.float64)
        return self.lam / len(w) * float(np.abs(w).sum()) ** 2

    def build(self, dims: Dims):
        m = pyo.ConcreteModel(name="p4")
        m.dims = dims
        m.ws = WorkingSet(dims.dim)
        m.slack_scale = float(dims.n) / dims.n_slacks
        m.C = pyo.Param(initialize=self.C, mutable=True)
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        m.mu = pyo.Var(range(dims.dim), domain=pyo.NonNegativeReals, initialize=0.0)
        m.nu = pyo.Var(range(dims.dim), domain=pyo.NonNegativeReals, initialize=0.0)
        m.t = pyo.Var(domain=pyo.NonNegativeReals, initialize=0.0)
        m.xi = pyo.Var(range(dims.n_slacks), domain=pyo.NonNegativeReals, initialize=0.0)
        m.mu_list = [m.mu[k] for k in range(dims.dim)]
        m.nu_list = [m.nu[k] for k in range(dims.dim)]
        m.l1_bound = pyo.Constraint(expr=LinearExpression(
            constant=0.0, linear_coefs=[1.0] + [-1.0] * (2 * dims.dim),
            linear_vars=[m.t] + m.mu_list + m.nu_list) >= 0.0)
        m.cuts = pyo.ConstraintList()
        m.objective = pyo.Objective(
            expr=(self.lam / dims.dim) * m.t * m.t
            + m.C * m.slack_scale * pyo.quicksum(m.xi[i] for i in range(dims.n_slacks)),
            sense=pyo.minimize)
        return m

    def add_cuts(self, model, cuts):
        model.ws.add(cuts)
        added = []
        dF = cuts.dF
        for r in range(len(cuts)):
            lo, hi = dF.indptr[r], dF.indptr[r + 1]
            ks, cs = dF.indices[lo:hi], list(dF.data[lo:hi])
            body = LinearExpression(
                constant=0.0, linear_coefs=cs + [-c for c in cs] + [1.0],
                linear_vars=[model.mu_list[k] for k in ks] + [model.nu_list[k] for k in ks]
                + [model.xi[int(cuts.example[r])]])
            added.append(model.cuts.add(body >= float(cuts.dl[r])))
        model.ws.components.extend(added)
        return added

    def drop_cuts(self, model, positions):
        self.deactivate_rows(model, [model.ws.components[p] for p in positions])
        for pos in positions:
            model.ws.active[pos] = False

    def read_solution(self, model):
        ws = model.ws
        w = values_of(model.mu_list) - values_of(model.nu_list)
        xi = values_of([model.xi[i] for i in range(model.dims.n_slacks)])
        alpha = ws.duals(model)
        primal = self.regulariser(w) + self.C * model.slack_scale * float(xi.sum())
        if ws.size:
            eta = ws.dF().T @ alpha
            dual = float(alpha @ ws.dl_array()) - len(w) / (4.0 * self.lam) * float(np.abs(eta).max()) ** 2
        else:
            dual = 0.0
        return Solution(w=w, xi=xi, alpha=alpha, objective=primal, dual_objective=dual,
                        extra={"l1_norm": float(np.abs(w).sum()), "t": float(pyo.value(model.t))})
