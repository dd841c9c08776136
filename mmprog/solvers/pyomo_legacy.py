"""What the back ends reached through Pyomo's legacy interfaces (``SolverFactory``: GLPK, CBC, MOSEK, Gurobi, the
SCIP and Ipopt executables) share: the status map, the solve that loads nothing until the status is known, the
executable-LP base class and the handle over the legacy persistent interfaces (gurobi_persistent,
mosek_persistent)."""

from __future__ import annotations

import importlib.util
import math
import os
import shutil
import time

from ..exceptions import SolverError, SolverUnavailable
from .base import (SOLVE_TIME_LIMIT, Availability, AvailabilityReport, PersistentHandle, ProblemClass, Solver,
                   SolveStatus,
                   active_objective, dual_suffix, finish_solve, flatten, one_line_message, pyomo_environ, probe_model, record_duals)

#: Pyomo's legacy TerminationCondition names (used by the GLPK, CBC, MOSEK and executable interfaces, which report
#: the solver's words in the results' message) -> normalised termination.
PYOMO_LEGACY_STATUS = {
    "optimal": "optimal", "globallyOptimal": "optimal", "locallyOptimal": "optimal",
    "infeasible": "infeasible", "unbounded": "unbounded", "infeasibleOrUnbounded": "infeasible_or_unbounded",
    "maxIterations": "max_iterations", "maxEvaluations": "max_iterations", "maxTimeLimit": "max_time",
    "minFunctionValue": "other", "minStepLength": "numerical", "solverFailure": "numerical",
    "internalSolverError": "error", "error": "error", "invalidProblem": "error", "licensingProblems": "error",
    "resourceInterrupt": "error", "userInterrupt": "other", "intermediateNonInteger": "other",
    "feasible": "other", "other": "other", "unknown": "other", "noSolution": "other",
}


def legacy_status(results, status_map=PYOMO_LEGACY_STATUS):
    """(termination, solver words) from a legacy Pyomo SolverResults."""
    tc = results.solver.termination_condition
    tc_name = getattr(tc, "name", str(tc))
    words = []
    for attr in ("message", "termination_message"):
        val = getattr(results.solver, attr, None)
        val = "" if val is None else str(val).strip()
        if val and val != "<undefined>" and val not in words:
            words.append(val)
    words.append(f"termination {tc_name}")
    return status_map.get(tc_name, "other"), one_line_message("; ".join(words))


def solve_legacy(name, factory_name, model, options, load_duals, log_status=None):
    """Solve through one of Pyomo's legacy (file or direct) interfaces without letting it load anything, then load
    the point and raw duals only when there is one. ``log_status`` maps the solver's log text to (termination,
    words) where the plugin's own reading of the status is unreliable."""
    pe = pyomo_environ()
    if load_duals:
        dual_suffix(model, create=True)
    opt = pe.SolverFactory(factory_name)
    kw = {}
    logdir = None
    if log_status is not None:
        import tempfile
        logdir = tempfile.mkdtemp(prefix="mmprog_")
        kw["logfile"] = os.path.join(logdir, "solver.log")
    t0 = time.perf_counter()
    try:
        res = opt.solve(model, load_solutions=False, options=options, **kw)
        solver_time = time.perf_counter() - t0
        termination, words = legacy_status(res)
        if log_status is not None:
            with open(kw["logfile"]) as fh:
                from_log = log_status(fh.read())
            if from_log is not None:
                termination, words = from_log
    finally:
        if logdir is not None:
            shutil.rmtree(logdir, ignore_errors=True)
    sol_status = "none"
    if len(res.solution) > 0 and termination not in ("infeasible", "infeasible_or_unbounded", "unbounded"):
        model.solutions.load_from(res)
        sol_status = "optimal" if termination == "optimal" else "feasible"
        if load_duals or dual_suffix(model, create=False) is not None:
            # Pyomo loads every import suffix the model has, asked or not: record whose signs are in it
            record_duals(model, (name, factory_name))
    elif termination == "infeasible":
        sol_status = "infeasible"
    objective = pe.value(active_objective(model).expr, exception=False) if sol_status != "none" else None
    return SolveStatus(termination, sol_status, words, solver_time, None if objective is None else float(objective))


