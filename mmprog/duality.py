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
The hook lives in the program's own module (``mmprog/programs/<name>.py``, or a module of its package
``mmprog/programs/<name>/``), beside the program it verifies, and is registered when the module is imported, as
the program is: this module keeps only what every program shares (the check rows, the registry, the context, the
working-set arrays, the rebuilt master, the shared statements). A program module that carries its own
``dual_model(model)`` (and optionally a ``checks(result)`` generator) on its
:class:`~mmprog.programs.base.Program` class needs no hook: :class:`ProgramHook` wires it, and the
generic statements (cross-solver agreement on the same working set) are added for it.

Programs covered
----------------
``m3n`` (P0 and Theorem 3), ``l1m3n`` (P1's LP dual; P1′ by sub-gradient gets its ball constraint only), ``enm3n``
(the elastic net's Fenchel dual, stationarity w = soft(ΔFᵀα, λ), P0's optimum bracketing it), ``p4``
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

from .exceptions import SolverError, SolverUnavailable
from .programs import statements
from .programs.statements import (CROSS_SOLVER_TIME_LIMIT, HOOKS, STATUSES, Check, Duality, WSArrays, base_dual,
                                  compare, cross_solver_checks, cuts_of, duality_for, duals_of, feasibility_checks,
                                  objective_of, rebuild_as, rebuild_master, result_numbers, scale_of, skipped,
                                  slackness_checks, solve_value, sparsity_check, support_of, working_set_arrays)

#: the statements programs share are defined in :mod:`mmprog.programs.statements` (below the programs); this module
#: is the entry point above them: the hooks by program name, the context handed to a hook, ``check`` and
#: ``dual_model``
__all__ = ["check", "dual_model", "hook_for", "ProgramHook", "Context", "Check", "Duality", "duality_for",
           "working_set_arrays", "rebuild_master", "rebuild_as", "compare", "skipped", "STATUSES", "WSArrays",
           "result_numbers", "scale_of", "objective_of", "duals_of", "support_of", "base_dual", "solve_value",
           "cuts_of", "feasibility_checks", "slackness_checks", "sparsity_check", "cross_solver_checks",
           "CROSS_SOLVER_TIME_LIMIT", "HOOKS"]

def hook_for(name):
    """The duality hook of program ``name``: the registered one, else a :class:`ProgramHook` over the program
    class's own ``dual_model``/``checks``."""
    from .programs import MODULES, load
    if name in MODULES:
        load(name)          # importing a program's module registers its hook (they are imported on demand)
    if name in statements.HOOKS:       # read at call time: a test may register hooks in a copy
        return statements.HOOKS[name]
    return ProgramHook(name)

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
        #: trains a referee program (``fit(dataset, program=..., **params)``: the result's ``trainer``,
        #: :func:`mmprog.fit`); None for results of programs trained outside it (linf), whose checks fit nothing
        self.fit = getattr(result, "trainer", None)

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
        from .solvers.base import REGISTRY
        from .solvers import ProblemClass
        pc = ProblemClass(problem_class)
        names = self.solvers or [n for n in registered() if pc in REGISTRY[n].capabilities]
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
    out = []
    if getattr(result, "route", None) == "bcfw":
        # route bcfw returns w(α) of its dual, not a solved master: the master on its working set is solved here,
        # its optimum checked to lie within the certified bounds, and the statements checked at that optimum
        result, row = master_of_bcfw(result, solvers, rtol)
        out.append(row)
    ctx = Context(result, solvers=solvers, dataset=dataset, rtol=rtol)
    hook = hook_for(result.program)
    try:
        for c in hook.checks(ctx):
            out.append(c)
    except (SolverError, SolverUnavailable) as e:
        out.append(ctx.skip("remaining statements", f"a solver failed: {e}"))
    if hook.rebuildable and isinstance(hook, ProgramHook):
        out.extend(cross_solver_checks(ctx))
    return out


def master_of_bcfw(result, solvers=None, rtol=1e-6):
    """(a view of ``result`` at the optimum of its master, the Check that this optimum lies in the certified
    [lower bound, upper bound]) for a result of route ``bcfw`` (:mod:`mmprog.engine.bcfw`), whose ``w`` is its dual
    iterate w(α). The master (``result.model``: P0 on the route's working set) is solved by the first of ``solvers``
    that takes it, else the program's default, and keeps that solution (it is the statement of record)."""
    import copy

    from .programs import get_program
    from .solvers import default_solver, get_solver
    program = get_program(result.program, **result.params)
    preferred = getattr(program, "preferred_solver", None)
    name = (list(solvers or []) or [None])[0] or (preferred(len(result.w)) if preferred else None) \
        or default_solver(program.problem_class)
    result.solve_master(program, result.model, get_solver(name), time_limit=CROSS_SOLVER_TIME_LIMIT)
    sol = program.read_solution(result.model)
    view = copy.copy(result)
    view.solution, view.w, view.xi, view.alpha = sol, sol.w, sol.xi, sol.alpha
    view.primal_objective = float(sol.objective)
    view.dual_objective = None if sol.dual_objective is None else float(sol.dual_objective)
    tol = rtol * max(1.0, abs(result.upper_bound))
    lo, up = result.primal_objective, result.upper_bound
    ok = lo - tol <= view.primal_objective <= up + tol
    row = Check(result.program, f"bcfw certificate: the master on its working set, solved by {name}, has its "
                f"optimum in [D(α), P(w)] = [{lo:.8g}, {up:.8g}]", view.primal_objective, lo,
                max(0.0, lo - view.primal_objective, view.primal_objective - up), tol, "pass" if ok else "fail",
                "the returned w is w(α); the statements below are checked at the master's optimum")
    return view, row
