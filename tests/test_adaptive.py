"""The adaptive M³N (P2) by EM (Algorithm 3), P4 and Theorem 2 of Zhu, Xing & Zhang (KDD 2009).

Ground truth is independent of mmprog's feature map, programs and solver registry: every labeling of every example
of a tiny chain data set is an explicit constraint, features are computed by explicit loops, and the full QP / LP
is handed to highspy directly (tests/_enumerated.py; P4 and P1′ are written here, P1′ is shared with
tests/test_projections.py).
"""
import numpy as np
import pytest

import mmprog
from mmprog.exceptions import ParameterError

from _enumerated import INF, all_constraints, hinge, highs_qp, solve_full, tiny


def solve_p4(ds, C, lam):
    """min (λ/K)t² + C Σ ξ s.t. t ≥ Σ(μ+ν), (μ−ν)ᵀΔf ≥ Δℓ − ξ for all labelings. Returns (optimum, w)."""
    A, l, ex = all_constraints(ds)
    m, dim = A.shape
    n = len(ds)
    nv = 2 * dim + 1 + n          # μ, ν, t, ξ
    rows = []
    a = np.zeros(nv)
    a[: 2 * dim] = -1.0
    a[2 * dim] = 1.0
    rows.append((a, 0.0, INF))
    for r in range(m):
        a = np.zeros(nv)
        a[:dim], a[dim:2 * dim] = A[r], -A[r]
        a[2 * dim + 1 + ex[r]] = 1.0
        rows.append((a, l[r], INF))
    hd = np.zeros(nv)
    hd[2 * dim] = 2.0 * lam / dim
    cost = np.r_[np.zeros(2 * dim + 1), C * np.ones(n)]
    opt, x = highs_qp(cost, np.zeros(nv), INF * np.ones(nv), rows, hd)
    return opt, x[:dim] - x[dim:2 * dim]


def solve_p1_ball(ds, radius):
    """P1′: min (1/N) Σ ξ s.t. Σ(μ+ν) ≤ λ, (μ−ν)ᵀΔf ≥ Δℓ − ξ for all labelings (an LP). Returns (optimum, w)."""
    A, l, ex = all_constraints(ds)
    m, dim = A.shape
    n = len(ds)
    nv = 2 * dim + n
    rows = [(np.r_[np.ones(2 * dim), np.zeros(n)], -INF, radius)]
    for r in range(m):
        a = np.zeros(nv)
        a[:dim], a[dim:2 * dim] = A[r], -A[r]
        a[2 * dim + ex[r]] = 1.0
        rows.append((a, l[r], INF))
    opt, x = highs_qp(np.r_[np.zeros(2 * dim), np.ones(n) / n], np.zeros(nv), INF * np.ones(nv), rows)
    return opt, x[:dim] - x[dim:2 * dim]


# ---------------------------------------------------------------------------------------------------- tests
C, LAM = 0.7, 2.0


@pytest.mark.parametrize("master", ["primal", "dual"])
def test_one_em_round_solves_qp5_at_the_starting_beta(master):
    # β = √λ: QP (5) is min λγᵀγ + CΣξ, i.e. min ½ wᵀD⁻¹w + CΣξ with D = β²/(2λ) = ½
    ds = tiny(seed=1)
    res = mmprog.fit(ds, program="adapm3n", C=C, lam=LAM, n_em=1, eps=1e-7, master=master)
    dim = len(res.w)
    opt, w = solve_full(ds, C, metric=np.full(dim, 0.5))
    assert res.primal_objective == pytest.approx(opt, rel=1e-5, abs=1e-6)
    assert np.allclose(res.w, w, atol=1e-4)
    assert np.allclose(res.beta_history[0], np.sqrt(LAM))
    # γ = w/β and λγᵀγ is the regulariser of the QP
    assert np.allclose(res.gamma * np.sqrt(LAM), res.w)


# (seed 4 converges too, but needs ~170 rounds: a zero-weight feature whose |ηₖ| sits at the maximum decays slowly)
@pytest.mark.parametrize("seed", [3, 5, 10])
def test_theorem2_em_fixed_point_attains_the_p4_optimum(seed):
    ds = tiny(seed=seed, irrelevant=3)
    p4_opt, _ = solve_p4(ds, C, LAM)
    res = mmprog.fit(ds, program="adapm3n", C=C, lam=LAM, n_em=200, beta_tol=1e-4, eps=1e-7, update="eq4",
                     master="dual")
    assert res.termination == "converged"
    # a fixed point of the EM (β stops moving) ...
    assert res.em_history[-1]["beta_change"] <= 1e-4
    # ... that is also a fixed point of Algorithm 3's map (6), βₖ = √K|γₖ|/‖γ‖ ...
    K = len(res.w)
    beta6 = np.sqrt(K) * np.abs(res.gamma) / np.linalg.norm(res.gamma)
    assert np.allclose(beta6, res.beta, atol=1e-3)
    # ... attains P4's optimum (Theorem 2): P3 objective λ‖γ‖² + CΣHᵢ(w) and P4 objective at the EM's w
    h = hinge(ds, res.w).sum()
    assert res.p4_objective == pytest.approx(LAM / K * np.abs(res.w).sum() ** 2 + C * h, rel=1e-9)
    assert res.p4_objective == pytest.approx(p4_opt, rel=1e-3)
    assert res.p3_objective == pytest.approx(p4_opt, rel=1e-3)


