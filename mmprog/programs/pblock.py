"""pblock — multiple template learning with the p-block-norm regulariser ½(Σⱼ ‖wⱼ‖ᵖ)^{2/p}, p > 1.

Mao & Tsang, "Efficient multi-template learning for structured prediction", section 2. The 1-slack cutting-plane
Algorithm 1 is unchanged; after s rounds its master is (10),

    min_{w, ξ ≥ 0}  ½ (Σⱼ ‖wⱼ‖ᵖ)^{2/p} + C ξ    s.t.  ξ ≥ qʳ + Σⱼ wⱼᵀpⱼʳ,   r = 1..s,

with the notation of :mod:`mmprog.programs.mtl` (pʳ = −ΔF̄_r, qʳ = Δℓ̄_r, Qʲ the per-template Gram matrices). Its
dual, Proposition 1, is (11),

    max_{α ∈ 𝒜}  −½ (Σⱼ (αᵀQʲα)^{p*/2})^{2/p*} + Σᵣ αᵣ qʳ,     p* = p/(p−1),  𝒜 = {Σᵣ αᵣ ≤ C, α ≥ 0},

a smooth concave maximisation over a (capped) simplex. The template weights are (12),
μⱼ = (Σₗ (αᵀQˡα)^{p*/2})^{(p−2)/p} (αᵀQʲα)^{(2−p)/(2(p−1))}, and the primal solution is (13),
wⱼ = −μⱼ Σᵣ αᵣ pⱼʳ = μⱼ Σᵣ αᵣ ΔF̄_{r,j}. The gradient of the dual objective is q − Σⱼ μⱼ Qʲα, i.e. qʳ minus the
margin of cut r at the recovered w: a point α gives a primal point w(α) and the duality gap at α needs no extra work.

p = 2 is the plain structural SVM (μ ≡ 1, (11) is the Gram dual of ``m3n``); p → 1 approaches ``mtl``; p → ∞ the
ℓ∞-block norm (the paper uses p = 100 for it).

Two solvers for (11), on the same Pyomo model:

* ``method="pg"`` (default, as in the paper): projected gradient ascent (FISTA with backtracking and adaptive
  restart) with the Euclidean projection onto the capped simplex (:mod:`mmprog.simplex`), stopped when the duality
  gap between (10) at w(α) and (11) at α is below ``tol`` (relative). Where it stalls above ``tol`` (ill-conditioned
  Gram matrices of real cuts: the dual value stops changing in floating point first), Newton steps on the face it
  found finish the job (:func:`polish_on_face`). Runs on the arrays Qʲ, q; the α found are
  loaded into the Pyomo model.
* ``method="nlp"``: the Pyomo model itself — variables ``alpha``, constraints ``budget[i]``, expressions
  ``sq_norm[j]`` = αᵀQʲα and the objective above — through the chosen NLP solver (Ipopt by default).

The Pyomo model is written completely only on demand (:meth:`PBlock.materialise`, called before exports and
``method="nlp"`` solves), since its m·s²/2 quadratic terms cost Pyomo far more than the projected gradient costs.
"""
from __future__ import annotations

import time

import numpy as np
import pyomo.core as pyo

from .statements import (Check, Duality, rebuild_as, result_numbers, scale_of, cross_solver_checks, duality_for,
                       feasibility_checks, rebuild_master, slackness_checks, sparsity_check, working_set_arrays)
from ..exceptions import MMProgError, ParameterError, SolverError, SolverUnavailable
from ..simplex import capped_simplex_projector
from ..solvers import ProblemClass
from .base import Dims, MasterState, Program, Solution, register
from .mtl import (NegatedRows, TemplateGram, TemplateNormsOfLastSolution, feasible_alpha, template_combination,
                  template_groups)
from .mtl import group_norms, template_grams
from ..solvers import values_of
from ..cuts import WorkingSet


# ----------------------------------------------------------------------------------------------------------------
# The dual (11) on arrays
# ----------------------------------------------------------------------------------------------------------------

#: relative gap accepted when neither the projected gradient nor the Newton steps on its face improve α any more in
#: floating point (see solve_block_dual_pg); ``mmprog verify`` checks pblock's duality gap at the same bound
STAGNATION_GAP = 1e-5


def _pstar(p):
    return p / (p - 1.0)


