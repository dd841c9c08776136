"""The block-coordinate Frank–Wolfe route (mmprog.engine.bcfw) against the enumerated optimum of P0 and the cutting plane.

Ground truth is tests/_enumerated.py: features by explicit loops, every labeling of every example as a constraint,
the full QP handed to highspy directly — independent of the route's compiled kernels, Gram matrices and caches.
"""
import numpy as np
import pytest

import mmprog
from mmprog.engine import bcfw, memory
from mmprog.programs import get_program
from mmprog.datasets.base import SequenceDataset
from mmprog.exceptions import DataError, ParameterError
from mmprog.features import ChainFeatureMap
from mmprog.engine.oracle import Oracle

from _enumerated import K, hinge, solve_full, tiny
from test_memory import mapped


def _oracle(ds, **kw):
    fmap = ChainFeatureMap.from_dataset(ds, **kw)
    return Oracle(fmap, fmap.prepare(ds))


def _full_objective(ds, w, C):
    return 0.5 * float(w @ w) + C * float(hinge(ds, w).sum())


@pytest.mark.parametrize("seed,C,cache", [(3, 0.7, 32), (11, 2.0, 32), (7, 0.3, 4)])
def test_reaches_the_enumerated_optimum_and_every_check_brackets_it(seed, C, cache):
    """cache 4 (gold and three labelings) fills caches, so evictions happen on the way (a cache smaller than the
    optimum's support cannot reach it: cache 3 stalls at gap 4e-3 on this instance)."""
    ds = tiny(seed=seed)
    opt, w_full = solve_full(ds, C)
    orc = _oracle(ds)
    run = bcfw.fit(orc, C=C, gap_tol=1e-7, max_iter=3000, check_every=1, cache_size=cache)
    assert run.termination == "converged"
    tol = 1e-7 * max(1.0, abs(opt))
    for check in run.history:
        # the certificate is a true bracket of P0's optimum at every check, not only at the end
        assert check.lower <= opt + tol
        assert check.upper >= opt - tol
    assert run.gap <= 1e-7
    assert run.upper_bound - run.lower_bound <= 1e-7 * max(1.0, abs(run.upper_bound)) + 1e-12
    # the upper bound is the full objective at the returned w, recomputed here by enumeration
    assert _full_objective(ds, run.w, C) == pytest.approx(run.upper_bound, rel=1e-9, abs=1e-9)
    # strictly convex: w itself is P0's
    assert np.allclose(run.w, w_full, atol=1e-3 * max(1.0, np.abs(w_full).max()))
    if cache == 4:
        assert run.history[-1].evicted > 0


def test_same_solution_as_the_cutting_plane_route():
    ds = tiny(seed=13)
    C = 1.5
    cp = mmprog.fit(ds, program="m3n", C=C, solver="highs", eps=1e-7)
    assert cp.termination == "converged"
    run = bcfw.fit(_oracle(ds), C=C, gap_tol=1e-7, max_iter=3000, check_every=1)
    assert run.termination == "converged"
    # both objectives are within their certificates of one optimum
    assert run.lower_bound <= cp.upper_bound + 1e-7
    assert cp.primal_objective <= run.upper_bound + 1e-7
    assert np.allclose(run.w, cp.w, atol=1e-3 * max(1.0, np.abs(cp.w).max()))


def test_working_set_is_what_was_solved():
    """The cuts and α handed out give back w(α) and the certified lower bound, and P0's Pyomo master on them has
    its optimum between the certified bounds."""
    from mmprog.solvers import get_solver
    ds = tiny(seed=5)
    C = 0.8
    orc = _oracle(ds)
    run = bcfw.fit(orc, C=C, gap_tol=1e-3, max_iter=3000, check_every=1, average=False)
    cuts, alpha = run.working_set(orc.fmap, orc.prepared)
    assert len(cuts) == len(alpha) > 0 and np.all(alpha > 0)
    # n-slack budgets: Σ_y αᵢ(y) ≤ C per example
    assert np.all(np.bincount(cuts.example, weights=alpha, minlength=len(ds)) <= C * (1 + 1e-12))
    w_alpha = cuts.dF.T @ alpha
    assert np.allclose(w_alpha, run.w_dual, atol=1e-10)
    assert alpha @ cuts.dl - 0.5 * w_alpha @ w_alpha == pytest.approx(run.lower_bound, rel=1e-10, abs=1e-10)
    # cuts are rows of the enumerated constraint set: Δℓ is the Hamming loss of each labeling
    for r in range(len(cuts)):
        assert cuts.dl[r] == np.sum(cuts.labelings[r, :len(ds.Y[cuts.example[r]])] != ds.Y[cuts.example[r]])
    prog, model, a, form = bcfw.master(run, orc.fmap, orc.prepared, get_program("m3n", C=run.C, master="dual"))
    assert form == "n" and np.array_equal(a, alpha)
    prog.solve(model, get_solver("highs"))
    sol = prog.read_solution(model)
    opt, _ = solve_full(ds, C)
    assert run.lower_bound - 1e-7 <= sol.objective <= opt + 1e-7
    assert sol.objective <= run.upper_bound + 1e-7


def test_engine_run_gives_a_result_carrying_the_certificate():
    from mmprog.result import Result
    ds = tiny(seed=9)
    orc = _oracle(ds)
    run = bcfw.fit(orc, C=1.0, gap_tol=1e-4, max_iter=3000, check_every=1)
    er, slack = bcfw.engine_run(run, orc.fmap, orc.prepared, get_program("m3n", C=run.C, master="dual"))
    assert slack == "n"
    res = Result(orc.fmap, er, "m3n", {"C": 1.0}, "bcfw", slack)
    assert res.termination == "converged"
    assert res.gap == pytest.approx(run.gap, rel=1e-12)
    assert res.gap <= 1e-4
    assert res.n_cuts == len(res.alpha)
    # its Gram dual master, stated on first reading, holds those cuts with the route's α loaded
    assert res.model.master == "dual" and res.model.ws.size == res.n_cuts
    np.testing.assert_array_equal([v.value for v in res.model.ws.components], res.alpha)
    assert res.history[-1].gap == pytest.approx(run.gap)
    np.testing.assert_array_equal(res.predict(ds)[0], orc.fmap.decode(run.w, orc.prepared)[0][: len(ds.Y[0])])


