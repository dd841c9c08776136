"""P0 — the max-margin Markov network (M³N) as an explicit quadratic program.

Zhu, Xing & Zhang, "Primal sparse max-margin Markov networks" (KDD 2009), problem P0 (eq. 1); Taskar, Guestrin &
Koller (2003):

    min_{w, ξ}  ½‖w‖² + C Σᵢ ξᵢ
    s.t.        wᵀΔfᵢ(y) ≥ Δℓᵢ(y) − ξᵢ,  ξᵢ ≥ 0,   ∀i, ∀y ∈ Sᵢ           (the working sets Sᵢ grow cut by cut)

Two masters hold the same working set:

* ``master="primal"``: variables ``w`` (dim), ``xi`` (n or 1), constraint list ``cuts``;
* ``master="dual"``: the QP over the cut multipliers (Theorem 3 of the ICML 2008 Laplace M³N paper; what
  SVM^struct solves), variables ``alpha`` ≥ 0 (one per cut), ``budget[i]``: Σ_{r∈Sᵢ} α_r ≤ C,
  objective max Σ_r α_r Δℓ_r − ½ Σ_{r,s} α_r α_s G_{rs} with the Gram matrix G_{rs} = ⟨ΔF_r, ΔF_s⟩ grown by one row
  and column per cut; w = Σ_r α_r ΔF_r.  Its size does not depend on dim, so it is the master of choice when w is
  long (10⁵–10⁶ template features) and the cuts number in the hundreds.

In the 1-slack form there is one ξ and the objective weighs it by C·n (resp. the single budget is C·n), so the
objective stays on the n-slack scale ½‖w‖² + C Σᵢ ξᵢ and both forms reach the same optimum.
"""
from __future__ import annotations

import numpy as np
import pyomo.core as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from .statements import (Check, Duality, base_dual, duals_of, objective_of, result_numbers, scale_of, solve_value, support_of,
                       cross_solver_checks, duality_for, feasibility_checks, rebuild_master, slackness_checks,
                       sparsity_check, working_set_arrays)
from ..exceptions import ParameterError, SolverError, SolverUnavailable
from ..solvers import ProblemClass
from .base import Dims, MasterState, Program, Solution, register
from ..solvers import values_of
from ..cuts import WorkingSet


#: above this many joint features ``master="auto"`` takes the Gram dual (its size depends on the cuts only)
AUTO_DUAL_DIM = 100


