"""Tests of the solver registry (mmprog.solvers).

Ground truth is computed here by hand (active-set linear systems solved with numpy, checked against the KKT sign
conditions, which certify optimality for these convex programs) and by finite differences of the optimal value, never
by the code under test. Back ends that are not installed here are skipped with the registry's own reason.
"""

import importlib.util
import os
import shutil
import subprocess
import sys

import numpy as np
import pyomo.environ as pe
import pytest

from mmprog import solvers as S
from mmprog.solvers import base as SB  # the registry (a private name) lives in the base module
from mmprog.exceptions import SolverError, SolverUnavailable
from mmprog.solvers import Availability, ProblemClass

LP_SOLVERS = ["highs", "ipopt", "glpk", "cbc", "gurobi", "mosek"]
QP_SOLVERS = ["highs", "ipopt", "gurobi", "mosek"]


def need(name, problem_class=None, **size):
    """Skip (with the registry's reason) unless ``name`` can take ``problem_class`` here."""
    rep = S.get_solver(name).availability(problem_class, **size)
    if not rep:
        pytest.skip(f"{name} not usable here: {rep.status.name}: {rep.reason}")
    return S.get_solver(name)


# ------------------------------------------------------------------------------------------------------------------
# Hand-solved programs
# ------------------------------------------------------------------------------------------------------------------

# LP:  min x + y  s.t.  c1: x + 2y >= 2,  c2: 3x + y >= 3,  c3: x + y <= 10 (inactive),  x, y >= 0.
LP_A = np.array([[1.0, 2.0], [3.0, 1.0]])
LP_B = np.array([2.0, 3.0])
LP_C = np.array([1.0, 1.0])


def lp_truth():
    """Vertex where c1 and c2 are active, and multipliers from c = A^T y; optimality certified by x > 0 (so the
    bounds are inactive and stationarity needs no reduced costs) and y >= 0 for the two >= rows."""
    x = np.linalg.solve(LP_A, LP_B)
    y = np.linalg.solve(LP_A.T, LP_C)
    assert np.all(x > 0) and np.all(y > 0)  # the certificate: this vertex is optimal
    return x, float(LP_C @ x), y


def lp_model(form, b=LP_B, b3=10.0):
    """``form``: "min_ge" (as written above), "min_le" (c2 written as -3x - y <= -3) or "max" (maximise -(x+y))."""
    m = pe.ConcreteModel()
    m.x = pe.Var(bounds=(0, None))
    m.y = pe.Var(bounds=(0, None))
    if form == "max":
        m.obj = pe.Objective(expr=-(m.x + m.y), sense=pe.maximize)
    else:
        m.obj = pe.Objective(expr=m.x + m.y)
    m.c1 = pe.Constraint(expr=m.x + 2 * m.y >= b[0])
    if form == "min_le":
        m.c2 = pe.Constraint(expr=-3 * m.x - m.y <= -b[1])
    else:
        m.c2 = pe.Constraint(expr=3 * m.x + m.y >= b[1])
    m.c3 = pe.Constraint(expr=m.x + m.y <= b3)
    return m


def lp_expected_duals(form):
    """d f*/d b for c1, c2, c3 (as written in each form) from the hand-derived multipliers."""
    _, _, y = lp_truth()
    if form == "min_ge":
        return np.array([y[0], y[1], 0.0])
    if form == "min_le":  # c2's bound is -3: f*(b2') = f*(-b2') so the derivative flips
        return np.array([y[0], -y[1], 0.0])
    return np.array([-y[0], -y[1], 0.0])  # maximising -f: every derivative flips


# QP:  min (x-1)^2 + (y-2)^2  s.t.  cA: x + y <= 2,  cB: x >= 0.8,  cC: x - y >= -2 (inactive).
def qp_truth():
    """Active set {cA, cB}: the point solves x + y = 2, x = 0.8; multipliers solve grad f = yA (1,1) + yB (1,0).
    Convex objective, so yA <= 0 (<= row) and yB >= 0 (>= row) certify the optimum."""
    x = np.linalg.solve(np.array([[1.0, 1.0], [1.0, 0.0]]), np.array([2.0, 0.8]))
    grad = np.array([2 * (x[0] - 1), 2 * (x[1] - 2)])
    y = np.linalg.solve(np.array([[1.0, 1.0], [1.0, 0.0]]).T, grad)
    assert y[0] <= 0 <= y[1] and x[0] - x[1] > -2  # KKT signs and cC inactive
    f = (x[0] - 1) ** 2 + (x[1] - 2) ** 2
    return x, float(f), np.array([y[0], y[1], 0.0])


