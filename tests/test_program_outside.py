"""Adding a program with its dual and its ``verify`` statements takes one module and nothing else.

The module here is this test file: it defines the ℓ∞-regularised structured SVM (an LP),

    min_{w, t, ξ}  t + C·s Σᵢ ξᵢ   s.t.  wᵀΔF_r + ξ_{e(r)} ≥ Δℓ_r,  −t ≤ wₖ ≤ t,  ξ ≥ 0,

and its dual (the conjugate of ‖·‖∞ is the indicator of the ℓ1 ball),

    max_{α ≥ 0, u}  Σ_r α_r Δℓ_r   s.t.  Σₖ uₖ ≤ 1,  uₖ ≥ ±Σ_r α_r ΔF_rk,  Σ_{r∈Sᵢ} α_r ≤ C·s,

registers both under one name the way the package's programs do (``@register``, ``@duality_for``), and runs the
program through ``mmprog.fit``, ``mmprog.duality`` and ``mmprog verify`` without touching mmprog's code. The
optimum is checked against the full LP over every labeling handed to highspy directly (tests/_enumerated.py).
"""
import json

import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.core.expr.numeric_expr import LinearExpression

import mmprog
from _enumerated import INF, all_constraints, highs_qp, tiny
from mmprog import duality
from mmprog.cli import main
from mmprog.duality import (Duality, cross_solver_checks, duality_for, feasibility_checks, slackness_checks,
                            working_set_arrays)
from mmprog.programs import base as program_registry
from mmprog.programs import statements
from mmprog.programs import MasterState, Program, Solution, register, registered
from mmprog.solvers import values_of
from mmprog.cuts import WorkingSet
from mmprog.solvers import ProblemClass, get_solver

NAME = "linf_svm"
STRONG = "strong duality: t + C·s·Σξ = Σ α Δℓ of the solver's multipliers"
EXPLICIT = "strong duality: t + C·s·Σξ = optimum of the explicit dual (‖Σ α ΔF‖₁ ≤ 1)"


class LInfSVM(Program):
    """The ℓ∞-regularised structured SVM LP (see the module docstring)."""

    problem_class = ProblemClass.LP
    paper = "this test"
    equations = "min ‖w‖∞ + C Σ ξ"

    def regulariser(self, w):
        return float(np.abs(w).max(initial=0.0))

    def build(self, dims):
        m = pyo.ConcreteModel(name=NAME)
        m.dims = dims
        m.master = "primal"
        m.ws = WorkingSet(dims.dim)
        m.master_state = MasterState()
        m.slack_scale = float(dims.n) / dims.n_slacks
        m.C = pyo.Param(initialize=self.C, mutable=True)
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        m.w = pyo.Var(range(dims.dim), initialize=0.0)
        m.t = pyo.Var(domain=pyo.NonNegativeReals, initialize=0.0)
        m.xi = pyo.Var(range(dims.n_slacks), domain=pyo.NonNegativeReals, initialize=0.0)
        m.w_list = [m.w[k] for k in range(dims.dim)]
        m.w_upper = pyo.Constraint(range(dims.dim), rule=lambda m, k: m.w[k] - m.t <= 0)
        m.w_lower = pyo.Constraint(range(dims.dim), rule=lambda m, k: m.w[k] + m.t >= 0)
        m.cuts = pyo.ConstraintList()
        m.objective = pyo.Objective(expr=m.t + m.C * m.slack_scale * pyo.quicksum(m.xi.values()),
                                    sense=pyo.minimize)
        return m

    def add_cuts(self, model, cuts):
        model.ws.add(cuts)
        added = self.add_cut_rows(model, cuts, w_list=model.w_list)
        # an LP's new rows go to the solver's persistent copy at the next solve (Program.solve)
        model.master_state.unsynced += added
        return added

    def drop_cuts(self, model, positions):
        self.drop_alpha_or_rows(model, positions)            # a primal master: the rows are deactivated

    def read_solution(self, model):
        w = values_of(model.w_list)
        xi = values_of([model.xi[i] for i in range(model.dims.n_slacks)])
        alpha = model.ws.duals(model)
        primal = self.regulariser(w) + self.C * model.slack_scale * float(xi.sum())
        dual = float(alpha @ model.ws.dl_array()) if model.ws.size else 0.0
        return Solution(w=w, xi=xi, alpha=alpha, objective=primal, dual_objective=dual)


