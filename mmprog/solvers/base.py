"""The base of :mod:`mmprog.solvers`: the :class:`Solver` interface, the registry of every optimisation back end
mmprog can hand a Pyomo master program to (by name), the status vocabulary, the classification of a model and the
dual sign convention. The back ends themselves live one per module beside this one.

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
import io
import logging
import warnings
import weakref

import numpy as np

from ..exceptions import SolverError, SolverUnavailable, caused_by_interrupt, check_param

# the package's name, as before the back ends moved into their own modules
logger = logging.getLogger("mmprog.solvers")

__all__ = [
    "ProblemClass", "Availability", "AvailabilityReport", "SolveStatus", "Solver", "PersistentHandle",
    "TERMINATIONS", "SOLUTION_STATUSES", "SOLVE_TIME_LIMIT", "register", "get_solver", "registered", "table", "format_table",
    "default_solver", "duals", "values_of",
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


#: Seconds one solve may take when the caller names no limit (the cutting-plane engine's per-solve cap too): masters
#: of the shipped programs solve in well under a second to a few seconds on full corpora, so a solve still running
#: after ten minutes is stuck. Every back end hands it to the solver's own time limit.
SOLVE_TIME_LIMIT = 600.0

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


def finish_solve(solver_label, status, raise_on_failure):
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

def pyomo_environ():
    """Pyomo with its plugins (solver factories, writers, transformations): for solves and writes through Pyomo."""
    import pyomo.environ as pe
    return pe


def pyomo_core():
    """Pyomo's modelling layer alone (components, sets, expressions, ``value``): what building and reading a model
    needs. Its plugins (:func:`pyomo_environ`, about 0.2 s of CPU to import) are left for solves and writes through
    Pyomo, so a fit whose master a native back end solves reaches its first round without them."""
    import pyomo.core as pc
    return pc


def flatten(components):
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


def active_objective(model):
    pe = pyomo_core()
    objs = list(model.component_data_objects(pe.Objective, active=True))
    if len(objs) != 1:
        raise SolverError(f"the model must have exactly one active objective; it has {len(objs)}",
                          termination="error", solver_message="")
    return objs[0]


def _is_minimise(model):
    pe = pyomo_core()
    return active_objective(model).sense == pe.minimize


def dual_suffix(model, create):
    pe = pyomo_core()
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


def record_duals(model, source):
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
    pe = pyomo_core()
    n_cons = sum(1 for _ in model.component_data_objects(pe.Constraint, active=True, descend_into=True))
    n_vars = sum(1 for v in model.component_data_objects(pe.Var, descend_into=True) if not v.fixed)
    return n_vars, n_cons


def classify(model):
    """The :class:`ProblemClass` of a Pyomo model from the polynomial degrees of its objective and constraints.

    A quadratic objective with linear constraints is a QP, any quadratic constraint makes a QCQP (second-order cones
    written as quadratic constraints are reported as QCQP: the form alone does not prove convexity), anything of
    degree > 2 or non-polynomial is an NLP. Costs one pass over the expressions.
    """
    pe = pyomo_core()
    obj_deg = active_objective(model).expr.polynomial_degree()
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
def probe_model(quadratic):
    """min x + y  s.t. x + 2y >= 2, x, y >= 0  has optimum 1 at (0, 1); with the objective (x-1)^2 + y the optimum
    is 7/16 at (5/4, 3/8) (KKT: (2(x-1), 1) = lambda (1, 2) gives lambda = 1/2, x = 5/4)."""
    pe = pyomo_core()
    m = pe.ConcreteModel(name="mmprog_probe")
    m.x = pe.Var(bounds=(0, None), initialize=0.5)
    m.y = pe.Var(bounds=(0, None), initialize=0.5)
    m.obj = pe.Objective(expr=((m.x - 1) ** 2 + m.y) if quadratic else (m.x + m.y))
    m.c = pe.Constraint(expr=m.x + 2 * m.y >= 2)
    return m, (7.0 / 16.0 if quadratic else 1.0)


def one_line_message(text, limit=300):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ----------------------------------------------------------------------------------------------------------------
# Solver base class and registry
# ----------------------------------------------------------------------------------------------------------------

REGISTRY: dict[str, type] = {}
_INSTANCES: dict[str, "Solver"] = {}


def register(name, cls=None):
    """Register a :class:`Solver` subclass under ``name``; usable as ``register(name, cls)`` or as a decorator
    ``@register(name)``. Re-registering a name replaces it."""

    def deco(klass):
        if not (isinstance(klass, type) and issubclass(klass, Solver)):
            raise TypeError(f"register({name!r}, ...) needs a Solver subclass; got {klass!r}")
        klass.name = name
        REGISTRY[name] = klass
        _INSTANCES.pop(name, None)
        return klass

    return deco if cls is None else deco(cls)


def registered():
    """Names of the registered solvers, in registration order."""
    return list(REGISTRY)


def get_solver(name):
    """The (per-process, cached) :class:`Solver` registered as ``name``.

    Raises
    ------
    SolverUnavailable
        For an unknown name, listing the known ones.
    """
    if isinstance(name, Solver):
        return name
    if name not in REGISTRY:
        raise SolverUnavailable(f"unknown solver {name!r}; known solvers: {', '.join(registered())}")
    if name not in _INSTANCES:
        _INSTANCES[name] = REGISTRY[name]()
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
    lp_tolerance : float
        The relative accuracy it reaches on an LP's optimum and multipliers (simplex codes: rounding, checked at 1e-7;
        interior-point methods stop at their own barrier tolerance): what a check of its answer may demand.
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
    lp_tolerance = 1e-7
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
                if caused_by_interrupt(exc):        # Ctrl-C during the probe: the solver may well work
                    raise KeyboardInterrupt(str(exc)) from exc
                self._probe_report = AvailabilityReport(
                    Availability.NotFound, f"{self.name} failed its test solve: {one_line_message(exc)}; {self.install}")
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
                                and problem_class in REGISTRY[n].capabilities]
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
            Seconds, handed to the solver's own limit (default :data:`SOLVE_TIME_LIMIT`: no solve runs
            unbounded). A solve that hits it ends with termination ``max_time``.
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
        if time_limit is None:
            time_limit = SOLVE_TIME_LIMIT
        check_param("time_limit", time_limit, isinstance(time_limit, (int, float)) and time_limit > 0,
                    "a number of seconds > 0")
        load_duals = load_duals and self.gives_duals
        status = self._solve(model, dict(options or {}), warm, load_duals, time_limit)
        return finish_solve(self.name, status, raise_on_failure)

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
        """Re-solve; ``time_limit`` seconds (default :data:`SOLVE_TIME_LIMIT`) go to the solver's own limit."""
        raise NotImplementedError


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
        if name in REGISTRY and get_solver(name).availability(ProblemClass.SOCP):
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
    cons = flatten(constraints)
    source = _dual_source(model)
    if solver_name is None:
        if source is None:
            raise SolverError("the model carries no duals from an mmprog solve: solve it with load_duals=True "
                              "first", termination="error", solver_message="")
        solver_name = source[0]
    solver = get_solver(solver_name)
    if not solver.gives_duals:
        raise SolverError(f"solver {solver.name!r} returns no duals; solve with one that does "
                          f"({', '.join(n for n in registered() if REGISTRY[n].gives_duals)})",
                          termination="error", solver_message="")
    if source is not None and source[0] != solver.name:
        raise SolverError(f"the model's duals were written by {source[0]!r}, not {solver.name!r}: pass "
                          f"solver_name={source[0]!r} or solve again with {solver.name!r}", termination="error",
                          solver_message="")
    suffix = dual_suffix(model, create=False)
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


def values_of(variables):
    """Values of a list of Pyomo variables as a float array (None → 0, as for never-touched variables)."""
    return np.fromiter(((v.value if v.value is not None else 0.0) for v in variables), dtype=np.float64,
                       count=len(variables))
