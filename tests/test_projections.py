"""The ℓ1-ball projection (Duchi et al. 2008) against the projection QP solved by HiGHS directly, and the projected
sub-gradient method for P1′ (KDD 2009, Algorithm 2) against P1′ solved over every labeling as an LP.

Ground truth: min ½‖w − v‖² s.t. −t ≤ w ≤ t, Σ t ≤ z, handed to highspy (no mmprog code involved).
"""
import highspy
import numpy as np
import pytest

from mmprog.exceptions import ParameterError
from mmprog.projections import l1_ball, simplex


def qp_projection(v, z):
    n = len(v)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    # never unbounded: HiGHS 1.16.0's QP solver loops on the one-variable case 8 of CASES (README Known limits)
    h.setOptionValue("time_limit", 60.0)
    for opt in ("primal_feasibility_tolerance", "dual_feasibility_tolerance"):
        h.setOptionValue(opt, 1e-10)
    inf = highspy.kHighsInf
    # columns: w (free), t (≥ 0); objective ½wᵀw − vᵀw
    h.addVars(2 * n, np.r_[-inf * np.ones(n), np.zeros(n)], inf * np.ones(2 * n))
    h.changeColsCost(2 * n, np.arange(2 * n, dtype=np.int32), np.r_[-v, np.zeros(n)])
    for k in range(n):
        h.addRow(-inf, 0.0, 2, np.array([k, n + k], dtype=np.int32), np.array([1.0, -1.0]))
        h.addRow(-inf, 0.0, 2, np.array([k, n + k], dtype=np.int32), np.array([-1.0, -1.0]))
    h.addRow(-inf, z, n, np.arange(n, 2 * n, dtype=np.int32), np.ones(n))
    hess = highspy.HighsHessian()
    hess.dim_ = 2 * n
    hess.format_ = highspy.HessianFormat.kTriangular
    hess.start_ = list(range(n + 1)) + [n] * n
    hess.index_ = list(range(n))
    hess.value_ = [1.0] * n
    h.passHessian(hess)
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal, h.modelStatusToString(h.getModelStatus())
    return np.array(h.getSolution().col_value[:n])


CASES = []
_rng = np.random.default_rng(0)
for _n in (1, 2, 7, 40):
    for _scale in (0.05, 1.0, 20.0):
        _v = _rng.normal(size=_n) * _scale
        _l1 = np.abs(_v).sum()
        # radii well inside, near and outside the point's own ℓ1 norm (the last two leave v unchanged)
        for _z in (0.1 * _l1, 0.5 * _l1, 0.95 * _l1, _l1, 3.0 * _l1):
            CASES.append((_v, float(_z)))


@pytest.mark.parametrize("method", ["sort", "linear"])
def test_l1_ball_matches_qp(method):
    for v, z in CASES:
        w = l1_ball(v, z, method=method)
        ref = qp_projection(v, z)
        assert np.allclose(w, ref, atol=1e-6), (v, z)
        assert np.abs(w).sum() <= z + 1e-9
        if np.abs(v).sum() <= z:
            # already inside: the projection is the point itself, exactly
            assert np.array_equal(w, v)


def test_projection_zeroes_small_coordinates_exactly():
    v = np.array([5.0, -4.0, 0.3, -0.2, 0.01])
    for method in ("sort", "linear"):
        w = l1_ball(v, 3.0, method=method)
        ref = qp_projection(v, 3.0)
        assert np.count_nonzero(w) == np.count_nonzero(np.abs(ref) > 1e-7)
        assert np.all(w[2:] == 0.0)          # exact zeros, not small numbers


def test_ties_and_zero_radius():
    v = np.array([1.0, 1.0, 1.0, -1.0, 0.0, 2.0, 2.0])
    for method in ("sort", "linear"):
        for z in (0.5, 2.5, 4.0):
            assert np.allclose(l1_ball(v, z, method=method), qp_projection(v, z), atol=1e-6)
        assert np.array_equal(l1_ball(v, 0.0, method=method), np.zeros_like(v))


