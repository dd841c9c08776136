"""The generic cutting-plane loop (Algorithm 1 of Zhu, Xing & Zhang, KDD 2009; the 1-slack form of Joachims,
Finley & Yu, 2009).

One round: the oracle finds every example's most violated labeling at the current w; the full objective at w is
an upper bound, the master's optimum on its working set a lower bound; the violated cuts are appended to the
existing Pyomo model (never rebuilt) and the master is re-solved — through a persistent solver interface where the
solver has one. The loop knows programs, oracles and solvers only through their small interfaces.

Stopping (one ``should_stop``): by default the certificate — the relative duality gap (upper − lower) /
max(1, |upper|) between the best full objective and the master's optimum is ≤ ``gap_tol`` (termination
``converged``; the default :data:`DEFAULT_GAP_TOL`). The ε rule is an option: with ``eps`` given (and no
``gap_tol``), the fit stops once no example violates its constraint by more than ε (n-slack: Hᵢ(w) − ξᵢ ≤ ε;
1-slack: R_emp(w) − R_working-set(w) < ε with both risks averaged over examples) — termination ``converged`` when
the gap is then ≤ :data:`DEFAULT_GAP_TOL` too, else ``eps``; with both given, whichever holds first. Without
``eps`` only cuts violated by more than :data:`MIN_EPS` are added, and a round that finds none ends the fit the same
way (nothing is left to add). Also ``max_iter``; the wall-clock ``time_limit``; SIGINT/SIGTERM
(:mod:`mmprog.engine.interrupts`). The reason is reported as the termination, the gap beside it.

No solve runs unbounded: every master solve gets ``min(solve_time_limit, what is left of time_limit)`` seconds,
passed to the solver itself. A solve stopped by what is left of ``time_limit`` ends the fit with termination
``time_limit`` and the last solved master's point; a solve stopped by the per-solve cap raises
:class:`~mmprog.exceptions.SolverError` with the solver's words (after writing the checkpoint, when one is kept).
"""
from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass, fields

import numpy as np

from . import interrupts
from .masters import solve_master
from .records import EngineRun, IterationRecord, history_as_dicts, relative_gap
from ..exceptions import ParameterError, SolverError, check_param
from ..programs.base import Dims, Solution
from ..solvers.base import SOLVE_TIME_LIMIT

log = logging.getLogger("mmprog.engine.loop")


#: The default of ``gap_tol``: the fit is certified within 1 % of its program's optimum (relative to the full
#: objective). Chosen by ``python -m mmprog.bench gaptol`` (record docs/records/gaptol.json: P0, C = 1, the first
#: 2,000 CoNLL-2000 sentences, rich templates, test F1 against gap_tol from 1e-1 to 1e-3): F1 does not move over that
#: range, so tighter costs time for nothing; 1e-2 rather than 1e-1 because the certificate is also the promise that
#: two back ends' answers agree to within it (issue 37 asks for 1e-2 or tighter).
DEFAULT_GAP_TOL = 1e-2

#: Without ``eps``, the violation a cut must exceed to be added (the n-slack scale's losses are counts): a floor
#: against re-adding a cut the master already holds, which a solver's tolerance would otherwise let through.
MIN_EPS = 1e-9


