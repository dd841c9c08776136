"""Master back ends behind one interface, chosen by (the master's form, the solver) in one place.

A program states its master (a Pyomo model) and says which *form* it has — :meth:`Program.master_form`:

* ``"gram_dual"`` — max_α Σ_r α_r Δℓ_r − ½ αᵀGα s.t. Σ_{r∈Sᵢ} α_r ≤ C·s, α ≥ 0, with the program giving the rows
  of G (:meth:`Program.gram_rows`) and its options (:meth:`Program.gram_dual_options`): P0's SVM^struct dual
  (``m3n``) and its metric-scaled form (``lapm3n``, ``adapm3n``);
* ``"lp_rows"`` — an LP whose cut rows are linear in the working set's ΔF, given as one CSR block a round
  (:meth:`Program.native_lp`): P1 (``l1m3n``);
* ``"qp_rows"`` — a QP with a diagonal Hessian whose cut rows are linear in ΔF, given as one CSR block a round
  (:meth:`Program.native_qp`): the elastic-net M³N (``enm3n``);
* ``"qcqp_dual"`` — a QCQP dual solved from the arrays the program states (:meth:`Program.qcqp_dual`):
  MTL's (6) with Ipopt;
* ``"lp_columns"`` — an LP grown by columns as well as rows, round by round, by the constraint generation over
  samples (:mod:`mmprog.engine.sample_generation`), its first columns and each round's new columns and rows given as
  arrays (:meth:`Program.grown_lp`, :meth:`Program.grown_rows`): L∞'s (10);
* anything else (or None) — the Pyomo model itself.

A back end declares the form and the solver it takes (``@back_end(form, solver)``); :func:`choose` looks the pair
up, and every other pair goes through the Pyomo model by the program's :meth:`Program.solve` (the rows added since
the last solve go to a persistent solver's copy where the solver has one, else the whole model to the solver; a
program overrides it only for what its statement needs, e.g. p-block's start inside the domain). Every route solves
the same program: the native ones load their values back into the Pyomo variables, so what ``show``, ``export``
and ``verify`` read is what was solved, and tests check each native route against the Pyomo route.

Each back end of the cutting plane's forms has ``solve(program, model, solver, options, time_limit)``, which returns the solver's checked
:class:`~mmprog.solvers.SolveStatus` (anything but an optimum raises :class:`~mmprog.exceptions.SolverError` with
the solver's own words); ``time_limit`` is always given, so no solve runs unbounded. A master grown by columns (``"lp_columns"``) is
grown and solved through an object of :func:`choose_growth`'s class instead (``add`` a round's rows, ``solve`` warm
or cold, ``certify``: read the multipliers), since its rounds add columns, not only rows.
"""
from __future__ import annotations

import numpy as np

#: (form, solver name) -> back end class
BACK_ENDS: dict[tuple[str, str], type] = {}


def back_end(form, solver):
    """Class decorator registering a master back end for the master ``form`` solved by ``solver``."""
    def deco(cls):
        cls.form, cls.solver = form, solver
        BACK_ENDS[(form, solver)] = cls
        return cls
    return deco


def choose(program, model, solver):
    """The back end for ``program``'s master ``model`` and ``solver``: the registered one for (form, solver) when
    the program allows that native route on this model (``program.native_ok(model, solver)``), else
    :class:`PyomoRoute`."""
    form = program.master_form(model)
    cls = BACK_ENDS.get((form, solver.name)) if form is not None else None
    if cls is not None and not program.native_ok(model, solver):
        cls = None
    return cls or PyomoRoute


def solve_master(program, model, solver, options=None, time_limit=None):
    """Solve ``program``'s master ``model`` as it stands through ``solver`` by the back end :func:`choose` picks.

    Parameters
    ----------
    program : Program
    model : ConcreteModel
        The master, built by ``program.build`` and grown by ``program.add_cuts``.
    solver : Solver
    options : dict, optional
        Solver options (Pyomo route only).
    time_limit : float, optional
        Seconds for this solve, handed to the solver.

    Returns
    -------
    SolveStatus
    """
    route = choose(program, model, solver)
    if route is not GramDualDAQPRoute:
        model.master_state.alpha_loaded = None      # another route writes the α variables (see GramDualDAQP.load)
    return route.solve(program, model, solver, options=options, time_limit=time_limit)


