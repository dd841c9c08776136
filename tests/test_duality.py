"""Explicit duals and the duality checks.

Ground truth for the dual models is independent of mmprog's feature map, programs and solver wrappers: every
labeling of every example of a tiny instance is enumerated with features computed by explicit loops, the *primal*
program (P0 or P1 over all labelings) is handed to highspy directly (tests/_enumerated.py), and the explicit *dual*
model built by mmprog.duality from the same rows must reach the same optimum (strong duality) and give back the
same w.

The checks must be able to fail: each corrupted solution (w moved, ξ lowered or raised, α negative or over budget
or put on a slack cut, a weight's sign flipped) must make the statement it violates fail, and only checks that
the corruption touches may fail.
"""
import copy
import itertools

import numpy as np
import pyomo.environ as pyo
import pytest
import scipy.sparse as sp

import mmprog
from mmprog import duality
from mmprog.programs import l1m3n, m3n, statements
from mmprog.datasets import tiny_chain
from mmprog.datasets.base import SequenceDataset
from mmprog.solvers import get_solver

from _enumerated import joint_f, solve_enumerated

K, T, D = 2, 3, 2


def enumerated(n=5, seed=3):
    """Rows of the full program: every labeling of every example, features by explicit loops."""
    rng = np.random.default_rng(seed)
    X = [rng.normal(size=(T, D)) for _ in range(n)]
    Y = [rng.integers(0, K, size=T) for _ in range(n)]
    rows, dl, ex = [], [], []
    for i, (x, y) in enumerate(zip(X, Y)):
        fy = joint_f(x, y, K)
        for lab in itertools.product(range(K), repeat=T):
            lab = np.array(lab)
            if (lab == y).all():
                continue
            rows.append(fy - joint_f(x, lab, K))
            dl.append(float(np.sum(lab != y)))
            ex.append(i)
    return np.array(rows), np.array(dl), np.array(ex), n


def arrays_of(A, dl, ex, n, budget):
    return duality.WSArrays(positions=np.arange(len(dl)), F=sp.csr_matrix(A), dl=dl, slack=ex, n_slacks=n,
                            budget=budget)


@pytest.mark.parametrize("C", [0.1, 2.0])
def test_p0_dual_model_equals_full_primal(C):
    A, dl, ex, n = enumerated()
    opt, w = solve_enumerated(A, dl, ex, n, C, "l2")
    dm = m3n.p0_dual_model(arrays_of(A, dl, ex, n, C))
    get_solver("highs").solve(dm)
    assert pyo.value(dm.objective) == pytest.approx(opt, rel=1e-6, abs=1e-7)
    w_dual = np.zeros(A.shape[1])
    w_dual[dm.support] = [dm.w[int(k)].value for k in dm.support]
    np.testing.assert_allclose(w_dual, w, atol=1e-5)
    # Theorem 3 as stated (equality budgets with the ground truth's multiplier): same optimum, and the truth takes
    # exactly what the working set leaves of C
    tm = m3n.theorem3_model(arrays_of(A, dl, ex, n, C))
    get_solver("highs").solve(tm)
    assert pyo.value(tm.objective) == pytest.approx(opt, rel=1e-6, abs=1e-7)
    used = np.bincount(ex, weights=[tm.alpha[r + 1].value for r in range(len(dl))], minlength=n)
    np.testing.assert_allclose(used + [tm.alpha_truth[i].value for i in range(n)], C, atol=1e-7)


@pytest.mark.parametrize("C", [0.1, 2.0])
def test_p1_dual_model_equals_full_primal_and_gives_it_back(C):
    A, dl, ex, n = enumerated(seed=4)
    opt, w = solve_enumerated(A, dl, ex, n, C, "l1")
    dm = l1m3n.p1_dual_model(arrays_of(A, dl, ex, n, C))
    get_solver("highs").solve(dm)
    assert pyo.value(dm.objective) == pytest.approx(opt, rel=1e-9, abs=1e-9)
    # the dual's multipliers are a primal solution with the same objective
    from mmprog.solvers import duals
    K_ = list(dm.K)
    mu = np.zeros(A.shape[1])
    nu = np.zeros(A.shape[1])
    mu[K_] = duals(dm, [dm.mu_bound[k] for k in K_])
    nu[K_] = duals(dm, [dm.nu_bound[k] for k in K_])
    xi = duals(dm, [dm.budget[i] for i in range(n)])
    assert (mu >= -1e-9).all() and (nu >= -1e-9).all() and (xi >= -1e-9).all()
    assert (A @ (mu - nu) + xi[ex] - dl).min() >= -1e-8
    assert 0.5 * (mu + nu).sum() + C * xi.sum() == pytest.approx(opt, rel=1e-9, abs=1e-9)


