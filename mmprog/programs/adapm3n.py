"""P2 — the adaptive M³N (AdapM³N) by the EM-style Algorithm 3 of Zhu, Xing & Zhang (KDD 2009).

P2 is min_{w, τ, ξ} wᵀΣ⁻¹w + C Σᵢ ξᵢ over the M³N constraints with Σ = diag(τ), (1/K) Σₖ τₖ = 1/λ, τ ≥ 0.
Theorem 2: it yields the ℓ1-M³N estimate — its optimum is that of P4, min (λ/K)(Σₖ|wₖ|)² + C Σᵢ ξᵢ
(:mod:`mmprog.programs.p4`). With γₖ = wₖ/√(λτₖ), βₖ = √(λτₖ) (so w = β ∘ γ) Algorithm 3 alternates

(a) the QP (5) for (γ, ξ) at fixed β, solved by the cutting-plane engine:

        min_{γ, ξ}  λ γᵀγ + C Σᵢ ξᵢ
        s.t.        γᵀ diag(β) Δfᵢ(y) ≥ Δℓᵢ(y) − ξᵢ,  ξᵢ ≥ 0,   ∀i, ∀y ∈ Sᵢ                         (5)

(b) the closed-form update (6), βₖ = √K |γₖ| / ‖γ‖₂,

starting from βₖ = √λ (τₖ = 1). A βₖ below ``threshold`` (1e-4, as in the paper's experiments) is set to 0:
feature k is removed from the program (γₖ fixed at 0) and its weight is exactly 0. K is the number of joint
features.

(6) is the stationarity condition of P3 iterated as a map, and it can settle into a 2-cycle: on a 12-sequence
instance β kept alternating between two vectors (max change 0.39 per round after 300 rounds) with the objective
stuck 0.24 % above P4's optimum. ``update="eq4"`` takes instead the τ-step (4) of the same paper,
τₖ = K|wₖ|/(λΣⱼ|wⱼ|), in β = √(λτ): βₖ = √(K|wₖ|/Σⱼ|wⱼ|) with w = β ∘ γ — an exact minimisation over τ at fixed
w, so P2's objective never increases; the fixed points are the same, and eq4 reaches P4's optimum (the Theorem 2
test). ``update="eq6"`` (the default) is Algorithm 3 as printed.

The master is built once and kept for all EM rounds, with its cuts: a labeling's constraint is the same
constraint under every β, only its coefficients Δfᵢ(y) ∘ β change. In the primal master the cut coefficients are
``ΔF_rk · beta[k]`` with ``beta`` a mutable Pyomo Param, so a β update is ``set_value`` on K Params; in the dual
master (the Gram dual of (5), max Σ α_r Δℓ_r − (1/4λ) αᵀ(ΔF diag(β²) ΔFᵀ)α, i.e. :class:`DiagonalM3N` with the metric
D = diag(β²)/(2λ)) the rescaled Gram matrix replaces the Hessian in place. The cuts found in earlier rounds warm
start the next; the engine only adds the ones the new β makes violated.
"""
from __future__ import annotations

import time

import numpy as np
import pyomo.core as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from .statements import Check, Duality, scale_of, duality_for, working_set_arrays
from ..exceptions import MMProgError, check_param
from .base import register
from .lapm3n import DiagonalM3N, value_bracket, inner_run_settings, metric_checks, metric_dual_model
from ..solvers import values_of

UPDATES = ("eq6", "eq4")


def _positive(name, value):
    check_param(name, value, isinstance(value, (int, float, np.number)) and not isinstance(value, bool)
                and np.isfinite(value) and value > 0, "a finite float > 0")
    return float(value)


