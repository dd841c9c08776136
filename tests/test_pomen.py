"""PoMEN (NIPS 2008) against ground truth computed here by enumeration.

Every reference quantity — joint features f(x, y, z), expectations over z, the β-dual (12) written over all
labelings, p(z), the P2 objective (7), the fully enumerated M³N QPs — is computed in this file by explicit loops over
nodes and by enumerating every observed labeling y and hidden labeling z, independently of mmprog's feature maps,
kernels and programs; QPs go to highspy directly (tests/_enumerated.py) and the explicit β-dual to Ipopt through its
own Pyomo model (log Σ exp written as an expression, no grey box).
"""
import itertools

import numpy as np
import pyomo.environ as pyo
import pytest

import mmprog
from mmprog.datasets.base import HierarchicalDataset, SequenceDataset
from mmprog.features.chain import ChainFeatureMap
from mmprog.features.hierarchy import HierarchyFeatureMap
from mmprog.programs import pomen as P
from mmprog.solvers import get_solver

from _enumerated import solve_enumerated


def _ipopt_or_skip():
    s = get_solver("ipopt")
    rep = s.availability()
    if not rep:
        pytest.skip(f"ipopt: {rep.reason}")
    return s


# ---------------------------------------------------------------------------------------------- tiny instances
def chain_ds(seed, n=1, T=5, K=3, d=3, hidden=(1, 2)):
    rng = np.random.default_rng(seed)
    X = [rng.normal(size=(T, d)) for _ in range(n)]
    Y = []
    for _ in range(n):
        y = rng.integers(0, K, size=T)
        y[list(hidden)] = -1
        Y.append(y)
    return SequenceDataset(X, Y, K)


# root 0 (hidden) → inner 1, 2 (hidden) → leaves 3, 4 under 1 and 5 under 2 (observed)
TREE_PARENTS = np.array([-1, 0, 0, 1, 1, 2])


def tree_ds(seed, n=1, K=2, d=3, hide=True):
    rng = np.random.default_rng(seed)
    X = [rng.normal(size=(6, d)) for _ in range(n)]
    Y = []
    for _ in range(n):
        y = rng.integers(0, K, size=6)
        if hide:
            y[:3] = -1
        Y.append(y)
    return HierarchicalDataset(X, [TREE_PARENTS] * n, Y, K)


def parents_of(ds, i):
    if isinstance(ds, HierarchicalDataset):
        return ds.parents[i]
    return np.arange(len(ds.Y[i])) - 1


def joint_f(x, parent, lab, K):
    """f(x, y) by loops: Σ_c x_c ⊗ e(y_c), Σ_edges e(y_parent) ⊗ e(y_c)."""
    d = x.shape[1]
    f = np.zeros(d * K + K * K)
    for c in range(len(lab)):
        for j in range(d):
            f[j * K + lab[c]] += x[c, j]
        if parent[c] >= 0:
            f[d * K + lab[parent[c]] * K + lab[c]] += 1
    return f


def enumerate_example(ds, i, K):
    """All observed labelings y (rows), all hidden labelings z, Δf(y, z) (ny, nz, dim) and Δℓ(y)."""
    x, y_gold = ds.X[i], ds.Y[i]
    par = parents_of(ds, i)
    obs = np.flatnonzero(y_gold >= 0)
    hid = np.flatnonzero(y_gold < 0)
    Ys = [np.array(t) for t in itertools.product(range(K), repeat=len(obs))]
    Zs = [np.array(t) for t in itertools.product(range(K), repeat=len(hid))]

    def full(yv, zv):
        lab = np.empty(len(y_gold), dtype=int)
        lab[obs], lab[hid] = yv, zv
        return lab

    dF = np.array([[joint_f(x, par, full(y_gold[obs], z), K) - joint_f(x, par, full(yv, z), K) for z in Zs]
                   for yv in Ys])
    dl = np.array([float(np.sum(yv != y_gold[obs])) for yv in Ys])
    return Ys, Zs, dF, dl, obs, hid


