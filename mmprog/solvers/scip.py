"""SCIP through pyscipopt (Pyomo's ``scip_direct``), else a ``scip`` executable: a global solver without duals."""

from __future__ import annotations

import shutil

from ..exceptions import SolverError
from .base import (Availability, AvailabilityReport, ProblemClass, Solver, SolveStatus, active_objective, one_line_message,
                   pyomo_environ, probe_model, register)
from .pyomo_legacy import find_module, solve_legacy

#: SCIP status words (pyscipopt Model.getStatus()) -> normalised termination.
SCIP_STATUS = {
    "optimal": "optimal", "infeasible": "infeasible", "unbounded": "unbounded",
    "inforunbd": "infeasible_or_unbounded", "timelimit": "max_time", "nodelimit": "max_iterations",
    "totalnodelimit": "max_iterations", "stallnodelimit": "max_iterations", "memlimit": "error",
    "gaplimit": "other", "sollimit": "other", "bestsollimit": "other", "restartlimit": "other",
    "userinterrupt": "other", "terminate": "other", "unknown": "other", "primallimit": "other",
    "duallimit": "other",
}

#: Pyomo's new-interface (pyomo.contrib.solver) TerminationCondition names -> normalised termination.
PYOMO_V2_STATUS = {
    "convergenceCriteriaSatisfied": "optimal", "maxTimeLimit": "max_time", "iterationLimit": "max_iterations",
    "objectiveLimit": "other", "minStepLength": "numerical", "unbounded": "unbounded",
    "provenInfeasible": "infeasible", "locallyInfeasible": "infeasible",
    "infeasibleOrUnbounded": "infeasible_or_unbounded", "error": "error", "interrupted": "other",
    "licensingProblems": "error", "emptyModel": "other", "unknown": "other",
}


@register("scip")
class ScipSolver(Solver):
    """SCIP through pyscipopt (Pyomo's ``scip_direct``), else a ``scip`` executable with AMPL support. A global
    branch-and-bound solver: it returns no duals, so programs that read multipliers cannot use it."""

    capabilities = frozenset({ProblemClass.LP, ProblemClass.QP, ProblemClass.QCQP, ProblemClass.SOCP,
                              ProblemClass.NLP})
    gives_duals = False
    global_optimizer = True
    persistent = False
    description = "SCIP (pyscipopt via Pyomo scip_direct, or a scip executable): global LP-NLP solver, no duals"
    install = "install it with: pip install 'mmprog[scip]' (pyscipopt, which bundles SCIP)"

    def _probe(self):
        m, expected = probe_model(quadratic=True)
        if find_module("pyscipopt"):
            self._route = "scip_direct"
        elif shutil.which("scip"):
            self._route = "scip-exe"
        else:
            return AvailabilityReport(Availability.NotFound,
                                      f"neither pyscipopt nor a scip executable is installed; {self.install}")
        status = self._solve(m, {}, False, False, None)
        if not status.ok or abs(status.objective - expected) > 1e-5:
            return AvailabilityReport(Availability.BadVersion, f"SCIP failed its test QP ({status.solver_message}, "
                                                               f"objective {status.objective}, expected {expected})")
        return AvailabilityReport(Availability.FullLicense, f"SCIP works ({self._route}); it returns no duals")

    #: SCIP's own feasibility tolerance (1e-6) left w 5e-4 off (relative) on a 14-cut MTL SOCP (5) whose optimum
    #: is flat in w; at 1e-9 it is 6e-8 off, in the same time. SCIP's check of its LP relaxations' dual feasibility
    #: stopped it with "error in LP solver" on the elastic-net master at λ → 0 (½Σ(μ² + ν²) with no linear cost on
    #: μ, ν: a flat face along μ = ν); without the check it solves it to 1e-9 relative. The user's options override
    #: them.
    default_options = {"numerics/feastol": 1e-9, "lp/checkdualfeas": False}

    def _solve(self, model, options, warm, load_duals, time_limit):
        pe = pyomo_environ()
        options = {**self.default_options, **(options or {})}
        try:
            if self._route == "scip-exe":
                opts = {"limits/time": float(time_limit)} if time_limit else {}
                opts.update(options)
                return solve_legacy(self.name, "scip", model, opts, False)
            from pyomo.contrib.solver.common.factory import SolverFactory as V2Factory
            from pyomo.common.timing import HierarchicalTimer
            opt = V2Factory("scip_direct")
            timer = HierarchicalTimer()
            res = opt.solve(model, load_solutions=False, raise_exception_on_nonoptimal_result=False,
                            time_limit=time_limit, solver_options=options, timer=timer)
        except Exception as exc:
            raise SolverError(f"solver scip failed: {one_line_message(exc)}", termination="error",
                              solver_message=one_line_message(exc)) from exc
        try:
            raw = opt._solver_model.getStatus()
            termination = SCIP_STATUS.get(raw, "other")
        except Exception:
            raw = res.termination_condition.name
            termination = PYOMO_V2_STATUS.get(raw, "other")
        sol_status = "none"
        if res.solution_status.name in ("optimal", "feasible"):
            res.solution_loader.load_vars()
            sol_status = "optimal" if termination == "optimal" else "feasible"
        elif termination == "infeasible":
            sol_status = "infeasible"
        solver_time = float(getattr(res.timing_info, "scip_time", timer.get_total_time("optimize")))
        objective = pe.value(active_objective(model).expr, exception=False) if sol_status != "none" else None
        return SolveStatus(termination, sol_status, f"SCIP status {raw}", solver_time,
                           None if objective is None else float(objective))
