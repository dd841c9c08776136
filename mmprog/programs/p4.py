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
import pyomo.core as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from .statements import (Check, Duality, base_dual, objective_of, rebuild_as, result_numbers, scale_of, solve_value, support_of,
                       cross_solver_checks, duality_for, feasibility_checks, slackness_checks, sparsity_check,
                       working_set_arrays)
from ..exceptions import MMProgError, SolverError, SolverUnavailable, check_param
from ..solvers import ProblemClass
from .base import Dims, MasterState, Program, Solution, register
from ..solvers import values_of
from ..cuts import WorkingSet


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
        m.master_state = MasterState()
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


# ----------------------------------------------------------------------------------------------------------------
# Duality: P4's dual and its statements, with Theorem 2 (KDD 2009), for ``mmprog verify``
# ----------------------------------------------------------------------------------------------------------------

def p4_dual_model(arrays, lam, dim, name="p4_dual"):
    """The dual of P4 = min (λ/K)‖w‖₁² + C·s Σᵢ ξᵢ on a working set (the conjugate of (λ/K)‖·‖₁² is
    (K/4λ)‖·‖∞²)::

        max_{α ≥ 0, s}  objective = linear − quadratic,   linear = Σ_r α_r Δℓ_r,   quadratic = (K/4λ) s²
        s.t.            eta_upper[k]:   Σ_r α_r ΔF_rk − s ≤ 0
                        eta_lower[k]:  −Σ_r α_r ΔF_rk − s ≤ 0        (so s ≥ ‖Σ_r α_r ΔF_r‖∞)
                        budget[i]:      Σ_{r∈Sᵢ} α_r ≤ C·s

    with K = ``dim`` the number of joint features (all of them, also those no cut touches)."""
    m, alpha = base_dual(arrays, name)
    support = support_of(arrays.F)
    m.support = support
    m.K = pyo.Set(initialize=[int(k) for k in support], ordered=True)
    m.s = pyo.Var(domain=pyo.NonNegativeReals, initialize=0.0)
    Fc = arrays.F.tocsc()

    def row(k, sign):
        lo, hi = Fc.indptr[k], Fc.indptr[k + 1]
        return LinearExpression(constant=0.0, linear_coefs=[sign * float(c) for c in Fc.data[lo:hi]] + [-1.0],
                                linear_vars=[alpha[j] for j in Fc.indices[lo:hi]] + [m.s]) <= 0.0
    m.eta_upper = pyo.Constraint(m.K, rule=lambda m, k: row(k, 1.0))
    m.eta_lower = pyo.Constraint(m.K, rule=lambda m, k: row(k, -1.0))
    m.quadratic = pyo.Expression(expr=(dim / (4.0 * lam)) * m.s * m.s)
    m.objective = pyo.Objective(expr=m.linear - m.quadratic, sense=pyo.maximize)
    return m


def p4_value(w, xi, budget, lam):
    """(λ/K)‖w‖₁² + C·s Σᵢ ξᵢ."""
    return lam / len(w) * float(np.abs(w).sum()) ** 2 + budget * float(np.sum(xi))


def p4_dual_value(arrays, alpha, lam, dim):
    eta = arrays.F.T @ alpha
    return float(alpha @ arrays.dl) - dim / (4.0 * lam) * float(np.abs(eta).max(initial=0.0)) ** 2


@duality_for("p4")
class P4Duality(Duality):
    """P4 of Theorem 2 (KDD 2009, appendix A), its dual, and Theorem 2 itself (AdapM³N reaches P4's optimum)."""

    def dual_model(self, result):
        return p4_dual_model(working_set_arrays(result), float(result.params["lam"]), len(result.w))

    def checks(self, ctx):
        yield from p4_checks(ctx)


