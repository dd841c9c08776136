"""The L∞ max-margin program of Szedmak, Ni, Saunders & Rousu against independent ground truth: dense Kronecker
products built with numpy, the full LP solved by scipy's linprog, closed forms, brute-force loops, scikit-learn's
pairwise kernels."""
from __future__ import annotations

import os
from collections import Counter

import numpy as np
import pyomo.environ as pyo
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from mmprog.exceptions import DataError, ParameterError
from mmprog.kernels import RBF, Linear, NGram, Polynomial
from mmprog.linf import LInfMaxMargin, bounded_simplex, select_sets, set_perceptron, set_prf, solve_linf
from mmprog.programs.linf import (KernelSamples, LInf, TensorSamples, distance_dual_model, distance_model,
                                  duality_report, min_support_model)
from mmprog.solvers import duals, get_solver


def random_sets(seed, m=30, n_in=12, n_out=5, p_in=0.25, p_out=0.35, normalise=False):
    """Non-negative sparse Φ, Ψ with unequal row norms and no empty row."""
    rng = np.random.default_rng(seed)
    F = rng.uniform(0.1, 2.0, (m, n_in)) * (rng.random((m, n_in)) < p_in)
    P = rng.uniform(0.5, 1.5, (m, n_out)) * (rng.random((m, n_out)) < p_out)
    F[np.arange(m), rng.integers(0, n_in, m)] += 1.0
    P[np.arange(m), rng.integers(0, n_out, m)] += 1.0
    if normalise:
        F /= F.sum(1, keepdims=True)
        P /= P.sum(1, keepdims=True)
    return sp.csr_matrix(F), sp.csr_matrix(P)


def dense_Z(Phi, Psi):
    """zᵢ = ψ(yᵢ) ⊗ φ(xᵢ) as dense rows (index o · n_inputs + k: numpy's kron order)."""
    F, P = Phi.toarray(), Psi.toarray()
    return np.stack([np.kron(P[i], F[i]) for i in range(F.shape[0])])


def linprog_linf(Z, b):
    """The full LP (10) over every joint index: variables (w, t), min t, −Zw ≤ −b, ±w − t ≤ 0 (scipy's HiGHS)."""
    m, n = Z.shape
    c = np.r_[np.zeros(n), 1.0]
    I = np.eye(n)
    A = np.vstack([np.c_[-Z, np.zeros(m)], np.c_[I, -np.ones(n)], np.c_[-I, -np.ones(n)]])
    rhs = np.r_[-b * np.ones(m), np.zeros(2 * n)]
    res = linprog(c, A_ub=A, b_ub=rhs, bounds=[(None, None)] * (n + 1), method="highs")
    assert res.status == 0
    return res.fun


# ---------------------------------------------------------------------------------------------- Proposition 2
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("aggregate", [True, False])
def test_proposition2_closed_form_and_full_lp(seed, aggregate):
    Phi, Psi = random_sets(seed)
    b = [1.0, 0.3, 2.5][seed]
    Z = dense_Z(Phi, Psi)
    closed = b / Z.sum(axis=1).min()                       # b / minᵢ ‖zᵢ‖₁
    run = solve_linf(TensorSamples(Phi, Psi), b, n_start=3, batch=4, aggregate=aggregate)
    assert run.termination == "converged"
    assert run.objective == pytest.approx(closed, rel=1e-9)
    assert linprog_linf(Z, b) == pytest.approx(closed, rel=1e-9)
    # the returned w (zero off J) is feasible for all m rows and bounded by t
    w = np.zeros(Z.shape[1])
    w[run.J] = run.w
    assert (Z @ w).min() >= b * (1 - 1e-7)
    assert np.abs(w).max() <= run.objective * (1 + 1e-9)
    # constraint generation kept some samples out (only the needed rows enter)
    assert len(run.working_set) <= Z.shape[0]


