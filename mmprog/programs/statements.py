"""The duality statements every program shares: what a program's module imports to state and check its dual.

* :class:`Check` rows (one named statement, the two numbers it compares, their gap, the tolerance, a status) and
  :func:`compare` / :func:`skipped`;
* the hook base :class:`Duality` and its registry (``@duality_for("name")``, :data:`HOOKS`);
* the working-set arrays of a trained master (:class:`WSArrays`, :func:`working_set_arrays`), a master rebuilt on
  them (:func:`rebuild_master`, :func:`rebuild_as`), the skeleton of a working-set dual (:func:`base_dual`);
* the statements every program makes (:func:`feasibility_checks`, :func:`slackness_checks`,
  :func:`sparsity_check`, :func:`cross_solver_checks`).

The entry points — :func:`mmprog.duality.check`, :func:`mmprog.duality.dual_model`, the context handed to hooks —
live one floor up, in :mod:`mmprog.duality`, which imports the programs; this module imports none of them, so that
every import points down. See :mod:`mmprog.duality` for the scales and the programs covered.
"""
from __future__ import annotations

import logging
from dataclasses import asdict, dataclass

import numpy as np
import pyomo.core as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from ..exceptions import SolverError, SolverUnavailable

log = logging.getLogger("mmprog.duality")

__all__ = ["STATUSES", "Check", "compare", "skipped", "HOOKS", "duality_for", "Duality", "WSArrays",
           "working_set_arrays", "cuts_of", "rebuild_master", "rebuild_as", "solve_value", "objective_of", "duals_of",
           "support_of", "base_dual", "result_numbers", "scale_of", "feasibility_checks", "slackness_checks",
           "sparsity_check", "CROSS_SOLVER_TIME_LIMIT", "cross_solver_checks"]

STATUSES = ("pass", "fail", "skipped")

# ----------------------------------------------------------------------------------------------------------------
# Check rows
# ----------------------------------------------------------------------------------------------------------------

@dataclass
class Check:
    """One verified statement.

    Attributes
    ----------
    program : str
    statement : str
        What is claimed, naming both sides (``lhs`` first).
    lhs, rhs : float or None
        The two numbers compared.
    gap : float or None
        ``|lhs − rhs|`` for ``=``; ``lhs − rhs`` for ``≤`` (negative: room to spare).
    tolerance : float or None
        Largest admissible gap.
    status : {"pass", "fail", "skipped"}
    reason : str
        Why it was skipped, or what failed, or a note (which solver, how many cuts).
    relation : {"=", "≤"}
    """

    program: str
    statement: str
    lhs: float | None
    rhs: float | None
    gap: float | None
    tolerance: float | None
    status: str
    reason: str = ""
    relation: str = "="

    def as_dict(self):
        return asdict(self)

    @property
    def failed(self):
        return self.status == "fail"


def compare(program, statement, lhs, rhs, tolerance, relation="=", reason=""):
    """A :class:`Check` from two numbers: ``=`` passes when |lhs − rhs| ≤ tolerance, ``≤`` when
    lhs − rhs ≤ tolerance. A NaN on either side fails."""
    lhs, rhs, tolerance = float(lhs), float(rhs), float(tolerance)
    if relation == "=":
        gap = abs(lhs - rhs)
    elif relation == "≤":
        gap = lhs - rhs
    else:
        raise ValueError(f"relation must be '=' or '≤'; got {relation!r}")
    ok = np.isfinite(gap) and gap <= tolerance
    return Check(program, statement, lhs, rhs, gap, tolerance, "pass" if ok else "fail", reason, relation)


def skipped(program, statement, reason):
    return Check(program, statement, None, None, None, None, "skipped", reason)

# ----------------------------------------------------------------------------------------------------------------
# The registry of hooks
# ----------------------------------------------------------------------------------------------------------------

HOOKS: dict[str, "Duality"] = {}


def duality_for(name):
    """Class decorator: register a :class:`Duality` subclass as the hook of program ``name``."""
    def deco(cls):
        cls.program = name
        HOOKS[name] = cls()
        return cls
    return deco

