"""The Laplace M³N (LapM³N) by the variational Algorithm 1 of Zhu, Xing & Zhang (ICML 2008), and the diagonally
rescaled M³N master it shares with the adaptive M³N (:mod:`mmprog.programs.adapm3n`).

Step 1 of Algorithm 1 solves the QP (6) of the ICML 2008 paper for the posterior mean ⟨w⟩ under the current
posterior covariance Σ = diag(σ):

    min_{w, ξ}  ½ wᵀΣ⁻¹w + C Σᵢ ξᵢ
    s.t.        wᵀΔfᵢ(y) ≥ Δℓᵢ(y) − ξᵢ,  ξᵢ ≥ 0,   ∀i, ∀y ∈ Sᵢ                                   (6)

and step 2 updates Σ by (7): σₖ ← √(⟨wₖ²⟩/λ), with ⟨wₖ²⟩ = σₖ + ⟨wₖ⟩² (the second moment of the Gaussian posterior
N(⟨w⟩, Σ)). Algorithm 1 starts from Σ = I, where (6) is P0: one QP solve is exactly the M³N (Theorem 3 of the same
paper). Prediction uses the posterior mean ⟨w⟩. σₖ stays > 0 (σₖ ≥ √(σₖ_old/λ)), so no weight is ever removed:
LapM³N is only pseudo-primal sparse (KDD 2009, section 3.1).

Both masters hold Σ in place, so the model and its cuts are kept between the variational steps:

* ``master="primal"``: variables ``w``, ``xi``; the mutable Param ``inv_sigma[k]`` = 1/σₖ weighs wₖ² in the
  objective; a Σ update is ``set_value`` on those Params.
* ``master="dual"``: the dual (5) of the ICML paper, max Σ_r α_r Δℓ_r − ½ αᵀ(ΔF Σ ΔFᵀ)α s.t. Σ_{r∈Sᵢ} α_r ≤ C,
  α ≥ 0, with w = Σ ΔFᵀα — the M³N Gram dual with the rescaled Gram matrix G_Σ = ΔF Σ ΔFᵀ. With HiGHS it is solved
  from its arrays through one persistent highspy object (columns and budget rows kept; a Σ update replaces the
  Hessian); the Pyomo statement ``quadratic`` is written on demand (:meth:`DiagonalM3N.materialise`) for exports and
  other solvers, as for ``m3n``'s dual master.

:class:`DiagonalM3N` is the shared QP "min ½ wᵀD⁻¹w + C Σ ξ" for a diagonal metric D ≥ 0 (Dₖ = 0 pins wₖ = 0);
the adaptive M³N's QP (5) is the case D = diag(β²)/(2λ).
"""
from __future__ import annotations

import time

import numpy as np
import pyomo.core as pyo
import scipy.sparse as sp
from pyomo.core.expr.numeric_expr import LinearExpression

from .statements import (Check, Duality, base_dual, scale_of, solve_value, support_of, cross_solver_checks, duality_for,
                       feasibility_checks, slackness_checks, sparsity_check, working_set_arrays)
from ..exceptions import MMProgError, ParameterError, check_param
from ..solvers import ProblemClass
from .base import Dims, MasterState, Program, Solution, register
# ``master="auto"``: the primal (readable; HiGHS's active-set QP copes) up to this many joint features, the Gram
# dual above — the same rule as ``m3n``
from .m3n import AUTO_DUAL_DIM as AUTO_PRIMAL_DIM
from ..solvers import values_of
from ..cuts import WorkingSet


def scaled_gram(F, D, rows=None):
    """Rows of the rescaled Gram matrix G_D = ΔF diag(D) ΔFᵀ.

    Parameters
    ----------
    F : scipy.sparse.csr_matrix, shape (r, dim)
        The cut rows ΔF.
    D : ndarray, shape (dim,)
        The diagonal metric.
    rows : list of int, optional
        Which rows of G_D (default all).

    Returns
    -------
    ndarray, shape (len(rows), r)
    """
    idx = np.arange(F.shape[0]) if rows is None else np.asarray(rows, dtype=np.int64)
    if F.nnz > 0.25 * F.shape[0] * F.shape[1]:
        # dense cut rows (real-valued state features): one BLAS product beats sparse-sparse products
        Fd = F.toarray()
        return (Fd[idx] * D) @ Fd.T
    return np.asarray((sp.csr_matrix(F[idx].multiply(D[None, :])) @ F.T).todense())