class PyomoRoute:
    """The Pyomo model itself through ``solver``, by the program's :meth:`~mmprog.programs.base.Program.solve`."""

    form = solver = None

    @staticmethod
    def solve(program, model, solver, options=None, time_limit=None):
        return program.solve(model, solver, options=options, time_limit=time_limit)


@back_end("gram_dual", "daqp")
class GramDualDAQPRoute:
    """The Gram dual with DAQP, solved from G, Δℓ and the budgets on a shrinking working set
    (:class:`~mmprog.engine.daqp_native.GramDualDAQP`, exact by a KKT check of the whole master)."""

    @staticmethod
    def solve(program, model, solver, options=None, time_limit=None):
        from .daqp_native import GramDualDAQP
        model.solved_with = model.master_state.native_label = "daqp"
        return GramDualDAQP.of(model, program.gram_rows).solve(model, time_limit=time_limit)


@back_end("gram_dual", "highs")
class GramDualHiGHSRoute:
    """The Gram dual with HiGHS through one persistent highspy object that gets one column and one Hessian row per
    cut (:class:`~mmprog.engine.highs_native.GramDualQP`): Pyomo's interfaces re-walk the whole ½αᵀGα expression
    (r² terms) on every solve."""

    @staticmethod
    def solve(program, model, solver, options=None, time_limit=None):
        from .highs_native import GramDualQP
        model.solved_with = "highs"
        qp = GramDualQP.of(model, program.gram_rows, **program.gram_dual_options())
        return qp.solve(model, time_limit=time_limit)


@back_end("lp_rows", "highs")
class NativeLPRoute:
    """An LP whose cut rows are linear in ΔF with HiGHS: one persistent highspy object takes each round's rows as
    one CSR block (:class:`~mmprog.engine.highs_native.NativeLP`; Pyomo's row building cost 30 s per OCR round)."""

    @staticmethod
    def solve(program, model, solver, options=None, time_limit=None):
        return solve_native_rows(model, program.native_lp, time_limit)


def solve_native_rows(model, arrays, time_limit):
    """Forms ``"lp_rows"``/``"qp_rows"`` with HiGHS: the master's persistent highspy object
    (:class:`~mmprog.engine.highs_native.NativeLP`, made from ``arrays(model)`` on first use) takes the rows added
    since the last solve and is re-solved; the values are loaded into the Pyomo variables, the cut multipliers kept
    in ``master_state.alpha_native``. Returns the SolveStatus."""
    from .highs_native import NativeLP
    state = model.master_state
    if state.native_lp is None:
        state.native_lp = NativeLP(**arrays(model))
    status, state.alpha_native = state.native_lp.solve(model.ws, time_limit=time_limit)
    model.solved_with = state.native_label = "highs-native"
    return status


@back_end("qp_rows", "highs")
class NativeQPRoute:
    """A QP with a diagonal Hessian and cut rows linear in ΔF (the elastic-net M³N's μ, ν split) with HiGHS: one
    persistent highspy object takes the Hessian once and each round's rows as one CSR block
    (:class:`~mmprog.engine.highs_native.NativeLP` with ``hessian``); Pyomo's interface would walk 2·dim quadratic
    terms and every row's expression on every solve."""

    @staticmethod
    def solve(program, model, solver, options=None, time_limit=None):
        return solve_native_rows(model, program.native_qp, time_limit)


