"""MOSEK through Pyomo's ``mosek_direct`` and ``mosek_persistent`` interfaces."""

from __future__ import annotations

from ..exceptions import SolverError, SolverUnavailable
from .base import Availability, AvailabilityReport, ProblemClass, Solver, one_line_message, probe_model, register
from .pyomo_legacy import LegacyPersistentHandle, find_module, solve_legacy


@register("mosek")
class MosekSolver(Solver):
    """MOSEK through Pyomo's ``mosek_direct`` (and ``mosek_persistent``) interfaces: interior point for LP, convex
    QP, QCQP and SOCP. Needs a licence file; Pyomo's ``available()`` says True without one, so the probe solves."""

    capabilities = frozenset({ProblemClass.LP, ProblemClass.QP, ProblemClass.QCQP, ProblemClass.SOCP})
    gives_duals = True
    persistent = True
    description = "MOSEK (Pyomo mosek_direct / mosek_persistent): LP, convex QP/QCQP, SOCP; needs a licence"
    install = "pip install 'mmprog[mosek]' and a licence (MOSEKLM_LICENSE_FILE or ~/mosek/mosek.lic)"

    def _probe(self):
        if not find_module("mosek"):
            return AvailabilityReport(Availability.NotFound, f"the mosek module is not installed; {self.install}")
        m, expected = probe_model(quadratic=False)
        try:
            status = solve_legacy(self.name, "mosek_direct", m, {}, True)
        except Exception as exc:
            msg = one_line_message(exc)
            if "licen" in msg.lower():
                return AvailabilityReport(Availability.BadLicense,
                                          f"MOSEK is installed but has no usable licence: {msg.rstrip('.')}; put "
                                          f"a licence file at ~/mosek/mosek.lic or set MOSEKLM_LICENSE_FILE")
            return AvailabilityReport(Availability.BadVersion, f"MOSEK failed its test LP: {msg}")
        if not status.ok or abs(status.objective - expected) > 1e-6:
            if "licen" in status.solver_message.lower():
                return AvailabilityReport(Availability.BadLicense,
                                          f"MOSEK has no usable licence: {status.solver_message}")
            return AvailabilityReport(Availability.BadVersion,
                                      f"MOSEK failed its test LP ({status.solver_message})")
        return AvailabilityReport(Availability.FullLicense, "MOSEK works (licence found)")

    def _solve(self, model, options, warm, load_duals, time_limit):
        opts = {"dparam.optimizer_max_time": float(time_limit)} if time_limit else {}
        opts.update(options)
        try:
            return solve_legacy(self.name, "mosek_direct", model, opts, load_duals)
        except Exception as exc:
            cls = SolverUnavailable if "licen" in str(exc).lower() else SolverError
            kw = {} if cls is SolverUnavailable else {"termination": "error", "solver_message": one_line_message(exc)}
            raise cls(f"solver mosek failed: {one_line_message(exc)}", **kw) from exc

    def persistent_handle(self, model):
        return LegacyPersistentHandle(self, "mosek_persistent", model,
                                       lambda t: {"dparam.optimizer_max_time": float(t)} if t else {})