def block_dual_parts(Q, q, alpha, p):
    """Everything (11) and (12) need at α.

    Parameters
    ----------
    Q : ndarray, shape (m, s, s)
    q : ndarray, shape (s,)
    alpha : ndarray, shape (s,)
    p : float > 1

    Returns
    -------
    dict
        ``value`` (the objective of (11)), ``grad`` (s,), ``mu`` (m,) by (12), ``sq`` (m,) αᵀQʲα,
        ``margins`` (s,) Σⱼ μⱼ (Qʲα)_r = the margin of cut r at w(α).
    """
    ps = _pstar(p)
    a = ps / 2.0
    U = Q @ alpha                                   # (m, s): Qʲα
    sq = np.maximum(U @ alpha, 0.0)                 # αᵀQʲα ≥ 0 (PSD; clip rounding)
    mu = np.zeros(Q.shape[0])
    live = sq > 1e-30 * max(1.0, float(sq.max(initial=0.0)))
    S = float(np.sum(sq[live] ** a))
    if S > 0:
        # (12): μⱼ = S^{(p−2)/p} (αᵀQʲα)^{(2−p)/(2(p−1))}, with (p−2)/p = 2/p* − 1 and (2−p)/(2(p−1)) = p*/2 − 1
        mu[live] = S ** (2.0 / ps - 1.0) * sq[live] ** (a - 1.0)
    margins = mu @ U
    value = float(q @ alpha) - 0.5 * (S ** (2.0 / ps) if S > 0 else 0.0)
    return {"value": value, "grad": q - margins, "mu": mu, "sq": sq, "margins": margins}


def block_primal_value(parts, q, slack_idx, n_budgets, budget, p):
    """(10) at w(α) of (13): ½(Σⱼ‖wⱼ‖ᵖ)^{2/p} + B Σᵢ ξᵢ with ‖wⱼ‖ = μⱼ √(αᵀQʲα) and ξᵢ the largest violation of
    slack i's cuts (≥ 0). Returns (value, ξ (n_budgets,))."""
    norms = parts["mu"] * np.sqrt(parts["sq"])
    reg = 0.5 * float(np.sum(norms ** p)) ** (2.0 / p)
    xi = np.zeros(n_budgets)
    if len(q):
        np.maximum.at(xi, slack_idx, q - parts["margins"])
    return reg + budget * float(xi.sum()), xi


def block_gap(parts, q, alpha, slack_idx, n_budgets, budget):
    """The duality gap (10) at w(α) minus (11) at α, summed from non-negative terms.

    By conjugacy ½(Σⱼ‖wⱼ(α)‖ᵖ)^{2/p} = αᵀmargins − ½(Σⱼ(αᵀQʲα)^{p*/2})^{2/p*}, so the gap is
    Σᵢ [(B − Σ_{r∈Sᵢ} αᵣ) ξᵢ + Σ_{r∈Sᵢ} αᵣ (ξᵢ − (qʳ − marginᵣ))], ξᵢ = max(0, max_{r∈Sᵢ} qʳ − marginᵣ): every term
    is ≥ 0, so small gaps are computed without the cancellation of primal − dual (two numbers of the size of the
    objective). Returns (gap, ξ (n_budgets,))."""
    viol = q - parts["margins"]
    xi = np.zeros(n_budgets)
    if len(q):
        np.maximum.at(xi, slack_idx, viol)
    used = np.bincount(slack_idx, weights=alpha, minlength=n_budgets)
    gap = float(np.maximum(budget - used, 0.0) @ xi) + float(alpha @ (xi[slack_idx] - viol))
    return gap, xi


def block_dual_hessian(Q, parts, p):
    """∇² of ½(Σⱼ sⱼ^{p*/2})^{2/p*}, sⱼ = αᵀQʲα (the negated curvature of (11)), shape (s, s).

    With a = p*/2, g = Σⱼ sⱼ^a, uⱼ = Qʲα and μ of (12):
    Σⱼ μⱼ Qʲ + 2(a − 1) g^{1/a−1} Σⱼ sⱼ^{a−2} uⱼuⱼᵀ + 2(1 − a) g^{1/a−2} v vᵀ, v = Σⱼ sⱼ^{a−1} uⱼ
    (p = 2: Σⱼ Qʲ). Templates with αᵀQʲα = 0 (μⱼ = 0 in :func:`block_dual_parts`) are left out."""
    a = _pstar(p) / 2.0
    mu, sq = parts["mu"], parts["sq"]
    live = mu > 0
    H = np.einsum("j,jrt->rt", mu[live], Q[live])
    if a != 1.0 and live.any():
        U = Q[live] @ parts["alpha"]                                    # (m_live, s)
        sl = sq[live]
        g = float(np.sum(sl ** a))
        H += 2.0 * (a - 1.0) * g ** (1.0 / a - 1.0) * (U.T * sl ** (a - 2.0)) @ U
        v = (sl ** (a - 1.0)) @ U
        H += 2.0 * (1.0 - a) * g ** (1.0 / a - 2.0) * np.outer(v, v)
    return H