@back_end("qp_rows", "ipopt")
class NativeQPIpoptRoute:
    """A QP with a diagonal Hessian and cut rows linear in ΔF with Ipopt (cyipopt) from the arrays
    (:func:`~mmprog.engine.ipopt_native.solve_diagonal_qp_ipopt`): the interior point's cost grows with the rows'
    non-zeros, where HiGHS's active-set QP grows with the free variables (a one-cut elastic-net master with 4,000
    non-zero weights ran past 120 s in HiGHS); started from the values the variables hold."""

    @staticmethod
    def solve(program, model, solver, options=None, time_limit=None):
        from .ipopt_native import solve_diagonal_qp_ipopt, with_wall_time
        from ..solvers import values_of
        from ..solvers.base import SolveStatus, finish_solve
        from ..solvers.ipopt import IPOPT_STATUS
        qp = program.native_qp(model)
        ws = model.ws
        act = np.flatnonzero(ws.active_mask()) if ws.size else np.zeros(0, dtype=np.int64)
        A = qp["row_block"](ws.dF()[act], ws.example_array()[act])
        x, alpha, info = solve_diagonal_qp_ipopt(qp["hessian"], qp["cost"], qp["lower"], qp["upper"], A,
                                                 ws.dl_array()[act], x0=values_of(qp["variables"]),
                                                 options=with_wall_time(options, time_limit))
        name, termination = IPOPT_STATUS.get(info["status"], (f"status {info['status']}", "other"))
        status = SolveStatus(termination, "optimal" if termination == "optimal" else "feasible",
                             f"Ipopt {name}: {info['message']}", info["solver_time"], info["objective"])
        # Ipopt's "acceptable level" (1e-7 instead of 1e-12) is kept with a warning, as for the QCQP dual
        finish_solve("ipopt", status, info["status"] != 1)
        for v, val in zip(qp["variables"], x):
            v.set_value(float(val), skip_validation=True)
        state = model.master_state
        state.alpha_native = np.zeros(ws.size)
        state.alpha_native[act] = alpha
        model.solved_with = state.native_label = "ipopt-native"
        return status


@back_end("qcqp_dual", "ipopt")
class QCQPDualIpoptRoute:
    """A QCQP dual handed to Ipopt from the arrays the program states (:meth:`Program.qcqp_dual`; solved by
    :func:`mmprog.engine.ipopt_native.solve_qcqp_ipopt`, loaded back by :meth:`Program.load_qcqp_dual`): MTL's (6),
    whose Pyomo form Ipopt would read through the NL writer, r² terms a template a solve."""

    @staticmethod
    def solve(program, model, solver, options=None, time_limit=None):
        from .ipopt_native import solve_qcqp_ipopt, with_wall_time
        from ..solvers.base import SolveStatus, finish_solve
        from ..solvers.ipopt import IPOPT_STATUS
        qp = program.qcqp_dual(model)
        alpha, theta, mu, info = solve_qcqp_ipopt(qp["Q"], qp["q"], qp["slack_idx"], qp["n_budgets"], qp["budget"],
                                                  beta0=qp["beta0"], options=with_wall_time(qp["options"], time_limit))
        name, termination = IPOPT_STATUS.get(info["status"], (f"status {info['status']}", "other"))
        status = SolveStatus(termination, "optimal" if termination == "optimal" else "feasible",
                             f"Ipopt {name}: {info['message']}", info["solver_time"], float(alpha @ qp["q"] - theta))
        # Ipopt's "acceptable level" (1e-7 instead of 1e-10) is kept with a warning rather than ending a long run
        finish_solve("ipopt", status, info["status"] != 1)
        program.load_qcqp_dual(model, qp["active"], alpha, theta, mu)
        model.solved_with = "ipopt"
        return status


# ------------------------------------------------------------------------------------------------------------
# Masters grown by columns and rows (form "lp_columns"): the constraint generation over samples
# ------------------------------------------------------------------------------------------------------------

def choose_growth(program, model, solver, route="auto"):
    """The class growing ``program``'s master ``model`` (form ``"lp_columns"``) with ``solver``: the native back
    end registered for (form, solver) when there is one (``route="auto"`` or ``"native"``), else
    :class:`PyomoGrowth` (``route="auto"`` or ``"pyomo"``).

    Raises
    ------
    ParameterError
        ``route="native"`` for a (form, solver) pair no native back end takes.
    """
    from ..exceptions import ParameterError
    form = program.master_form(model)
    native = BACK_ENDS.get((form, solver.name)) if form is not None else None
    if route == "pyomo":
        return PyomoGrowth
    if route == "native" and native is None:
        takes = [s for (f, s) in BACK_ENDS if f == form]
        raise ParameterError(f'route="native" feeds {" or ".join(takes) or "no solver"} directly; with '
                             f'solver={solver.name!r} use route="pyomo"')
    return native or PyomoGrowth


