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
import pyomo.core as pyo
import scipy.sparse as sp
from pyomo.core.expr.numeric_expr import LinearExpression

from .statements import (CROSS_SOLVER_TIME_LIMIT, Duality, base_dual, duals_of, objective_of, result_numbers, scale_of,
                       solve_value, support_of, cross_solver_checks, duality_for, feasibility_checks, slackness_checks,
                       sparsity_check, working_set_arrays)
from ..solvers import ProblemClass
from .base import Dims, MasterState, Program, Solution, register
from ..solvers import values_of
from ..cuts import WorkingSet


@register("l1m3n")
class L1M3N(Program):
    """P1, the ℓ1-regularised M³N LP (KDD 2009, Algorithm 1); see the module docstring."""

    problem_class = ProblemClass.LP
    paper = "Zhu, Xing & Zhang, KDD 2009"
    equations = "P1, Algorithm 1"
    params_doc = {"algorithm": '"cutting_plane" (default, the LP grown cut by cut), "factored" (chains: the whole LP '
                               'in polynomial size, solved once; mmprog.engine.factored_lp) or "subgradient" (P1′, '
                               'Algorithm 2)',
                  "crossover": 'algorithm="factored": run IPX\'s crossover to a vertex (exact zeros in w; default '
                               'False)',
                  "lam": "ℓ1-ball radius λ > 0 of P1′ (subgradient only)",
                  "eta0, schedule, variant, batch_size, seed, output, projection":
                  "sub-gradient settings (see mmprog.engine.subgradient)"}

    def __init__(self, C=1.0, algorithm="cutting_plane", lam=None, crossover=None, **subgradient):
        super().__init__(C)
        from ..exceptions import ParameterError
        if algorithm not in ("cutting_plane", "factored", "subgradient"):
            raise ParameterError(f'algorithm must be "cutting_plane", "factored" or "subgradient"; got {algorithm!r}')
        self.algorithm = algorithm
        if crossover is not None and algorithm != "factored":
            raise ParameterError('crossover applies only with algorithm="factored"; drop it or set '
                                 'algorithm="factored"')
        if crossover is not None and not isinstance(crossover, (bool, np.bool_)):
            raise ParameterError(f"crossover must be True or False; got {crossover!r}")
        self.crossover = bool(crossover)
        if algorithm in ("cutting_plane", "factored"):
            if lam is not None or subgradient:
                extra = ", ".join((["lam"] if lam is not None else []) + list(subgradient))
                raise ParameterError(f'{extra} apply only with algorithm="subgradient" (P1′); drop them or set '
                                     f'algorithm="subgradient"')
        else:
            from ..projections import SETTINGS, check_settings
            unknown = [k for k in subgradient if k not in SETTINGS]
            if unknown:
                raise ParameterError(f"unknown sub-gradient setting(s) {', '.join(unknown)}; accepted: "
                                     f"lam, {', '.join(SETTINGS)}")
            if lam is None or isinstance(lam, bool) or not isinstance(lam, (int, float, np.number)) \
                    or not np.isfinite(lam) or lam <= 0:
                raise ParameterError(f'lam (the ℓ1-ball radius of P1′) must be a finite float > 0 with '
                                     f'algorithm="subgradient"; got {lam!r}')
            self.lam = float(lam)
            self.subgradient = check_settings(**subgradient)

    def params(self):
        if self.algorithm == "cutting_plane":
            return {"C": self.C}
        if self.algorithm == "factored":
            return {"C": self.C, "algorithm": "factored", **({"crossover": True} if self.crossover else {})}
        return {"C": self.C, "algorithm": self.algorithm, "lam": self.lam, **self.subgradient}

    @property
    def checkpointable(self):
        # the sub-gradient and factored routes keep no working set
        return self.algorithm == "cutting_plane"

    def fit(self, oracle, engine, **engine_kw):
        """Algorithm 1 (the cutting-plane LP, default), the factored LP solved once (``algorithm="factored"``)
        or, with ``algorithm="subgradient"``, the projected sub-gradient Algorithm 2 for P1′ with radius ``lam``
        (the engine's ``max_iter`` is the number of passes)."""
        if self.algorithm == "subgradient":
            return engine.subgradient(oracle, self.lam, self.subgradient, **engine_kw)
        if self.algorithm == "factored":
            return engine.factored_lp(self, oracle, **engine_kw)
        return engine.cutting_plane(self, oracle, **engine_kw)

    def regulariser(self, w):
        return 0.5 * float(np.abs(w).sum())

    def build(self, dims: Dims):
        m = pyo.ConcreteModel(name="l1m3n")
        m.dims = dims
        m.ws = WorkingSet(dims.dim)
        m.master_state = MasterState()
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

    def build_factored(self, lp):
        """The Pyomo statement of the factored P1 LP (:mod:`mmprog.engine.factored_lp`): variables μ, ν, ξ and the
        Viterbi bounds V, A, G; its rows (``model.rows``) are written by :meth:`materialise`."""
        m = pyo.ConcreteModel(name="l1m3n_factored")
        m.master_state = MasterState()
        m.factored = lp
        m.C = pyo.Param(initialize=self.C, mutable=True)
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        for name, (first, size) in lp.columns.items():
            bounded = np.isfinite(lp.col_lower[first]) if size else True
            setattr(m, name, pyo.Var(range(size), domain=pyo.NonNegativeReals if bounded else pyo.Reals,
                                     initialize=0.0))
        m.columns = [v for name in lp.columns for v in getattr(m, name).values()]
        m.objective = pyo.Objective(
            expr=LinearExpression(constant=0.0, linear_coefs=[float(c) for c in lp.cost[:2 * lp.dim + lp.n]],
                                  linear_vars=m.columns[:2 * lp.dim + lp.n]), sense=pyo.minimize)
        m.rows = pyo.ConstraintList()
        return m

    def factored_values(self, model):
        """The column vector of the factored LP as loaded into the Pyomo variables."""
        return values_of(model.columns)

    def add_cuts(self, model, cuts):
        """Record the cuts; their Pyomo rows are written by :meth:`materialise` (see mmprog/engine/highs_native.py)."""
        return model.ws.add(cuts)

    def materialise(self, model):
        """Write the Pyomo rows of the cuts added since the last call: (μ − ν)ᵀΔF_r + ξ_{e(r)} ≥ Δℓ_r (the factored
        LP's rows all at once, the first time)."""
        lp = getattr(model, "factored", None)
        if lp is not None:
            if len(model.rows):
                return []
            A, cols = lp.A, model.columns
            for r in range(A.shape[0]):
                lo, hi = A.indptr[r], A.indptr[r + 1]
                body = LinearExpression(constant=0.0, linear_coefs=[float(c) for c in A.data[lo:hi]],
                                        linear_vars=[cols[j] for j in A.indices[lo:hi]])
                if lp.row_upper[r] == lp.row_lower[r]:
                    model.rows.add(body == float(lp.row_lower[r]))
                else:
                    model.rows.add(body >= float(lp.row_lower[r]))
            return list(model.rows.values())
        return self.write_split_rows(model)

    def master_form(self, model):
        """P1's master is ``"lp_rows"``: its cut rows (μ − ν)ᵀΔF_r + ξ ≥ Δℓ_r are linear in ΔF, so a back end may
        take each round's rows as one CSR block (HiGHS: Pyomo's row building cost 30 s per OCR round); with any
        other solver the Pyomo model is completed and solved."""
        return "lp_rows"

    def native_lp(self, model):
        d, s_ = model.dims.dim, model.dims.n_slacks
        return dict(cost=np.r_[np.full(2 * d, 0.5), np.full(s_, self.C * model.slack_scale)],
                    lower=np.zeros(2 * d + s_), upper=np.full(2 * d + s_, np.inf),
                    variables=model.mu_list + model.nu_list + [model.xi[i] for i in range(s_)],
                    row_block=self.split_row_block(model))

    def drop_cuts(self, model, positions):
        self.drop_written_rows(model, positions)

    def read_solution(self, model):
        ws = model.ws
        w, xi, alpha = self.split_solution(model)
        primal = self.regulariser(w) + self.C * model.slack_scale * float(xi.sum())
        dual = float(alpha @ ws.dl_array()) if ws.size else 0.0
        return Solution(w=w, xi=xi, alpha=alpha, objective=primal, dual_objective=dual)


