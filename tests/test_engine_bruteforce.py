"""The cutting-plane optimum equals the full program with every labeling as an explicit constraint.

Ground truth is independent of mmprog's feature map, programs and solver registry (tests/_enumerated.py): features
are computed by explicit loops over positions, every labeling of every example is enumerated, and the full QP/LP is
handed to highspy directly.
"""
import numpy as np
import pytest

import mmprog
from mmprog.datasets.base import SequenceDataset

from _enumerated import D, K, solve_full, tiny


CASES = [("m3n", {"master": "primal"}), ("m3n", {"master": "dual"}), ("l1m3n", {})]


@pytest.mark.parametrize("slack", ["n", "one"])
@pytest.mark.parametrize("program,kw", CASES)
@pytest.mark.parametrize("solver", ["highs", "ipopt"])
def test_cutting_plane_matches_full_program(program, kw, slack, solver):
    from mmprog.solvers import get_solver
    if not get_solver(solver).availability():
        pytest.skip(f"{solver}: {get_solver(solver).availability().reason}")
    ds = tiny(seed=3)
    C, eps = 0.7, 1e-4
    opt, w_full = solve_full(ds, C, "l2" if program == "m3n" else "l1")
    res = mmprog.fit(ds, program=program, C=C, slack=slack, solver=solver, eps=eps, **kw)
    assert res.termination == "converged"
    # master optimum is a lower bound; an eps-feasible w costs at most C·n·eps more than the optimum
    tol = 1e-5 * max(1.0, abs(opt))
    assert res.primal_objective <= opt + tol
    assert opt <= res.primal_objective + C * len(ds) * eps + tol
    # the full objective at the returned w (ξ = hinge) is within the same window
    assert res.upper_bound >= opt - tol
    if program == "m3n":
        # strictly convex: w itself is determined
        assert np.allclose(res.w, w_full, atol=5e-2 * max(1.0, np.abs(w_full).max()))
    # primal and dual objectives agree within the solver's tolerance
    assert res.dual_objective == pytest.approx(res.primal_objective, rel=1e-4, abs=1e-5)


def test_l1_solution_is_exactly_sparse_on_irrelevant_features():
    ds = tiny(seed=5, n=30, irrelevant=6)
    res = mmprog.fit(ds, program="l1m3n", C=0.05, solver="highs", eps=1e-6)
    blocks = res.weights()
    irrelevant = blocks["state"][D:]
    # an LP vertex: irrelevant weights are exact zeros, not small numbers
    assert np.count_nonzero(irrelevant) <= 2
    assert np.count_nonzero(blocks["state"][:D]) >= 1
    opt, _ = solve_full(ds, 0.05, "l1")
    assert opt <= res.primal_objective + 0.05 * len(ds) * 1e-6 + 1e-6
    assert res.primal_objective <= opt + 1e-6


def test_primal_and_dual_master_agree():
    ds = tiny(seed=11)
    a = mmprog.fit(ds, program="m3n", C=2.0, master="primal", solver="highs", eps=1e-6)
    b = mmprog.fit(ds, program="m3n", C=2.0, master="dual", solver="highs", eps=1e-6)
    assert a.primal_objective == pytest.approx(b.primal_objective, rel=1e-5)
    assert np.allclose(a.w, b.w, atol=1e-3)


def test_gram_dual_native_highs_route_equals_pyomo_route():
    """The dual master solved from its arrays through highspy gives what Pyomo's own HiGHS interface gives on the
    Pyomo model (the statement of the program)."""
    from mmprog.engine.loop import run
    from mmprog.features import ChainFeatureMap
    from mmprog.engine.oracle import Oracle
    from mmprog.programs import get_program
    from mmprog.solvers import get_solver
    ds = tiny(seed=13)
    fmap = ChainFeatureMap.from_dataset(ds)
    orc = Oracle(fmap, fmap.prepare(ds))
    prog = get_program("m3n", C=1.5, master="dual")
    native = run(prog, orc, solver=get_solver("highs"), slack="one", eps=1e-6)
    # re-solve the final working set through Pyomo's interface
    model = native.model
    model.native = False
    prog.solve(model, get_solver("highs"))   # materialises ½αᵀGα in the Pyomo objective first
    again = prog.read_solution(model)
    assert again.objective == pytest.approx(native.solution.objective, rel=1e-6, abs=1e-8)
    assert np.allclose(again.w, native.solution.w, atol=1e-5)


