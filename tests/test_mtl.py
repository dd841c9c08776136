"""Multiple template learning (Mao & Tsang): the QCQP dual (6), its primal SOCP (5), recovery (7), and the
learned template weights.

Ground truth is independent of mmprog's programs: problem (3) with every labeling of every example as an explicit
constraint is built here from features computed by explicit loops (tests/_enumerated.py) and solved by Ipopt
directly (its own Pyomo model); Gram matrices, θ, primal and dual values are recomputed here from the cut data with
dense numpy.
"""
import itertools

import numpy as np
import pyomo.environ as pyo
import pytest
import scipy.sparse as sp

import mmprog
from mmprog.datasets.base import SequenceDataset
from mmprog.solvers import get_solver

from _enumerated import joint_f

K = 2


def _need(name):
    rep = get_solver(name).availability()
    if not rep:
        pytest.skip(f"{name}: {rep.reason}")


@pytest.fixture(scope="module", autouse=True)
def ipopt_available():
    _need("ipopt")


def best_labels(X, rng, noise):
    """The best label sequence of every x (T, D) by enumeration under random state and transition weights plus
    noise (drawn from ``rng`` in this order)."""
    T, D = X[0].shape
    W = 1.5 * rng.normal(size=(D, K))
    A = 1.5 * rng.normal(size=(K, K))
    labs = np.array(list(itertools.product(range(K), repeat=T)))
    Y = []
    for x in X:
        node = x @ W + noise * rng.normal(size=(T, K))
        score = node[np.arange(T), labs].sum(axis=1) + A[labs[:, :-1], labs[:, 1:]].sum(axis=1)
        Y.append(labs[np.argmax(score)])
    return Y


def grouped(seed, n=10, T=3, groups=(0, 0, 1, 1), noise=0.3):
    """Sequences with feature templates ``groups`` (one id per input feature); each label sequence is the best
    (by enumeration) under random state and transition weights plus noise, so every template, the transitions
    included, is informative and the optimum has every wⱼ ≠ 0 (a well-posed reference for Ipopt)."""
    rng = np.random.default_rng(seed)
    groups = np.asarray(groups)
    D = len(groups)
    X = [rng.normal(size=(T, D)) for _ in range(n)]
    Y = best_labels(X, rng, noise)
    m = int(groups.max()) + 1
    return SequenceDataset(X, Y, K, groups=groups, group_names=[f"t{j}" for j in range(m)])


def feature_groups(ds):
    """Template of every joint feature: input feature j's group for its K state features, then the transitions."""
    g = np.asarray(ds.groups)
    return np.concatenate([np.repeat(g, K), np.full(K * K, g.max() + 1)])


def solve_problem3(ds, C):
    """min ½(Σⱼ‖wⱼ‖)² + C Σᵢ ξᵢ s.t. wᵀ(f(xᵢ,yᵢ) − f(xᵢ,y)) ≥ Δ(yᵢ,y) − ξᵢ for every labeling y — problem (3) of
    the paper on mmprog's C scale — in the epigraph form ½u² + CΣξ, Σⱼ tⱼ ≤ u, ‖wⱼ‖² ≤ tⱼ², by Ipopt."""
    groups = feature_groups(ds)
    dim = len(groups)
    m = pyo.ConcreteModel()
    m.w = pyo.Var(range(dim), initialize=0.1)
    m.xi = pyo.Var(range(len(ds)), bounds=(0, None), initialize=1.0)
    m.t = pyo.Var(range(groups.max() + 1), bounds=(0, None), initialize=1.0)
    m.u = pyo.Var(bounds=(0, None), initialize=1.0)
    m.c = pyo.ConstraintList()
    m.c.add(sum(m.t[j] for j in m.t) <= m.u)
    for j in m.t:
        m.c.add(sum(m.w[k] ** 2 for k in np.nonzero(groups == j)[0]) <= m.t[j] ** 2)
    for i, (x, y) in enumerate(zip(ds.X, ds.Y)):
        fy = joint_f(x, y, K)
        for lab in itertools.product(range(K), repeat=len(y)):
            lab = np.array(lab)
            df = fy - joint_f(x, lab, K)
            m.c.add(sum(float(df[k]) * m.w[k] for k in np.nonzero(df)[0]) >= float(np.sum(lab != y)) - m.xi[i])
    m.obj = pyo.Objective(expr=0.5 * m.u ** 2 + C * sum(m.xi[i] for i in m.xi))
    res = pyo.SolverFactory("cyipopt").solve(m, options={"tol": 1e-10})
    assert int(res.solver.return_code) in (0, 1)
    return pyo.value(m.obj), np.array([m.w[k].value for k in range(dim)])