# ----------------------------------------------------------------------------------------------------------------
# Duality: P1's LP dual (KDD 2009, Algorithm 1's master) and its statements, for ``mmprog verify``
# ----------------------------------------------------------------------------------------------------------------

def p1_dual_model(arrays, name="l1m3n_dual"):
    """The LP dual of P1 on a working set (KDD 2009, Algorithm 1's master)::

        max_{α ≥ 0}  Σ_r α_r Δℓ_r
        s.t.         mu_bound[k]:   Σ_r α_r ΔF_rk ≤ ½      (dual to μₖ ≥ 0)
                     nu_bound[k]:  −Σ_r α_r ΔF_rk ≤ ½      (dual to νₖ ≥ 0)   — together −½ ≤ Σ_r α_r ΔF_rk ≤ ½
                     budget[i]:     Σ_{r∈Sᵢ} α_r ≤ C·s     (dual to ξᵢ ≥ 0)

    for every feature k in the support of the cuts (for the others the rows read 0 ≤ ½). The multipliers of
    ``mu_bound``, ``nu_bound`` and ``budget`` are a primal solution μ, ν, ξ.
    """
    m, alpha = base_dual(arrays, name)
    support = support_of(arrays.F)
    m.support = support
    m.K = pyo.Set(initialize=[int(k) for k in support], ordered=True)
    Fc = arrays.F.tocsc()

    def col(k, sign):
        lo, hi = Fc.indptr[k], Fc.indptr[k + 1]
        return LinearExpression(constant=0.0, linear_coefs=[sign * float(c) for c in Fc.data[lo:hi]],
                                linear_vars=[alpha[j] for j in Fc.indices[lo:hi]])
    m.mu_bound = pyo.Constraint(m.K, rule=lambda m, k: col(k, 1.0) <= 0.5)
    m.nu_bound = pyo.Constraint(m.K, rule=lambda m, k: col(k, -1.0) <= 0.5)
    m.objective = pyo.Objective(expr=m.linear, sense=pyo.maximize)
    return m


