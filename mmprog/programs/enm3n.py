"""The elastic-net M³N: P0 with an added ℓ1 term, as an explicit quadratic program.

Zou & Hastie (2005)'s elastic net on problem P0 of Zhu, Xing & Zhang, "Primal sparse max-margin Markov networks"
(KDD 2009, eq. 1; Taskar, Guestrin & Koller 2003):

    min_{w, ξ}  ½‖w‖² + λ‖w‖₁ + C Σᵢ ξᵢ
    s.t.        wᵀΔfᵢ(y) ≥ Δℓᵢ(y) − ξᵢ,  ξᵢ ≥ 0,   ∀i, ∀y ∈ Sᵢ           (the working sets Sᵢ grow cut by cut)

With λ = 0 it is P0 (program ``m3n``); as λ grows more weights are exactly zero, and once λ ≥ ‖ΔFᵀα‖∞ for every
feasible α the optimum is w = 0 with value C Σᵢ maxᵧ Δℓᵢ(y). sklearn-crfsuite's ``CRF(c1, c2)`` (L-BFGS with both
penalties) is the log-loss counterpart of this program.

The master (``build``): w = μ − ν with μ, ν ≥ 0 and

    min_{μ, ν, ξ}  ½ Σₖ (μₖ² + νₖ²) + λ Σₖ (μₖ + νₖ) + C·s Σᵢ ξᵢ
    s.t.           (μ − ν)ᵀΔF_r + ξ_{e(r)} ≥ Δℓ_r,   μ, ν, ξ ≥ 0

Any feasible (μ, ν) with μₖ, νₖ > 0 can lower both by min(μₖ, νₖ) without changing w and lowers the objective (the
quadratic strictly, whatever λ ≥ 0), so μₖνₖ = 0 at the optimum and the objective there is ½‖w‖² + λ‖w‖₁ + C·s Σξ:
the same program. This split, rather than ½‖μ − ν‖² (a singular Hessian with off-diagonal ±1 blocks) or w free with
t ≥ |w| (2·dim more rows), gives a *diagonal, positive definite* Hessian on (μ, ν) and bounds only: strictly convex
with a unique optimum, which HiGHS's active-set QP, DAQP, Ipopt and SCIP all take as it is, and whose Hessian a back
end gets as one vector. In the 1-slack form s = n (``model.slack_scale``), so the objective stays on the n-slack
scale as for ``m3n`` and ``l1m3n``.

Its Fenchel dual on a working set (the conjugate of ½‖w‖² + λ‖w‖₁ is ½‖soft(·, λ)‖²)::

    max_{α ≥ 0}  Σ_r α_r Δℓ_r − ½‖soft(ΔFᵀα, λ)‖²,    Σ_{r∈Sᵢ} α_r ≤ C·s,
    soft(v, λ)ₖ = sign(vₖ)·max(|vₖ| − λ, 0)

with w = soft(ΔFᵀα, λ) at the optimum; as a QP in (α, s): max Σ α Δℓ − ½‖ΔFᵀα − s‖² with −λ ≤ s ≤ λ
(:func:`enet_dual_model`).

Size: ``build`` writes the variables only and ``add_cuts`` records the cuts in the working set; the quadratic and ℓ1
terms of the objective and the cut rows are written into the Pyomo model on demand (:meth:`ENM3N.materialise`,
before exports, inspection and solves through Pyomo's interfaces), since a master of record at 10⁵–10⁶ joint
features would otherwise spend seconds in Pyomo expressions that HiGHS's native route (form ``"qp_rows"``) never reads.
"""
from __future__ import annotations

import numpy as np
import pyomo.core as pyo
import scipy.sparse as sp
from pyomo.core.expr.numeric_expr import LinearExpression

from .statements import (Check, Duality, base_dual, duals_of, objective_of, rebuild_as, result_numbers, scale_of,
                         solve_value, support_of, cross_solver_checks, duality_for, feasibility_checks,
                         slackness_checks, sparsity_check, working_set_arrays)
from ..exceptions import SolverError, SolverUnavailable, check_param
from ..solvers import ProblemClass
from .base import Dims, MasterState, Program, Solution, register
from ..solvers import values_of
from ..cuts import WorkingSet