def prior_table(kind, Zs, hid, parent, K, rng):
    """p₀(z) over the enumerated hidden labelings, and the dict mmprog takes."""
    if kind == "uniform":
        return np.full(len(Zs), 1.0 / len(Zs)), "uniform"
    hset = set(hid.tolist())
    if kind == "markov":
        pi = rng.dirichlet(np.ones(K))
        A = rng.dirichlet(np.ones(K), size=K)
        p = []
        for z in Zs:
            lab = dict(zip(hid.tolist(), z))
            v = 1.0
            for b in hid:
                v *= A[lab[parent[b]], lab[b]] if parent[b] in hset else pi[lab[b]]
            p.append(v)
        return np.array(p), {"kind": "markov", "initial": pi, "transition": A}
    lam, Lam = rng.normal(size=K), rng.normal(size=(K, K))
    p = []
    for z in Zs:
        lab = dict(zip(hid.tolist(), z))
        s = sum(lam[lab[b]] for b in hid) + sum(Lam[lab[parent[b]], lab[b]] for b in hid if parent[b] in hset)
        p.append(np.exp(s))
    p = np.array(p)
    return p / p.sum(), {"kind": "loglinear", "node": lam, "edge": Lam}


def explicit_beta_dual(g, p0, C):
    """max_{β ≥ 0, Σβ = C} −log Σ_z p₀(z) exp Σ_y β(y) g[y, z], over every labeling y, by Ipopt."""
    ny, nz = g.shape
    m = pyo.ConcreteModel()
    m.beta = pyo.Var(range(ny), domain=pyo.NonNegativeReals, initialize=C / ny)
    m.total = pyo.Constraint(expr=sum(m.beta[y] for y in range(ny)) == C)
    m.obj = pyo.Objective(expr=-pyo.log(sum(float(p0[z]) * pyo.exp(sum(float(g[y, z]) * m.beta[y] for y in range(ny)))
                                            for z in range(nz))), sense=pyo.maximize)
    opt = pyo.SolverFactory("cyipopt")
    # no bound relaxation: the optimum sits on a face of the simplex and relaxed bounds would let Σβ drift off C
    opt.config.options["tol"] = 1e-11
    opt.config.options["bound_relax_factor"] = 0.0
    res = opt.solve(m)
    assert int(res.solver.return_code) == 0
    beta = np.array([m.beta[y].value for y in range(ny)])
    return float(pyo.value(m.obj)), beta


def setup(ds, seed):
    fm = ChainFeatureMap.from_dataset(ds) if isinstance(ds, SequenceDataset) else HierarchyFeatureMap.from_dataset(ds)
    prep = fm.prepare(ds)
    st = P.HiddenStructure(fm, prep)
    w = np.random.default_rng(seed).normal(scale=0.7, size=fm.dim)
    return fm, prep, st, w


# ---------------------------------------------------------------------------------------------- Step 2: the β-dual
CASES = [("chain", "uniform"), ("chain", "markov"), ("chain", "loglinear"), ("tree", "uniform"), ("tree", "markov"),
         ("tree", "loglinear")]


@pytest.mark.parametrize("shape,prior", CASES)
def test_marginal_beta_dual_equals_beta_dual_over_all_labelings(shape, prior):
    solver = _ipopt_or_skip()
    seed = 3 + len(prior)
    ds = chain_ds(seed) if shape == "chain" else tree_ds(seed)
    K, C = ds.n_labels, 1.3
    fm, prep, st, w = setup(ds, seed)
    Ys, Zs, dF, dl, obs, hid = enumerate_example(ds, 0, K)
    p0, spec = prior_table(prior, Zs, hid, parents_of(ds, 0), K, np.random.default_rng(seed))
    g = dF @ w - dl[:, None]                                   # μ_wᵀΔf(y, z) − Δℓ(y), (ny, nz)
    ref, beta = explicit_beta_dual(g, p0, C)
    pz = p0 * np.exp(beta @ g - (beta @ g).max())
    pz /= pz.sum()

    pr = P.make_prior(spec, K, st)
    theta, tr = P._node_scores(fm, w, prep, np.arange(1))
    phi_h, hid_nodes, val, m, status = P.solve_beta_dual(st, pr, theta, tr, C, [0], solver,
                                                               {"tol": 1e-11, "bound_relax_factor": 0.0})
    assert status.ok
    assert val == pytest.approx(ref, rel=1e-7, abs=1e-7)
    # the new p(z): node marginals from the tilts φ against the enumerated p(z) ∝ p₀(z) exp Σ_y β*(y) g(y, z)
    phi = np.zeros((st.N, K))
    phi[hid_nodes] = phi_h
    q, kl = P.hidden_distribution(st, pr, phi)
    for j, b in enumerate(hid):
        ref_marg = np.array([pz[[z[j] == k for z in Zs]].sum() for k in range(K)])
        assert np.allclose(q[b], ref_marg, atol=1e-6)
    # strong duality of (11)–(12): the dual optimum is KL(p*‖p₀) + C·H(p*) computed by enumeration
    kl_ref = float(np.sum(pz * np.log(pz / p0)))
    hinge_ref = float(np.max(-(g @ pz)))
    assert kl == pytest.approx(kl_ref, abs=1e-6)
    assert ref == pytest.approx(kl_ref + C * hinge_ref, abs=1e-6)