def test_aggregated_master_is_smaller_with_same_optimum():
    Phi, Psi = random_sets(5, m=40, n_in=30, n_out=8, p_in=0.1)
    runs = [solve_linf(TensorSamples(Phi, Psi), 1.0, n_start=40, aggregate=a) for a in (True, False)]
    assert runs[0].objective == pytest.approx(runs[1].objective, rel=1e-10)
    assert runs[0].n_private > 0 and runs[0].n_vars < runs[1].n_vars


def test_joint_dimension_beyond_int32():
    """n_outputs · n_inputs = 2.5e9 > 2³¹: joint indices stay int64, nothing dense is formed."""
    rng = np.random.default_rng(3)
    m, n_in, n_out = 40, 50_000, 50_000
    F = sp.csr_matrix((rng.uniform(0.2, 1, m * 3), (np.repeat(np.arange(m), 3), rng.integers(0, n_in, m * 3))),
                      shape=(m, n_in))
    P = sp.csr_matrix((np.ones(m * 2), (np.repeat(np.arange(m), 2), rng.integers(0, n_out, m * 2))),
                      shape=(m, n_out))
    P.data[:] = 1.0
    S = TensorSamples(F, P)
    assert S.dim == 2_500_000_000
    run = solve_linf(S, 1.0, n_start=5, batch=5)
    assert run.objective == pytest.approx(1.0 / S.norms().min(), rel=1e-9)
    assert run.J.max() >= 2**31 or S.union_support().max() >= 2**31
    # the index order: j = o · n_inputs + k
    Z1 = S.rows([0])
    o, k = P[0].indices, F[0].indices
    assert set(Z1.indices.tolist()) == {int(a) * n_in + int(c) for a in o for c in k}


# ---------------------------------------------------------------------------------------------- (17), (18), (16)
def test_min_support_is_union_of_supports_and_optimal():
    Phi, Psi = random_sets(7)
    Z = dense_Z(Phi, Psi)
    est = LInfMaxMargin(support="min").fit(Phi, Psi)
    union = np.flatnonzero((Z > 0).any(axis=0))
    assert np.array_equal(np.sort(est.w_.indices), union)
    d = 1.0 / Z.sum(axis=1).min()
    assert np.allclose(est.w_.data, d)
    w = est.w_.toarray().ravel()
    assert (Z @ w).min() >= 1 - 1e-9 and np.abs(w).max() == pytest.approx(est.result_.objective)
    # the operator view is the row-major reshape (n_outputs, n_inputs)
    assert np.allclose(est.W_.toarray(), w.reshape(Psi.shape[1], Phi.shape[1]))
    sf = LInfMaxMargin(support="scale_free").fit(Phi, Psi)
    assert np.array_equal(np.sort(sf.w_.indices), union) and np.all(sf.w_.data == 1.0)
    # (17) and (18) differ by d only: the same sets are predicted
    Xt, _ = random_sets(8, m=15)
    assert (est.predict(Xt) != sf.predict(Xt)).nnz == 0


def test_exact_16_equals_17_when_norms_are_equal():
    """With L1-normalised φ and ψ every ‖zᵢ‖₁ = 1 and each row forces w = d on its support: the exact
    minimum-support program (16) (a MILP) has the union of the supports as its support."""
    Phi, Psi = random_sets(11, m=12, n_in=6, n_out=3, normalise=True)
    S = TensorSamples(Phi, Psi)
    M = min_support_model(S, 1.0)
    get_solver("highs").solve(M, load_duals=False)
    Z = dense_Z(Phi, Psi)
    support = [j for j in M.U if M.y[j].value > 0.5]
    assert sorted(support) == np.flatnonzero((Z > 0).any(axis=0)).tolist()


def test_exact_16_can_be_sparser_than_17_when_norms_differ():
    """A row of larger norm needs only part of its support at d: (16) drops the rest, (17) keeps it."""
    Phi = sp.csr_matrix(np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]]))
    Psi = sp.csr_matrix(np.array([[1.0], [1.0]]))
    S = TensorSamples(Phi, Psi)
    M = min_support_model(S, 1.0)
    get_solver("highs").solve(M, load_duals=False)
    assert pyo.value(M.objective) == pytest.approx(1.0)      # w = (1, 0, 0) satisfies both rows at t* = 1
    assert S.union_support().size == 3