#: above this many joint features the master goes to Ipopt (:meth:`ENM3N.preferred_solver`)
AUTO_IPOPT_DIM = 1000


def soft(v, lam):
    """The soft-thresholding operator soft(v, λ)ₖ = sign(vₖ)·max(|vₖ| − λ, 0), the gradient of the conjugate of
    λ‖·‖₁ + ½‖·‖² (Zou & Hastie 2005).

    Parameters
    ----------
    v : ndarray, shape (dim,)
    lam : float
        λ ≥ 0.

    Returns
    -------
    ndarray, shape (dim,)
    """
    v = np.asarray(v, dtype=np.float64)
    return np.sign(v) * np.maximum(np.abs(v) - lam, 0.0)


@register("enm3n")
class ENM3N(Program):
    """The elastic-net M³N, ½‖w‖² + λ‖w‖₁ + C Σᵢ ξᵢ (Zou & Hastie 2005 on KDD 2009's P0); see the module docstring.

    Parameters
    ----------
    C : float
        Slack weight, > 0 (n-slack scale in both slack forms).
    lam : float
        λ ≥ 0, the weight of ‖w‖₁ (λ = 0 is P0).
    """

    problem_class = ProblemClass.QP
    paper = "Zou & Hastie 2005 on P0 of Zhu, Xing & Zhang, KDD 2009"
    equations = "P0 + λ‖w‖₁ (elastic net)"
    params_doc = {"lam": "λ ≥ 0, finite: the weight of ‖w‖₁ (0 gives P0)"}

    def __init__(self, C=1.0, lam=0.1, **unknown):
        # unknown names get the base class's one-line error listing the accepted ones (not Python's TypeError)
        super().__init__(C, **unknown)
        check_param("lam", lam, isinstance(lam, (int, float, np.integer, np.floating)) and not isinstance(lam, bool)
                    and bool(np.isfinite(lam)) and lam >= 0, "a finite float ≥ 0 (the ℓ1 weight λ of enm3n)")
        self.lam = float(lam)

    def params(self):
        return {"C": self.C, "lam": self.lam}

    def preferred_solver(self, dim):
        """``ipopt`` above :data:`AUTO_IPOPT_DIM` joint features, else None (HiGHS, the registry's default for QPs).

        HiGHS's active-set QP adds the free variables one by one and works on their dense reduced Hessian: a one-cut
        master with 1,000 non-zero weights took it 2.3 s, with 4,000 more than 120 s; Ipopt's interior point (from
        the arrays, :class:`mmprog.engine.masters.NativeQPIpoptRoute`) took about 3 s for 4,000, 9-12 s for 20,000
        and 54 s for 100,000 (dim 500,000) on the same kind of cut. HiGHS's zeros are exact (bounds of the active
        set); Ipopt's are ~1e-9."""
        return "ipopt" if dim > AUTO_IPOPT_DIM else None

    def resolved_master(self, dims):
        """The kind of master, as m3n's models say it (the engine's routes and the statements read it): always
        ``"primal"``, the split w = μ − ν."""
        return "primal"

    def regulariser(self, w):
        w = np.asarray(w, dtype=np.float64)
        return 0.5 * float(w @ w) + self.lam * float(np.abs(w).sum())

    # ------------------------------------------------------------------------------------------
    def build(self, dims: Dims):
        m = pyo.ConcreteModel(name="enm3n")
        m.dims = dims
        m.ws = WorkingSet(dims.dim)
        m.master_state = MasterState()
        m.master = self.resolved_master(dims)
        m.slack_scale = float(dims.n) / dims.n_slacks
        m.C = pyo.Param(initialize=self.C, mutable=True)
        m.lam = pyo.Param(initialize=self.lam, mutable=True)
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        m.mu = pyo.Var(range(dims.dim), domain=pyo.NonNegativeReals, initialize=0.0)
        m.nu = pyo.Var(range(dims.dim), domain=pyo.NonNegativeReals, initialize=0.0)
        m.xi = pyo.Var(range(dims.n_slacks), domain=pyo.NonNegativeReals, initialize=0.0)
        m.cuts = pyo.ConstraintList()
        # values() of a Var indexed by a range is in index order (and 2-3x faster than indexing dim times)
        m.mu_list = list(m.mu.values())
        m.nu_list = list(m.nu.values())
        # ½Σ(μ² + ν²) and Σ(μ + ν) are written by materialise: 4·dim Pyomo terms cost ~2.5 s at dim 500,000, which
        # a master solved by HiGHS's native route (or only built as the record of a fit) never reads
        m.quadratic = pyo.Expression(expr=0.0)
        m.l1 = pyo.Expression(expr=0.0)
        m.objective = pyo.Objective(
            expr=m.quadratic + m.lam * m.l1
            + m.C * m.slack_scale * pyo.quicksum(m.xi[i] for i in range(dims.n_slacks)),
            sense=pyo.minimize)
        return m

    def add_cuts(self, model, cuts):
        """Record the cuts; their Pyomo rows are written by :meth:`materialise` (HiGHS's native route takes them as
        CSR blocks from the working set)."""
        return model.ws.add(cuts)

    def materialise(self, model):
        """Write what the Pyomo model holds lazily: the objective's ½Σ(μ² + ν²) and Σ(μ + ν) (once) and the rows
        (μ − ν)ᵀΔF_r + ξ_{e(r)} ≥ Δℓ_r of the cuts added since the last call. Returns the new rows."""
        m = model
        if m.quadratic.expr.is_constant():          # still the placeholder 0 of build
            m.quadratic.expr = 0.5 * pyo.quicksum([v * v for v in m.mu_list] + [v * v for v in m.nu_list])
            m.l1.expr = LinearExpression(constant=0.0, linear_coefs=[1.0] * (2 * len(m.mu_list)),
                                         linear_vars=m.mu_list + m.nu_list)
        return self.write_split_rows(m)

    def master_form(self, model):
        """``"qp_rows"``: a QP with a diagonal Hessian whose cut rows (μ − ν)ᵀΔF_r + ξ ≥ Δℓ_r are linear in ΔF, so
        HiGHS takes each round's rows as one CSR block (:meth:`native_qp`); any other solver gets the Pyomo model,
        completed by :meth:`materialise`."""
        return "qp_rows"

    def native_qp(self, model):
        """Form ``"qp_rows"``: columns μ (dim), ν (dim), ξ (n_slacks) with their costs, bounds and the diagonal of
        the Hessian, and the map from cuts to rows, as keyword arguments of
        :class:`mmprog.engine.highs_native.NativeLP`."""
        d, s_ = model.dims.dim, model.dims.n_slacks
        return dict(cost=np.r_[np.full(2 * d, self.lam), np.full(s_, self.C * model.slack_scale)],
                    lower=np.zeros(2 * d + s_), upper=np.full(2 * d + s_, np.inf),
                    variables=model.mu_list + model.nu_list + [model.xi[i] for i in range(s_)],
                    row_block=self.split_row_block(model), hessian=np.r_[np.ones(2 * d), np.zeros(s_)])

    def drop_cuts(self, model, positions):
        self.drop_written_rows(model, positions)

    # ------------------------------------------------------------------------------------------
    def read_solution(self, model):
        ws = model.ws
        w, xi, alpha = self.split_solution(model)
        primal = self.regulariser(w) + self.C * model.slack_scale * float(xi.sum())
        if ws.size:
            v = soft(ws.tdot(np.asarray(alpha, dtype=np.float64)), self.lam)
            dual = float(alpha @ ws.dl_array()) - 0.5 * float(v @ v)
        else:
            dual = 0.0
        return Solution(w=w, xi=xi, alpha=alpha, objective=primal, dual_objective=dual,
                        extra={"l1_norm": float(np.abs(w).sum()), "nonzero": int(np.count_nonzero(w))})


