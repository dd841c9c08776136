"""HiGHS through Pyomo's persistent contrib interface (which also takes quadratic objectives), with its
persistent handle: cuts appended to HiGHS's own copy of the model and re-solved warm."""

from __future__ import annotations

import importlib.util
import time
import weakref

from ..exceptions import SolverError
from .base import (SOLVE_TIME_LIMIT, Availability, AvailabilityReport, PersistentHandle, ProblemClass, Solver,
                   SolveStatus, active_objective, dual_suffix, finish_solve, flatten, one_line_message, probe_model, record_duals, register)

#: HiGHS model status (highspy.HighsModelStatus member names) -> normalised termination.
HIGHS_STATUS = {
    "kNotset": "other", "kLoadError": "error", "kModelError": "error", "kPresolveError": "error",
    "kSolveError": "numerical", "kPostsolveError": "numerical", "kModelEmpty": "other", "kOptimal": "optimal",
    "kInfeasible": "infeasible", "kUnboundedOrInfeasible": "infeasible_or_unbounded", "kUnbounded": "unbounded",
    "kObjectiveBound": "other", "kObjectiveTarget": "other", "kTimeLimit": "max_time",
    "kIterationLimit": "max_iterations", "kUnknown": "other", "kSolutionLimit": "other", "kInterrupt": "other",
    "kMemoryLimit": "error", "kHighsInterrupt": "other",
}


def _highs_opt(options=None):
    """A fresh pyomo.contrib.solver HiGHS interface, quiet, that never raises or loads on its own."""
    from pyomo.contrib.solver.solvers.highs import Highs
    opt = Highs()
    opt.config.load_solutions = False
    opt.config.raise_exception_on_nonoptimal_result = False
    opt.config.solver_options["output_flag"] = False
    for k, v in (options or {}).items():
        opt.config.solver_options[k] = v
    return opt


def _highs_status(opt, results, timer):
    """Normalised status, loading nothing."""
    h = opt._solver_model
    st = h.getModelStatus()
    st_name = getattr(st, "name", str(st))
    words = h.modelStatusToString(st)
    info = h.getInfo()
    termination = HIGHS_STATUS.get(st_name, "other")
    if termination == "optimal":
        sol_status = "optimal"
    elif info.primal_solution_status == 2:
        sol_status = "feasible"
    elif info.primal_solution_status == 1:
        sol_status = "infeasible"
    else:
        sol_status = "none"
    objective = results.incumbent_objective if sol_status in ("optimal", "feasible") else None
    solver_time = timer.get_total_time("optimize") if timer is not None else float("nan")
    return SolveStatus(termination, sol_status, f"HiGHS model status: {words}", float(solver_time),
                       None if objective is None else float(objective))


def _highs_fast_load_vars(opt):
    """Set every column's Pyomo variable from HiGHS's column values in one pass: about five times faster than
    Pyomo's loader, which builds a ComponentMap first (28 -> 5 ms per round for 2,040 columns). Relies on private
    maps of Pyomo's interface, so it answers False (use the public loader) when they are not as expected."""
    try:
        from pyomo.core.staleflag import StaleFlagManager
        vmap, known, sol = opt._pyomo_var_to_solver_var_map, opt._vars, opt._sol
        if sol is None or not sol.value_valid:
            return False
        order = getattr(opt, "_mmprog_column_order", None)
        if order is None or len(order) != len(vmap):
            order = [None] * len(vmap)
            for vid, k in vmap.items():
                order[k] = known[vid][0]
            opt._mmprog_column_order = order
        values = sol.col_value
        if len(values) != len(order):
            return False
        for v, val in zip(order, values):
            v.set_value(val, skip_validation=True)
        StaleFlagManager.mark_all_as_stale(delayed=True)
        return True
    except Exception:
        return False


def _highs_load(model, results, status, load_duals, source, opt=None):
    if status.solution_status in ("optimal", "feasible"):
        if opt is None or not _highs_fast_load_vars(opt):
            results.solution_loader.load_vars()
        if load_duals and status.termination == "optimal":
            try:
                d = results.solution_loader.get_duals()
            except Exception:  # HiGHS gives no valid duals (e.g. after a limit): leave the suffix alone
                return
            suffix = dual_suffix(model, create=True)
            for c, v in d.items():
                suffix[c] = v
            record_duals(model, source)