class Duality:
    """Base hook: the explicit dual and the statements of one program.

    Attributes
    ----------
    program : str
        Registered program name.
    fit_params : dict
        Program parameters used by :meth:`fit` for ``mmprog verify`` (e.g. ``master="primal"``).
    rebuildable : bool
        Whether the master can be rebuilt from its working set through the Program interface (``build`` +
        ``add_cuts``), which the cross-solver statement needs.
    """

    program = "?"
    fit_params: dict = {}
    rebuildable = True
    #: what ``mmprog verify`` trains on when given a chain data set this program cannot take (None: the same data)
    data_note = ""
    #: True when the program is not trained by :func:`mmprog.fit` but grown by another route of the engine
    #: (``mmprog verify`` and ``mmprog show`` then hand :meth:`fit` the engine, :data:`mmprog.engine.routes.ENGINE`,
    #: as its ``trainer``)
    own_fit = False

    def fit(self, dataset, trainer, solver=None, C=1.0, slack="n", eps=1e-4, **kw):
        """Train the program for verification (tight ``eps`` so the statements are tested near the optimum).

        Parameters
        ----------
        dataset
        trainer : callable
            :func:`mmprog.fit` (handed in by the command line, so that this module never imports the public face);
            the engine (:data:`mmprog.engine.routes.ENGINE`) for an ``own_fit`` program.
        """
        params = {**self.fit_params, **kw}
        return trainer(dataset, program=self.program, C=C, solver=solver, slack=slack, eps=eps, **params)

    def accepts(self, dataset):
        """None when :meth:`fit` can train on ``dataset``, else why not (one line)."""
        if hasattr(dataset, "lengths") and (hasattr(dataset, "X") or hasattr(dataset, "heads")):
            return None
        return (f"program {self.program!r} trains on sequences or trees; the data are a "
                f"{type(dataset).__name__}")

    def dual_model(self, result):
        raise NotImplementedError(f"no explicit dual model for program {self.program!r} yet")

    def checks(self, ctx):
        return iter(())

# ----------------------------------------------------------------------------------------------------------------
# Working-set arrays and rebuilding a master
# ----------------------------------------------------------------------------------------------------------------

@dataclass
class WSArrays:
    """The active cuts of a master as arrays.

    Attributes
    ----------
    positions : ndarray of int, shape (r,)
        Working-set positions of the active cuts.
    F : csr_matrix, shape (r, dim)
        ΔF_r.
    dl : ndarray, shape (r,)
        Δℓ_r.
    slack : ndarray of int, shape (r,)
        The slack (example for n-slack, 0 for 1-slack) of each cut.
    n_slacks : int
    budget : float
        C·s, the bound on Σ_{r∈Sᵢ} α_r (and the objective weight of each ξᵢ).
    """

    positions: np.ndarray
    F: object
    dl: np.ndarray
    slack: np.ndarray
    n_slacks: int
    budget: float

    def slack_sums(self, v):
        """Σ_{r∈Sᵢ} v_r for every slack i, shape (n_slacks,)."""
        return np.bincount(self.slack, weights=v, minlength=self.n_slacks)


def working_set_arrays(result_or_model, C=None):
    """:class:`WSArrays` of the active cuts of ``result.model`` (or of a model)."""
    # a Pyomo model has a .model() method, so tell the two apart by the working set
    model = result_or_model if hasattr(result_or_model, "ws") else result_or_model.model
    ws = model.ws
    act = np.nonzero(ws.active_mask())[0] if ws.size else np.zeros(0, dtype=np.int64)
    if C is None:
        C = float(pyo.value(model.C)) if hasattr(model, "C") else float(result_or_model.params["C"])
    return WSArrays(positions=act, F=ws.dF()[act], dl=ws.dl_array()[act], slack=ws.example_array()[act],
                    n_slacks=model.dims.n_slacks, budget=C * float(model.slack_scale))


def cuts_of(arrays):
    from ..cuts import Cuts
    return Cuts(arrays.slack.copy(), arrays.F.copy(), arrays.dl.copy())


def rebuild_master(result, solver, read=True, time_limit=None, **program_params):
    """Build the result's master afresh from its active cuts (Program ``build`` + ``add_cuts``), solve it with
    ``solver`` and return ``(model, Solution)`` (``(model, None)`` with ``read=False``, for a solver that returns no
    duals, from which a primal master's α would be read). ``program_params`` override the result's (e.g.
    ``master="primal"``).
    """
    from .base import get_program
    from ..solvers import get_solver
    prog = get_program(result.program, **{**result.params, **program_params})
    arrays = working_set_arrays(result)
    metric = getattr(result.model, "metric", None)
    if metric is not None:
        # diagonally rescaled masters (lapm3n, adapm3n) hold their last metric on the model
        prog._metric = np.asarray(metric, dtype=np.float64).copy()
    model = prog.build(result.model.dims)
    if metric is not None and hasattr(prog, "set_metric"):
        prog.set_metric(model, metric)
    if len(arrays.dl):
        prog.add_cuts(model, cuts_of(arrays))
    slv = get_solver(solver)
    model.solved_with = slv.name
    result.solve_master(prog, model, slv, time_limit=time_limit)
    return model, (prog.read_solution(model) if read else None)


def solve_value(model, solver_name):
    """Solve a (dual) model with a registered solver; returns the objective value at the loaded point."""
    from ..solvers import get_solver
    s = get_solver(solver_name)
    s.solve(model)
    model.solved_with = s.name
    return float(pyo.value(objective_of(model)))


