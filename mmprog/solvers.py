"""The solver registry: every optimisation back end mmprog can hand a Pyomo master program to, by name.

Each registered :class:`Solver` knows

* the program classes it can take (:class:`ProblemClass`), whether it returns duals and whether it has a persistent
  interface (cuts appended to the solver's own copy of the model and re-solved warm, never rebuilt);
* whether it can be used *here*, and if not, why (:meth:`Solver.availability`). Pyomo's ``available()`` is not
  trusted: it says True for MOSEK without a licence file and for cyipopt without PyNumero's ASL library, so every
  back end is probed once per process with a tiny real solve whose optimum is known, and the answer is cached;
* how to map the solver's own termination words onto one normalised vocabulary (:data:`TERMINATIONS`), keeping the
  solver's words for the error message;
* the sign convention of its multipliers, so that :func:`duals` returns them normalised.

Dual sign convention
--------------------
:func:`duals` returns, for every constraint, the derivative of the optimal objective value with respect to the
constraint's active bound (its right-hand side), ``y = d f* / d b``. For a minimisation this is the KKT multiplier
with the usual signs: ``y >= 0`` for an active ``body >= lower``, ``y <= 0`` for an active ``body <= upper``, and 0
for an inactive constraint; for a maximisation the signs reverse. HiGHS, Gurobi, GLPK, CBC, MOSEK and the ``ipopt``
executable (through its AMPL interface, which negates Ipopt's internal multipliers for minimisations) already report
this. Pyomo's cyipopt interface reports Ipopt's internal multipliers of the Lagrangian ``f + lambda^T g`` of the
problem it minimises, which is ``-y`` for a minimisation and ``y`` for a maximisation (Pyomo minimises ``-f``), so
its duals are negated for minimisations. Both facts are checked by the tests against a finite-difference derivative.

Raw multipliers, as the solver reported them, are stored in the model's ``dual`` import :class:`~pyomo.core.Suffix`
(created when absent, the usual Pyomo place); the name of the back end (and route) that wrote them is recorded on the
model, so :func:`duals` can normalise them without being told.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import importlib.util
import io
import logging
import math
import os
import shutil
import sys
import time
import warnings
import weakref

import numpy as np

from .exceptions import SolverError, SolverUnavailable, check_param

logger = logging.getLogger(__name__)

__all__ = [
    "ProblemClass", "Availability", "AvailabilityReport", "SolveStatus", "Solver", "PersistentHandle",
    "TERMINATIONS", "SOLUTION_STATUSES", "register", "get_solver", "registered", "table", "format_table",
    "default_solver", "duals",
    "classify", "model_size",
]


class ProblemClass(enum.Enum):
    """Class of a mathematical program, from the least to the most general."""

    LP = "LP"
    QP = "QP"
    QCQP = "QCQP"
    SOCP = "SOCP"
    NLP = "NLP"


class Availability(enum.IntEnum):
    """Whether a solver can be used, as in Pyomo: positive values are usable."""

    FullLicense = 2
    LimitedLicense = 1
    NotFound = 0
    BadVersion = -1
    BadLicense = -2
    NeedsCompiledExtension = -3
    CannotSolveClass = -4
    TooLarge = -5


@dataclasses.dataclass(frozen=True)
class AvailabilityReport:
    """Answer of :meth:`Solver.availability`: a status and one line saying why (and what to do when unusable)."""

    status: Availability
    reason: str

    def __bool__(self):
        return self.status > 0


#: The normalised termination names; the solver's own words are kept in :attr:`SolveStatus.solver_message`.
TERMINATIONS = ("optimal", "infeasible", "unbounded", "infeasible_or_unbounded", "max_iterations", "max_time",
                "numerical", "error", "other")
#: The normalised solution statuses (Pyomo's split: how the run ended vs what the returned point is).
SOLUTION_STATUSES = ("optimal", "feasible", "infeasible", "none")


@dataclasses.dataclass
class SolveStatus:
    """Outcome of one solve.

    Attributes
    ----------
    termination : str
        One of :data:`TERMINATIONS`.
    solution_status : str
        One of :data:`SOLUTION_STATUSES`: what the point loaded into the model (if any) is.
    solver_message : str
        The solver's own words (HiGHS model status, Ipopt's return status and message, Gurobi's status name, ...).
    solver_time : float
        Seconds spent inside the solver (excluding Pyomo's model processing where the back end lets us tell).
    objective : float or None
        Objective value of the returned point, when there is one.
    """

    termination: str
    solution_status: str
    solver_message: str
    solver_time: float
    objective: float | None

    @property
    def ok(self):
        """True when the solver reports an optimum."""
        return self.termination == "optimal"


# What to tell the user to change, per normalised termination.
_ADVICE = {
    "infeasible": "the constraints admit no point: check the model's bounds and constraint data (NaN or infinite "
                  "coefficients?)",
    "unbounded": "the objective is not bounded: check that every variable is bounded or penalised by the objective",
    "infeasible_or_unbounded": "the model is infeasible or unbounded: check bounds and that the objective penalises "
                               "every variable",
    "max_iterations": "raise the solver's iteration limit through options= or rescale the data",
    "max_time": "raise time_limit",
    "numerical": "numerical trouble: rescale the features (or raise C's scale), or try another solver",
    "error": "the solver rejected the model or failed: see its message",
    "other": "see the solver's message",
}


def _failure_message(solver_label, status):
    return (f"solver {solver_label} ended with {status.termination} ({status.solver_message}); "
            f"{_ADVICE.get(status.termination, _ADVICE['other'])}")


def _finish(solver_label, status, raise_on_failure):
    """Check a solve's status: anything but an optimum raises :class:`SolverError` (or warns) with the solver's
    words."""
    if status.termination != "optimal":
        msg = _failure_message(solver_label, status)
        if raise_on_failure:
            raise SolverError(msg, termination=status.termination, solver_message=status.solver_message)
        warnings.warn(msg, RuntimeWarning, stacklevel=3)
    return status


# ----------------------------------------------------------------------------------------------------------------
# Small Pyomo helpers
# ----------------------------------------------------------------------------------------------------------------

def _pe():
    import pyomo.environ as pe
    return pe


def _flatten(components):
    """A list of scalar component data from a mix of data objects and indexed components (in index order)."""
    if components is None:
        return []
    if hasattr(components, "is_indexed") and components.is_indexed():
        return list(components.values())
    if hasattr(components, "is_indexed"):  # a scalar component
        return [components]
    out = []
    for c in components:
        if hasattr(c, "is_indexed") and c.is_indexed():
            out.extend(c.values())
        else:
            out.append(c)
    return out


def _active_objective(model):
    pe = _pe()
    objs = list(model.component_data_objects(pe.Objective, active=True))
    if len(objs) != 1:
        raise SolverError(f"the model must have exactly one active objective; it has {len(objs)}",
                          termination="error", solver_message="")
    return objs[0]


def _is_minimise(model):
    pe = _pe()
    return _active_objective(model).sense == pe.minimize


def _dual_suffix(model, create):
    pe = _pe()
    s = model.component("dual")
    if s is None:
        if not create:
            return None
        model.dual = pe.Suffix(direction=pe.Suffix.IMPORT)
        return model.dual
    if not isinstance(s, pe.Suffix):
        raise SolverError(f"model component 'dual' is a {type(s).__name__}, not a Suffix: rename it so the solvers "
                          f"can store their multipliers there", termination="error", solver_message="")
    if not s.import_enabled():
        s.set_direction(pe.Suffix.IMPORT_EXPORT if s.export_enabled() else pe.Suffix.IMPORT)
    return s


# Which back end (and route) wrote each model's raw duals: decides their sign normalisation in duals().
_DUAL_SOURCE = weakref.WeakKeyDictionary()


def _record_duals(model, source):
    try:
        _DUAL_SOURCE[model] = source
    except TypeError:  # not weak-referenceable: fall back to an attribute
        setattr(model, "_mmprog_duals_from", source)


def _dual_source(model):
    try:
        return _DUAL_SOURCE.get(model)
    except TypeError:
        return getattr(model, "_mmprog_duals_from", None)


def model_size(model):
    """Number of (unfixed) variables used by the active constraints and objective, and of active constraints.

    Parameters
    ----------
    model : pyomo.core.Block

    Returns
    -------
    (int, int)
        ``(n_vars, n_cons)``.
    """
    pe = _pe()
    n_cons = sum(1 for _ in model.component_data_objects(pe.Constraint, active=True, descend_into=True))
    n_vars = sum(1 for v in model.component_data_objects(pe.Var, descend_into=True) if not v.fixed)
    return n_vars, n_cons


def classify(model):
    """The :class:`ProblemClass` of a Pyomo model from the polynomial degrees of its objective and constraints.

    A quadratic objective with linear constraints is a QP, any quadratic constraint makes a QCQP (second-order cones
    written as quadratic constraints are reported as QCQP: the form alone does not prove convexity), anything of
    degree > 2 or non-polynomial is an NLP. Costs one pass over the expressions.
    """
    pe = _pe()
    obj_deg = _active_objective(model).expr.polynomial_degree()
    cls = ProblemClass.LP
    if obj_deg is None or obj_deg > 2:
        return ProblemClass.NLP
    if obj_deg == 2:
        cls = ProblemClass.QP
    for c in model.component_data_objects(pe.Constraint, active=True, descend_into=True):
        d = c.body.polynomial_degree()
        if d is None or d > 2:
            return ProblemClass.NLP
        if d == 2:
            cls = ProblemClass.QCQP
    return cls


# The probe: a tiny LP and a tiny QP whose optima are known in closed form.
def _probe_model(quadratic):
    """min x + y  s.t. x + 2y >= 2, x, y >= 0  has optimum 1 at (0, 1); with the objective (x-1)^2 + y the optimum
    is 7/16 at (5/4, 3/8) (KKT: (2(x-1), 1) = lambda (1, 2) gives lambda = 1/2, x = 5/4)."""
    pe = _pe()
    m = pe.ConcreteModel(name="mmprog_probe")
    m.x = pe.Var(bounds=(0, None), initialize=0.5)
    m.y = pe.Var(bounds=(0, None), initialize=0.5)
    m.obj = pe.Objective(expr=((m.x - 1) ** 2 + m.y) if quadratic else (m.x + m.y))
    m.c = pe.Constraint(expr=m.x + 2 * m.y >= 2)
    return m, (7.0 / 16.0 if quadratic else 1.0)


def _one_line(text, limit=300):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ----------------------------------------------------------------------------------------------------------------
# Solver base class and registry
# ----------------------------------------------------------------------------------------------------------------

_REGISTRY: dict[str, type] = {}
_INSTANCES: dict[str, "Solver"] = {}


def register(name, cls=None):
    """Register a :class:`Solver` subclass under ``name``; usable as ``register(name, cls)`` or as a decorator
    ``@register(name)``. Re-registering a name replaces it."""

    def deco(klass):
        if not (isinstance(klass, type) and issubclass(klass, Solver)):
            raise TypeError(f"register({name!r}, ...) needs a Solver subclass; got {klass!r}")
        klass.name = name
        _REGISTRY[name] = klass
        _INSTANCES.pop(name, None)
        return klass

    return deco if cls is None else deco(cls)


def registered():
    """Names of the registered solvers, in registration order."""
    return list(_REGISTRY)


def get_solver(name):
    """The (per-process, cached) :class:`Solver` registered as ``name``.

    Raises
    ------
    SolverUnavailable
        For an unknown name, listing the known ones.
    """
    if isinstance(name, Solver):
        return name
    if name not in _REGISTRY:
        raise SolverUnavailable(f"unknown solver {name!r}; known solvers: {', '.join(registered())}")
    if name not in _INSTANCES:
        _INSTANCES[name] = _REGISTRY[name]()
    return _INSTANCES[name]


class Solver:
    """One optimisation back end. Subclasses set the class attributes and implement :meth:`_probe` and
    :meth:`_solve`; persistent ones also :meth:`persistent_handle`.

    Attributes
    ----------
    name : str
        Registry name.
    capabilities : frozenset of ProblemClass
        Program classes it can take.
    gives_duals : bool
        Whether it returns constraint multipliers.
    global_optimizer : bool
        Whether it proves global optimality on NLPs (spatial branch-and-bound: exact but slow on smooth convex
        problems a local solver settles in milliseconds).
    persistent : bool
        Whether :meth:`persistent_handle` returns a handle (cuts added to the solver's own model, warm re-solves).
    description : str
        One line for ``mmprog solvers``.
    install : str
        What to install when it is missing.
    """

    name = ""
    capabilities: frozenset = frozenset()
    gives_duals = True
    global_optimizer = False
    persistent = False
    description = ""
    install = ""
    _dual_flip_when_minimising = False

    def __init__(self):
        self._probe_report = None
        self._route = None

    # --- availability ---------------------------------------------------------------------------------------
    def _probe(self):
        """Return an :class:`AvailabilityReport` from a tiny real solve (no class or size considerations)."""
        raise NotImplementedError

    def probe(self, refresh=False):
        """The cached result of the tiny real solve that tells whether the solver works here at all."""
        if self._probe_report is None or refresh:
            from pyomo.common.log import LoggingIntercept
            try:
                # Pyomo logs the failure of a probe as an ERROR (e.g. MOSEK's missing licence); it is reported here
                with LoggingIntercept(io.StringIO(), "pyomo"):
                    self._probe_report = self._probe()
            except Exception as exc:  # a probe must never crash the caller: report why instead
                self._probe_report = AvailabilityReport(
                    Availability.NotFound, f"{self.name} failed its test solve: {_one_line(exc)}; {self.install}")
        return self._probe_report

    def _size_limit(self, problem_class, n_vars, n_cons, quadratic):
        """A reason string when the model is too large for this installation (licence limits), else None."""
        return None

    def availability(self, problem_class=None, n_vars=None, n_cons=None, quadratic=False):
        """Whether this solver can take a program here: installed and working (cached tiny real solve), able to
        solve the class, and (for size-limited licences) not too large.

        Parameters
        ----------
        problem_class : ProblemClass or str, optional
        n_vars, n_cons : int, optional
            Model size, for licence limits.
        quadratic : bool
            Whether anything in the model is quadratic (implied by QP and above).

        Returns
        -------
        AvailabilityReport
        """
        report = self.probe()
        if not report:
            return report
        if problem_class is not None:
            problem_class = ProblemClass(problem_class)
            if problem_class not in self.capabilities:
                can = ", ".join(c.value for c in ProblemClass if c in self.capabilities)
                alternatives = [n for n in registered() if n != self.name
                                and problem_class in _REGISTRY[n].capabilities]
                return AvailabilityReport(
                    Availability.CannotSolveClass,
                    f"{self.name} cannot solve {problem_class.value} programs (it takes {can}); use one of "
                    f"{', '.join(alternatives)}")
            quadratic = quadratic or problem_class is not ProblemClass.LP
        too_large = self._size_limit(problem_class, n_vars, n_cons, quadratic)
        if too_large:
            return AvailabilityReport(Availability.TooLarge, too_large)
        return report

    def require(self, problem_class, n_vars=None, n_cons=None, quadratic=False):
        """Raise :class:`SolverUnavailable` (one line: why, and what to do) unless :meth:`availability` is
        positive. Call it before any work."""
        report = self.availability(problem_class, n_vars=n_vars, n_cons=n_cons, quadratic=quadratic)
        if not report:
            what = ProblemClass(problem_class).value if problem_class is not None else "this model"
            raise SolverUnavailable(f"solver {self.name!r} cannot be used for {what} ({report.status.name}): "
                                    f"{report.reason}")

    # --- solving --------------------------------------------------------------------------------------------
    def _solve(self, model, options, warm, load_duals, time_limit):
        raise NotImplementedError

    def solve(self, model, *, options=None, warm=False, load_duals=True, time_limit=None, raise_on_failure=True):
        """Solve a Pyomo model, load the point (and raw duals into ``model.dual``) and check the status.

        Parameters
        ----------
        model : pyomo.core.ConcreteModel
        options : dict, optional
            Solver options, in the solver's own names.
        warm : bool
            Start from the previous solve of the same model where the back end can (HiGHS: the solver object of
            the previous ``warm`` solve of this model is kept and updated by Pyomo instead of rebuilt; Ipopt:
            starts from the current variable values, which it always does, with a small initial barrier).
        load_duals : bool
            Store the multipliers in ``model.dual`` (read them sign-normalised with :func:`duals`).
        time_limit : float, optional
            Seconds.
        raise_on_failure : bool
            Raise :class:`SolverError` unless optimal (else ``warnings.warn`` and return the status).

        Returns
        -------
        SolveStatus

        Raises
        ------
        SolverUnavailable
            When the solver does not work here (checked by the cached probe) or the licence refuses the model.
        SolverError
            When the solve ends without an optimum (with the solver's own words).
        """
        report = self.probe()
        if not report:
            raise SolverUnavailable(f"solver {self.name!r} cannot be used ({report.status.name}): {report.reason}")
        if time_limit is not None:
            check_param("time_limit", time_limit, isinstance(time_limit, (int, float)) and time_limit > 0,
                        "a number of seconds > 0")
        load_duals = load_duals and self.gives_duals
        status = self._solve(model, dict(options or {}), warm, load_duals, time_limit)
        return _finish(self.name, status, raise_on_failure)

    def persistent_handle(self, model):
        """A :class:`PersistentHandle` holding the solver's own copy of ``model`` (set up once), or None when the
        back end has no persistent interface."""
        return None

    # --- duals ----------------------------------------------------------------------------------------------
    def normalise_duals(self, raw, minimise, route=None):
        """Map the raw multipliers this back end (through ``route``) stored to the convention of :func:`duals`."""
        raw = np.asarray(raw, dtype=float)
        return -raw if (self._dual_flip_when_minimising and minimise) else raw

    def __repr__(self):
        return f"<Solver {self.name}: {', '.join(c.value for c in ProblemClass if c in self.capabilities)}>"


class PersistentHandle:
    """The solver's own copy of one Pyomo model, set up once; cuts are added and removed incrementally and each
    :meth:`solve` warm-starts from the previous basis/solution.

    Only changes told to the handle reach the solver (Pyomo's automatic change detection is off, as scanning every
    constraint and variable each round costs as much as the solve): call :meth:`add_constraints` for new rows,
    :meth:`remove_constraints` before deactivating/deleting rows, :meth:`add_variables` for new columns and
    :meth:`update_objective` after replacing the objective expression.
    """

    solver_name = ""

    def add_constraints(self, cons):
        raise NotImplementedError

    def remove_constraints(self, cons):
        raise NotImplementedError

    def add_variables(self, variables):
        raise NotImplementedError

    def update_variables(self, variables):
        """Push changed bounds / fixed status of existing variables."""
        raise NotImplementedError

    def update_objective(self):
        raise NotImplementedError

    def solve(self, *, load_duals=True, time_limit=None, raise_on_failure=True):
        raise NotImplementedError


# ----------------------------------------------------------------------------------------------------------------
# Status maps: the solver's own words -> normalised termination
# ----------------------------------------------------------------------------------------------------------------

#: HiGHS model status (highspy.HighsModelStatus member names) -> normalised termination.
HIGHS_STATUS = {
    "kNotset": "other", "kLoadError": "error", "kModelError": "error", "kPresolveError": "error",
    "kSolveError": "numerical", "kPostsolveError": "numerical", "kModelEmpty": "other", "kOptimal": "optimal",
    "kInfeasible": "infeasible", "kUnboundedOrInfeasible": "infeasible_or_unbounded", "kUnbounded": "unbounded",
    "kObjectiveBound": "other", "kObjectiveTarget": "other", "kTimeLimit": "max_time",
    "kIterationLimit": "max_iterations", "kUnknown": "other", "kSolutionLimit": "other", "kInterrupt": "other",
    "kMemoryLimit": "error", "kHighsInterrupt": "other",
}

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

#: Gurobi optimisation status code -> (Gurobi's name, normalised termination).
GUROBI_STATUS = {
    1: ("LOADED", "other"), 2: ("OPTIMAL", "optimal"), 3: ("INFEASIBLE", "infeasible"),
    4: ("INF_OR_UNBD", "infeasible_or_unbounded"), 5: ("UNBOUNDED", "unbounded"), 6: ("CUTOFF", "other"),
    7: ("ITERATION_LIMIT", "max_iterations"), 8: ("NODE_LIMIT", "max_iterations"), 9: ("TIME_LIMIT", "max_time"),
    10: ("SOLUTION_LIMIT", "other"), 11: ("INTERRUPTED", "other"), 12: ("NUMERIC", "numerical"),
    13: ("SUBOPTIMAL", "numerical"), 14: ("INPROGRESS", "other"), 15: ("USER_OBJ_LIMIT", "other"),
    16: ("WORK_LIMIT", "max_time"), 17: ("MEM_LIMIT", "error"),
}

#: SCIP status words (pyscipopt Model.getStatus()) -> normalised termination.
SCIP_STATUS = {
    "optimal": "optimal", "infeasible": "infeasible", "unbounded": "unbounded",
    "inforunbd": "infeasible_or_unbounded", "timelimit": "max_time", "nodelimit": "max_iterations",
    "totalnodelimit": "max_iterations", "stallnodelimit": "max_iterations", "memlimit": "error",
    "gaplimit": "other", "sollimit": "other", "bestsollimit": "other", "restartlimit": "other",
    "userinterrupt": "other", "terminate": "other", "unknown": "other", "primallimit": "other",
    "duallimit": "other",
}

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

#: Pyomo's new-interface (pyomo.contrib.solver) TerminationCondition names -> normalised termination.
PYOMO_V2_STATUS = {
    "convergenceCriteriaSatisfied": "optimal", "maxTimeLimit": "max_time", "iterationLimit": "max_iterations",
    "objectiveLimit": "other", "minStepLength": "numerical", "unbounded": "unbounded",
    "provenInfeasible": "infeasible", "locallyInfeasible": "infeasible",
    "infeasibleOrUnbounded": "infeasible_or_unbounded", "error": "error", "interrupted": "other",
    "licensingProblems": "error", "emptyModel": "other", "unknown": "other",
}


def _legacy_status(results, status_map=PYOMO_LEGACY_STATUS):
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
    return status_map.get(tc_name, "other"), _one_line("; ".join(words))


#: glpsol's final status lines -> normalised termination (Pyomo's GLPK plugin maps some of them to "other").
GLPK_STATUS = {
    "OPTIMAL LP SOLUTION FOUND": "optimal",
    "INTEGER OPTIMAL SOLUTION FOUND": "optimal",
    "LP HAS NO PRIMAL FEASIBLE SOLUTION": "infeasible",
    "PROBLEM HAS NO PRIMAL FEASIBLE SOLUTION": "infeasible",
    "PROBLEM HAS NO FEASIBLE SOLUTION": "infeasible",
    "LP HAS UNBOUNDED PRIMAL SOLUTION": "unbounded",
    "PROBLEM HAS UNBOUNDED SOLUTION": "unbounded",
    "LP HAS NO DUAL FEASIBLE SOLUTION": "infeasible_or_unbounded",
    "PROBLEM HAS NO DUAL FEASIBLE SOLUTION": "infeasible_or_unbounded",
    "TIME LIMIT EXCEEDED": "max_time",
    "ITERATION LIMIT EXCEEDED": "max_iterations",
}


def _glpk_log_status(log):
    """The last glpsol status line found in its log, as (termination, words), or None."""
    found = None
    for line in log.splitlines():
        for words, termination in GLPK_STATUS.items():
            if words in line.upper():
                found = (termination, f"glpsol: {line.strip()}")
    return found


# ----------------------------------------------------------------------------------------------------------------
# HiGHS (through Pyomo's persistent contrib interface, which also takes quadratic objectives)
# ----------------------------------------------------------------------------------------------------------------

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
            suffix = _dual_suffix(model, create=True)
            for c, v in d.items():
                suffix[c] = v
            _record_duals(model, source)


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
        m, expected = _probe_model(quadratic=True)
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
        solver_options = {"output_flag": False, "time_limit": float(time_limit) if time_limit else float("inf")}
        solver_options.update(options)
        timer = HierarchicalTimer()
        try:
            res = opt.solve(model, timer=timer, solver_options=solver_options)
        except Exception as exc:
            raise SolverError(f"solver highs could not take the model: {_one_line(exc)}", termination="error",
                              solver_message=_one_line(exc)) from exc
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
            raise SolverError(f"solver highs could not take the model: {_one_line(exc)}", termination="error",
                              solver_message=_one_line(exc)) from exc

    def add_constraints(self, cons):
        cons = _flatten(cons)
        if cons:
            self._opt.add_constraints(cons)

    def remove_constraints(self, cons):
        cons = _flatten(cons)
        if cons:
            self._opt.remove_constraints(cons)

    def add_variables(self, variables):
        variables = _flatten(variables)
        if variables:
            self._opt.add_variables(variables)

    def update_variables(self, variables):
        variables = _flatten(variables)
        if variables:
            self._opt.update_variables(variables)

    def update_objective(self):
        import highspy
        # Pyomo's interface passes a Hessian only when the new objective has quadratic terms, so a previous one
        # would survive a switch to a linear objective: clear it first.
        self._opt._solver_model.passHessian(highspy.HighsHessian())
        self._opt.set_objective(_active_objective(self.model))

    def solve(self, *, load_duals=True, time_limit=None, raise_on_failure=True):
        from pyomo.common.timing import HierarchicalTimer
        self._opt.config.solver_options["time_limit"] = float(time_limit) if time_limit else float("inf")
        timer = HierarchicalTimer()
        res = self._opt.solve(self.model, timer=timer)
        status = _highs_status(self._opt, res, timer)
        _highs_load(self.model, res, status, load_duals, ("highs", "highs"), self._opt)
        return _finish("highs", status, raise_on_failure)


# ----------------------------------------------------------------------------------------------------------------
# Ipopt: Pyomo's cyipopt (PyNumero) interface, or an ``ipopt`` executable
# ----------------------------------------------------------------------------------------------------------------

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
                status = self._solve_cyipopt(_probe_model(quadratic=True)[0], {}, False, False, None)
                if status.ok:
                    self._route = "cyipopt"
                    return AvailabilityReport(Availability.FullLicense, "Ipopt via cyipopt (Pyomo PyNumero) works")
                reasons.append(f"cyipopt failed its test QP ({status.solver_message})")
            except Exception as exc:
                msg = _one_line(exc)
                if "pynumero" in msg.lower() or "ASL" in msg:
                    reasons.append(f"cyipopt is installed but Pyomo cannot load its PyNumero ASL library ({msg}): "
                                   f"{_pynumero_hint()}")
                else:
                    reasons.append(f"cyipopt failed its test QP: {msg}")
        exe = shutil.which("ipopt")
        if exe:
            try:
                status = self._solve_exe(_probe_model(quadratic=True)[0], {}, False, False, None)
                if status.ok:
                    self._route = "ipopt-exe"
                    return AvailabilityReport(Availability.FullLicense, f"Ipopt executable {exe} works")
                reasons.append(f"the ipopt executable {exe} failed its test QP ({status.solver_message})")
            except Exception as exc:
                reasons.append(f"the ipopt executable {exe} failed its test QP: {_one_line(exc)}")
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
        pe = _pe()
        if load_duals:
            _dual_suffix(model, create=True)
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
        objective = pe.value(_active_objective(model).expr, exception=False)
        if load_duals or _dual_suffix(model, create=False) is not None:
            # cyipopt fills an existing dual suffix whatever we asked: record whose signs are in it
            _record_duals(model, ("ipopt", "cyipopt"))
        return SolveStatus(termination, sol_status, f"Ipopt {ip_name}: {msg}", solver_time,
                           None if objective is None else float(objective))

    def _solve_exe(self, model, options, warm, load_duals, time_limit):
        pe = _pe()
        if load_duals:
            _dual_suffix(model, create=True)
        opt = pe.SolverFactory("ipopt")
        opts = self._options(options, warm, time_limit)
        opts.pop("sb", None)
        t0 = time.perf_counter()
        res = opt.solve(model, load_solutions=False, options=opts)
        solver_time = time.perf_counter() - t0
        termination, words = _legacy_status(res)
        sol_status = "none"
        if len(res.solution) > 0:
            model.solutions.load_from(res)
            sol_status = "optimal" if termination == "optimal" else "feasible"
            if load_duals or _dual_suffix(model, create=False) is not None:
                _record_duals(model, ("ipopt", "ipopt-exe"))
        objective = pe.value(_active_objective(model).expr, exception=False) if sol_status != "none" else None
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
            raise SolverError(f"solver ipopt failed: {_one_line(exc)}", termination="error",
                              solver_message=_one_line(exc)) from exc

    def normalise_duals(self, raw, minimise, route=None):
        raw = np.asarray(raw, dtype=float)
        # cyipopt: Ipopt's multipliers of the problem it minimises (-f for a maximisation); executable: AMPL's
        # convention, already d f*/d b.
        if (route or self._route) == "cyipopt" and minimise:
            return -raw
        return raw


# ----------------------------------------------------------------------------------------------------------------
# Legacy Pyomo interfaces (GLPK, CBC, MOSEK, Gurobi, SCIP executable)
# ----------------------------------------------------------------------------------------------------------------

def _solve_legacy(name, factory_name, model, options, load_duals, log_status=None):
    """Solve through one of Pyomo's legacy (file or direct) interfaces without letting it load anything, then load
    the point and raw duals only when there is one. ``log_status`` maps the solver's log text to (termination,
    words) where the plugin's own reading of the status is unreliable."""
    pe = _pe()
    if load_duals:
        _dual_suffix(model, create=True)
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
        termination, words = _legacy_status(res)
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
        if load_duals or _dual_suffix(model, create=False) is not None:
            # Pyomo loads every import suffix the model has, asked or not: record whose signs are in it
            _record_duals(model, (name, factory_name))
    elif termination == "infeasible":
        sol_status = "infeasible"
    objective = pe.value(_active_objective(model).expr, exception=False) if sol_status != "none" else None
    return SolveStatus(termination, sol_status, words, solver_time, None if objective is None else float(objective))


class _ExecutableLPSolver(Solver):
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
        m, expected = _probe_model(quadratic=False)
        status = _solve_legacy(self.name, self.factory_name, m, {}, True, type(self).log_status)
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
            return _solve_legacy(self.name, self.factory_name, model, opts, load_duals, type(self).log_status)
        except Exception as exc:
            raise SolverError(f"solver {self.name} failed: {_one_line(exc)}", termination="error",
                              solver_message=_one_line(exc)) from exc


@register("glpk")
class GlpkSolver(_ExecutableLPSolver):
    """GLPK's ``glpsol`` (simplex) through Pyomo's LP-file interface."""

    description = "GLPK glpsol (simplex), LP only, through LP files"
    install = "install it with: apt-get install glpk-utils"
    executable = "glpsol"
    factory_name = "glpk"
    time_option = "tmlim"
    log_status = staticmethod(_glpk_log_status)


@register("cbc")
class CbcSolver(_ExecutableLPSolver):
    """COIN-OR CBC (CLP's simplex for LPs) through Pyomo's LP-file interface."""

    description = "COIN-OR CBC/CLP, LP only, through LP files"
    install = "install it with: apt-get install coinor-cbc"
    executable = "cbc"
    factory_name = "cbc"
    time_option = "sec"


def _find_module(mod):
    try:
        return importlib.util.find_spec(mod) is not None
    except (ImportError, ValueError):
        return False


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
        if not _find_module("mosek"):
            return AvailabilityReport(Availability.NotFound, f"the mosek module is not installed; {self.install}")
        m, expected = _probe_model(quadratic=False)
        try:
            status = _solve_legacy(self.name, "mosek_direct", m, {}, True)
        except Exception as exc:
            msg = _one_line(exc)
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
            return _solve_legacy(self.name, "mosek_direct", model, opts, load_duals)
        except Exception as exc:
            cls = SolverUnavailable if "licen" in str(exc).lower() else SolverError
            kw = {} if cls is SolverUnavailable else {"termination": "error", "solver_message": _one_line(exc)}
            raise cls(f"solver mosek failed: {_one_line(exc)}", **kw) from exc

    def persistent_handle(self, model):
        return _LegacyPersistentHandle(self, "mosek_persistent", model,
                                       lambda t: {"dparam.optimizer_max_time": float(t)} if t else {})


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
        if not _find_module("gurobipy"):
            return AvailabilityReport(Availability.NotFound, f"the gurobipy module is not installed; {self.install}")
        m, expected = _probe_model(quadratic=False)
        try:
            status = _solve_legacy(self.name, "gurobi_direct", m, dict(self.default_options), True)
        except Exception as exc:
            msg = _one_line(exc)
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
                    f"quadratic): {_one_line(exc)}")
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
            return _solve_legacy(self.name, "gurobi_direct", model, opts, load_duals)
        except Exception as exc:
            _raise_gurobi(exc)

    def persistent_handle(self, model):
        return _LegacyPersistentHandle(self, "gurobi_persistent", model,
                                       lambda t: {"TimeLimit": float(t)} if t else {},
                                       defaults=self.default_options, words=_gurobi_words)


def _raise_gurobi(exc):
    msg = _one_line(exc)
    if "size-limited" in msg or "10010" in msg:
        raise SolverUnavailable(f"solver gurobi (TooLarge): {msg}; use highs or ipopt, or a full Gurobi licence") \
            from exc
    raise SolverError(f"solver gurobi failed: {msg}", termination="error", solver_message=msg) from exc


class _LegacyPersistentHandle(PersistentHandle):
    """Handle over one of Pyomo's legacy persistent interfaces (gurobi_persistent, mosek_persistent)."""

    def __init__(self, solver, factory_name, model, time_opts, defaults=None, words=None):
        pe = _pe()
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
            _raise_gurobi(exc) if solver.name == "gurobi" else self._raise(exc)
        self._factory_name = factory_name

    def _raise(self, exc):
        raise SolverError(f"solver {self.solver_name} failed: {_one_line(exc)}", termination="error",
                          solver_message=_one_line(exc)) from exc

    def add_constraints(self, cons):
        for c in _flatten(cons):
            self._opt.add_constraint(c)

    def remove_constraints(self, cons):
        for c in _flatten(cons):
            self._opt.remove_constraint(c)

    def add_variables(self, variables):
        for v in _flatten(variables):
            self._opt.add_var(v)

    def update_variables(self, variables):
        for v in _flatten(variables):
            self._opt.update_var(v)

    def update_objective(self):
        self._opt.set_objective(_active_objective(self.model))

    def solve(self, *, load_duals=True, time_limit=None, raise_on_failure=True):
        pe = _pe()
        opts = self._time_opts(time_limit)
        t0 = time.perf_counter()
        try:
            res = self._opt.solve(load_solutions=False, save_results=False, options=opts)
        except Exception as exc:
            _raise_gurobi(exc) if self.solver_name == "gurobi" else self._raise(exc)
        solver_time = time.perf_counter() - t0
        termination, words = _legacy_status(res)
        if self._words is not None:
            t2, words = self._words(self._opt, words)
            termination = t2 or termination
        sol_status = "none"
        if termination not in ("infeasible", "infeasible_or_unbounded", "unbounded"):
            try:
                self._opt.load_vars()
                sol_status = "optimal" if termination == "optimal" else "feasible"
                if load_duals and termination == "optimal":
                    _dual_suffix(self.model, create=True)
                    self._opt.load_duals()
                    _record_duals(self.model, (self.solver_name, self._factory_name))
            except Exception:
                sol_status = "none"
        objective = pe.value(_active_objective(self.model).expr, exception=False) if sol_status != "none" else None
        status = SolveStatus(termination, sol_status, words, solver_time,
                             None if objective is None else float(objective))
        return _finish(self.solver_name, status, raise_on_failure)


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
        m, expected = _probe_model(quadratic=True)
        if _find_module("pyscipopt"):
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
    #: is flat in w; at 1e-9 it is 6e-8 off, in the same time. The user's options override it.
    default_options = {"numerics/feastol": 1e-9}

    def _solve(self, model, options, warm, load_duals, time_limit):
        pe = _pe()
        options = {**self.default_options, **(options or {})}
        try:
            if self._route == "scip-exe":
                opts = {"limits/time": float(time_limit)} if time_limit else {}
                opts.update(options)
                return _solve_legacy(self.name, "scip", model, opts, False)
            from pyomo.contrib.solver.common.factory import SolverFactory as V2Factory
            from pyomo.common.timing import HierarchicalTimer
            opt = V2Factory("scip_direct")
            timer = HierarchicalTimer()
            res = opt.solve(model, load_solutions=False, raise_exception_on_nonoptimal_result=False,
                            time_limit=time_limit, solver_options=options, timer=timer)
        except Exception as exc:
            raise SolverError(f"solver scip failed: {_one_line(exc)}", termination="error",
                              solver_message=_one_line(exc)) from exc
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
        objective = pe.value(_active_objective(model).expr, exception=False) if sol_status != "none" else None
        return SolveStatus(termination, sol_status, f"SCIP status {raw}", solver_time,
                           None if objective is None else float(objective))


# ----------------------------------------------------------------------------------------------------------------
# Registry-level helpers
# ----------------------------------------------------------------------------------------------------------------

def table(problem_class=None):
    """Rows for ``mmprog solvers``: one dict per registered solver.

    Keys: ``name``, ``classes`` (list of class names), ``duals``, ``persistent``, ``available`` (bool),
    ``status`` (:class:`Availability` name), ``reason``, ``description``. With ``problem_class`` the availability is
    for that class.
    """
    rows = []
    for name in registered():
        s = get_solver(name)
        rep = s.availability(problem_class)
        rows.append({
            "name": name,
            "classes": [c.value for c in ProblemClass if c in s.capabilities],
            "duals": s.gives_duals,
            "persistent": s.persistent,
            "available": bool(rep),
            "status": rep.status.name,
            "reason": rep.reason,
            "description": s.description,
        })
    return rows


def format_table(rows):
    """Plain-text rendering of :func:`table` rows for ``mmprog solvers`` (one line per solver)."""
    head = ("solver", "classes", "duals", "persistent", "status", "reason")
    body = [(r["name"], ",".join(r["classes"]), "yes" if r["duals"] else "no", "yes" if r["persistent"] else "no",
             r["status"], r["reason"]) for r in rows]
    widths = [max(len(str(x[i])) for x in [head] + body) for i in range(len(head) - 1)]
    lines = []
    for row in [head] + body:
        lines.append("  ".join(str(v).ljust(w) for v, w in zip(row, widths)) + "  " + str(row[-1]))
    return "\n".join(lines)


def default_solver(problem_class):
    """The solver mmprog uses for a program class when the user names none.

    ``highs`` for LP and QP; ``ipopt`` for QCQP and NLP; for SOCP ``mosek``, else ``gurobi`` when usable, else
    ``ipopt`` on the SOCP's smooth QCQP form (logged as a warning: a local interior-point method on a cone that is
    not differentiable at its tip, fine for convex problems away from it but slower and less exact than a conic
    solver).
    """
    problem_class = ProblemClass(problem_class)
    if problem_class in (ProblemClass.LP, ProblemClass.QP):
        return "highs"
    if problem_class in (ProblemClass.QCQP, ProblemClass.NLP):
        return "ipopt"
    for name in ("mosek", "gurobi"):
        if name in _REGISTRY and get_solver(name).availability(ProblemClass.SOCP):
            return name
    logger.warning("no conic solver (mosek, gurobi) is usable here: the SOCP goes to ipopt in its smooth QCQP "
                   "form (a local interior-point method; install mmprog[mosek] with a licence for a conic solver)")
    return "ipopt"


def duals(model, constraints, solver_name=None):
    """Sign-normalised multipliers of ``constraints`` after a solve with ``load_duals=True``.

    The convention (see the module docstring): ``y = d f* / d b``, the derivative of the optimal objective with
    respect to the constraint's active bound, so in a minimisation ``y >= 0`` for ``body >= lower`` and ``y <= 0``
    for ``body <= upper``.

    Parameters
    ----------
    model : pyomo.core.ConcreteModel
    constraints : list of ConstraintData, or an indexed Constraint
        In the order wanted (an indexed component gives its index order).
    solver_name : str, optional
        The back end that solved the model; by default the one recorded by the last solve that loaded duals.

    Returns
    -------
    numpy.ndarray, shape (len(constraints),)

    Raises
    ------
    SolverError
        When the model carries no duals for some of the constraints, or the named solver returns none.
    """
    cons = _flatten(constraints)
    source = _dual_source(model)
    if solver_name is None:
        if source is None:
            raise SolverError("the model carries no duals from an mmprog solve: solve it with load_duals=True "
                              "first", termination="error", solver_message="")
        solver_name = source[0]
    solver = get_solver(solver_name)
    if not solver.gives_duals:
        raise SolverError(f"solver {solver.name!r} returns no duals; solve with one that does "
                          f"({', '.join(n for n in registered() if _REGISTRY[n].gives_duals)})",
                          termination="error", solver_message="")
    if source is not None and source[0] != solver.name:
        raise SolverError(f"the model's duals were written by {source[0]!r}, not {solver.name!r}: pass "
                          f"solver_name={source[0]!r} or solve again with {solver.name!r}", termination="error",
                          solver_message="")
    suffix = _dual_suffix(model, create=False)
    if suffix is None:
        raise SolverError("the model has no 'dual' suffix: solve it with load_duals=True first",
                          termination="error", solver_message="")
    raw = np.empty(len(cons))
    for k, c in enumerate(cons):
        v = suffix.get(c)
        if v is None:
            raise SolverError(f"constraint {c.name} has no dual in model.dual: was it added after the last solve, "
                              f"or solved with load_duals=False?", termination="error", solver_message="")
        raw[k] = v
    route = source[1] if source is not None else None
    return solver.normalise_duals(raw, _is_minimise(model), route)


# back ends kept in modules of their own register themselves on import
from . import _solver_daqp  # noqa: E402,F401
