"""The generic cutting-plane loop (Algorithm 1 of Zhu, Xing & Zhang, KDD 2009; the 1-slack form of Joachims,
Finley & Yu, 2009).

One round: the oracle finds every example's most violated labeling at the current w; the full objective at w is
an upper bound, the master's optimum on its working set a lower bound; the violated cuts are appended to the
existing Pyomo model (never rebuilt) and the master is re-solved — through a persistent solver interface where the
solver has one. The loop knows programs, oracles and solvers only through their small interfaces.

Stopping (one ``should_stop``): n-slack — no example violates its constraint by more than ε (Hᵢ(w) − ξᵢ ≤ ε);
1-slack — R_emp(w) − R_working-set(w) < ε with both risks averaged over examples; or ``max_iter``; or the
wall-clock ``time_limit``; or SIGINT/SIGTERM (:mod:`mmprog.interrupts`). The reason is reported as the termination.

No solve runs unbounded: every master solve gets ``min(solve_time_limit, what is left of time_limit)`` seconds,
passed to the solver itself. A solve stopped by what is left of ``time_limit`` ends the fit with termination
``time_limit`` and the last solved master's point; a solve stopped by the per-solve cap raises
:class:`~mmprog.exceptions.SolverError` with the solver's words (after writing the checkpoint, when one is kept).
"""
from __future__ import annotations

import logging
import sys
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from . import interrupts
from .exceptions import ParameterError, SolverError, check_param
from .programs.base import Dims
from .solvers.base import SOLVE_TIME_LIMIT

log = logging.getLogger("mmprog.cutting_plane")


#: The terminations a fit can end with.
TERMINATIONS = ("converged", "max_iter", "time_limit", "interrupted")


@dataclass
class IterationRecord:
    """One row of the history (and of the progress table)."""

    iteration: int
    objective: float          # master optimum after this round's solve (n-slack scale)
    lower_bound: float        # best master optimum so far
    upper_bound: float        # best full objective seen at an oracle call
    gap: float                # (upper − lower) / max(1, |upper|)
    max_violation: float
    n_cuts: int
    n_active: int
    cut_nnz: int              # non-zeros of the ΔF rows held by the working set (≈ 12 bytes each)
    new_cuts: int
    oracle_time: float
    pyomo_time: float
    solver_time: float
    elapsed: float


@dataclass
class EngineRun:
    """What :func:`run` returns; :class:`mmprog.result.Result` wraps it for users."""

    model: object
    solution: object
    history: list = field(default_factory=list)
    termination: str = "max_iter"
    n_iter: int = 0
    timings: dict = field(default_factory=dict)
    upper_bound: float = np.inf
    snapshots: dict = field(default_factory=dict)


class _Progress:
    """Progress line on a terminal for long runs (iteration, objective, gap, cuts, elapsed)."""

    def __init__(self, enabled):
        self.enabled = enabled and sys.stderr.isatty()

    def update(self, rec):
        if self.enabled:
            sys.stderr.write(f"\r it {rec.iteration:4d}  obj {rec.objective:12.6g}  gap {rec.gap:9.2e}  "
                             f"cuts {rec.n_cuts:6d}  {rec.elapsed:7.1f}s ")
            sys.stderr.flush()

    def close(self):
        if self.enabled:
            sys.stderr.write("\n")


def should_stop(max_violation, eps, iteration, max_iter, elapsed, time_limit, interrupted=None):
    """The one stopping rule; returns the termination reason or None."""
    if max_violation <= eps:
        return "converged"
    if interrupted:
        return "interrupted"
    if iteration >= max_iter:
        return "max_iter"
    if time_limit is not None and elapsed >= time_limit:
        return "time_limit"
    return None