def test_linear_and_sort_agree_on_large_vectors():
    rng = np.random.default_rng(3)
    for _ in range(5):
        v = rng.standard_cauchy(size=5000)
        z = float(rng.uniform(0.1, 50.0))
        a = l1_ball(v, z, method="sort")
        b = l1_ball(v, z, method="linear", rng=np.random.default_rng(7))
        assert np.allclose(a, b, atol=1e-10)
        assert abs(np.abs(a).sum() - z) < 1e-8


def test_simplex_projection_matches_qp_on_the_face():
    # on the simplex {x ≥ 0, Σx = z}: for v ≥ 0 with Σv > z this is the ℓ1-ball projection
    rng = np.random.default_rng(5)
    for _ in range(10):
        v = np.abs(rng.normal(size=12)) * 3
        z = 0.3 * v.sum()
        for method in ("sort", "linear"):
            x = simplex(v, z, method=method)
            assert np.allclose(x, qp_projection(v, z), atol=1e-6)
            assert x.sum() == pytest.approx(z) and x.min() >= 0


def test_errors_name_the_parameter():
    with pytest.raises(ParameterError, match="radius"):
        l1_ball([1.0], -1.0)
    with pytest.raises(ParameterError, match="method"):
        l1_ball([1.0], 1.0, method="bisect")
    with pytest.raises(ParameterError, match="1-d"):
        l1_ball(np.ones((2, 2)), 1.0)


# ------------------------------------------------------------------------------------------------------------------
# P1′ by the projected sub-gradient Algorithm 2, against P1′ as an LP over every labeling (highspy directly)

def _p1_ball_case(seed, radius):
    from _enumerated import hinge, tiny
    from test_adaptive import solve_p1_ball
    ds = tiny(seed=seed, n=12, irrelevant=3)
    opt, w_opt = solve_p1_ball(ds, radius)
    r0 = hinge(ds, np.zeros(len(w_opt))).mean()   # R_hinge at w = 0, the start
    assert r0 - opt > 0.5                          # the ball matters: the comparison below is not vacuous
    return ds, opt, r0


@pytest.mark.parametrize("radius", [0.5, 2.0])
def test_batch_subgradient_reaches_the_p1_ball_optimum(radius):
    import mmprog
    from _enumerated import hinge
    ds, opt, r0 = _p1_ball_case(22, radius)
    res = mmprog.fit(ds, program="l1m3n", algorithm="subgradient", lam=radius, max_iter=300)
    # Algorithm 2 returns the last iterate; its risk, recomputed here by enumeration, is near the LP optimum
    risk = hinge(ds, res.w).mean()
    # the method has no lower bound: none is claimed, the risk at w is the upper bound
    assert res.upper_bound == pytest.approx(risk, rel=1e-9, abs=1e-12)
    assert res.primal_objective == -np.inf and res.gap == np.inf
    assert risk - opt <= 0.02 * (r0 - opt)
    assert risk >= opt - 1e-9
    # every iterate stays in the ball
    assert max(h.l1_norm for h in res.history) <= radius * (1 + 1e-12)
    assert res.model is None and res.params["lam"] == radius


def test_online_subgradient_reaches_the_p1_ball_optimum():
    import mmprog
    from _enumerated import hinge
    ds, opt, r0 = _p1_ball_case(21, 2.0)
    res = mmprog.fit(ds, program="l1m3n", algorithm="subgradient", lam=2.0, max_iter=40, variant="online",
                     batch_size=3, output="best", schedule="inv_sqrt", seed=1)
    assert hinge(ds, res.w).mean() - opt <= 0.02 * (r0 - opt)
    assert np.abs(res.w).sum() <= 2.0 * (1 + 1e-12)


def test_subgradient_parameters_are_checked():
    import mmprog
    from _enumerated import tiny
    ds = tiny(seed=1)
    with pytest.raises(ParameterError, match="lam"):
        mmprog.fit(ds, program="l1m3n", algorithm="subgradient")
    with pytest.raises(ParameterError, match="schedule"):
        mmprog.fit(ds, program="l1m3n", algorithm="subgradient", lam=1.0, schedule="cosine")
    with pytest.raises(ParameterError, match="subgradient"):
        mmprog.fit(ds, program="l1m3n", lam=1.0)           # lam without the sub-gradient algorithm