# ---------------------------------------------------------------------------------------------- Proposition 1
@pytest.mark.parametrize("seed", [0, 1])
def test_distance_lp_3_and_dual_6(seed):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=9) * (rng.random(9) < 0.7)
    w[0] = 0.0
    b = 1.7
    P, D = distance_model(w, b), distance_dual_model(w, b)
    highs = get_solver("highs")
    highs.solve(P)
    highs.solve(D)
    expected = b / np.abs(w).max()
    assert pyo.value(P.objective) == pytest.approx(expected, rel=1e-9)
    assert pyo.value(D.objective) == pytest.approx(expected, rel=1e-9)
    # the multiplier of wᵀu = b is d f*/d b = 1/‖w‖∞, and γ* = b · that (the paper's w_b = w/b scaling)
    y = duals(P, [P.on_hyperplane])[0]
    assert y == pytest.approx(1.0 / np.abs(w).max(), rel=1e-9)
    assert pyo.value(D.gamma) == pytest.approx(b * y, rel=1e-9)


# ---------------------------------------------------------------------------------------------- LP duality of (10)
def test_duality_of_10_from_the_solver_duals():
    Phi, Psi = random_sets(4, m=25)
    b = 1.3
    Z = dense_Z(Phi, Psi)
    run = solve_linf(TensorSamples(Phi, Psi), b, n_start=2, batch=3, aggregate=False)
    alpha = run.alpha
    assert alpha.min() >= -1e-12
    # strong duality: b Σα = t; dual feasibility ‖Σᵢ αᵢzᵢ‖₁ ≤ 1 over EVERY joint index, with α = 0 for the samples
    # outside the working set: the working-set duals certify the optimum of the full (10)
    a_full = np.zeros(Z.shape[0])
    a_full[run.working_set] = alpha
    assert b * alpha.sum() == pytest.approx(run.objective, rel=1e-8)
    assert np.abs(Z.T @ a_full).sum() <= 1 + 1e-8
    w = np.zeros(Z.shape[1])
    w[run.J] = run.w
    slack = Z[run.working_set] @ w - b
    assert np.max(np.abs(alpha * slack)) <= 1e-8                     # complementary slackness
    rep = duality_report(run.model)
    assert rep["beta_sum"] == pytest.approx(1.0, abs=1e-8)
    assert rep["stationarity"] <= 1e-8 and rep["beta_min"] >= -1e-12
    # the explicit dual model solved on its own reaches the same value
    D = LInf(b=b).dual_model(run.model)
    get_solver("highs").solve(D)
    assert pyo.value(D.objective) == pytest.approx(run.objective, rel=1e-8)


# ---------------------------------------------------------------------------------------------- kernels
def test_kernels_against_sklearn_and_counting():
    from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel
    rng = np.random.default_rng(0)
    A, B = rng.random((5, 4)), rng.random((3, 4))
    assert np.allclose(RBF(gamma=0.7)(A, B), rbf_kernel(A, B, gamma=0.7))
    assert np.allclose(Polynomial(3, 0.5, 1.0)(A, B), polynomial_kernel(A, B, degree=3, gamma=0.5, coef0=1.0))
    assert np.allclose(Linear()(sp.csr_matrix(A), sp.csr_matrix(B)).toarray(), A @ B.T)
    s = [["a", "b", "a", "b"], ["b", "a", "b"], "abab"]
    k = NGram(n=(1, 2))(s, s).toarray()

    def grams(x):
        x = tuple(x)
        return Counter([x[i:i + 1] for i in range(len(x))] + [x[i:i + 2] for i in range(len(x) - 1)])
    ref = np.array([[sum(grams(p)[g] * grams(q)[g] for g in grams(p)) for q in s] for p in s])
    assert np.array_equal(k, ref)