# ----------------------------------------------------------------------------------------------------------------
# Duality: the Fenchel dual of the elastic-net M³N and its statements, for ``mmprog verify``
# ----------------------------------------------------------------------------------------------------------------

def enet_dual_model(arrays, lam, name="enm3n_dual"):
    """The Fenchel dual of the elastic-net M³N on a working set, as a QP in (α, s, w)::

        max_{α ≥ 0, s, w}  Σ_r α_r Δℓ_r − ½ Σₖ wₖ²
        s.t.               stationarity[k]:  wₖ − Σ_r α_r ΔF_rk + sₖ = 0      (k in the support of the cuts)
                           −λ ≤ sₖ ≤ λ
                           budget[i]:        Σ_{r∈Sᵢ} α_r ≤ C·s

    Maximising over s first gives sₖ = clip(Σ_r α_r ΔF_rk, −λ, λ) and wₖ = soft(Σ_r α_r ΔF_rk, λ), so the optimum is
    max_α Σ α Δℓ − ½‖soft(ΔFᵀα, λ)‖² and ``w`` is the primal w; the multipliers of ``budget`` are the primal ξᵢ.
    Features no cut touches have wₖ = 0 and are left out. With λ = 0, s is fixed at 0 and this is P0's dual.

    Parameters
    ----------
    arrays : WSArrays
    lam : float

    Returns
    -------
    ConcreteModel
        Components ``alpha`` (r), ``s``, ``w`` (support), ``stationarity``, ``budget``, ``linear``, ``quadratic``,
        ``objective``; ``model.support`` holds the feature indices of ``w`` and ``s``.
    """
    m, alpha = base_dual(arrays, name)
    support = support_of(arrays.F)
    m.support = support
    m.K = pyo.Set(initialize=[int(k) for k in support], ordered=True)
    m.w = pyo.Var(m.K, initialize=0.0)
    m.s = pyo.Var(m.K, bounds=(-float(lam), float(lam)), initialize=0.0)
    if lam == 0:
        m.s.fix(0.0)        # a box [0, 0]: fixed, so every QP back end reads it as P0's dual
    Fc = arrays.F.tocsc()

    def stat(m, k):
        lo, hi = Fc.indptr[k], Fc.indptr[k + 1]
        return LinearExpression(constant=0.0, linear_coefs=[1.0, 1.0] + [-float(c) for c in Fc.data[lo:hi]],
                                linear_vars=[m.w[k], m.s[k]] + [alpha[j] for j in Fc.indices[lo:hi]]) == 0.0
    m.stationarity = pyo.Constraint(m.K, rule=stat)
    m.quadratic = pyo.Expression(expr=0.5 * pyo.quicksum(m.w[k] * m.w[k] for k in m.K))
    m.objective = pyo.Objective(expr=m.linear - m.quadratic, sense=pyo.maximize)
    return m