def p1_value(w, xi, budget):
    """½‖w‖₁ + C·s Σᵢ ξᵢ."""
    return 0.5 * float(np.abs(w).sum()) + budget * float(np.sum(xi))


@duality_for("l1m3n")
class L1M3NDuality(Duality):
    """P1 and its LP dual (KDD 2009, Algorithm 1)."""

    def dual_model(self, result):
        return p1_dual_model(working_set_arrays(result))

    def checks(self, ctx):
        yield from p1_checks(ctx)


def p1_subgradient_checks(ctx):
    """P1′ by the projected sub-gradient (KDD 2009, Algorithm 2) has no master program and no multipliers: only
    the ball constraint can be verified from the numbers."""
    res = ctx.result
    lam = float(res.params["lam"])
    l1 = float(np.abs(res.w).sum())
    yield ctx.check("P1′ feasibility: ‖w‖₁ ≤ λ (the projection onto the ℓ1 ball)", l1, lam, 1e-9 * scale_of(lam), "≤",
                    reason=f"{int(np.count_nonzero(res.w))} non-zero weights")
    yield ctx.skip("strong duality, slackness, cross-solver (P1′)", "the projected sub-gradient method has no "
                   "master program or multipliers; verify P1 with the default algorithm=\"cutting_plane\"")