@pytest.mark.parametrize("shape,prior", [("chain", "uniform"), ("chain", "markov"), ("tree", "loglinear")])
def test_marginal_objective_equals_explicit_objective_at_any_beta(shape, prior):
    """At a random β over all labelings, the NLP in marginal variables evaluates to −log Z(β) of (12)."""
    seed = 11
    ds = chain_ds(seed) if shape == "chain" else tree_ds(seed)
    K, C = ds.n_labels, 0.8
    fm, prep, st, w = setup(ds, seed)
    Ys, Zs, dF, dl, obs, hid = enumerate_example(ds, 0, K)
    rng = np.random.default_rng(seed)
    p0, spec = prior_table(prior, Zs, hid, parents_of(ds, 0), K, rng)
    g = dF @ w - dl[:, None]
    pr = P.make_prior(spec, K, st)
    theta, tr = P._node_scores(fm, w, prep, np.arange(1))
    m = P.beta_dual_model(st, pr, theta, tr, C, [0])
    par = parents_of(ds, 0)
    for _ in range(3):
        beta = C * rng.dirichlet(np.ones(len(Ys)))
        explicit = -np.log(np.sum(p0 * np.exp(beta @ g)))
        for a_i, a in enumerate(obs):
            for k in range(K):
                m.mu[int(a), k].value = float(sum(b for b, yv in zip(beta, Ys) if yv[a_i] == k))
        for c in m.obs_edges:
            pi, ci = list(obs).index(par[c]), list(obs).index(c)
            for k in range(K):
                for l in range(K):
                    m.mu_edge[c, k, l].value = float(sum(b for b, yv in zip(beta, Ys) if yv[pi] == k and yv[ci] == l))
        ex = m.log_partition.get_external_model()
        ex.set_input_values([v.value for v in m.log_partition.inputs.values()])
        assert pyo.value(m.linear_part) - ex.evaluate_outputs()[0] == pytest.approx(explicit, abs=1e-9)
        # every constraint of the marginal polytope holds at the marginals of a true β
        for con in list(m.normalised.values()) + list(m.consistent_parent.values()) + list(m.consistent_child.values()):
            assert abs(pyo.value(con.body) - pyo.value(con.upper)) < 1e-9


@pytest.mark.parametrize("shape,prior", [("chain", "uniform"), ("chain", "markov"), ("tree", "uniform"),
                                         ("tree", "loglinear")])
