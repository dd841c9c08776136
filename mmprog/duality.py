"""Explicit dual programs and the duality checks the papers state, recomputed from the numbers.

Every registered program gets, from the working set of a trained master (``result.model.ws``):

* :func:`dual_model` — its dual as a Pyomo model of its own, solvable by any solver that takes its class;
* :func:`check` — a list of :class:`Check` rows, each one named statement with the two numbers it compares
  (``lhs``, ``rhs``), their ``gap``, the ``tolerance`` and a status ``pass``/``fail``/``skipped`` (with a reason).
  Nothing is trusted from a solver that can be recomputed: feasibility, complementary slackness and stationarity
  are evaluated in numpy from ΔF, Δℓ, w, ξ and α.

How a program contributes (the hook)
------------------------------------
Each program name maps to a :class:`Duality` object in a registry (``@duality_for("name")``). Its
:meth:`Duality.dual_model` builds the explicit dual and :meth:`Duality.checks` yields the program's statements.
A program module that carries its own ``dual_model(model)`` (and optionally a ``checks(result)`` generator) on its
:class:`~mmprog.programs.base.Program` class needs no entry here: :class:`ProgramHook` wires it, and the
generic statements (cross-solver agreement on the same working set) are added for it.

Programs covered here
---------------------
``m3n`` (P0 and Theorem 3), ``l1m3n`` (P1's LP dual; P1′ by sub-gradient gets its ball constraint only), ``p4``
(its dual, P4 ⇔ P1, Theorem 2), ``lapm3n`` and ``adapm3n`` (the diagonal-metric dual of their last QP, Theorem 3
through Algorithm 1, the EM fixed point, Theorem 2), ``pomen`` (Step 1 as P0, EM descent, (11)–(12), the β-dual of
one example against enumeration and its gradient), ``mtl`` ((5)/(6) through the program's own ``dual_model``,
recovery (7)), ``pblock`` ((10)/(11), (12)–(13), the gradient of (11)), ``linf`` (the program's own
``linf_checks``: its LP dual, Propositions 1 and 2, (17); plus dual sparsity and cross-solver agreement).

Scales
------
Objectives are on the n-slack scale Ω(w) + C Σᵢ ξᵢ in both slack forms: the 1-slack master weighs its one ξ by C·n
(``model.slack_scale`` = n / n_slacks), so every budget below is C·s with s = ``slack_scale`` (C for n-slack, C·n
for 1-slack).
"""
from __future__ import annotations

import logging
from dataclasses import asdict, dataclass

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from .exceptions import MMProgError, SolverError, SolverUnavailable

log = logging.getLogger("mmprog.duality")

__all__ = ["Check", "Duality", "ProgramHook", "Context", "duality_for", "hook_for", "dual_model", "check",
           "working_set_arrays", "rebuild_master", "p0_dual_model", "theorem3_model", "p1_dual_model",
           "p4_dual_model", "metric_dual_model", "block_dual", "template_grams", "compare", "skipped", "STATUSES"]

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

_HOOKS: dict[str, "Duality"] = {}


def duality_for(name):
    """Class decorator: register a :class:`Duality` subclass as the hook of program ``name``."""
    def deco(cls):
        cls.program = name
        _HOOKS[name] = cls()
        return cls
    return deco


def hook_for(name):
    """The duality hook of program ``name``: the registered one, else a :class:`ProgramHook` over the program
    class's own ``dual_model``/``checks``."""
    if name in _HOOKS:
        return _HOOKS[name]
    return ProgramHook(name)


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
    #: True when the program is not trained by :func:`mmprog.fit` (``mmprog show`` then trains through :meth:`fit`)
    own_fit = False

    def fit(self, dataset, solver=None, C=1.0, slack="n", eps=1e-4, **kw):
        """Train the program for verification (tight ``eps`` so the statements are tested near the optimum)."""
        import mmprog
        params = {**self.fit_params, **kw}
        return mmprog.fit(dataset, program=self.program, C=C, solver=solver, slack=slack, eps=eps, **params)

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


class ProgramHook(Duality):
    """Hook for a program that carries its dual on its class: ``Program.dual_model(model)`` and optionally
    ``Program.checks(result)`` (a generator of :class:`Check` or of dicts with the same fields)."""

    def __init__(self, name):
        self.program = name

    def _program(self, result=None):
        from .programs import get_program
        if result is not None:
            return get_program(result.program, **result.params)
        return get_program(self.program)

    def dual_model(self, result):
        return self._program(result).dual_model(result.model)

    def checks(self, ctx):
        prog = ctx.program
        gen = getattr(prog, "checks", None)
        if gen is None:
            yield skipped(self.program, "program-specific statements",
                          f"program {self.program!r} defines no checks(result) yet")
            return
        for c in gen(ctx.result):
            yield c if isinstance(c, Check) else Check(**{"program": self.program, **c})


# ----------------------------------------------------------------------------------------------------------------
# The context handed to hooks
# ----------------------------------------------------------------------------------------------------------------

class Context:
    """What a hook's :meth:`Duality.checks` gets: the result, the program instance, the solvers to use and the
    data set (optional), with helpers to pick solvers and to turn numbers into checks.

    Parameters
    ----------
    result : Result
    solvers : list of str, optional
        Solvers named by the user; the first one that takes a class is used for it, all of them for the
        cross-solver statement. Default: the program's default solver, and every other registered solver for the
        cross-solver statement.
    dataset : optional
        The training data (some statements compare predictions).
    rtol : float
        Relative tolerance for values compared across solves.
    """

    def __init__(self, result, solvers=None, dataset=None, rtol=1e-6):
        from .programs import get_program
        self.result = result
        self.name = result.program
        self.program = get_program(result.program, **result.params)
        self.solvers = list(solvers or [])
        self.dataset = dataset
        self.rtol = rtol

    def check(self, statement, lhs, rhs, tolerance, relation="=", reason=""):
        return compare(self.name, statement, lhs, rhs, tolerance, relation, reason)

    def skip(self, statement, reason):
        return skipped(self.name, statement, reason)

    def solver_for(self, problem_class, need_duals=False):
        """``(name, None)`` for the solver to use on a program of ``problem_class`` — the first named solver that
        takes the class, else mmprog's default for it — or ``(None, reason)``."""
        from .solvers import default_solver, get_solver
        candidates = self.solvers + [default_solver(problem_class)]
        reasons = []
        for name in candidates:
            try:
                s = get_solver(name)
            except SolverUnavailable as e:
                reasons.append(str(e))
                continue
            rep = s.availability(problem_class)
            if not rep:
                reasons.append(rep.reason)
            elif need_duals and not s.gives_duals:
                reasons.append(f"{name} returns no duals")
            else:
                return name, None
        return None, "; ".join(reasons) or "no solver named"

    def cross_solvers(self, problem_class):
        """Solvers for the cross-solver statement: ``[(name, None)]`` usable ones and ``[(name, reason)]`` the
        others — the user's list, else every registered solver that claims the class."""
        from .solvers import get_solver, registered
        from .solvers.base import _REGISTRY
        from .solvers import ProblemClass
        pc = ProblemClass(problem_class)
        names = self.solvers or [n for n in registered() if pc in _REGISTRY[n].capabilities]
        out = []
        for name in names:
            try:
                slv = get_solver(name)
                rep = slv.availability(pc)
            except SolverUnavailable as e:
                out.append((name, str(e)))
                continue
            if rep and pc is ProblemClass.NLP and slv.global_optimizer and not self.solvers:
                # spatial branch-and-bound on the smooth concave NLP masters proves global optimality the hard way
                # (minutes on a 7-cut p-block master): only when asked for
                out.append((name, f"{name} is a global solver, slow on NLP masters; name it among the solvers "
                                  f"(--solver {name}) to include it"))
                continue
            out.append((name, None if rep else rep.reason))
        return out


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


def _cuts_of(arrays):
    from .cuts import Cuts
    return Cuts(arrays.slack.copy(), arrays.F.copy(), arrays.dl.copy())


def rebuild_master(result, solver, read=True, time_limit=None, **program_params):
    """Build the result's master afresh from its active cuts (Program ``build`` + ``add_cuts``), solve it with
    ``solver`` and return ``(model, Solution)`` (``(model, None)`` with ``read=False``, for a solver that returns no
    duals, from which a primal master's α would be read). ``program_params`` override the result's (e.g.
    ``master="primal"``).
    """
    from .programs import get_program
    from .solvers import get_solver
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
        prog.add_cuts(model, _cuts_of(arrays))
    slv = get_solver(solver)
    model.solved_with = slv.name
    prog.solve(model, slv, **({"time_limit": time_limit} if time_limit else {}))
    return model, (prog.read_solution(model) if read else None)


def _solve(model, solver_name):
    """Solve a (dual) model with a registered solver; returns the objective value at the loaded point."""
    from .solvers import get_solver
    s = get_solver(solver_name)
    s.solve(model)
    model.solved_with = s.name
    return float(pyo.value(_objective(model)))


def _objective(model):
    return next(model.component_data_objects(pyo.Objective, active=True))


def _duals_of(model, cons):
    from .solvers import duals
    return duals(model, cons, getattr(model, "solved_with", None))


# ----------------------------------------------------------------------------------------------------------------
# Explicit duals of P0 and P1
# ----------------------------------------------------------------------------------------------------------------

