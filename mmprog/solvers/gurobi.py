"""Gurobi through Pyomo's ``gurobi_direct`` and ``gurobi_persistent`` interfaces, with the size limits of its
bundled licence."""

from __future__ import annotations

from .base import Availability, AvailabilityReport, ProblemClass, Solver, one_line_message, probe_model, register
from .pyomo_legacy import LegacyPersistentHandle, find_module, raise_gurobi, solve_legacy

#: Gurobi optimisation status code -> (Gurobi's name, normalised termination).
GUROBI_STATUS = {
    1: ("LOADED", "other"), 2: ("OPTIMAL", "optimal"), 3: ("INFEASIBLE", "infeasible"),
    4: ("INF_OR_UNBD", "infeasible_or_unbounded"), 5: ("UNBOUNDED", "unbounded"), 6: ("CUTOFF", "other"),
    7: ("ITERATION_LIMIT", "max_iterations"), 8: ("NODE_LIMIT", "max_iterations"), 9: ("TIME_LIMIT", "max_time"),
    10: ("SOLUTION_LIMIT", "other"), 11: ("INTERRUPTED", "other"), 12: ("NUMERIC", "numerical"),
    13: ("SUBOPTIMAL", "numerical"), 14: ("INPROGRESS", "other"), 15: ("USER_OBJ_LIMIT", "other"),
    16: ("WORK_LIMIT", "max_time"), 17: ("MEM_LIMIT", "error"),
}


_GUROBI_LP_LIMIT = 2000
_GUROBI_QUAD_VAR_LIMIT = 200


def _gurobi_words(opt, fallback):
    try:
        code = int(opt._solver_model.Status)
    except Exception:
        return None, fallback
    name, termination = GUROBI_STATUS.get(code, (f"status {code}", "other"))
    return termination, f"Gurobi status {name}; {fallback}"


@register("gurobi")
class GurobiSolver(Solver):
    """Gurobi through Pyomo's ``gurobi_direct`` and ``gurobi_persistent`` interfaces. gurobipy's bundled licence
    solves offline but only models up to 2,000 variables and 2,000 constraints, and 200 variables once anything is
    quadratic: the probe detects such a licence and :meth:`availability` reports TooLarge for bigger models."""

    capabilities = frozenset({ProblemClass.LP, ProblemClass.QP, ProblemClass.QCQP, ProblemClass.SOCP})
    gives_duals = True
    persistent = True
    description = "Gurobi (Pyomo gurobi_direct / gurobi_persistent): LP, QP, QCQP, SOCP; pip licence is size-limited"
    install = "pip install 'mmprog[gurobi]' (bundled size-limited licence) or install a full licence"
    default_options = {"OutputFlag": 0, "QCPDual": 1}

    def __init__(self):
        super().__init__()
        self.size_limited = False

    def _probe(self):
        if not find_module("gurobipy"):
            return AvailabilityReport(Availability.NotFound, f"the gurobipy module is not installed; {self.install}")
        m, expected = probe_model(quadratic=False)
        try:
            status = solve_legacy(self.name, "gurobi_direct", m, dict(self.default_options), True)
        except Exception as exc:
            msg = one_line_message(exc)
            kind = Availability.BadLicense if "licen" in msg.lower() else Availability.BadVersion
            return AvailabilityReport(kind, f"Gurobi failed its test LP: {msg}; {self.install}")
        if not status.ok or abs(status.objective - expected) > 1e-6:
            return AvailabilityReport(Availability.BadVersion, f"Gurobi failed its test LP ({status.solver_message})")
        # Is the licence size-limited? A trivial LP one column over the limit tells (error 10010), in milliseconds.
        import gurobipy as gp
        try:
            with gp.Env(params={"OutputFlag": 0}) as env, gp.Model(env=env) as big:
                big.addVars(_GUROBI_LP_LIMIT + 1, lb=0.0, obj=1.0)
                big.optimize()
            self.size_limited = False
        except gp.GurobiError as exc:
            if getattr(exc, "errno", None) == 10010:
                self.size_limited = True
                return AvailabilityReport(
                    Availability.LimitedLicense,
                    f"Gurobi works with a size-limited licence (at most {_GUROBI_LP_LIMIT} variables and "
                    f"{_GUROBI_LP_LIMIT} constraints, {_GUROBI_QUAD_VAR_LIMIT} variables once anything is "
                    f"quadratic): {one_line_message(exc)}")
            raise
        return AvailabilityReport(Availability.FullLicense, "Gurobi works (unrestricted licence)")

    def _size_limit(self, problem_class, n_vars, n_cons, quadratic):
        if not self.size_limited:
            return None
        words = "visit https://gurobi.com/unrestricted for a full licence, or use highs / ipopt"
        if quadratic and n_vars is not None and n_vars > _GUROBI_QUAD_VAR_LIMIT:
            return (f"Gurobi's size-limited licence takes at most {_GUROBI_QUAD_VAR_LIMIT} variables once anything "
                    f"is quadratic; this model has {n_vars}: {words}")
        if n_vars is not None and n_vars > _GUROBI_LP_LIMIT:
            return (f"Gurobi's size-limited licence takes at most {_GUROBI_LP_LIMIT} variables; this model has "
                    f"{n_vars}: {words}")
        if n_cons is not None and n_cons > _GUROBI_LP_LIMIT:
            return (f"Gurobi's size-limited licence takes at most {_GUROBI_LP_LIMIT} constraints; this model has "
                    f"{n_cons}: {words}")
        return None

    def _solve(self, model, options, warm, load_duals, time_limit):
        opts = dict(self.default_options)
        if time_limit:
            opts["TimeLimit"] = float(time_limit)
        opts.update(options)
        try:
            return solve_legacy(self.name, "gurobi_direct", model, opts, load_duals)
        except Exception as exc:
            raise_gurobi(exc)

    def persistent_handle(self, model):
        return LegacyPersistentHandle(self, "gurobi_persistent", model,
                                       lambda t: {"TimeLimit": float(t)} if t else {},
                                       defaults=self.default_options, words=_gurobi_words)
