"""The ``daqp`` back end and the Gram-dual master it solves on a shrinking working set.

Ground truth, never the code under test: a QP solved by enumerating every active set with numpy (the KKT sign
conditions certify the optimum of a convex QP), finite differences of the optimal value for the dual convention,
HiGHS as the second solver, the full program with every labeling enumerated (tests/_enumerated.py), and the KKT
conditions of the whole Gram-dual master recomputed here from the cut data.
"""
import itertools

import numpy as np
import pyomo.environ as pe
import pytest

import mmprog
from mmprog import solvers as S
from mmprog.exceptions import SolverError
from mmprog.solvers import ProblemClass

from _enumerated import solve_full, tiny


def need_daqp():
    rep = S.get_solver("daqp").availability(ProblemClass.QP)
    if not rep:
        pytest.skip(f"daqp not usable here: {rep.status.name}: {rep.reason}")
    return S.get_solver("daqp")


# min ½xᵀQx + cᵀx  s.t.  rows a_kᵀx ≥ b_k (k = 0, 1), a_2ᵀx ≤ b_2,  x ≥ 0
Q = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 0.5], [0.0, 0.5, 2.0]])
c = np.array([-3.0, 1.0, -2.0])
ROWS = np.array([[1.0, 1.0, 1.0], [1.0, -1.0, 2.0], [1.0, 2.0, 1.0]])
B = np.array([1.5, 3.0, 1.6])         # rows 1 and 2 and the bound x_1 ≥ 0 active at the optimum
SENSE = np.array([1.0, 1.0, -1.0])        # +1: ≥ row, −1: ≤ row


def enumerated_truth(b=B):
    """Every subset of the 3 rows and 3 bounds as the active set: solve the equality-constrained KKT system, keep the
    one that is primal feasible with multipliers of the right signs (unique here: Q is positive definite)."""
    # every constraint written g_j(x) = s_j (a_jᵀx − b_j) ≥ 0 with s = +1 for ≥ rows, −1 for ≤ rows, x_i ≥ 0
    G = np.vstack([SENSE[:, None] * ROWS, np.eye(3)])
    h = np.concatenate([SENSE * b, np.zeros(3)])
    found = []
    for k in range(len(G) + 1):
        for act in itertools.combinations(range(len(G)), k):
            act = list(act)
            Ga = G[act]
            if np.linalg.matrix_rank(Ga) < k:      # dependent active constraints: no unique multipliers
                continue
            K = np.block([[Q, -Ga.T], [Ga, np.zeros((k, k))]])
            try:
                sol = np.linalg.solve(K, np.concatenate([-c, h[act]]))
            except np.linalg.LinAlgError:
                continue
            x, lam = sol[:3], sol[3:]
            if np.all(G @ x - h >= -1e-10) and np.all(lam >= -1e-10):
                full = np.zeros(len(G))
                full[act] = lam
                found.append((x, full))
    assert found, "no KKT point: the instance is broken"
    assert len(found) == 1
    x, lam = found[0]
    f = 0.5 * x @ Q @ x + c @ x
    # d f*/d b_j: a ≥ row's bound enters as +λ_j, a ≤ row's (written −aᵀx ≥ −b) as −λ_j
    return x, float(f), SENSE * lam[:3]


def qp_model(b=B, maximise=False):
    m = pe.ConcreteModel()
    m.x = pe.Var(range(3), bounds=(0, None), initialize=0.0)
    quad = 0.5 * sum(Q[i, j] * m.x[i] * m.x[j] for i in range(3) for j in range(3))
    lin = sum(c[i] * m.x[i] for i in range(3))
    m.obj = pe.Objective(expr=-(quad + lin) if maximise else quad + lin, sense=pe.maximize if maximise else pe.minimize)
    m.r = pe.ConstraintList()
    for k in range(3):
        body = sum(ROWS[k, i] * m.x[i] for i in range(3))
        m.r.add(body >= b[k] if SENSE[k] > 0 else body <= b[k])
    return m


@pytest.mark.parametrize("maximise", [False, True])
def test_qp_optimum_and_duals_against_enumeration_and_highs(maximise):
    solver = need_daqp()
    x_star, f_star, y_star = enumerated_truth()
    sign = -1.0 if maximise else 1.0
    m = qp_model(maximise=maximise)
    st = solver.solve(m)
    assert st.ok and st.objective == pytest.approx(sign * f_star, abs=1e-8)
    np.testing.assert_allclose([m.x[i].value for i in range(3)], x_star, atol=1e-8)
    y = S.duals(m, m.r, "daqp")
    np.testing.assert_allclose(y, sign * y_star, atol=1e-7)
    # the second solver on the same model
    m2 = qp_model(maximise=maximise)
    S.get_solver("highs").solve(m2)
    np.testing.assert_allclose([m2.x[i].value for i in range(3)], x_star, atol=1e-6)
    np.testing.assert_allclose(S.duals(m2, m2.r, "highs"), y, atol=1e-6)


def test_dual_convention_is_the_derivative_of_the_optimal_value():
    solver = need_daqp()
    m = qp_model()
    solver.solve(m)
    y = S.duals(m, m.r, "daqp")
    h = 1e-4
    for k in range(3):
        up, down = B.copy(), B.copy()
        up[k] += h
        down[k] -= h
        d = (solver.solve(qp_model(up)).objective - solver.solve(qp_model(down)).objective) / (2 * h)
        assert d == pytest.approx(y[k], abs=1e-5)