@dataclass
class Settings:
    """The loop's settings, validated once with messages naming parameter, range and value got.

    Attributes
    ----------
    slack : {"n", "one"}
        n-slack (a working set per example) or 1-slack (one aggregated cut per round).
    eps : float, optional
        The ε rule, an option: stop once no constraint is violated by more than ε (n-slack: per example; 1-slack: on
        the averaged risk), termination ``"eps"`` unless the gap is then ≤ ``gap_tol`` (default
        :data:`DEFAULT_GAP_TOL`) too (``"converged"``); cuts violated by at most ε are not added. Default None: no ε
        rule, cuts violated by more than :data:`MIN_EPS` are added.
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
    show_every : int, optional
        Call ``show(model, record)`` every this many rounds (``mmprog train --show-every``).
    snapshot_iters : iterable of int
        Rounds after which the model is written out by ``show`` callbacks (``--at-iter``).
    solve_time_limit : float
        Cap in seconds on one master solve, handed to the solver (default :data:`SOLVE_TIME_LIMIT`).
    checkpoint : str, optional
        File (``.npz``) to keep the working set and the iterate in (:mod:`mmprog.engine.checkpoint`); written every
        ``checkpoint_every`` rounds and when the fit ends by interruption, time limit or a capped solve.
    checkpoint_every : int, optional
        Rounds between checkpoints (default: only at the end, when ``checkpoint`` is given).
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
        The stopping rule: stop (termination ``"converged"``) once the relative gap (upper − lower) / max(1, |upper|)
        between the best full objective and the master's optimum is ≤ ``gap_tol``. Default: :data:`DEFAULT_GAP_TOL`
        without ``eps``; with ``eps`` and no ``gap_tol`` the ε rule alone stops the fit, and it is ``"converged"``
        only if the gap is then ≤ :data:`DEFAULT_GAP_TOL`.
    drop_tol : float
        A multiplier at most this is zero for ``drop_after``.
    progress : bool
        A progress line on a terminal.
    solve_options : dict, optional
        Solver options handed to every master solve through Pyomo.
    """

    slack: str = "n"
    eps: float | None = None
    max_iter: int = 500
    time_limit: float | None = None
    drop_after: int | None = None
    drop_tol: float = 1e-9
    max_cuts: int | None = None
    show_every: int | None = None
    show: object = None
    progress: bool = False
    snapshot_iters: tuple = ()
    solve_options: dict | None = None
    solve_time_limit: float = SOLVE_TIME_LIMIT
    checkpoint: str | None = None
    checkpoint_every: int | None = None
    stabilise: str | None = None
    inout_weight: float = 0.8
    line_search: int = 0
    gap_tol: float | None = None

    def __post_init__(self):
        check_param("slack", self.slack, self.slack in ("n", "one"), '"n" or "one"')
        if self.eps is not None:
            check_param("eps", self.eps, isinstance(self.eps, (int, float)) and not isinstance(self.eps, bool)
                        and self.eps > 0, "a float > 0 or None")
        if self.gap_tol is None and self.eps is None:
            self.gap_tol = DEFAULT_GAP_TOL
        check_param("max_iter", self.max_iter, isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 1,
                    "an int >= 1")
        if self.time_limit is not None:
            check_param("time_limit", self.time_limit, self.time_limit > 0, "a number of seconds > 0 or None")
        check_param("solve_time_limit", self.solve_time_limit,
                    isinstance(self.solve_time_limit, (int, float)) and self.solve_time_limit > 0,
                    "a number of seconds > 0")
        check_param("stabilise", self.stabilise, self.stabilise in (None, "in-out"), 'None or "in-out"')
        check_param("line_search", self.line_search, isinstance(self.line_search, (int, np.integer))
                    and self.line_search >= 0 and not isinstance(self.line_search, bool), "an int >= 0")
        check_param("inout_weight", self.inout_weight,
                    isinstance(self.inout_weight, (int, float)) and 0 <= self.inout_weight < 1, "a float in [0, 1)")
        if self.gap_tol is not None:
            check_param("gap_tol", self.gap_tol, isinstance(self.gap_tol, (int, float))
                        and not isinstance(self.gap_tol, bool) and self.gap_tol > 0, "a float > 0 or None")
        if self.max_cuts is not None:
            check_param("max_cuts", self.max_cuts, isinstance(self.max_cuts, (int, np.integer))
                        and self.max_cuts >= 2, "an int >= 2 or None")
        if self.checkpoint_every is not None:
            check_param("checkpoint_every", self.checkpoint_every,
                        isinstance(self.checkpoint_every, (int, np.integer)) and self.checkpoint_every >= 1,
                        "an int >= 1")
            if self.checkpoint is None:
                raise ParameterError("checkpoint_every needs checkpoint= (the file to keep the working set in)")