def _support(F):
    """Columns k that appear in some cut (ΔF_{·k} ≠ 0): the only ones the dual constraints are non-trivial for."""
    F = F.tocsc()
    return np.nonzero(np.diff(F.indptr) > 0)[0]


def _base_dual(arrays, name):
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


def p0_dual_model(arrays, name="m3n_dual"):
    """The dual of P0 on a working set — Theorem 3 of Zhu, Xing & Zhang (ICML 2008), with Σ_y αᵢ(y) ≤ C·s over the
    working set (the ground-truth labeling's multiplier, Δf = 0 and Δℓ = 0, is the slack of the budget; see
    :func:`theorem3_model` for the equality form)::

        max_{α ≥ 0, w}  Σ_r α_r Δℓ_r − ½ Σₖ wₖ²
        s.t.            stationarity[k]:  wₖ − Σ_r α_r ΔF_rk = 0      (k in the support of the cuts)
                        budget[i]:        Σ_{r∈Sᵢ} α_r ≤ C·s

    ``w`` is the posterior mean of p(w) = N(Σ α Δf, I), i.e. the M³N weights; the multipliers of ``budget`` are the
    primal ξᵢ. Features no cut touches have wₖ = 0 and are left out.

    Parameters
    ----------
    arrays : WSArrays

    Returns
    -------
    ConcreteModel
        Components ``alpha`` (r), ``w`` (support), ``stationarity``, ``budget``, ``linear``, ``quadratic``,
        ``objective``;
        ``model.support`` holds the feature indices of ``w``.
    """
    m, alpha = _base_dual(arrays, name)
    support = _support(arrays.F)
    m.support = support
    m.K = pyo.Set(initialize=[int(k) for k in support], ordered=True)
    m.w = pyo.Var(m.K, initialize=0.0)
    Fc = arrays.F.tocsc()

    def stat(m, k):
        lo, hi = Fc.indptr[k], Fc.indptr[k + 1]
        return LinearExpression(constant=0.0, linear_coefs=[1.0] + [-float(c) for c in Fc.data[lo:hi]],
                                linear_vars=[m.w[k]] + [alpha[j] for j in Fc.indices[lo:hi]]) == 0.0
    m.stationarity = pyo.Constraint(m.K, rule=stat)
    m.quadratic = pyo.Expression(expr=0.5 * pyo.quicksum(m.w[k] * m.w[k] for k in m.K))
    m.objective = pyo.Objective(expr=m.linear - m.quadratic, sense=pyo.maximize)
    return m


def metric_dual_model(arrays, D, name="diag_m3n_dual"):
    """The dual of min ½ wᵀD⁻¹w + C·s Σᵢ ξᵢ over the working set, D = diag(``D``) ≥ 0 (the LapM³N QP (6) with
    D = Σ, the adaptive M³N's QP (5) with D = β²/(2λ); D = 1 is P0)::

        max_{α ≥ 0, w}  linear − quadratic,   quadratic = ½ Σₖ wₖ²/Dₖ
        s.t.            stationarity[k]:  wₖ − Dₖ Σ_r α_r ΔF_rk = 0      (k touched by a cut, Dₖ > 0)
                        budget[i]:        Σ_{r∈Sᵢ} α_r ≤ C·s

    ½ Σ wₖ²/Dₖ = ½ ηᵀDη with η = Σ α ΔF, so this is max Σ α Δℓ − ½ αᵀ(ΔF D ΔFᵀ)α; ``w`` is the posterior mean
    D Σ α Δf. Features with Dₖ = 0 are pinned to wₖ = 0 and left out."""
    m, alpha = _base_dual(arrays, name)
    D = np.asarray(D, dtype=np.float64)
    support = np.array([k for k in _support(arrays.F) if D[k] > 0], dtype=np.int64)
    m.support = support
    m.metric = D
    m.K = pyo.Set(initialize=[int(k) for k in support], ordered=True)
    m.w = pyo.Var(m.K, initialize=0.0)
    Fc = arrays.F.tocsc()

    def stat(m, k):
        lo, hi = Fc.indptr[k], Fc.indptr[k + 1]
        return LinearExpression(constant=0.0, linear_coefs=[1.0] + [-float(D[k] * c) for c in Fc.data[lo:hi]],
                                linear_vars=[m.w[k]] + [alpha[j] for j in Fc.indices[lo:hi]]) == 0.0
    m.stationarity = pyo.Constraint(m.K, rule=stat)
    m.quadratic = pyo.Expression(expr=pyo.quicksum((0.5 / float(D[k])) * m.w[k] * m.w[k] for k in m.K))
    m.objective = pyo.Objective(expr=m.linear - m.quadratic, sense=pyo.maximize)
    return m


def theorem3_model(arrays, name="m3n_theorem3"):
    """Theorem 3 of the ICML 2008 paper as stated: the P0 dual with the ground-truth labeling yᵢ of every slack as
    its own multiplier ``alpha_truth[i]`` (Δfᵢ(yᵢ) = 0, Δℓᵢ(yᵢ) = 0) and equality budgets Σ_y αᵢ(y) = C·s."""
    m = p0_dual_model(arrays, name)
    m.alpha_truth = pyo.Var(m.SLACKS, domain=pyo.NonNegativeReals, initialize=0.0)
    members = {i: [] for i in m.SLACKS}
    for a, s in zip(m.alpha_list, arrays.slack):
        members[int(s)].append(a)
    m.budget.deactivate()
    m.budget_eq = pyo.Constraint(m.SLACKS, rule=lambda m, i: LinearExpression(
        constant=0.0, linear_coefs=[1.0] * (len(members[i]) + 1),
        linear_vars=members[i] + [m.alpha_truth[i]]) == m.C_budget)
    return m


def p1_dual_model(arrays, name="l1m3n_dual"):
    """The LP dual of P1 on a working set (KDD 2009, Algorithm 1's master)::

        max_{α ≥ 0}  Σ_r α_r Δℓ_r
        s.t.         mu_bound[k]:   Σ_r α_r ΔF_rk ≤ ½      (dual to μₖ ≥ 0)
                     nu_bound[k]:  −Σ_r α_r ΔF_rk ≤ ½      (dual to νₖ ≥ 0)   — together −½ ≤ Σ_r α_r ΔF_rk ≤ ½
                     budget[i]:     Σ_{r∈Sᵢ} α_r ≤ C·s     (dual to ξᵢ ≥ 0)

    for every feature k in the support of the cuts (for the others the rows read 0 ≤ ½). The multipliers of
    ``mu_bound``, ``nu_bound`` and ``budget`` are a primal solution μ, ν, ξ.
    """
    m, alpha = _base_dual(arrays, name)
    support = _support(arrays.F)
    m.support = support
    m.K = pyo.Set(initialize=[int(k) for k in support], ordered=True)
    Fc = arrays.F.tocsc()

    def col(k, sign):
        lo, hi = Fc.indptr[k], Fc.indptr[k + 1]
        return LinearExpression(constant=0.0, linear_coefs=[sign * float(c) for c in Fc.data[lo:hi]],
                                linear_vars=[alpha[j] for j in Fc.indices[lo:hi]])
    m.mu_bound = pyo.Constraint(m.K, rule=lambda m, k: col(k, 1.0) <= 0.5)
    m.nu_bound = pyo.Constraint(m.K, rule=lambda m, k: col(k, -1.0) <= 0.5)
    m.objective = pyo.Objective(expr=m.linear, sense=pyo.maximize)
    return m


# ----------------------------------------------------------------------------------------------------------------
# The public functions
# ----------------------------------------------------------------------------------------------------------------

def dual_model(result):
    """The explicit dual of ``result``'s master on its working set, as its own Pyomo model (solve it with any
    solver that takes its class: ``mmprog.solvers.get_solver("highs").solve(m)``)."""
    return hook_for(result.program).dual_model(result)


def check(result, solvers=None, dataset=None, rtol=1e-6):
    """Verify the duality statements of ``result``'s program.

    Parameters
    ----------
    result : Result
        A trained program (``mmprog.fit``).
    solvers : list of str, optional
        Solvers to use: the first that takes a class solves it; all of them enter the cross-solver statement.
    dataset : optional
        The training data, for statements that compare predictions.
    rtol : float
        Relative tolerance of values compared across solves (scaled by max(1, |value|)).

    Returns
    -------
    list of Check
    """
    ctx = Context(result, solvers=solvers, dataset=dataset, rtol=rtol)
    hook = hook_for(result.program)
    out = []
    try:
        for c in hook.checks(ctx):
            out.append(c)
    except (SolverError, SolverUnavailable) as e:
        out.append(ctx.skip("remaining statements", f"a solver failed: {e}"))
    if hook.rebuildable and isinstance(hook, ProgramHook):
        out.extend(cross_solver_checks(ctx))
    return out


# ----------------------------------------------------------------------------------------------------------------
# Statements shared by the max-margin programs
# ----------------------------------------------------------------------------------------------------------------

def _scale(*values):
    return max(1.0, *(float(np.max(np.abs(v))) if np.size(v) else 0.0 for v in values))