def test_log_partition_gradient_and_hessian_match_finite_differences(shape, prior):
    seed = 5
    ds = chain_ds(seed, T=6, hidden=(1, 3, 4)) if shape == "chain" else tree_ds(seed, K=3)
    K = ds.n_labels
    fm, prep, st, w = setup(ds, seed)
    rng = np.random.default_rng(seed)
    spec = prior if prior == "uniform" else (
        {"kind": "markov", "initial": rng.dirichlet(np.ones(K)), "transition": rng.dirichlet(np.ones(K), size=K)}
        if prior == "markov" else {"kind": "loglinear", "node": rng.normal(size=K), "edge": rng.normal(size=(K, K))})
    pr = P.make_prior(spec, K, st)
    theta, tr = P._node_scores(fm, w, prep, np.arange(1))
    m = P.beta_dual_model(st, pr, theta, tr, 1.0, [0])
    ex = m.log_partition.get_external_model()
    u = rng.uniform(0.0, 1.0, size=len(ex.input_names()))

    def f(v):
        ex.set_input_values(v)
        return ex.evaluate_outputs()[0]

    ex.set_input_values(u)
    grad = ex.evaluate_jacobian_outputs().toarray()[0]
    h = 1e-6
    fd = np.array([(f(u + h * e) - f(u - h * e)) / (2 * h) for e in np.eye(len(u))])
    assert np.allclose(grad, fd, atol=1e-7, rtol=1e-6)
    if pr.coupled:
        assert not hasattr(ex, "evaluate_hessian_outputs")   # L-BFGS then: no Hessian is claimed
        return
    ex.set_input_values(u)
    ex.set_output_constraint_multipliers(np.array([1.0]))
    H = ex.evaluate_hessian_outputs().toarray()
    assert np.allclose(H, np.tril(H))
    H = H + np.tril(H, -1).T

    def grad_at(v):
        ex.set_input_values(v)
        return ex.evaluate_jacobian_outputs().toarray()[0]

    fdH = np.array([(grad_at(u + h * e) - grad_at(u - h * e)) / (2 * h) for e in np.eye(len(u))])
    assert np.allclose(H, fdH, atol=1e-6)


def test_hessian_structure_does_not_change_with_the_values():
    """PyNumero maps the grey-box Hessian entries at the first evaluation: the structure must be the same at any
    point, including where every entry is exactly 0 (τ = 0 makes φ independent of the inputs), and the solve must
    go through there (it failed with an empty structure on a hierarchy batch)."""
    _ipopt_or_skip()
    seed = 5
    ds = tree_ds(seed, K=3)
    fm, prep, st, w = setup(ds, seed)
    pr = P.make_prior("uniform", ds.n_labels, st)
    theta, tr = P._node_scores(fm, w, prep, np.arange(1))
    rng = np.random.default_rng(seed)
    patterns = []
    for trans in (tr, np.zeros_like(tr)):
        ex = P.beta_dual_model(st, pr, theta, trans, 1.0, [0]).log_partition.get_external_model()
        for u in (np.zeros(len(ex.input_names())), rng.uniform(0.0, 1.0, size=len(ex.input_names()))):
            ex.set_input_values(u)
            ex.set_output_constraint_multipliers(np.array([1.0]))
            H = ex.evaluate_hessian_outputs()
            patterns.append((tuple(H.row), tuple(H.col)))
            assert np.allclose(H.toarray(), np.tril(ex.hessian().toarray()), atol=1e-12)
    assert len(patterns[0][0]) > 0 and len(set(patterns)) == 1
    assert np.all(H.data == 0.0)                      # last one: τ = 0
    phi, hid, val, _, status = P.solve_beta_dual(st, pr, theta, np.zeros_like(tr), 1.0, np.array([0]),
                                                 get_solver("ipopt"))
    assert status.ok, status.solver_message