@register("m3n")
class M3N(Program):
    """P0, the ℓ2-regularised M³N (KDD 2009 eq. P0); see the module docstring."""

    problem_class = ProblemClass.QP
    paper = "Taskar et al. 2003; Zhu, Xing & Zhang, KDD 2009"
    equations = "P0"
    params_doc = {"master": '"primal", "dual" or "auto"'}

    def __init__(self, C=1.0, master="auto"):
        super().__init__(C)
        if master not in ("primal", "dual", "auto"):
            raise ParameterError(f'master must be "primal", "dual" or "auto"; got {master!r}')
        self.master = master

    def reads_labeling_cuts(self, model):
        # the Gram dual reads the cuts through the working set only (Gram rows, ΔFᵀα); the primal master writes rows
        return getattr(model, "master", None) == "dual"

    def params(self):
        return {"C": self.C, "master": self.master}

    def regulariser(self, w):
        return 0.5 * float(np.dot(w, w))

    def resolved_master(self, dims):
        """``auto`` takes the Gram dual unless w is tiny: its size depends on the cuts only, and HiGHS's active-set
        QP solver stalled for minutes on primal masters with a few hundred free w (synthetic chains, 204 features)
        that the dual solves in a second."""
        return self._master_for(dims.dim)

    def _master_for(self, dim):
        if self.master != "auto":
            return self.master
        return "dual" if dim > AUTO_DUAL_DIM else "primal"

    def preferred_solver(self, dim):
        """``daqp`` for the Gram dual master when it is usable here: on its working set of the previous support it
        solved the 498 OCR fold-0 masters in 0.4 s against HiGHS's 12.3 s (:mod:`mmprog.engine.daqp_native`);
        else None (the registry's default for QPs)."""
        from ..solvers import get_solver
        if self._master_for(dim) != "dual":
            return None
        return "daqp" if get_solver("daqp").availability(ProblemClass.QP) else None

    # ------------------------------------------------------------------------------------------
    def build(self, dims: Dims):
        m = pyo.ConcreteModel(name=f"m3n_{self.resolved_master(dims)}")
        m.dims = dims
        m.ws = WorkingSet(dims.dim)
        m.master_state = MasterState()
        m.master = self.resolved_master(dims)
        # objective weight of ξ: the 1-slack ξ stands for the sum of n per-example slacks
        m.slack_scale = float(dims.n) / dims.n_slacks
        m.C = pyo.Param(initialize=self.C, mutable=True)
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        if m.master == "primal":
            m.w = pyo.Var(range(dims.dim), initialize=0.0)
            m.xi = pyo.Var(range(dims.n_slacks), domain=pyo.NonNegativeReals, initialize=0.0)
            m.cuts = pyo.ConstraintList()
            m.w_list = [m.w[k] for k in range(dims.dim)]
            m.objective = pyo.Objective(
                expr=0.5 * pyo.quicksum([v * v for v in m.w_list])
                + m.C * m.slack_scale * pyo.quicksum(m.xi[i] for i in range(dims.n_slacks)),
                sense=pyo.minimize)
        else:
            m.alpha = pyo.VarList(domain=pyo.NonNegativeReals)
            m.budget = pyo.Constraint(pyo.Any)
            m.linear = pyo.Expression(expr=0.0)
            m.quadratic = pyo.Expression(expr=0.0)
            m.objective = pyo.Objective(expr=m.linear - m.quadratic, sense=pyo.maximize)
            m.alpha_of_slack = {}
        return m

    def add_cuts(self, model, cuts):
        positions = model.ws.add(cuts)
        if model.master == "primal":
            return self._add_primal(model, cuts)
        return self._add_dual(model, cuts, positions)

    def _add_primal(self, m, cuts):
        added = self.add_cut_rows(m, cuts, m.w_list)
        m.master_state.unsynced += added
        return added

    def _add_dual(self, m, cuts, positions):
        # ½αᵀGα is written into the Pyomo objective on demand (materialise): its r² terms cost Pyomo seconds per
        # round once r reaches the hundreds, and the HiGHS route solves from G directly
        return self.add_alpha_columns(m, cuts)

    def materialise(self, model):
        """Write the pending Gram terms into ``model.quadratic`` so the Pyomo model states the whole program
        (called before exports, inspection and solves through Pyomo's interfaces)."""
        m = model
        if getattr(m, "master", None) != "dual":
            return
        done = m.master_state.quad_done
        ws = m.ws
        if done >= ws.size:
            return
        new = list(range(done, ws.size))
        G_new = ws.gram_rows(new)
        all_alpha = ws.components
        quad_terms = []
        for r, pos in enumerate(new):
            a = all_alpha[pos]
            row = G_new[r]
            # the new cut's row of ½αᵀGα: G_ss/2 α_s² + Σ_{q<s} G_qs α_q α_s (earlier cuts only, so each pair once)
            quad_terms.append(0.5 * float(row[pos]) * a * a)
            nz = np.nonzero(row[:pos])[0]
            quad_terms.extend(float(row[q]) * all_alpha[q] * a for q in nz)
        m.quadratic.expr = m.quadratic.expr + pyo.quicksum(quad_terms)
        m.master_state.quad_done = ws.size

    def master_form(self, model):
        """The Gram dual is ``"gram_dual"``: a back end may solve it from G, Δℓ and the budgets (DAQP on a
        shrinking working set, HiGHS through one persistent object); the Pyomo model stays the statement of the
        program (export, show, any other solver) and the α values are loaded back into it; a test checks the
        routes agree."""
        return "gram_dual" if model.master == "dual" else None

    def gram_rows(self, model, rows):
        """Rows ⟨ΔF_p, ΔF_q⟩ of P0's Gram matrix, p in ``rows``, against every cut so far."""
        return model.ws.gram_rows(rows)

    def drop_cuts(self, model, positions):
        self.drop_alpha_or_rows(model, positions)

    # ------------------------------------------------------------------------------------------
    def read_solution(self, model):
        ws = model.ws
        n_slacks = model.dims.n_slacks
        if model.master == "primal":
            w = values_of(model.w_list)
            alpha = ws.duals(model)
            margins = ws.dF() @ w if ws.size else np.zeros(0)
            xi = values_of([model.xi[i] for i in range(n_slacks)])
        else:
            daqp = model.master_state.gram_daqp
            if daqp is not None and model.master_state.native_solution(model) and len(daqp.alpha) == ws.size:
                # the α DAQP just loaded into the Pyomo variables, without reading r variables back (O(r) Python a
                # round: 1.1 s of the 504 OCR fold-0 rounds)
                alpha = np.where(ws.active_mask(), daqp.alpha, 0.0)     # dropped cuts' α are fixed at 0
            else:
                alpha = values_of(ws.components) if ws.size else np.zeros(0)
            alpha = np.maximum(alpha, 0.0)       # interior-point iterates may sit a hair below the bound
            # the engine's previous w when it is done with it (model.master_state.w_spare): written over instead of allocating
            spare, model.master_state.w_spare = model.master_state.w_spare, None
            w = ws.tdot(alpha, out=spare) if ws.size else np.zeros(model.dims.dim)
            gram = None if model.master_state.gram_daqp is None else model.master_state.gram_daqp.G
            if gram is not None and gram.shape[0] == ws.size:
                # ΔF w = ΔF ΔFᵀ α = G α: (r, r) instead of reading every ΔF row again (r × dim)
                margins = gram @ alpha
            else:
                margins = ws.dot(w) if ws.size else np.zeros(0)
            # ξᵢ of the working set at this w: the largest violation among example i's active cuts (≥ 0)
            xi = np.zeros(n_slacks)
            if ws.size:
                act = ws.active_mask()
                np.maximum.at(xi, ws.example_array()[act], (ws.dl_array() - margins)[act])
        scale = model.slack_scale
        primal = 0.5 * float(w @ w) + self.C * scale * float(xi.sum())
        dual = float(alpha @ ws.dl_array()) - 0.5 * float(w @ w) if ws.size else 0.0
        return Solution(w=np.asarray(w, dtype=np.float64), xi=xi, alpha=alpha, objective=primal,
                        dual_objective=dual, extra={"master": model.master})