def feasibility_checks(ctx, arrays, w, xi, alpha, extra_dual=None):
    """Primal feasibility (cuts and ξ ≥ 0) and dual feasibility (α ≥ 0, budgets, ``extra_dual``) from the numbers.

    ``extra_dual`` is ``(statement_suffix, violation)`` for program-specific dual constraints."""
    tol = 1e-6 * _scale(arrays.dl, arrays.budget)
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
    tol = 1e-5 * _scale(arrays.dl, arrays.budget)
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
    tight = np.abs(slack_r) <= tight * _scale(arrays.dl)
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
    from .solvers import get_solver
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
                values[name] = float(pyo.value(_objective(model)))
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
            out.append(ctx.check(stmt, ref_v, values[name], 1e-5 * _scale(ref_v)))
    return out


# ----------------------------------------------------------------------------------------------------------------
# P0: m3n
# ----------------------------------------------------------------------------------------------------------------

def p0_value(w, xi, budget):
    """½‖w‖² + C·s Σᵢ ξᵢ."""
    return 0.5 * float(w @ w) + budget * float(np.sum(xi))


def p0_dual_value(arrays, alpha):
    """Σ α Δℓ − ½‖Σ α ΔF‖² (Theorem 3's objective)."""
    v = arrays.F.T @ alpha
    return float(alpha @ arrays.dl) - 0.5 * float(v @ v)


def _result_numbers(result, arrays):
    w = np.asarray(result.w, dtype=np.float64)
    xi = np.asarray(result.xi, dtype=np.float64)
    alpha = np.asarray(result.alpha, dtype=np.float64)
    alpha = alpha[arrays.positions] if len(alpha) >= len(arrays.positions) and len(alpha) else np.zeros(
        len(arrays.positions))
    return w, xi, alpha


@duality_for("m3n")
class M3NDuality(Duality):
    """P0 and its dual (Theorem 3 of the ICML 2008 paper)."""

    fit_params = {"master": "primal"}

    def dual_model(self, result):
        return p0_dual_model(working_set_arrays(result))

    def checks(self, ctx):
        yield from p0_checks(ctx)


def p0_checks(ctx, master_kw=None, theorem3=True):
    """The P0 statements for a result whose master is P0 (m3n, and the Step 1 of programs built on it);
    ``theorem3=False`` leaves out the ICML 2008 statements (prediction through the result's own map)."""
    res = ctx.result
    arrays = working_set_arrays(res)
    w, xi, alpha = _result_numbers(res, arrays)
    P = p0_value(w, xi, arrays.budget)
    master = getattr(res.model, "master", "primal")
    yield from feasibility_checks(ctx, arrays, w, xi, alpha)
    # the value the Pyomo model itself states at the loaded point
    ctx.program.materialise(res.model)
    stated = float(pyo.value(_objective(res.model)))
    if master == "primal":
        yield ctx.check("master model: Pyomo objective at the loaded point = ½‖w‖² + C·s·Σξ", stated, P,
                        1e-9 * _scale(P))
    else:
        yield ctx.check("Gram dual master: Pyomo objective at the loaded α = Σα Δℓ − ½‖Σ α ΔF‖²", stated,
                        p0_dual_value(arrays, alpha), 1e-9 * _scale(P))
    # QP solvers (HiGHS active set, Ipopt) stop at ~1e-7 dual feasibility; times the 1-slack budget C·n this is
    # ~1e-6 of the objective, so values compared across QP solves get 1e-5 relative
    tol = max(ctx.rtol, 1e-5) * _scale(P)
    yield ctx.check(f"strong duality: P0 value ½‖w‖² + C·s·Σξ = D(α) of the {master} master's multipliers", P,
                    p0_dual_value(arrays, alpha), tol, reason=f"α from {res.solver}")
    yield ctx.check("stationarity: w = Σ_r α_r ΔF_r (‖·‖∞)", float(np.abs(w - arrays.F.T @ alpha).max(initial=0)),
                    0.0, 1e-5 * _scale(w))
    yield from slackness_checks(ctx, arrays, w, xi, alpha)
    yield sparsity_check(ctx, arrays, w, xi, alpha)
    # the explicit dual model, solved on its own
    name, why = ctx.solver_for("QP", need_duals=True)
    stmt = "strong duality: P0 value = optimum of the explicit dual model (Theorem 3, ≤ budgets)"
    if name is None or not len(arrays.dl):
        yield ctx.skip(stmt, why or "the working set is empty")
        yield from cross_solver_checks(ctx, **(master_kw or {}))
        return
    dm = p0_dual_model(arrays)
    D = _solve(dm, name)
    yield ctx.check(stmt, P, D, tol, reason=f"dual solved by {name}")
    w_d = np.zeros_like(w)
    w_d[dm.support] = [pyo.value(dm.w[int(k)]) for k in dm.support]
    yield ctx.check("Theorem 3: posterior mean E[w] = Σ α Δf of the dual equals the primal w (‖·‖∞)",
                    float(np.abs(w_d - w).max(initial=0.0)), 0.0, 1e-4 * _scale(w), reason=f"dual by {name}")
    xi_d = np.zeros(arrays.n_slacks)
    bd = _duals_of(dm, [dm.budget[i] for i in dm.SLACKS])
    xi_d[list(dm.SLACKS)] = bd
    yield ctx.check("dual of the dual: budget multipliers = the primal slacks ξ (‖·‖∞)",
                    float(np.abs(xi_d - xi).max(initial=0.0)), 0.0, 1e-4 * _scale(xi, arrays.dl),
                    reason=f"dual by {name}")
    if not theorem3:
        yield from cross_solver_checks(ctx, **(master_kw or {}))
        return
    tm = theorem3_model(arrays)
    T = _solve(tm, name)
    yield ctx.check("Theorem 3 (ICML 2008) as stated, Σ_y αᵢ(y) = C·s including y = yᵢ: optimum = P0 value",
                    T, P, tol, reason=f"solved by {name}")
    if ctx.dataset is not None:
        w_t = np.zeros_like(w)
        w_t[tm.support] = [pyo.value(tm.w[int(k)]) for k in tm.support]
        from .result import Predictor
        a = Predictor(res.fmap, w, res.program).predict(ctx.dataset)
        b = Predictor(res.fmap, w_t, res.program).predict(ctx.dataset)
        diff = sum(int(np.count_nonzero(x != y)) for x, y in zip(a, b))
        yield ctx.check("Theorem 3: predictions of h₁ (posterior mean) = predictions of h₀ (P0's w), labels that "
                        "differ", diff, 0, 0, reason=f"{sum(len(x) for x in a)} labels")
    if master == "primal":
        # the other master of the engine (SVMstruct's Gram dual) on the same cuts
        try:
            _, sol = rebuild_master(res, name, master="dual")
            yield ctx.check("Gram dual master (grown α model) optimum = P0 primal master optimum", sol.objective,
                            P, tol, reason=f"solved by {name}")
        except (SolverError, SolverUnavailable) as e:
            yield Check(ctx.name, "Gram dual master optimum = P0 primal master optimum", P, None, None, None,
                        "fail", str(e))
    yield from cross_solver_checks(ctx, **(master_kw or {}))


# ----------------------------------------------------------------------------------------------------------------
# P1: l1m3n
# ----------------------------------------------------------------------------------------------------------------

def p1_value(w, xi, budget):
    """½‖w‖₁ + C·s Σᵢ ξᵢ."""
    return 0.5 * float(np.abs(w).sum()) + budget * float(np.sum(xi))


@duality_for("l1m3n")
class L1M3NDuality(Duality):
    """P1 and its LP dual (KDD 2009, Algorithm 1)."""

    def dual_model(self, result):
        return p1_dual_model(working_set_arrays(result))

    def checks(self, ctx):
        yield from p1_checks(ctx)


def p1_subgradient_checks(ctx):
    """P1′ by the projected sub-gradient (KDD 2009, Algorithm 2) has no master program and no multipliers: only
    the ball constraint can be verified from the numbers."""
    res = ctx.result
    lam = float(res.params["lam"])
    l1 = float(np.abs(res.w).sum())
    yield ctx.check("P1′ feasibility: ‖w‖₁ ≤ λ (the projection onto the ℓ1 ball)", l1, lam, 1e-9 * _scale(lam), "≤",
                    reason=f"{int(np.count_nonzero(res.w))} non-zero weights")
    yield ctx.skip("strong duality, slackness, cross-solver (P1′)", "the projected sub-gradient method has no "
                   "master program or multipliers; verify P1 with the default algorithm=\"cutting_plane\"")