def test_p1_dual_model_by_scipy_linprog():
    """The LP dual written as arrays for scipy's linprog (no Pyomo) has the Pyomo dual model's optimum."""
    from scipy.optimize import linprog
    A, dl, ex, n = enumerated(seed=5)
    C = 0.7
    dm = l1m3n.p1_dual_model(arrays_of(A, dl, ex, n, C))
    get_solver("highs").solve(dm)
    B = np.zeros((n, len(dl)))
    B[ex, np.arange(len(dl))] = 1
    res = linprog(-dl, A_ub=np.vstack([A.T, -A.T, B]), b_ub=np.r_[0.5 * np.ones(2 * A.shape[1]), C * np.ones(n)],
                  bounds=(0, None), method="highs")
    assert res.status == 0
    assert pyo.value(dm.objective) == pytest.approx(-res.fun, rel=1e-6)


# ---------------------------------------------------------------------------------------------- checks on results

@pytest.fixture(scope="module")
def data():
    return tiny_chain(n_sequences=12, seed=1)


@pytest.fixture(scope="module")
def results(data):
    return {
        "m3n-n": mmprog.fit(data, program="m3n", C=1.0, slack="n", eps=1e-4, master="primal"),
        "m3n-gram-one": mmprog.fit(data, program="m3n", C=1.0, slack="one", eps=1e-4, master="dual"),
        "l1m3n-n": mmprog.fit(data, program="l1m3n", C=1.0, slack="n", eps=1e-4),
        "l1m3n-one": mmprog.fit(data, program="l1m3n", C=0.5, slack="one", eps=1e-4),
    }


def by_statement(checks, prefix):
    found = [c for c in checks if c.statement.startswith(prefix)]
    assert found, f"no statement starting with {prefix!r} in {[c.statement for c in checks]}"
    return found


REQUIRED = {
    "m3n": ["primal feasibility", "dual feasibility", "strong duality: P0 value ½‖w‖²", "stationarity",
            "complementary slackness", "dual sparsity", "strong duality: P0 value = optimum of the explicit",
            "Theorem 3: posterior mean", "Theorem 3 (ICML 2008) as stated", "dual of the dual",
            "cross-solver: optimum by highs = optimum by ipopt"],
    "l1m3n": ["primal feasibility", "dual feasibility", "strong duality: P1 value ½‖w‖₁", "stationarity (sub",
              "complementary slackness", "dual sparsity", "strong duality: P1 value = optimum of the explicit",
              "dual of the dual", "cross-solver: optimum by highs = optimum by glpk"],
}


@pytest.mark.parametrize("key", ["m3n-n", "m3n-gram-one", "l1m3n-n", "l1m3n-one"])
def test_checks_pass_on_tiny_instances(results, data, key):
    res = results[key]
    checks = duality.check(res, dataset=data)
    bad = [(c.statement, c.lhs, c.rhs, c.reason) for c in checks if c.status == "fail"]
    assert not bad
    for c in checks:
        assert c.status in duality.STATUSES
        if c.status == "skipped":
            assert c.reason
    for prefix in REQUIRED[res.program]:
        for c in by_statement(checks, prefix):
            assert c.status == "pass", (c.statement, c.reason)


def test_p0_gram_master_statement_and_predictions(results, data):
    checks = duality.check(results["m3n-n"], dataset=data)
    assert by_statement(checks, "Gram dual master")[0].status == "pass"
    pred = by_statement(checks, "Theorem 3: predictions")[0]
    assert pred.status == "pass" and pred.lhs == 0


def test_two_named_solvers_are_compared(results):
    checks = duality.check(results["l1m3n-n"], solvers=["glpk", "highs"])
    cross = by_statement(checks, "cross-solver")
    assert [c.statement for c in cross] == ["cross-solver: optimum by glpk = optimum by highs (same working set)"]
    assert cross[0].status == "pass"
    # the explicit dual is solved by the first named solver that takes LPs
    assert "glpk" in by_statement(checks, "strong duality: P1 value = optimum")[0].reason