def run(program, oracle, *, solver, slack="n", eps=1e-3, max_iter=500, time_limit=None, drop_after=None,
        drop_tol=1e-9, max_cuts=None, w0=None, model=None, show_every=None, show=None, progress=False,
        snapshot_iters=(), solve_options=None, solve_time_limit=SOLVE_TIME_LIMIT, checkpoint=None,
        checkpoint_every=None, resume=None, stabilise=None, inout_weight=0.8, line_search=0, gap_tol=None):
    """Run the cutting-plane loop.

    Parameters
    ----------
    program : Program
        The master program (built here unless ``model`` is given).
    oracle : Oracle
        Separation oracle over the training data.
    solver : Solver
        From :func:`mmprog.solvers.get_solver`; checked against the program's class before any work.
    slack : {"n", "one"}
        n-slack (a working set per example) or 1-slack (one aggregated cut per round).
    eps : float
        Tolerance on the constraint violation (n-slack: per example; 1-slack: on the averaged risk).
    max_iter : int
        Cap on rounds (counted from the start of the fit, across a resume).
    time_limit : float, optional
        Wall-clock seconds of this run.
    drop_after : int, optional
        Deactivate cuts whose multiplier stayed zero (≤ ``drop_tol``) for this many consecutive rounds; their ΔF
        rows are released from memory (:meth:`WorkingSet.release`).
    max_cuts : int ≥ 2, optional
        Bound on the active cuts of each slack. After a solve that leaves more, the oldest active cuts S of that
        slack (the previous aggregate among them) are replaced by one aggregated cut, their convex combination with
        weights λ_r = α_r / Σ_S α: ΔF_a = Σ λ_r ΔF_r, Δℓ_a = Σ λ_r Δℓ_r (the aggregation of bundle methods,
        Kiwiel 1983; BMRM's limited-memory variant, Teo et al. 2010). A convex combination of valid cuts of one
        slack is a valid cut, so every later master optimum is still a lower bound; α_a = Σ_S α reproduces the
        current w = Σ α ΔF and the master's optimum, so no round loses progress, and the fit stops by the same
        ε-rule on the oracle's full objective — exact in what it returns, with at most ``max_cuts`` ΔF rows
        held (the rows of S are released). Cuts of S with α = 0 are simply dropped.
    w0 : ndarray, shape (dim,), optional
        Starting point for the first separation (default 0).
    model : ConcreteModel, optional
        Continue growing an existing master (e.g. the next EM round); its working set is kept.
    show_every : int, optional
        Call ``show(model, record)`` every this many rounds (``mmprog train --show-every``).
    snapshot_iters : iterable of int
        Rounds after which the model is written out by ``show`` callbacks (``--at-iter``).
    solve_time_limit : float
        Cap in seconds on one master solve, handed to the solver (default :data:`SOLVE_TIME_LIMIT`).
    checkpoint : str, optional
        File (``.npz``) to keep the working set and the iterate in (:mod:`mmprog.checkpoint`); written every
        ``checkpoint_every`` rounds and when the fit ends by interruption, time limit or a capped solve.
    checkpoint_every : int, optional
        Rounds between checkpoints (default: only at the end, when ``checkpoint`` is given).
    resume : mmprog.checkpoint.Checkpoint, optional
        Continue a checkpointed fit: its cuts are added to a fresh master, which is re-solved, and the loop goes on
        from the saved round with the saved history and upper bound.

    stabilise : {None, "in-out"}
        ``"in-out"``: separate at a point between the best point so far (lowest full objective, the upper bound's
        point) and the master's point (Ben-Ameur & Neto, "Acceleration of cutting-plane and column generation
        algorithms", Networks 49, 2007): w_sep = λ·w_best + (1 − λ)·w_master, λ = ``inout_weight``. The cuts
        found there are kept when they cut off the master's point (by more than ``eps``); when none does (a
        mis-price) the same round separates at the master's point, as Kelley's method does, so each round adds
        cuts or ends the fit, and the eps test is made on a master-point separation only. The master is unchanged
        (same program, same optimum): its optimum stays the lower bound, the full objective at every separation
        point an upper bound. Kelley's LP points swing from corner to corner of the box the cuts leave open;
        the stabilised points move little, so fewer rounds (and fewer LP rows) reach the same gap.
    inout_weight : float in [0, 1)
        λ of ``stabilise="in-out"`` (0 is Kelley's method). On OCR100 (P1, n-slack) λ = 0.8 and 0.9 reached the
        same gap per round, far ahead of 0.5 (gap 0.14 against 0.38 after ~100 rounds).
    line_search : int >= 0
        With ``stabilise="in-out"``: the full objective is also evaluated at the ``line_search`` points
        λ = 0, 1/m, …, (m − 1)/m (m = ``line_search``) of the segment λ·w_best + (1 − λ)·w_master, one oracle call
        each; the lowest value lowers the upper bound and moves the centre w_best. Their cuts are not added (the
        master grows as without it). The full objective is convex along the segment and an oracle call costs a
        fraction of a master solve (OCR100 P1: 0.01 s against 1–10 s), so the centre moves as a descent step of
        the full objective instead of only to the in-out point; on OCR100 fold 0 (P1, m = 10) the upper bound was
        5–11 % lower than without it at the same round from round 35 to 56 (232.5 against 256.2 at round 56) and
        the lower bound ~1 % higher.
    gap_tol : float, optional
        Also stop (termination ``"converged"``) once the relative gap (upper − lower) / max(1, |upper|) between
        the best full objective and the master's optimum is ≤ ``gap_tol``.

    Returns
    -------
    EngineRun
        ``termination`` is one of :data:`TERMINATIONS`.
    """
    check_param("slack", slack, slack in ("n", "one"), '"n" or "one"')
    check_param("eps", eps, isinstance(eps, (int, float)) and eps > 0, "a float > 0")
    check_param("max_iter", max_iter, isinstance(max_iter, (int, np.integer)) and max_iter >= 1, "an int >= 1")
    if time_limit is not None:
        check_param("time_limit", time_limit, time_limit > 0, "a number of seconds > 0 or None")
    check_param("solve_time_limit", solve_time_limit,
                isinstance(solve_time_limit, (int, float)) and solve_time_limit > 0, "a number of seconds > 0")
    check_param("stabilise", stabilise, stabilise in (None, "in-out"), 'None or "in-out"')
    check_param("line_search", line_search, isinstance(line_search, (int, np.integer)) and line_search >= 0
                and not isinstance(line_search, bool), "an int >= 0")
    check_param("inout_weight", inout_weight, isinstance(inout_weight, (int, float)) and 0 <= inout_weight < 1,
                "a float in [0, 1)")
    if gap_tol is not None:
        check_param("gap_tol", gap_tol, isinstance(gap_tol, (int, float)) and gap_tol > 0, "a float > 0 or None")
    if max_cuts is not None:
        check_param("max_cuts", max_cuts, isinstance(max_cuts, (int, np.integer)) and max_cuts >= 2,
                    "an int >= 2 or None")
    if checkpoint_every is not None:
        check_param("checkpoint_every", checkpoint_every,
                    isinstance(checkpoint_every, (int, np.integer)) and checkpoint_every >= 1, "an int >= 1")
        if checkpoint is None:
            raise ParameterError("checkpoint_every needs checkpoint= (the file to keep the working set in)")
    fmap, prepared = oracle.fmap, oracle.prepared
    n = prepared.n
    if n == 0:
        raise ParameterError("the training set is empty; give at least one example")
    n_slacks = n if slack == "n" else 1
    dims = Dims(n=n, dim=fmap.dim, n_slacks=n_slacks, groups=lambda: fmap.groups, group_names=fmap.group_names)
    t_start = time.perf_counter()
    timings = {"oracle": 0.0, "pyomo": 0.0, "solver": 0.0}
    history, it, upper, elapsed_before = [], 0, np.inf, 0.0
    t0 = time.perf_counter()
    if model is None:
        solver.require(program.problem_class)
        model = program.build(dims)
    if resume is not None:
        resume.check_compatible(fmap, n_slacks)
        if len(resume.cuts):
            model.ws.round = int(resume.meta["iteration"])
            program.add_cuts(model, resume.cuts)
        for cut in resume.labeling_cuts(fmap, prepared):
            model.ws.round = int(resume.meta["iteration"])
            program.add_cuts(model, cut)
        history = [IterationRecord(**h) for h in resume.meta["history"]]
        it, upper = int(resume.meta["iteration"]), float(resume.meta["upper_bound"])
        elapsed_before = float(resume.meta.get("elapsed", 0.0))
        w0 = resume.w
    timings["pyomo"] += time.perf_counter() - t0
    # a 1-slack cut of a chain with 0/1 token features is held as its labeling where the master allows it
    # (mmprog.cuts.LabelingCut: ~1 MB against ~100 MB a cut on full CoNLL-2002 NER)
    oracle.labeling_cuts = slack == "one" and program.reads_labeling_cuts(model)
    w = np.zeros(fmap.dim) if w0 is None else np.asarray(w0, dtype=np.float64)
    own_w = w0 is None          # w is the engine's (not the caller's w0): it may be written over once used
    xi = np.zeros(n_slacks) if resume is None else resume.xi.copy()
    solution = None

    def budget():
        """(seconds for the next solve, whether the fit's own time limit is what binds)."""
        if time_limit is None:
            return solve_time_limit, False
        left = time_limit - (time.perf_counter() - t_start)
        return (left, True) if left < solve_time_limit else (solve_time_limit, False)

    def save_checkpoint(termination=None):
        from . import checkpoint as ckpt
        ckpt.save(checkpoint, model=model, program=program, fmap=fmap, w=w, xi=xi, slack=slack, iteration=it,
                  elapsed=elapsed_before + time.perf_counter() - t_start, upper_bound=upper,
                  history=history_as_dicts(history), termination=termination)

    def solve_master():
        """Solve through the program; a solve stopped by what is left of ``time_limit`` returns None."""
        seconds, fit_bound = budget()
        if seconds <= 0:
            return None
        try:
            return _solve(program, model, solver, solve_options, seconds)
        except SolverError as e:
            if e.termination != "max_time":
                raise
            if fit_bound:
                return None
            if checkpoint is not None:
                save_checkpoint("solve_time_limit")
            raise SolverError(f"solver {solver.name} stopped the master solve at the per-solve cap "
                              f"solve_time_limit={seconds:g} s ({e.solver_message}); raise solve_time_limit "
                              f"(mmprog train --solve-time-limit)", termination=e.termination,
                              solver_message=e.solver_message) from None

    termination = None
    with interrupts.catch_interrupts():
        if model.ws.size:
            t0 = time.perf_counter()
            status = solve_master()
            if status is None:
                termination = "time_limit"
            else:
                timings["solver"] += status.solver_time
                timings["pyomo"] += time.perf_counter() - t0 - status.solver_time
                solution = program.read_solution(model)
                w, xi = solution.w, solution.xi
                own_w = True
        lower = solution.objective if solution else 0.0
        if history:
            lower = max(lower, history[-1].lower_bound)
        zero_rounds = np.zeros(0, dtype=np.int64)
        progress_bar = _Progress(progress)
        log.info("%5s %14s %14s %14s %10s %10s %6s %8s %8s %8s", "iter", "objective", "lower", "upper", "gap",
                 "max viol", "cuts", "oracle", "pyomo", "solver")
        hinge = None
        # the in-out stability centre: the point of the best full objective separated in this run (a resumed fit
        # keeps the saved upper bound but not its point, so the centre restarts from its first separation)
        w_best, best_value = None, np.inf

        def evaluate(point):
            """Separate at ``point``; its full objective lowers the upper bound and may make it the best point."""
            nonlocal upper, best_value, w_best
            cuts_at, hinge_at = _separate(oracle, slack, point)
            value = program.objective_at(point, hinge_at)
            upper = min(upper, value)
            # only the in-out rule reads the centre: holding it otherwise kept a second w alive (424 MB on NER)
            if stabilise is not None and value < best_value:
                best_value, w_best = value, point
            return cuts_at, hinge_at

        completed = it           # rounds whose master was solved (a resumed fit starts from the saved round)
        while termination is None:
            if interrupts.requested():
                termination = "interrupted"
                break
            it += 1
            try:
                t0 = time.perf_counter()
                new, max_violation = None, np.inf
                if stabilise == "in-out" and w_best is not None and solution is not None:
                    # in-out: the cuts at w_sep are kept if they cut off the master's point (w, ξ)
                    centre = w_best
                    w_sep = inout_weight * centre + (1.0 - inout_weight) * w
                    cand, _ = evaluate(w_sep)
                    viol = cand.violation(w, xi)
                    if (viol > eps).any():
                        new = cand.select(viol > eps)
                    # the line search: the full objective (an upper bound) on more points of the segment from the
                    # master's point (λ = 0) to the centre; only the upper bound and the centre use them
                    for lam in np.arange(line_search) / max(line_search, 1):
                        evaluate(lam * centre + (1.0 - lam) * w)
                if new is None:
                    cand, hinge = evaluate(w)
                    if slack == "n":
                        viol = hinge - xi[cand.example]
                        new = cand.select(viol > eps)
                        max_violation = float(viol.max(initial=0.0))
                    else:
                        new = cand
                        # R_emp(w) − R_ws(w): averaged risks; ξ of the 1-slack master is already on the average
                        # scale (the cut's own violation: a CountCut reads its counts without making the float row)
                        max_violation = float(new.violation(w, xi)[0])
                t_oracle = time.perf_counter() - t0
                timings["oracle"] += t_oracle
                termination = should_stop(max_violation, eps, it - 1, max_iter, time.perf_counter() - t_start,
                                          time_limit, interrupts.requested())
                if termination is None and gap_tol is not None and solution is not None \
                        and (upper - lower) / max(1.0, abs(upper)) <= gap_tol:
                    termination = "converged"
                if termination is not None:
                    break
                if not np.isfinite(max_violation):
                    max_violation = float(viol.max(initial=0.0))
                t0 = time.perf_counter()
                model.ws.round = it
                program.add_cuts(model, new)
                t_pyomo = time.perf_counter() - t0
                t0 = time.perf_counter()
                status = solve_master()
                if status is None:
                    termination = "time_limit"
                    break
                t_solve_total = time.perf_counter() - t0
                t0 = time.perf_counter()
                if stabilise is None and own_w:
                    # this round's point is not read again (its cuts are in the master, and without the in-out rule
                    # no centre keeps it): a program may write the next w into it (m3n's Gram dual does) instead of
                    # holding two w-sized vectors at once, 424 MB each on full CoNLL-2002 NER. Never the caller's w0.
                    model.w_spare = w
                solution = program.read_solution(model)
                model.w_spare = None          # a program that did not take it must not keep it alive
                own_w = True
                t_pyomo += time.perf_counter() - t0 + max(0.0, t_solve_total - status.solver_time)
                w, xi = solution.w, solution.xi
                lower = max(lower, solution.objective)
                if drop_after:
                    zero_rounds = _drop_inactive(program, model, solution.alpha, zero_rounds, drop_after, drop_tol)
                if max_cuts is not None:
                    t0 = time.perf_counter()
                    _aggregate_oldest(program, model, solution.alpha, max_cuts)
                    t_pyomo += time.perf_counter() - t0
                timings["pyomo"] += t_pyomo
                timings["solver"] += status.solver_time
                rec = IterationRecord(
                    iteration=it, objective=solution.objective, lower_bound=lower, upper_bound=upper,
                    gap=(upper - lower) / max(1.0, abs(upper)), max_violation=max_violation, n_cuts=model.ws.size,
                    n_active=int(model.ws.active_mask().sum()), cut_nnz=int(model.ws.nnz), new_cuts=len(new),
                    oracle_time=t_oracle, pyomo_time=t_pyomo, solver_time=status.solver_time,
                    elapsed=elapsed_before + time.perf_counter() - t_start)
                history.append(rec)
                completed = it
                log.info("%5d %14.8g %14.8g %14.8g %10.3e %10.3e %6d %8.3f %8.3f %8.3f", rec.iteration,
                         rec.objective, rec.lower_bound, rec.upper_bound, rec.gap, rec.max_violation, rec.n_cuts,
                         rec.oracle_time, rec.pyomo_time, rec.solver_time)
                progress_bar.update(rec)
                if checkpoint is not None and checkpoint_every and it % checkpoint_every == 0:
                    save_checkpoint()
                if show is not None and ((show_every and it % show_every == 0) or it in snapshot_iters):
                    show(model, rec)
            except KeyboardInterrupt:
                # a second signal: the round is abandoned; the last solved master's point is kept
                termination = "interrupted"
                break
        it = completed
        progress_bar.close()
        if checkpoint is not None and (termination != "converged" or checkpoint_every):
            save_checkpoint(termination)
    if solution is None:
        # nothing was solved: the first separation found nothing violated (w = w0 is optimal with an empty working
        # set) or the fit stopped before its first solve
        from .programs.base import Solution
        if hinge is None:
            _, hinge = oracle.separate(w)
        solution = Solution(w=w, xi=xi, alpha=np.zeros(model.ws.size), objective=program.objective_at(
            w, np.maximum(hinge, 0.0)), dual_objective=None)
    timings["total"] = time.perf_counter() - t_start
    log.info("termination: %s after %d rounds, %d cuts, objective %.8g (upper bound %.8g)", termination, it,
             model.ws.size, solution.objective, upper)
    return EngineRun(model=model, solution=solution, history=history, termination=termination, n_iter=it,
                     timings=timings, upper_bound=float(upper))