#: seconds one native HiGHS solve of the Gram dual may take before it counts as failed (a cutting-plane master
#: needing more is pathological; see ``rescale`` of :class:`~mmprog.engine.highs_native.GramDualQP`)
QP_TIME_LIMIT = 600.0


def _scaled_gram_rows(model, rows):
    """Rows of G_D = ΔF diag(D) ΔFᵀ for the model's current metric D (:class:`GramDualQP`)."""
    return scaled_gram(model.ws.dF(), model.metric, rows)


class DiagonalM3N(Program):
    """min ½ wᵀD⁻¹w + C Σᵢ ξᵢ over the working set, D = diag(metric) held in place (see the module docstring).

    Subclasses define :meth:`initial_metric` and, for their primal master, may override the ``_primal_*`` hooks.
    The current metric lives on the model (``model.metric``), so a model can be re-solved, exported or
    materialised by a freshly constructed program.
    """

    problem_class = ProblemClass.QP

    def __init__(self, C=1.0, master="auto"):
        super().__init__(C)
        if master not in ("primal", "dual", "auto"):
            raise ParameterError(f'master must be "primal", "dual" or "auto"; got {master!r}')
        self.master = master

    def resolved_master(self, dims):
        if self.master != "auto":
            return self.master
        return "primal" if dims.dim <= AUTO_PRIMAL_DIM else "dual"

    # --- the metric -----------------------------------------------------------------------------------
    def initial_metric(self, dim):
        return np.ones(dim)

    def regulariser_with(self, w, D):
        """½ Σ_{Dₖ>0} wₖ²/Dₖ (wₖ is 0 wherever Dₖ = 0)."""
        w = np.asarray(w, dtype=np.float64)
        on = D > 0
        v = w[on]
        # a dot product, as m3n's ½ wᵀw: with Σ = I (Theorem 3's first step) the two objectives are then the same
        # floating-point operations, not merely equal up to summation order
        return 0.5 * float(v @ (v / D[on]))

    def regulariser(self, w):
        D = getattr(self, "_metric", None)
        return self.regulariser_with(w, np.ones(len(w)) if D is None else D)

    def set_metric(self, model, D):
        """Put a new diagonal metric into the model in place (Params, or the dual's Hessian): no rebuild."""
        D = np.asarray(D, dtype=np.float64).copy()
        if D.shape != (model.dims.dim,) or np.any(D < 0) or not np.all(np.isfinite(D)):
            raise ParameterError(f"the metric must be {model.dims.dim} finite numbers >= 0; got shape {D.shape}")
        model.metric = D
        self._metric = D
        if model.master == "primal":
            self._primal_set_metric(model, D)
        else:
            # the Gram matrix of every cut changes: the native HiGHS object re-takes its Hessian, the Pyomo
            # statement is re-written on the next materialise
            model.master_state.gram_stale = True
            model.master_state.quad_done = 0

    # --- building -------------------------------------------------------------------------------------
    def build(self, dims: Dims):
        m = pyo.ConcreteModel(name=f"{self.name}_{self.resolved_master(dims)}")
        m.dims = dims
        m.ws = WorkingSet(dims.dim)
        m.master_state = MasterState()
        m.master = self.resolved_master(dims)
        m.slack_scale = float(dims.n) / dims.n_slacks
        m.C = pyo.Param(initialize=self.C, mutable=True)
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        D = getattr(self, "_metric", None)
        m.metric = self.initial_metric(dims.dim) if D is None or len(D) != dims.dim else np.array(D, dtype=float)
        self._metric = m.metric
        if m.master == "primal":
            m.xi = pyo.Var(range(dims.n_slacks), domain=pyo.NonNegativeReals, initialize=0.0)
            m.cuts = pyo.ConstraintList()
            self._primal_build(m, dims)
        else:
            m.alpha = pyo.VarList(domain=pyo.NonNegativeReals)
            m.budget = pyo.Constraint(pyo.Any)
            m.linear = pyo.Expression(expr=0.0)
            m.quadratic = pyo.Expression(expr=0.0)
            m.objective = pyo.Objective(expr=m.linear - m.quadratic, sense=pyo.maximize)
            m.alpha_of_slack = {}
            m.master_state.quad_done = 0
        return m

    def _xi_sum(self, m):
        return m.C * m.slack_scale * pyo.quicksum(m.xi[i] for i in range(m.dims.n_slacks))

    # primal in w: objective ½ Σ inv_sigma[k] wₖ², cuts wᵀΔF_r + ξ ≥ Δℓ_r
    def _primal_build(self, m, dims):
        m.w = pyo.Var(range(dims.dim), initialize=0.0)
        m.w_list = [m.w[k] for k in range(dims.dim)]
        m.inv_sigma = pyo.Param(range(dims.dim), mutable=True, initialize=0.0)
        self._primal_set_metric(m, m.metric)
        m.objective = pyo.Objective(
            expr=0.5 * pyo.quicksum(m.inv_sigma[k] * m.w[k] * m.w[k] for k in range(dims.dim)) + self._xi_sum(m),
            sense=pyo.minimize)

    def _primal_set_metric(self, m, D):
        for k, d in enumerate(D):
            m.inv_sigma[k].set_value(1.0 / d if d > 0 else 0.0)
            # Dₖ = 0: the prior has no mass off wₖ = 0
            if d > 0:
                m.w[k].unfix()
            else:
                m.w[k].fix(0.0)

    def _primal_cut(self, m, ks, cs, xi):
        return LinearExpression(constant=0.0, linear_coefs=list(cs) + [1.0],
                                linear_vars=[m.w_list[k] for k in ks] + [xi])

    def _primal_w(self, m):
        return values_of(m.w_list)

    def add_cuts(self, model, cuts):
        model.ws.add(cuts)
        m = model
        if m.master == "primal":
            return self.add_cut_rows(m, cuts, body=lambda ks, cs, xi: self._primal_cut(m, ks, cs, xi))
        return self.add_alpha_columns(m, cuts)

    def drop_cuts(self, model, positions):
        self.drop_alpha_or_rows(model, positions)

    def materialise(self, model):
        """Write ½αᵀG_Dα of the dual master into ``model.quadratic`` for the current metric (on demand: before
        exports, inspection and solves through Pyomo's interfaces)."""
        m = model
        if getattr(m, "master", None) != "dual":
            return
        ws = m.ws
        done = m.master_state.quad_done
        if done == 0:
            m.quadratic.set_value(0.0)
        new = list(range(done, ws.size))
        if not new:
            return
        G_new = scaled_gram(ws.dF(), m.metric, new)
        alpha = ws.components
        terms = []
        for r, pos in enumerate(new):
            a = alpha[pos]
            row = G_new[r]
            terms.append(0.5 * float(row[pos]) * a * a)
            nz = np.nonzero(row[:pos])[0]
            terms.extend(float(row[q]) * alpha[q] * a for q in nz)
        m.quadratic.set_value(m.quadratic.expr + pyo.quicksum(terms))
        m.master_state.quad_done = ws.size

    def master_form(self, model):
        """The dual master is ``"gram_dual"`` with G_D = ΔF diag(D) ΔFᵀ: with HiGHS, one persistent highspy object
        built from the same arrays, the objective rescaled when G_D's diagonal is small and a per-solve time guard
        (:meth:`gram_dual_options`); anything else through Pyomo."""
        self._metric = model.metric
        return "gram_dual" if model.master == "dual" else None

    #: the metric-scaled masters take the native HiGHS route only (DAQP's was measured on P0's masters; any other
    #: solver reads the Pyomo model), whatever ``model.native`` says
    native_solvers = ("highs",)

    def native_ok(self, model, solver):
        return solver.name in self.native_solvers

    def gram_rows(self, model, rows):
        """Rows of G_D = ΔF diag(D) ΔFᵀ for the model's current metric D."""
        return _scaled_gram_rows(model, rows)

    def gram_dual_options(self):
        return {"rescale": True, "time_limit": QP_TIME_LIMIT}

    def solve(self, model, solver, **kw):
        self._metric = model.metric
        return super().solve(model, solver, **kw)

    # --- reading back -----------------------------------------------------------------------------------
    def read_solution(self, model):
        ws = model.ws
        D = model.metric
        self._metric = D
        n_slacks = model.dims.n_slacks
        if model.master == "primal":
            w = self._primal_w(model)
            alpha = ws.duals(model)
            xi = values_of([model.xi[i] for i in range(n_slacks)])
        else:
            alpha = np.maximum(values_of(ws.components), 0.0) if ws.size else np.zeros(0)
            eta = ws.tdot(alpha) if ws.size else np.zeros(model.dims.dim)
            w = D * eta
            xi = np.zeros(n_slacks)
            if ws.size:
                act = ws.active_mask()
                margins = ws.dot(w)
                np.maximum.at(xi, ws.example_array()[act], (ws.dl_array() - margins)[act])
        w = np.asarray(w, dtype=np.float64)
        eta = ws.tdot(alpha) if ws.size else np.zeros(model.dims.dim)
        primal = self.regulariser_with(w, D) + self.C * model.slack_scale * float(xi.sum())
        # dual value of the working set: Σ α_r Δℓ_r − ½ ηᵀDη with η = ΔFᵀα
        dual = float(alpha @ ws.dl_array()) - 0.5 * float(eta @ (D * eta)) if ws.size else 0.0
        return Solution(w=w, xi=xi, alpha=alpha, objective=primal, dual_objective=dual,
                        extra=self._extra(model, w))

    def _extra(self, model, w):
        return {"master": model.master}