class LInfSVMDuality(Duality):
    """The explicit LP dual of :class:`LInfSVM` on its working set, and its statements."""

    def dual_model(self, result):
        arrays = working_set_arrays(result)
        F = arrays.F.tocsc()
        m = pyo.ConcreteModel(name=f"{NAME}_dual")
        r, dim = F.shape
        m.alpha = pyo.Var(range(r), domain=pyo.NonNegativeReals, initialize=0.0)
        m.u = pyo.Var(range(dim), domain=pyo.NonNegativeReals, initialize=0.0)

        def eta(k, sign):
            lo, hi = F.indptr[k], F.indptr[k + 1]
            return LinearExpression(constant=0.0, linear_coefs=[sign * float(c) for c in F.data[lo:hi]] + [-1.0],
                                    linear_vars=[m.alpha[int(j)] for j in F.indices[lo:hi]] + [m.u[k]])
        m.eta_upper = pyo.Constraint(range(dim), rule=lambda m, k: eta(k, 1.0) <= 0)
        m.eta_lower = pyo.Constraint(range(dim), rule=lambda m, k: eta(k, -1.0) <= 0)
        m.ball = pyo.Constraint(expr=pyo.quicksum(m.u.values()) <= 1)
        slacks = sorted(set(int(s) for s in arrays.slack))
        m.budget = pyo.Constraint(slacks, rule=lambda m, i: pyo.quicksum(
            m.alpha[j] for j in np.flatnonzero(arrays.slack == i)) <= arrays.budget)
        m.objective = pyo.Objective(expr=pyo.quicksum(float(arrays.dl[j]) * m.alpha[j] for j in range(r)),
                                    sense=pyo.maximize)
        return m

    def checks(self, ctx):
        res = ctx.result
        arrays = working_set_arrays(res)
        w, xi = np.asarray(res.w, dtype=float), np.asarray(res.xi, dtype=float)
        alpha = np.asarray(res.alpha, dtype=float)[arrays.positions]
        P = float(np.abs(w).max(initial=0.0)) + arrays.budget * float(xi.sum())
        ball = float(np.abs(arrays.F.T @ alpha).sum()) - 1.0
        yield from feasibility_checks(ctx, arrays, w, xi, alpha, (" and ‖Σ α ΔF‖₁ ≤ 1", max(ball, 0.0)))
        yield ctx.check(STRONG, P, float(alpha @ arrays.dl), 1e-7 * max(1.0, P), reason=f"α from {res.solver}")
        name, why = ctx.solver_for("LP")
        if name is None:
            yield ctx.skip(EXPLICIT, why)
        else:
            dm = self.dual_model(res)
            get_solver(name).solve(dm)
            yield ctx.check(EXPLICIT, P, float(pyo.value(dm.objective)), 1e-7 * max(1.0, P),
                            reason=f"dual solved by {name}")
        yield from slackness_checks(ctx, arrays, w, xi, alpha)
        yield from cross_solver_checks(ctx)


@pytest.fixture
def outside_program(monkeypatch):
    """Registers the program and its dual as a program module would, in copies of the registries (the rest of
    the test session does not see them)."""
    registered()        # every program module imported (they load on demand) before the registry is copied
    monkeypatch.setattr(program_registry, "_REGISTRY", dict(program_registry._REGISTRY))
    monkeypatch.setattr(statements, "HOOKS", dict(statements.HOOKS))
    register(NAME)(LInfSVM)
    duality_for(NAME)(LInfSVMDuality)
    return NAME


def full_lp(ds, C):
    """The program over every labeling by highspy directly: variables (w, t, ξ); returns the optimum."""
    A, dl, ex = all_constraints(ds)
    m, dim = A.shape
    n = len(ds)
    nv = dim + 1 + n
    cost = np.r_[np.zeros(dim), 1.0, C * np.ones(n)]
    lower = np.r_[-INF * np.ones(dim), np.zeros(1 + n)]
    rows = []
    for r in range(m):
        a = np.zeros(nv)
        a[:dim], a[dim + 1 + ex[r]] = A[r], 1.0
        rows.append((a, dl[r], INF))
    for k in range(dim):
        for sign in (1.0, -1.0):
            a = np.zeros(nv)
            a[k], a[dim] = sign, 1.0            # t ± wₖ ≥ 0
            rows.append((a, 0.0, INF))
    return highs_qp(cost, lower, INF * np.ones(nv), rows)[0]


def test_a_program_with_its_dual_registered_outside_the_package(outside_program, capsys):
    assert outside_program in registered() and isinstance(duality.hook_for(NAME), LInfSVMDuality)
    ds = tiny(seed=3)
    C = 0.3
    res = mmprog.fit(ds, program=NAME, C=C, solver="highs", eps=1e-9)
    assert res.termination == "converged"
    opt = full_lp(ds, C)
    assert res.primal_objective == pytest.approx(opt, rel=1e-6, abs=1e-9)
    # its explicit dual, built by its own hook through mmprog.duality, solved on its own: the same optimum
    dm = duality.dual_model(res)
    get_solver("highs").solve(dm)
    assert pyo.value(dm.objective) == pytest.approx(opt, rel=1e-6, abs=1e-9)
    rows = duality.check(res, dataset=ds)
    by = {r.statement: r for r in rows}
    assert not [r for r in rows if r.failed], [r for r in rows if r.failed]
    assert by[STRONG].status == "pass" and by[EXPLICIT].status == "pass"
    assert any(s.startswith("cross-solver") and r.status == "pass" for s, r in by.items()), \
        "the same master solved by a second LP solver (glpk, cbc, ipopt or scip)"
    # and through the command line, as `mmprog verify --program linf_svm`
    rc = main(["verify", "--program", NAME, "--data", "tiny:seed=2,n_sequences=8", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and {r["program"] for r in out} == {NAME}
    assert {r["statement"] for r in out} >= {STRONG, EXPLICIT}
    assert {r["status"] for r in out} <= {"pass", "skipped"}


def test_a_wrong_dual_fails_verify(outside_program, monkeypatch):
    """The statements can fail: a dual model whose ℓ1 ball is twice too large gives twice the optimum."""
    ds = tiny(seed=3)
    res = mmprog.fit(ds, program=NAME, C=0.3, solver="highs", eps=1e-9)
    real = LInfSVMDuality.dual_model

    def wrong(self, result):
        m = real(self, result)
        m.ball.set_value(pyo.quicksum(m.u.values()) <= 2)
        return m
    monkeypatch.setattr(LInfSVMDuality, "dual_model", wrong)
    rows = {r.statement: r for r in duality.check(res, dataset=ds)}
    assert rows[EXPLICIT].status == "fail" and rows[STRONG].status == "pass"