def p1_checks(ctx):
    res = ctx.result
    if res.params.get("algorithm") == "subgradient" or getattr(res, "model", None) is None:
        yield from p1_subgradient_checks(ctx)
        return
    arrays = working_set_arrays(res)
    w, xi, alpha = _result_numbers(res, arrays)
    P = p1_value(w, xi, arrays.budget)
    g = arrays.F.T @ alpha if len(alpha) else np.zeros_like(w)      # Σ_r α_r ΔF_r
    box = float(max(np.abs(g).max(initial=0.0) - 0.5, 0.0))
    yield from feasibility_checks(ctx, arrays, w, xi, alpha, (" and |Σ α ΔF_k| ≤ ½", box))
    m = res.model
    mu = np.array([v.value or 0.0 for v in m.mu_list])
    nu = np.array([v.value or 0.0 for v in m.nu_list])
    stated = float(pyo.value(_objective(m)))
    yield ctx.check("master model: Pyomo objective at the loaded point = ½Σ(μ+ν) + C·s·Σξ", stated,
                    0.5 * float((mu + nu).sum()) + arrays.budget * float(xi.sum()), 1e-9 * _scale(P))
    tol = max(ctx.rtol, 1e-7) * _scale(P)
    yield ctx.check("strong duality: P1 value ½‖w‖₁ + C·s·Σξ = Σ α Δℓ of the solver's own duals", P,
                    float(alpha @ arrays.dl), tol, reason=f"α from {res.solver}")
    # the sub-gradient conditions of ½‖w‖₁: Σ α ΔF_k ∈ ½ ∂|w_k|
    nz = np.abs(w) > 1e-7 * _scale(w)
    sg = float(np.abs(g[nz] - 0.5 * np.sign(w[nz])).max(initial=0.0))
    yield ctx.check("stationarity (sub-gradient): Σ α ΔF_k = ½ sign(w_k) where w_k ≠ 0 (max deviation)", sg, 0.0,
                    1e-6 * _scale(arrays.dl), reason=f"{int(nz.sum())} non-zero weights of {len(w)}")
    yield ctx.check("stationarity (sub-gradient): |Σ α ΔF_k| ≤ ½ for every k", float(np.abs(g).max(initial=0.0)),
                    0.5, 1e-6 * _scale(arrays.dl), "≤")
    extra = (mu * (0.5 - g), nu * (0.5 + g))
    yield from slackness_checks(ctx, arrays, w, xi, alpha, extra)
    yield sparsity_check(ctx, arrays, w, xi, alpha)
    name, why = ctx.solver_for("LP", need_duals=True)
    stmt = "strong duality: P1 value = optimum of the explicit LP dual"
    if name is None:
        yield ctx.skip(stmt, why)
    elif not len(arrays.dl):
        yield ctx.skip(stmt, "the working set is empty")
    else:
        dm = p1_dual_model(arrays)
        D = _solve(dm, name)
        yield ctx.check(stmt, P, D, tol, reason=f"dual solved by {name}")
        # the LP dual's own multipliers are a primal solution (μ, ν, ξ): feasible, with the primal optimum
        mu_d = np.zeros_like(w)
        nu_d = np.zeros_like(w)
        K = list(dm.K)
        mu_d[K] = _duals_of(dm, [dm.mu_bound[k] for k in K])
        nu_d[K] = _duals_of(dm, [dm.nu_bound[k] for k in K])
        xi_d = np.zeros(arrays.n_slacks)
        xi_d[list(dm.SLACKS)] = _duals_of(dm, [dm.budget[i] for i in dm.SLACKS])
        w_d = mu_d - nu_d
        yield ctx.check("dual of the dual: multipliers (μ, ν, ξ) of mu_bound, nu_bound, budget give the P1 optimum",
                        0.5 * float((mu_d + nu_d).sum()) + arrays.budget * float(xi_d.sum()), P, tol,
                        reason=f"dual by {name}")
        viol = float(max((arrays.dl - arrays.F @ w_d - xi_d[arrays.slack]).max(initial=0.0),
                         -min(mu_d.min(), nu_d.min(), xi_d.min(initial=0.0)), 0.0))
        yield ctx.check("dual of the dual: those (μ, ν, ξ) are primal feasible (max violation ≤ 0)", viol, 0.0,
                        1e-6 * _scale(arrays.dl), "≤", reason=f"dual by {name}")
    yield from cross_solver_checks(ctx)


# ----------------------------------------------------------------------------------------------------------------
# P4: the squared-ℓ1 M³N of Theorem 2 (KDD 2009), and the adaptive M³N that Theorem 2 says reaches it
# ----------------------------------------------------------------------------------------------------------------

def p4_dual_model(arrays, lam, dim, name="p4_dual"):
    """The dual of P4 = min (λ/K)‖w‖₁² + C·s Σᵢ ξᵢ on a working set (the conjugate of (λ/K)‖·‖₁² is
    (K/4λ)‖·‖∞²)::

        max_{α ≥ 0, s}  objective = linear − quadratic,   linear = Σ_r α_r Δℓ_r,   quadratic = (K/4λ) s²
        s.t.            eta_upper[k]:   Σ_r α_r ΔF_rk − s ≤ 0
                        eta_lower[k]:  −Σ_r α_r ΔF_rk − s ≤ 0        (so s ≥ ‖Σ_r α_r ΔF_r‖∞)
                        budget[i]:      Σ_{r∈Sᵢ} α_r ≤ C·s

    with K = ``dim`` the number of joint features (all of them, also those no cut touches)."""
    m, alpha = _base_dual(arrays, name)
    support = _support(arrays.F)
    m.support = support
    m.K = pyo.Set(initialize=[int(k) for k in support], ordered=True)
    m.s = pyo.Var(domain=pyo.NonNegativeReals, initialize=0.0)
    Fc = arrays.F.tocsc()

    def row(k, sign):
        lo, hi = Fc.indptr[k], Fc.indptr[k + 1]
        return LinearExpression(constant=0.0, linear_coefs=[sign * float(c) for c in Fc.data[lo:hi]] + [-1.0],
                                linear_vars=[alpha[j] for j in Fc.indices[lo:hi]] + [m.s]) <= 0.0
    m.eta_upper = pyo.Constraint(m.K, rule=lambda m, k: row(k, 1.0))
    m.eta_lower = pyo.Constraint(m.K, rule=lambda m, k: row(k, -1.0))
    m.quadratic = pyo.Expression(expr=(dim / (4.0 * lam)) * m.s * m.s)
    m.objective = pyo.Objective(expr=m.linear - m.quadratic, sense=pyo.maximize)
    return m


def p4_value(w, xi, budget, lam):
    """(λ/K)‖w‖₁² + C·s Σᵢ ξᵢ."""
    return lam / len(w) * float(np.abs(w).sum()) ** 2 + budget * float(np.sum(xi))


def p4_dual_value(arrays, alpha, lam, dim):
    eta = arrays.F.T @ alpha
    return float(alpha @ arrays.dl) - dim / (4.0 * lam) * float(np.abs(eta).max(initial=0.0)) ** 2


@duality_for("p4")
class P4Duality(Duality):
    """P4 of Theorem 2 (KDD 2009, appendix A), its dual, and Theorem 2 itself (AdapM³N reaches P4's optimum)."""

    def dual_model(self, result):
        return p4_dual_model(working_set_arrays(result), float(result.params["lam"]), len(result.w))

    def checks(self, ctx):
        yield from p4_checks(ctx)


def p4_checks(ctx):
    res = ctx.result
    lam = float(res.params["lam"])
    arrays = working_set_arrays(res)
    w, xi, alpha = _result_numbers(res, arrays)
    K = len(w)
    P = p4_value(w, xi, arrays.budget, lam)
    yield from feasibility_checks(ctx, arrays, w, xi, alpha)
    stated = float(pyo.value(_objective(res.model)))
    t = res.extra.get("t")
    if t is not None:
        yield ctx.check("l1_bound is tight at the optimum: t = ‖w‖₁", float(t), float(np.abs(w).sum()),
                        1e-6 * _scale(t))
        yield ctx.check("master model: Pyomo objective at the loaded point = (λ/K)t² + C·s·Σξ", stated,
                        lam / K * float(t) ** 2 + arrays.budget * float(xi.sum()), 1e-9 * _scale(P))
    tol = max(ctx.rtol, 1e-5) * _scale(P)
    yield ctx.check("strong duality: P4 value (λ/K)‖w‖₁² + C·s·Σξ = Σ α Δℓ − (K/4λ)‖Σ α ΔF‖∞² of the solver's "
                    "duals", P, p4_dual_value(arrays, alpha, lam, K), tol, reason=f"α from {res.solver}")
    # sub-gradient of (λ/K)‖w‖₁²: η = Σ α ΔF ∈ (2λ/K)‖w‖₁ ∂‖w‖₁
    eta = arrays.F.T @ alpha if len(alpha) else np.zeros_like(w)
    c = 2.0 * lam / K * float(np.abs(w).sum())
    nz = np.abs(w) > 1e-6 * _scale(w)
    sg_tol = 1e-4 * _scale(eta, c)
    yield ctx.check("stationarity (sub-gradient): Σ α ΔF_k = (2λ/K)‖w‖₁ sign(w_k) where w_k ≠ 0 (max deviation)",
                    float(np.abs(eta[nz] - c * np.sign(w[nz])).max(initial=0.0)), 0.0, sg_tol,
                    reason=f"{int(nz.sum())} non-zero weights of {K}")
    yield ctx.check("stationarity (sub-gradient): ‖Σ α ΔF‖∞ ≤ (2λ/K)‖w‖₁", float(np.abs(eta).max(initial=0.0)), c,
                    sg_tol, "≤")
    yield from slackness_checks(ctx, arrays, w, xi, alpha)
    yield sparsity_check(ctx, arrays, w, xi, alpha)
    name, why = ctx.solver_for("QP", need_duals=False)
    stmt = "strong duality: P4 value = optimum of the explicit dual model"
    if name is None:
        yield ctx.skip(stmt, why)
    elif len(arrays.dl):
        dm = p4_dual_model(arrays, lam, K)
        yield ctx.check(stmt, P, _solve(dm, name), tol, reason=f"dual solved by {name}")
    # P4 and P1 share their solutions (the squared norm only re-parametrises C): with c = (2λ/K)‖w‖₁, α/(2c) is
    # optimal for P1 at C' = C / (2c) on the same cuts, so P1's optimum there is ½‖w‖₁ + C'·s·Σξ
    lp, why = ctx.solver_for("LP")
    stmt = "P4 ⇔ P1: P1 at C' = C·K/(4λ‖w‖₁) on the same cuts has optimum ½‖w‖₁ + C'·s·Σξ (P4's w)"
    if lp is None or c <= 0:
        yield ctx.skip(stmt, why or "w = 0")
    else:
        C1 = res.params["C"] / (2.0 * c)
        try:
            _, sol = _rebuild_as(res, "l1m3n", lp, C=C1)
            yield ctx.check(stmt, sol.objective, 0.5 * float(np.abs(w).sum()) + C1 * arrays.budget
                            / res.params["C"] * float(xi.sum()), 1e-4 * _scale(sol.objective),
                            reason=f"C' = {C1:.6g}, solved by {lp}")
        except (SolverError, SolverUnavailable, MMProgError) as e:
            yield Check(ctx.name, stmt, None, None, None, None, "fail", str(e))
    yield from theorem2_checks(ctx, P_upper=getattr(res, "upper_bound", P), P_lower=P)
    yield from cross_solver_checks(ctx)