def inner_run_settings(kw, deadline):
    """Engine settings for one inner cutting-plane run, with what is left of the wall-clock budget."""
    out = dict(kw)
    out.pop("model", None)
    out.pop("w0", None)
    if deadline is not None:
        out["time_limit"] = max(1e-3, deadline - time.perf_counter())
    return out


@register("lapm3n")
class LapM3N(DiagonalM3N):
    """The Laplace M³N by variational Algorithm 1 (ICML 2008); see the module docstring.

    Parameters
    ----------
    C : float
        Slack weight of the QP (6), n-slack scale.
    lam : float
        λ > 0 of the Laplace prior p₀(w) ∝ exp(−√λ ‖w‖₁); larger λ shrinks more.
    n_iter : int
        Number of QP (6) solves (Algorithm 1's T − 1 steps); ``n_iter=1`` is M³N (Σ = I).
    master : {"auto", "primal", "dual"}
    """

    checkpointable = False   # the outer loop's state (β, Σ, q(z)) is not in the working set

    paper = "Zhu, Xing & Zhang, ICML 2008 (Laplace M³N)"
    equations = "(6), (7), Algorithm 1; Theorem 3"
    params_doc = {"lam": "λ > 0 of the Laplace prior", "n_iter": "QP solves, int >= 1 (1 = M³N)",
                  "master": '"auto", "primal" or "dual"'}

    def __init__(self, C=1.0, lam=1.0, n_iter=3, master="auto"):
        super().__init__(C, master)
        check_param("lam", lam, isinstance(lam, (int, float, np.number)) and not isinstance(lam, bool)
                    and np.isfinite(lam) and lam > 0, "a finite float > 0")
        check_param("n_iter", n_iter, isinstance(n_iter, (int, np.integer)) and not isinstance(n_iter, bool)
                    and n_iter >= 1, "an int >= 1")
        self.lam = float(lam)
        self.n_iter = int(n_iter)

    def params(self):
        return {"C": self.C, "lam": self.lam, "n_iter": self.n_iter, "master": self.master}

    def _extra(self, model, w):
        return {"master": model.master, "sigma": model.metric.copy()}

    def update_sigma(self, sigma, w):
        """(7): σₖ ← √(⟨wₖ²⟩/λ) with ⟨wₖ²⟩ = σₖ + ⟨wₖ⟩² (posterior variance plus squared mean)."""
        return np.sqrt((sigma + np.asarray(w) ** 2) / self.lam)

    def fit(self, oracle, engine, **engine_kw):
        """Algorithm 1: ``n_iter`` QP (6) solves by the cutting-plane engine on one kept model, Σ updated by (7)
        in between. Returns the last engine run with the posterior mean as ``solution.w`` and, in
        ``solution.extra``: ``sigma`` (posterior variances of the last step), ``sigma_history`` (n_iter, dim),
        ``variational_history`` (one dict per step)."""
        t_start = time.perf_counter()
        time_limit = engine_kw.get("time_limit")
        deadline = None if time_limit is None else t_start + time_limit
        dim = oracle.fmap.dim
        self._metric = np.ones(dim)
        sigma = self._metric.copy()
        model, w = None, None
        history, steps, sigmas = [], [], []
        er = None
        termination = "converged"
        timings = {"oracle": 0.0, "pyomo": 0.0, "solver": 0.0}
        for t in range(1, self.n_iter + 1):
            if model is not None:
                self.set_metric(model, sigma)
            sigmas.append(sigma.copy())
            er = engine.cutting_plane(self, oracle, model=model, w0=w, **inner_run_settings(engine_kw, deadline))
            model, w = er.model, er.solution.w
            history.extend(er.history)
            for k in timings:
                timings[k] += er.timings.get(k, 0.0)
            steps.append({"step": t, "objective": er.solution.objective, "upper_bound": er.upper_bound,
                          "termination": er.termination, "n_iter": er.n_iter, "n_cuts": model.ws.size,
                          "elapsed": time.perf_counter() - t_start})
            if er.termination in ("time_limit", "interrupted"):
                termination = er.termination
                break
            if t < self.n_iter:
                sigma = self.update_sigma(sigma, w)
        sol = er.solution
        if termination == "converged":
            termination = er.termination       # the last step's QP (6): "converged" only when its gap holds
        sol.extra.update(certifies="the last variational step's QP (6) at its Σ (ICML 2008, Algorithm 1); the "
                                   "variational loop has no lower bound on the LapM³N objective itself",
                         sigma=model.metric.copy(), sigma_history=np.array(sigmas),
                         variational_history=steps, inner_terminations=[s["termination"] for s in steps])
        timings["total"] = time.perf_counter() - t_start
        er.history = history
        er.timings = timings
        er.termination = termination
        er.n_iter = sum(s["n_iter"] for s in steps)
        return er