def test_kernelised_program_19_to_22():
    Phi, Psi = random_sets(9, m=20)
    Z = dense_Z(Phi, Psi)
    KS = KernelSamples(Phi, Psi, Linear(), Linear())
    K = Z @ Z.T                                                       # (19) with linear kernels
    assert np.allclose(KS.rows(np.arange(20)).toarray(), K)
    est = LInfMaxMargin(kernel="linear").fit(Phi, Psi)
    assert est.result_.objective == pytest.approx(1.0 / K.sum(axis=1).min(), rel=1e-9)   # Prop. 2 on Φ(z) ≥ 0
    # (22): W = Σₖ (w_Φ)ₖ ψ(yₖ) ⊗ φ(xₖ); scores Wφ(x)
    wphi = est.w_phi_.toarray().ravel()
    W = sum(wphi[k] * np.outer(Psi[k].toarray().ravel(), Phi[k].toarray().ravel()) for k in range(20))
    Xt, _ = random_sets(10, m=6)
    assert np.allclose(est.decision_function(Xt).toarray(), Xt.toarray() @ W.T)


def test_ngram_kernel_on_token_sequences():
    seqs = [["el", "rey", "de", "españa"], ["la", "reina"], ["el", "rey"], ["de", "la", "reina"]]
    Psi = sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 0], [0, 1]], dtype=float))
    est = LInfMaxMargin(kernel=NGram(n=(1, 2)), support="min").fit(seqs, Psi)
    pred = est.predict([["el", "rey"], ["la", "reina", "de"]]).toarray()
    assert pred.tolist() == [[1, 0], [0, 1]]


# ---------------------------------------------------------------------------------------------- prediction
def test_bounded_simplex_closed_form_against_linprog():
    rng = np.random.default_rng(1)
    for _ in range(20):
        n = int(rng.integers(2, 9))
        d = rng.normal(size=n)
        C = rng.uniform(1.0 / n, 1.0)
        u = bounded_simplex(d, C)
        res = linprog(-d, A_eq=np.ones((1, n)), b_eq=[1.0], bounds=[(0, C)] * n, method="highs")
        assert u.sum() == pytest.approx(1.0) and u.min() >= 0 and u.max() <= C + 1e-12
        assert d @ u == pytest.approx(-res.fun, abs=1e-10)
    D = rng.normal(size=(4, 6))
    assert np.allclose(bounded_simplex(D, 0.3), np.stack([bounded_simplex(r, 0.3) for r in D]))


def _select_reference(d, g):
    """Literal outer search of (27): t = 1, 2, ... over the sorted positive scores, stop at the first local max."""
    order = sorted(range(len(d)), key=lambda j: (-d[j], j))
    pos = [j for j in order if d[j] > 0]
    if not pos:
        return set()
    best = 1
    for t in range(1, len(pos)):
        now = sum(d[j] for j in pos[:t]) / g(float(t))
        nxt = sum(d[j] for j in pos[:t + 1]) / g(float(t + 1))
        if nxt <= now:
            break
        best = t + 1
    return set(pos[:best])


@pytest.mark.parametrize("g", ["sqrt", "log"])
def test_select_sets_against_reference_loop(g):
    rng = np.random.default_rng(2)
    D = rng.exponential(size=(40, 7)) * (rng.random((40, 7)) < 0.7) - 0.2 * (rng.random((40, 7)) < 0.1)
    D[3] = 0.0
    gf = {"sqrt": np.sqrt, "log": np.log1p}[g]
    got = select_sets(D, g).toarray()
    for r in range(40):
        assert set(np.flatnonzero(got[r])) == _select_reference(D[r], gf)
    # the paper's remark: g(t) = t always stops at the single largest score
    lin = select_sets(np.abs(D) + 0.01, lambda t: t).toarray()
    assert np.all(lin.sum(axis=1) == 1)


def test_set_prf_against_sklearn_micro():
    from sklearn.metrics import precision_recall_fscore_support
    rng = np.random.default_rng(4)
    pred, truth = (rng.random((30, 6)) < 0.3).astype(int), (rng.random((30, 6)) < 0.4).astype(int)
    r = set_prf(sp.csr_matrix(pred), sp.csr_matrix(truth))
    p, rec, f, _ = precision_recall_fscore_support(truth, pred, average="micro")
    assert (r["precision"], r["recall"], r["f1"]) == pytest.approx((p, rec, f))