@register("adapm3n")
class AdapM3N(DiagonalM3N):
    """The adaptive M³N P2 by EM (KDD 2009, Algorithm 3); see the module docstring.

    Parameters
    ----------
    C : float
        Slack weight (n-slack scale), kept fixed while λ is tuned (as in the paper).
    lam : float
        λ > 0: (1/K) Σₖ τₖ = 1/λ; the P4 regulariser is (λ/K)‖w‖₁².
    n_em : int
        EM rounds (QP (5) solves), default 15 as in the paper's experiments.
    beta_tol : float
        Stop early when max_k |β_new − β_old| ≤ beta_tol.
    threshold : float
        βₖ below it is set to 0 and feature k removed.
    update : {"eq6", "eq4"}
        The β step: (6) as printed in Algorithm 3 (default), or the monotone τ-step (4) (see the module docstring).
    master : {"auto", "primal", "dual"}
        "auto": the primal (γ-space, β as Params) for at most 100 joint features, else the Gram dual.
    """

    checkpointable = False   # the outer loop's state (β, Σ, q(z)) is not in the working set

    paper = "Zhu, Xing & Zhang, KDD 2009"
    equations = "P2, P3, (5), (6), Algorithm 3; Theorem 2"
    params_doc = {"lam": "λ > 0", "n_em": "EM rounds, int >= 1", "beta_tol": "float >= 0",
                  "threshold": "float >= 0 (β below it is set to 0)",
                  "update": '"eq6" (Algorithm 3 as printed) or "eq4" (τ-step of P2, monotone)',
                  "master": '"auto", "primal" or "dual"'}

    def __init__(self, C=1.0, lam=1.0, n_em=15, beta_tol=1e-4, threshold=1e-4, update="eq6", master="auto"):
        super().__init__(C, master)
        check_param("update", update, update in UPDATES, '"eq6" (Algorithm 3 as printed) or "eq4" (monotone)')
        self.update = update
        self.lam = _positive("lam", lam)
        check_param("n_em", n_em, isinstance(n_em, (int, np.integer)) and not isinstance(n_em, bool) and n_em >= 1,
                    "an int >= 1")
        for name, v in (("beta_tol", beta_tol), ("threshold", threshold)):
            check_param(name, v, isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
                        and np.isfinite(v) and v >= 0, "a finite float >= 0")
        self.n_em = int(n_em)
        self.beta_tol = float(beta_tol)
        self.threshold = float(threshold)

    def params(self):
        return {"C": self.C, "lam": self.lam, "n_em": self.n_em, "beta_tol": self.beta_tol,
                "threshold": self.threshold, "update": self.update, "master": self.master}

    # --- β ↔ the metric of DiagonalM3N: D = β²/(2λ), so ½ wᵀD⁻¹w = λ Σ wₖ²/βₖ² = λ γᵀγ ---------------------------
    def metric_of(self, beta):
        return np.asarray(beta, dtype=np.float64) ** 2 / (2.0 * self.lam)

    def beta_of(self, D):
        return np.sqrt(2.0 * self.lam * np.asarray(D, dtype=np.float64))

    def initial_metric(self, dim):
        return self.metric_of(np.full(dim, np.sqrt(self.lam)))

    def set_beta(self, model, beta):
        """Rescale the kept master to a new β (K Param values, or the dual's Hessian) — nothing is rebuilt."""
        self.set_metric(model, self.metric_of(beta))

    def update_beta(self, gamma, beta):
        """The β step, then βₖ < threshold → 0. Returns β (K,), or None when γ = 0 (no direction to follow).

        ``update="eq6"``: (6) βₖ = √K |γₖ| / ‖γ‖₂, Algorithm 3 as printed — the stationarity condition of P3 used
        as a fixed-point map. ``update="eq4"``: the τ-step (4) of P2's EM, τₖ = K|wₖ|/(λ Σⱼ|wⱼ|), in β = √(λτ):
        βₖ = √(K |wₖ| / Σⱼ |wⱼ|) with w = β ∘ γ — an exact minimisation over τ at fixed w, so the P2 objective
        never increases. Both have the same fixed points (β ∝ |γ| ⇔ β² ∝ |w|); eq4 is eq6's step halved in log
        space (βₖ² ∝ βₖ|γₖ|), which is what keeps it from the 2-cycles eq6 can fall into."""
        gamma = np.asarray(gamma, dtype=np.float64)
        if self.update == "eq6":
            norm = float(np.linalg.norm(gamma))
            if norm == 0.0:
                return None
            new = np.sqrt(len(gamma)) * np.abs(gamma) / norm
        else:
            aw = np.abs(np.asarray(beta, dtype=np.float64) * gamma)
            total = float(aw.sum())
            if total == 0.0:
                return None
            new = np.sqrt(len(gamma) * aw / total)
        new[new < self.threshold] = 0.0
        return new

    # --- the primal master in γ-space: λ Σ γₖ² + C Σ ξ, cuts Σₖ (ΔF_rk·beta[k]) γₖ + ξ ≥ Δℓ_r ---------------
    def _primal_build(self, m, dims):
        m.gamma = pyo.Var(range(dims.dim), initialize=0.0)
        m.gamma_list = [m.gamma[k] for k in range(dims.dim)]
        m.beta = pyo.Param(range(dims.dim), mutable=True, initialize=0.0)
        self._primal_set_metric(m, m.metric)
        m.objective = pyo.Objective(
            expr=self.lam * pyo.quicksum(g * g for g in m.gamma_list) + self._xi_sum(m), sense=pyo.minimize)

    def _primal_set_metric(self, m, D):
        for k, b in enumerate(self.beta_of(D)):
            m.beta[k].set_value(float(b))
            if b > 0:
                m.gamma[k].unfix()
            else:
                m.gamma[k].fix(0.0)       # removed feature: exactly zero weight

    def _primal_cut(self, m, ks, cs, xi):
        return LinearExpression(constant=0.0, linear_coefs=[float(c) * m.beta[int(k)] for k, c in zip(ks, cs)]
                                + [1.0], linear_vars=[m.gamma_list[k] for k in ks] + [xi])

    def _primal_w(self, m):
        return self.beta_of(m.metric) * values_of(m.gamma_list)

    def _extra(self, model, w):
        beta = self.beta_of(model.metric)
        gamma = np.divide(w, beta, out=np.zeros_like(w), where=beta > 0)
        return {"master": model.master, "beta": beta, "gamma": gamma}

    # --- Algorithm 3 --------------------------------------------------------------------------------------
    def fit(self, oracle, engine, **engine_kw):
        """EM: ``n_em`` rounds of (a) the QP (5) by the cutting-plane engine on one kept master and (b) the
        update (6), stopping early when β moves by at most ``beta_tol``.

        Returns the last engine run; ``solution.w`` = β ∘ γ of the last QP with the weights of features removed
        by the last update set to 0, and ``solution.extra`` holds ``beta`` (final), ``gamma``, ``beta_history``
        (rounds + 1, K: the starting √λ, then every update), ``em_history`` (one dict per round),
        ``removed`` (how many βₖ = 0), ``p3_objective`` = λ‖γ‖² + C Σᵢ Hᵢ(w) and ``p4_objective`` =
        (λ/K)‖w‖₁² + C Σᵢ Hᵢ(w) at the returned w (equal at a fixed point; Theorem 2 says both reach P4's
        optimum)."""
        t_start = time.perf_counter()
        time_limit = engine_kw.get("time_limit")
        deadline = None if time_limit is None else t_start + time_limit
        dim = oracle.fmap.dim
        beta = np.full(dim, np.sqrt(self.lam))
        self._metric = self.metric_of(beta)
        model, w = None, None
        history, rounds, betas = [], [], [beta.copy()]
        timings = {"oracle": 0.0, "pyomo": 0.0, "solver": 0.0}
        termination = "max_iter"
        er = None
        for t in range(1, self.n_em + 1):
            if model is not None:
                self.set_beta(model, beta)
            er = engine.cutting_plane(self, oracle, model=model, w0=w, **inner_run_settings(engine_kw, deadline))
            model, w = er.model, er.solution.w
            history.extend(er.history)
            for k in timings:
                timings[k] += er.timings.get(k, 0.0)
            gamma = er.solution.extra["gamma"]
            new = self.update_beta(gamma, beta)
            change = 0.0 if new is None else float(np.max(np.abs(new - beta)))
            rounds.append({"round": t, "objective": er.solution.objective, "upper_bound": er.upper_bound,
                           "beta_change": change, "removed": int(np.sum((beta if new is None else new) == 0)),
                           "inner_termination": er.termination, "inner_iterations": er.n_iter,
                           "n_cuts": model.ws.size, "elapsed": time.perf_counter() - t_start})
            if new is None:
                termination = "converged"      # γ = 0: w = 0 is the fixed point
                break
            beta = new
            betas.append(beta.copy())
            if er.termination in ("time_limit", "interrupted"):
                termination = er.termination
                break
            if change <= self.beta_tol:
                # the EM fixed point; "converged" only with the last QP (5) certified (its gap ≤ gap_tol)
                termination = "converged" if er.termination == "converged" else er.termination
                break
        sol = er.solution
        used_beta = self.beta_of(model.metric)
        w = np.where(beta > 0, sol.w, 0.0)
        gamma = np.divide(w, used_beta, out=np.zeros_like(w), where=used_beta > 0)
        _, hinge = oracle.separate(w)
        hinge_sum = float(np.maximum(hinge, 0.0).sum())
        sol.w = w
        sol.extra.update(
            certifies="the last EM round's QP (5) at its β (KDD 2009, Algorithm 3); the EM loop has no lower bound on "
                      "P4 itself (p4_objective is P4 at the returned w)",
            beta=beta, gamma=gamma, beta_history=np.array(betas), em_history=rounds,
            removed=int(np.sum(beta == 0)), em_rounds=len(rounds),
            p3_objective=self.lam * float(gamma @ gamma) + self.C * hinge_sum,
            p4_objective=self.lam / dim * float(np.abs(w).sum()) ** 2 + self.C * hinge_sum)
        timings["total"] = time.perf_counter() - t_start
        er.history, er.timings, er.termination = history, timings, termination
        er.n_iter = sum(r["inner_iterations"] for r in rounds)
        return er