def recompute(res, ds):
    """Q, θ, the dual (6) value, w by (7) and the primal (5) value from the result's cut data, dense numpy."""
    groups = feature_groups(ds)
    m = groups.max() + 1
    P = res.cut_p.toarray()                    # rows pʳ = −ΔF̄_r
    q = res.cut_q
    alpha = res.alpha
    mu = res.template_weights
    Q = np.stack([P[:, groups == j] @ P[:, groups == j].T for j in range(m)])
    theta = 0.5 * max(alpha @ Q[j] @ alpha for j in range(m))
    dual = -theta + alpha @ q
    w = -mu[groups] * (P.T @ alpha)            # (7): wⱼ = −μⱼ Σᵣ αᵣ pⱼʳ
    norms = np.array([np.linalg.norm(w[groups == j]) for j in range(m)])
    B = res.params["C"] * len(ds)              # 1-slack: the budget / slack weight is C·n
    xi = max(0.0, float(np.max(q + P @ w)))
    primal = 0.5 * norms.sum() ** 2 + B * xi
    return {"Q": Q, "theta": theta, "dual": dual, "w": w, "primal": primal, "norms": norms}


# ---------------------------------------------------------------------------------------------------------------
def test_template_gram_rows_are_per_template_inner_products():
    from mmprog.programs.mtl import TemplateGram
    from mmprog.cuts import WorkingSet
    from mmprog.cuts import Cuts
    rng = np.random.default_rng(0)
    dim, m = 40, 5
    groups = rng.integers(0, m, size=dim)
    ws = WorkingSet(dim)
    gram = TemplateGram(groups, m)
    rows = []
    for batch in (3, 1, 4):
        F = sp.random(batch, dim, density=0.3, random_state=int(rng.integers(1 << 30)), format="csr")
        ws.add(Cuts(np.zeros(batch, dtype=np.int64), F, rng.random(batch)))
        gram.grow(ws)
        rows.append(F.toarray())
    A = np.vstack(rows)
    for j in range(m):
        B = A[:, groups == j]
        assert np.allclose(gram.Q[j], B @ B.T)


def test_mtl_optimum_equals_problem3_with_every_labeling():
    ds = grouped(seed=1)
    C = 0.4
    opt, w_full = solve_problem3(ds, C)
    res = mmprog.fit(ds, program="mtl", C=C, slack="one", eps=1e-5)
    assert res.termination == "converged"
    tol = 1e-5 * max(1.0, opt)
    # the master optimum is a lower bound; an ε-feasible w costs at most C·n·ε more (1-slack: ε on the average)
    assert res.dual_objective <= opt + tol
    assert opt <= res.primal_objective + C * len(ds) * 1e-5 + tol
    assert res.upper_bound >= opt - tol
    # the objective is strictly convex in each template's direction here (every template is used): w is determined
    assert np.allclose(res.w, w_full, atol=2e-3 * max(1.0, np.abs(w_full).max()))


def one_hot_templates(seed, n=12, T=3, values=(3, 2, 3), noise=0.3):
    """Sequences of 0/1 token features as CRF++ templates make them: template j takes one of ``values[j]`` values
    at each token, one indicator per value (sparse rows), labels the best by enumeration under random weights plus
    noise (as :func:`grouped`; with seeds 3 and 4 every template, the transitions included, keeps μⱼ > 0.05, so
    the reference below is at a smooth point). The 1-slack cuts of such data are held as labelings."""
    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(values)])
    D = int(offsets[-1])
    X = []
    for _ in range(n):
        x = np.zeros((T, D))
        for j, v in enumerate(values):
            x[np.arange(T), offsets[j] + rng.integers(0, v, size=T)] = 1.0
        X.append(x)
    Y = best_labels(X, rng, noise)
    groups = np.repeat(np.arange(len(values)), values)
    dense = SequenceDataset(X, Y, K, groups=groups, group_names=[f"t{j}" for j in range(len(values))])
    sparse = SequenceDataset([sp.csr_matrix(x) for x in X], Y, K, groups=groups,
                             group_names=[f"t{j}" for j in range(len(values))])
    return dense, sparse