# ----------------------------------------------------------------------------------------------------------------
# Duality: P0's dual (Theorem 3 of ICML 2008) and its statements, for ``mmprog verify``
# ----------------------------------------------------------------------------------------------------------------

def p0_dual_model(arrays, name="m3n_dual"):
    """The dual of P0 on a working set — Theorem 3 of Zhu, Xing & Zhang (ICML 2008), with Σ_y αᵢ(y) ≤ C·s over the
    working set (the ground-truth labeling's multiplier, Δf = 0 and Δℓ = 0, is the slack of the budget; see
    :func:`theorem3_model` for the equality form)::

        max_{α ≥ 0, w}  Σ_r α_r Δℓ_r − ½ Σₖ wₖ²
        s.t.            stationarity[k]:  wₖ − Σ_r α_r ΔF_rk = 0      (k in the support of the cuts)
                        budget[i]:        Σ_{r∈Sᵢ} α_r ≤ C·s

    ``w`` is the posterior mean of p(w) = N(Σ α Δf, I), i.e. the M³N weights; the multipliers of ``budget`` are the
    primal ξᵢ. Features no cut touches have wₖ = 0 and are left out.

    Parameters
    ----------
    arrays : WSArrays

    Returns
    -------
    ConcreteModel
        Components ``alpha`` (r), ``w`` (support), ``stationarity``, ``budget``, ``linear``, ``quadratic``,
        ``objective``;
        ``model.support`` holds the feature indices of ``w``.
    """
    m, alpha = base_dual(arrays, name)
    support = support_of(arrays.F)
    m.support = support
    m.K = pyo.Set(initialize=[int(k) for k in support], ordered=True)
    m.w = pyo.Var(m.K, initialize=0.0)
    Fc = arrays.F.tocsc()

    def stat(m, k):
        lo, hi = Fc.indptr[k], Fc.indptr[k + 1]
        return LinearExpression(constant=0.0, linear_coefs=[1.0] + [-float(c) for c in Fc.data[lo:hi]],
                                linear_vars=[m.w[k]] + [alpha[j] for j in Fc.indices[lo:hi]]) == 0.0
    m.stationarity = pyo.Constraint(m.K, rule=stat)
    m.quadratic = pyo.Expression(expr=0.5 * pyo.quicksum(m.w[k] * m.w[k] for k in m.K))
    m.objective = pyo.Objective(expr=m.linear - m.quadratic, sense=pyo.maximize)
    return m