#: the names :func:`run` takes as settings
SETTINGS = tuple(f.name for f in fields(Settings))


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


def should_stop(max_violation, eps, iteration, max_iter, elapsed, time_limit, interrupted=None, gap=None,
                gap_tol=DEFAULT_GAP_TOL):
    """The one stopping rule; returns the termination reason or None.

    ``converged`` only when the certificate holds: ``gap`` ≤ ``gap_tol`` (``gap`` None while no bound is known;
    ``gap_tol`` None: the ε rule alone stops the fit, certified at :data:`DEFAULT_GAP_TOL`); ``eps`` when no cut is
    violated by more than ``eps`` (the ε rule, or :data:`MIN_EPS` without one) and the gap is above that; then
    ``interrupted``, ``max_iter``, ``time_limit``.
    """
    certified = gap is not None and gap <= (DEFAULT_GAP_TOL if gap_tol is None else gap_tol)
    if gap_tol is not None and certified:
        return "converged"
    if max_violation <= (MIN_EPS if eps is None else eps):
        return "converged" if certified else "eps"
    if interrupted:
        return "interrupted"
    if iteration >= max_iter:
        return "max_iter"
    if time_limit is not None and elapsed >= time_limit:
        return "time_limit"
    return None


def run(program, oracle, *, solver, w0=None, model=None, resume=None, seed=None, **settings):
    """Run the cutting-plane loop (one :class:`CuttingPlane` fit).

    Parameters
    ----------
    program : Program
        The master program (built here unless ``model`` is given).
    oracle : Oracle
        Separation oracle over the training data.
    solver : Solver
        From :func:`mmprog.solvers.get_solver`; checked against the program's class before any work.
    w0 : ndarray, shape (dim,), optional
        Starting point for the first separation (default 0).
    model : ConcreteModel, optional
        Continue growing an existing master (e.g. the next EM round); its working set is kept.
    resume : mmprog.engine.checkpoint.Checkpoint, optional
        Continue a checkpointed fit: its cuts are added to a fresh master, which is re-solved, and the loop goes on
        from the saved round with the saved history and upper bound.
    seed : mmprog.engine.checkpoint.Checkpoint, optional
        Warm start along a C path: the active cuts of an earlier master of the same program, feature map and slack
        form (:func:`mmprog.engine.checkpoint.of_master`), added to the fresh master at this C, which is solved
        before the first round. A cut wᵀΔF ≥ Δℓ − ξ holds at every C (only the objective has C), so the master's
        optimum is still a lower bound on the program's; round, history, upper bound and w start afresh (they
        belong to the other C). ``solution.extra["warm_start_cuts"]`` says how many cuts it gave.
    **settings
        The loop's settings, each named and explained in :class:`Settings` (``slack``, ``eps``, ``max_iter``,
        ``time_limit``, ``drop_after``, ``max_cuts``, ``checkpoint``, ``stabilise``, ``gap_tol``, ...).

    Returns
    -------
    EngineRun
        ``termination`` is one of :data:`mmprog.engine.records.TERMINATIONS`.
    """
    fit = CuttingPlane(program, oracle, solver, Settings(**settings))
    fit.start(model=model, w0=w0, resume=resume, seed=seed)
    return fit.run()