# ----------------------------------------------------------------------------------------------------------------
# Duality: The adaptive M³N's statements (its last QP (5), the EM fixed point, Theorem 2), for ``mmprog verify``
# ----------------------------------------------------------------------------------------------------------------

@duality_for("adapm3n")
class AdapM3NDuality(Duality):
    """The adaptive M³N (KDD 2009, Algorithm 3): the last QP (5) with its dual, the EM fixed point, and Theorem 2
    (its P4 objective equals P4's optimum). Verified with the monotone τ-step (``update="eq4"``) and enough EM
    rounds to reach the fixed point; Algorithm 3's printed update (6) can settle into a 2-cycle (see the module)."""

    fit_params = {"update": "eq4", "n_em": 60}

    def dual_model(self, result):
        return metric_dual_model(working_set_arrays(result), result.model.metric, name="adapm3n_dual")

    def checks(self, ctx):
        yield from metric_checks(ctx, "QP (5)")
        yield from adapm3n_fixed_point(ctx)
        yield from adapm3n_theorem2(ctx)


def adapm3n_fixed_point(ctx):
    res = ctx.result
    ex = res.extra
    stmt = "EM fixed point: P3 objective λ‖γ‖² + C·ΣHᵢ = P4 objective (λ/K)‖w‖₁² + C·ΣHᵢ at the returned w"
    if "p3_objective" not in ex or "p4_objective" not in ex:
        yield ctx.skip(stmt, "the result carries no p3_objective/p4_objective")
        return
    # equal at a fixed point; after the EM rounds the monotone update leaves them ~1e-7 apart on tiny data
    yield ctx.check(stmt, float(ex["p3_objective"]), float(ex["p4_objective"]), 2e-5 * scale_of(ex["p4_objective"]),
                    reason=f"EM {res.termination} after {ex.get('em_rounds')} rounds, {ex.get('removed')} features "
                           f"removed")