def qp_model(bA=2.0, bB=0.8, bC=-2.0):
    m = pe.ConcreteModel()
    m.x = pe.Var(initialize=0.0)
    m.y = pe.Var(initialize=0.0)
    m.obj = pe.Objective(expr=(m.x - 1) ** 2 + (m.y - 2) ** 2)
    m.cA = pe.Constraint(expr=m.x + m.y <= bA)
    m.cB = pe.Constraint(expr=m.x >= bB)
    m.cC = pe.Constraint(expr=m.x - m.y >= bC)
    return m


def constraint_slack(c):
    """Distance of the body from the bound the constraint can be active at (>= 0 when feasible)."""
    body = pe.value(c.body)
    if c.has_lb() and c.has_ub():
        return min(body - pe.value(c.lower), pe.value(c.upper) - body)
    return body - pe.value(c.lower) if c.has_lb() else pe.value(c.upper) - body


# ------------------------------------------------------------------------------------------------------------------
# LP and QP with known optima and duals
# ------------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("form", ["min_ge", "min_le", "max"])
@pytest.mark.parametrize("name", LP_SOLVERS)
def test_lp_optimum_duals_and_kkt(name, form):
    solver = need(name, ProblemClass.LP)
    x_star, f_star, _ = lp_truth()
    m = lp_model(form)
    status = solver.solve(m)
    tol = 1e-5
    assert status.ok and status.termination == "optimal" and status.solution_status == "optimal"
    sign = -1.0 if form == "max" else 1.0
    assert status.objective == pytest.approx(sign * f_star, abs=tol)
    x = np.array([m.x.value, m.y.value])
    np.testing.assert_allclose(x, x_star, atol=tol)
    cons = [m.c1, m.c2, m.c3]
    slack = np.array([constraint_slack(c) for c in cons])
    assert np.all(slack >= -tol) and m.x.value >= -tol and m.y.value >= -tol  # primal feasibility
    y = S.duals(m, cons, name)
    np.testing.assert_allclose(y, lp_expected_duals(form), atol=tol)
    # complementary slackness from the numbers: a multiplier is zero unless its constraint is tight
    assert np.all(np.abs(y * slack) <= 10 * tol)
    # stationarity with the normalised duals: grad f = sum_i y_i grad g_i (x > 0: no bound multipliers)
    grads = np.array([[1.0, 2.0], [-3.0, -1.0] if form == "min_le" else [3.0, 1.0], [1.0, 1.0]])
    grad_f = -LP_C if form == "max" else LP_C
    np.testing.assert_allclose(grads.T @ y, grad_f, atol=10 * tol)


@pytest.mark.parametrize("name", QP_SOLVERS)
def test_qp_optimum_duals_and_kkt(name):
    solver = need(name, ProblemClass.QP)
    x_star, f_star, y_star = qp_truth()
    m = qp_model()
    status = solver.solve(m)
    tol = 1e-5
    assert status.ok and status.objective == pytest.approx(f_star, abs=tol)
    x = np.array([m.x.value, m.y.value])
    np.testing.assert_allclose(x, x_star, atol=tol)
    cons = [m.cA, m.cB, m.cC]
    slack = np.array([constraint_slack(c) for c in cons])
    assert np.all(slack >= -tol)
    y = S.duals(m, cons)  # solver recorded by the solve
    np.testing.assert_allclose(y, y_star, atol=tol)
    assert np.all(np.abs(y * slack) <= 10 * tol)
    grad_f = np.array([2 * (x[0] - 1), 2 * (x[1] - 2)])
    grads = np.array([[1.0, 1.0], [1.0, 0.0], [1.0, -1.0]])
    np.testing.assert_allclose(grads.T @ y, grad_f, atol=10 * tol)