def test_gradient_is_the_papers_expected_margin():
    """∂log Z/∂β(y) = μ_wᵀE_{p(z)}[Δf(y, z)] − Δℓ(y): the marginal gradient composed with the marginal map."""
    seed = 8
    ds = chain_ds(seed)
    K, C = ds.n_labels, 1.0
    fm, prep, st, w = setup(ds, seed)
    Ys, Zs, dF, dl, obs, hid = enumerate_example(ds, 0, K)
    g = dF @ w - dl[:, None]
    pr = P.make_prior("uniform", K, st)
    theta, tr = P._node_scores(fm, w, prep, np.arange(1))
    m = P.beta_dual_model(st, pr, theta, tr, C, [0])
    ex = m.log_partition.get_external_model()
    beta = C * np.random.default_rng(seed).dirichlet(np.ones(len(Ys)))
    pz = np.exp(beta @ g - (beta @ g).max())
    pz /= pz.sum()
    paper = g @ pz                                            # (ny,)
    # marginal form: log Z(β) = −lin(mu) + log_Z(mu) with lin(mu) the objective's linear part; chain rule over
    # mu_a(k) = Σ_y β(y) 1[y_a = k] (and the edge marginals, which enter linearly)
    names = [n for n in ex.input_names()]
    u = []
    for nm in names:
        a, k = map(int, nm[3:-1].split(","))
        u.append(sum(b for b, yv in zip(beta, Ys) if yv[list(obs).index(a)] == k))
    ex.set_input_values(u)
    grad_u = ex.evaluate_jacobian_outputs().toarray()[0]
    coef = {}
    for v, c in zip(m.linear_part.expr.linear_vars, m.linear_part.expr.linear_coefs):
        coef[v.name] = c
    par = parents_of(ds, 0)
    for y_i, yv in enumerate(Ys):
        d = 0.0
        for a_i, a in enumerate(obs):
            d -= coef[m.mu[int(a), int(yv[a_i])].name]
            nm = f"mu[{int(a)},{int(yv[a_i])}]"
            if nm in names:
                d += grad_u[names.index(nm)]
        for c in m.obs_edges:
            pi, ci = list(obs).index(par[c]), list(obs).index(c)
            d -= coef[m.mu_edge[c, int(yv[pi]), int(yv[ci])].name]
        # C = Σ_y β(y) stands in two places of the marginal form — the constant −C·s_obs(yᵢ) of the linear part
        # and φ₀ = C Σ τ(yᵢ_a, ·) of the tilt — so each contributes its coefficient of C
        d += -m.linear_part.expr.constant / C
        qh, _ = ex.sum_product(ex.phi())
        d += float(np.sum(qh * ex.phi0)) / C
        assert d == pytest.approx(paper[y_i], abs=1e-9)


# ---------------------------------------------------------------------------------------------- Step 1: E[Δf]
@pytest.mark.parametrize("shape", ["chain", "tree"])
def test_expected_rows_and_separation_match_enumeration(shape):
    seed = 21
    ds = chain_ds(seed, n=3) if shape == "chain" else tree_ds(seed, n=3, K=3)
    K = ds.n_labels
    fm, prep, st, w = setup(ds, seed)
    rng = np.random.default_rng(seed)
    q = rng.dirichlet(np.ones(K), size=st.N)
    emap = P.ExpectedFeatureMap(fm, st, q)
    lab_pad = prep.gold.shape[1]
    for i in range(len(ds)):
        Ys, Zs, dF, dl, obs, hid = enumerate_example(ds, i, K)
        nodes = st.offsets[i] + hid
        pz = np.array([np.prod([q[b, zz] for b, zz in zip(nodes, z)]) for z in Zs])
        EdF = np.einsum("yzd,z->yd", dF, pz)
        labs = np.full((len(Ys), lab_pad), -1)
        labs[:, obs] = np.array(Ys)
        rows, losses = emap.delta(prep, np.full(len(Ys), i), labs)
        assert np.allclose(rows.toarray(), EdF, atol=1e-12)
        assert np.allclose(losses, dl)
        best = np.max(dl - EdF @ w)
        yhat = emap.decode(w, prep, np.array([i]), loss_augmented=True)
        assert np.all(yhat[0, hid] == -1)
        r, l = emap.delta(prep, np.array([i]), yhat)
        assert (l - r @ w)[0] == pytest.approx(best, abs=1e-10)


def full_step1(ds, q_list, C):
    """The M³N problem (10) with every observed labeling of every example, expectations under product marginals."""
    K = ds.n_labels
    rows, losses, ex = [], [], []
    for i in range(len(ds)):
        Ys, Zs, dF, dl, obs, hid = enumerate_example(ds, i, K)
        q = q_list[i]
        pz = np.array([np.prod([q[b, zz] for b, zz in zip(hid, z)]) for z in Zs])
        rows.append(np.einsum("yzd,z->yd", dF, pz))
        losses.append(dl)
        ex.append(np.full(len(Ys), i))
    return solve_enumerated(np.vstack(rows), np.concatenate(losses), np.concatenate(ex), len(ds), C)