def test_failures_raise_in_daqps_words():
    solver = need_daqp()
    m = pe.ConcreteModel()
    m.x = pe.Var(bounds=(0, None))
    m.obj = pe.Objective(expr=m.x ** 2)
    m.a = pe.Constraint(expr=m.x <= 1)
    m.b = pe.Constraint(expr=m.x >= 2)
    with pytest.raises(SolverError, match="EXIT_INFEASIBLE") as e:
        solver.solve(m)
    assert e.value.termination == "infeasible"
    with pytest.raises(SolverError, match="EXIT_ITERLIMIT"):
        solver.solve(qp_model(), options={"iter_limit": 1})
    with pytest.raises(SolverError, match="takes quadratic objectives only"):
        m = pe.ConcreteModel()
        m.x = pe.Var(bounds=(1, 2))
        m.obj = pe.Objective(expr=pe.exp(m.x))
        solver.solve(m)


# ------------------------------------------------------------------------------------------------------------------
# The Gram-dual master
# ------------------------------------------------------------------------------------------------------------------

def master_kkt(model):
    """The whole Gram-dual master's KKT residuals at the loaded α, from the cut data, relative to max(1, |objective|):
    with g = Gα − Δℓ and μᵢ = max(0, −min over slack i's cuts of g) (the budget multiplier), stationarity g + μ ≥ 0 on
    every active cut, budgets Σα ≤ C·scale, and the complementarity sums Σ|(g + μ)α| + Σ μ|C·scale − Σα|, which bound
    the objective's distance from the master's optimum once the others hold."""
    ws = model.ws
    act = ws.active_mask()
    G = ws.gram()
    alpha = np.array([v.value for v in ws.components])
    g = G @ alpha - ws.dl_array()
    ex = ws.example_array()
    budget = float(model.C.value) * model.slack_scale
    worst, gap = 0.0, 0.0
    for i in np.unique(ex[act]):
        on = act & (ex == i)
        mu = max(0.0, -g[on].min())
        red = g[on] + mu
        worst = max(worst, -red.min(), alpha[on].sum() - budget)
        gap += float(np.abs(red * alpha[on]).sum()) + mu * abs(budget - alpha[on].sum())
    worst = max(worst, gap, -alpha.min(initial=0.0), float(np.abs(alpha[~act]).max(initial=0.0)))
    objective = float(ws.dl_array() @ alpha) - 0.5 * float(alpha @ G @ alpha)
    return worst / max(1.0, abs(objective))


@pytest.mark.parametrize("slack", ["n", "one"])
def test_gram_dual_master_equals_the_enumerated_program_and_highs(slack):
    need_daqp()
    ds = tiny(seed=3)
    C, eps = 0.7, 1e-5
    opt, w_full = solve_full(ds, C, "l2")
    res = mmprog.fit(ds, program="m3n", C=C, slack=slack, solver="daqp", master="dual", eps=eps)
    assert res.termination == "converged"
    tol = 1e-6 * max(1.0, abs(opt))
    assert res.primal_objective <= opt + tol
    assert opt <= res.primal_objective + C * len(ds) * eps + tol
    assert np.allclose(res.w, w_full, atol=5e-2 * max(1.0, np.abs(w_full).max()))
    assert master_kkt(res.model) <= 1e-7
    ref = mmprog.fit(ds, program="m3n", C=C, slack=slack, solver="highs", master="dual", eps=eps)
    assert res.primal_objective == pytest.approx(ref.primal_objective, rel=1e-6)


def test_each_round_solves_the_whole_master_not_just_its_working_set():
    """The KKT check of every cut outside the working set: on each round the α loaded into Pyomo are the solver's and
    satisfy the full master's KKT conditions, and the Pyomo model (the statement) re-solved by HiGHS gives the same optimum."""
    need_daqp()
    from mmprog.engine.loop import run
    from mmprog.features import ChainFeatureMap
    from mmprog.engine.oracle import Oracle
    from mmprog.programs import get_program
    ds = tiny(seed=21, n=20)
    fmap = ChainFeatureMap.from_dataset(ds)
    orc = Oracle(fmap, fmap.prepare(ds))
    prog = get_program("m3n", C=3.0, master="dual")
    worst = []

    def show(model, rec):
        worst.append(master_kkt(model))
        # only the α that changed are loaded into Pyomo each round: the statement must still hold every α
        loaded = np.array([0.0 if v.value is None else v.value for v in model.ws.components])
        act = model.ws.active_mask()
        assert np.array_equal(loaded[act], model.master_state.gram_daqp.alpha[act]) and not np.any(loaded[~act])

    out = run(prog, orc, solver=S.get_solver("daqp"), slack="one", eps=1e-6, show=show, show_every=1,
              drop_after=3)
    assert len(worst) == out.n_iter and max(worst) <= 1e-7
    assert out.model.master_state.gram_daqp.passes >= 1
    model = out.model
    model.native = False
    prog.solve(model, S.get_solver("highs"))      # the Pyomo model, ½αᵀGα written out, through Pyomo's HiGHS
    again = prog.read_solution(model)
    assert again.objective == pytest.approx(out.solution.objective, rel=1e-6, abs=1e-8)


def test_m3n_prefers_daqp_for_its_gram_dual_only():
    need_daqp()
    prog = mmprog.programs.get_program("m3n", C=1.0)
    assert prog.preferred_solver(dim=4004) == "daqp"
    assert prog.preferred_solver(dim=20) is None          # auto → primal master: the registry's default
    ds = tiny(seed=3)
    assert mmprog.fit(ds, program="m3n", C=1.0, master="dual", eps=1e-3).solver == "daqp"