class ExecutableLPSolver(Solver):
    """An LP solver driven by Pyomo through its executable (LP/MPS files)."""

    capabilities = frozenset({ProblemClass.LP})
    executable = ""
    factory_name = ""
    time_option = ""
    log_status = None

    def _probe(self):
        exe = shutil.which(self.executable)
        if exe is None:
            return AvailabilityReport(Availability.NotFound, f"no `{self.executable}` executable on PATH; "
                                                             f"{self.install}")
        m, expected = probe_model(quadratic=False)
        status = solve_legacy(self.name, self.factory_name, m, {}, True, type(self).log_status)
        if not status.ok or abs(status.objective - expected) > 1e-6:
            return AvailabilityReport(Availability.BadVersion,
                                      f"{exe} failed its test LP ({status.solver_message}); {self.install}")
        return AvailabilityReport(Availability.FullLicense, f"{exe} works")

    def _time_options(self, time_limit):
        return {self.time_option: max(1, int(math.ceil(time_limit)))} if time_limit else {}

    def _solve(self, model, options, warm, load_duals, time_limit):
        opts = self._time_options(time_limit)
        opts.update(options)
        try:
            return solve_legacy(self.name, self.factory_name, model, opts, load_duals, type(self).log_status)
        except Exception as exc:
            raise SolverError(f"solver {self.name} failed: {one_line_message(exc)}", termination="error",
                              solver_message=one_line_message(exc)) from exc


def find_module(mod):
    try:
        return importlib.util.find_spec(mod) is not None
    except (ImportError, ValueError):
        return False


def raise_gurobi(exc):
    msg = one_line_message(exc)
    if "size-limited" in msg or "10010" in msg:
        raise SolverUnavailable(f"solver gurobi (TooLarge): {msg}; use highs or ipopt, or a full Gurobi licence") \
            from exc
    raise SolverError(f"solver gurobi failed: {msg}", termination="error", solver_message=msg) from exc


class LegacyPersistentHandle(PersistentHandle):
    """Handle over one of Pyomo's legacy persistent interfaces (gurobi_persistent, mosek_persistent)."""

    def __init__(self, solver, factory_name, model, time_opts, defaults=None, words=None):
        pe = pyomo_environ()
        self.solver = solver
        self.solver_name = solver.name
        self.model = model
        self._time_opts = time_opts
        self._words = words
        self._opt = pe.SolverFactory(factory_name)
        for k, v in (defaults or {}).items():
            self._opt.options[k] = v
        try:
            self._opt.set_instance(model)
        except Exception as exc:
            raise_gurobi(exc) if solver.name == "gurobi" else self._raise(exc)
        self._factory_name = factory_name

    def _raise(self, exc):
        raise SolverError(f"solver {self.solver_name} failed: {one_line_message(exc)}", termination="error",
                          solver_message=one_line_message(exc)) from exc

    def add_constraints(self, cons):
        for c in flatten(cons):
            self._opt.add_constraint(c)

    def remove_constraints(self, cons):
        for c in flatten(cons):
            self._opt.remove_constraint(c)

    def add_variables(self, variables):
        for v in flatten(variables):
            self._opt.add_var(v)

    def update_variables(self, variables):
        for v in flatten(variables):
            self._opt.update_var(v)

    def update_objective(self):
        self._opt.set_objective(active_objective(self.model))

    def solve(self, *, load_duals=True, time_limit=None, raise_on_failure=True):
        pe = pyomo_environ()
        opts = self._time_opts(time_limit or SOLVE_TIME_LIMIT)
        t0 = time.perf_counter()
        try:
            res = self._opt.solve(load_solutions=False, save_results=False, options=opts)
        except Exception as exc:
            raise_gurobi(exc) if self.solver_name == "gurobi" else self._raise(exc)
        solver_time = time.perf_counter() - t0
        termination, words = legacy_status(res)
        if self._words is not None:
            t2, words = self._words(self._opt, words)
            termination = t2 or termination
        sol_status = "none"
        if termination not in ("infeasible", "infeasible_or_unbounded", "unbounded"):
            try:
                self._opt.load_vars()
                sol_status = "optimal" if termination == "optimal" else "feasible"
                if load_duals and termination == "optimal":
                    dual_suffix(self.model, create=True)
                    self._opt.load_duals()
                    record_duals(self.model, (self.solver_name, self._factory_name))
            except Exception:
                sol_status = "none"
        objective = pe.value(active_objective(self.model).expr, exception=False) if sol_status != "none" else None
        status = SolveStatus(termination, sol_status, words, solver_time,
                             None if objective is None else float(objective))
        return finish_solve(self.solver_name, status, raise_on_failure)