def p4_checks(ctx):
    res = ctx.result
    lam = float(res.params["lam"])
    arrays = working_set_arrays(res)
    w, xi, alpha = result_numbers(res, arrays)
    K = len(w)
    P = p4_value(w, xi, arrays.budget, lam)
    yield from feasibility_checks(ctx, arrays, w, xi, alpha)
    stated = float(pyo.value(objective_of(res.model)))
    t = res.extra.get("t")
    if t is not None:
        yield ctx.check("l1_bound is tight at the optimum: t = ‖w‖₁", float(t), float(np.abs(w).sum()),
                        1e-6 * scale_of(t))
        yield ctx.check("master model: Pyomo objective at the loaded point = (λ/K)t² + C·s·Σξ", stated,
                        lam / K * float(t) ** 2 + arrays.budget * float(xi.sum()), 1e-9 * scale_of(P))
    tol = max(ctx.rtol, 1e-5) * scale_of(P)
    yield ctx.check("strong duality: P4 value (λ/K)‖w‖₁² + C·s·Σξ = Σ α Δℓ − (K/4λ)‖Σ α ΔF‖∞² of the solver's "
                    "duals", P, p4_dual_value(arrays, alpha, lam, K), tol, reason=f"α from {res.solver}")
    # sub-gradient of (λ/K)‖w‖₁²: η = Σ α ΔF ∈ (2λ/K)‖w‖₁ ∂‖w‖₁
    eta = arrays.F.T @ alpha if len(alpha) else np.zeros_like(w)
    c = 2.0 * lam / K * float(np.abs(w).sum())
    nz = np.abs(w) > 1e-6 * scale_of(w)
    sg_tol = 1e-4 * scale_of(eta, c)
    yield ctx.check("stationarity (sub-gradient): Σ α ΔF_k = (2λ/K)‖w‖₁ sign(w_k) where w_k ≠ 0 (max deviation)",
                    float(np.abs(eta[nz] - c * np.sign(w[nz])).max(initial=0.0)), 0.0, sg_tol,
                    reason=f"{int(nz.sum())} non-zero weights of {K}")
    yield ctx.check("stationarity (sub-gradient): ‖Σ α ΔF‖∞ ≤ (2λ/K)‖w‖₁", float(np.abs(eta).max(initial=0.0)), c,
                    sg_tol, "≤")
    yield from slackness_checks(ctx, arrays, w, xi, alpha)
    yield sparsity_check(ctx, arrays, w, xi, alpha)
    name, why = ctx.solver_for("QP", need_duals=False)
    stmt = "strong duality: P4 value = optimum of the explicit dual model"
    if name is None:
        yield ctx.skip(stmt, why)
    elif len(arrays.dl):
        dm = p4_dual_model(arrays, lam, K)
        yield ctx.check(stmt, P, solve_value(dm, name), tol, reason=f"dual solved by {name}")
    # P4 and P1 share their solutions (the squared norm only re-parametrises C): with c = (2λ/K)‖w‖₁, α/(2c) is
    # optimal for P1 at C' = C / (2c) on the same cuts, so P1's optimum there is ½‖w‖₁ + C'·s·Σξ
    lp, why = ctx.solver_for("LP")
    stmt = "P4 ⇔ P1: P1 at C' = C·K/(4λ‖w‖₁) on the same cuts has optimum ½‖w‖₁ + C'·s·Σξ (P4's w)"
    if lp is None or c <= 0:
        yield ctx.skip(stmt, why or "w = 0")
    else:
        C1 = res.params["C"] / (2.0 * c)
        try:
            _, sol = rebuild_as(res, "l1m3n", lp, C=C1)
            yield ctx.check(stmt, sol.objective, 0.5 * float(np.abs(w).sum()) + C1 * arrays.budget
                            / res.params["C"] * float(xi.sum()), 1e-4 * scale_of(sol.objective),
                            reason=f"C' = {C1:.6g}, solved by {lp}")
        except (SolverError, SolverUnavailable, MMProgError) as e:
            yield Check(ctx.name, stmt, None, None, None, None, "fail", str(e))
    yield from theorem2_checks(ctx, P_upper=getattr(res, "upper_bound", P), P_lower=P)
    yield from cross_solver_checks(ctx)


def theorem2_checks(ctx, P_upper, P_lower):
    """Theorem 2 (KDD 2009): the adaptive M³N (EM over P3) attains P4's optimum. Trains ``adapm3n`` with the same
    C and λ on the data (update (4), which decreases the objective monotonically) and compares its P4 objective
    (λ/K)‖w‖₁² + C Σᵢ Hᵢ(w) at its w — exact hinge, so an upper bound — with P4's bracket [lower, upper]."""
    from .base import registered
    stmt = "Theorem 2 (KDD 2009): AdapM³N's (λ/K)‖w‖₁² + C·ΣHᵢ(w) at its EM fixed point = P4's optimum"
    if "adapm3n" not in registered():
        yield ctx.skip(stmt, "program adapm3n is not registered")
        return
    if ctx.dataset is None:
        yield ctx.skip(stmt, "needs the training data (mmprog verify passes it)")
        return
    res = ctx.result
    try:
        a = ctx.fit(ctx.dataset, program="adapm3n", C=res.params["C"], lam=res.params["lam"],
                       slack=res.slack, eps=1e-5, update="eq4", n_em=60)
    except MMProgError as e:
        yield Check(ctx.name, stmt, None, None, None, None, "fail", f"adapm3n: {e}")
        return
    v = float(a.extra["p4_objective"])
    # EM converges linearly: ~1e-7 of the objective after 60 monotone rounds on tiny data (2e-5 allowed), plus
    # P4's own optimality bracket
    tol = 2e-5 * scale_of(v) + max(P_upper - P_lower, 0.0)
    yield ctx.check(stmt, v, P_lower, tol, reason=f"{a.extra['em_rounds']} EM rounds, {a.extra['removed']} "
                                                   f"features removed")