# ----------------------------------------------------------------------------------------------------------------
# Duality: The dual of a diagonally rescaled M³N master (QP (6) here, QP (5) of the adaptive M³N) and LapM³N's statements with Theorem 3 (ICML 2008), for ``mmprog verify``
# ----------------------------------------------------------------------------------------------------------------

def metric_dual_model(arrays, D, name="diag_m3n_dual"):
    """The dual of min ½ wᵀD⁻¹w + C·s Σᵢ ξᵢ over the working set, D = diag(``D``) ≥ 0 (the LapM³N QP (6) with
    D = Σ, the adaptive M³N's QP (5) with D = β²/(2λ); D = 1 is P0)::

        max_{α ≥ 0, w}  linear − quadratic,   quadratic = ½ Σₖ wₖ²/Dₖ
        s.t.            stationarity[k]:  wₖ − Dₖ Σ_r α_r ΔF_rk = 0      (k touched by a cut, Dₖ > 0)
                        budget[i]:        Σ_{r∈Sᵢ} α_r ≤ C·s

    ½ Σ wₖ²/Dₖ = ½ ηᵀDη with η = Σ α ΔF, so this is max Σ α Δℓ − ½ αᵀ(ΔF D ΔFᵀ)α; ``w`` is the posterior mean
    D Σ α Δf. Features with Dₖ = 0 are pinned to wₖ = 0 and left out."""
    m, alpha = base_dual(arrays, name)
    D = np.asarray(D, dtype=np.float64)
    support = np.array([k for k in support_of(arrays.F) if D[k] > 0], dtype=np.int64)
    m.support = support
    m.metric = D
    m.K = pyo.Set(initialize=[int(k) for k in support], ordered=True)
    m.w = pyo.Var(m.K, initialize=0.0)
    Fc = arrays.F.tocsc()

    def stat(m, k):
        lo, hi = Fc.indptr[k], Fc.indptr[k + 1]
        return LinearExpression(constant=0.0, linear_coefs=[1.0] + [-float(D[k] * c) for c in Fc.data[lo:hi]],
                                linear_vars=[m.w[k]] + [alpha[j] for j in Fc.indices[lo:hi]]) == 0.0
    m.stationarity = pyo.Constraint(m.K, rule=stat)
    m.quadratic = pyo.Expression(expr=pyo.quicksum((0.5 / float(D[k])) * m.w[k] * m.w[k] for k in m.K))
    m.objective = pyo.Objective(expr=m.linear - m.quadratic, sense=pyo.maximize)
    return m