def _rebuild_as(result, program, solver, **params):
    """Build ``program`` with ``params`` on ``result``'s active cuts and solve it with ``solver``."""
    from .programs import get_program
    from .solvers import get_solver
    prog = get_program(program, **params)
    arrays = working_set_arrays(result)
    model = prog.build(result.model.dims)
    if len(arrays.dl):
        prog.add_cuts(model, _cuts_of(arrays))
    slv = get_solver(solver)
    model.solved_with = slv.name
    prog.solve(model, slv)
    return model, prog.read_solution(model)


def theorem2_checks(ctx, P_upper, P_lower):
    """Theorem 2 (KDD 2009): the adaptive M³N (EM over P3) attains P4's optimum. Trains ``adapm3n`` with the same
    C and λ on the data (update (4), which decreases the objective monotonically) and compares its P4 objective
    (λ/K)‖w‖₁² + C Σᵢ Hᵢ(w) at its w — exact hinge, so an upper bound — with P4's bracket [lower, upper]."""
    from .programs import registered
    stmt = "Theorem 2 (KDD 2009): AdapM³N's (λ/K)‖w‖₁² + C·ΣHᵢ(w) at its EM fixed point = P4's optimum"
    if "adapm3n" not in registered():
        yield ctx.skip(stmt, "program adapm3n is not registered")
        return
    if ctx.dataset is None:
        yield ctx.skip(stmt, "needs the training data (mmprog verify passes it)")
        return
    import mmprog
    res = ctx.result
    try:
        a = mmprog.fit(ctx.dataset, program="adapm3n", C=res.params["C"], lam=res.params["lam"],
                       slack=res.slack, eps=1e-5, update="eq4", n_em=60)
    except MMProgError as e:
        yield Check(ctx.name, stmt, None, None, None, None, "fail", f"adapm3n: {e}")
        return
    v = float(a.extra["p4_objective"])
    # EM converges linearly: ~1e-7 of the objective after 60 monotone rounds on tiny data (2e-5 allowed), plus
    # P4's own optimality bracket
    tol = 2e-5 * _scale(v) + max(P_upper - P_lower, 0.0)
    yield ctx.check(stmt, v, P_lower, tol, reason=f"{a.extra['em_rounds']} EM rounds, {a.extra['removed']} "
                                                   f"features removed")


# ----------------------------------------------------------------------------------------------------------------
# Diagonally rescaled M³N masters: LapM³N (ICML 2008, QP (6)) and the adaptive M³N (KDD 2009, QP (5))
# ----------------------------------------------------------------------------------------------------------------

def metric_value(w, xi, budget, D):
    """½ Σ_{Dₖ>0} wₖ²/Dₖ + C·s Σ ξ."""
    on = D > 0
    return 0.5 * float(np.sum(w[on] ** 2 / D[on])) + budget * float(np.sum(xi))


def metric_dual_value(arrays, alpha, D):
    eta = arrays.F.T @ alpha
    return float(alpha @ arrays.dl) - 0.5 * float(eta @ (D * eta))


def metric_checks(ctx, label):
    """The statements of the last QP of a diagonally rescaled master (D = ``model.metric``), read back from the
    master itself (the program may post-process ``result.w``, e.g. zero removed features)."""
    res = ctx.result
    D = np.asarray(res.model.metric, dtype=np.float64)
    arrays = working_set_arrays(res)
    sol = ctx.program.read_solution(res.model)
    w, xi = np.asarray(sol.w, dtype=np.float64), np.asarray(sol.xi, dtype=np.float64)
    alpha = np.asarray(sol.alpha, dtype=np.float64)[arrays.positions] if len(arrays.positions) else np.zeros(0)
    P = metric_value(w, xi, arrays.budget, D)
    tol = max(ctx.rtol, 1e-5) * _scale(P)
    yield from feasibility_checks(ctx, arrays, w, xi, alpha)
    yield ctx.check(f"strong duality: {label} value ½wᵀD⁻¹w + C·s·Σξ = Σ α Δℓ − ½ ηᵀDη (η = Σ α ΔF) of the "
                    f"master's multipliers", P, metric_dual_value(arrays, alpha, D), tol,
                    reason=f"α from {res.solver}, D = model.metric in [{D.min():.3g}, {D.max():.3g}]")
    eta = arrays.F.T @ alpha if len(alpha) else np.zeros_like(w)
    yield ctx.check("stationarity: w = D Σ_r α_r ΔF_r (posterior mean; ‖·‖∞)", float(np.abs(w - D * eta).max(
        initial=0.0)), 0.0, 1e-5 * _scale(w, D * eta))
    yield from slackness_checks(ctx, arrays, w, xi, alpha)
    yield sparsity_check(ctx, arrays, w, xi, alpha)
    name, why = ctx.solver_for("QP", need_duals=True)
    stmt = f"strong duality: {label} value = optimum of the explicit dual model"
    if name is None or not len(arrays.dl):
        yield ctx.skip(stmt, why or "the working set is empty")
    else:
        dm = metric_dual_model(arrays, D, name=f"{ctx.name}_dual")
        yield ctx.check(stmt, P, _solve(dm, name), tol, reason=f"dual solved by {name}")
        w_d = np.zeros_like(w)
        w_d[dm.support] = [pyo.value(dm.w[int(k)]) for k in dm.support]
        yield ctx.check("the explicit dual's w = D Σ α ΔF equals the master's w (‖·‖∞)",
                        float(np.abs(w_d - w).max(initial=0.0)), 0.0, 1e-4 * _scale(w), reason=f"dual by {name}")
    yield from cross_solver_checks(ctx)


def _bracket(res):
    """[lower, upper] of a cutting-plane result: the master optimum and the best full objective seen."""
    lo = float(res.primal_objective)
    up = float(getattr(res, "upper_bound", lo))
    return lo, (up if np.isfinite(up) else lo)


@duality_for("lapm3n")
class LapM3NDuality(Duality):
    """LapM³N (ICML 2008): the last QP (6) with its dual (5), and Theorem 3 (Σ = I is M³N)."""

    def dual_model(self, result):
        return metric_dual_model(working_set_arrays(result), result.model.metric, name="lapm3n_dual")

    def checks(self, ctx):
        yield from metric_checks(ctx, "QP (6)")
        yield from lapm3n_theorem3(ctx)


def lapm3n_theorem3(ctx):
    """Theorem 3 (ICML 2008) through Algorithm 1: its first QP (6) has Σ = I, i.e. it is P0, so its optimum
    must equal M³N's on the same data. Both are cutting-plane optima, each certified by its bracket [lower, upper];
    the statement is that the two brackets overlap."""
    stmt = "Theorem 3 (ICML 2008): LapM³N's first step (Σ = I) and M³N have the same optimum (brackets overlap)"
    hist = ctx.result.extra.get("variational_history")
    if ctx.dataset is None or not hist:
        yield ctx.skip(stmt, "needs the training data and the variational history")
        return
    import mmprog
    res = ctx.result
    try:
        m = mmprog.fit(ctx.dataset, program="m3n", C=res.params["C"], slack=res.slack, eps=1e-4)
    except MMProgError as e:
        yield Check(ctx.name, stmt, None, None, None, None, "fail", f"m3n: {e}")
        return
    first = hist[0]
    lo = max(first["objective"], m.primal_objective)
    up = min(first.get("upper_bound", first["objective"]), _bracket(m)[1])
    yield ctx.check(stmt, lo, up, 1e-6 * _scale(up), "≤",
                    reason=f"step 1 in [{first['objective']:.8g}, {first.get('upper_bound', np.nan):.8g}], M³N in "
                           f"[{m.primal_objective:.8g}, {_bracket(m)[1]:.8g}]")


@duality_for("adapm3n")
class AdapM3NDuality(Duality):
    """The adaptive M³N (KDD 2009, Algorithm 3): the last QP (5) with its dual, the EM fixed point, and Theorem 2
    (its P4 objective equals P4's optimum). Verified with the monotone τ-step (``update="eq4"``) and enough EM
    rounds to reach the fixed point; Algorithm 3's printed update (6) can settle into a 2-cycle (see the module)."""

    fit_params = {"update": "eq4", "n_em": 60}

    def dual_model(self, result):
        return metric_dual_model(working_set_arrays(result), result.model.metric, name="adapm3n_dual")

    def checks(self, ctx):
        yield from metric_checks(ctx, "QP (5)")
        yield from adapm3n_fixed_point(ctx)
        yield from adapm3n_theorem2(ctx)