def enet_value(w, xi, budget, lam):
    """½‖w‖² + λ‖w‖₁ + C·s Σᵢ ξᵢ."""
    return 0.5 * float(w @ w) + lam * float(np.abs(w).sum()) + budget * float(np.sum(xi))


def enet_dual_value(arrays, alpha, lam):
    """Σ α Δℓ − ½‖soft(ΔFᵀα, λ)‖² (the Fenchel dual's objective)."""
    v = soft(arrays.F.T @ alpha, lam)
    return float(alpha @ arrays.dl) - 0.5 * float(v @ v)


@duality_for("enm3n")
class ENM3NDuality(Duality):
    """The elastic-net M³N and its Fenchel dual."""

    def dual_model(self, result):
        return enet_dual_model(working_set_arrays(result), float(result.params["lam"]))

    def checks(self, ctx):
        yield from enm3n_checks(ctx)


def enm3n_checks(ctx):
    """The statements of the elastic-net M³N, each recomputed from ΔF, Δℓ, w, ξ, α (and μ, ν of the master)."""
    res = ctx.result
    arrays = working_set_arrays(res)
    lam = float(res.params["lam"])
    w, xi, alpha = result_numbers(res, arrays)
    P = enet_value(w, xi, arrays.budget, lam)
    g = arrays.F.T @ alpha if len(alpha) else np.zeros_like(w)        # ΔFᵀα
    yield from feasibility_checks(ctx, arrays, w, xi, alpha)
    m = res.model
    ctx.program.materialise(m)
    mu, nu = values_of(m.mu_list), values_of(m.nu_list)
    split = 0.5 * float(mu @ mu + nu @ nu) + lam * float((mu + nu).sum())
    yield ctx.check("master model: Pyomo objective at the loaded point = ½Σ(μ² + ν²) + λΣ(μ + ν) + C·s·Σξ",
                    float(pyo.value(objective_of(m))), split + arrays.budget * float(xi.sum()), 1e-9 * scale_of(P))
    # μₖνₖ = 0 at the optimum, so the split regulariser is the elastic net of w = μ − ν (Ipopt stops with both ~1e-9)
    yield ctx.check("split: ½Σ(μ² + ν²) + λΣ(μ + ν) = ½‖w‖² + λ‖w‖₁ at w = μ − ν", split,
                    P - arrays.budget * float(xi.sum()), 1e-7 * scale_of(P),
                    reason=f"max μₖνₖ = {float(np.max(mu * nu, initial=0.0)):.3g}")
    # QP solvers stop at ~1e-7 dual feasibility; times the 1-slack budget C·n this is ~1e-6 of the objective
    tol = max(ctx.rtol, 1e-5) * scale_of(P)
    yield ctx.check("strong duality: ½‖w‖² + λ‖w‖₁ + C·s·Σξ = D(α) = Σ α Δℓ − ½‖soft(ΔFᵀα, λ)‖² of the solver's "
                    "multipliers", P, enet_dual_value(arrays, alpha, lam), tol, reason=f"α from {res.solver}")
    yield ctx.check("stationarity: w = soft(ΔFᵀα, λ) (‖·‖∞)", float(np.abs(w - soft(g, lam)).max(initial=0.0)), 0.0,
                    1e-5 * scale_of(w, arrays.dl))
    # the reduced costs of μ ≥ 0 and ν ≥ 0: μₖ + λ − (ΔFᵀα)ₖ and νₖ + λ + (ΔFᵀα)ₖ, zero where the variable is > 0
    extra = (mu * (mu + lam - g), nu * (nu + lam + g))
    yield from slackness_checks(ctx, arrays, w, xi, alpha, extra)
    yield sparsity_check(ctx, arrays, w, xi, alpha)
    name, why = ctx.solver_for("QP", need_duals=True)
    stmt = "strong duality: value = optimum of the explicit Fenchel dual model (max over α, |s| ≤ λ)"
    if name is None or not len(arrays.dl):
        yield ctx.skip(stmt, why or "the working set is empty")
        yield from cross_solver_checks(ctx)
        return
    dm = enet_dual_model(arrays, lam)
    D = solve_value(dm, name)
    yield ctx.check(stmt, P, D, tol, reason=f"dual solved by {name}")
    w_d = np.zeros_like(w)
    w_d[dm.support] = [pyo.value(dm.w[int(k)]) for k in dm.support]
    yield ctx.check("explicit dual: its w = ΔFᵀα − s equals the primal w (‖·‖∞)",
                    float(np.abs(w_d - w).max(initial=0.0)), 0.0, 1e-4 * scale_of(w), reason=f"dual by {name}")
    xi_d = np.zeros(arrays.n_slacks)
    xi_d[list(dm.SLACKS)] = duals_of(dm, [dm.budget[i] for i in dm.SLACKS])
    yield ctx.check("dual of the dual: budget multipliers = the primal slacks ξ (‖·‖∞)",
                    float(np.abs(xi_d - xi).max(initial=0.0)), 0.0, 1e-4 * scale_of(xi, arrays.dl),
                    reason=f"dual by {name}")
    yield from p0_bracket_checks(ctx, P, lam, name, tol)
    yield from cross_solver_checks(ctx)


def p0_bracket_checks(ctx, P, lam, solver, tol):
    """P0 on the same working set brackets the elastic net: P0* ≤ enm3n* (λ‖w‖₁ ≥ 0) and enm3n* ≤ P0* + λ‖w₀‖₁
    (P0's optimum w₀ is feasible); equal when λ = 0."""
    res = ctx.result
    try:
        _, sol0 = rebuild_as(res, "m3n", solver, C=float(res.params["C"]), master="primal")
    except (SolverError, SolverUnavailable) as e:
        yield Check(ctx.name, "P0 bracket: P0 optimum on the same working set", None, None, None, None, "fail",
                    str(e))
        return
    P0, l1 = float(sol0.objective), float(np.abs(sol0.w).sum())
    yield ctx.check("P0 bracket: P0 optimum ≤ elastic-net optimum (same working set)", P0, P, tol, "≤",
                    reason=f"P0 solved by {solver}")
    yield ctx.check("P0 bracket: elastic-net optimum ≤ P0 optimum + λ‖w_P0‖₁ (same working set)", P, P0 + lam * l1,
                    tol, "≤", reason=f"P0 solved by {solver}")