def test_scip_qp_optimum_without_duals():
    solver = need("scip", ProblemClass.QP)
    _, f_star, _ = qp_truth()
    m = qp_model()
    assert solver.solve(m).objective == pytest.approx(f_star, abs=1e-5)
    with pytest.raises(SolverError, match="returns no duals"):
        S.duals(m, [m.cA], "scip")


@pytest.mark.parametrize("name", ["highs", "ipopt"])
def test_dual_convention_is_the_derivative_of_the_optimal_value(name):
    """The documented convention y = d f*/d b, checked by finite differences of re-solved optima, for a
    minimisation with >= and <= rows, a maximisation, and the QP."""
    solver = need(name, ProblemClass.QP)
    h = 1e-3
    for form in ("min_le", "max"):
        m = lp_model(form)
        f0 = solver.solve(m).objective
        y = S.duals(m, [m.c1, m.c2], name)
        for i in range(2):
            b = LP_B.copy()
            # c2 in the "min_le" form has bound -b2: perturbing that bound by +h means b2 - h
            b[i] += -h if (form == "min_le" and i == 1) else h
            f1 = solver.solve(lp_model(form, b=b)).objective
            assert (f1 - f0) / h == pytest.approx(y[i], abs=1e-3)
    m = qp_model()
    solver.solve(m)
    y = S.duals(m, [m.cA, m.cB], name)
    # f* is quadratic in the bounds here: central differences are exact up to the solver's tolerance
    dA = (solver.solve(qp_model(bA=2.0 + h)).objective - solver.solve(qp_model(bA=2.0 - h)).objective) / (2 * h)
    dB = (solver.solve(qp_model(bB=0.8 + h)).objective - solver.solve(qp_model(bB=0.8 - h)).objective) / (2 * h)
    assert dA == pytest.approx(y[0], abs=1e-3)
    assert dB == pytest.approx(y[1], abs=1e-3)


# ------------------------------------------------------------------------------------------------------------------
# Failures carry the solver's own words
# ------------------------------------------------------------------------------------------------------------------

def infeasible_lp():
    m = pe.ConcreteModel()
    m.x = pe.Var(bounds=(0, None))
    m.y = pe.Var(bounds=(0, None))
    m.obj = pe.Objective(expr=m.x + m.y)
    m.a = pe.Constraint(expr=m.x + m.y <= 1)
    m.b = pe.Constraint(expr=m.x + m.y >= 2)
    return m


def unbounded_lp():
    m = pe.ConcreteModel()
    m.x = pe.Var(bounds=(0, None))
    m.y = pe.Var(bounds=(0, None))
    m.obj = pe.Objective(expr=-m.x)
    m.a = pe.Constraint(expr=m.x - m.y <= 1)
    return m


# The solver's own words for each outcome (HiGHS's model status strings, Ipopt's return status names, ...).
OWN_WORDS = {
    ("highs", "infeasible"): ["Infeasible"],
    ("highs", "unbounded"): ["Unbounded", "Primal infeasible or unbounded"],
    ("ipopt", "infeasible"): ["Infeasible_Problem_Detected", "Restoration_Failed"],
    ("ipopt", "unbounded"): ["Diverging_Iterates", "Maximum_Iterations_Exceeded"],
    ("glpk", "infeasible"): ["NO PRIMAL FEASIBLE SOLUTION"],
    ("glpk", "unbounded"): ["UNBOUNDED", "NO DUAL FEASIBLE"],
    ("cbc", "infeasible"): ["infeasible"],
    ("cbc", "unbounded"): ["unbounded"],
    ("gurobi", "infeasible"): ["infeasible"],
    ("gurobi", "unbounded"): ["unbounded"],
    ("mosek", "infeasible"): ["infeasib"],
    ("mosek", "unbounded"): ["infeasib", "unbounded"],
}


