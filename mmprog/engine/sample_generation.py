"""Constraint generation over samples: a master whose rows are *samples* (not loss-augmented labelings) grown in
rounds, its columns growing with its rows.

Each round is five named stages of :class:`SampleGeneration`:

``add``
    the chosen samples' rows (the program's :meth:`sample_cuts`) and their new columns into the master, through
    the back end :func:`mmprog.engine.masters.choose_growth` picks (native HiGHS fed with CSR blocks, or the Pyomo
    model through the registry's solver);
``solve``
    the master, warm from the previous basis unless the round added more than ``warm_fraction`` new columns
    (then cold: a degenerate master re-solved hot can take ten times longer than presolved from scratch);
``separate``
    the violations of *all* samples at the master's point, one sparse product (the program's :meth:`violations`);
``record``
    history and log;
``stop``
    no sample outside the master violated (converged: the point, zero off the master's columns, is feasible for
    every sample and optimal for a relaxation, hence optimal), ``max_rounds`` or ``time_limit``;

then ``choose`` ranks the violated samples (the program's :meth:`ranking`) and takes the next batch, ``growth``
times larger than the last (a geometric schedule keeps the rounds logarithmic in m when the optimum needs most
samples). At the end ``certify`` reads the final master's multipliers, which — padded with zeros — are feasible for
the dual of the full program and certify the optimum.

The program (any with master form ``"lp_columns"``; today L∞'s (10), :class:`mmprog.programs.linf.LInf`) states
the mathematics the loop asks for: :meth:`sample_master`, :meth:`sample_cuts`, :meth:`first_samples`,
:meth:`violations`, :meth:`violated`, :meth:`ranking`, :meth:`solution`, :meth:`lp_size`, :meth:`record` /
:meth:`add_cuts` and, for the native back end, :meth:`grown_lp`, :meth:`grown_rows`, :meth:`load_point`,
:meth:`load_duals`, :meth:`margin_multipliers`. Nothing here names a program.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np

from ..exceptions import ParameterError, check_param


log = logging.getLogger("mmprog.engine.sample_generation")


@dataclass
class SampleRun:
    """What :func:`run` returns (``mmprog.linf.LInfRun``).

    Attributes
    ----------
    objective : float
        The master's optimum (L∞: t = ‖w‖∞ at the optimum of (10)).
    J : ndarray of int64, shape (nnz,)
        Sorted indices where w may be non-zero (the program's :meth:`solution`); w is 0 at every other index.
    w : ndarray, shape (nnz,)
        w on J.
    alpha : ndarray, shape (n_rows,)
        Multipliers of the master's sample rows (≥ 0 up to solver tolerance), in working-set order.
    working_set : ndarray of int64, shape (n_rows,)
        Sample ids in the master.
    master : pyomo ConcreteModel
        The master (its Pyomo components written on demand: use :attr:`model`).
    program : Program
        The program whose master it is.
    rounds : int
        Constraint-generation rounds (master solves).
    history : list of dict
        Per round: ``round``, ``objective``, ``violated``, ``added``, ``n_rows``, ``n_cols``, ``separation``,
        ``rows``, ``model``, ``solver`` (seconds).
    timings : dict
        Totals in seconds: ``separation`` (the products zᵢᵀw), ``rows`` (the samples' rows), ``model`` (the
        master's bookkeeping; on the Pyomo route also building the Pyomo rows and loading values), ``solver``,
        ``total``.
    termination : str
        ``"converged"`` (no sample violated), ``"max_rounds"`` or ``"time_limit"``.
    n_vars, n_cons, n_private : int
        The master's size (the program's :meth:`lp_size`; L∞: columns + 1, 2 · columns + rows, aggregated private
        columns).
    max_violation : float
        The largest violation over all m samples at the returned point (0 when none is violated).
    solver : str
    route : str
        ``"native"`` (the solver fed with CSR blocks) or ``"pyomo"`` (the registry solver through Pyomo).
    """

    objective: float
    J: np.ndarray
    w: np.ndarray
    alpha: np.ndarray
    working_set: np.ndarray
    master: object = field(repr=False)
    program: object = field(default=None, repr=False)
    rounds: int = 0
    history: list = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    termination: str = "converged"
    n_vars: int = 0
    n_cons: int = 0
    n_private: int = 0
    max_violation: float = 0.0
    solver: str = "highs"
    route: str = "pyomo"

    @property
    def model(self):
        """The master as an explicit Pyomo model (written on first access on the native route; Pyomo's plugins —
        writers, solver factories — loaded with it, :func:`mmprog.engine.records.load_pyomo_plugins`)."""
        from .records import load_pyomo_plugins
        load_pyomo_plugins()
        self.program.materialise(self.master)
        return self.master


@dataclass
class GenerationSettings:
    """The loop's settings, validated once (:func:`run` documents each)."""

    route: str = "auto"
    n_start: int = 100
    batch: int = 100
    growth: float = 2.0
    aggregate: bool = True
    tol: float = 1e-7
    max_rounds: int = 1000
    time_limit: float | None = None
    warm_fraction: float = 0.05

    def __post_init__(self):
        is_int = (int, np.integer)
        check_param("route", self.route, self.route in ("auto", "native", "pyomo"), '"auto", "native" or "pyomo"')
        check_param("n_start", self.n_start, isinstance(self.n_start, is_int) and self.n_start >= 1, "an int >= 1")
        check_param("batch", self.batch, isinstance(self.batch, is_int) and self.batch >= 1, "an int >= 1")
        check_param("growth", self.growth, isinstance(self.growth, (int, float)) and self.growth >= 1,
                    "a float >= 1")
        check_param("tol", self.tol, isinstance(self.tol, (int, float)) and 0 < self.tol < 1, "a float in (0, 1)")
        check_param("max_rounds", self.max_rounds, isinstance(self.max_rounds, is_int) and self.max_rounds >= 1,
                    "an int >= 1")
        if self.time_limit is not None:
            check_param("time_limit", self.time_limit, isinstance(self.time_limit, (int, float))
                        and self.time_limit > 0, "a number of seconds > 0 or None")


def lp_solver(name):
    """The registry's LP solver ``name``, refused unless it returns duals (they certify the optimum)."""
    from ..solvers import ProblemClass, get_solver
    slv = get_solver(name)
    slv.require(ProblemClass.LP)
    if not slv.gives_duals:
        raise ParameterError(f"solver {name!r} returns no duals, which certify the optimum of the master; use one "
                             f"that does, e.g. 'highs'")
    return slv


class SampleGeneration:
    """One run of the constraint generation over samples: its state and its stages (module docstring)."""

    def __init__(self, program, samples, solver, settings):
        from .masters import choose_growth
        self.program, self.samples, self.s = program, samples, settings
        self.slv = lp_solver(solver)
        self.t_start = time.perf_counter()
        self.timings = {"separation": 0.0, "rows": 0.0, "model": 0.0, "solver": 0.0}
        self.model = program.sample_master(samples, settings.aggregate)
        self.master = choose_growth(program, self.model, self.slv, settings.route)(program, self.model, self.slv)
        self.in_ws = np.zeros(samples.n, dtype=bool)
        self.chosen = program.first_samples(samples, settings.n_start)
        self.history, self.termination = [], "max_rounds"
        self.round, self.size, self.n_cols, self.objective = 0, float(settings.batch), 0, 0.0
        self.viol = self.bad = None

    def add(self):
        """The chosen samples' rows and their new columns into the master; returns whether to solve cold."""
        t0 = time.perf_counter()
        cuts = self.program.sample_cuts(self.samples, self.model, self.chosen)
        t1 = time.perf_counter()
        n_new = self.master.add(cuts)
        self.t_rows, self.t_model = t1 - t0, time.perf_counter() - t1
        cold = n_new > self.s.warm_fraction * max(self.n_cols, 1)
        self.n_cols += n_new
        self.in_ws[self.chosen] = True
        return cold

    def solve(self, cold):
        t0 = time.perf_counter()
        status, self.objective = self.master.solve(cold=cold)
        self.t_solver = status.solver_time
        self.t_model += max(0.0, time.perf_counter() - t0 - status.solver_time)

    def separate(self):
        """Violations of all samples at the master's point; the violated ones outside the master."""
        t0 = time.perf_counter()
        self.viol = self.program.violations(self.samples, self.model)
        self.t_sep = time.perf_counter() - t0
        self.bad = np.flatnonzero(self.program.violated(self.viol, self.s.tol) & ~self.in_ws)

    def record(self):
        for key, t in (("rows", self.t_rows), ("model", self.t_model), ("solver", self.t_solver),
                       ("separation", self.t_sep)):
            self.timings[key] += t
        n_rows = int(self.model.ws.size)
        self.history.append({"round": self.round, "objective": self.objective, "violated": int(self.bad.size),
                             "added": int(len(self.chosen)), "n_rows": n_rows, "n_cols": self.n_cols,
                             "separation": self.t_sep, "rows": self.t_rows, "model": self.t_model,
                             "solver": self.t_solver})
        log.info("round %d: objective %.10g, %d rows, %d columns, %d violated", self.round, self.objective, n_rows,
                 self.n_cols, self.bad.size)

    def stop(self):
        """Whether the loop ends here (and why, in ``termination``)."""
        if self.bad.size == 0:
            self.termination = "converged"
            return True
        if self.round >= self.s.max_rounds:
            return True
        if self.s.time_limit is not None and time.perf_counter() - self.t_start >= self.s.time_limit:
            self.termination = "time_limit"
            return True
        return False

    def choose(self):
        """The next batch: the most violated samples by the program's ranking, ``growth`` times more each round."""
        self.chosen = self.program.ranking(self.samples, self.viol, self.bad)[:int(self.size)]
        self.size *= self.s.growth

    def rounds(self):
        while True:
            self.round += 1
            self.solve(self.add())
            self.separate()
            self.record()
            if self.stop():
                return
            self.choose()

    def certify(self):
        """The final master's multipliers (the Pyomo route re-solves the optimal master warm to read them)."""
        t0 = time.perf_counter()
        status = self.master.certify()
        if status is not None:
            self.timings["solver"] += status.solver_time
        alpha = self.program.margin_multipliers(self.model)
        self.timings["model"] += time.perf_counter() - t0
        return alpha

    def result(self):
        alpha = self.certify()
        t0 = time.perf_counter()
        J, w = self.program.solution(self.samples, self.model)
        self.timings["model"] += time.perf_counter() - t0
        self.timings["total"] = time.perf_counter() - self.t_start
        return SampleRun(objective=self.objective, J=J, w=w, alpha=alpha,
                         working_set=self.model.ws.example_array(), master=self.model, program=self.program,
                         rounds=self.round, history=self.history, timings=self.timings,
                         termination=self.termination, max_violation=float(np.max(self.viol, initial=0.0)),
                         solver=self.slv.name, route=self.master.route, **self.program.lp_size(self.model))


def run(program, samples, solver="highs", **settings):
    """Grow ``program``'s master over ``samples`` by constraint generation (module docstring).

    Parameters
    ----------
    program : Program
        A program whose master has form ``"lp_columns"`` (:class:`mmprog.programs.linf.LInf`).
    samples : TensorSamples or KernelSamples
    solver : str
        A registered LP solver with duals.
    route : {"auto", "native", "pyomo"}
        ``"native"``: the back end registered for (form, solver) (:func:`mmprog.engine.masters.choose_growth`;
        HiGHS fed with CSR blocks), the Pyomo model written on demand; ``"pyomo"``: the Pyomo model grown round by
        round and solved through the registry (a persistent solver's copy, warm); ``"auto"``: native when one takes
        (form, solver), else Pyomo.
    n_start : int
        Rows of the first master (the program's :meth:`first_samples`).
    batch : int
        Most violated samples added in the second round; each later round adds ``growth`` times more.
    growth : float ≥ 1
    aggregate : bool
        Passed to the program's :meth:`sample_master` (L∞: one shared column per sample for its private indices).
    tol : float in (0, 1)
        Relative violation tolerance (the program's :meth:`violated`).
    max_rounds : int
    time_limit : float, optional
        Wall-clock seconds.
    warm_fraction : float
        Re-solve warm (from the previous basis) when a round adds at most this fraction of new columns, else cold.

    Returns
    -------
    SampleRun
    """
    gen = SampleGeneration(program, samples, solver, GenerationSettings(**settings))
    gen.rounds()
    return gen.result()