@back_end("lp_columns", "highs")
class GrownLPRoute:
    """An LP grown by columns and rows with HiGHS: one persistent highspy object takes each round's new columns
    and rows as CSR blocks (:class:`~mmprog.engine.highs_native.GrownLP`); the Pyomo model is written on demand."""

    route = "native"

    def __init__(self, program, model, solver):
        from .highs_native import GrownLP
        self.program, self.model = program, model
        self.lp = model.master_state.grown_lp = GrownLP(**program.grown_lp(model))
        model.solved_with = "highs-native"

    def add(self, cuts):
        """Record the rows of ``cuts`` in the master and hand the new columns and rows to HiGHS; returns how many
        columns are new."""
        n_new, Zr = self.program.record(self.model, cuts)
        columns, rows = self.program.grown_rows(self.model, n_new, Zr)
        self.lp.add_columns(*columns)
        for group, lower, upper, A in rows:
            self.lp.add_rows(group, lower, upper, A)
        return n_new

    def solve(self, cold=False, time_limit=None):
        """Solve (from scratch when ``cold``) and load the point into the master; returns (SolveStatus,
        objective)."""
        status, x = self.lp.solve(cold=cold, time_limit=time_limit)
        return status, self.program.load_point(self.model, x)

    def certify(self):
        """Load the final master's multipliers into it; returns None (no extra solve)."""
        self.program.load_duals(self.model, self.lp.duals())
        return None


class PyomoGrowth:
    """An LP grown by columns and rows through the Pyomo model and the registry's ``solver`` (its persistent copy,
    set up on the empty master, where it has one: a round's columns then reach the solver in one batch)."""

    route = "pyomo"

    def __init__(self, program, model, solver):
        self.program, self.model, self.solver = program, model, solver
        model.solved_with = solver.name
        self.handle = None
        if solver.persistent:
            self.handle = model.master_state.handle = solver.persistent_handle(model)

    def add(self, cuts):
        """Write the rows of ``cuts`` and their new columns into the Pyomo model (and the solver's copy)."""
        new_vars, new_cons = self.program.add_cuts(self.model, cuts)
        if self.handle is not None:
            self.handle.add_variables(new_vars)
            self.handle.add_constraints(new_cons)
        return len(new_vars)

    def solve(self, cold=False, time_limit=None):
        """Solve (through the solver's copy, cold after :func:`forget_basis` when ``cold``) and load the point
        into the master; returns (SolveStatus, objective)."""
        from ..solvers import values_of
        if cold and self.handle is not None:
            forget_basis(self.handle)
        status = self._solve(load_duals=False, time_limit=time_limit)
        return status, self.program.load_point(self.model, values_of(self.program.grown_variables(self.model)))

    def certify(self):
        """Re-solve the (optimal, warm) master with its duals loaded and read them into the master."""
        status = self._solve(load_duals=True)
        self.program.load_duals(self.model, None)
        return status

    def _solve(self, load_duals, time_limit=None):
        if self.handle is not None:
            return self.handle.solve(load_duals=load_duals, time_limit=time_limit)
        return self.solver.solve(self.model, load_duals=load_duals, time_limit=time_limit)


def forget_basis(handle):
    """Drop the basis of a persistent HiGHS handle so the next solve presolves from scratch.

    A master grown by columns can be highly degenerate (L∞'s (10) ties every column to t by two rows): after a round
    that adds many columns, a HiGHS simplex hot-started from the old basis took 9-18 s on 16-41 thousand columns
    where a presolved cold solve took 0.3-1 s. Solvers without such a handle are left alone."""
    highs = getattr(getattr(handle, "_opt", None), "_solver_model", None)
    if highs is not None and hasattr(highs, "clearSolver"):
        highs.clearSolver()
