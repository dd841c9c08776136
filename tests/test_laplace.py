"""The Laplace M³N by the variational Algorithm 1 of Zhu, Xing & Zhang (ICML 2008) and its Theorem 3.

Ground truth: the QP (6) over every labeling of a tiny data set, solved by highspy directly, with Σ computed here in
closed form from (7) (helpers in tests/_enumerated.py).
"""
import numpy as np
import pytest

import mmprog
from mmprog.exceptions import ParameterError

from _enumerated import solve_full, tiny

C, LAM = 0.8, 3.0


@pytest.mark.parametrize("master", ["primal", "dual"])
def test_theorem3_one_step_is_exactly_m3n(master):
    ds = tiny(seed=11, irrelevant=2)
    lap = mmprog.fit(ds, program="lapm3n", C=C, lam=LAM, n_iter=1, eps=1e-7, master=master, solver="highs")
    # (m3n's Gram dual would go to daqp by default)
    m3n = mmprog.fit(ds, program="m3n", C=C, eps=1e-7, master=master, solver="highs")
    # same QP (Σ = I), same cuts, same solver: the same numbers
    assert lap.n_cuts == m3n.n_cuts
    assert np.array_equal(lap.w, m3n.w)
    assert lap.primal_objective == m3n.primal_objective
    assert np.array_equal(lap.sigma, np.ones(len(lap.w)))
    # and both are P0's optimum over every labeling
    opt, w = solve_full(ds, C, metric=np.ones(len(lap.w)))
    assert lap.primal_objective == pytest.approx(opt, rel=1e-5, abs=1e-6)
    assert np.allclose(lap.w, w, atol=1e-3)


@pytest.mark.parametrize("master", ["primal", "dual"])
def test_variational_steps_follow_update_7(master):
    ds = tiny(seed=12, irrelevant=3)
    res = mmprog.fit(ds, program="lapm3n", C=C, lam=LAM, n_iter=3, eps=1e-8, master=master)
    dim = len(res.w)
    # replay Algorithm 1 with the full program: Σ¹ = I, ⟨w⟩ from (6), Σ ← diag(√((Σ + ⟨w⟩²)/λ)) by (7)
    sigma = np.ones(dim)
    for step in range(3):
        assert np.allclose(res.sigma_history[step], sigma, rtol=1e-4, atol=1e-6)
        opt, w = solve_full(ds, C, metric=sigma)
        if step < 2:
            sigma = np.sqrt((sigma + w ** 2) / LAM)
    assert np.allclose(res.w, w, atol=1e-4)
    assert res.primal_objective == pytest.approx(opt, rel=1e-5, abs=1e-6)
    assert res.dual_objective == pytest.approx(res.primal_objective, rel=1e-4, abs=1e-6)
    assert np.array_equal(res.sigma, res.sigma_history[-1])


def test_laplace_is_only_pseudo_sparse():
    # KDD 2009 section 3.1: (7) keeps σₖ ≥ √(σₖ_old/λ) > 0, so no weight is removed, even of pure-noise inputs
    ds = tiny(seed=13, n=20, irrelevant=4)
    lap = mmprog.fit(ds, program="lapm3n", C=C, lam=25.0, n_iter=4, eps=1e-6)
    assert np.all(lap.sigma_history > 0)
    assert np.all(lap.weights()["state"][3:] != 0.0)


def test_parameters_are_checked():
    ds = tiny(seed=1)
    with pytest.raises(ParameterError, match="n_iter"):
        mmprog.fit(ds, program="lapm3n", n_iter=0)
    with pytest.raises(ParameterError, match="lam"):
        mmprog.fit(ds, program="lapm3n", lam=-1.0)
    with pytest.raises(ParameterError, match="master"):
        mmprog.fit(ds, program="lapm3n", master="both")