class CuttingPlane:
    """One fit of the cutting-plane loop: the master, the iterate, the bounds and the history between rounds.

    A round is six named stages, each a method: :meth:`separate` (the oracle at the current point, the upper
    bound) → :meth:`add` (the new cuts into the master) → :meth:`solve` (the master, warm, capped in time) →
    :meth:`bound` (the master's point and optimum, the lower bound; inactive cuts dropped or aggregated) →
    :meth:`stop` (the one stopping rule) → :meth:`record` (history, log, progress, checkpoint, show callback).
    """

    def __init__(self, program, oracle, solver, settings):
        self.program, self.oracle, self.solver, self.s = program, oracle, solver, settings
        self.fmap, self.prepared = oracle.fmap, oracle.prepared
        if self.prepared.n == 0:
            raise ParameterError("the training set is empty; give at least one example")
        self.n_slacks = self.prepared.n if settings.slack == "n" else 1
        self.t_start = time.perf_counter()
        self.timings = {"oracle": 0.0, "pyomo": 0.0, "solver": 0.0}
        self.history, self.it, self.upper, self.elapsed_before = [], 0, np.inf, 0.0
        self.model = self.solution = self.hinge = None
        self.lower = 0.0
        #: cuts an earlier master seeded this one with (``start(seed=...)``)
        self.seeded = 0
        # the in-out stability centre: the point of the best full objective separated in this run (a resumed fit
        # keeps the saved upper bound but not its point, so the centre restarts from its first separation)
        self.w_best, self.best_value = None, np.inf
        self.zero_rounds = np.zeros(0, dtype=np.int64)
        #: a cut is added when violated by more than this (the ε rule's ε, else the floor MIN_EPS)
        self.select_eps = MIN_EPS if settings.eps is None else settings.eps

    # --- before the first round -----------------------------------------------------------------------------
    def start(self, model=None, w0=None, resume=None, seed=None):
        """Build the master (or take ``model`` to grow further) and load a checkpoint's cuts into it (``resume``:
        with its round, history, upper bound and iterate) or an earlier master's active cuts (``seed``, a
        :class:`~mmprog.engine.checkpoint.Checkpoint` of :func:`~mmprog.engine.checkpoint.of_master`: the cuts
        alone, the rest belongs to that fit's C)."""
        program, fmap = self.program, self.fmap
        t0 = time.perf_counter()
        if model is None:
            self.solver.require(program.problem_class)
            dims = Dims(n=self.prepared.n, dim=fmap.dim, n_slacks=self.n_slacks, groups=lambda: fmap.groups,
                        group_names=fmap.group_names)
            model = program.build(dims)
        self.model = model
        if seed is not None:
            # cuts hold at every C (wᵀΔF ≥ Δℓ − ξ has no C): the master at this C starts with them, solved first
            self.seeded = self.add_saved_cuts(seed, 0)
        if resume is not None:
            self.add_saved_cuts(resume, int(resume.meta["iteration"]))
            self.history = [IterationRecord(**h) for h in resume.meta["history"]]
            self.it, self.upper = int(resume.meta["iteration"]), float(resume.meta["upper_bound"])
            self.elapsed_before = float(resume.meta.get("elapsed", 0.0))
            w0 = resume.w
        self.timings["pyomo"] += time.perf_counter() - t0
        # a 1-slack cut of a chain with 0/1 token features is held as its labeling where the master allows it
        # (mmprog.cuts.LabelingCut: ~1 MB against ~100 MB a cut on full CoNLL-2002 NER)
        self.oracle.labeling_cuts = self.s.slack == "one" and program.reads_labeling_cuts(model)
        self.w = np.zeros(fmap.dim) if w0 is None else np.asarray(w0, dtype=np.float64)
        self.own_w = w0 is None     # w is the engine's (not the caller's w0): it may be written over once used
        self.xi = np.zeros(self.n_slacks) if resume is None else resume.xi.copy()

    def add_saved_cuts(self, saved, round_):
        """The cuts of ``saved`` (a :class:`~mmprog.engine.checkpoint.Checkpoint`), explicit rows and labeling cuts
        (made on this fit's token matrix), into the master as of round ``round_``; returns how many."""
        saved.check_compatible(self.fmap, self.n_slacks)
        model = self.model
        if len(saved.cuts):
            model.ws.round = round_
            self.program.add_cuts(model, saved.cuts)
        labelings = saved.labeling_cuts(self.fmap, self.prepared)
        for cut in labelings:
            model.ws.round = round_
            self.program.add_cuts(model, cut)
        return len(saved.cuts) + len(labelings)

    def run(self):
        """Rounds until a termination; returns the :class:`EngineRun`."""
        termination = None
        with interrupts.catch_interrupts():
            if self.model.ws.size and not self._first_solve():
                termination = "time_limit"
            self.lower = self.solution.objective if self.solution else 0.0
            if self.history:
                self.lower = max(self.lower, self.history[-1].lower_bound)
            self.progress = _Progress(self.s.progress)
            log.info("%5s %14s %14s %14s %10s %10s %6s %8s %8s %8s", "iter", "objective", "lower", "upper", "gap",
                     "max viol", "cuts", "oracle", "pyomo", "solver")
            self.completed = self.it    # rounds whose master was solved (a resumed fit starts from the saved one)
            while termination is None:
                if interrupts.requested():
                    termination = "interrupted"
                    break
                self.it += 1
                try:
                    termination = self.round()
                except KeyboardInterrupt:
                    # a second signal: the round is abandoned; the last solved master's point is kept
                    termination = "interrupted"
            self.it = self.completed
            self.progress.close()
            if self.s.checkpoint is not None and (termination != "converged" or self.s.checkpoint_every):
                self.save_checkpoint(termination)
        return self.finish(termination)

    def round(self):
        """One round: separate → stop → add → solve → bound → record. Returns a termination or None."""
        t0 = time.perf_counter()
        new, viol, max_violation = self.separate()
        t_oracle = time.perf_counter() - t0
        self.timings["oracle"] += t_oracle
        termination = self.stop(max_violation)
        if termination is not None:
            return termination
        if not np.isfinite(max_violation):
            max_violation = float(viol.max(initial=0.0))
        t_pyomo = self.add(new)
        t0 = time.perf_counter()
        status = self.solve()
        if status is None:
            return "time_limit"
        t_pyomo += time.perf_counter() - t0 - status.solver_time
        t_pyomo += self.bound()
        self.timings["pyomo"] += t_pyomo
        self.timings["solver"] += status.solver_time
        self.record(new, max_violation, t_oracle, t_pyomo, status.solver_time)
        return None

    # --- the stages -------------------------------------------------------------------------------------------
    def separate(self):
        """The oracle at the current point (or at the in-out point first): (new cuts, their violations, the
        violation the stopping rule reads — inf when the cuts came from the in-out point)."""
        s, w, xi = self.s, self.w, self.xi
        if s.stabilise == "in-out" and self.w_best is not None and self.solution is not None:
            # in-out: the cuts at w_sep are kept if they cut off the master's point (w, ξ)
            centre = self.w_best
            cand, _ = self.evaluate(s.inout_weight * centre + (1.0 - s.inout_weight) * w)
            viol = cand.violation(w, xi)
            # the line search: the full objective (an upper bound) on more points of the segment from the master's
            # point (λ = 0) to the centre; only the upper bound and the centre use them
            for lam in np.arange(s.line_search) / max(s.line_search, 1):
                self.evaluate(lam * centre + (1.0 - lam) * w)
            if (viol > self.select_eps).any():
                return cand.select(viol > self.select_eps), viol, np.inf
        cand, self.hinge = self.evaluate(w)
        if s.slack == "n":
            viol = self.hinge - xi[cand.example]
            return cand.select(viol > self.select_eps), viol, float(viol.max(initial=0.0))
        # R_emp(w) − R_ws(w): averaged risks; ξ of the 1-slack master is already on the average scale (the cut's
        # own violation: a CountCut reads its counts without making the float row)
        viol = cand.violation(w, xi)
        return cand, viol, float(viol[0])

    def evaluate(self, point):
        """Separate at ``point``; its full objective lowers the upper bound and may make it the best point."""
        if self.s.slack == "n":
            cuts, hinge = self.oracle.separate(point)
        else:
            cuts, hinge = self.oracle.separate_one_slack(point)
        hinge = np.maximum(hinge, 0.0)
        value = self.program.objective_at(point, hinge)
        self.upper = min(self.upper, value)
        # only the in-out rule reads the centre: holding it otherwise kept a second w alive (424 MB on NER)
        if self.s.stabilise is not None and value < self.best_value:
            self.best_value, self.w_best = value, point
        return cuts, hinge

    def add(self, new):
        """The new cuts into the master; returns the seconds it took."""
        t0 = time.perf_counter()
        self.model.ws.round = self.it
        self.program.add_cuts(self.model, new)
        return time.perf_counter() - t0

    def solve(self):
        """The master, warm, capped at ``min(solve_time_limit, what is left of time_limit)`` inside the solver;
        None when what is left of ``time_limit`` stopped it (or nothing is left)."""
        seconds, fit_bound = self.budget()
        if seconds <= 0:
            return None
        try:
            return solve_master(self.program, self.model, self.solver, options=self.s.solve_options,
                                time_limit=seconds)
        except SolverError as e:
            if e.termination != "max_time":
                raise
            if fit_bound:
                return None
            if self.s.checkpoint is not None:
                self.save_checkpoint("solve_time_limit")
            raise SolverError(f"solver {self.solver.name} stopped the master solve at the per-solve cap "
                              f"solve_time_limit={seconds:g} s ({e.solver_message}); raise solve_time_limit "
                              f"(mmprog train --solve-time-limit)", termination=e.termination,
                              solver_message=e.solver_message) from None

    def bound(self):
        """The master's point and optimum (the lower bound); inactive cuts dropped or aggregated. Returns the
        seconds spent reading and aggregating."""
        t0 = time.perf_counter()
        model, s = self.model, self.s
        if s.stabilise is None and self.own_w:
            # this round's point is not read again (its cuts are in the master, and without the in-out rule no
            # centre keeps it): a program may write the next w into it (m3n's Gram dual does) instead of holding two
            # w-sized vectors at once, 424 MB each on full CoNLL-2002 NER. Never the caller's w0.
            model.master_state.w_spare = self.w
        self.solution = self.program.read_solution(model)
        model.master_state.w_spare = None          # a program that did not take it must not keep it alive
        self.own_w = True
        seconds = time.perf_counter() - t0
        self.w, self.xi = self.solution.w, self.solution.xi
        self.lower = max(self.lower, self.solution.objective)
        if s.drop_after:
            self.zero_rounds = drop_inactive(self.program, model, self.solution.alpha, self.zero_rounds,
                                             s.drop_after, s.drop_tol)
        if s.max_cuts is not None:
            t0 = time.perf_counter()
            aggregate_oldest(self.program, model, self.solution.alpha, s.max_cuts)
            seconds += time.perf_counter() - t0
        return seconds

    def stop(self, max_violation):
        """The one stopping rule (:func:`should_stop`): the gap first, then the ε rule and the limits."""
        s = self.s
        # before the first solve the lower bound is the empty master's optimum, 0 (every program's objective is a
        # regulariser plus C Σ ξ ≥ 0), which certifies w₀ only when nothing is violated there
        known = self.solution is not None or max_violation <= self.select_eps
        gap = relative_gap(self.upper, self.lower) if known and np.isfinite(self.upper) else None
        return should_stop(max_violation, s.eps, self.it - 1, s.max_iter, time.perf_counter() - self.t_start,
                           s.time_limit, interrupts.requested(), gap=gap, gap_tol=s.gap_tol)

    def record(self, new, max_violation, t_oracle, t_pyomo, t_solver):
        """History row, log line, progress line, checkpoint and show callback of the round just solved."""
        s, ws, sol = self.s, self.model.ws, self.solution
        rec = IterationRecord(
            iteration=self.it, objective=sol.objective, lower_bound=self.lower, upper_bound=self.upper,
            gap=relative_gap(self.upper, self.lower), max_violation=max_violation, n_cuts=ws.size,
            n_active=int(ws.active_mask().sum()), cut_nnz=int(ws.nnz), new_cuts=len(new), oracle_time=t_oracle,
            pyomo_time=t_pyomo, solver_time=t_solver, elapsed=self.elapsed_before + time.perf_counter() - self.t_start)
        self.history.append(rec)
        self.completed = self.it
        log.info("%5d %14.8g %14.8g %14.8g %10.3e %10.3e %6d %8.3f %8.3f %8.3f", rec.iteration, rec.objective,
                 rec.lower_bound, rec.upper_bound, rec.gap, rec.max_violation, rec.n_cuts, rec.oracle_time,
                 rec.pyomo_time, rec.solver_time)
        self.progress.update(rec)
        if s.checkpoint is not None and s.checkpoint_every and self.it % s.checkpoint_every == 0:
            self.save_checkpoint()
        if s.show is not None and ((s.show_every and self.it % s.show_every == 0) or self.it in s.snapshot_iters):
            s.show(self.model, rec)

    # --- around the rounds ------------------------------------------------------------------------------------
    def _first_solve(self):
        """Solve a master that starts with cuts (a resumed fit, or a model grown by an earlier run); False when
        what is left of ``time_limit`` stopped it."""
        t0 = time.perf_counter()
        status = self.solve()
        if status is None:
            return False
        self.timings["solver"] += status.solver_time
        self.timings["pyomo"] += time.perf_counter() - t0 - status.solver_time
        self.solution = self.program.read_solution(self.model)
        self.w, self.xi = self.solution.w, self.solution.xi
        self.own_w = True
        return True

    def budget(self):
        """(seconds for the next solve, whether the fit's own time limit is what binds)."""
        s = self.s
        if s.time_limit is None:
            return s.solve_time_limit, False
        left = s.time_limit - (time.perf_counter() - self.t_start)
        return (left, True) if left < s.solve_time_limit else (s.solve_time_limit, False)

    def save_checkpoint(self, termination=None):
        from . import checkpoint as ckpt
        ckpt.save(self.s.checkpoint, model=self.model, program=self.program, fmap=self.fmap, w=self.w, xi=self.xi,
                  slack=self.s.slack, iteration=self.it,
                  elapsed=self.elapsed_before + time.perf_counter() - self.t_start, upper_bound=self.upper,
                  history=history_as_dicts(self.history), termination=termination)

    def finish(self, termination):
        """The :class:`EngineRun`; a fit that solved nothing returns w = w0 with its full objective."""
        solution, model = self.solution, self.model
        if solution is None:
            # the first separation found nothing violated (w = w0 is optimal with an empty working set) or the fit
            # stopped before its first solve
            hinge = self.hinge
            if hinge is None:
                _, hinge = self.oracle.separate(self.w)
            solution = Solution(w=self.w, xi=self.xi, alpha=np.zeros(model.ws.size), dual_objective=None,
                                objective=self.program.objective_at(self.w, np.maximum(hinge, 0.0)))
        if self.seeded:
            solution.extra["warm_start_cuts"] = self.seeded
        self.timings["total"] = time.perf_counter() - self.t_start
        log.info("termination: %s after %d rounds, %d cuts, objective %.8g (upper bound %.8g)", termination, self.it,
                 model.ws.size, solution.objective, self.upper)
        return EngineRun(model=model, solution=solution, history=self.history, termination=termination,
                         n_iter=self.it, timings=self.timings, upper_bound=float(self.upper))


def drop_inactive(program, model, alpha, zero_rounds, drop_after, tol):
    """Deactivate the cuts whose multiplier stayed ≤ ``tol`` for ``drop_after`` consecutive rounds (their rows
    are released from memory); returns the updated count of zero rounds per cut."""
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


def aggregate_oldest(program, model, alpha, max_cuts):
    """Replace the oldest active cuts of every slack holding more than ``max_cuts`` by their α-weighted average
    (see ``max_cuts`` in :func:`run`); the aggregate's α starts at Σ_S α.

    Parameters
    ----------
    alpha : ndarray, shape (r,)
        The multipliers of the master just solved (r = cuts in the working set).
    """
    from ..cuts import Cuts
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
            warm = model.master_state.gram_daqp
            if warm is not None and len(warm.alpha) == len(alpha):
                kept = warm.alpha.copy()
                kept[S] = 0.0
                warm.alpha = np.r_[kept, total]
        program.drop_cuts(model, list(S))
        ws.release(S)