# ---------------------------------------------------------------------------------------------- perceptron
def _perceptron_reference(Z, lam):
    """Algorithm 1 literally: Python sets, one sample at a time."""
    W, t = set(), 0
    while True:
        upd = 0
        for i in range(Z.shape[0]):
            if sum(Z[i, j] for j in W) < lam:
                W |= set(np.flatnonzero(Z[i] > 0).tolist())
                t += 1
                upd += 1
        if upd == 0:
            return W, t


def test_set_perceptron_against_literal_algorithm_and_bounds():
    Phi, Psi = random_sets(12, m=30, n_in=10, n_out=4, normalise=True)
    Z = dense_Z(Phi, Psi)
    res = set_perceptron(Phi, Psi, lam=0.6)
    W, t = _perceptron_reference(Z, 0.6)
    assert res.converged and res.updates == t
    assert set(res.W.tolist()) == W
    # (30) with the printed definitions holds; (31) holds under both readings
    assert res.updates <= res.bound_updates["printed"]
    for k in ("printed", "euclidean"):
        assert res.margin[k] >= res.bound_margin[k]
    assert res.margins.min() >= 0.6


def test_bound_30_euclidean_reading_fails_on_a_chain():
    """Zᵢ = {eᵢ, eᵢ₊₁} with masses ½ and λ = 0.9: every sample costs one update (n − 1), but ℓ_max|W*|/δ² = n/2."""
    n = 10
    Phi = sp.csr_matrix(np.eye(n)[:-1] + np.eye(n, k=1)[:-1])
    Psi = sp.csr_matrix(np.ones((n - 1, 1)))
    res = set_perceptron(Phi, Psi, lam=0.9)
    assert res.updates == n - 1
    assert res.bound_updates["euclidean"] == pytest.approx(n / 2)
    assert res.updates > res.bound_updates["euclidean"]
    assert res.updates <= res.bound_updates["printed"]


# ---------------------------------------------------------------------------------------------- errors, sklearn
def test_bad_inputs_raise_value_errors_naming_the_entry():
    Phi, Psi = random_sets(0, m=6)
    bad = Psi.toarray()
    bad[2, 1] = -0.5
    with pytest.raises(ValueError, match=r"Psi\[2, 1\] = -0.5"):
        LInfMaxMargin().fit(Phi, bad)
    badF = Phi.toarray()
    badF[4, 3] = np.nan
    with pytest.raises(ValueError, match=r"Phi\[4, 3\]"):
        LInfMaxMargin().fit(badF, Psi)
    with pytest.raises(DataError, match="rows"):
        LInfMaxMargin().fit(Phi[:5], Psi)
    zero = Psi.toarray()
    zero[1] = 0
    with pytest.raises(DataError, match="row 1 of Psi is all zero"):
        LInfMaxMargin().fit(Phi, zero)
    with pytest.raises(ParameterError, match="support"):
        LInfMaxMargin(support="sparse").fit(Phi, Psi)
    with pytest.raises(ParameterError, match="b must be"):
        LInfMaxMargin(b=0).fit(Phi, Psi)
    with pytest.raises(ParameterError, match="g must"):
        LInfMaxMargin(g="cube").fit(Phi, Psi)
    with pytest.raises(ParameterError, match="coef0"):
        Polynomial(coef0=-1.0)
    with pytest.raises(ParameterError, match="not fitted"):
        LInfMaxMargin().predict(Phi)
    with pytest.raises(ParameterError, match="no slack weight C"):
        LInf(C=1.0)
    est = LInfMaxMargin().fit(Phi, Psi)
    with pytest.raises(DataError, match="columns"):
        est.predict(Phi[:, :5])