def test_resumed_run_reaches_the_same_certificate(tmp_path):
    ds = tiny(seed=21, n=15)
    C = 1.2
    opt, _ = solve_full(ds, C)
    orc = _oracle(ds)
    first = bcfw.fit(orc, C=C, gap_tol=1e-7, max_iter=2, check_every=1)
    assert first.termination == "max_iter" and first.gap > 1e-7
    path = tmp_path / "ws.npz"
    first.save(str(path))
    resumed = bcfw.fit(orc, C=C, gap_tol=1e-7, max_iter=3000, check_every=1, resume=str(path))
    # the resumed fit starts where the first stopped (its α: the same dual value, not zero)
    assert resumed.history[0].lower == pytest.approx(first.lower_bound, rel=1e-10)
    fresh = bcfw.fit(orc, C=C, gap_tol=1e-7, max_iter=3000, check_every=1)
    assert resumed.termination == fresh.termination == "converged"
    for run in (resumed, fresh):
        assert run.lower_bound <= opt + 1e-7 <= run.upper_bound + 2e-7
    assert resumed.upper_bound == pytest.approx(fresh.upper_bound, rel=1e-6)
    with pytest.raises(ParameterError, match="C is 1.2 in the saved working set; got 1.0"):
        bcfw.fit(orc, C=1.0, resume=str(path))
    other = _oracle(tiny(seed=21, n=14))
    with pytest.raises(DataError, match="saved working set is of 15 examples"):
        bcfw.fit(other, C=C, resume=str(path))


def test_refuses_what_it_does_not_cover():
    ds = tiny(seed=2, n=4)
    with pytest.raises(ParameterError, match="chain map .first or second order. without edge, start/stop or bias"):
        bcfw.fit(_oracle(ds, bias=True))
    hidden = SequenceDataset(list(ds.X), [np.r_[-1, y[1:]] for y in ds.Y], K)
    with pytest.raises(DataError, match="needs every gold label observed"):
        bcfw.fit(_oracle(hidden))
    with pytest.raises(ParameterError, match="C must be a finite float > 0"):
        bcfw.fit(_oracle(ds), C=0.0)
    with pytest.raises(ParameterError, match="cost_power must be a finite float ≥ 0"):
        bcfw.fit(_oracle(ds), cost_power=-0.5)


@pytest.mark.parametrize("kappa", [0.0, 0.5, 2.0])
def test_gap_sampling_draws_in_proportion_to_gap_over_cost_to_kappa(kappa):
    """The visits of a gap-sampled pass, counted over many draws, follow gᵢ / (Lᵢ·|Sᵢ|)^κ (a block with no gap is
    never drawn)."""
    ds = tiny(seed=5, n=6)
    # sentences of 1 to 4 tokens, so that both factors of the cost vary
    ds = SequenceDataset([x[:L] for x, L in zip(ds.X, (4, 1, 3, 2, 4, 3))],
                         [y[:L] for y, L in zip(ds.Y, (4, 1, 3, 2, 4, 3))], K)
    fw = bcfw.FrankWolfe(_oracle(ds), 8, None, 3, dict(C=1.0, inner=10, tol=1e-12, average=True, ema=0.3,
                                                          verbose=False, cache_passes=0, cache_sampling="gap",
                                                          cache_rule="fixed", lam=0.0, cost_power=kappa))
    gaps = np.array([0.5, 2.0, 0.0, 1.0, 3.0, 0.25])
    fw.cnt[:] = [1, 4, 2, 3, 7, 2]
    want = gaps / (np.asarray(ds.lengths, float) * fw.cnt) ** kappa
    want /= want.sum()
    got = np.bincount(np.concatenate([fw.draw(gaps) for _ in range(20000)]), minlength=6) / (20000 * 6)
    assert got[2] == 0.0
    assert np.allclose(got, want, atol=5e-3)


@pytest.mark.parametrize("lam", [0.0, 0.3])
def test_average_takes_the_point_of_every_pass(lam):
    """w̄ after oracle passes and passes inside the caches is the recurrence w̄ ← (1 − ρ)w̄ + ρ soft(v(α), λ) over
    the point of each pass, v(α) = ΔFᵀα rebuilt from the caches in NumPy (the passes keep v by increments and leave
    w's state block stale inside the caches)."""
    ds = tiny(seed=6, n=5)
    rho = 0.25
    fw = bcfw.FrankWolfe(_oracle(ds), 8, None, 1, dict(C=2.0, inner=3, tol=1e-12, average=True, ema=rho,
                                                          verbose=False, cache_passes=1, cache_sampling="gap",
                                                          cache_rule="fixed", lam=lam, cost_power=0.5))
    fmap, prepared = fw.oracle.fmap, fw.oracle.prepared
    want = fw.w_ema.copy()
    for kind in ("oracle", "cache", "cache", "oracle", "cache"):
        if kind == "oracle":
            fw.one_pass(fw.order("uniform", 1))
        else:
            fw.cache_only("uniform")
        v = np.zeros(fmap.dim)
        for i in range(prepared.n):
            lo, hi = fw.offsets[i], fw.offsets[i + 1]
            for m in range(1, fw.cnt[i]):
                y = fw.lab[m, lo:hi].astype(np.int64)[None, :]
                v += fw.alpha[i, m] * fmap.delta(prepared, [i], y)[0].toarray().ravel()
        want = (1 - rho) * want + rho * np.sign(v) * np.maximum(np.abs(v) - lam, 0.0)
        assert np.allclose(fw.w_ema, want, atol=1e-10, rtol=1e-10), kind
    assert np.abs(want).max() > 0.1


