"""Ipopt: Pyomo's cyipopt (PyNumero) interface, or an ``ipopt`` executable; its dual sign flip lives here
(:meth:`IpoptSolver.normalise_duals`, see :mod:`mmprog.solvers.base`)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import time

import numpy as np

from ..exceptions import SolverError
from .base import (Availability, AvailabilityReport, ProblemClass, Solver, SolveStatus, active_objective, dual_suffix,
                   one_line_message, pyomo_environ, probe_model, record_duals, register)
from .pyomo_legacy import legacy_status

#: Ipopt ApplicationReturnStatus code -> (Ipopt's name, normalised termination). "Solved to acceptable level" is not
#: an optimum to the requested tolerances: it counts as numerical trouble.
IPOPT_STATUS = {
    0: ("Solve_Succeeded", "optimal"), 1: ("Solved_To_Acceptable_Level", "numerical"),
    2: ("Infeasible_Problem_Detected", "infeasible"), 3: ("Search_Direction_Becomes_Too_Small", "numerical"),
    4: ("Diverging_Iterates", "unbounded"), 5: ("User_Requested_Stop", "other"), 6: ("Feasible_Point_Found", "other"),
    -1: ("Maximum_Iterations_Exceeded", "max_iterations"), -2: ("Restoration_Failed", "numerical"),
    -3: ("Error_In_Step_Computation", "numerical"), -4: ("Maximum_CpuTime_Exceeded", "max_time"),
    -5: ("Maximum_WallTime_Exceeded", "max_time"), -10: ("Not_Enough_Degrees_Of_Freedom", "error"),
    -11: ("Invalid_Problem_Definition", "error"), -12: ("Invalid_Option", "error"),
    -13: ("Invalid_Number_Detected", "numerical"), -100: ("Unrecoverable_Exception", "error"),
    -101: ("NonIpopt_Exception_Thrown", "error"), -102: ("Insufficient_Memory", "error"),
    -199: ("Internal_Error", "error"),
}


def _pynumero_hint():
    candidate = os.path.join(sys.prefix, "pyomo")
    found = os.path.exists(os.path.join(candidate, "lib", "libpynumero_ASL.so"))
    if found and os.environ.get("PYOMO_CONFIG_DIR") != candidate:
        return f"export PYOMO_CONFIG_DIR={candidate} (the library is there)"
    return "run `pyomo build-extensions` (or `make env`) and export PYOMO_CONFIG_DIR to its directory"


@register("ipopt")
class IpoptSolver(Solver):
    """Ipopt, an interior-point NLP solver: through Pyomo's ``cyipopt`` interface (PyNumero, needs its compiled
    ASL library), else an ``ipopt`` executable on PATH. Convex programs are solved to global optimality; SOCPs are
    taken in their smooth QCQP form."""

    capabilities = frozenset({ProblemClass.LP, ProblemClass.QP, ProblemClass.QCQP, ProblemClass.SOCP,
                              ProblemClass.NLP})
    gives_duals = True
    lp_tolerance = 1e-5        # an interior-point method: optimum and multipliers to its barrier tolerance
    persistent = False
    description = "Ipopt interior point (cyipopt via Pyomo's PyNumero, or an ipopt executable): LP, QP, QCQP, NLP"
    install = ("pip install 'mmprog[ipopt]' (cyipopt) and " + "make PyNumero's ASL library findable, or put an "
               "`ipopt` executable on PATH")
    #: Always passed: Ipopt relaxes bounds by bound_relax_factor; this projects the returned point back inside.
    default_options = {"honor_original_bounds": "yes", "sb": "yes"}

    def _probe(self):
        reasons = []
        if importlib.util.find_spec("cyipopt") is None:
            reasons.append("cyipopt is not installed (pip install 'mmprog[ipopt]')")
        else:
            try:
                status = self._solve_cyipopt(probe_model(quadratic=True)[0], {}, False, False, None)
                if status.ok:
                    self._route = "cyipopt"
                    return AvailabilityReport(Availability.FullLicense, "Ipopt via cyipopt (Pyomo PyNumero) works")
                reasons.append(f"cyipopt failed its test QP ({status.solver_message})")
            except Exception as exc:
                msg = one_line_message(exc)
                if "pynumero" in msg.lower() or "ASL" in msg:
                    reasons.append(f"cyipopt is installed but Pyomo cannot load its PyNumero ASL library ({msg}): "
                                   f"{_pynumero_hint()}")
                else:
                    reasons.append(f"cyipopt failed its test QP: {msg}")
        exe = shutil.which("ipopt")
        if exe:
            try:
                status = self._solve_exe(probe_model(quadratic=True)[0], {}, False, False, None)
                if status.ok:
                    self._route = "ipopt-exe"
                    return AvailabilityReport(Availability.FullLicense, f"Ipopt executable {exe} works")
                reasons.append(f"the ipopt executable {exe} failed its test QP ({status.solver_message})")
            except Exception as exc:
                reasons.append(f"the ipopt executable {exe} failed its test QP: {one_line_message(exc)}")
        else:
            reasons.append("no ipopt executable on PATH")
        status = (Availability.NeedsCompiledExtension if any("PyNumero ASL" in r for r in reasons)
                  else Availability.NotFound)
        return AvailabilityReport(status, "; ".join(reasons))

    def _options(self, options, warm, time_limit):
        opts = dict(self.default_options)
        if warm:
            # Ipopt starts from the current variable values; a small initial barrier keeps it near them.
            opts.update({"mu_init": 1e-6, "bound_push": 1e-8, "bound_frac": 1e-8})
        if time_limit:
            opts["max_wall_time"] = float(time_limit)
        opts.update(options)
        return opts

    def _solve_cyipopt(self, model, options, warm, load_duals, time_limit):
        pe = pyomo_environ()
        if load_duals:
            dual_suffix(model, create=True)
        opt = pe.SolverFactory("cyipopt")
        for k, v in self._options(options, warm, time_limit).items():
            opt.config.options[k] = v
        t0 = time.perf_counter()
        res = opt.solve(model, tee=False)
        code = int(res.solver.return_code)
        ip_name, termination = IPOPT_STATUS.get(code, (f"status {code}", "other"))
        msg = res.solver.message
        msg = msg.decode() if isinstance(msg, bytes) else str(msg)
        wall = getattr(res.solver, "wallclock_time", None)
        solver_time = float(wall) if wall is not None else time.perf_counter() - t0
        sol_status = ("optimal" if termination == "optimal"
                      else "infeasible" if termination in ("infeasible", "unbounded") else "feasible")
        objective = pe.value(active_objective(model).expr, exception=False)
        if load_duals or dual_suffix(model, create=False) is not None:
            # cyipopt fills an existing dual suffix whatever we asked: record whose signs are in it
            record_duals(model, ("ipopt", "cyipopt"))
        return SolveStatus(termination, sol_status, f"Ipopt {ip_name}: {msg}", solver_time,
                           None if objective is None else float(objective))

    def _solve_exe(self, model, options, warm, load_duals, time_limit):
        pe = pyomo_environ()
        if load_duals:
            dual_suffix(model, create=True)
        opt = pe.SolverFactory("ipopt")
        opts = self._options(options, warm, time_limit)
        opts.pop("sb", None)
        t0 = time.perf_counter()
        res = opt.solve(model, load_solutions=False, options=opts)
        solver_time = time.perf_counter() - t0
        termination, words = legacy_status(res)
        sol_status = "none"
        if len(res.solution) > 0:
            model.solutions.load_from(res)
            sol_status = "optimal" if termination == "optimal" else "feasible"
            if load_duals or dual_suffix(model, create=False) is not None:
                record_duals(model, ("ipopt", "ipopt-exe"))
        objective = pe.value(active_objective(model).expr, exception=False) if sol_status != "none" else None
        return SolveStatus(termination, sol_status, words, solver_time,
                           None if objective is None else float(objective))

    def _solve(self, model, options, warm, load_duals, time_limit):
        try:
            if self._route == "ipopt-exe":
                return self._solve_exe(model, options, warm, load_duals, time_limit)
            return self._solve_cyipopt(model, options, warm, load_duals, time_limit)
        except SolverError:
            raise
        except Exception as exc:
            raise SolverError(f"solver ipopt failed: {one_line_message(exc)}", termination="error",
                              solver_message=one_line_message(exc)) from exc

    def normalise_duals(self, raw, minimise, route=None):
        raw = np.asarray(raw, dtype=float)
        # cyipopt: Ipopt's multipliers of the problem it minimises (-f for a maximisation); executable: AMPL's
        # convention, already d f*/d b.
        if (route or self._route) == "cyipopt" and minimise:
            return -raw
        return raw