def polish_on_face(Q, q, alpha, slack_idx, n_budgets, budget, p, proj, tol, max_steps=50):
    """Newton steps for (11) on the face of 𝒜 the projected gradient found, accepted when the certified gap
    (:func:`block_gap`) falls.

    The projected gradient decides which cuts carry weight but, on the ill-conditioned Gram matrices of real cut
    data, stalls where the dual value no longer changes in floating point while the gap (linear in α's error) is
    still ~1e-3 of the objective. Newton's step on the face — cuts with αᵣ > 0 or at the largest violation of their
    slack, budgets at B held there — comes from the KKT system of the quadratic model and is
    insensitive to that flatness; the projection keeps every iterate in 𝒜. Returns (α, gap, ξ, steps taken)."""
    parts = block_dual_parts(Q, q, alpha, p)
    parts["alpha"] = alpha
    gap, xi = block_gap(parts, q, alpha, slack_idx, n_budgets, budget)
    steps = 0
    for _ in range(max_steps):
        primal_scale = max(1.0, abs(parts["value"]) + gap)
        if gap <= tol * primal_scale:
            break
        viol = q - parts["margins"]
        near = viol >= xi[slack_idx] - 1e-9 * max(1.0, float(np.abs(xi).max()))
        face = np.nonzero((alpha > 0) | near)[0]
        if not len(face):
            break
        used = np.bincount(slack_idx, weights=alpha, minlength=n_budgets)
        # budgets at their bound stay there (Σ d = 0 over the slack's cuts); the others are free, and a step that
        # would overshoot one is cut back by the projection, which puts that budget at its bound for the next step
        tight = np.nonzero(used >= budget * (1.0 - 1e-12))[0]
        H = block_dual_hessian(Q, parts, p)[np.ix_(face, face)]
        A = (slack_idx[face][None, :] == tight[:, None]).astype(np.float64)     # (tight, face)
        k, t = len(face), len(tight)
        K = np.zeros((k + t, k + t))
        K[:k, :k], K[:k, k:], K[k:, :k] = H, A.T, A
        rhs = np.concatenate([viol[face], budget - used[tight]])
        # H is singular when cuts are linearly dependent: the least-squares step is the Newton step on its range
        d = np.zeros_like(alpha)
        d[face] = np.linalg.lstsq(K, rhs, rcond=None)[0][:k]
        step, accepted = 1.0, False
        for _ in range(30):
            trial = proj(alpha + step * d)
            pt = block_dual_parts(Q, q, trial, p)
            pt["alpha"] = trial
            gt, xt = block_gap(pt, q, trial, slack_idx, n_budgets, budget)
            if gt < gap:
                alpha, parts, gap, xi, accepted = trial, pt, gt, xt, True
                break
            step *= 0.5
        if not accepted:
            break
        steps += 1
    return alpha, gap, xi, steps