#: the factored LP is re-solved through Pyomo by a second back end only up to this many rows (writing the Pyomo
#: rows costs ~0.1 ms a row: OCR100's 464,408 rows would take longer than the fit)
FACTORED_CROSS_CHECK_ROWS = 20_000


def p1_factored_checks(ctx):
    """P1 solved as one factored LP (``algorithm="factored"``, :mod:`mmprog.engine.factored_lp`): the statements
    recomputed from the LP's arrays, the solution and HiGHS's row multipliers y (the dual of the factored LP is the
    M³N marginal program: Taskar et al. 2003)."""
    res = ctx.result
    m = res.model
    lp, x = m.factored, m.lp_solution
    w, xi = lp.split(x)
    P = p1_value(w, xi, lp.C)
    scale = scale_of(P)
    yield ctx.check("factored LP: its value at the solution = ½‖w‖₁ + C Σξ (μ, ν split at the optimum)",
                    lp.objective(x), P, 1e-7 * scale)
    yield ctx.check("factored LP feasibility: token, transition, gold and final rows (max violation)",
                    lp.max_row_violation(x), 0.0, 1e-6 * scale, "≤", reason=f"{lp.shape[0]:,} rows")
    yield ctx.check("P1 feasibility: ξᵢ ≥ max_y Δℓᵢ(y) − wᵀΔfᵢ(y) (full objective at w = LP value)",
                    res.upper_bound, P, max(ctx.rtol, 1e-6) * scale, reason="upper bound from loss-augmented Viterbi")
    y = getattr(m, "lp_duals", None)
    stmt = "strong duality: factored LP value = its dual's value at the solver's row multipliers"
    if y is None:
        yield ctx.skip(stmt, f"no row multipliers from {res.solver} through Pyomo")
    else:
        yield ctx.check(stmt, lp.objective(x), lp.dual_objective(y), max(ctx.rtol, 1e-6) * scale)
        yield ctx.check("dual feasibility: reduced costs ≥ 0 on μ, ν, ξ, = 0 on V, A, G; y ≥ 0 on ≥ rows",
                        lp.dual_infeasibility(y), 0.0, 1e-6 * scale_of(lp.cost), "≤")
    stmt = "second solver: the factored LP through Pyomo has the same optimum"
    others = [n for n, r in ctx.cross_solvers(ctx.program.problem_class) if r is None and n != "highs"]
    if lp.shape[0] > FACTORED_CROSS_CHECK_ROWS:
        yield ctx.skip(stmt, f"{lp.shape[0]:,} rows (more than {FACTORED_CROSS_CHECK_ROWS:,}): check a subset "
                             f'of the data, or compare with algorithm="cutting_plane"')
    elif not others:
        yield ctx.skip(stmt, "no usable LP back end besides HiGHS")
    else:
        from ..solvers import get_solver
        prog = ctx.program
        model = prog.build_factored(lp)
        prog.materialise(model)
        get_solver(others[0]).solve(model, time_limit=CROSS_SOLVER_TIME_LIMIT)
        yield ctx.check(stmt, lp.objective(prog.factored_values(model)), P, max(ctx.rtol, 1e-6) * scale,
                        reason=f"solved by {others[0]}")