def theorem3_model(arrays, name="m3n_theorem3"):
    """Theorem 3 of the ICML 2008 paper as stated: the P0 dual with the ground-truth labeling yᵢ of every slack as
    its own multiplier ``alpha_truth[i]`` (Δfᵢ(yᵢ) = 0, Δℓᵢ(yᵢ) = 0) and equality budgets Σ_y αᵢ(y) = C·s."""
    m = p0_dual_model(arrays, name)
    m.alpha_truth = pyo.Var(m.SLACKS, domain=pyo.NonNegativeReals, initialize=0.0)
    members = {i: [] for i in m.SLACKS}
    for a, s in zip(m.alpha_list, arrays.slack):
        members[int(s)].append(a)
    m.budget.deactivate()
    m.budget_eq = pyo.Constraint(m.SLACKS, rule=lambda m, i: LinearExpression(
        constant=0.0, linear_coefs=[1.0] * (len(members[i]) + 1),
        linear_vars=members[i] + [m.alpha_truth[i]]) == m.C_budget)
    return m


def p0_value(w, xi, budget):
    """½‖w‖² + C·s Σᵢ ξᵢ."""
    return 0.5 * float(w @ w) + budget * float(np.sum(xi))


def p0_dual_value(arrays, alpha):
    """Σ α Δℓ − ½‖Σ α ΔF‖² (Theorem 3's objective)."""
    v = arrays.F.T @ alpha
    return float(alpha @ arrays.dl) - 0.5 * float(v @ v)


@duality_for("m3n")
class M3NDuality(Duality):
    """P0 and its dual (Theorem 3 of the ICML 2008 paper)."""

    fit_params = {"master": "primal"}

    def dual_model(self, result):
        return p0_dual_model(working_set_arrays(result))

    def checks(self, ctx):
        yield from p0_checks(ctx)