@pytest.mark.parametrize("shape", ["chain", "tree"])
def test_final_m_step_is_the_full_program_at_the_learned_p_of_z(shape):
    _ipopt_or_skip()
    ds = chain_ds(2, n=6, T=4, K=2, hidden=(1,)) if shape == "chain" else tree_ds(2, n=6, K=2)
    C, eps = 0.9, 1e-6
    res = mmprog.fit(ds, program="pomen", C=C, n_em=1, eps=eps, init="random", seed=1)
    opt, w_full = full_step1(ds, res.hidden_marginals, C)
    assert res.primal_objective <= opt + 1e-6
    assert opt <= res.primal_objective + C * len(ds) * eps + 1e-6
    assert np.allclose(res.w, w_full, atol=1e-3)


def test_nothing_hidden_gives_the_m3n_solution():
    rng = np.random.default_rng(4)
    X = [rng.normal(size=(4, 3)) for _ in range(10)]
    Wt = rng.normal(size=(3, 2))
    Y = [np.argmax(x @ Wt + 0.5 * rng.normal(size=(4, 2)), axis=1) for x in X]
    ds = SequenceDataset(X, Y, 2)
    a = mmprog.fit(ds, program="m3n", C=0.7, eps=1e-7)
    b = mmprog.fit(ds, program="pomen", C=0.7, n_em=3, eps=1e-7)
    assert b.primal_objective == pytest.approx(a.primal_objective, rel=1e-7, abs=1e-9)
    assert np.allclose(a.w, b.w, atol=1e-5)
    assert len(b.em_history) == 1 and b.em_history[0]["kl"] == 0.0
    # and the M³N optimum itself: every labeling enumerated, solved by highspy
    opt, w_full = full_step1(ds, [np.zeros((4, 2))] * len(ds), 0.7)
    assert b.primal_objective == pytest.approx(opt, abs=0.7 * len(ds) * 1e-7 + 1e-6)


def test_one_slack_and_n_slack_reach_the_same_m_step():
    ds = SequenceDataset(*_noisy_chain(3, n=8), 3).hide_labels(0.3, seed=1)
    C = 0.5
    a = mmprog.fit(ds, program="pomen", C=C, n_em=0, eps=1e-7, slack="n")
    b = mmprog.fit(ds, program="pomen", C=C, n_em=0, eps=1e-7, slack="one")
    assert a.em_objective[0] == pytest.approx(b.em_objective[0], abs=C * len(ds) * 1e-7 + 1e-6)
    assert np.allclose(a.w, b.w, atol=1e-3)


# ---------------------------------------------------------------------------------------------- EM
@pytest.mark.parametrize("shape,init", [("chain", "prior"), ("tree", "posterior"), ("tree", "random")])
def test_em_rounds_do_not_increase_the_p2_objective(shape, init):
    _ipopt_or_skip()
    if shape == "chain":
        ds = SequenceDataset(*_noisy_chain(7, n=12), 3).hide_labels(0.4, seed=2)
    else:
        from mmprog.datasets.synthetic import synthetic_hierarchy
        ds = synthetic_hierarchy(n_instances=12, n_features=5, n_relevant=3, n_labels=3, seed=1)
    C, eps = 1.0, 1e-6
    res = mmprog.fit(ds, program="pomen", C=C, n_em=3, eps=eps, init=init, seed=0)
    hist = [e for e in res.em_history if e["round"] >= 0]
    tol_w = C * len(ds) * eps + 1e-7         # Step 1 stops at ε-violation
    for prev, cur in zip(hist, hist[1:]):
        tol = tol_w if cur["step"] == "w" else 1e-6 * max(1.0, abs(prev["objective"]))
        assert cur["objective"] <= prev["objective"] + tol, (prev, cur)
        if cur["step"] == "z":
            # strong duality of (11)–(12), summed over the examples
            assert cur["dual_objective"] == pytest.approx(cur["objective"], rel=1e-6)
    assert res.em_objective == [e["objective"] for e in hist]
    if init != "prior":
        assert hist[-1]["objective"] < hist[0]["objective"] - 1e-3