def _separate(oracle, slack, w):
    """(cuts, hinge ≥ 0) of the oracle at w, in the fit's slack form."""
    if slack == "n":
        cuts, hinge = oracle.separate(w)
    else:
        cuts, hinge = oracle.separate_one_slack(w)
    return cuts, np.maximum(hinge, 0.0)


def _solve(program, model, solver, options, time_limit):
    """Re-solve the master through the program (which knows its persistent or native route), capped at
    ``time_limit`` seconds inside the solver."""
    return program.solve(model, solver, options=options, time_limit=time_limit)


def _drop_inactive(program, model, alpha, zero_rounds, drop_after, tol):
    r = len(alpha)
    zr = np.zeros(r, dtype=np.int64)
    zr[: len(zero_rounds)] = zero_rounds
    zr = np.where(alpha <= tol, zr + 1, 0)
    active = model.ws.active_mask()
    drop = np.nonzero((zr >= drop_after) & active)[0]
    if len(drop):
        program.drop_cuts(model, list(drop))
        model.ws.release(drop)
    return zr


def _aggregate_oldest(program, model, alpha, max_cuts):
    """Replace the oldest active cuts of every slack holding more than ``max_cuts`` by their α-weighted average
    (see ``max_cuts`` in :func:`run`); the aggregate's α starts at Σ_S α.

    Parameters
    ----------
    alpha : ndarray, shape (r,)
        The multipliers of the master just solved (r = cuts in the working set).
    """
    from .cuts import Cuts
    ws = model.ws
    active = ws.active_mask()
    examples = ws.example_array()
    alpha = np.maximum(np.asarray(alpha, dtype=np.float64), 0.0)
    for i in np.unique(examples[active]):
        mine = np.nonzero(active & (examples == i))[0]          # insertion order: oldest first
        if len(mine) <= max_cuts:
            continue
        S = mine[: len(mine) - max_cuts + 1]                  # these S become one cut: max_cuts remain
        total = float(alpha[S].sum())
        if total > 0:
            lam = alpha[S] / total
            row, dl = ws.combine(S, lam)
            program.add_cuts(model, Cuts(np.array([i], dtype=np.int64), row, np.array([dl])))
            # the aggregate carries S's weight: the master's current point is unchanged (a warm start of dual
            # masters, whose cut components are the α variables; a primal master's component is its row)
            if hasattr(ws.components[-1], "fixed"):
                ws.components[-1].set_value(total, skip_validation=True)
            warm = getattr(model, "_gram_daqp", None)
            if warm is not None and len(warm.alpha) == len(alpha):
                kept = warm.alpha.copy()
                kept[S] = 0.0
                warm.alpha = np.r_[kept, total]
        program.drop_cuts(model, list(S))
        ws.release(S)


def history_as_dicts(history):
    return [asdict(h) for h in history]
