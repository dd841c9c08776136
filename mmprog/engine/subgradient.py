"""Projected sub-gradient for P1′ (Zhu, Xing & Zhang, KDD 2009, section 4.2, Algorithm 2).

P1′ is the ℓ1-M³N written with a ball instead of a penalty:

    min_w  R_hinge(w) = (1/N) Σᵢ max_y [Δℓᵢ(y) − wᵀΔfᵢ(y)]     s.t.  ‖w‖₁ ≤ λ                    (P1′)

Algorithm 2 iterates w ← Π_W(w − η_t g(w)) with the sub-gradient g(w) = (1/N) Σᵢ [f(xᵢ, yᵢ*) − f(xᵢ, yᵢ)] = −(1/N) Σᵢ
Δfᵢ(yᵢ*), yᵢ* the loss-augmented prediction (one batched oracle call gives all of them), and Π_W the Euclidean
projection onto the ℓ1 ball of radius λ (:func:`mmprog.projections.l1_ball`, Duchi et al. 2008).

* ``variant="batch"``: one step per pass with the full sub-gradient (Algorithm 2 as printed);
* ``variant="online"``: the per-example (mini-batch) version the paper mentions, in the manner of Ratliff et al.
  (2007): each pass visits the examples in a fresh random order, one step per mini-batch of ``batch_size``.

Step sizes η_t: ``"inv_sqrt"`` η₀/√t (default), ``"inv"`` η₀/t, ``"constant"`` η₀, with t the step count. The default
η₀ is λ/‖g(w⁽¹⁾)‖₂, so that the first step moves about one ball radius. The output is the last iterate w⁽ᵀ⁾
(Algorithm 2), or with ``output="best"`` the iterate of lowest R_hinge seen at the passes' ends.

There is no master program: the run has no Pyomo model (``Result.model`` is None).
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np

from . import interrupts
from ..exceptions import ParameterError, check_param
from ..projections import check_settings, l1_ball

@dataclass
class SubgradientRecord:
    """One pass of the projected sub-gradient method."""

    iteration: int            # pass number
    objective: float          # R_hinge at the iterate after this pass (the P1′ objective)
    best_objective: float
    l1_norm: float
    nonzeros: int
    step: float               # the last step size of the pass
    oracle_time: float
    elapsed: float


def step_size(eta0, t, schedule):
    """η_t for step t ≥ 1."""
    if schedule == "inv_sqrt":
        return eta0 / np.sqrt(t)
    if schedule == "inv":
        return eta0 / t
    return eta0


def _subgradient(cuts, count):
    """g = −(1/count) Σ ΔF over the given cuts (one per example), dense (dim,)."""
    return -np.asarray(cuts.dF.sum(axis=0)).ravel() / count


def projected_subgradient(oracle, radius, *, n_iter=500, eta0=None, schedule="inv_sqrt", variant="batch",
                          batch_size=1, seed=0, output="last", projection="sort", w0=None, time_limit=None,
                          progress=False):
    """Minimise R_hinge over the ℓ1 ball of radius λ by Algorithm 2 (see the module docstring).

    Parameters
    ----------
    oracle : mmprog.engine.oracle.Oracle
        Loss-augmented inference over the training data.
    radius : float
        λ > 0, the ball's radius.
    n_iter : int
        Passes over the data (T of Algorithm 2 for ``variant="batch"``).
    eta0 : float, optional
        Base step size (default λ/‖g(w⁽¹⁾)‖₂).
    schedule : {"inv_sqrt", "inv", "constant"}
    variant : {"batch", "online"}
    batch_size : int
        Examples per step of the online variant.
    seed : int
        Order of the examples in the online variant.
    output : {"last", "best"}
    projection : {"sort", "linear"}
        Duchi et al.'s sort-based or expected-linear-time projection.
    w0 : ndarray, shape (dim,), optional
        Start (projected onto the ball); default 0.
    time_limit : float, optional
        Wall-clock seconds.

    Returns
    -------
    mmprog.engine.records.EngineRun
        ``model`` None; ``solution.w`` the output iterate, ``solution.objective`` its R_hinge, ``solution.xi``
        its per-example hinge losses; ``history`` one :class:`SubgradientRecord` per pass.
    """
    check_param("radius", radius, isinstance(radius, (int, float, np.number)) and not isinstance(radius, bool)
                and np.isfinite(radius) and radius > 0, "a finite float > 0 (the ℓ1 ball's radius λ)")
    check_param("n_iter", n_iter, isinstance(n_iter, (int, np.integer)) and n_iter >= 1, "an int >= 1")
    s = check_settings(eta0, schedule, variant, batch_size, seed, output, projection)
    if oracle.prepared.n == 0:
        raise ParameterError("the training set is empty; give at least one example")
    return ProjectedSubgradient(oracle, radius, s, w0).run(n_iter, time_limit, progress)


class ProjectedSubgradient:
    """One run of Algorithm 2 (see :func:`projected_subgradient`): the iterate, the step count and the timings
    between passes; a pass is :meth:`batch_pass` or :meth:`online_pass`, then :meth:`record`."""

    def __init__(self, oracle, radius, settings, w0=None):
        self.oracle, self.radius, self.s = oracle, radius, settings
        self.n, dim = oracle.prepared.n, oracle.fmap.dim
        self.rng = np.random.default_rng(settings["seed"])
        self.proj_rng = np.random.default_rng(settings["seed"] + 1)
        self.w = np.zeros(dim) if w0 is None else self.project(np.asarray(w0, dtype=np.float64))
        self.t_start = time.perf_counter()
        self.timings = {"oracle": 0.0, "projection": 0.0}
        self.eta, self.step, self.eta_t = settings["eta0"], 0, 0.0
        self.history = []
        self.best_w, self.best_risk = self.w.copy(), np.inf

    def project(self, v):
        t0 = time.perf_counter()
        out = l1_ball(v, self.radius, self.s["projection"], self.proj_rng)
        self.timings["projection"] += time.perf_counter() - t0
        return out

    def separate(self, idx=None):
        t0 = time.perf_counter()
        out = self.oracle.separate(self.w, idx)
        return out, time.perf_counter() - t0

    def take_step(self, g, scale_g):
        """w ← Π_W(w − η_t g); η₀ defaults to λ/‖g⁽¹⁾‖₂ with ``scale_g`` the full sub-gradient at the start."""
        if self.eta is None:
            self.eta = self.radius / max(float(np.linalg.norm(scale_g())), 1e-12)
        self.step += 1
        self.eta_t = step_size(self.eta, self.step, self.s["schedule"])
        self.w = self.project(self.w - self.eta_t * g)

    def batch_pass(self, cuts):
        g = _subgradient(cuts, self.n)
        self.take_step(g, lambda: g)
        return 0.0

    def online_pass(self, cuts):
        t_oracle, size = 0.0, self.s["batch_size"]
        order = self.rng.permutation(self.n)
        for lo in range(0, self.n, size):
            idx = np.sort(order[lo:lo + size])
            (c_b, _), seconds = self.separate(idx)
            t_oracle += seconds
            # the step scale from the full sub-gradient at the start, as in the batch variant
            self.take_step(_subgradient(c_b, len(idx)), lambda: _subgradient(cuts, self.n))
        return t_oracle

    def record(self, it, hinge, t_oracle, progress):
        risk = float(np.maximum(hinge, 0.0).mean())
        if risk < self.best_risk:
            self.best_risk, self.best_w = risk, self.w.copy()
        elapsed = time.perf_counter() - self.t_start
        rec = SubgradientRecord(iteration=it, objective=risk, best_objective=self.best_risk,
                                l1_norm=float(np.abs(self.w).sum()), nonzeros=int(np.count_nonzero(self.w)),
                                step=float(self.eta_t), oracle_time=t_oracle, elapsed=elapsed)
        self.history.append(rec)
        if progress and sys.stderr.isatty():
            sys.stderr.write(f"\r pass {it:5d}  R_hinge {risk:12.6g}  best {self.best_risk:12.6g}  "
                             f"nnz {rec.nonzeros:6d}  {elapsed:7.1f}s ")
        return elapsed

    def run(self, n_iter, time_limit=None, progress=False):
        termination = "max_iter"
        # R_hinge and the sub-gradient at the start come from the same oracle call
        (cuts, hinge), seconds = self.separate()
        self.timings["oracle"] += seconds
        for it in range(1, n_iter + 1):
            t_oracle = (self.batch_pass if self.s["variant"] == "batch" else self.online_pass)(cuts)
            (cuts, hinge), seconds = self.separate()
            t_oracle += seconds
            self.timings["oracle"] += t_oracle
            elapsed = self.record(it, hinge, t_oracle, progress)
            if time_limit is not None and elapsed >= time_limit and it < n_iter:
                termination = "time_limit"
                break
            if interrupts.requested() and it < n_iter:
                termination = "interrupted"      # SIGINT/SIGTERM: this pass is complete, its point is kept
                break
        if progress and sys.stderr.isatty():
            sys.stderr.write("\n")
        return self.finish(hinge, termination)

    def finish(self, hinge, termination):
        from .records import EngineRun
        from ..programs.base import Solution
        w, s = self.w, self.s
        if s["output"] == "best":
            w = self.best_w
            _, hinge = self.oracle.separate(w)
        hinge = np.maximum(hinge, 0.0)
        risk = float(hinge.mean())
        self.timings["total"] = time.perf_counter() - self.t_start
        # the method has no lower bound on the ball's optimum: none is claimed (−∞, so the gap reads ∞, not 0); the
        # risk at w is the upper bound
        sol = Solution(w=w, xi=hinge, alpha=np.zeros(0), objective=-np.inf, dual_objective=None,
                       extra={"algorithm": "subgradient", "radius": float(self.radius), "hinge_risk": risk,
                              "certifies": "nothing: the projected sub-gradient method has no lower bound (its "
                                           "upper_bound is the hinge risk at w)",
                              "l1_norm": float(np.abs(w).sum()), "eta0": float(self.eta) if self.eta is not None
                              else None, "steps": self.step, **{k: v for k, v in s.items() if k != "eta0"}})
        return EngineRun(model=None, solution=sol, history=self.history, termination=termination,
                         n_iter=len(self.history), timings=self.timings, upper_bound=risk)