def test_unusable_solver_gives_skipped_rows_with_reasons(results):
    checks = duality.check(results["l1m3n-n"], solvers=["scip"])
    skipped = [c for c in checks if c.status == "skipped"]
    assert skipped and all(c.reason for c in skipped)
    assert not [c for c in checks if c.status == "fail"]


# -------------------------------------------------------------------------------- corrupted solutions must fail

def corrupted(res, **arrays):
    bad = copy.copy(res)
    for k, v in arrays.items():
        setattr(bad, k, v)
    return bad


def failing(checks):
    return [c.statement for c in checks if c.status == "fail"]


def assert_fails(checks, *prefixes):
    f = failing(checks)
    for p in prefixes:
        assert any(s.startswith(p) for s in f), (p, f)


def test_moved_w_breaks_stationarity_and_strong_duality(results):
    res = results["m3n-n"]
    w = res.w.copy()
    w[np.argmax(np.abs(w))] += 0.3
    checks = duality.check(corrupted(res, w=w))
    assert_fails(checks, "stationarity", "strong duality: P0 value = optimum of the explicit",
                 "Theorem 3: posterior mean")


def test_lowered_xi_breaks_primal_feasibility(results):
    res = results["l1m3n-n"]
    xi = res.xi.copy()
    i = int(np.argmax(xi))
    assert xi[i] > 0.1
    xi[i] -= 0.1
    checks = duality.check(corrupted(res, xi=xi), solvers=["highs"])
    assert_fails(checks, "primal feasibility")
    assert by_statement(checks, "dual feasibility")[0].status == "pass"


def test_raised_xi_breaks_strong_duality_and_slackness(results):
    res = results["l1m3n-n"]
    xi = res.xi.copy()
    xi[int(np.argmin(xi))] += 0.2
    checks = duality.check(corrupted(res, xi=xi), solvers=["highs"])
    assert_fails(checks, "strong duality: P1 value ½‖w‖₁", "strong duality: P1 value = optimum",
                 "complementary slackness")
    assert by_statement(checks, "primal feasibility")[0].status == "pass"


def test_negative_or_over_budget_alpha_breaks_dual_feasibility(results):
    res = results["m3n-n"]
    a = res.alpha.copy()
    a[int(np.argmin(a))] = -0.05
    assert_fails(duality.check(corrupted(res, alpha=a), solvers=["highs"]), "dual feasibility")
    a = res.alpha.copy()
    arrays = duality.working_set_arrays(res)
    a[int(np.argmax(a))] += 2 * arrays.budget
    assert_fails(duality.check(corrupted(res, alpha=a), solvers=["highs"]), "dual feasibility")


def test_alpha_on_a_slack_cut_breaks_complementary_slackness_and_sparsity(results):
    res = results["l1m3n-one"]
    arrays = duality.working_set_arrays(res)
    slack_r = arrays.F @ res.w + res.xi[arrays.slack] - arrays.dl
    r = int(np.argmax(slack_r))
    assert slack_r[r] > 1e-3 and res.alpha[r] < 1e-9
    a = res.alpha.copy()
    a[r] = 1e-3
    checks = duality.check(corrupted(res, alpha=a), solvers=["highs"])
    assert_fails(checks, "complementary slackness", "dual sparsity")


def test_flipped_weight_sign_breaks_the_subgradient_condition(results):
    res = results["l1m3n-n"]
    w = res.w.copy()
    k = int(np.argmax(np.abs(w)))
    w[k] = -w[k]
    checks = duality.check(corrupted(res, w=w), solvers=["highs"])
    assert_fails(checks, "stationarity (sub-gradient): Σ α ΔF_k = ½ sign")


def test_cross_solver_disagreement_fails(results, monkeypatch):
    res = results["l1m3n-n"]
    real = statements.rebuild_master

    def lying(result, solver, **kw):
        model, sol = real(result, solver, **kw)
        if solver == "glpk":
            sol.objective += 0.01
        return model, sol
    monkeypatch.setattr(statements, "rebuild_master", lying)      # what cross_solver_checks calls
    checks = duality.check(res, solvers=["highs", "glpk"])
    assert failing(checks) == ["cross-solver: optimum by highs = optimum by glpk (same working set)"]


# ------------------------------------------------------------------------------------------------ dual_model API

