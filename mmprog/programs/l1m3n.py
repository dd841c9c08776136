"""P1 — the ℓ1-norm M³N as a linear program (cutting-plane Algorithm 1).

Zhu, Xing & Zhang, "Primal sparse max-margin Markov networks" (KDD 2009), problem P1 and Algorithm 1:

    min_{μ, ν, ξ}  ½ Σₖ (μₖ + νₖ) + C Σᵢ ξᵢ
    s.t.           (μ − ν)ᵀΔfᵢ(y) ≥ Δℓᵢ(y) − ξᵢ,   μ, ν, ξ ≥ 0,   ∀i, ∀y ∈ Sᵢ

with w = μ − ν (so ½Σ(μ+ν) = ½‖w‖₁ at the optimum). The factor ½ follows the paper's statement of P1 (the
regulariser ½‖w‖₁ keeps C on the same scale as P0). Its LP dual (issue 8) is
max Σ α_r Δℓ_r s.t. −½ ≤ Σ_r α_r ΔF_rk ≤ ½ ∀k, Σ_{r∈Sᵢ} α_r ≤ C, α ≥ 0.
"""
from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from ..solvers import ProblemClass
from .base import Dims, Program, Solution, register
from .working_set import WorkingSet, values_of


@register("l1m3n")
class L1M3N(Program):
    """P1, the ℓ1-regularised M³N LP (KDD 2009, Algorithm 1); see the module docstring."""

    problem_class = ProblemClass.LP
    paper = "Zhu, Xing & Zhang, KDD 2009"
    equations = "P1, Algorithm 1"

    def regulariser(self, w):
        return 0.5 * float(np.abs(w).sum())

    def build(self, dims: Dims):
        m = pyo.ConcreteModel(name="l1m3n")
        m.dims = dims
        m.ws = WorkingSet(dims.dim)
        m.slack_scale = float(dims.n) / dims.n_slacks
        m.C = pyo.Param(initialize=self.C, mutable=True)
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        m.mu = pyo.Var(range(dims.dim), domain=pyo.NonNegativeReals, initialize=0.0)
        m.nu = pyo.Var(range(dims.dim), domain=pyo.NonNegativeReals, initialize=0.0)
        m.xi = pyo.Var(range(dims.n_slacks), domain=pyo.NonNegativeReals, initialize=0.0)
        m.cuts = pyo.ConstraintList()
        m.mu_list = [m.mu[k] for k in range(dims.dim)]
        m.nu_list = [m.nu[k] for k in range(dims.dim)]
        m.objective = pyo.Objective(
            expr=LinearExpression(constant=0.0,
                                  linear_coefs=[0.5] * (2 * dims.dim) + [self.C * m.slack_scale] * dims.n_slacks,
                                  linear_vars=m.mu_list + m.nu_list + [m.xi[i] for i in range(dims.n_slacks)]),
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
                constant=0.0,
                linear_coefs=cs + [-c for c in cs] + [1.0],
                linear_vars=[model.mu_list[k] for k in ks] + [model.nu_list[k] for k in ks]
                + [model.xi[int(cuts.example[r])]])
            added.append(model.cuts.add(body >= float(cuts.dl[r])))
        model.ws.components.extend(added)
        return added

    def drop_cuts(self, model, positions):
        for pos in positions:
            model.ws.components[pos].deactivate()
            model.ws.active[pos] = False

    def read_solution(self, model):
        ws = model.ws
        w = values_of(model.mu_list) - values_of(model.nu_list)
        xi = values_of([model.xi[i] for i in range(model.dims.n_slacks)])
        alpha = ws.duals(model)
        primal = self.regulariser(w) + self.C * model.slack_scale * float(xi.sum())
        dual = float(alpha @ ws.dl_array()) if ws.size else 0.0
        return Solution(w=w, xi=xi, alpha=alpha, objective=primal, dual_objective=dual)