def test_fit_route_bcfw_returns_a_certified_result():
    ds = tiny(seed=4)
    C = 0.9
    opt, w_full = solve_full(ds, C)
    res = mmprog.fit(ds, C=C, route="bcfw", gap_tol=1e-6)
    assert res.termination == "converged" and res.gap <= 1e-6
    tol = 1e-7 * max(1.0, abs(opt))
    assert res.primal_objective <= opt + tol <= res.upper_bound + 2 * tol
    assert np.allclose(res.w, w_full, atol=1e-3 * max(1.0, np.abs(w_full).max()))
    # the master of record, stated when first read, holds the cuts the result counted, of the kind it recorded
    assert res.model.ws.size == res.n_cuts == len(res.alpha) > 0 and res.model.master == res.extra["master"]
    with pytest.raises(ParameterError, match="route='bcfw' solves m3n"):
        mmprog.fit(ds, program="l1m3n", route="bcfw")
    with pytest.raises(ParameterError, match="route must be"):
        mmprog.fit(ds, route="fw")


def test_aggregated_cut_certifies_the_same_lower_bound():
    """One 1-slack cut folding the working set: its multiplier gives back w(α) and D(α), and P0's 1-slack master
    on it has its optimum between the certified lower bound and the enumerated optimum."""
    from mmprog.programs import get_program
    from mmprog.programs.base import Dims
    from mmprog.solvers import get_solver
    ds = tiny(seed=6)
    C = 1.1
    opt, _ = solve_full(ds, C)
    orc = _oracle(ds)
    run = bcfw.fit(orc, C=C, gap_tol=1e-3, max_iter=3000, check_every=1)
    cut, beta = run.aggregated_cut()
    assert np.allclose(beta[0] * cut.dF.toarray().ravel(), run.w_dual, atol=1e-12)
    w = run.w_dual
    assert beta[0] * cut.dl[0] - 0.5 * w @ w == pytest.approx(run.lower_bound, rel=1e-12, abs=1e-12)
    prog = get_program("m3n", C=C, master="primal")
    model = prog.build(Dims(n=len(ds), dim=orc.fmap.dim, n_slacks=1))
    prog.add_cuts(model, cut)
    prog.solve(model, get_solver("highs"))
    sol = prog.read_solution(model)
    assert run.lower_bound - 1e-6 <= sol.objective <= opt + 1e-6
    # the same master through bcfw.master (Gram dual, α loaded: its value is the lower bound before any solve)
    prog, model, a, form = bcfw.master(run, orc.fmap, orc.prepared, get_program("m3n", C=run.C, master="dual"), form="one")
    assert form == "one" and model.dims.n_slacks == 1 and np.array_equal(a, beta)
    assert prog.read_solution(model).dual_objective == pytest.approx(run.lower_bound, rel=1e-9)
    prog.solve(model, get_solver("highs"))
    assert prog.read_solution(model).objective == pytest.approx(sol.objective, rel=1e-6)


def test_an_interrupt_ends_the_fit_after_a_complete_pass_with_its_certificate(monkeypatch):
    """SIGINT/SIGTERM (the flag of mmprog.engine.interrupts) stops the passes; the point of the last complete pass
    is returned with a true bracket of the optimum, termination "interrupted"."""
    ds, C = tiny(seed=3), 1.0
    opt, _ = solve_full(ds, C)
    asked = []
    monkeypatch.setattr(bcfw.interrupts, "requested", lambda: len(asked) > 0)
    orc = _oracle(ds)
    fw_pass = bcfw.FrankWolfe.one_pass

    def one_pass_then_interrupt(self, order):
        out = fw_pass(self, order)
        if self.passes == 3:
            asked.append(True)          # the signal arrives during pass 3
        return out
    monkeypatch.setattr(bcfw.FrankWolfe, "one_pass", one_pass_then_interrupt)
    run = bcfw.fit(orc, C=C, gap_tol=1e-12, max_iter=1000, check_every=1000)
    assert run.termination == "interrupted" and run.n_passes == 3
    assert run.history[-1].passes == 3                         # certified at the point it returns
    tol = 1e-9 * max(1.0, abs(opt))
    assert run.lower_bound <= opt + tol and run.upper_bound >= opt - tol
    assert _full_objective(ds, run.w, C) == pytest.approx(run.upper_bound, rel=1e-9, abs=1e-9)


def _order2_truth(ds, C, allowed=None):
    """P0's optimum of a second-order chain by enumeration: f(x, y) by explicit loops (test_chain_order2.joint_f2),
    every labeling (every one made of allowed bigrams when ``allowed`` is given) a constraint, highspy directly."""
    from test_chain_order2 import is_allowed, joint_f2, labelings
    from _enumerated import solve_enumerated
    K = ds.n_labels
    A, dl, ex = [], [], []
    for i, (x, y) in enumerate(zip(ds.X, ds.Y)):
        x = x.toarray()
        fy = joint_f2(x, y, K)
        for lab in labelings(len(y), K):
            if allowed is None or is_allowed(lab, allowed):
                A.append(fy - joint_f2(x, lab, K))
                dl.append(float(np.sum(lab != y)))
                ex.append(i)
    A, dl, ex = np.array(A), np.array(dl), np.array(ex)
    opt, w = solve_enumerated(A, dl, ex, len(ds), C)
    return opt, w, (A, dl, ex)