def test_dual_model_of_results_names_its_components(results):
    res = results["l1m3n-n"]
    mmprog.programs.get_program("l1m3n").materialise(res.model)      # Pyomo rows may be written lazily
    m = duality.dual_model(res)
    names = {c.name for c in m.component_objects((pyo.Var, pyo.Constraint))}
    assert names == {"alpha", "mu_bound", "nu_bound", "budget"}
    # alpha[r] is the multiplier of cuts[r]: same index set as the master's cut list
    assert set(m.alpha.keys()) == set(res.model.cuts.keys())
    m0 = duality.dual_model(results["m3n-n"])
    assert {c.name for c in m0.component_objects((pyo.Var, pyo.Constraint))} == {"alpha", "w", "stationarity",
                                                                                "budget"}


def test_dual_model_solved_by_ipopt_matches_highs(results):
    m = duality.dual_model(results["m3n-gram-one"])
    get_solver("ipopt").solve(m)
    v_ipopt = pyo.value(m.objective)
    get_solver("highs").solve(m)
    assert pyo.value(m.objective) == pytest.approx(v_ipopt, rel=1e-6)
    assert pyo.value(m.objective) == pytest.approx(results["m3n-gram-one"].primal_objective, rel=1e-5)


def test_program_hook_wires_a_program_defined_dual(monkeypatch, results):
    """A program that carries dual_model/checks on its class is verified through them (plus cross-solver)."""
    from mmprog.programs import base
    from mmprog.programs.l1m3n import L1M3N

    @base.register("_l1_hooked")
    class Hooked(L1M3N):
        def dual_model(self, model):
            return l1m3n.p1_dual_model(duality.working_set_arrays(model, C=self.C))

        def checks(self, result):
            yield {"statement": "always true", "lhs": 1.0, "rhs": 1.0, "gap": 0.0, "tolerance": 0.0,
                   "status": "pass"}
    try:
        res = copy.copy(results["l1m3n-n"])
        res.program = "_l1_hooked"
        assert isinstance(duality.hook_for("_l1_hooked"), duality.ProgramHook)
        m = duality.dual_model(res)
        assert "mu_bound" in {c.name for c in m.component_objects(pyo.Constraint)}
        checks = duality.check(res, solvers=["highs", "glpk"])
        assert [c.statement for c in checks][0] == "always true"
        assert by_statement(checks, "cross-solver")[0].status == "pass"
    finally:
        base.unregister("_l1_hooked")


def test_dataset_free_instance_is_independent_of_fit(data):
    """The working-set arrays the checks use are the master's cut rows (ΔF, Δℓ) exactly."""
    res = mmprog.fit(SequenceDataset(data.X[:4], data.Y[:4], data.n_labels), program="l1m3n", eps=1e-4)
    mmprog.programs.get_program("l1m3n").materialise(res.model)
    arrays = duality.working_set_arrays(res)
    body = np.array([pyo.value(c.body) for c in res.model.cuts.values()])
    mu = np.array([v.value for v in res.model.mu_list])
    nu = np.array([v.value for v in res.model.nu_list])
    np.testing.assert_allclose(body, arrays.F @ (mu - nu) + res.xi[arrays.slack], atol=1e-12)
    np.testing.assert_allclose([pyo.value(c.lower) for c in res.model.cuts.values()], arrays.dl)


# ------------------------------------------------------------------------------ programs built on P0 / P4 hooks

def needs(program):
    from mmprog.programs import registered
    if program not in registered():
        pytest.skip(f"program {program} is not registered in this checkout")


def test_p4_subgradient_and_duality_fail_on_a_moved_weight():
    needs("p4")
    ds = tiny_chain(n_sequences=6, seed=3)
    res = None
    for solver in ("highs", "ipopt"):       # the P4 QP is the program helper's; take whichever solver it suits
        try:
            res = mmprog.fit(ds, program="p4", C=1.0, lam=1.0, eps=1e-5, solver=solver)
            break
        except mmprog.exceptions.SolverError:
            continue
    assert res is not None
    checks = duality.check(res, solvers=[res.solver])
    assert not failing(checks)
    assert by_statement(checks, "P4 ⇔ P1")[0].status == "pass"
    w = res.w.copy()
    k = int(np.argmax(np.abs(w)))
    w[k] *= 0.5
    assert_fails(duality.check(corrupted(res, w=w), solvers=[res.solver]),
                 "stationarity (sub-gradient): Σ α ΔF_k = (2λ/K)", "strong duality: P4 value (λ/K)")