def p1_checks(ctx):
    res = ctx.result
    if res.params.get("algorithm") == "subgradient" or getattr(res, "model", None) is None:
        yield from p1_subgradient_checks(ctx)
        return
    if res.params.get("algorithm") == "factored":
        yield from p1_factored_checks(ctx)
        return
    arrays = working_set_arrays(res)
    w, xi, alpha = result_numbers(res, arrays)
    P = p1_value(w, xi, arrays.budget)
    g = arrays.F.T @ alpha if len(alpha) else np.zeros_like(w)      # Σ_r α_r ΔF_r
    box = float(max(np.abs(g).max(initial=0.0) - 0.5, 0.0))
    yield from feasibility_checks(ctx, arrays, w, xi, alpha, (" and |Σ α ΔF_k| ≤ ½", box))
    m = res.model
    mu = np.array([v.value or 0.0 for v in m.mu_list])
    nu = np.array([v.value or 0.0 for v in m.nu_list])
    stated = float(pyo.value(objective_of(m)))
    yield ctx.check("master model: Pyomo objective at the loaded point = ½Σ(μ+ν) + C·s·Σξ", stated,
                    0.5 * float((mu + nu).sum()) + arrays.budget * float(xi.sum()), 1e-9 * scale_of(P))
    tol = max(ctx.rtol, 1e-7) * scale_of(P)
    yield ctx.check("strong duality: P1 value ½‖w‖₁ + C·s·Σξ = Σ α Δℓ of the solver's own duals", P,
                    float(alpha @ arrays.dl), tol, reason=f"α from {res.solver}")
    # the sub-gradient conditions of ½‖w‖₁: Σ α ΔF_k ∈ ½ ∂|w_k|
    nz = np.abs(w) > 1e-7 * scale_of(w)
    sg = float(np.abs(g[nz] - 0.5 * np.sign(w[nz])).max(initial=0.0))
    yield ctx.check("stationarity (sub-gradient): Σ α ΔF_k = ½ sign(w_k) where w_k ≠ 0 (max deviation)", sg, 0.0,
                    1e-6 * scale_of(arrays.dl), reason=f"{int(nz.sum())} non-zero weights of {len(w)}")
    yield ctx.check("stationarity (sub-gradient): |Σ α ΔF_k| ≤ ½ for every k", float(np.abs(g).max(initial=0.0)),
                    0.5, 1e-6 * scale_of(arrays.dl), "≤")
    extra = (mu * (0.5 - g), nu * (0.5 + g))
    yield from slackness_checks(ctx, arrays, w, xi, alpha, extra)
    yield sparsity_check(ctx, arrays, w, xi, alpha)
    name, why = ctx.solver_for("LP", need_duals=True)
    stmt = "strong duality: P1 value = optimum of the explicit LP dual"
    if name is None:
        yield ctx.skip(stmt, why)
    elif not len(arrays.dl):
        yield ctx.skip(stmt, "the working set is empty")
    else:
        dm = p1_dual_model(arrays)
        D = solve_value(dm, name)
        yield ctx.check(stmt, P, D, tol, reason=f"dual solved by {name}")
        # the LP dual's own multipliers are a primal solution (μ, ν, ξ): feasible, with the primal optimum
        mu_d = np.zeros_like(w)
        nu_d = np.zeros_like(w)
        K = list(dm.K)
        mu_d[K] = duals_of(dm, [dm.mu_bound[k] for k in K])
        nu_d[K] = duals_of(dm, [dm.nu_bound[k] for k in K])
        xi_d = np.zeros(arrays.n_slacks)
        xi_d[list(dm.SLACKS)] = duals_of(dm, [dm.budget[i] for i in dm.SLACKS])
        w_d = mu_d - nu_d
        yield ctx.check("dual of the dual: multipliers (μ, ν, ξ) of mu_bound, nu_bound, budget give the P1 optimum",
                        0.5 * float((mu_d + nu_d).sum()) + arrays.budget * float(xi_d.sum()), P, tol,
                        reason=f"dual by {name}")
        viol = float(max((arrays.dl - arrays.F @ w_d - xi_d[arrays.slack]).max(initial=0.0),
                         -min(mu_d.min(), nu_d.min(), xi_d.min(initial=0.0)), 0.0))
        yield ctx.check("dual of the dual: those (μ, ν, ξ) are primal feasible (max violation ≤ 0)", viol, 0.0,
                        1e-6 * scale_of(arrays.dl), "≤", reason=f"dual by {name}")
    yield from cross_solver_checks(ctx)