@pytest.mark.parametrize("seen,seed,K,cache", [(False, 11, 2, 32), (True, 12, 3, 32), (True, 14, 3, 5)])
def test_order2_reaches_the_enumerated_optimum_and_every_check_brackets_it(seen, seed, K, cache):
    """The second-order chain (label trigrams; with ``seen`` confined to the label bigrams of the training labels)
    by the bcfw route, with passes inside the caches: every certificate brackets the enumerated optimum, the last
    meets it, and the upper bound is the enumerated full objective at the returned w. Cache 5 (gold and four
    labelings) evicts on the way on seed 14 (cache 4 is smaller than the optimum's support there: gap 5e-2)."""
    from test_chain_order2 import data
    from mmprog.features.chain import allowed_bigrams
    ds = data(seed, n=8, K=K, d=3, max_len=5)
    C = 0.7
    allowed = allowed_bigrams(ds.Y, K) if seen else None
    if seen:
        assert not allowed.all()
    opt, w_full, (A, dl, ex) = _order2_truth(ds, C, allowed)
    fmap = ChainFeatureMap.from_dataset(ds, order=2, allowed=allowed)
    orc = Oracle(fmap, fmap.prepare(ds))
    run = bcfw.fit(orc, C=C, gap_tol=1e-7, max_iter=3000, check_every=1, cache_size=cache, cache_passes=2)
    assert run.termination == "converged"
    tol = 1e-7 * max(1.0, abs(opt))
    for check in run.history:
        assert check.lower <= opt + tol and check.upper >= opt - tol
    h = np.full(len(ds), 0.0)
    np.maximum.at(h, ex, dl - A @ run.w)
    assert 0.5 * run.w @ run.w + C * h.sum() == pytest.approx(run.upper_bound, rel=1e-9, abs=1e-9)
    assert np.allclose(run.w, w_full, atol=1e-3 * max(1.0, np.abs(w_full).max()))
    if cache == 5:
        assert run.history[-1].evicted > 0


def test_order2_working_set_master_lies_between_the_bounds():
    """The n-slack master of the second-order working set (cuts from the chain map's own Δf) gives back w(α) and
    D(α); re-solved by HiGHS its optimum lies between the certified lower bound and the enumerated optimum."""
    from test_chain_order2 import data
    from mmprog.features.chain import allowed_bigrams
    from mmprog.solvers import get_solver
    ds = data(12, n=8, K=3, d=3, max_len=5)
    C = 0.7
    allowed = allowed_bigrams(ds.Y, 3)
    opt, _, _ = _order2_truth(ds, C, allowed)
    fmap = ChainFeatureMap.from_dataset(ds, order=2, allowed=allowed)
    orc = Oracle(fmap, fmap.prepare(ds))
    run = bcfw.fit(orc, C=C, gap_tol=1e-3, max_iter=3000, check_every=1, average=False)
    cuts, alpha = run.working_set(orc.fmap, orc.prepared)
    w_alpha = cuts.dF.T @ alpha
    assert np.allclose(w_alpha, run.w_dual, atol=1e-10)
    assert alpha @ cuts.dl - 0.5 * w_alpha @ w_alpha == pytest.approx(run.lower_bound, rel=1e-10, abs=1e-10)
    prog, model, _, form = bcfw.master(run, orc.fmap, orc.prepared, get_program("m3n", C=C, master="dual"))
    prog.solve(model, get_solver("highs"))
    sol = prog.read_solution(model)
    assert form == "n" and run.lower_bound - 1e-7 <= sol.objective <= opt + 1e-7


@pytest.mark.parametrize("sampling,kappa", [("gap", 0.5), ("uniform", 0.5), ("gap", 0.0), ("gap", 2.0)])
def test_cache_passes_reach_the_enumerated_optimum(sampling, kappa):
    """Passes inside the caches (no oracle) between oracle passes, or none, whichever the gap sampling's cost power
    κ: the same enumerated optimum, every certificate a bracket of it."""
    ds = tiny(seed=17)
    C = 1.3
    opt, w_full = solve_full(ds, C)
    for cache_passes in (0, 3):
        run = bcfw.fit(_oracle(ds), C=C, gap_tol=1e-7, max_iter=3000, check_every=1, cache_passes=cache_passes,
                       cache_sampling=sampling, cost_power=kappa)
        assert run.termination == "converged"
        tol = 1e-7 * max(1.0, abs(opt))
        for check in run.history:
            assert check.lower <= opt + tol and check.upper >= opt - tol
        assert np.allclose(run.w, w_full, atol=1e-3 * max(1.0, np.abs(w_full).max()))