def objective_of(model):
    return next(model.component_data_objects(pyo.Objective, active=True))


def duals_of(model, cons):
    from ..solvers import duals
    return duals(model, cons, getattr(model, "solved_with", None))


def rebuild_as(result, program, solver, **params):
    """Build ``program`` with ``params`` on ``result``'s active cuts and solve it with ``solver``."""
    from .base import get_program
    from ..solvers import get_solver
    prog = get_program(program, **params)
    arrays = working_set_arrays(result)
    model = prog.build(result.model.dims)
    if len(arrays.dl):
        prog.add_cuts(model, cuts_of(arrays))
    slv = get_solver(solver)
    model.solved_with = slv.name
    result.solve_master(prog, model, slv)
    return model, prog.read_solution(model)

# ----------------------------------------------------------------------------------------------------------------
# What the explicit duals of the working-set masters share
# ----------------------------------------------------------------------------------------------------------------

def support_of(F):
    """Columns k that appear in some cut (ΔF_{·k} ≠ 0): the only ones the dual constraints are non-trivial for."""
    F = F.tocsc()
    return np.nonzero(np.diff(F.indptr) > 0)[0]


def base_dual(arrays, name):
    m = pyo.ConcreteModel(name=name)
    r = len(arrays.dl)
    # alpha[r] is the multiplier of cut r: cuts[r] of the primal masters, alpha[r] of the Gram dual master
    # (Pyomo's ConstraintList/VarList count from 1, the working set from 0)
    m.CUTS = pyo.Set(initialize=[int(p) + 1 for p in arrays.positions], ordered=True)
    m.alpha = pyo.Var(m.CUTS, domain=pyo.NonNegativeReals, initialize=0.0)
    m.C_budget = pyo.Param(initialize=arrays.budget, mutable=True)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    alpha = [m.alpha[int(p) + 1] for p in arrays.positions]
    m.alpha_list = alpha
    slacks = sorted(set(int(s) for s in arrays.slack)) if r else []
    members = {i: [] for i in slacks}
    for a, s in zip(alpha, arrays.slack):
        members[int(s)].append(a)
    m.SLACKS = pyo.Set(initialize=slacks, ordered=True)
    m.budget = pyo.Constraint(m.SLACKS, rule=lambda m, i: LinearExpression(
        constant=0.0, linear_coefs=[1.0] * len(members[i]), linear_vars=members[i]) <= m.C_budget)
    m.linear = pyo.Expression(expr=LinearExpression(constant=0.0, linear_coefs=[float(v) for v in arrays.dl],
                                                    linear_vars=alpha))
    m.ws_arrays = arrays
    return m, alpha

# ----------------------------------------------------------------------------------------------------------------
# Statements shared by the max-margin programs
# ----------------------------------------------------------------------------------------------------------------

def result_numbers(result, arrays):
    w = np.asarray(result.w, dtype=np.float64)
    xi = np.asarray(result.xi, dtype=np.float64)
    alpha = np.asarray(result.alpha, dtype=np.float64)
    alpha = alpha[arrays.positions] if len(alpha) >= len(arrays.positions) and len(alpha) else np.zeros(
        len(arrays.positions))
    return w, xi, alpha


def scale_of(*values):
    return max(1.0, *(float(np.max(np.abs(v))) if np.size(v) else 0.0 for v in values))


def feasibility_checks(ctx, arrays, w, xi, alpha, extra_dual=None):
    """Primal feasibility (cuts and ξ ≥ 0) and dual feasibility (α ≥ 0, budgets, ``extra_dual``) from the numbers.

    ``extra_dual`` is ``(statement_suffix, violation)`` for program-specific dual constraints."""
    tol = 1e-6 * scale_of(arrays.dl, arrays.budget)
    if len(arrays.dl):
        viol = arrays.dl - arrays.F @ w - xi[arrays.slack]
        worst = float(max(viol.max(), 0.0))
    else:
        worst = 0.0
    worst = max(worst, float(max(-xi.min(initial=0.0), 0.0)))
    yield ctx.check("primal feasibility: max_r (Δℓ_r − wᵀΔF_r − ξ_e(r))⁺ and max (−ξ)⁺ ≤ 0", worst, 0.0, tol, "≤",
                    f"{len(arrays.dl)} active cuts")
    dv = float(max(-alpha.min(initial=0.0), 0.0))
    sums = arrays.slack_sums(alpha)
    dv = max(dv, float((sums - arrays.budget).max(initial=0.0)))
    name = "dual feasibility: α ≥ 0 and Σ_{r∈Sᵢ} α_r ≤ C·s"
    if extra_dual is not None:
        name += extra_dual[0]
        dv = max(dv, float(extra_dual[1]))
    yield ctx.check(name + " (max violation ≤ 0)", dv, 0.0, tol, "≤", f"budget C·s = {arrays.budget:.6g}")