@pytest.mark.parametrize("name", LP_SOLVERS)
def test_infeasible_and_unbounded_raise_with_solver_words(name):
    solver = need(name, ProblemClass.LP)
    opts = {"max_iter": 300} if name == "ipopt" else None
    with pytest.raises(SolverError) as err:
        solver.solve(infeasible_lp(), options=opts)
    e = err.value
    assert e.termination in ("infeasible", "infeasible_or_unbounded", "numerical")
    assert e.solver_message and e.solver_message in str(e) and "\n" not in str(e)
    assert any(w in e.solver_message for w in OWN_WORDS[name, "infeasible"]), e.solver_message
    with pytest.raises(SolverError) as err:
        solver.solve(unbounded_lp(), options=opts)
    e = err.value
    assert e.termination in ("unbounded", "infeasible_or_unbounded", "max_iterations")
    assert e.solver_message in str(e)
    assert any(w in e.solver_message for w in OWN_WORDS[name, "unbounded"]), e.solver_message


def test_failure_warns_instead_when_asked():
    solver = need("highs", ProblemClass.LP)
    with pytest.warns(RuntimeWarning, match="Infeasible"):
        status = solver.solve(infeasible_lp(), raise_on_failure=False)
    assert status.termination == "infeasible" and not status.ok
    m = unbounded_lp()
    handle = solver.persistent_handle(m)
    with pytest.raises(SolverError, match="Unbounded|unbounded"):
        handle.solve()


# ------------------------------------------------------------------------------------------------------------------
# Persistent handle: incremental rounds equal fresh solves
# ------------------------------------------------------------------------------------------------------------------

def growing_lp(d, seed, quadratic=False):
    """min c.x (+ 1/2 |x|^2) over 0 <= x <= 5 with cuts a.x >= b added later; x0 = 1 stays feasible for every cut."""
    rng = np.random.default_rng(seed)
    m = pe.ConcreteModel()
    m.I = pe.RangeSet(0, d - 1)
    m.x = pe.Var(m.I, bounds=(0, 5))
    c = rng.uniform(0.5, 1.5, size=d)
    lin = sum(float(c[i]) * m.x[i] for i in range(d))
    m.obj = pe.Objective(expr=lin + 0.5 * sum(m.x[i] ** 2 for i in range(d)) if quadratic else lin)
    m.cuts = pe.ConstraintList()
    return m, rng


def add_cuts(m, rng, d, k):
    new = []
    for _ in range(k):
        a = rng.uniform(0, 1, size=d) * (rng.uniform(size=d) < 0.3)
        b = float(a.sum()) * rng.uniform(0.5, 0.95)  # x = 1 satisfies a.x >= b
        new.append(m.cuts.add(sum(float(a[i]) * m.x[i] for i in np.nonzero(a)[0]) >= b))
    return new


def fresh_solve(name, m):
    """Objective, point and normalised duals from a solve that rebuilds the solver's model from scratch."""
    solver = S.get_solver(name)
    st = solver.solve(m)
    cons = [c for c in m.cuts.values() if c.active]
    return st.objective, np.array([m.x[i].value for i in m.I]), S.duals(m, cons, name)


@pytest.mark.parametrize("name,quadratic", [("highs", False), ("highs", True), ("gurobi", False), ("mosek", False)])
def test_persistent_rounds_equal_fresh_solves(name, quadratic):
    solver = need(name, ProblemClass.QP if quadratic else ProblemClass.LP, n_vars=40, n_cons=40)
    assert solver.persistent
    d = 40
    m, rng = growing_lp(d, seed=1, quadratic=quadratic)
    add_cuts(m, rng, d, 5)
    handle = solver.persistent_handle(m)
    for rnd in range(4):
        if rnd:
            handle.add_constraints(add_cuts(m, rng, d, 5))
        st = handle.solve()
        cons = list(m.cuts.values())
        y_handle = S.duals(m, cons, name)
        f, x, y = fresh_solve(name, m)
        assert st.objective == pytest.approx(f, rel=1e-7, abs=1e-7)
        # the fresh solve reloaded x; compare the handle's duals and the fresh ones (a non-degenerate random LP)
        np.testing.assert_allclose(y_handle, y, atol=1e-6)
        assert np.all(y >= -1e-7)  # >= cuts in a minimisation
    # drop three cuts (the engine deactivates dropped cuts and tells the handle)
    gone = [m.cuts[1], m.cuts[7], m.cuts[12]]
    handle.remove_constraints(gone)
    for c in gone:
        c.deactivate()
    st = handle.solve()
    f, _, _ = fresh_solve(name, m)
    assert st.objective == pytest.approx(f, rel=1e-7, abs=1e-7)
    # a new objective reaches the solver only through update_objective
    m.obj.deactivate()
    m.obj2 = pe.Objective(expr=sum(m.x[i] for i in m.I))
    handle.update_objective()
    st = handle.solve()
    f, _, _ = fresh_solve(name, m)
    assert st.objective == pytest.approx(f, rel=1e-7, abs=1e-7)


