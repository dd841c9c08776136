"""Master back ends behind one interface, chosen by (the master's form, the solver) in one place.

A program states its master (a Pyomo model) and says which *form* it has — :meth:`Program.master_form`:

* ``"gram_dual"`` — max_α Σ_r α_r Δℓ_r − ½ αᵀGα s.t. Σ_{r∈Sᵢ} α_r ≤ C·s, α ≥ 0, with the program giving the rows
  of G (:meth:`Program.gram_rows`) and its options (:meth:`Program.gram_dual_options`): P0's SVM^struct dual
  (``m3n``) and its metric-scaled form (``lapm3n``, ``adapm3n``);
* ``"lp_rows"`` — an LP whose cut rows are linear in the working set's ΔF, given as one CSR block a round
  (:meth:`Program.native_lp`): P1 (``l1m3n``);
* ``"qcqp_dual"`` — a QCQP dual solved from its arrays by the program's own call (:meth:`Program.solve_native`):
  MTL's (6) with Ipopt;
* anything else (or None) — the Pyomo model itself.

A back end declares the form and the solver it takes (``@back_end(form, solver)``); :func:`choose` looks the pair
up, and every other pair goes through the Pyomo model by the program's :meth:`Program.solve` (the rows added since
the last solve go to a persistent solver's copy where the solver has one, else the whole model to the solver; a
program overrides it only for what its statement needs, e.g. p-block's start inside the domain). Every route solves
the same program: the native ones load their values back into the Pyomo variables, so what ``show``, ``export``
and ``verify`` read is what was solved, and tests check each native route against the Pyomo route.

Each back end's ``solve(program, model, solver, options, time_limit)`` returns the solver's checked
:class:`~mmprog.solvers.SolveStatus` (anything but an optimum raises :class:`~mmprog.exceptions.SolverError` with
the solver's own words); ``time_limit`` is always given, so no solve runs unbounded.
"""
from __future__ import annotations

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
        model.solved_with = "daqp"
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
        from .highs_native import NativeLP
        state = model.master_state
        if state.native_lp is None:
            state.native_lp = NativeLP(**program.native_lp(model))
        status, state.alpha_native = state.native_lp.solve(model.ws, time_limit=time_limit)
        model.solved_with = "highs-native"
        return status


@back_end("qcqp_dual", "ipopt")
class QCQPDualIpoptRoute:
    """A QCQP dual handed to Ipopt from its arrays by the program (:meth:`Program.solve_native`): MTL's (6), whose
    Pyomo form Ipopt would read through the NL writer, r² terms a template a solve."""

    @staticmethod
    def solve(program, model, solver, options=None, time_limit=None):
        return program.solve_native(model, time_limit=time_limit)