@register("highs")
class HighsSolver(Solver):
    """HiGHS through Pyomo's persistent ``highs`` interface (pyomo.contrib.solver): dual simplex for LPs, its
    active-set solver for convex QPs. ``appsi_highs`` refuses quadratic objectives; this interface takes them."""

    capabilities = frozenset({ProblemClass.LP, ProblemClass.QP})
    gives_duals = True
    persistent = True
    description = "HiGHS (highspy) via Pyomo's persistent contrib interface: simplex LP, active-set convex QP"
    install = "install it with: pip install highspy"

    def __init__(self):
        super().__init__()
        self._warm = weakref.WeakKeyDictionary()

    def _probe(self):
        if importlib.util.find_spec("highspy") is None:
            return AvailabilityReport(Availability.NotFound, f"highspy is not installed; {self.install}")
        from pyomo.common.timing import HierarchicalTimer
        m, expected = probe_model(quadratic=True)
        opt = _highs_opt()
        timer = HierarchicalTimer()
        res = opt.solve(m, timer=timer)
        status = _highs_status(opt, res, timer)
        if not status.ok or abs(status.objective - expected) > 1e-6:
            return AvailabilityReport(Availability.BadVersion,
                                      f"HiGHS failed its test QP ({status.solver_message}, objective "
                                      f"{status.objective}, expected {expected}); reinstall highspy")
        v = ".".join(map(str, opt.version()))
        return AvailabilityReport(Availability.FullLicense, f"HiGHS {v} (highspy) works")

    def _solve(self, model, options, warm, load_duals, time_limit):
        from pyomo.common.timing import HierarchicalTimer
        opt = self._warm.get(model) if warm else None
        if opt is None:
            opt = _highs_opt()
            if warm:
                self._warm[model] = opt
        if opt._solver_model is not None:
            # options persist inside a reused HiGHS object: this call's options must not leak into the next one
            opt._solver_model.resetOptions()
        # HiGHS compares time_limit with the object's run time summed over all its runs (a warm object has some)
        run_time = opt._solver_model.getRunTime() if opt._solver_model is not None else 0.0
        solver_options = {"output_flag": False, "time_limit": run_time + float(time_limit or SOLVE_TIME_LIMIT)}
        solver_options.update(options)
        timer = HierarchicalTimer()
        try:
            res = opt.solve(model, timer=timer, solver_options=solver_options)
        except Exception as exc:
            raise SolverError(f"solver highs could not take the model: {one_line_message(exc)}", termination="error",
                              solver_message=one_line_message(exc)) from exc
        status = _highs_status(opt, res, timer)
        _highs_load(model, res, status, load_duals, ("highs", "highs"), opt)
        return status

    def persistent_handle(self, model):
        return _HighsHandle(model)


class _HighsHandle(PersistentHandle):
    solver_name = "highs"

    def __init__(self, model):
        self.model = model
        self._opt = _highs_opt()
        au = self._opt.config.auto_updates
        for flag in ("check_for_new_or_removed_constraints", "check_for_new_or_removed_vars",
                     "check_for_new_or_removed_params", "check_for_new_objective", "update_constraints",
                     "update_vars", "update_parameters", "update_named_expressions", "update_objective"):
            setattr(au, flag, False)
        # set_instance needs the active config (normally created inside solve())
        self._opt._active_config = self._opt.config
        try:
            self._opt.set_instance(model)
        except Exception as exc:
            raise SolverError(f"solver highs could not take the model: {one_line_message(exc)}", termination="error",
                              solver_message=one_line_message(exc)) from exc

    def add_constraints(self, cons):
        cons = flatten(cons)
        if cons:
            self._opt.add_constraints(cons)

    def remove_constraints(self, cons):
        cons = flatten(cons)
        if cons:
            self._opt.remove_constraints(cons)

    def add_variables(self, variables):
        variables = flatten(variables)
        if variables:
            self._opt.add_variables(variables)

    def update_variables(self, variables):
        variables = flatten(variables)
        if variables:
            self._opt.update_variables(variables)

    def update_objective(self):
        import highspy
        # Pyomo's interface passes a Hessian only when the new objective has quadratic terms, so a previous one
        # would survive a switch to a linear objective: clear it first.
        self._opt._solver_model.passHessian(highspy.HighsHessian())
        self._opt.set_objective(active_objective(self.model))

    def solve(self, *, load_duals=True, time_limit=None, raise_on_failure=True):
        from pyomo.common.timing import HierarchicalTimer
        # HiGHS compares time_limit with the object's run time summed over all its runs, so: that sum + this solve
        self._opt.config.solver_options["time_limit"] = (self._opt._solver_model.getRunTime()
                                                         + float(time_limit or SOLVE_TIME_LIMIT))
        timer = HierarchicalTimer()
        res = self._opt.solve(self.model, timer=timer)
        status = _highs_status(self._opt, res, timer)
        _highs_load(self.model, res, status, load_duals, ("highs", "highs"), self._opt)
        return finish_solve("highs", status, raise_on_failure)


def run_highs(h, time_limit=None, raise_on_failure=True, objective_scale=1.0):
    """Run a highspy object and check its model status (:func:`mmprog.solvers.base.finish_solve`, in HiGHS's own words).

    Parameters
    ----------
    h : highspy.Highs
    time_limit : float or None
        Seconds (None: :data:`mmprog.solvers.SOLVE_TIME_LIMIT`; no solve runs unbounded).
    raise_on_failure : bool
        Raise :class:`mmprog.exceptions.SolverError` unless HiGHS reports an optimum.
    objective_scale : float
        The reported objective is ``objective_scale`` × HiGHS's (e.g. −1 for a maximisation handed over negated).

    Returns
    -------
    SolveStatus
    """
    # HiGHS compares time_limit with the object's run time summed over every run() so far, so a persistent
    # object's limit is that sum plus this solve's seconds (else a long fit's masters all "hit" the limit at once)
    h.setOptionValue("time_limit", h.getRunTime() + (float(time_limit) if time_limit else SOLVE_TIME_LIMIT))
    t0 = time.perf_counter()
    h.run()
    elapsed = time.perf_counter() - t0
    st = h.getModelStatus()
    termination = HIGHS_STATUS.get(getattr(st, "name", str(st)), "other")
    ok = termination == "optimal"
    status = SolveStatus(termination, "optimal" if ok else "none", f"HiGHS model status: {h.modelStatusToString(st)}",
                         elapsed, objective_scale * float(h.getInfo().objective_function_value) if ok else None)
    finish_solve("highs", status, raise_on_failure)
    return status