def adapm3n_fixed_point(ctx):
    res = ctx.result
    ex = res.extra
    stmt = "EM fixed point: P3 objective λ‖γ‖² + C·ΣHᵢ = P4 objective (λ/K)‖w‖₁² + C·ΣHᵢ at the returned w"
    if "p3_objective" not in ex or "p4_objective" not in ex:
        yield ctx.skip(stmt, "the result carries no p3_objective/p4_objective")
        return
    # equal at a fixed point; after the EM rounds the monotone update leaves them ~1e-7 apart on tiny data
    yield ctx.check(stmt, float(ex["p3_objective"]), float(ex["p4_objective"]), 2e-5 * _scale(ex["p4_objective"]),
                    reason=f"EM {res.termination} after {ex.get('em_rounds')} rounds, {ex.get('removed')} features "
                           f"removed")


def adapm3n_theorem2(ctx):
    """Theorem 2 from the AdapM³N side: P4 trained directly (same C, λ) brackets AdapM³N's P4 objective."""
    stmt = "Theorem 2 (KDD 2009): AdapM³N's (λ/K)‖w‖₁² + C·ΣHᵢ(w) = P4's optimum (trained directly)"
    from .programs import registered
    res = ctx.result
    if "p4" not in registered() or ctx.dataset is None or "p4_objective" not in res.extra:
        yield ctx.skip(stmt, "needs program p4, the training data and the result's p4_objective")
        return
    import mmprog
    p4 = None
    errors = []
    for solver in ("highs", "ipopt"):
        try:
            p4 = mmprog.fit(ctx.dataset, program="p4", C=res.params["C"], lam=res.params["lam"], slack=res.slack,
                            eps=1e-5, solver=solver)
            break
        except MMProgError as e:
            errors.append(f"{solver}: {e}")
    if p4 is None:
        yield Check(ctx.name, stmt, None, None, None, None, "fail", "; ".join(errors))
        return
    lo, up = _bracket(p4)
    v = float(res.extra["p4_objective"])
    yield ctx.check(stmt, v, lo, 2e-5 * _scale(v) + max(up - lo, 0.0),
                    reason=f"P4 in [{lo:.8g}, {up:.8g}] by {p4.solver}")


# ----------------------------------------------------------------------------------------------------------------
# PoMEN (NIPS 2008): Step 1 is P0 on expected features; Step 2 the β-dual (12)
# ----------------------------------------------------------------------------------------------------------------

@duality_for("pomen")
class PoMENDuality(Duality):
    """PoMEN: the last Step 1 master (the M³N (10) on expected features) with P0's statements; the EM descent of
    the P2 objective; strong duality of (11)–(12) after every Step 2; and the β-dual (12) of one example solved by
    PoMEN's marginal NLP against the same program over every labeling (enumerated), with its gradient
    ∂log Z/∂β(y) = μ_wᵀE_{p(z)}[Δf(y, z)] − Δℓ(y)."""

    fit_params = {"n_em": 2}
    data_note = "a quarter of the labels hidden when the data hide none"

    def fit(self, dataset, solver=None, C=1.0, slack="n", eps=1e-4, **kw):
        import mmprog
        Y = getattr(dataset, "Y", None)
        if Y is not None and not any((np.asarray(y) < 0).any() for y in Y) and hasattr(dataset, "hide_labels"):
            dataset = dataset.hide_labels(0.25, seed=0)
        res = mmprog.fit(dataset, program="pomen", C=C, solver=solver, slack=slack, eps=eps,
                         **{**self.fit_params, **kw})
        res.verify_dataset = dataset
        return res

    def dual_model(self, result):
        return p0_dual_model(working_set_arrays(result), name="pomen_step1_dual")

    def checks(self, ctx):
        yield from p0_checks(ctx, theorem3=False)
        yield from pomen_em_checks(ctx)
        yield from pomen_beta_dual_checks(ctx)


def pomen_em_checks(ctx):
    res = ctx.result
    em = [e for e in res.extra.get("em_history", []) if e["round"] >= 0]
    stmt = "EM (NIPS 2008, section 3.1): the P2 objective J never increases along the steps"
    if len(em) < 2:
        yield ctx.skip(stmt, "no EM steps (no hidden labels next to observed ones, or n_em = 0)")
    else:
        J = np.array([e["objective"] for e in em])
        n = len(res.xi) if res.slack == "n" else int(res.model.dims.n)
        eps = 1e-4
        # each step minimises J over its block up to Step 1's ε (C·n·ε in J) and Ipopt's tolerance
        yield ctx.check(stmt + " (largest increase)", float(np.max(np.diff(J), initial=0.0)), 0.0,
                        res.params["C"] * n * eps + 1e-6 * _scale(J), "≤",
                        reason=f"{len(J)} steps, J from {J[0]:.8g} to {J[-1]:.8g}")
    z = [e for e in em if e["step"] == "z" and "dual_objective" in e]
    stmt = "strong duality of (11)–(12) after Step 2: J = ½‖μ_w‖² + Σᵢ (β-dual optimum)ᵢ"
    if not z:
        yield ctx.skip(stmt, "no Step 2 was run")
        return
    gaps = [abs(e["objective"] - e["dual_objective"]) for e in z]
    worst = z[int(np.argmax(gaps))]
    yield ctx.check(stmt, worst["objective"], worst["dual_objective"], 1e-5 * _scale(worst["objective"]),
                    reason=f"worst of {len(z)} Step-2 solves (Ipopt)")


def _enumerated_beta_dual(fmap, prepared, i, w, K):
    """The β-dual (12) of example ``i`` over every labeling y of its observed positions and z of its hidden ones,
    under a uniform p₀(z): returns (M (ny, nz), labelings y) with M[y, z] = μ_wᵀΔf(y, z) − Δℓ(y)."""
    import itertools
    T = int(prepared.lengths[i])
    gold = np.asarray(prepared.gold[i, :T])
    obs, hid = np.flatnonzero(gold >= 0), np.flatnonzero(gold < 0)
    ys = np.array(list(itertools.product(range(K), repeat=len(obs))), dtype=np.int64).reshape(-1, len(obs))
    zs = np.array(list(itertools.product(range(K), repeat=len(hid))), dtype=np.int64).reshape(-1, len(hid))
    M = np.zeros((len(ys), len(zs)))
    for b, z in enumerate(zs):
        truth = gold.copy()
        truth[hid] = z
        labs = np.tile(truth, (len(ys), 1))
        labs[:, obs] = ys
        idx = np.full(len(ys), i)
        f_truth = fmap.joint_features(prepared, idx[:1], truth[None, :]) @ w
        f_y = fmap.joint_features(prepared, idx, labs) @ w
        M[:, b] = np.asarray(f_truth).ravel()[0] - np.asarray(f_y).ravel() - (ys != gold[obs]).sum(axis=1)
    return M, ys


def _solve_beta_dual_enumerated(M, C):
    """max_{β ≥ 0, Σβ = C} −log mean_z exp(βᵀM[:, z]) (uniform p₀) by SLSQP on the simplex; returns (value, β)."""
    from scipy.optimize import minimize
    from scipy.special import logsumexp
    ny, nz = M.shape

    def f(b):
        return logsumexp(b @ M) - np.log(nz)

    def g(b):
        s = b @ M
        p = np.exp(s - logsumexp(s))
        return M @ p
    best = None
    for start in (np.full(ny, C / ny), C * np.eye(ny)[int(np.argmin(M.mean(axis=1)))] * 0.9 + 0.1 * C / ny):
        r = minimize(f, start, jac=g, method="SLSQP", bounds=[(0, None)] * ny,
                     constraints=[{"type": "eq", "fun": lambda b: b.sum() - C, "jac": lambda b: np.ones(ny)}],
                     options={"ftol": 1e-14, "maxiter": 1000})
        if best is None or r.fun < best.fun:
            best = r
    return -float(best.fun), np.maximum(best.x, 0.0)


