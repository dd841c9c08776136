"""The elastic-net M³N (program ``enm3n``: ½‖w‖² + λ‖w‖₁ + C Σᵢ ξᵢ) against independent truths.

* the full program with every labeling as an explicit constraint, written with w free and t ≥ |w| (not mmprog's
  μ, ν split) and handed to highspy directly (tests/_enumerated.py), at λ = 0, a middle λ and a λ past which w = 0;
* closed forms: λ = 0 is P0 (the enumerated ℓ2 program, and ``m3n`` fitted by mmprog), and past
  λ̄ = C Σᵢ maxᵧ ‖Δfᵢ(y)‖∞ the optimum is w = 0 with value C Σᵢ maxᵧ Δℓᵢ(y) = C·n·T;
* a second back end (Ipopt, DAQP through the Pyomo model) and the Pyomo route against HiGHS's native one;
* ``verify``'s statements pass on fits and fail on corrupted solutions.
"""
import copy

import numpy as np
import pyomo.environ as pyo
import pytest
import scipy.sparse as sp

import mmprog
from mmprog import duality
from mmprog.exceptions import ParameterError
from mmprog.programs import enm3n, get_program
from mmprog.solvers import get_solver

from _enumerated import T, all_constraints, solve_enumerated, solve_full, tiny

C = 0.7


@pytest.fixture(scope="module")
def ds():
    return tiny(seed=3)


@pytest.fixture(scope="module")
def lam_bar(ds):
    """λ̄ = C Σᵢ maxᵧ ‖Δfᵢ(y)‖∞ ≥ ‖ΔFᵀα‖∞ for every α with Σ_y αᵢ(y) ≤ C: from λ̄ on, w = 0 is optimal."""
    A, dl, ex = all_constraints(ds)
    return C * sum(float(np.abs(A[ex == i]).max()) for i in range(len(ds)))


def fit(ds, lam, **kw):
    kw = {"C": C, "eps": 1e-6, "route": "cutting-plane", **kw}
    return mmprog.fit(ds, program="enm3n", lam=lam, **kw)


# ------------------------------------------------------------------------------------------------ the referee

def test_enumerated_referee_meets_its_closed_forms(ds, lam_bar):
    """The enumerated elastic net at λ = 0 is the enumerated P0, and past λ̄ it is w = 0 at C·n·T."""
    opt0, w0 = solve_full(ds, C, "enet", lam=0.0)
    opt_l2, w_l2 = solve_full(ds, C, "l2")
    assert opt0 == pytest.approx(opt_l2, rel=1e-7)
    np.testing.assert_allclose(w0, w_l2, atol=1e-5)
    opt_big, w_big = solve_full(ds, C, "enet", lam=1.01 * lam_bar)
    assert opt_big == pytest.approx(C * len(ds) * T, rel=1e-9)
    assert np.abs(w_big).max() <= 1e-9


# ------------------------------------------------------------------------------ the fit against the referee

@pytest.mark.parametrize("slack", ["n", "one"])
@pytest.mark.parametrize("which", ["zero", "middle", "past"])
def test_cutting_plane_matches_full_program(ds, lam_bar, which, slack):
    lam = {"zero": 0.0, "middle": 0.05 * lam_bar, "past": 1.01 * lam_bar}[which]
    eps = 1e-6
    opt, w_full = solve_full(ds, C, "enet", lam=lam)
    res = fit(ds, lam, slack=slack, eps=eps)
    assert res.termination == "converged"
    tol = 1e-5 * max(1.0, abs(opt))
    # the master optimum is a lower bound; an eps-feasible w costs at most C·n·eps more than the optimum
    assert res.primal_objective <= opt + tol
    assert opt <= res.primal_objective + C * len(ds) * eps + tol
    assert res.upper_bound >= opt - tol
    # strictly convex: w itself is determined
    np.testing.assert_allclose(res.w, w_full, atol=1e-3 * max(1.0, np.abs(w_full).max()))
    assert res.dual_objective == pytest.approx(res.primal_objective, rel=1e-4, abs=1e-5)
    if which == "past":
        assert res.upper_bound == pytest.approx(C * len(ds) * T, rel=1e-9)
        assert not np.any(res.w)
    if which == "middle":
        # the middle λ is inside the path: some weights are zero, not all
        assert 0 < np.count_nonzero(res.w) < len(res.w)