@pytest.mark.parametrize("order", [1, 2])
def test_slot_gradient_is_the_labelings_loss_augmented_score_difference(order):
    """The compiled gradient from a labeling's differing positions (O(#differences)) equals Δℓ(y) + wᵀf(x, y) −
    wᵀf(x, yᵢ) with f by explicit loops (test_chain_order2.joint_f2), on random labelings with runs of differences
    at the ends and in the middle."""
    from test_chain_order2 import joint_f2
    from mmprog.inference.frank_wolfe import _slot_gradient, _slot_positions
    rng = np.random.default_rng(order)
    K, d, L = 3, 4, 7
    x = rng.normal(size=(L, d))
    W, Tr = rng.normal(size=(d, K)), rng.normal(size=(K, K))
    Tri = rng.normal(size=(K, K, K)) if order == 2 else np.zeros((0, 0, 0))
    w = np.r_[W.ravel(), Tr.ravel(), Tri.ravel()]
    gold = rng.integers(0, K, L)
    node = x @ W
    for _ in range(30):
        y = gold.copy()
        flip = rng.random(L) < rng.choice([0.2, 0.5, 0.9])
        y[flip] = (gold[flip] + rng.integers(1, K, flip.sum())) % K
        lab = np.stack([gold, y]).astype(np.int16)
        dpos, dcnt, upos = np.empty((2, L), np.int64), np.empty(2, np.int64), np.empty(L, np.int64)
        _slot_positions(lab, gold, 0, L, 2, dpos, dcnt, upos)
        assert dcnt[1] == flip.sum()
        loss = float(flip.sum())
        if order == 1:
            f = lambda lab_: joint_f2(x, lab_, K)[: d * K + K * K]
        else:
            f = lambda lab_: joint_f2(x, lab_, K)
        want = loss + w @ (f(y) - f(gold))
        got = _slot_gradient(node, Tr, Tri, lab[1], gold, 0, L, loss, dpos[1], dcnt[1])
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("lam", [0.0, 0.3])
@pytest.mark.parametrize("order", [1, 2])
def test_slot_gram_is_the_cached_labelings_feature_gram_and_the_steps_keep_w_of_alpha(order, lam):
    """The steps read K[m, m'] = Δf(x, y_m)ᵀΔf(x, y_m'), kept as labelings enter, move and leave the caches: here
    recomputed from f by explicit loops (test_chain_order2.joint_f2) after passes with 4 slots a cache (so that
    evictions and compactions happen), and rebuilt from nothing as a resume does; the v and w = soft(v, λ) the steps
    moved by their net moves are v(α) and w(α) rebuilt from the caches."""
    from test_chain_order2 import data, joint_f2
    from mmprog.inference.frank_wolfe import slot_gram
    ds = data(8, n=10, K=3, d=4, max_len=7)
    K = ds.n_labels
    fmap = ChainFeatureMap.from_dataset(ds, order=order)
    fw = bcfw.FrankWolfe(Oracle(fmap, fmap.prepare(ds)), 4, None, 0,
                         dict(C=2.0, inner=10, tol=1e-12, average=False, ema=0.3, verbose=False, cache_passes=2,
                              cache_sampling="gap", cache_rule="fixed", lam=lam, cost_power=0.5))
    for _ in range(5):
        fw.one_pass(fw.order("uniform", 1))
        fw.cache_only("gap")
        fw.cache_only("gap")
    fw.one_pass(fw.order("uniform", 1))        # which leaves w = soft(v, λ) whole (a cache pass: its state block stale)
    assert fw.evicted > 0 and fw.cnt.max() >= 3
    d = ds.X[0].shape[1]

    def f(x, y):
        full = joint_f2(x, y, K)
        return full[: d * K + K * K] if order == 1 else full

    blocks = []
    for i, (x, y) in enumerate(zip(ds.X, ds.Y)):
        x = x.toarray()
        lo, hi, c = fw.offsets[i], fw.offsets[i + 1], int(fw.cnt[i])
        dF = np.array([f(x, y) - f(x, fw.lab[m, lo:hi].astype(int)) for m in range(c)])
        assert np.allclose(fw.gram[i, :c, :c], dF @ dF.T, rtol=1e-12, atol=1e-12)
        blocks.append(fw.gram[i, :c, :c].copy())
    fw.gram[:] = 0.0
    slot_gram(fw.data, fw.cache, fw.work)
    for i, kept in enumerate(blocks):
        c = int(fw.cnt[i])
        assert np.allclose(fw.gram[i, :c, :c], kept, rtol=1e-12, atol=1e-12)
    w_steps, v_steps = fw.w.copy(), fw.v.copy()
    fw.rebuild()
    assert np.allclose(v_steps, fw.v, rtol=1e-12, atol=1e-12)
    assert np.allclose(w_steps, fw.w, rtol=1e-12, atol=1e-12)
    if lam > 0:
        assert np.allclose(fw.w, np.sign(fw.v) * np.maximum(np.abs(fw.v) - lam, 0.0)) and (fw.w == 0).any()


def test_fit_route_bcfw_second_order_seen_transitions_is_certified():
    """``mmprog.fit(route="bcfw", order=2, transitions="seen")``: the Result brackets the enumerated optimum over
    the labelings of seen bigrams, and its predictions are those of its w."""
    from test_chain_order2 import data
    from mmprog.features.chain import allowed_bigrams
    ds = data(12, n=8, K=3, d=3, max_len=5)
    C = 0.7
    opt, _, _ = _order2_truth(ds, C, allowed_bigrams(ds.Y, 3))
    res = mmprog.fit(ds, C=C, route="bcfw", gap_tol=1e-6, order=2, transitions="seen")
    assert res.termination == "converged" and res.gap <= 1e-6 and res.fmap.order == 2
    tol = 1e-7 * max(1.0, abs(opt))
    assert res.primal_objective <= opt + tol <= res.upper_bound + 2 * tol
    pred = res.fmap.decode(res.w, res.fmap.prepare(ds))
    for i, y in enumerate(res.predict(ds)):
        np.testing.assert_array_equal(y, pred[i, : len(ds.Y[i])])