def slackness_checks(ctx, arrays, w, xi, alpha, extra=()):
    """Complementary slackness: α_r·(wᵀΔF_r + ξ_e(r) − Δℓ_r) = 0 and ξᵢ·(C·s − Σ_{r∈Sᵢ} α_r) = 0, plus ``extra``
    products (program-specific)."""
    prods = [np.zeros(1)]
    if len(arrays.dl):
        prods.append(alpha * (arrays.F @ w + xi[arrays.slack] - arrays.dl))
        prods.append(xi * (arrays.budget - arrays.slack_sums(alpha)))
    prods.extend(extra)
    worst = float(max(np.abs(p).max(initial=0.0) for p in prods))
    tol = 1e-5 * scale_of(arrays.dl, arrays.budget)
    yield ctx.check("complementary slackness: max |α_r·slack_r|, |ξᵢ·(C·s − Σα)| = 0", worst, 0.0, tol)


def sparsity_check(ctx, arrays, w, xi, alpha, tol=1e-5, tight=1e-6):
    """Dual sparsity (KDD 2009, section 2): by complementary slackness only cuts that hold with equality can carry
    a non-zero multiplier. Counts the non-zero α_r on cuts that are not tight (must be 0) and reports how many of
    the multipliers are non-zero. "Non-zero" is α_r > ``tol``·max(1, C·s): interior-point solvers (Ipopt) leave
    α_r ≈ μ/slack_r ~ 1e-7 on slack cuts; "tight" is a slack ≤ ``tight``·max(1, max Δℓ) (first-order solvers
    that stop at a relative gap need a looser one)."""
    stmt = "dual sparsity: #{α_r > 0 on a cut that is not tight} = 0"
    if not len(arrays.dl):
        return ctx.skip(stmt, "the working set is empty")
    slack_r = arrays.F @ w + xi[arrays.slack] - arrays.dl
    nz = alpha > tol * max(1.0, arrays.budget)
    tight = np.abs(slack_r) <= tight * scale_of(arrays.dl)
    return ctx.check(stmt, int(np.count_nonzero(nz & ~tight)), 0, 0.0,
                     reason=f"{int(nz.sum())} of {len(alpha)} multipliers non-zero, {int(tight.sum())} cuts tight")


#: seconds each solver gets for the cross-solver statement: a global solver (SCIP) on the NLP masters may take far
#: longer than the program's own method; a solve that stops on this limit is reported as a skip with its words
CROSS_SOLVER_TIME_LIMIT = 60.0


def cross_solver_checks(ctx, **program_params):
    """The same master (same active cuts) solved by each usable solver gives the same optimum as the first."""
    res = ctx.result
    pc = ctx.program.problem_class
    rows = ctx.cross_solvers(pc)
    usable = [n for n, why in rows if why is None]
    out = []
    if len(usable) < 2:
        why = "; ".join(f"{n}: {r}" for n, r in rows if r) or "only one solver named"
        out.append(ctx.skip(f"cross-solver agreement ({pc.value}) on the same working set",
                            f"fewer than two usable solvers ({', '.join(usable) or 'none'}); {why}"))
        return out
    ref = usable[0]
    values = {}
    from ..solvers import get_solver
    for name in usable:
        try:
            limit = None if name == ref else CROSS_SOLVER_TIME_LIMIT
            if get_solver(name).gives_duals:
                _, sol = rebuild_master(res, name, time_limit=limit, **program_params)
                values[name] = sol.objective
            else:
                # no duals (SCIP): the optimum is the value of the master's own objective at the solver's point —
                # primal or dual form, the same number at an optimum by strong duality
                model, _ = rebuild_master(res, name, read=False, time_limit=limit, **program_params)
                values[name] = float(pyo.value(objective_of(model)))
        except (SolverError, SolverUnavailable) as e:
            values[name] = e
    ref_v = values[ref]
    for name, why in rows:
        stmt = f"cross-solver: optimum by {ref} = optimum by {name} (same working set)"
        if name == ref:
            continue
        if why is not None:
            out.append(ctx.skip(stmt, why))
        elif isinstance(ref_v, Exception):
            out.append(Check(ctx.name, stmt, None, None, None, None, "fail", f"{ref}: {ref_v}"))
        elif isinstance(values[name], SolverError) and values[name].termination in ("max_time", "time_limit"):
            out.append(ctx.skip(stmt, f"{name} stopped on the {CROSS_SOLVER_TIME_LIMIT:g} s limit of this statement "
                                      f"({values[name].solver_message or values[name].termination})"))
        elif isinstance(values[name], Exception):
            out.append(Check(ctx.name, stmt, ref_v, None, None, None, "fail", f"{name}: {values[name]}"))
        else:
            out.append(ctx.check(stmt, ref_v, values[name], 1e-5 * scale_of(ref_v)))
    return out