def test_lambda_zero_is_p0(ds):
    """λ = 0: the optimum of m3n (P0), fitted by mmprog, and the same w."""
    a = fit(ds, 0.0)
    b = mmprog.fit(ds, program="m3n", C=C, eps=1e-6, master="primal", route="cutting-plane")
    assert a.upper_bound == pytest.approx(b.upper_bound, rel=1e-5)
    np.testing.assert_allclose(a.w, b.w, atol=1e-3)


def test_sparsity_grows_with_lambda(ds, lam_bar):
    lams = [0.0, 0.01 * lam_bar, 0.05 * lam_bar, 0.1 * lam_bar, 0.2 * lam_bar, 1.01 * lam_bar]
    counts, truth = [], []
    for lam in lams:
        counts.append(int(np.count_nonzero(fit(ds, lam).w)))
        truth.append(int(np.count_nonzero(np.abs(solve_full(ds, C, "enet", lam=lam)[1]) > 1e-7)))
    assert counts == truth
    assert all(a >= b for a, b in zip(counts, counts[1:])), counts
    assert counts[0] == len(fit(ds, 0.0).w) and counts[-1] == 0 and counts[0] > counts[-2] > 0, counts


def test_weights_are_exact_zeros(ds, lam_bar):
    """The zeros are the active-set solver's bounds μₖ = νₖ = 0 (exact), on the features where |ΔFᵀα|ₖ ≤ λ."""
    res = fit(ds, 0.1 * lam_bar)
    g = res.model.ws.dF().T @ res.alpha
    zero = res.w == 0.0
    assert zero.any()
    assert np.all(np.abs(g[zero]) <= 0.1 * lam_bar + 1e-6)


@pytest.mark.parametrize("solver", ["ipopt", "daqp"])
def test_second_back_end_same_optimum(ds, lam_bar, solver):
    if not get_solver(solver).availability():
        pytest.skip(f"{solver}: {get_solver(solver).availability().reason}")
    lam = 0.05 * lam_bar
    a = fit(ds, lam, solver="highs")
    b = fit(ds, lam, solver=solver)
    assert b.termination == "converged"
    assert b.upper_bound == pytest.approx(a.upper_bound, rel=1e-5)
    np.testing.assert_allclose(b.w, a.w, atol=1e-3)


def test_native_highs_route_equals_pyomo_route(ds, lam_bar):
    """The master handed to highspy from its arrays (form "qp_rows") and the Pyomo model through Pyomo's HiGHS
    interface: same optimum, same multipliers."""
    res = fit(ds, 0.05 * lam_bar, slack="one")
    prog = get_program("enm3n", **res.params)
    assert res.model.solved_with == "highs-native"
    native = prog.read_solution(res.model)
    res.model.native = False
    res.solve_master(prog, res.model, get_solver("highs"))
    assert res.model.solved_with == "highs"
    pyomo_route = prog.read_solution(res.model)
    assert pyomo_route.objective == pytest.approx(native.objective, rel=1e-7)
    np.testing.assert_allclose(pyomo_route.w, native.w, atol=1e-6)
    np.testing.assert_allclose(pyomo_route.alpha, native.alpha, atol=1e-5)


def test_native_ipopt_route_equals_pyomo_ipopt_route_and_highs(ds, lam_bar):
    """Ipopt from the arrays (form "qp_rows") and Ipopt through the Pyomo model reach HiGHS's optimum with the same
    multipliers (interior point: to 1e-6, not to the last digit)."""
    if not get_solver("ipopt").availability():
        pytest.skip(get_solver("ipopt").availability().reason)
    lam = 0.05 * lam_bar
    ref = fit(ds, lam, solver="highs")
    res = fit(ds, lam, solver="ipopt")
    prog = get_program("enm3n", **res.params)
    assert res.model.solved_with == "ipopt-native"
    native = prog.read_solution(res.model)
    res.model.native = False
    res.solve_master(prog, res.model, get_solver("ipopt"))
    assert res.model.solved_with == "ipopt"
    pyomo_route = prog.read_solution(res.model)
    assert pyomo_route.objective == pytest.approx(native.objective, rel=1e-6)
    np.testing.assert_allclose(pyomo_route.w, native.w, atol=1e-5)
    np.testing.assert_allclose(pyomo_route.alpha, native.alpha, atol=1e-4)
    assert native.dual_objective == pytest.approx(native.objective, rel=1e-6)
    assert res.upper_bound == pytest.approx(ref.upper_bound, rel=1e-6)


