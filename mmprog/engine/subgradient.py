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
from ..projections import l1_ball

SCHEDULES = ("inv_sqrt", "inv", "constant")
VARIANTS = ("batch", "online")
OUTPUTS = ("last", "best")

#: keyword settings accepted by :func:`projected_subgradient` beside the oracle and the radius
SETTINGS = ("eta0", "schedule", "variant", "batch_size", "seed", "output", "projection")


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


def check_settings(eta0=None, schedule="inv_sqrt", variant="batch", batch_size=1, seed=0, output="last",
                   projection="sort"):
    """Validate the sub-gradient settings; returns them as a dict (raises :class:`ParameterError`)."""
    if eta0 is not None:
        check_param("eta0", eta0, isinstance(eta0, (int, float, np.number)) and not isinstance(eta0, bool)
                    and np.isfinite(eta0) and eta0 > 0, "a finite float > 0 or None (automatic)")
        eta0 = float(eta0)
    check_param("schedule", schedule, schedule in SCHEDULES, '"inv_sqrt", "inv" or "constant"')
    check_param("variant", variant, variant in VARIANTS, '"batch" or "online"')
    check_param("batch_size", batch_size, isinstance(batch_size, (int, np.integer)) and not isinstance(
        batch_size, bool) and batch_size >= 1, "an int >= 1")
    check_param("seed", seed, isinstance(seed, (int, np.integer)) and not isinstance(seed, bool), "an int")
    check_param("output", output, output in OUTPUTS, '"last" or "best"')
    check_param("projection", projection, projection in ("sort", "linear"), '"sort" or "linear"')
    return dict(eta0=eta0, schedule=schedule, variant=variant, batch_size=int(batch_size), seed=int(seed),
                output=output, projection=projection)


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
    from .records import EngineRun
    from ..programs.base import Solution
    check_param("radius", radius, isinstance(radius, (int, float, np.number)) and not isinstance(radius, bool)
                and np.isfinite(radius) and radius > 0, "a finite float > 0 (the ℓ1 ball's radius λ)")
    check_param("n_iter", n_iter, isinstance(n_iter, (int, np.integer)) and n_iter >= 1, "an int >= 1")
    s = check_settings(eta0, schedule, variant, batch_size, seed, output, projection)
    n, dim = oracle.prepared.n, oracle.fmap.dim
    if n == 0:
        raise ParameterError("the training set is empty; give at least one example")
    rng = np.random.default_rng(s["seed"])
    proj_rng = np.random.default_rng(s["seed"] + 1)
    w = np.zeros(dim) if w0 is None else l1_ball(np.asarray(w0, dtype=np.float64), radius, s["projection"],
                                                 proj_rng)
    t_start = time.perf_counter()
    timings = {"oracle": 0.0, "projection": 0.0}
    eta = s["eta0"]
    step, eta_t = 0, 0.0
    history = []
    best_w, best_risk = w.copy(), np.inf
    termination = "max_iter"
    # R_hinge and the sub-gradient at the start come from the same oracle call
    t0 = time.perf_counter()
    cuts, hinge = oracle.separate(w)
    timings["oracle"] += time.perf_counter() - t0
    for it in range(1, n_iter + 1):
        t_oracle = 0.0
        if s["variant"] == "batch":
            g = _subgradient(cuts, n)
            if eta is None:
                eta = radius / max(float(np.linalg.norm(g)), 1e-12)
            step += 1
            eta_t = step_size(eta, step, s["schedule"])
            t0 = time.perf_counter()
            w = l1_ball(w - eta_t * g, radius, s["projection"], proj_rng)
            timings["projection"] += time.perf_counter() - t0
        else:
            order = rng.permutation(n)
            for lo in range(0, n, s["batch_size"]):
                idx = np.sort(order[lo:lo + s["batch_size"]])
                t0 = time.perf_counter()
                c_b, _ = oracle.separate(w, idx)
                t_oracle += time.perf_counter() - t0
                g = _subgradient(c_b, len(idx))
                if eta is None:
                    # scale from the full sub-gradient at the start, as in the batch variant
                    eta = radius / max(float(np.linalg.norm(_subgradient(cuts, n))), 1e-12)
                step += 1
                eta_t = step_size(eta, step, s["schedule"])
                t0 = time.perf_counter()
                w = l1_ball(w - eta_t * g, radius, s["projection"], proj_rng)
                timings["projection"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        cuts, hinge = oracle.separate(w)
        t_oracle += time.perf_counter() - t0
        timings["oracle"] += t_oracle
        risk = float(np.maximum(hinge, 0.0).mean())
        if risk < best_risk:
            best_risk, best_w = risk, w.copy()
        elapsed = time.perf_counter() - t_start
        history.append(SubgradientRecord(iteration=it, objective=risk, best_objective=best_risk,
                                         l1_norm=float(np.abs(w).sum()), nonzeros=int(np.count_nonzero(w)),
                                         step=float(eta_t), oracle_time=t_oracle, elapsed=elapsed))
        if progress and sys.stderr.isatty():
            sys.stderr.write(f"\r pass {it:5d}  R_hinge {risk:12.6g}  best {best_risk:12.6g}  "
                             f"nnz {history[-1].nonzeros:6d}  {elapsed:7.1f}s ")
        if time_limit is not None and elapsed >= time_limit and it < n_iter:
            termination = "time_limit"
            break
        if interrupts.requested() and it < n_iter:
            termination = "interrupted"      # SIGINT/SIGTERM: this pass is complete, its point is kept
            break
    if progress and sys.stderr.isatty():
        sys.stderr.write("\n")
    if s["output"] == "best":
        w = best_w
        _, hinge = oracle.separate(w)
    hinge = np.maximum(hinge, 0.0)
    risk = float(hinge.mean())
    timings["total"] = time.perf_counter() - t_start
    sol = Solution(w=w, xi=hinge, alpha=np.zeros(0), objective=risk, dual_objective=None,
                   extra={"algorithm": "subgradient", "radius": float(radius), "hinge_risk": risk,
                          "l1_norm": float(np.abs(w).sum()), "eta0": float(eta) if eta is not None else None,
                          "steps": step, **{k: v for k, v in s.items() if k != "eta0"}})
    return EngineRun(model=None, solution=sol, history=history, termination=termination, n_iter=len(history),
                     timings=timings, upper_bound=risk)


def fit_l1m3n(program, oracle, **engine_kw):
    """The ``l1m3n`` program's ``algorithm="subgradient"`` route: P1′ with radius ``program.lam``; the engine's
    ``max_iter`` is the number of passes and ``time_limit`` applies (``eps``, ``slack`` and the solver play no part)."""
    return projected_subgradient(oracle, program.lam, n_iter=engine_kw.get("max_iter", 500),
                                 time_limit=engine_kw.get("time_limit"), progress=engine_kw.get("progress", False),
                                 **program.subgradient)