def solve_block_dual_pg(Q, q, slack_idx, n_budgets, budget, p, alpha0=None, tol=1e-6, max_iter=20000, polish=True,
                        time_limit=None):
    """Maximise (11) over 𝒜 by projected gradient (FISTA with backtracking and adaptive restart).

    Parameters
    ----------
    Q : ndarray, shape (m, s, s)
    q : ndarray, shape (s,)
    slack_idx : ndarray of int, shape (s,)
        Budget of every cut (0..n_budgets−1).
    budget : float
        B of Σ_{r∈Sᵢ} αᵣ ≤ B.
    p : float > 1
    alpha0 : ndarray, shape (s,), optional
        Warm start (projected onto 𝒜).
    tol : float
        Stop when (primal − dual) ≤ tol · max(1, |primal|) (a certified gap: w(α) is primal feasible). When the dual
        value stops improving in floating point first and the Newton steps (``polish``) cannot close the gap either, the
        run counts as converged if the relative gap is below :data:`STAGNATION_GAP`.
    max_iter : int
    polish : bool
        When the projected gradient ends above ``tol``, take Newton steps on the face it found
        (:func:`polish_on_face`).
    time_limit : float, optional
        Seconds; past them the iteration stops with ``info["timed_out"]`` set (and no polish).

    Returns
    -------
    alpha : ndarray, shape (s,)
    info : dict
        ``iterations``, ``gap``, ``primal``, ``dual``, ``converged``, ``stagnated`` (the dual value stopped
        improving in floating point), ``newton_steps`` (when polished).
    """
    s = len(q)
    slack_idx = np.asarray(slack_idx, dtype=np.int64)
    proj = capped_simplex_projector(np.full(n_budgets, float(budget)), slack_idx)

    x = proj(np.zeros(s) if alpha0 is None else np.asarray(alpha0, dtype=np.float64))
    px = block_dual_parts(Q, q, x, p)
    y, py = x.copy(), px
    t = 1.0
    # Lipschitz estimate of the gradient: the largest Gram diagonal times the number of cuts bounds λ_max(Σ μQ) for
    # p = 2; backtracking corrects it either way
    L = max(float(np.max(np.einsum("jrr->jr", Q).sum(axis=0), initial=0.0)), 1e-12) / max(budget, 1e-12)
    info = {"iterations": 0, "gap": np.inf, "primal": np.inf, "dual": px["value"], "converged": False,
            "stagnated": False}
    restarted = 0
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    for it in range(1, max_iter + 1):
        if deadline is not None and time.perf_counter() > deadline:
            info.update(timed_out=True, iterations=it - 1)
            break
        while True:
            z = proj(y + py["grad"] / L)
            pz = block_dual_parts(Q, q, z, p)
            d = z - y
            # sufficient ascent for a concave objective with an L-Lipschitz gradient
            if pz["value"] >= py["value"] + float(py["grad"] @ d) - 0.5 * L * float(d @ d) - 1e-13 * abs(py["value"]):
                break
            L *= 2.0
        if pz["value"] < px["value"]:
            if restarted >= 2:
                # plain gradient steps from x, the last with a freshly lowered L, cannot ascend any more: the dual
                # value is optimal to rounding (α is then accurate to about √eps, and the gap, linear in α's error
                # through ξ, to about 1e-7–1e-5 relative)
                info["stagnated"] = True
                break
            if restarted == 1:
                # backtracking may have left L far too large (steps below rounding): retry with a small L
                L *= 1e-4
            # adaptive restart (O'Donoghue & Candès): momentum made things worse, restart from x
            y, py, t, restarted = x.copy(), px, 1.0, restarted + 1
            continue
        restarted = 0
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        y = z + ((t - 1.0) / t_new) * (z - x)
        x, px, t = z, pz, t_new
        py = block_dual_parts(Q, q, y, p)
        L *= 0.9
        if it % 5 == 0 or it == max_iter:
            primal, _ = block_primal_value(px, q, slack_idx, n_budgets, budget, p)
            gap = primal - px["value"]
            info.update(iterations=it, gap=gap, primal=primal, dual=px["value"])
            if gap <= tol * max(1.0, abs(primal)):
                info["converged"] = True
                break
    else:
        info["iterations"] = max_iter
    if info.get("timed_out"):
        primal, _ = block_primal_value(px, q, slack_idx, n_budgets, budget, p)
        info.update(gap=primal - px["value"], primal=primal, dual=px["value"])
    elif not info["converged"] and polish:
        x, gap, _, steps = polish_on_face(Q, q, x, slack_idx, n_budgets, budget, p, proj, tol)
        px = block_dual_parts(Q, q, x, p)
        primal = px["value"] + gap
        rel = gap / max(1.0, abs(primal))
        info.update(gap=gap, primal=primal, dual=px["value"], newton_steps=steps,
                    converged=bool(rel <= tol or (info.get("stagnated") and rel <= STAGNATION_GAP)))
    elif not info["converged"]:
        primal, _ = block_primal_value(px, q, slack_idx, n_budgets, budget, p)
        rel = (primal - px["value"]) / max(1.0, abs(primal))
        info.update(gap=primal - px["value"], primal=primal, dual=px["value"],
                    converged=bool(rel <= tol or (info.get("stagnated") and rel <= STAGNATION_GAP)))
    return x, info


# ----------------------------------------------------------------------------------------------------------------
# The program
# ----------------------------------------------------------------------------------------------------------------