@pytest.mark.parametrize("seed", [3, 4])
def test_mtl_on_labeling_cuts_equals_problem3_with_every_labeling(seed, monkeypatch):
    """The QCQP dual with its 1-slack cuts held as labelings (per-template Gram entries read through X): the
    optimum of problem (3) with every labeling as a constraint, and the fit on the same data with explicit rows."""
    from mmprog.programs.mtl import MTL
    from mmprog.programs.base import Program
    from mmprog.cuts import LabelingBlock
    dense, ds = one_hot_templates(seed)
    C, eps = 0.4, 1e-5
    opt, _ = solve_problem3(dense, C)
    res = mmprog.fit(ds, program="mtl", C=C, slack="one", eps=eps)
    assert res.termination == "converged"
    assert any(isinstance(B, LabelingBlock) for _, B, _ in res.model.ws._segments)
    tol = 1e-5 * max(1.0, opt)
    assert res.dual_objective <= opt + tol
    assert opt <= res.primal_objective + C * len(ds) * eps + tol
    assert res.upper_bound >= opt - tol
    # the Gram matrices the fit kept, against the products of the explicit rows recomputed here
    rec = recompute(res, ds)
    np.testing.assert_allclose(res.extra["gram"], rec["Q"][np.ix_(range(rec["Q"].shape[0]),
                                                                 res.extra["gram_positions"],
                                                                 res.extra["gram_positions"])],
                               rtol=1e-12, atol=1e-15)
    monkeypatch.setattr(MTL, "reads_labeling_cuts", Program.reads_labeling_cuts)
    explicit = mmprog.fit(ds, program="mtl", C=C, slack="one", eps=eps)
    assert not any(isinstance(B, LabelingBlock) for _, B, _ in explicit.model.ws._segments)
    assert abs(explicit.primal_objective - res.primal_objective) <= C * len(ds) * eps + tol


def test_strong_duality_and_recovery_on_the_working_set():
    ds = grouped(seed=2, n=12, groups=(0, 0, 1, 2, 2))
    res = mmprog.fit(ds, program="mtl", C=0.3, slack="one", eps=1e-4)
    r = recompute(res, ds)
    mu = res.template_weights
    # μ: duals of the quadratic constraints, Σμ = 1 at a KKT point (stationarity in θ)
    assert np.all(mu >= 0) and mu.sum() == pytest.approx(1.0)
    assert res.multiplier_sum == pytest.approx(1.0, abs=1e-6)
    # strong duality (5)/(6), both values recomputed here from the numbers
    assert r["primal"] == pytest.approx(r["dual"], rel=1e-6, abs=1e-7)
    assert res.primal_objective == pytest.approx(r["primal"], rel=1e-9)
    # (7) is the w mmprog returns
    assert np.allclose(res.w, r["w"], atol=1e-9)
    # complementary slackness: templates with μⱼ > 0 have tight quadratic constraints ½αᵀQʲα = θ
    tight = np.array([0.5 * res.alpha @ Q @ res.alpha for Q in r["Q"]])
    assert np.all(tight <= r["theta"] * (1 + 1e-7) + 1e-10)
    assert np.allclose(tight[mu > 1e-4], r["theta"], rtol=1e-4)
    # and ‖wⱼ‖ = μⱼ γ with γ = Σ‖wₗ‖ = √(2θ)
    assert np.allclose(r["norms"], mu * np.sqrt(2 * r["theta"]), atol=1e-4 * np.sqrt(2 * r["theta"]))

    # the primal SOCP (5) on the same working set, solved on its own by Ipopt (smooth QCQP form)
    from mmprog.programs import get_program
    prog = get_program("mtl", C=0.3)
    twin = prog.dual_model(res.model)
    assert twin.form == "primal"
    get_solver("ipopt").solve(twin, options={"tol": 1e-10})
    w5 = np.array([v.value for v in twin.w_list])
    obj5 = pyo.value(twin.objective)
    assert obj5 == pytest.approx(r["dual"], rel=1e-4)
    # recovery (7) against the primal solution of (5)
    assert np.allclose(r["w"], w5, atol=1e-2 * max(1.0, np.abs(w5).max()))


def test_native_pyomo_and_primal_routes_agree():
    ds = grouped(seed=3, n=8)
    a = mmprog.fit(ds, program="mtl", C=0.5, slack="one", eps=1e-4)
    b = mmprog.fit(ds, program="mtl", C=0.5, slack="one", eps=1e-4, native=False)
    c = mmprog.fit(ds, program="mtl", C=0.5, slack="one", eps=1e-4, form="primal", solver="ipopt")
    assert a.n_cuts == b.n_cuts
    assert a.primal_objective == pytest.approx(b.primal_objective, rel=1e-6)
    assert np.allclose(a.template_weights, b.template_weights, atol=1e-5)
    assert c.primal_objective == pytest.approx(a.primal_objective, rel=1e-3)
    assert np.allclose(c.template_weights, a.template_weights, atol=1e-2)