def pomen_beta_dual_checks(ctx):
    """(12) of one example by PoMEN's marginal NLP (Ipopt) = (12) over all labelings (SLSQP), and the gradient
    condition at its optimum: the labelings carrying β > 0 are those of smallest expected margin
    E_{p(z)}[μ_wᵀΔf(y, z)] − Δℓ(y) = ∂log Z/∂β(y)."""
    stmt_v = "β-dual (12), one example: PoMEN's marginal NLP optimum = the optimum over all labelings (enumerated)"
    stmt_g = ("β-dual gradient (NIPS 2008): labelings with β(y) > 0 have the smallest ∂log Z/∂β(y) = "
              "E_p(z)[μ_wᵀΔf(y,z)] − Δℓ(y) (spread among them)")
    res = ctx.result
    if ctx.dataset is None or res.params.get("prior") != "uniform":
        yield ctx.skip(stmt_v, "needs the training data and the uniform prior p₀(z)")
        return
    from .programs import pomen as P
    from .solvers import get_solver
    fmap = res.fmap
    if getattr(fmap, "kind", "chain") != "chain":
        yield ctx.skip(stmt_v, "the enumeration is written for chains")
        return
    prepared = fmap.prepare(ctx.dataset)
    st = P.HiddenStructure(fmap, prepared)
    K = st.K
    cand = [i for i in np.flatnonzero(st.n_mixed > 0) if K ** int(prepared.lengths[i]) <= 4096]
    if not cand:
        yield ctx.skip(stmt_v, "no example with an observed–hidden edge small enough to enumerate")
        return
    i = int(cand[0])
    w = np.asarray(res.w, dtype=np.float64)
    C = float(res.params["C"])
    prior = P.make_prior("uniform", K, st)
    theta, trans = P._node_scores(fmap, w, prepared, np.arange(prepared.n))
    nlp, why = ctx.solver_for("NLP") if res.params.get("nlp_solver") is None else (res.params["nlp_solver"], None)
    if nlp is None:
        yield ctx.skip(stmt_v, why)
        return
    _, _, v_nlp, _, _ = P.solve_beta_dual(st, prior, theta, trans, C, np.array([i]), get_solver(nlp))
    M, ys = _enumerated_beta_dual(fmap, prepared, i, w, K)
    v_enum, beta = _solve_beta_dual_enumerated(M, C)
    yield ctx.check(stmt_v, v_nlp, v_enum, 1e-5 * _scale(v_enum),
                    reason=f"example {i}: {M.shape[0]} labelings y × {M.shape[1]} hidden z, NLP by {nlp}")
    from scipy.special import logsumexp
    s = beta @ M
    pz = np.exp(s - logsumexp(s))
    grad = M @ pz                                      # ∂log Z/∂β(y)
    on = beta > 1e-6 * C
    yield ctx.check(stmt_g, float(grad[on].max() - grad.min()), 0.0, 1e-5 * _scale(grad),
                    reason=f"{int(on.sum())} of {len(beta)} labelings carry β")


# ----------------------------------------------------------------------------------------------------------------
# MTL (Mao & Tsang): the SOCP master (5), its QCQP dual (6), recovery (7)
# ----------------------------------------------------------------------------------------------------------------

def template_grams(arrays, groups, m):
    """Qʲ = F_j F_jᵀ of the active cuts for every template j, recomputed from ΔF and the groups, shape (m, r, r)."""
    F = arrays.F.tocsc()
    out = np.zeros((m, F.shape[0], F.shape[0]))
    for j in range(m):
        cols = np.flatnonzero(groups == j)
        if len(cols):
            Fj = F[:, cols]
            out[j] = np.asarray((Fj @ Fj.T).todense())
    return out


def _group_norms(w, groups, m):
    return np.sqrt(np.bincount(groups, weights=np.asarray(w) ** 2, minlength=m)[:m])


@duality_for("mtl")
class MTLDuality(Duality):
    """MTL: the master's own pair — the SOCP (5) and the QCQP (6), built by the program's ``dual_model`` — and the
    recovery (7) of w from the dual, the template weights, the multipliers' normalisation."""

    def dual_model(self, result):
        from .programs import get_program
        return get_program(result.program, **result.params).dual_model(result.model)

    def checks(self, ctx):
        yield from mtl_checks(ctx)


def mtl_checks(ctx):
    res = ctx.result
    model = res.model
    groups = np.asarray(model.groups, dtype=np.int64)
    m_t = int(len(model.template_names))
    arrays = working_set_arrays(res)
    w, xi, alpha = _result_numbers(res, arrays)
    norms = _group_norms(w, groups, m_t)
    P = 0.5 * float(norms.sum()) ** 2 + arrays.budget * float(xi.sum())
    Q = template_grams(arrays, groups, m_t)
    quad = 0.5 * np.einsum("jrs,r,s->j", Q, alpha, alpha) if len(alpha) else np.zeros(m_t)
    theta = float(quad.max(initial=0.0))
    D = float(alpha @ arrays.dl) - theta
    mu = np.asarray(res.extra.get("template_weights", np.full(m_t, np.nan)), dtype=np.float64)
    tol = max(ctx.rtol, 1e-5) * _scale(P)
    yield from feasibility_checks(ctx, arrays, w, xi, alpha)
    yield ctx.check("strong duality: (5) value ½(Σⱼ‖wⱼ‖)² + C·s·Σξ = (6) value Σ α Δℓ − maxⱼ ½αᵀQʲα "
                    "(Qʲ recomputed from ΔF)", P, D, tol, reason=f"{m_t} templates, {len(alpha)} cuts")
    if "multiplier_sum" in res.extra and res.extra.get("form", model.form) == "dual":
        yield ctx.check("stationarity in θ: Σⱼ μⱼ = 1 (the quad[j] multipliers, before normalising)",
                        float(res.extra["multiplier_sum"]), 1.0, 1e-5)
    yield ctx.check("template weights: μ ≥ 0 (most negative)", float(max(-mu.min(initial=0.0), 0.0)), 0.0, 1e-9,
                    "≤")
    gamma = float(norms.sum())
    yield ctx.check("recovery (7): ‖wⱼ‖ = μⱼ Σₗ‖wₗ‖ for every template (max deviation)",
                    float(np.abs(norms - mu * gamma).max(initial=0.0)), 0.0, 1e-5 * _scale(norms, gamma))
    yield ctx.check("complementary slackness of (6): μⱼ (θ − ½αᵀQʲα) = 0 (max)",
                    float(np.abs(mu * (theta - quad)).max(initial=0.0)), 0.0, 1e-5 * _scale(theta))
    yield from slackness_checks(ctx, arrays, w, xi, alpha)
    yield sparsity_check(ctx, arrays, w, xi, alpha)
    # the other form, built by the program on the same working set and solved on its own
    from .programs import get_program
    prog = get_program(res.program, **res.params)
    other = prog.dual_model(model)
    pc = "SOCP" if other.form == "primal" else "QCQP"
    name, why = ctx.solver_for(pc)
    stmt = f"strong duality: this master's value = optimum of the other form ({'(5)' if pc == 'SOCP' else '(6)'}) " \
           f"solved on its own"
    if name is None or not len(arrays.dl):
        yield ctx.skip(stmt, why or "the working set is empty")
    else:
        try:
            from .solvers import get_solver
            get_solver(name).solve(other)
            v = float(pyo.value(_objective(other)))
            yield ctx.check(stmt, P, v, 1e-5 * _scale(P), reason=f"solved by {name}")
            if other.form == "primal":
                w5 = np.array([x.value or 0.0 for x in other.w_list])
                yield ctx.check("recovery (7): w of (6) via μⱼ Σ α ΔFⱼ = w of (5) solved directly (‖·‖∞)",
                                float(np.abs(w5 - w).max(initial=0.0)), 0.0, 1e-4 * _scale(w),
                                reason=f"(5) by {name}; the cone's tip makes interior points less exact")
        except (SolverError, SolverUnavailable) as e:
            yield Check(ctx.name, stmt, P, None, None, None, "fail", str(e))
    if res.params.get("form", "dual") == "dual" and res.params.get("native", True):
        stmt = "(6) through Pyomo's writer (native=False) = (6) from Ipopt's arrays, same working set"
        try:
            _, sol = rebuild_master(res, "ipopt", native=False)
            yield ctx.check(stmt, sol.objective, P, 1e-5 * _scale(P))
        except (SolverError, SolverUnavailable) as e:
            yield Check(ctx.name, stmt, P, None, None, None, "fail", str(e))
    yield from cross_solver_checks(ctx)


# ----------------------------------------------------------------------------------------------------------------
# p-block-norm MTL (Mao & Tsang, section 2): (10), its dual (11), recovery (12)–(13)
# ----------------------------------------------------------------------------------------------------------------

def block_dual(Q, dl, alpha, p):
    """(11) at α and the recovery (12): returns (value, μ (m,)), recomputed here from the paper's formulas.

    value = Σ α Δℓ − ½ (Σⱼ (αᵀQʲα)^{p*/2})^{2/p*};  μⱼ = (Σₗ (αᵀQˡα)^{p*/2})^{(p−2)/p} (αᵀQʲα)^{(2−p)/(2(p−1))}
    (templates with αᵀQʲα = 0 get μⱼ = 0: their block of w is 0 anyway)."""
    ps = p / (p - 1.0)
    sq = np.maximum(np.einsum("jrs,r,s->j", Q, alpha, alpha), 0.0)
    live = sq > 1e-300
    S = float(np.sum(sq[live] ** (ps / 2.0)))
    mu = np.zeros(len(sq))
    if S > 0:
        mu[live] = S ** ((p - 2.0) / p) * sq[live] ** ((2.0 - p) / (2.0 * (p - 1.0)))
    return float(alpha @ dl) - 0.5 * (S ** (2.0 / ps) if S > 0 else 0.0), mu


@duality_for("pblock")
class PBlockDuality(Duality):
    """p-block MTL: the master is the dual (11) itself (the Pyomo NLP over α); the statements compare it with the
    primal (10) at the w recovered by (12)–(13), all recomputed from ΔF and α."""

    def dual_model(self, result):
        from .programs import get_program
        from .programs.base import Program
        prog = get_program(result.program, **result.params)
        if type(prog).dual_model is not Program.dual_model:       # the program states (10) itself one day
            return prog.dual_model(result.model)
        prog.materialise(result.model)
        return result.model            # the master already is (11)

    def checks(self, ctx):
        yield from pblock_checks(ctx)