def test_warm_solve_follows_model_changes():
    """highs' warm route keeps its solver object between solves and lets Pyomo push the changes."""
    solver = need("highs", ProblemClass.LP)
    d = 20
    m, rng = growing_lp(d, seed=2)
    add_cuts(m, rng, d, 4)
    for _ in range(3):
        st = solver.solve(m, warm=True)
        f, _, _ = fresh_solve("highs", m)
        assert st.objective == pytest.approx(f, rel=1e-9, abs=1e-9)
        add_cuts(m, rng, d, 4)


# ------------------------------------------------------------------------------------------------------------------
# Registry, availability and refusals
# ------------------------------------------------------------------------------------------------------------------

def test_unknown_solver_lists_known_names():
    with pytest.raises(SolverUnavailable) as err:
        S.get_solver("cplex-but-misspelt")
    msg = str(err.value)
    assert "cplex-but-misspelt" in msg and "\n" not in msg
    for name in ("highs", "ipopt", "mosek", "gurobi", "glpk", "cbc", "scip"):
        assert name in msg


def test_required_solvers_registered_with_capabilities():
    assert {"highs", "ipopt", "mosek", "gurobi", "glpk", "cbc", "scip"} <= set(S.registered())
    assert S.get_solver("highs").capabilities == {ProblemClass.LP, ProblemClass.QP}
    assert S.get_solver("highs").persistent and S.get_solver("highs").gives_duals
    assert not S.get_solver("scip").gives_duals
    assert S.get_solver("glpk").capabilities == {ProblemClass.LP}


def test_class_refusal_before_any_work():
    highs = S.get_solver("highs")
    rep = highs.availability(ProblemClass.QCQP)
    if highs.probe():
        assert rep.status == Availability.CannotSolveClass
    with pytest.raises(SolverUnavailable) as err:
        highs.require(ProblemClass.QCQP)
    msg = str(err.value)
    assert "\n" not in msg and "highs" in msg
    if highs.probe():
        assert "QCQP" in msg and "ipopt" in msg  # says what to use instead
    with pytest.raises(SolverUnavailable, match="NLP"):
        S.get_solver("glpk").require("NLP") if S.get_solver("glpk").probe() else highs.require("NLP")
    need("highs", ProblemClass.LP).require(ProblemClass.LP)  # no error


@pytest.mark.parametrize("name,module", [("gurobi", "gurobipy"), ("mosek", "mosek")])
def test_commercial_availability_is_truthful(name, module):
    solver = S.get_solver(name)
    rep = solver.availability()
    importable = importlib.util.find_spec(module) is not None
    if not importable:
        assert rep.status == Availability.NotFound and not rep
        assert module in rep.reason and "pip install" in rep.reason
        with pytest.raises(SolverUnavailable):
            solver.solve(lp_model("min_ge"))
        return
    assert rep.status != Availability.NotFound
    if rep:  # it says it works: it must solve the LP to the hand-derived optimum
        assert solver.solve(lp_model("min_ge")).objective == pytest.approx(lp_truth()[1], abs=1e-6)
    else:  # it says why not (e.g. MOSEK without a licence): a real solve must fail the same way
        assert rep.reason
        with pytest.raises(SolverUnavailable):
            solver.solve(lp_model("min_ge"))
    if rep.status == Availability.LimitedLicense:
        assert solver.availability(ProblemClass.LP, n_vars=2000, n_cons=2000)
        assert solver.availability(ProblemClass.LP, n_vars=2001).status == Availability.TooLarge
        assert solver.availability(ProblemClass.LP, n_cons=2001).status == Availability.TooLarge
        assert solver.availability(ProblemClass.QP, n_vars=201).status == Availability.TooLarge
        assert solver.availability(ProblemClass.LP, n_vars=201, quadratic=True).status == Availability.TooLarge
        with pytest.raises(SolverUnavailable, match="(?i)gurobi"):
            solver.require(ProblemClass.QP, n_vars=201)
        # and the licence really refuses that size
        m, rng = growing_lp(201, seed=0, quadratic=True)
        add_cuts(m, rng, 201, 2)
        with pytest.raises(SolverUnavailable, match="size-limited"):
            solver.solve(m)