def test_pomen_em_statement_fails_when_j_increases():
    needs("pomen")
    ds = tiny_chain(n_sequences=6, seed=2).hide_labels(0.25, seed=0)
    res = mmprog.fit(ds, program="pomen", C=1.0, eps=1e-4, n_em=1)
    checks = duality.check(res, dataset=ds, solvers=["highs"])
    assert not failing(checks)
    for prefix in ("EM (NIPS 2008", "strong duality of (11)–(12)", "β-dual (12), one example", "β-dual gradient"):
        assert by_statement(checks, prefix)[0].status == "pass"
    bad = copy.copy(res)
    bad.extra = dict(res.extra)
    em = [dict(e) for e in res.extra["em_history"]]
    last = [e for e in em if e["round"] >= 0][-1]
    last["objective"] += 1.0
    bad.extra["em_history"] = em
    assert_fails(duality.check(bad, solvers=["highs"]), "EM (NIPS 2008")


def test_mtl_statements_and_a_wrong_template_weight():
    needs("mtl")
    ds = tiny_chain(n_sequences=6, seed=2)
    res = mmprog.fit(ds, program="mtl", C=1.0, eps=1e-4)
    checks = duality.check(res)
    assert not failing(checks)
    for prefix in ("strong duality: (5) value", "recovery (7): ‖wⱼ‖", "recovery (7): w of (6)",
                   "strong duality: this master's value", "stationarity in θ"):
        assert by_statement(checks, prefix)[0].status == "pass", prefix
    bad = copy.copy(res)
    bad.extra = dict(res.extra)
    mu = np.asarray(res.extra["template_weights"], dtype=float).copy()
    mu = mu[::-1].copy() if abs(mu[0] - mu[-1]) > 1e-3 else mu * 0.5
    bad.extra["template_weights"] = mu
    assert_fails(duality.check(bad), "recovery (7): ‖wⱼ‖")


@pytest.mark.parametrize("p", [2.0, 4.0])
def test_pblock_statements_and_a_wrong_recovery(p):
    needs("pblock")
    ds = tiny_chain(n_sequences=6, seed=2)
    res = mmprog.fit(ds, program="pblock", C=1.0, p=p, slack="one", eps=1e-4)
    checks = duality.check(res)
    assert not failing(checks)
    for prefix in ("strong duality: (10) value", "recovery (12)", "recovery (13)", "gradient of (11)",
                   "(11) by method=pg = (11) by method=nlp"):
        assert by_statement(checks, prefix)[0].status == "pass", prefix
    if p == 2.0:
        assert by_statement(checks, "p = 2 is the structural SVM")[0].status == "pass"
    w = res.w.copy()
    w[np.argmax(np.abs(w))] *= 1.1
    assert_fails(duality.check(corrupted(res, w=w)), "recovery (13)", "strong duality: (10) value")


def test_linf_statements_and_a_wrong_optimum():
    needs("linf")
    import dataclasses

    from mmprog.datasets import sparse_sets
    hook = duality.hook_for("linf")
    from mmprog.engine.routes import ENGINE
    res = hook.fit(sparse_sets(m=30, n_inputs=20, n_outputs=8, normalize=False, seed=1), ENGINE)
    checks = duality.check(res, solvers=["highs", "glpk"])
    assert not failing(checks)
    for prefix in ("strong duality with the solver's duals", "explicit dual of (10) (highs)",
                   "explicit dual of (10) (glpk)", "Proposition 2", "Proposition 1 (highs): value of (3)",
                   "Proposition 1 (highs): value of (6)", "(17)", "dual sparsity",
                   "cross-solver: (10) by highs = (10) by glpk"):
        assert by_statement(checks, prefix)[0].status == "pass", prefix
    # Proposition 2 computed independently: b / min_i ||z_i||_1 with z_i = psi_i (x) phi_i, ||z_i||_1 = |phi_i|·|psi_i|
    Phi, Psi = sparse_sets(m=30, n_inputs=20, n_outputs=8, normalize=False, seed=1)
    norms = np.asarray(Phi.sum(axis=1)).ravel() * np.asarray(Psi.sum(axis=1)).ravel()
    assert res.run.objective == pytest.approx(1.0 / norms.min(), rel=1e-9)
    bad = copy.copy(res)
    bad.run = dataclasses.replace(res.run, objective=res.run.objective * 1.01)
    assert_fails(duality.check(bad, solvers=["highs"]), "explicit dual of (10) (highs)", "Proposition 2")