def metric_value(w, xi, budget, D):
    """½ Σ_{Dₖ>0} wₖ²/Dₖ + C·s Σ ξ."""
    on = D > 0
    return 0.5 * float(np.sum(w[on] ** 2 / D[on])) + budget * float(np.sum(xi))


def metric_dual_value(arrays, alpha, D):
    eta = arrays.F.T @ alpha
    return float(alpha @ arrays.dl) - 0.5 * float(eta @ (D * eta))


def metric_checks(ctx, label):
    """The statements of the last QP of a diagonally rescaled master (D = ``model.metric``), read back from the
    master itself (the program may post-process ``result.w``, e.g. zero removed features)."""
    res = ctx.result
    D = np.asarray(res.model.metric, dtype=np.float64)
    arrays = working_set_arrays(res)
    sol = ctx.program.read_solution(res.model)
    w, xi = np.asarray(sol.w, dtype=np.float64), np.asarray(sol.xi, dtype=np.float64)
    alpha = np.asarray(sol.alpha, dtype=np.float64)[arrays.positions] if len(arrays.positions) else np.zeros(0)
    P = metric_value(w, xi, arrays.budget, D)
    tol = max(ctx.rtol, 1e-5) * scale_of(P)
    yield from feasibility_checks(ctx, arrays, w, xi, alpha)
    yield ctx.check(f"strong duality: {label} value ½wᵀD⁻¹w + C·s·Σξ = Σ α Δℓ − ½ ηᵀDη (η = Σ α ΔF) of the "
                    f"master's multipliers", P, metric_dual_value(arrays, alpha, D), tol,
                    reason=f"α from {res.solver}, D = model.metric in [{D.min():.3g}, {D.max():.3g}]")
    eta = arrays.F.T @ alpha if len(alpha) else np.zeros_like(w)
    yield ctx.check("stationarity: w = D Σ_r α_r ΔF_r (posterior mean; ‖·‖∞)", float(np.abs(w - D * eta).max(
        initial=0.0)), 0.0, 1e-5 * scale_of(w, D * eta))
    yield from slackness_checks(ctx, arrays, w, xi, alpha)
    yield sparsity_check(ctx, arrays, w, xi, alpha)
    name, why = ctx.solver_for("QP", need_duals=True)
    stmt = f"strong duality: {label} value = optimum of the explicit dual model"
    if name is None or not len(arrays.dl):
        yield ctx.skip(stmt, why or "the working set is empty")
    else:
        dm = metric_dual_model(arrays, D, name=f"{ctx.name}_dual")
        yield ctx.check(stmt, P, solve_value(dm, name), tol, reason=f"dual solved by {name}")
        w_d = np.zeros_like(w)
        w_d[dm.support] = [pyo.value(dm.w[int(k)]) for k in dm.support]
        yield ctx.check("the explicit dual's w = D Σ α ΔF equals the master's w (‖·‖∞)",
                        float(np.abs(w_d - w).max(initial=0.0)), 0.0, 1e-4 * scale_of(w), reason=f"dual by {name}")
    yield from cross_solver_checks(ctx)