@pytest.mark.parametrize("lam", [0.0, 0.4])
@pytest.mark.parametrize("order", [1, 2])
def test_slot_gram_and_step_touch_only_the_differing_positions_yet_match_explicit_features(order, lam):
    """The slot Gram matrix K[m, m'] = Δf(y_m)ᵀΔf(y_m') from the positions where each labeling differs from gold
    (pairs and trigrams away from them left out) equals the explicit feature differences' (test_chain_order2.joint_f2)
    on real-valued inputs, so K[a, a] + K[s, s] − 2K[a, s] is ‖f(x, a) − f(x, s)‖²; and a pairwise step (the move
    that empties a full cache) moves v by exactly step·(f(x, a) − f(x, s)), sets w's label-pair and trigram blocks to
    soft(v, λ) (w = v for λ = 0) and moves the token scores to X·soft(V, λ), on random labelings with runs of differences at the ends and in the middle."""
    from test_chain_order2 import joint_f2
    from mmprog.inference.frank_wolfe import (_pair_diff, _pair_step, _slot_gram_row, _slot_positions, token_gram,
                                              work_arrays)
    rng = np.random.default_rng(10 + order)
    K, d, L = 3, 4, 8
    x = rng.normal(size=(L, d))
    Xp, Xi, Xd = np.arange(0, L * d + 1, d, dtype=np.int64), np.tile(np.arange(d), L).astype(np.int64), x.ravel()
    offsets, Gp = np.array([0, L], np.int64), np.array([0, L * L], np.int64)
    Gv = np.empty(L * L)
    token_gram(Xp, Xi, Xd, offsets, Gp, Gv, np.zeros(d))
    nf = d * K + K * K
    f = (lambda lab_: joint_f2(x, lab_, K)[:nf]) if order == 1 else (lambda lab_: joint_f2(x, lab_, K))
    gold = rng.integers(0, K, L)
    for _ in range(30):
        lab = [gold.copy()]
        for _m in range(2):
            y = gold.copy()
            flip = rng.random(L) < rng.choice([0.2, 0.5, 0.9])
            y[flip] = (gold[flip] + rng.integers(1, K, flip.sum())) % K
            lab.append(y)
        lab = np.stack(lab).astype(np.int16)
        dpos, dcnt, upos = np.empty((3, L), np.int64), np.empty(3, np.int64), np.empty(L, np.int64)
        npos = _slot_positions(lab, gold, 0, L, 3, dpos, dcnt, upos)
        work = work_arrays(L, K, 3, order, None)
        work[17][:], work[18][:] = dpos, dcnt
        gram = np.full((1, 3, 3), np.nan)
        gram[0, 0, 0] = 0.0                  # gold's Δf = 0: the route's arrays start at zero
        cache = (lab, np.zeros((1, 3)), np.zeros((1, 3)), np.array([3]), gram)
        data = (Xp, Xi, Xd, offsets, gold, Gp, Gv)
        for m in (1, 2):
            _slot_gram_row(0, m, m + 1, data, cache, work, upos, npos)
        dF = np.array([f(gold) - f(lab[m]) for m in range(3)])
        np.testing.assert_allclose(gram[0], dF @ dF.T, rtol=1e-12, atol=1e-12)
        # the buffers the rows used are left zero for the next
        assert not work[5].any() and not work[6].any() and not work[21].any()
        for a, s in ((1, 2), (0, 1), (2, 0)):
            diff = np.empty(L + 1, np.int64)
            nd = _pair_diff(lab[a], lab[s], 0, dpos[a], dcnt[a], dpos[s], dcnt[s], diff)
            np.testing.assert_array_equal(diff[:nd], np.flatnonzero(lab[a] != lab[s]))
            want = f(lab[a]) - f(lab[s])
            got = gram[0, a, a] + gram[0, s, s] - 2 * gram[0, a, s]
            assert got == pytest.approx(want @ want, rel=1e-10, abs=1e-10)
            V, TrV = rng.normal(size=(d, K)), rng.normal(size=(K, K))
            TriV = rng.normal(size=(K, K, K)) if order == 2 else np.zeros((0, 0, 0))
            v0 = np.r_[V.ravel(), TrV.ravel(), TriV.ravel()]

            def soft(z):
                return np.sign(z) * np.maximum(np.abs(z) - lam, 0.0)
            W, Tr, Tri = (soft(V), soft(TrV), soft(TriV)) if lam > 0 else (V, TrV, TriV)
            work = work_arrays(L, K, 3, order, None)
            work[0][:L] = x @ W
            alpha = np.array([[0.5, 0.3, 0.2]])
            step = 0.1
            _pair_step(0, a, s, step, (Xp, Xi, Xd, offsets, gold, Gp, Gv), (W, Tr, Tri), (V, TrV, TriV), lam,
                       (lab, alpha, np.zeros((1, 3)), np.array([3])), work, upos, npos, diff, nd)
            v1 = np.r_[V.ravel(), TrV.ravel(), TriV.ravel()]
            np.testing.assert_allclose(v1, v0 + step * want, atol=1e-12)
            # the pair and trigram blocks of w kept; the state block read through v (left stale in W)
            np.testing.assert_allclose(np.r_[Tr.ravel(), Tri.ravel()], soft(v1)[V.size:], atol=1e-12)
            np.testing.assert_allclose(work[0][upos[:npos]], (x @ soft(V))[upos[:npos]], atol=1e-12)


@pytest.mark.parametrize("lam", [0.0, 0.2])
@pytest.mark.parametrize("order", [1, 2])
def test_passes_report_the_exact_increase_of_the_dual(order, lam):
    """The dual increase the pass kernels add up step by step, γ(g(s) − g(a)) − ½γ²‖f(x, a) − f(x, s)‖², is D(α)
    after the pass minus D(α) before it, D recomputed from the cache (w(α) rebuilt): for oracle passes and for
    passes inside the caches. For the elastic net (λ > 0) it is a lower bound of the increase (the quadratic lower
    model), and D(α) = Σ α Δℓ − ½‖soft(v(α), λ)‖² never falls."""
    from test_chain_order2 import data
    ds = data(5, n=12, K=3, d=4, max_len=7)
    fmap = ChainFeatureMap.from_dataset(ds, order=order)
    fw = bcfw.FrankWolfe(Oracle(fmap, fmap.prepare(ds)), 16, None, 0,
                         dict(C=0.9, inner=3, tol=1e-12, average=False, ema=0.3, verbose=False, cache_passes=1,
                              cache_sampling="gap", cache_rule="fixed", lam=lam, cost_power=0.5))

    def dual():
        lin = fw.rebuild()
        return lin - 0.5 * float(fw.w @ fw.w)

    def check(before):
        if lam == 0:
            assert dual() - before == pytest.approx(fw.last_gain, rel=1e-9, abs=1e-12)
        else:
            assert dual() - before >= fw.last_gain - 1e-9 * max(1.0, abs(before))
        assert fw.last_gain >= 0.0

    moved = 0.0
    for k in range(6):
        before = dual()
        fw.one_pass(fw.order("uniform", 1))
        check(before)
        moved += fw.last_gain
        before = dual()
        fw.cache_only("gap")
        check(before)
    assert moved > 0


@pytest.mark.parametrize("seed,C,lam,cache", [(3, 0.7, 0.3, 32), (11, 2.0, 1.0, 32), (7, 0.3, 0.1, 4)])
def test_elastic_net_reaches_the_enumerated_optimum_and_every_check_brackets_it(seed, C, lam, cache):
    """With λ > 0 the route solves the elastic-net M³N ½‖w‖² + λ‖w‖₁ + C Σᵢ Hᵢ(w): every certificate brackets the
    optimum of the full enumerated program (highspy, w free with t ≥ |w|), the upper bound is the enumerated full
    objective at the returned w, and w is the program's (strongly convex), zeros included."""
    from _enumerated import solve_full as full
    ds = tiny(seed=seed, irrelevant=2)
    opt, w_full = full(ds, C, norm="enet", lam=lam)
    run = bcfw.fit(_oracle(ds), C=C, gap_tol=1e-7, max_iter=3000, check_every=1, cache_size=cache, lam=lam)
    assert run.termination == "converged" and run.gap <= 1e-7
    tol = 1e-7 * max(1.0, abs(opt))
    for check in run.history:
        assert check.lower <= opt + tol and check.upper >= opt - tol
    full_obj = _full_objective(ds, run.w, C) + lam * float(np.abs(run.w).sum())
    assert full_obj == pytest.approx(run.upper_bound, rel=1e-9, abs=1e-9)
    scale = max(1.0, np.abs(w_full).max())
    assert np.allclose(run.w, w_full, atol=1e-3 * scale)
    zero = np.abs(w_full) <= 1e-6 * scale
    assert not zero.all() and (zero.any() or lam < 1.0)       # λ = 1 zeroes some weights on this data
    assert np.count_nonzero(run.w[zero]) <= 0.05 * zero.sum()
    # λ = 0 is P0: the same route without the soft threshold
    opt0, _ = solve_full(ds, C)
    assert opt0 < opt - tol