def adapm3n_theorem2(ctx):
    """Theorem 2 from the AdapM³N side: P4 trained directly (same C, λ) brackets AdapM³N's P4 objective."""
    stmt = "Theorem 2 (KDD 2009): AdapM³N's (λ/K)‖w‖₁² + C·ΣHᵢ(w) = P4's optimum (trained directly)"
    from .base import registered
    res = ctx.result
    if "p4" not in registered() or ctx.dataset is None or "p4_objective" not in res.extra:
        yield ctx.skip(stmt, "needs program p4, the training data and the result's p4_objective")
        return
    p4 = None
    errors = []
    for solver in ("highs", "ipopt"):
        try:
            p4 = ctx.fit(ctx.dataset, program="p4", C=res.params["C"], lam=res.params["lam"], slack=res.slack,
                            eps=1e-5, solver=solver)
            break
        except MMProgError as e:
            errors.append(f"{solver}: {e}")
    if p4 is None:
        yield Check(ctx.name, stmt, None, None, None, None, "fail", "; ".join(errors))
        return
    lo, up = value_bracket(p4)
    v = float(res.extra["p4_objective"])
    yield ctx.check(stmt, v, lo, 2e-5 * scale_of(v) + max(up - lo, 0.0),
                    reason=f"P4 in [{lo:.8g}, {up:.8g}] by {p4.solver}")