def test_l1_native_highs_route_equals_pyomo_route():
    """P1's rows handed to highspy as CSR blocks give what the Pyomo model (rows written on demand) gives through
    Pyomo's persistent HiGHS interface, duals included."""
    from mmprog.engine.loop import run
    from mmprog.features import ChainFeatureMap
    from mmprog.engine.oracle import Oracle
    from mmprog.programs import get_program
    from mmprog.solvers import get_solver
    ds = tiny(seed=17)
    fmap = ChainFeatureMap.from_dataset(ds)
    orc = Oracle(fmap, fmap.prepare(ds))
    prog = get_program("l1m3n", C=0.8)
    native = run(prog, orc, solver=get_solver("highs"), slack="n", eps=1e-6)
    model = native.model
    model.native = False
    prog.solve(model, get_solver("highs"))
    again = prog.read_solution(model)
    assert len(model.ws.components) == model.ws.size
    assert again.objective == pytest.approx(native.solution.objective, rel=1e-7, abs=1e-9)
    # both dual vectors certify the same optimum (an LP's duals need not be unique, their value is)
    dl = model.ws.dl_array()
    assert again.alpha @ dl == pytest.approx(native.solution.alpha @ dl, rel=1e-6, abs=1e-8)
    assert native.solution.alpha @ dl == pytest.approx(native.solution.objective, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("hidden", [False, True])
def test_one_slack_sum_equals_average_of_per_example_cuts(hidden):
    """The direct 1-slack separation (Xᵀ(E_gold − E_ŷ), path-score hinge) equals averaging the per-example cuts."""
    from mmprog.cuts import Cuts
    from mmprog.features import ChainFeatureMap
    from mmprog.engine.oracle import Oracle
    rng = np.random.default_rng(21)
    ds = tiny(seed=21, n=15)
    if hidden:
        Y = [np.where(rng.random(len(y)) < 0.3, -1, y) for y in ds.Y]
        ds = SequenceDataset(list(ds.X), Y, K)
    fmap = ChainFeatureMap.from_dataset(ds)
    orc = Oracle(fmap, fmap.prepare(ds))
    w = rng.normal(size=fmap.dim)
    one, hinge = orc.separate_one_slack(w)
    cuts, hinge_rows = orc.separate(w)
    ref = Cuts.one_slack(cuts, len(ds))
    assert np.allclose(one.dF.toarray(), ref.dF.toarray(), atol=1e-10)
    assert one.dl == pytest.approx(ref.dl)
    assert np.allclose(hinge, hinge_rows, atol=1e-9)


@pytest.mark.parametrize("dense", [False, True])
def test_fused_chain_oracle_matches_enumeration(dense):
    """The compiled 1-slack oracle (loss-augmented Viterbi fused with Δℓ, ΔF and hinge) against enumeration of
    every labeling: hinge Hᵢ = max_y [wᵀf(xᵢ, y) + Δℓᵢ(y)] − wᵀf(xᵢ, yᵢ), and Σ ΔF, Σ Δℓ of the labelings decoded,
    which attain that maximum; lengths 1 to 4, integer-valued inputs so that ties occur."""
    import itertools
    import scipy.sparse as sp
    from _enumerated import joint_f
    from mmprog.features import ChainFeatureMap
    rng = np.random.default_rng(41)
    for trial in range(12):
        n, d = 9, 3
        lengths = rng.integers(1, 5, n)
        X = [rng.integers(-1, 2, (int(L), d)).astype(float) for L in lengths]
        if not dense:
            X = [sp.csr_matrix(x) for x in X]
        Y = [rng.integers(0, K, int(L)) for L in lengths]
        ds = SequenceDataset(X, Y, K)
        fmap = ChainFeatureMap.from_dataset(ds)
        prep = fmap.prepare(ds)
        w = rng.integers(-2, 3, fmap.dim).astype(float)
        dF_sum, dl_sum, hinge = fmap.separate_sum(w, prep)
        labels = fmap.decode(w, prep, loss_augmented=True)
        ref_dF, ref_dl = np.zeros(fmap.dim), 0.0
        for i, L in enumerate(lengths):
            x = X[i].toarray() if not dense else X[i]
            gold_score = w @ joint_f(x, Y[i])
            best = max(w @ joint_f(x, np.array(y)) + np.sum(np.array(y) != Y[i])
                       for y in itertools.product(range(K), repeat=int(L)))
            assert hinge[i] == pytest.approx(best - gold_score, abs=1e-12)
            y_hat = labels[i, :L]
            assert w @ joint_f(x, y_hat) + np.sum(y_hat != Y[i]) == pytest.approx(best, abs=1e-12)
            ref_dF += joint_f(x, Y[i]) - joint_f(x, y_hat)
            ref_dl += np.sum(y_hat != Y[i])
        np.testing.assert_allclose(dF_sum, ref_dF, atol=1e-12)
        assert dl_sum == ref_dl


def test_decode_rejects_a_non_finite_loss_weight():
    from mmprog.exceptions import ParameterError
    from mmprog.features import ChainFeatureMap
    ds = tiny(seed=2, n=3)
    fmap = ChainFeatureMap.from_dataset(ds)
    with pytest.raises(ParameterError, match=r"loss_weight must be a finite float; got inf"):
        fmap.decode(np.zeros(fmap.dim), fmap.prepare(ds), loss_augmented=True, loss_weight=float("inf"))


@pytest.mark.parametrize("hidden", [False, True])
@pytest.mark.parametrize("dense", [False, True])
def test_batch_with_one_long_sequence_gives_the_per_example_answers(hidden, dense):
    """A batch with one very long sequence (as CoNLL-2002's 1,238-token one) is decoded and separated on the stacked
    tokens (sequences back to back): every answer equals the one of the example decoded alone."""
    import scipy.sparse as sp
    from mmprog.features import ChainFeatureMap
    rng = np.random.default_rng(5)
    lengths = np.r_[rng.integers(1, 12, 300), [1500, 40], rng.integers(1, 4, 20)]
    X = [sp.random(int(n), 30, density=0.3, random_state=i, format="csr") for i, n in enumerate(lengths)]
    if dense:
        X = [x.toarray() for x in X]
    Y = [rng.integers(0, 9, int(n)) for n in lengths]
    if hidden:
        Y = [np.where(rng.random(len(y)) < 0.2, -1, y) for y in Y]
    ds = SequenceDataset(X, Y, 9)
    fmap = ChainFeatureMap.from_dataset(ds)
    prep = fmap.prepare(ds)
    w = rng.normal(size=fmap.dim)
    labels = fmap.decode(w, prep, loss_augmented=True)
    dF_sum, dl_sum, hinge = fmap.separate_sum(w, prep)
    ref_dF, ref_dl = np.zeros(fmap.dim), 0.0
    for i, n in enumerate(lengths):
        alone = fmap.decode(w, prep, [i], loss_augmented=True)
        assert np.array_equal(labels[i, :n], alone[0, :n]) and np.all(labels[i, n:] == -1)
        dF_i, dl_i, hinge_i = fmap.separate_sum(w, prep, [i])
        ref_dF += dF_i
        ref_dl += dl_i
        assert hinge[i] == pytest.approx(hinge_i[0], abs=1e-9)
    assert np.allclose(dF_sum, ref_dF, atol=1e-9)
    assert dl_sum == ref_dl


@pytest.mark.parametrize("slack", ["n", "one"])
@pytest.mark.parametrize("program,kw", [("l1m3n", {}), ("m3n", {"master": "primal"}), ("m3n", {"master": "dual"})])
def test_dropping_inactive_cuts_keeps_the_optimum(program, kw, slack):
    ds = tiny(seed=23)
    C, eps = 0.9, 1e-5
    opt, _ = solve_full(ds, C, "l2" if program == "m3n" else "l1")
    res = mmprog.fit(ds, program=program, C=C, eps=eps, drop_after=1, slack=slack, **kw)
    assert res.termination == "converged"
    ws = res.model.ws
    dropped = np.nonzero(~ws.active_mask())[0]
    assert len(dropped)                               # something was dropped
    # dropped rows were freed: the storage holds exactly the active rows' non-zeros
    assert set(dropped.tolist()) == ws.released
    assert ws.dF()[dropped].nnz == 0 and ws.nnz == ws.dF()[ws.active_mask()].nnz
    assert opt - 1e-5 <= res.primal_objective + C * len(ds) * eps + 1e-5
    assert res.primal_objective <= opt + 1e-5 * max(1, opt)


def test_released_rows_leave_the_active_rows_and_their_gram_untouched():
    from scipy import sparse as sp
    from mmprog.cuts import Cuts
    from mmprog.exceptions import ParameterError
    from mmprog.cuts import WorkingSet
    rng = np.random.default_rng(0)
    F = sp.random(12, 40, density=0.3, random_state=1, format="csr")
    ws = WorkingSet(40)
    ws.add(Cuts(np.arange(7) % 3, F[:7], rng.random(7)))
    ws.add(Cuts(np.arange(5) % 3, F[7:], rng.random(5)))
    before = ws.gram()
    for p in (0, 3, 8):
        ws.active[p] = False
    with pytest.raises(ParameterError, match="still active"):
        ws.release([1])                               # still active
    ws.release([0, 3, 8])
    keep = np.setdiff1d(np.arange(12), [0, 3, 8])
    assert ws.dF()[[0, 3, 8]].nnz == 0 and ws.nnz == F[keep].nnz
    assert (ws.dF()[keep] != F[keep]).nnz == 0
    G = ws.gram()
    assert np.array_equal(G[np.ix_(keep, keep)], before[np.ix_(keep, keep)])
    assert not G[[0, 3, 8]].any()
    ws.add(Cuts(np.zeros(1, int), F[:1], np.ones(1)))   # growing after a release appends after the kept rows
    assert (ws.dF()[12] != F[0]).nnz == 0 and ws.dF()[0].nnz == 0


def test_limits_are_reported_as_termination():
    ds = tiny(seed=2)
    assert mmprog.fit(ds, program="l1m3n", C=1.0, eps=1e-9, max_iter=2).termination == "max_iter"
    res = mmprog.fit(ds, program="m3n", C=1.0, eps=1e-12, max_iter=10_000, time_limit=1e-3)
    assert res.termination == "time_limit"


@pytest.mark.parametrize("slack", ["one", "n"])
@pytest.mark.parametrize("program,kw", [("m3n", {"master": "dual"}), ("m3n", {"master": "dual", "solver": "highs"}),
                                        ("m3n", {"master": "primal"}), ("mtl", {})])
def test_aggregating_the_oldest_cuts_keeps_the_optimum(program, kw, slack):
    ds = tiny(seed=29)
    # a bundle of 3 aggregated cuts needs more rounds to a tight eps than the full working set (35 against 20 at
    # 1e-3 in the 1-slack form)
    C, eps = 0.8, 1e-3 if slack == "one" else 1e-5
    res = mmprog.fit(ds, program=program, C=C, eps=eps, slack=slack, max_cuts=3, max_iter=1000, **kw)
    assert res.termination == "converged"
    ws = res.model.ws
    held = np.setdiff1d(np.arange(ws.size), sorted(ws.released))
    # at most max_cuts active cuts per slack, and only their rows are held
    counts = np.bincount(ws.example_array()[ws.active_mask()])
    assert counts.max() <= 3 and len(ws.released) > 0
    # the multipliers of the master as it stands (aggregated rows deactivated) close the duality gap
    assert res.dual_objective == pytest.approx(res.primal_objective, rel=1e-4, abs=1e-5)
    assert ws.nnz == ws.dF()[held].nnz and set(held.tolist()) == set(np.nonzero(ws.active_mask())[0].tolist())
    if program == "m3n":
        opt, _ = solve_full(ds, C, "l2")
    else:
        opt = mmprog.fit(ds, program=program, C=C, eps=1e-5, slack=slack, max_iter=1000, **kw).primal_objective
    tol = 1e-5 * max(1.0, abs(opt))
    assert res.primal_objective <= opt + C * len(ds) * eps + tol
    assert opt <= res.primal_objective + C * len(ds) * eps + tol
    assert res.upper_bound >= opt - tol


def test_combined_cut_is_the_weighted_sum_of_the_rows():
    from scipy import sparse as sp
    from mmprog.cuts import Cuts
    from mmprog.exceptions import ParameterError
    from mmprog.cuts import WorkingSet
    rng = np.random.default_rng(4)
    F = sp.random(6, 50, density=0.2, random_state=2, format="lil")
    F[1, 3], F[2, 3] = 1.0, -2.0                      # cancels under the weights below: no explicit zero kept
    F = F.tocsr()
    ws = WorkingSet(50)
    dl = rng.random(6)
    ws.add(Cuts(np.zeros(6, int), F, dl))
    lam = np.array([0.0, 2.0, 1.0, 0.5])
    row, d = ws.combine([0, 1, 2, 5], lam)
    want = lam @ F[[0, 1, 2, 5]].toarray()
    assert row.shape == (1, 50) and np.all(np.diff(row.indices) > 0) and np.all(row.data != 0)
    np.testing.assert_allclose(row.toarray().ravel(), want, rtol=0, atol=1e-15)
    assert row[0, 3] == 0.0 and d == pytest.approx(lam @ dl[[0, 1, 2, 5]])
    ws.active[5] = False
    ws.release([5])
    with pytest.raises(ParameterError, match="released"):
        ws.combine([4, 5], np.ones(2))