@register("pblock")
class PBlock(Program, TemplateNormsOfLastSolution):
    """Multiple template learning with the p-block-norm regulariser (Mao & Tsang, section 2, (10)–(13)); see the
    module docstring.

    Parameters
    ----------
    C : float
        Slack weight on the n-slack scale (the paper's C is C·n).
    p : float
        Block norm, 1 < p < ∞ (the paper: 4/3, 2, 4 and 100 for ∞).
    method : {"pg", "nlp"}
        Projected gradient on the arrays of (11) (default) or the Pyomo NLP through the solver.
    tol : float
        Relative duality gap at which the projected gradient stops.
    max_pg_iter : int
        Cap on projected-gradient iterations per master solve.
    """

    problem_class = ProblemClass.NLP
    paper = "Mao & Tsang, Efficient multi-template learning for structured prediction (TNNLS 2013), section 2"
    equations = "(10), (11), (12), (13)"
    params_doc = {"p": "block norm, a float with 1 < p < inf", "method": '"pg" (projected gradient) or "nlp" (Pyomo)',
                  "tol": "relative duality gap of the projected gradient, > 0",
                  "max_pg_iter": "cap on projected-gradient iterations, int >= 1"}
    default_slack = "one"

    def __init__(self, C=1.0, p=2.0, method="pg", tol=1e-6, max_pg_iter=20000):
        super().__init__(C)
        if not (isinstance(p, (int, float, np.floating)) and np.isfinite(p) and p > 1):
            raise ParameterError(f"p must be a finite float > 1 (use e.g. p=100 for the l-infinity block norm); "
                                 f"got {p!r}")
        if method not in ("pg", "nlp"):
            raise ParameterError(f'method must be "pg" (projected gradient) or "nlp" (Pyomo NLP); got {method!r}')
        if not (isinstance(tol, (int, float)) and tol > 0):
            raise ParameterError(f"tol must be a float > 0; got {tol!r}")
        if not (isinstance(max_pg_iter, (int, np.integer)) and max_pg_iter >= 1):
            raise ParameterError(f"max_pg_iter must be an int >= 1; got {max_pg_iter!r}")
        self.p = float(p)
        self.pstar = _pstar(self.p)
        self.method = method
        self.tol = float(tol)
        self.max_pg_iter = int(max_pg_iter)

    def params(self):
        return {"C": self.C, "p": self.p, "method": self.method, "tol": self.tol, "max_pg_iter": self.max_pg_iter}

    def regulariser(self, w):
        """Ω(w) = ½ (Σⱼ ‖wⱼ‖ᵖ)^{2/p}."""
        groups = getattr(self, "_groups", None)
        if groups is None or len(groups) != len(w):
            return 0.5 * float(np.dot(w, w))
        return 0.5 * float(np.sum(self.group_norms(w) ** self.p)) ** (2.0 / self.p)

    # ------------------------------------------------------------------------------------------
    def build(self, dims: Dims):
        groups, names = template_groups(dims)
        self._groups, self._m = groups, len(names)
        m = pyo.ConcreteModel(name=f"pblock_p{self.p:g}")
        m.dims = dims
        m.ws = WorkingSet(dims.dim)
        m.master_state = MasterState()
        m.template_names = names
        m.groups = groups
        m.gram = TemplateGram(groups, len(names))
        m.slack_scale = float(dims.n) / dims.n_slacks
        m.C = pyo.Param(initialize=self.C, mutable=True)
        m.p = self.p
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        m.templates = pyo.RangeSet(0, len(names) - 1)
        m.alpha = pyo.VarList(domain=pyo.NonNegativeReals)
        m.budget = pyo.Constraint(pyo.Any)
        m.linear = pyo.Expression(expr=0.0)
        m.sq_norm = pyo.Expression(m.templates, initialize=0.0)
        m.objective = pyo.Objective(expr=m.linear, sense=pyo.maximize)
        m.alpha_of_slack = {}
        m.master_state.quad_done = 0
        return m

    def reads_labeling_cuts(self, model):
        # (11)–(13) read the cuts through the working set only (per-template Gram rows, ΔFᵀα)
        return True

    def add_cuts(self, model, cuts):
        model.ws.add(cuts)
        added = self.add_alpha_columns(model, cuts)
        model.gram.grow(model.ws)
        return added

    def materialise(self, model):
        """Write the pending terms of αᵀQʲα into ``sq_norm[j]`` and the objective of (11) over the templates with
        Qʲ ≠ 0 (the others contribute 0 and would put 0^{p*/2} into the expression)."""
        ws, gram = model.ws, model.gram
        gram.grow(ws)
        done = model.master_state.quad_done
        alphas = ws.components
        if done < ws.size:
            R = gram.block(np.arange(done, ws.size), np.arange(ws.size))      # (m, new, s): the pending rows
            for j in range(gram.m):
                terms = []
                for pos in range(done, ws.size):
                    a = alphas[pos]
                    row = R[j, pos - done]
                    if row[pos] != 0.0:
                        terms.append(float(row[pos]) * a * a)
                    nz = np.nonzero(row[:pos])[0]
                    terms.extend(2.0 * float(row[t]) * alphas[t] * a for t in nz)
                if terms:
                    model.sq_norm[j].set_value(model.sq_norm[j].expr + pyo.quicksum(terms))
            model.master_state.quad_done = ws.size
        # templates whose terms are written (a cut with Qʲ_rr > 0 among those ever added; the dropped ones' terms
        # stay in the expression with α fixed at 0)
        state = model.master_state
        if state.quad_live is None:
            state.quad_live = np.zeros(gram.m, bool)
        if ws.size:
            state.quad_live |= np.any(np.diagonal(gram.block(gram.held), axis1=1, axis2=2) > 0, axis=1)
        live = [j for j in range(gram.m) if state.quad_live[j]]
        ps = self.pstar
        if live:
            S = pyo.quicksum(model.sq_norm[j] ** (ps / 2.0) for j in live)
            model.objective.set_value(model.linear - 0.5 * S ** (2.0 / ps))
        else:
            model.objective.set_value(model.linear)

    def solve(self, model, solver, **kw):
        if self.method == "pg":
            return self._solve_pg(model, kw.get("time_limit"))
        self.materialise(model)
        # α = 0 makes every αᵀQʲα vanish, where (·)^{p*/2} is not differentiable for p > 2: start inside 𝒜
        ws = model.ws
        budget = self.C * model.slack_scale
        for pos, a in enumerate(ws.components):
            if ws.active[pos] and (a.value is None or a.value <= 0):
                a.set_value(1e-3 * budget / max(1, ws.size))
        status = solver.solve(model, raise_on_failure=False,
                              **{k: v for k, v in kw.items() if k in ("options", "time_limit")})
        if not status.ok:
            from ..exceptions import SolverError
            # for p > 2, (αᵀQʲα)^{p*/2} has an unbounded second derivative where a template's αᵀQʲα → 0, and
            # Ipopt may stop at its "acceptable" tolerance there: kept with a warning; anything else is an error
            if "Acceptable" not in status.solver_message:
                raise SolverError(f"solver {solver.name} ended with {status.termination} ({status.solver_message})",
                                  termination=status.termination, solver_message=status.solver_message)
        return status

    def _solve_pg(self, model, time_limit=None):
        from ..solvers import SolveStatus
        ws, gram = model.ws, model.gram
        gram.grow(ws)
        act = np.nonzero(ws.active_mask())[0]
        ex = ws.example_array()[act]
        slacks, slack_idx = np.unique(ex, return_inverse=True)
        budget = self.C * model.slack_scale
        alpha0 = values_of([ws.components[p] for p in act])
        Q = gram.block(act)
        q = ws.dl_array()[act]
        t0 = time.perf_counter()
        alpha, info = solve_block_dual_pg(Q, q, slack_idx, len(slacks), budget, self.p, alpha0=alpha0,
                                          tol=self.tol, max_iter=self.max_pg_iter, time_limit=time_limit)
        elapsed = time.perf_counter() - t0
        if info.get("timed_out"):
            from ..exceptions import SolverError
            words = (f"projected gradient: time limit of {time_limit:g} s reached after {info['iterations']} "
                     f"iterations, gap {info['gap']:.3e}")
            raise SolverError(f"solver pblock-pg ended with max_time ({words}); raise time_limit",
                              termination="max_time", solver_message=words)
        for p, a in zip(act, alpha):
            ws.components[p].set_value(float(a), skip_validation=True)
        model.pg_info = info
        termination = "optimal" if info["converged"] else "max_iterations"
        if not info["converged"]:
            import warnings
            warnings.warn(f"pblock: projected gradient stopped after {info['iterations']} iterations with relative "
                          f"gap {info['gap'] / max(1.0, abs(info['primal'])):.2e} > tol {self.tol:g}; raise "
                          f"max_pg_iter or tol", RuntimeWarning, stacklevel=2)
        return SolveStatus(termination, "optimal" if info["converged"] else "feasible",
                           f"projected gradient: {info['iterations']} iterations, gap {info['gap']:.3e}", elapsed,
                           info["dual"])

    def drop_cuts(self, model, positions):
        self.drop_alpha_or_rows(model, positions)

    # ------------------------------------------------------------------------------------------
    def read_solution(self, model):
        ws, gram = model.ws, model.gram
        gram.grow(ws)
        n_slacks = model.dims.n_slacks
        budget = self.C * model.slack_scale
        dl = ws.dl_array()
        alpha = feasible_alpha(values_of(ws.components), ws, budget) if ws.size else np.zeros(0)
        parts = None
        if ws.size:
            # (11), (12) on the live cuts (α = 0 elsewhere); the margins of the others are never read (not active)
            held = gram.held
            parts = block_dual_parts(gram.block(held), dl[held], alpha[held], self.p)
            margins = np.zeros(ws.size)
            margins[held] = parts["margins"]
            parts["margins"] = margins
        mu = parts["mu"] if parts is not None else np.zeros(gram.m)
        # the engine's previous w when it is done with it (model.master_state.w_spare): written over instead of allocating
        spare, model.master_state.w_spare = model.master_state.w_spare, None
        w = template_combination(ws, alpha, mu, model.groups, out=spare)           # (13)
        xi = np.zeros(n_slacks)
        if ws.size:
            act = ws.active_mask()
            # the margins wᵀΔF̄_r = Σⱼ μⱼ (Qʲα)_r come with (11)'s gradient
            np.maximum.at(xi, ws.example_array()[act], (dl - parts["margins"])[act])
        # (13): ‖wⱼ‖ = μⱼ √(αᵀQʲα), from the Gram matrices (no pass over w); Ω below reads them
        self._keep_norms(w, mu * np.sqrt(parts["sq"]) if parts is not None else np.zeros(gram.m))
        primal = self.regulariser(w) + budget * float(xi.sum())
        dual = parts["value"] if parts is not None else 0.0
        norms = self.group_norms(w)
        tot = float(mu.sum())
        extra = {"template_weights": mu, "template_weights_normalised": mu / tot if tot > 0 else mu,
                 "template_names": list(model.template_names), "template_norms": norms, "p": self.p,
                 "cut_q": dl, "cut_p": NegatedRows(ws.rows()), "gram": gram.block(gram.held),
                 "gram_positions": gram.held.copy(), "method": self.method,
                 "pg_info": dict(getattr(model, "pg_info", {}) or {})}
        return Solution(w=np.asarray(w, dtype=np.float64), xi=xi, alpha=alpha, objective=primal,
                        dual_objective=dual, extra=extra)