def test_preferred_solver_by_size():
    """HiGHS (exact zeros) up to AUTO_IPOPT_DIM features, Ipopt above (HiGHS's active set stalls there)."""
    prog = get_program("enm3n")
    assert prog.preferred_solver(enm3n.AUTO_IPOPT_DIM) is None
    assert prog.preferred_solver(enm3n.AUTO_IPOPT_DIM + 1) == "ipopt"


def test_master_is_written_on_demand_and_states_the_program(ds, lam_bar):
    """build + add_cuts write no quadratic term and no row; materialise writes them, and the Pyomo objective then
    equals ½‖w‖² + λ‖w‖₁ + C Σξ at the solution."""
    lam = 0.05 * lam_bar
    res = fit(ds, lam)
    prog = get_program("enm3n", C=C, lam=lam)
    m = res.model
    prog.materialise(m)
    assert len(m.cuts) == m.ws.size
    value = pyo.value(m.objective)
    assert value == pytest.approx(prog.regulariser(res.w) + C * float(res.xi.sum()), rel=1e-7)
    from mmprog.programs.base import Dims
    fresh = prog.build(Dims(n=3, dim=5, n_slacks=3))
    assert fresh.quadratic.expr.is_constant() and len(fresh.cuts) == 0


# ----------------------------------------------------------------------------------------- the explicit dual

@pytest.mark.parametrize("lam", [0.0, 1.0, 40.0])
def test_fenchel_dual_model_equals_full_primal(ds, lam):
    """The explicit dual QP over (α, s) on every labeling has the enumerated primal's optimum, gives back its w
    (= soft(ΔFᵀα, λ)), and its α's value by the closed-form dual Σ α Δℓ − ½‖soft(ΔFᵀα, λ)‖² is the same."""
    A, dl, ex = all_constraints(ds)
    keep = dl > 0          # the ground truth's own labeling (Δf = 0, Δℓ = 0) is the budget's slack
    A, dl, ex = A[keep], dl[keep], ex[keep]
    n = len(ds)
    opt, w = solve_enumerated(A, dl, ex, n, C, "enet", lam=lam)
    arrays = duality.WSArrays(positions=np.arange(len(dl)), F=sp.csr_matrix(A), dl=dl, slack=ex, n_slacks=n,
                              budget=C)
    dm = enm3n.enet_dual_model(arrays, lam)
    get_solver("highs").solve(dm)
    assert pyo.value(dm.objective) == pytest.approx(opt, rel=1e-6, abs=1e-7)
    w_d = np.zeros(A.shape[1])
    w_d[dm.support] = [dm.w[int(k)].value for k in dm.support]
    np.testing.assert_allclose(w_d, w, atol=1e-5)
    alpha = np.array([dm.alpha[r + 1].value for r in range(len(dl))])
    assert enm3n.enet_dual_value(arrays, alpha, lam) == pytest.approx(opt, rel=1e-6, abs=1e-7)
    np.testing.assert_allclose(enm3n.soft(A.T @ alpha, lam), w, atol=1e-5)