def test_failed_batch_of_beta_duals_is_solved_one_example_at_a_time(monkeypatch):
    """(12) is a sum of per-example problems: when Ipopt fails on a batch, the examples are solved one by one and
    the fit equals the one-example-per-NLP fit; a failing single example still raises with the solver's words."""
    _ipopt_or_skip()
    from mmprog.exceptions import SolverError
    from mmprog.datasets.synthetic import synthetic_hierarchy
    ds = synthetic_hierarchy(n_instances=8, n_features=5, n_relevant=3, n_labels=3, seed=4)
    kw = dict(C=1.0, n_em=1, eps=1e-6, init="posterior")
    ref = mmprog.fit(ds, program="pomen", batch=1, **kw)
    real = P.solve_beta_dual

    def fails_on_batches(structure, prior, theta, transition, C, examples, solver, options=None):
        if len(examples) > 1:
            raise SolverError("the beta-dual (12) of examples ... ended with numerical (Ipopt "
                              "Error_In_Step_Computation: test)", termination="numerical")
        return real(structure, prior, theta, transition, C, examples, solver, options)

    monkeypatch.setattr(P, "solve_beta_dual", fails_on_batches)
    got = mmprog.fit(ds, program="pomen", batch=4, **kw)
    assert [e.get("nlp_batches_split") for e in got.em_history if e["step"] == "z"] == [2]
    assert np.allclose(got.w, ref.w, atol=1e-6)
    for a, b in zip(got.hidden_marginals, ref.hidden_marginals):
        assert np.allclose(a, b, atol=1e-6)

    def always_fails(*args, **kwargs):
        raise SolverError("the beta-dual (12) of examples [0]... ended with numerical (Ipopt "
                          "Error_In_Step_Computation: test)", termination="numerical")

    monkeypatch.setattr(P, "solve_beta_dual", always_fails)
    with pytest.raises(SolverError, match="Error_In_Step_Computation"):
        mmprog.fit(ds, program="pomen", batch=4, **kw)


def _noisy_chain(seed, n, T=5, K=3, d=4):
    rng = np.random.default_rng(seed)
    X = [rng.normal(size=(T, d)) for _ in range(n)]
    Wt = rng.normal(size=(d, K))
    return X, [np.argmax(x @ Wt + 0.5 * rng.normal(size=(T, K)), axis=1) for x in X]


def test_p2_objective_matches_enumeration():
    _ipopt_or_skip()
    ds = tree_ds(6, n=4, K=2)
    C = 0.6
    res = mmprog.fit(ds, program="pomen", C=C, n_em=2, eps=1e-7, init="random", seed=3)
    w = res.w
    J = 0.5 * w @ w
    for i in range(len(ds)):
        Ys, Zs, dF, dl, obs, hid = enumerate_example(ds, i, 2)
        q = res.hidden_marginals[i]
        # one-hot rows on the observed nodes, distributions on the hidden ones
        assert np.allclose(q.sum(axis=1), 1.0)
        assert np.allclose(q[obs], np.eye(2)[ds.Y[i][obs]])
        pz = np.array([np.prod([q[b, zz] for b, zz in zip(hid, z)]) for z in Zs])   # uniform p₀ → p(z) factorises
        J += float(np.sum(pz * np.log(pz * len(Zs))))
        J += C * max(0.0, float(np.max(dl - np.einsum("yzd,z->yd", dF, pz) @ w)))
    assert res.em_objective[-1] == pytest.approx(J, rel=1e-6)


def test_uniform_prior_start_is_a_fixed_point_on_hierarchies():
    """The finding behind ``init``: from p(z) = p₀ uniform the hidden labels stay exchangeable."""
    _ipopt_or_skip()
    from mmprog.datasets.synthetic import synthetic_hierarchy
    ds = synthetic_hierarchy(n_instances=10, n_features=5, n_relevant=3, n_labels=3, seed=2)
    res = mmprog.fit(ds, program="pomen", C=1.0, n_em=2, eps=1e-7)
    for q, y in zip(res.hidden_marginals, ds.Y):
        assert np.allclose(q[y < 0], 1.0 / 3, atol=1e-5)
    tau = res.weights()["transition"]
    assert np.allclose(tau, tau.mean(axis=0, keepdims=True), atol=1e-4)