def test_one_template_is_the_structural_svm():
    """With a single template ½(‖w‖)² = ½‖w‖²: MTL is P0 in its 1-slack form (solved by HiGHS)."""
    ds = grouped(seed=4, n=10, groups=(0, 0, 0, 0))
    one = SequenceDataset(list(ds.X), list(ds.Y), K)            # one input group; transitions are a 2nd template
    fm = mmprog.features.ChainFeatureMap(4, K)
    fm.groups = np.zeros(fm.dim, dtype=np.int64)
    fm.group_names = ["all"]
    a = mmprog.fit(one, program="mtl", C=0.5, slack="one", eps=1e-6, feature_map=fm)
    b = mmprog.fit(one, program="m3n", C=0.5, slack="one", eps=1e-6, solver="highs", master="dual")
    assert a.template_weights == pytest.approx([1.0])
    assert a.primal_objective == pytest.approx(b.primal_objective, rel=1e-5)
    assert np.allclose(a.w, b.w, atol=1e-3)


def test_noise_templates_are_switched_off():
    """Two informative templates and eight of pure noise (one N(0,1) feature each): MTL keeps the informative ones
    and gives every noise template μ ≤ 1e-5 (the paper's threshold for "removed")."""
    rng = np.random.default_rng(0)
    n, T, D = 100, 5, 10
    X = [rng.normal(size=(T, D)) for _ in range(n)]
    W = np.zeros((D, K))
    W[:2] = 2 * rng.normal(size=(2, K))
    Y = [np.argmax(x @ W + 0.5 * rng.normal(size=(T, K)), axis=1) for x in X]
    names = ["inf0", "inf1"] + [f"noise{j}" for j in range(8)]
    ds = SequenceDataset(X, Y, K, groups=np.arange(D), group_names=names)
    res = mmprog.fit(ds, program="mtl", C=0.02, slack="one", eps=1e-3)
    mu = dict(zip(res.template_names, res.template_weights))
    assert res.template_names[-1] == "transition"
    assert all(mu[f"noise{j}"] <= 1e-5 for j in range(8)), mu
    assert mu["inf0"] > 1e-2 and mu["inf1"] > 1e-2
    assert res.templates_removed >= 8
    # what mmprog train prints and bench parse records: the count of the weights below the paper's threshold
    summary = res.summary()
    assert summary["n_templates"] == len(names) + 1
    assert summary["templates_removed"] == sum(v <= 1e-5 for v in mu.values())
    # the switched-off templates carry no weight at all in w
    blocks = res.weights()["state"]
    assert np.abs(blocks[2:]).max() <= 1e-5 * np.abs(blocks[:2]).max()


CONIC = ("mosek", "gurobi", "scip")


def test_primal_socp_with_a_conic_solver():
    """The SOCP (5) solved by each conic-capable solver present against the QCQP (6) solved by Ipopt: a whole run
    in the primal form where the solver returns the cut duals α (MOSEK, Gurobi), else (SCIP) the primal (5) on the
    dual run's final working set, its optimum and w against (6)'s value and w of (7)."""
    usable = [n for n in CONIC if get_solver(n).availability("SOCP")]
    if not usable:
        pytest.skip("no conic solver: " + "; ".join(f"{n}: {get_solver(n).availability().reason}" for n in CONIC))
    from mmprog.programs import get_program
    ds = grouped(seed=3, n=6, groups=(0, 1))
    a = mmprog.fit(ds, program="mtl", C=0.5, slack="one", eps=1e-5)
    for name in usable:
        if get_solver(name).gives_duals:
            c = mmprog.fit(ds, program="mtl", C=0.5, slack="one", eps=1e-5, form="primal", solver=name)
            assert c.primal_objective == pytest.approx(a.primal_objective, rel=1e-5), name
        else:
            twin = get_program("mtl", **a.params).dual_model(a.model)
            assert twin.form == "primal"
            get_solver(name).solve(twin)
            value = pyo.value(next(twin.component_data_objects(pyo.Objective, active=True)))
            assert value == pytest.approx(a.dual_objective, rel=1e-6), name
            w5 = np.array([x.value or 0.0 for x in twin.w_list])
            assert np.allclose(w5, a.w, atol=1e-4 * np.abs(a.w).max()), name


def test_bad_parameters_are_one_line_errors():
    from mmprog.exceptions import ParameterError
    from mmprog.programs import get_program
    with pytest.raises(ParameterError, match="form must be"):
        get_program("mtl", form="socp")
    with pytest.raises(ParameterError, match="C must be"):
        get_program("mtl", C=-1)