__all__ = ["PBlock", "solve_block_dual_pg", "block_dual_parts", "block_primal_value"]


# ----------------------------------------------------------------------------------------------------------------
# Duality: (10), its dual (11) and the recovery (12)–(13), as statements for ``mmprog verify``
# ----------------------------------------------------------------------------------------------------------------

def block_dual(Q, dl, alpha, p):
    """(11) at α and the recovery (12): returns (value, μ (m,)), recomputed here from the paper's formulas.

    value = Σ α Δℓ − ½ (Σⱼ (αᵀQʲα)^{p*/2})^{2/p*};  μⱼ = (Σₗ (αᵀQˡα)^{p*/2})^{(p−2)/p} (αᵀQʲα)^{(2−p)/(2(p−1))}
    (templates with αᵀQʲα = 0 get μⱼ = 0: their block of w is 0 anyway)."""
    ps = p / (p - 1.0)
    sq = np.maximum(np.einsum("jrs,r,s->j", Q, alpha, alpha), 0.0)
    live = sq > 1e-300
    S = float(np.sum(sq[live] ** (ps / 2.0)))
    mu = np.zeros(len(sq))
    if S > 0:
        mu[live] = S ** ((p - 2.0) / p) * sq[live] ** ((2.0 - p) / (2.0 * (p - 1.0)))
    return float(alpha @ dl) - 0.5 * (S ** (2.0 / ps) if S > 0 else 0.0), mu