def value_bracket(res):
    """[lower, upper] of a cutting-plane result: the master optimum and the best full objective seen."""
    lo = float(res.primal_objective)
    up = float(getattr(res, "upper_bound", lo))
    return lo, (up if np.isfinite(up) else lo)


@duality_for("lapm3n")
class LapM3NDuality(Duality):
    """LapM³N (ICML 2008): the last QP (6) with its dual (5), and Theorem 3 (Σ = I is M³N)."""

    def dual_model(self, result):
        return metric_dual_model(working_set_arrays(result), result.model.metric, name="lapm3n_dual")

    def checks(self, ctx):
        yield from metric_checks(ctx, "QP (6)")
        yield from lapm3n_theorem3(ctx)


def lapm3n_theorem3(ctx):
    """Theorem 3 (ICML 2008) through Algorithm 1: its first QP (6) has Σ = I, i.e. it is P0, so its optimum
    must equal M³N's on the same data. Both are cutting-plane optima, each certified by its bracket [lower, upper];
    the statement is that the two brackets overlap."""
    stmt = "Theorem 3 (ICML 2008): LapM³N's first step (Σ = I) and M³N have the same optimum (brackets overlap)"
    hist = ctx.result.extra.get("variational_history")
    if ctx.dataset is None or not hist:
        yield ctx.skip(stmt, "needs the training data and the variational history")
        return
    res = ctx.result
    try:
        m = ctx.fit(ctx.dataset, program="m3n", C=res.params["C"], slack=res.slack, eps=1e-4)
    except MMProgError as e:
        yield Check(ctx.name, stmt, None, None, None, None, "fail", f"m3n: {e}")
        return
    first = hist[0]
    lo = max(first["objective"], m.primal_objective)
    up = min(first.get("upper_bound", first["objective"]), value_bracket(m)[1])
    yield ctx.check(stmt, lo, up, 1e-6 * scale_of(up), "≤",
                    reason=f"step 1 in [{first['objective']:.8g}, {first.get('upper_bound', np.nan):.8g}], M³N in "
                           f"[{m.primal_objective:.8g}, {value_bracket(m)[1]:.8g}]")