def test_soft_threshold():
    v = np.array([-3.0, -0.5, 0.0, 0.5, 2.0])
    np.testing.assert_array_equal(enm3n.soft(v, 1.0), [-2.0, 0.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(enm3n.soft(v, 0.0), v)


# ------------------------------------------------------------------------------------------------- verify

REQUIRED = ["primal feasibility", "dual feasibility", "master model", "split:", "strong duality: ½‖w‖²",
            "stationarity: w = soft", "complementary slackness", "dual sparsity",
            "strong duality: value = optimum of the explicit Fenchel dual", "explicit dual: its w",
            "dual of the dual", "P0 bracket: P0 optimum ≤", "P0 bracket: elastic-net optimum ≤",
            "cross-solver: optimum by highs = optimum by ipopt", "cross-solver: optimum by highs = optimum by daqp"]


@pytest.fixture(scope="module")
def results(ds, lam_bar):
    return {"zero-n": fit(ds, 0.0, eps=1e-4), "middle-n": fit(ds, 0.05 * lam_bar, eps=1e-4),
            "middle-one": fit(ds, 0.05 * lam_bar, eps=1e-4, slack="one"),
            "past-n": fit(ds, 1.01 * lam_bar, eps=1e-4)}


@pytest.mark.parametrize("key", ["zero-n", "middle-n", "middle-one", "past-n"])
def test_verify_passes_every_statement(results, ds, key):
    checks = duality.check(results[key], dataset=ds)
    bad = [(c.statement, c.lhs, c.rhs, c.reason) for c in checks if c.status == "fail"]
    assert not bad
    for c in checks:
        if c.status == "skipped":
            assert c.reason
    for prefix in REQUIRED:
        found = [c for c in checks if c.statement.startswith(prefix)]
        assert found, (prefix, [c.statement for c in checks])
        assert all(c.status == "pass" for c in found), [(c.statement, c.reason) for c in found]


def test_verify_at_lambda_zero_brackets_to_p0(results):
    checks = duality.check(results["zero-n"])
    lo, hi = (c for c in checks if c.statement.startswith("P0 bracket"))
    # λ = 0: both sides of the bracket are P0's optimum
    assert lo.lhs == pytest.approx(lo.rhs, rel=1e-6) and hi.lhs == pytest.approx(hi.rhs, rel=1e-6)


def corrupted(res, **arrays):
    bad = copy.copy(res)
    for k, v in arrays.items():
        setattr(bad, k, v)
    return bad


def failing(res):
    return [c.statement for c in duality.check(res) if c.status == "fail"]


def test_corrupted_solutions_fail(results):
    res = results["middle-n"]
    w = res.w.copy()
    k = int(np.argmax(np.abs(w)))
    w[k] *= 1.5
    f = failing(corrupted(res, w=w))
    assert any(s.startswith("stationarity: w = soft") for s in f), f
    assert any(s.startswith("strong duality: ½‖w‖²") for s in f), f
    # α ignoring the soft threshold: the stationarity of w = ΔFᵀα (P0's) is not this program's
    f = failing(corrupted(res, alpha=res.alpha * 1.3))
    assert any(s.startswith("dual feasibility") or s.startswith("strong duality: ½‖w‖²") for s in f), f
    xi = res.xi.copy()
    xi[int(np.argmax(xi))] *= 0.5
    f = failing(corrupted(res, xi=xi))
    assert any(s.startswith("primal feasibility") for s in f), f


# ---------------------------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("lam", [-0.1, float("nan"), float("inf"), "0.1", True, None])
def test_bad_lam_is_one_line_naming_it(ds, lam):
    with pytest.raises(ParameterError) as e:
        mmprog.fit(ds, program="enm3n", lam=lam)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("lam must be a finite float ≥ 0") and repr(lam) in msg


@pytest.mark.parametrize("C_", [0.0, -1.0, float("nan")])
def test_bad_C_is_one_line_naming_it(ds, C_):
    with pytest.raises(ParameterError) as e:
        mmprog.fit(ds, program="enm3n", C=C_, lam=0.1)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("C must be a finite float > 0") and repr(C_) in msg


def test_unknown_parameter_names_the_accepted_ones(ds):
    with pytest.raises(ParameterError, match="accepted: C, lam"):
        mmprog.fit(ds, program="enm3n", c1=0.1)


def test_cli_bad_lam_exits_2(capsys):
    from mmprog.cli import main
    assert main(["train", "--data", "tiny:seed=0", "--program", "enm3n", "--param", "lam=-1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "lam must be a finite float ≥ 0" in err and len(err.splitlines()) == 1