@pytest.mark.parametrize("slack", ["n", "one"])
def test_p4_program_matches_the_full_program(slack):
    ds = tiny(seed=4, irrelevant=2)
    opt, _ = solve_p4(ds, C, LAM)
    eps = 1e-6
    res = mmprog.fit(ds, program="p4", C=C, lam=LAM, slack=slack, eps=eps)
    assert res.termination == "converged"
    tol = 1e-5 * max(1.0, opt)
    assert res.primal_objective <= opt + tol
    assert opt <= res.primal_objective + C * len(ds) * eps + tol
    # the dual Σα Δℓ − (K/4λ)‖ΔFᵀα‖∞² from the solver's multipliers closes the gap
    assert res.dual_objective == pytest.approx(res.primal_objective, rel=1e-4, abs=1e-5)
    assert res.extra["t"] == pytest.approx(np.abs(res.w).sum(), rel=1e-6, abs=1e-8)


def test_em_objective_never_increases_with_eq4():
    ds = tiny(seed=6, irrelevant=2)
    res = mmprog.fit(ds, program="adapm3n", C=C, lam=LAM, n_em=12, beta_tol=0.0, eps=1e-7, update="eq4")
    # from round 2 on (Σβ² = K holds) every round's optimum is P2's objective at a feasible τ: monotone
    obj = [r["objective"] for r in res.em_history[1:]]
    assert all(b <= a + 1e-6 * max(1.0, abs(a)) for a, b in zip(obj, obj[1:]))


def test_thresholded_features_are_removed_with_exactly_zero_weight():
    ds = tiny(seed=7, n=16, irrelevant=4)
    res = mmprog.fit(ds, program="adapm3n", C=0.3, lam=20.0, n_em=15, eps=1e-6, master="primal")
    removed = np.nonzero(res.beta == 0)[0]
    assert len(removed) >= 4
    assert np.all(res.w[removed] == 0.0)            # exactly, not small
    assert np.all(res.w[res.beta > 0] != 0.0)
    # removed features are fixed at γ = 0 in the kept primal master; their Param β is 0
    m = res.model
    for k in removed:
        assert m.gamma[k].fixed and m.gamma[k].value == 0.0
    # the history starts at √λ and ends at the returned β; every recorded β satisfies Σβ² = K after round 1
    assert np.allclose(res.beta_history[0], np.sqrt(20.0))
    assert np.array_equal(res.beta_history[-1], res.beta)
    # (6) normalises to Σβ² = K; thresholding then drops at most K·threshold² of it
    K = len(res.w)
    for b in res.beta_history[1:]:
        assert K * (1 - 1e-8) - 1e-9 <= (b ** 2).sum() <= K + 1e-9


def test_master_is_kept_and_rescaled_between_em_rounds(monkeypatch):
    from pyomo.repn import generate_standard_repn
    from mmprog.programs.adapm3n import AdapM3N
    builds = []
    original = AdapM3N.build

    def counting_build(self, dims):
        builds.append(1)
        return original(self, dims)

    monkeypatch.setattr(AdapM3N, "build", counting_build)
    ds = tiny(seed=2, irrelevant=1)
    res = mmprog.fit(ds, program="adapm3n", C=C, lam=LAM, n_em=4, beta_tol=0.0, eps=1e-6, master="primal")
    assert len(builds) == 1
    rounds = res.em_history
    # cuts found in earlier rounds are still there: the working set only grows
    assert [r["n_cuts"] for r in rounds] == sorted(r["n_cuts"] for r in rounds)
    # every cut's coefficients are ΔF_r ∘ β for the β of the last QP (β_history[-2]; [-1] is the update after it)
    beta_used = res.beta_history[-2]
    F = res.model.ws.dF().toarray()
    gamma = res.model.gamma_list
    for r, con in enumerate(res.model.ws.components):
        repn = generate_standard_repn(con.body, compute_values=True)
        coef = {id(v): c for v, c in zip(repn.linear_vars, repn.linear_coefs)}
        got = np.array([coef.get(id(g), 0.0) for g in gamma])
        assert np.allclose(got, F[r] * beta_used, atol=1e-12)


def test_primal_and_dual_masters_follow_the_same_em_path():
    ds = tiny(seed=8, irrelevant=2)
    a = mmprog.fit(ds, program="adapm3n", C=C, lam=LAM, n_em=5, beta_tol=0.0, eps=1e-7, master="primal")
    b = mmprog.fit(ds, program="adapm3n", C=C, lam=LAM, n_em=5, beta_tol=0.0, eps=1e-7, master="dual")
    assert a.p4_objective == pytest.approx(b.p4_objective, rel=1e-4)
    assert np.allclose(a.beta_history, b.beta_history, atol=1e-3)


def test_parameters_are_checked():
    ds = tiny(seed=1)
    with pytest.raises(ParameterError, match="lam"):
        mmprog.fit(ds, program="adapm3n", lam=0.0)
    with pytest.raises(ParameterError, match="update"):
        mmprog.fit(ds, program="adapm3n", update="eq5")
    with pytest.raises(ParameterError, match="n_em"):
        mmprog.fit(ds, program="adapm3n", n_em=0)