def test_ipopt_without_pynumero_library_says_what_to_do(tmp_path):
    """Pyomo's available() says True for cyipopt without the ASL library; the probe's real solve tells."""
    if importlib.util.find_spec("cyipopt") is None:
        pytest.skip("cyipopt not installed")
    env = dict(os.environ, PYOMO_CONFIG_DIR=str(tmp_path), LD_LIBRARY_PATH="")
    code = ("from mmprog.solvers import get_solver; r = get_solver('ipopt').availability(); "
            "print(r.status.name); print(r.reason)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    status, reason = out.stdout.strip().splitlines()[:2]
    if shutil.which("ipopt"):
        assert status == "FullLicense" and "executable" in reason
    else:
        assert status == "NeedsCompiledExtension"
        assert "PYOMO_CONFIG_DIR" in reason or "build-extensions" in reason


def test_table_rows_match_availability():
    rows = S.table()
    assert [r["name"] for r in rows] == S.registered()
    for r in rows:
        s = S.get_solver(r["name"])
        rep = s.availability()
        assert r["available"] == bool(rep) and r["status"] == rep.status.name and r["reason"] == rep.reason
        assert r["classes"] == [c.value for c in ProblemClass if c in s.capabilities]
    qcqp = {r["name"]: r for r in S.table(ProblemClass.QCQP)}
    assert not qcqp["highs"]["available"]
    assert qcqp["highs"]["status"] in ("CannotSolveClass",) or not S.get_solver("highs").probe()


def test_default_solvers():
    assert S.default_solver(ProblemClass.LP) == "highs"
    assert S.default_solver("QP") == "highs"
    assert S.default_solver(ProblemClass.QCQP) == "ipopt"
    assert S.default_solver(ProblemClass.NLP) == "ipopt"
    socp = S.default_solver(ProblemClass.SOCP)
    conic = [n for n in ("mosek", "gurobi") if S.get_solver(n).availability(ProblemClass.SOCP)]
    assert socp == (conic[0] if conic else "ipopt")
    assert ProblemClass.SOCP in S.get_solver(socp).capabilities


def test_duals_need_a_solve():
    m = lp_model("min_ge")
    with pytest.raises(SolverError, match="load_duals"):
        S.duals(m, [m.c1])
    solver = need("highs", ProblemClass.LP)
    solver.solve(m, load_duals=False)
    with pytest.raises(SolverError):
        S.duals(m, [m.c1])
    solver.solve(m)
    with pytest.raises(SolverError, match="written by 'highs'"):
        S.duals(m, [m.c1], "glpk")


def test_classify_and_size():
    m = lp_model("min_ge")
    assert S.classify(m) is ProblemClass.LP
    assert S.model_size(m) == (2, 3)
    assert S.classify(qp_model()) is ProblemClass.QP
    m.q = pe.Constraint(expr=m.x ** 2 + m.y ** 2 <= 4)
    assert S.classify(m) is ProblemClass.QCQP
    m.n = pe.Constraint(expr=pe.exp(m.x) <= 4)
    assert S.classify(m) is ProblemClass.NLP


def test_register_function_and_decorator(monkeypatch):
    monkeypatch.setattr(SB, "REGISTRY", dict(SB.REGISTRY))
    monkeypatch.setattr(SB, "_INSTANCES", dict(SB._INSTANCES))

    @S.register("toy")
    class Toy(S.Solver):
        capabilities = frozenset({ProblemClass.LP})

        def _probe(self):
            return S.AvailabilityReport(Availability.NotFound, "toy is never installed")

    class Toy2(Toy):
        pass

    S.register("toy2", Toy2)
    assert S.registered()[-2:] == ["toy", "toy2"]
    assert isinstance(S.get_solver("toy2"), Toy2) and S.get_solver("toy").name == "toy"
    with pytest.raises(SolverUnavailable, match="toy is never installed"):
        S.get_solver("toy").require(ProblemClass.LP)
    with pytest.raises(TypeError):
        S.register("bad", int)


def test_limits_raise_with_solver_words():
    highs = need("highs", ProblemClass.LP)
    m, rng = growing_lp(30, seed=3)
    add_cuts(m, rng, 30, 10)
    with pytest.raises(SolverError, match="Iteration limit reached") as err:
        highs.solve(m, options={"presolve": "off", "simplex_iteration_limit": 0})
    assert err.value.termination == "max_iterations"
    # the limit must not stick to later solves of the same (warm) solver object
    with pytest.warns(RuntimeWarning, match="Iteration limit reached"):
        st = highs.solve(m, warm=True, options={"presolve": "off", "simplex_iteration_limit": 0},
                         raise_on_failure=False)
    assert st.termination == "max_iterations" and st.solution_status != "optimal"
    assert highs.solve(m, warm=True).ok
    ipopt = need("ipopt", ProblemClass.QP)
    with pytest.raises(SolverError, match="Maximum_Iterations_Exceeded") as err:
        ipopt.solve(qp_model(), options={"max_iter": 1})
    assert err.value.termination == "max_iterations"


def test_bad_time_limit_is_a_parameter_error():
    from mmprog.exceptions import ParameterError
    with pytest.raises(ParameterError, match="time_limit"):
        need("highs", ProblemClass.LP).solve(lp_model("min_ge"), time_limit=-1)


def test_ipopt_warm_start_reaches_the_same_optimum():
    ipopt = need("ipopt", ProblemClass.QP)
    _, f_star, y_star = qp_truth()
    m = qp_model()
    ipopt.solve(m)
    m.x.value, m.y.value = 50.0, -20.0  # a poor starting point for the warm solve
    assert ipopt.solve(m, warm=True).objective == pytest.approx(f_star, abs=1e-5)
    np.testing.assert_allclose(S.duals(m, [m.cA, m.cB, m.cC]), y_star, atol=1e-5)


def test_format_table_has_one_line_per_solver():
    text = S.format_table(S.table())
    lines = text.splitlines()
    assert len(lines) == 1 + len(S.registered())
    assert all(line.split()[0] == name for line, name in zip(lines[1:], S.registered()))


# QCQP:  min x + y  s.t.  q: x^2 + y^2 <= 1.  Optimum -sqrt(2) at -(1, 1)/sqrt(2); grad f = y grad g gives
# (1, 1) = y (2x, 2y), so y = -1/sqrt(2) (<= 0 for a <= row), and f*(b) = -sqrt(2 b) has the same derivative at 1.
def qcqp_model(b=1.0):
    m = pe.ConcreteModel()
    m.x = pe.Var(initialize=0.1)
    m.y = pe.Var(initialize=0.1)
    m.obj = pe.Objective(expr=m.x + m.y)
    m.q = pe.Constraint(expr=m.x ** 2 + m.y ** 2 <= b)
    return m


@pytest.mark.parametrize("name", ["ipopt", "gurobi", "mosek", "scip"])
def test_qcqp_optimum_and_dual(name):
    solver = need(name, ProblemClass.QCQP)
    m = qcqp_model()
    assert S.classify(m) is ProblemClass.QCQP
    st = solver.solve(m)
    assert st.objective == pytest.approx(-np.sqrt(2.0), abs=1e-5)
    np.testing.assert_allclose([m.x.value, m.y.value], -np.ones(2) / np.sqrt(2.0), atol=1e-4)
    if solver.gives_duals:
        y = S.duals(m, [m.q])
        assert y[0] == pytest.approx(-1 / np.sqrt(2.0), abs=1e-4)


def test_dual_source_follows_the_solver_that_overwrote_the_suffix():
    """cyipopt fills an existing dual suffix even with load_duals=False: the signs must follow it."""
    need("highs", ProblemClass.LP)
    ipopt = need("ipopt", ProblemClass.LP)
    m = lp_model("min_ge")
    S.get_solver("highs").solve(m)
    ipopt.solve(m, load_duals=False)
    np.testing.assert_allclose(S.duals(m, [m.c1, m.c2, m.c3]), lp_expected_duals("min_ge"), atol=1e-5)