def pblock_checks(ctx):
    res = ctx.result
    p = float(res.params["p"])
    model = res.model
    groups = np.asarray(model.groups, dtype=np.int64)
    m_t = int(len(model.template_names))
    arrays = working_set_arrays(res)
    w, xi, alpha = _result_numbers(res, arrays)
    Q = template_grams(arrays, groups, m_t)
    D, mu = block_dual(Q, arrays.dl, alpha, p) if len(alpha) else (0.0, np.zeros(m_t))
    norms = _group_norms(w, groups, m_t)
    P = 0.5 * float(np.sum(norms ** p)) ** (2.0 / p) + arrays.budget * float(xi.sum())
    # the projected gradient stops at a relative gap tol (or STAGNATION_GAP when it stagnates in floating point)
    from .programs.pblock import STAGNATION_GAP
    tol = max(float(res.params.get("tol", 1e-6)), STAGNATION_GAP) * _scale(P)
    yield from feasibility_checks(ctx, arrays, w, xi, alpha)
    yield ctx.check(f"strong duality: (10) value ½(Σⱼ‖wⱼ‖ᵖ)^(2/p) + C·s·Σξ = (11) value at α (p = {p:g}, Qʲ "
                    f"recomputed from ΔF)", P, D, tol, reason=f"{m_t} templates, {len(alpha)} cuts")
    mu_res = res.extra.get("template_weights")
    if mu_res is not None:
        yield ctx.check("recovery (12): the program's template weights μⱼ = the formula at α (max deviation)",
                        float(np.abs(np.asarray(mu_res, dtype=np.float64) - mu).max(initial=0.0)), 0.0,
                        1e-6 * _scale(mu))
    w13 = mu[groups] * (arrays.F.T @ alpha) if len(alpha) else np.zeros_like(w)
    yield ctx.check("recovery (13): w = μⱼ Σ α ΔFⱼ blockwise (‖·‖∞)", float(np.abs(w - w13).max(initial=0.0)), 0.0,
                    1e-6 * _scale(w))
    # the gradient of (11) is Δℓ_r − w(α)ᵀΔF_r (the module's claim; by finite differences of (11) here)
    if len(alpha) and np.all(alpha[alpha > 0] > 0):
        h = 1e-6 * max(1.0, arrays.budget)
        fd = np.array([(block_dual(Q, arrays.dl, alpha + h * e, p)[0] - block_dual(Q, arrays.dl, alpha - h * e, p)[0])
                       / (2 * h) for e in np.eye(len(alpha))[: min(len(alpha), 40)]])
        grad = (arrays.dl - arrays.F @ w13)[: len(fd)]
        yield ctx.check("gradient of (11): ∂/∂α_r = Δℓ_r − w(α)ᵀΔF_r (central differences, first cuts)",
                        float(np.abs(fd - grad).max(initial=0.0)), 0.0, 1e-4 * _scale(grad),
                        reason=f"{len(fd)} coordinates")
    yield from slackness_checks(ctx, arrays, w, xi, alpha)
    # the projected gradient stops at a relative gap ≥ 1e-6, which leaves the slacks of cuts with α_r > 0 at ~1e-5
    yield sparsity_check(ctx, arrays, w, xi, alpha, tight=10 * max(float(res.params.get("tol", 1e-6)), 1e-5))
    if abs(p - 2.0) < 1e-12:
        name, why = ctx.solver_for("QP")
        stmt = "p = 2 is the structural SVM: M³N's Gram dual master on the same cuts has the same optimum"
        if name is None:
            yield ctx.skip(stmt, why)
        else:
            try:
                _, sol = _rebuild_as(res, "m3n", name, C=res.params["C"], master="dual")
                yield ctx.check(stmt, sol.objective, P, tol, reason=f"solved by {name}")
            except (SolverError, SolverUnavailable, MMProgError) as e:
                yield Check(ctx.name, stmt, P, None, None, None, "fail", str(e))
    other = "nlp" if res.params.get("method", "pg") == "pg" else "pg"
    nlp, why = ctx.solver_for("NLP")
    stmt = f"(11) by method={res.params.get('method', 'pg')} = (11) by method={other} on the same working set"
    if nlp is None:
        yield ctx.skip(stmt, why)
    else:
        try:
            _, sol = rebuild_master(res, nlp, method=other)
            yield ctx.check(stmt, sol.dual_objective, D, tol, reason=f"the Pyomo NLP by {nlp}")
        except (SolverError, SolverUnavailable) as e:
            yield Check(ctx.name, stmt, D, None, None, None, "fail", str(e))
    yield from cross_solver_checks(ctx, method="nlp")


# ----------------------------------------------------------------------------------------------------------------
# The L∞ max-margin LP (10) of Szedmak, Ni, Saunders & Rousu: its LP dual, Propositions 1 and 2, (17)
# ----------------------------------------------------------------------------------------------------------------

#: the tiny instance ``mmprog verify --program linf`` uses when the data are not (Phi, Psi) sets
LINF_DATA = dict(m=60, n_inputs=40, n_outputs=12, normalize=False, seed=0)


class LInfVerifyResult:
    """What :class:`LInfDuality` checks: the :class:`~mmprog.programs.linf.LInfRun` of :func:`solve_linf` with the
    attributes :func:`check` reads (``program``, ``params``, ``model``, ``solver``, ``w``, ``extra``)."""

    program = "linf"
    slack = "n"

    def __init__(self, run, samples, b, solver):
        self.run, self.samples = run, samples
        self.params = {"b": float(b)}
        self.model = run.model
        self.solver = solver
        self.w = np.asarray(run.w, dtype=np.float64)
        self.xi = np.zeros(0)
        self.alpha = np.asarray(run.alpha, dtype=np.float64)
        self.primal_objective = float(run.objective)
        self.extra = {"J": run.J}


@duality_for("linf")
class LInfDuality(Duality):
    """(10) min ‖w‖∞ s.t. zᵢᵀw ≥ b, its LP dual max b·Σα s.t. ‖Σ αᵢzᵢ‖₁ ≤ 1 (the program's ``dual_model``),
    Proposition 1 ((3) and (6) equal b/‖w‖∞), Proposition 2 (optimum b/minᵢ‖zᵢ‖₁) and (17)."""

    data_note = "(Phi, Psi) sets; on other data the tiny sparse_sets instance LINF_DATA"
    #: trained by solve_linf, not mmprog.fit (``mmprog show`` asks the hook)
    own_fit = True

    def accepts(self, dataset):
        return None

    def fit(self, dataset, solver=None, C=None, slack=None, eps=None, b=1.0, **kw):
        from .datasets import sparse_sets
        from .programs.linf import TensorSamples, solve_linf
        if isinstance(dataset, tuple) and len(dataset) >= 2:
            Phi, Psi = dataset[0], dataset[1]
        else:
            Phi, Psi = sparse_sets(**LINF_DATA)
        samples = TensorSamples(Phi, Psi)
        solver = solver or "highs"
        run = solve_linf(samples, b, solver=solver, n_start=10, batch=10, **kw)
        return LInfVerifyResult(run, samples, b, solver)

    def dual_model(self, result):
        from .programs.linf import LInf
        return LInf(b=result.params["b"]).dual_model(result.model)

    def checks(self, ctx):
        yield from linf_checks(ctx)


def linf_checks(ctx):
    """The program's own statements (:func:`mmprog.programs.linf.linf_checks`: Propositions 1 and 2, (17), LP
    duality of (10) from the numbers, its explicit dual per solver), then dual sparsity and cross-solver agreement
    of the constraint generation through Pyomo."""
    from .programs import linf as L
    res = ctx.result
    run, samples, b = res.run, res.samples, res.params["b"]
    t = float(run.objective)
    solvers = list(ctx.solvers or ["highs"])
    # interior-point solvers (Ipopt) reach an LP's optimum to ~1e-7 relative, the simplex codes to rounding: the
    # program's rows are taken at 1e-7 for the latter and 1e-5 for the former (solver-named rows only)
    interior = [n for n in solvers if n == "ipopt"]
    exact = [n for n in solvers if n not in interior]
    rows = L.linf_checks(run, samples, solvers=exact, tol=1e-7)
    for name in interior:
        rows += [r for r in L.linf_checks(run, samples, solvers=[name], tol=1e-5) if f"({name})" in r["statement"]]
    for row in rows:
        yield Check(**{"program": ctx.name, **row})
    alpha = np.asarray(run.alpha, dtype=np.float64)
    n_nz = int(np.count_nonzero(alpha > 1e-9))
    yield ctx.check("dual sparsity: #{αᵢ > 0} ≤ #columns + 1 (a basic optimum of the dual LP)", n_nz,
                    len(run.master.keys) + 1, 0.0, "≤", reason=f"{n_nz} of {len(alpha)} multipliers non-zero")
    for name, why in ctx.cross_solvers("LP"):
        if name == res.solver:
            continue
        stmt = f"cross-solver: (10) by {res.solver} = (10) by {name} (constraint generation through Pyomo)"
        from .solvers import get_solver
        if why is None and not get_solver(name).gives_duals:
            why = f"{name} returns no duals, which the constraint generation of (10) reads"
        if why is not None:
            yield ctx.skip(stmt, why)
            continue
        try:
            other = L.solve_linf(samples, b, solver=name, route="pyomo", n_start=10, batch=10)
            yield ctx.check(stmt, t, float(other.objective), 1e-6 * _scale(t))
        except MMProgError as e:
            yield Check(ctx.name, stmt, t, None, None, None, "fail", str(e))