def test_elastic_net_second_order_reaches_the_enumerated_optimum():
    """The second-order chain (label trigrams) with λ > 0: certified at the enumerated elastic-net optimum."""
    from test_chain_order2 import data
    from _enumerated import solve_enumerated
    ds = data(12, n=8, K=3, d=3, max_len=5)
    C, lam = 0.7, 0.2
    _, _, (A, dl, ex) = _order2_truth(ds, C, None)
    opt, w_full = solve_enumerated(A, dl, ex, len(ds), C, "enet", None, lam)
    fmap = ChainFeatureMap.from_dataset(ds, order=2)
    run = bcfw.fit(Oracle(fmap, fmap.prepare(ds)), C=C, gap_tol=1e-7, max_iter=3000, check_every=1, cache_passes=2,
                   lam=lam)
    assert run.termination == "converged"
    tol = 1e-7 * max(1.0, abs(opt))
    assert run.lower_bound <= opt + tol <= run.upper_bound + 2 * tol
    h = np.full(len(ds), 0.0)
    np.maximum.at(h, ex, dl - A @ run.w)
    assert 0.5 * run.w @ run.w + lam * np.abs(run.w).sum() + C * h.sum() == pytest.approx(run.upper_bound, rel=1e-9)
    assert np.allclose(run.w, w_full, atol=1e-3 * max(1.0, np.abs(w_full).max()))


def test_fit_enm3n_takes_bcfw_and_its_master_of_record_lies_between_the_bounds():
    """``mmprog.fit(program="enm3n")`` goes the bcfw route by default, certified at the enumerated optimum; the
    master it holds (the program's own, on the route's working set) is solved by a QP back end to an optimum inside
    the certified [D(α), P(w)]."""
    from mmprog.duality import master_of_bcfw
    ds = tiny(seed=5, irrelevant=1)
    C, lam = 1.1, 0.4
    opt, w_full = solve_full(ds, C, norm="enet", lam=lam)
    res = mmprog.fit(ds, program="enm3n", C=C, lam=lam, gap_tol=1e-6)
    assert res.route == "bcfw" and res.termination == "converged" and res.gap <= 1e-6
    tol = 1e-6 * max(1.0, abs(opt))
    assert res.primal_objective <= opt + tol <= res.upper_bound + 2 * tol
    assert np.allclose(res.w, w_full, atol=1e-3 * max(1.0, np.abs(w_full).max()))
    assert res.model.ws.size == res.n_cuts > 0 and res.model.master == res.extra["master"] == "primal"
    _, row = master_of_bcfw(res)
    assert row.status == "pass", row.statement


def test_elastic_net_aggregated_cut_certifies_the_same_lower_bound():
    """The 1-slack cut folding the working set carries v(α) = ΔFᵀα (not w(α) = soft(v(α), λ)): with its multiplier it
    gives back D(α) = Σ α Δℓ − ½‖soft(v(α), λ)‖², and the elastic-net 1-slack master on it has its optimum between
    the certified lower bound and the enumerated optimum."""
    from mmprog.solvers import get_solver
    ds = tiny(seed=6, irrelevant=1)
    C, lam = 1.1, 0.3
    opt, _ = solve_full(ds, C, norm="enet", lam=lam)
    orc = _oracle(ds)
    run = bcfw.fit(orc, C=C, gap_tol=1e-3, max_iter=3000, check_every=1, lam=lam)
    cut, beta = run.aggregated_cut()
    v = beta[0] * cut.dF.toarray().ravel()
    assert np.allclose(np.sign(v) * np.maximum(np.abs(v) - lam, 0.0), run.w_dual, atol=1e-12)
    assert beta[0] * cut.dl[0] - 0.5 * run.w_dual @ run.w_dual == pytest.approx(run.lower_bound, rel=1e-12)
    prog, model, a, form = bcfw.master(run, orc.fmap, orc.prepared, get_program("enm3n", C=C, lam=lam), form="one")
    assert form == "one" and model.dims.n_slacks == 1
    prog.solve(model, get_solver("highs"))
    sol = prog.read_solution(model)
    assert run.lower_bound - 1e-6 <= sol.objective <= opt + 1e-6