def test_sklearn_manners():
    from sklearn.base import clone
    est = LInfMaxMargin(b=2.0, support="min", g="log")
    assert est.get_params()["b"] == 2.0 and est.get_params()["kernel"] is None
    c = clone(est).set_params(support="scale_free")
    assert c.support == "scale_free" and est.support == "min"
    Phi, Psi = random_sets(3)
    est.fit(Phi, Psi)
    assert est.result_.min_margin >= 2.0 * (1 - 1e-7)
    assert 0.0 <= est.score(Phi, Psi) <= 1.0
    assert not hasattr(clone(est), "w_")
    k = clone(LInfMaxMargin(kernel=(NGram(n=[1, 2]), Polynomial(degree=2))))
    assert k.kernel[0].get_params() == {"n": [1, 2]} and k.kernel[1].degree == 2


# ---------------------------------------------------------------------------------------------- experiment
def test_reproduce_quick_slice(tmp_path):
    from mmprog.datasets.registry import default_data_root
    root = default_data_root()
    if not (root / "conll2002" / "esp.train.gz").exists():
        pytest.skip(f"shared data not found under {root} (set MMPROG_DATA)")
    from mmprog.reproduce.linf import main
    out = tmp_path / "linf"
    rc = main(["--which", "real,scaling", "--tasks", "conll2002-types", "--max-train", "120", "--max-test", "40", "--kernel-train", "40",
               "--sizes", "100,200", "--out", str(out)])
    assert rc == 0
    import json
    res = json.loads((out / "linf_results.json").read_text())
    rows = res["real"]["conll2002-types"]["rows"]
    assert {r["method"] for r in rows} >= {"L-inf any (10)", "one-vs-rest LinearSVC"}
    assert all(0.0 <= r["f1"] <= 1.0 for r in rows)
    for rec in res["scaling"]["records"]:
        assert rec["gap"] < 1e-8 and rec["termination"] == "converged"
    assert os.path.exists(out / "linf_scaling.png")


# ---------------------------------------------------------------------------------------------- routes
def test_native_and_pyomo_routes_reach_the_same_optimum_and_the_model_is_explicit():
    Phi, Psi = random_sets(13, m=35, n_in=15, n_out=6)
    S = TensorSamples(Phi, Psi)
    nat = solve_linf(S, 1.0, n_start=3, batch=3, route="native")
    pyo_run = solve_linf(S, 1.0, n_start=3, batch=3, route="pyomo")
    assert nat.route == "native" and pyo_run.route == "pyomo"
    assert nat.objective == pytest.approx(pyo_run.objective, rel=1e-9)
    assert nat.rounds == pyo_run.rounds and nat.n_cons == pyo_run.n_cons
    # both routes' duals pass the same recomputed checks
    for run in (nat, pyo_run):
        rep = duality_report(run.master)
        assert rep["dual"] == pytest.approx(rep["primal"], rel=1e-8)
        assert rep["beta_sum"] == pytest.approx(1.0, abs=1e-8) and rep["stationarity"] <= 1e-8
    # the native route's Pyomo model, written on demand, carries every row and column and solves to the optimum
    M = nat.model
    n_vars = sum(1 for _ in M.component_data_objects(pyo.Var))
    n_cons = sum(1 for _ in M.component_data_objects(pyo.Constraint, active=True))
    assert (n_vars, n_cons) == (nat.n_vars, nat.n_cons)
    assert pyo.value(M.t) == pytest.approx(nat.objective)
    get_solver("highs").solve(M)
    assert pyo.value(M.objective) == pytest.approx(nat.objective, rel=1e-9)


def test_linf_checks_pass_and_catch_a_corrupted_solution():
    from mmprog.programs.linf import linf_checks
    Phi, Psi = random_sets(14, m=25)
    S = TensorSamples(Phi, Psi)
    run = solve_linf(S, 1.0, n_start=2, batch=2)
    rows = linf_checks(run, S)
    assert len(rows) >= 12 and all(r["status"] == "pass" for r in rows), [r for r in rows if r["status"] != "pass"]
    run.w = run.w * 0.9                                  # no longer feasible: the primal row must fail
    failed = {r["statement"] for r in linf_checks(run, S, solvers=()) if r["status"] == "fail"}
    assert any(s.startswith("primal feasibility") for s in failed)