# ---------------------------------------------------------------------------------------------- hierarchy map
def test_hierarchy_features_and_decoding_match_enumeration():
    ds = tree_ds(9, n=2, K=2, hide=False)
    fm = HierarchyFeatureMap.from_dataset(ds)
    prep = fm.prepare(ds)
    w = np.random.default_rng(9).normal(size=fm.dim)
    labs = [np.array(t) for t in itertools.product(range(2), repeat=6)]
    for i in range(2):
        F = fm.joint_features(prep, np.full(len(labs), i), np.array(labs)).toarray()
        ref = np.array([joint_f(ds.X[i], TREE_PARENTS, l, 2) for l in labs])
        assert np.allclose(F, ref)
        s = ref @ w
        joint = fm.decode(w, prep, np.array([i]))[0]
        assert joint_f(ds.X[i], TREE_PARENTS, joint, 2) @ w == pytest.approx(s.max())
        aug = fm.decode(w, prep, np.array([i]), loss_augmented=True)[0]
        loss = np.array([np.sum(l != ds.Y[i]) for l in labs])
        assert joint_f(ds.X[i], TREE_PARENTS, aug, 2) @ w + np.sum(aug != ds.Y[i]) == pytest.approx((s + loss).max())
        # h₂: inner nodes 0–2 summed out under p₀ (uniform) or the posterior p(z | x) ∝ Σ_y exp s(y, z)
        for rule in ("h2-prior", "h2-posterior"):
            pred = fm.with_prediction(rule).decode(w, prep, np.array([i]))[0]
            assert np.all(pred[:3] == -1)
            S = s.reshape(8, 8)                                # [z (nodes 0–2), y (leaves 3–5)]
            if rule == "h2-prior":
                pz = np.full(8, 1 / 8)
            else:
                pz = np.exp(S - S.max()).sum(axis=1)
                pz /= pz.sum()
            # E_{p(z)}[s(y, z)] is linear in p(z), so the node marginals the map uses give the same argmax values
            val = pz @ S
            y_idx = int(np.dot(pred[3:], [4, 2, 1]))
            assert val[y_idx] == pytest.approx(val.max())


def test_m3n_on_hierarchies_matches_the_full_program():
    ds = tree_ds(12, n=8, K=2, hide=False)
    C, eps = 0.5, 1e-6
    res = mmprog.fit(ds, program="m3n", C=C, eps=eps)
    opt, w_full = full_step1(ds, [np.zeros((6, 2))] * len(ds), C)
    assert res.primal_objective <= opt + 1e-6
    assert opt <= res.primal_objective + C * len(ds) * eps + 1e-6
    assert np.allclose(res.w, w_full, atol=1e-3)


def test_fit_result_predicts_and_round_trips(tmp_path):
    _ipopt_or_skip()
    from mmprog.datasets.synthetic import synthetic_hierarchy
    ds = synthetic_hierarchy(n_instances=8, n_features=5, n_relevant=3, n_labels=3, seed=4)
    res = mmprog.fit(ds, program="pomen", C=1.0, n_em=1, init="posterior", predict="h2-posterior")
    pred = res.predict(ds)
    assert len(pred) == len(ds) and all(len(p) == len(y) for p, y in zip(pred, ds.Y))
    assert all(np.all(p[y < 0] == -1) and np.all(p[y >= 0] >= 0) for p, y in zip(pred, ds.Y))
    assert len(res.hidden_marginals) == len(ds)
    res.save(tmp_path / "pomen")
    back = mmprog.load(tmp_path / "pomen")
    assert all(np.array_equal(a, b) for a, b in zip(back.predict(ds), pred))


def test_bad_parameters_fail_with_one_line():
    with pytest.raises(ValueError, match="n_em"):
        mmprog.fit(chain_ds(0), program="pomen", n_em=-1)
    with pytest.raises(ValueError, match="prior"):
        mmprog.fit(chain_ds(0), program="pomen", prior="gaussian")
    with pytest.raises(ValueError, match="markov"):
        mmprog.fit(tree_ds(0), program="pomen", prior="markov")