@pytest.mark.parametrize("lam", [0.0, 0.2])
@pytest.mark.parametrize("order,seen", [(1, False), (2, False), (2, True)])
def test_passes_count_their_work(order, seen, lam):
    """The work the pass kernels count for ``cache_rule="rate"`` (WORK), recounted here from the data and the
    caches: an oracle pass over every example reads every token row once and fills L × (K², K³ or the allowed label
    trigrams) Viterbi cells; a pass inside the caches reads the rows of the positions where some cached labeling
    differs from gold (λ = 0; with λ > 0 its steps also rescore them); steps move rows; the work log holds both."""
    from test_chain_order2 import data
    from mmprog.features.chain import allowed_bigrams
    from mmprog.inference.frank_wolfe import WORK
    ds = data(21, n=10, K=3, d=5, max_len=6)
    K = ds.n_labels
    allowed = allowed_bigrams(ds.Y, K) if seen else None
    if seen:
        assert not allowed.all()
    fmap = ChainFeatureMap.from_dataset(ds, order=order, allowed=allowed)
    fw = bcfw.FrankWolfe(Oracle(fmap, fmap.prepare(ds)), 16, None, 0,
                         dict(C=0.9, inner=3, tol=1e-12, average=False, ema=0.3, verbose=False, cache_passes=1,
                              cache_sampling="uniform", cache_rule="rate", lam=lam, cost_power=0.5))
    nnz = [sp_nnz(x) for x in ds.X]
    lengths = [x.shape[0] for x in ds.X]
    if order == 1:
        cells = K * K
    elif allowed is None:
        cells = K ** 3
    else:
        a = allowed.astype(int)
        cells = int((a @ a).sum())           # label trigrams (a, b, c) with (a, b) and (b, c) allowed
    for k in range(4):
        fw.one_pass(fw.order("uniform", 1))
        kind, cpu, *work = fw.work_log[-1]
        got = dict(zip(WORK, work))
        assert kind == "oracle" and cpu >= 0
        assert got["viterbi_cells"] == sum(L * cells for L in lengths)
        if lam == 0:
            assert got["score_rows"] == sum(nnz)
        else:
            assert got["score_rows"] >= sum(nnz)
        # the rows the cache pass must read: where a cached labeling differs from gold, before the pass (each
        # example is visited once, and only its own visit changes its cache)
        want = 0
        for i in range(len(ds)):
            lo, hi = fw.offsets[i], fw.offsets[i + 1]
            c = int(fw.cnt[i])
            if c <= 1:
                continue
            differs = (fw.lab[1:c, lo:hi] != fw.gold[lo:hi]).any(axis=0)
            x = ds.X[i].tocsr() if hasattr(ds.X[i], "tocsr") else ds.X[i]
            want += sum(sp_nnz(x[t]) for t in np.flatnonzero(differs))
        fw.cache_only("uniform")
        kind, cpu, *work = fw.work_log[-1]
        got = dict(zip(WORK, work))
        assert kind == "cache" and got["viterbi_cells"] == 0
        if lam == 0:
            assert got["score_rows"] == want
        else:
            assert got["score_rows"] >= want
        # a pass that raised D moved rows of w
        assert got["step_rows"] > 0 or fw.last_gain == 0


def sp_nnz(x):
    import scipy.sparse as sp
    return int(sp.csr_matrix(x).count_nonzero())


@pytest.mark.parametrize("seed,C", [(17, 1.3), (3, 0.7)])
def test_rate_rule_reaches_the_enumerated_optimum_on_a_path_fixed_by_its_seed(seed, C):
    """cache_rule="rate" (Shah et al.'s rule on counted work): certified at the enumerated optimum, every
    certificate a bracket of it; two runs take the same path to the last bit (the rule reads no clock), and the
    rule does end rounds early (fewer cache passes than its cap of 16 a round)."""
    ds = tiny(seed=seed)
    opt, w_full = solve_full(ds, C)
    runs = [bcfw.fit(_oracle(ds), C=C, gap_tol=1e-7, max_iter=3000, check_every=1, cache_rule="rate")
            for _ in range(2)]
    for run in runs:
        assert run.termination == "converged"
        tol = 1e-7 * max(1.0, abs(opt))
        for check in run.history:
            assert check.lower <= opt + tol and check.upper >= opt - tol
        assert np.allclose(run.w, w_full, atol=1e-3 * max(1.0, np.abs(w_full).max()))
    assert np.array_equal(runs[0].w, runs[1].w) and runs[0].n_cache_passes == runs[1].n_cache_passes
    assert [h.upper for h in runs[0].history] == [h.upper for h in runs[1].history]
    assert runs[0].n_cache_passes < 16 * runs[0].n_passes


@pytest.mark.parametrize("lam,cache", [(0.0, 4), (0.3, 32)])
def test_caches_mapped_page_by_page_give_the_same_path(monkeypatch, tmp_path, lam, cache):
    """The caches' arrays from zeros_on_touch (mapped, 4 KiB pages; what a real fit's slot Gram matrices and labelings
    get) run every kernel as numpy's arrays do: the same w, bounds and history bit for bit, evictions (cache 4),
    the elastic net, passes inside the caches and a resumed fit (whose restore writes the caches) included. On these
    tiny instances the arrays are below the size that maps them, so the later fits map them from any size."""
    ds = tiny(seed=7, n=12)
    kw = dict(C=0.8, gap_tol=1e-7, max_iter=3000, check_every=1, cache_size=cache, lam=lam)
    plain = bcfw.fit(_oracle(ds), **kw)
    first = bcfw.fit(_oracle(ds), **{**kw, "max_iter": 2})
    first.save(str(tmp_path / "ws.npz"))
    plain_resumed = bcfw.fit(_oracle(ds), **kw, resume=str(tmp_path / "ws.npz"))
    assert not mapped(plain.state["lab"])
    monkeypatch.setattr(memory, "ZEROS_ON_TOUCH_FROM", 0)
    on_map = bcfw.fit(_oracle(ds), **kw)
    on_map_resumed = bcfw.fit(_oracle(ds), **kw, resume=str(tmp_path / "ws.npz"))
    assert mapped(on_map.state["lab"]) and mapped(on_map_resumed.state["lab"])
    fw = bcfw.FrankWolfe(_oracle(ds), cache, None, 0, dict(C=0.8, inner=10, tol=1e-12, average=True, ema=0.1,
                                                          verbose=False, cache_passes=6, cache_sampling="gap",
                                                          cache_rule="fixed", lam=lam, cost_power=0.5))
    assert mapped(fw.gram) and mapped(fw.lab)
    for a, b in ((plain, on_map), (plain_resumed, on_map_resumed)):
        assert a.termination == b.termination == "converged"
        np.testing.assert_array_equal(a.w, b.w)
        assert (a.upper_bound, a.lower_bound, a.n_passes) == (b.upper_bound, b.lower_bound, b.n_passes)
        assert [(c.lower, c.upper) for c in a.history] == [(c.lower, c.upper) for c in b.history]
        np.testing.assert_array_equal(a.state["alpha"], b.state["alpha"])
    if cache == 4:
        assert plain.history[-1].evicted > 0