def p0_checks(ctx, master_kw=None, theorem3=True):
    """The P0 statements for a result whose master is P0 (m3n, and the Step 1 of programs built on it);
    ``theorem3=False`` leaves out the ICML 2008 statements (prediction through the result's own map)."""
    res = ctx.result
    arrays = working_set_arrays(res)
    w, xi, alpha = result_numbers(res, arrays)
    P = p0_value(w, xi, arrays.budget)
    master = getattr(res.model, "master", "primal")
    yield from feasibility_checks(ctx, arrays, w, xi, alpha)
    # the value the Pyomo model itself states at the loaded point
    ctx.program.materialise(res.model)
    stated = float(pyo.value(objective_of(res.model)))
    if master == "primal":
        yield ctx.check("master model: Pyomo objective at the loaded point = ½‖w‖² + C·s·Σξ", stated, P,
                        1e-9 * scale_of(P))
    else:
        yield ctx.check("Gram dual master: Pyomo objective at the loaded α = Σα Δℓ − ½‖Σ α ΔF‖²", stated,
                        p0_dual_value(arrays, alpha), 1e-9 * scale_of(P))
    # QP solvers (HiGHS active set, Ipopt) stop at ~1e-7 dual feasibility; times the 1-slack budget C·n this is
    # ~1e-6 of the objective, so values compared across QP solves get 1e-5 relative
    tol = max(ctx.rtol, 1e-5) * scale_of(P)
    yield ctx.check(f"strong duality: P0 value ½‖w‖² + C·s·Σξ = D(α) of the {master} master's multipliers", P,
                    p0_dual_value(arrays, alpha), tol, reason=f"α from {res.solver}")
    yield ctx.check("stationarity: w = Σ_r α_r ΔF_r (‖·‖∞)", float(np.abs(w - arrays.F.T @ alpha).max(initial=0)),
                    0.0, 1e-5 * scale_of(w))
    yield from slackness_checks(ctx, arrays, w, xi, alpha)
    yield sparsity_check(ctx, arrays, w, xi, alpha)
    # the explicit dual model, solved on its own
    name, why = ctx.solver_for("QP", need_duals=True)
    stmt = "strong duality: P0 value = optimum of the explicit dual model (Theorem 3, ≤ budgets)"
    if name is None or not len(arrays.dl):
        yield ctx.skip(stmt, why or "the working set is empty")
        yield from cross_solver_checks(ctx, **(master_kw or {}))
        return
    dm = p0_dual_model(arrays)
    D = solve_value(dm, name)
    yield ctx.check(stmt, P, D, tol, reason=f"dual solved by {name}")
    w_d = np.zeros_like(w)
    w_d[dm.support] = [pyo.value(dm.w[int(k)]) for k in dm.support]
    yield ctx.check("Theorem 3: posterior mean E[w] = Σ α Δf of the dual equals the primal w (‖·‖∞)",
                    float(np.abs(w_d - w).max(initial=0.0)), 0.0, 1e-4 * scale_of(w), reason=f"dual by {name}")
    xi_d = np.zeros(arrays.n_slacks)
    bd = duals_of(dm, [dm.budget[i] for i in dm.SLACKS])
    xi_d[list(dm.SLACKS)] = bd
    yield ctx.check("dual of the dual: budget multipliers = the primal slacks ξ (‖·‖∞)",
                    float(np.abs(xi_d - xi).max(initial=0.0)), 0.0, 1e-4 * scale_of(xi, arrays.dl),
                    reason=f"dual by {name}")
    if not theorem3:
        yield from cross_solver_checks(ctx, **(master_kw or {}))
        return
    tm = theorem3_model(arrays)
    T = solve_value(tm, name)
    yield ctx.check("Theorem 3 (ICML 2008) as stated, Σ_y αᵢ(y) = C·s including y = yᵢ: optimum = P0 value",
                    T, P, tol, reason=f"solved by {name}")
    if ctx.dataset is not None:
        w_t = np.zeros_like(w)
        w_t[tm.support] = [pyo.value(tm.w[int(k)]) for k in tm.support]
        from ..features.base import predict
        a = predict(res.fmap, w, ctx.dataset)
        b = predict(res.fmap, w_t, ctx.dataset)
        diff = sum(int(np.count_nonzero(x != y)) for x, y in zip(a, b))
        yield ctx.check("Theorem 3: predictions of h₁ (posterior mean) = predictions of h₀ (P0's w), labels that "
                        "differ", diff, 0, 0, reason=f"{sum(len(x) for x in a)} labels")
    if master == "primal":
        # the other master of the engine (SVMstruct's Gram dual) on the same cuts
        try:
            _, sol = rebuild_master(res, name, master="dual")
            yield ctx.check("Gram dual master (grown α model) optimum = P0 primal master optimum", sol.objective,
                            P, tol, reason=f"solved by {name}")
        except (SolverError, SolverUnavailable) as e:
            yield Check(ctx.name, "Gram dual master optimum = P0 primal master optimum", P, None, None, None,
                        "fail", str(e))
    yield from cross_solver_checks(ctx, **(master_kw or {}))