@duality_for("pblock")
class PBlockDuality(Duality):
    """p-block MTL: the master is the dual (11) itself (the Pyomo NLP over α); the statements compare it with the
    primal (10) at the w recovered by (12)–(13), all recomputed from ΔF and α."""

    def dual_model(self, result):
        from .base import get_program
        prog = get_program(result.program, **result.params)
        if type(prog).dual_model is not Program.dual_model:       # the program states (10) itself one day
            return prog.dual_model(result.model)
        prog.materialise(result.model)
        return result.model            # the master already is (11)

    def checks(self, ctx):
        yield from pblock_checks(ctx)


def pblock_checks(ctx):
    res = ctx.result
    p = float(res.params["p"])
    model = res.model
    groups = np.asarray(model.groups)
    m_t = int(len(model.template_names))
    arrays = working_set_arrays(res)
    w, xi, alpha = result_numbers(res, arrays)
    Q = template_grams(arrays, groups, m_t)
    D, mu = block_dual(Q, arrays.dl, alpha, p) if len(alpha) else (0.0, np.zeros(m_t))
    norms = group_norms(w, groups, m_t)
    P = 0.5 * float(np.sum(norms ** p)) ** (2.0 / p) + arrays.budget * float(xi.sum())
    # the projected gradient stops at a relative gap tol (or STAGNATION_GAP when it stagnates in floating point)
    tol = max(float(res.params.get("tol", 1e-6)), STAGNATION_GAP) * scale_of(P)
    yield from feasibility_checks(ctx, arrays, w, xi, alpha)
    yield ctx.check(f"strong duality: (10) value ½(Σⱼ‖wⱼ‖ᵖ)^(2/p) + C·s·Σξ = (11) value at α (p = {p:g}, Qʲ "
                    f"recomputed from ΔF)", P, D, tol, reason=f"{m_t} templates, {len(alpha)} cuts")
    mu_res = res.extra.get("template_weights")
    if mu_res is not None:
        yield ctx.check("recovery (12): the program's template weights μⱼ = the formula at α (max deviation)",
                        float(np.abs(np.asarray(mu_res, dtype=np.float64) - mu).max(initial=0.0)), 0.0,
                        1e-6 * scale_of(mu))
    w13 = mu[groups] * (arrays.F.T @ alpha) if len(alpha) else np.zeros_like(w)
    yield ctx.check("recovery (13): w = μⱼ Σ α ΔFⱼ blockwise (‖·‖∞)", float(np.abs(w - w13).max(initial=0.0)), 0.0,
                    1e-6 * scale_of(w))
    # the gradient of (11) is Δℓ_r − w(α)ᵀΔF_r (the module's claim; by finite differences of (11) here)
    if len(alpha) and np.all(alpha[alpha > 0] > 0):
        h = 1e-6 * max(1.0, arrays.budget)
        fd = np.array([(block_dual(Q, arrays.dl, alpha + h * e, p)[0] - block_dual(Q, arrays.dl, alpha - h * e, p)[0])
                       / (2 * h) for e in np.eye(len(alpha))[: min(len(alpha), 40)]])
        grad = (arrays.dl - arrays.F @ w13)[: len(fd)]
        yield ctx.check("gradient of (11): ∂/∂α_r = Δℓ_r − w(α)ᵀΔF_r (central differences, first cuts)",
                        float(np.abs(fd - grad).max(initial=0.0)), 0.0, 1e-4 * scale_of(grad),
                        reason=f"{len(fd)} coordinates")
    yield from slackness_checks(ctx, arrays, w, xi, alpha)
    # the projected gradient stops at a relative gap ≥ 1e-6, which leaves the slacks of cuts with α_r > 0 at ~1e-5
    yield sparsity_check(ctx, arrays, w, xi, alpha, tight=10 * max(float(res.params.get("tol", 1e-6)), 1e-5))
    if abs(p - 2.0) < 1e-12:
        name, why = ctx.solver_for("QP")
        stmt = "p = 2 is the structural SVM: M³N's Gram dual master on the same cuts has the same optimum"
        if name is None:
            yield ctx.skip(stmt, why)
        else:
            try:
                _, sol = rebuild_as(res, "m3n", name, C=res.params["C"], master="dual")
                yield ctx.check(stmt, sol.objective, P, tol, reason=f"solved by {name}")
            except (SolverError, SolverUnavailable, MMProgError) as e:
                yield Check(ctx.name, stmt, P, None, None, None, "fail", str(e))
    other = "nlp" if res.params.get("method", "pg") == "pg" else "pg"
    nlp, why = ctx.solver_for("NLP")
    stmt = f"(11) by method={res.params.get('method', 'pg')} = (11) by method={other} on the same working set"
    if nlp is None:
        yield ctx.skip(stmt, why)
    else:
        try:
            _, sol = rebuild_master(res, nlp, method=other)
            yield ctx.check(stmt, sol.dual_objective, D, tol, reason=f"the Pyomo NLP by {nlp}")
        except (SolverError, SolverUnavailable) as e:
            yield Check(ctx.name, stmt, D, None, None, None, "fail", str(e))
    yield from cross_solver_checks(ctx, method="nlp")
