"""P1 as one factored LP (``l1m3n``, ``algorithm="factored"``) against independent truths.

Ground truth: the full P1 with every labeling of every example as an explicit row, built by explicit loops and
solved by highspy directly (tests/_enumerated.py); the cutting-plane P1 (checked against the same truth in
test_engine_bruteforce.py) where the feature map has parts _enumerated does not model (bias, start/stop); GLPK
through Pyomo as a second solver of the same LP; the numbers' own feasibility, duality and dual feasibility.
"""
import numpy as np
import pytest

import mmprog
from mmprog.datasets.base import SequenceDataset
from mmprog.exceptions import ParameterError
from mmprog.features.chain import ChainFeatureMap
from mmprog.engine.factored_lp import ChainLP

from _enumerated import D, K, hinge, solve_full, tiny


@pytest.mark.parametrize("seed,C", [(3, 0.7), (5, 0.05), (8, 3.0)])
def test_factored_lp_equals_the_enumerated_program(seed, C):
    ds = tiny(seed=seed)
    opt, _ = solve_full(ds, C, "l1")
    res = mmprog.fit(ds, program="l1m3n", C=C, algorithm="factored")
    assert res.termination == "converged" and res.n_iter == 1
    tol = 1e-7 * max(1.0, abs(opt))
    assert res.primal_objective == pytest.approx(opt, abs=tol)
    # the full objective at the returned w, recomputed by enumeration (not by mmprog's oracle)
    full = 0.5 * np.abs(res.w).sum() + C * hinge(ds, res.w).sum()
    assert full == pytest.approx(opt, abs=1e-6 * max(1.0, abs(opt)))
    assert res.upper_bound == pytest.approx(full, abs=1e-9 * max(1.0, full))
    # the LP dual's value at HiGHS's multipliers, recomputed from the rows
    assert res.dual_objective == pytest.approx(opt, abs=1e-6 * max(1.0, abs(opt)))
    assert res.extra["lp_row_violation"] <= 1e-7
    assert res.extra["lp_dual_infeasibility"] <= 1e-7


def test_lp_rows_hold_exactly_at_the_viterbi_values():
    """The exactness argument itself: with V, A the Viterbi values of wᵀf + Δℓ and G = wᵀf(x, y), every token and
    transition row holds, the tightest final rows give ξᵢ = Hᵢ(w) (enumerated), and lowering any ξᵢ breaks one."""
    ds = tiny(seed=4, n=5)
    fmap = ChainFeatureMap.from_dataset(ds)
    prep = fmap.prepare(ds)
    lp = ChainLP(fmap, prep, C=1.0)
    rng = np.random.default_rng(0)
    w = rng.normal(size=fmap.dim)
    x = np.zeros(lp.shape[1])
    c = lp.columns
    x[c["mu"][0]:c["mu"][0] + fmap.dim] = np.maximum(w, 0)
    x[c["nu"][0]:c["nu"][0] + fmap.dim] = np.maximum(-w, 0)
    state, trans = w[:D * K].reshape(D, K), w[D * K:].reshape(K, K)
    V, A, G = [], [], []
    for xs, y in zip(ds.X, ds.Y):
        theta = xs @ state + (np.arange(K)[None, :] != np.asarray(y)[:, None])
        v = theta[0]
        V.append(v)
        for t in range(1, len(y)):
            a = (v[:, None] + trans).max(axis=0)
            A.append(a)
            v = a + theta[t]
            V.append(v)
        G.append(sum(xs[t] @ state[:, y[t]] for t in range(len(y))) + sum(trans[y[t - 1], y[t]]
                                                                         for t in range(1, len(y))))
    x[c["V"][0]:c["V"][0] + c["V"][1]] = np.concatenate(V)
    x[c["A"][0]:c["A"][0] + c["A"][1]] = np.concatenate(A)
    x[c["G"][0]:c["G"][0] + c["G"][1]] = G
    H = hinge(ds, w)
    x[c["xi"][0]:c["xi"][0] + len(ds)] = H
    assert lp.max_row_violation(x) <= 1e-9
    for i in np.nonzero(H > 1e-6)[0]:
        x2 = x.copy()
        x2[c["xi"][0] + i] -= 1e-3
        assert lp.max_row_violation(x2) >= 1e-3 - 1e-9


def test_bias_and_start_stop_features_match_the_cutting_plane():
    ds = tiny(seed=6, n=10)
    fmap = ChainFeatureMap(ds.n_features, K, bias=True, start_stop=True)
    cp = mmprog.fit(ds, program="l1m3n", C=0.5, feature_map=fmap, eps=1e-7, max_iter=500)
    fa = mmprog.fit(ds, program="l1m3n", C=0.5, feature_map=fmap, algorithm="factored")
    assert cp.termination == "converged"
    # the cutting plane brackets the optimum: master value ≤ P1* ≤ full objective at its w
    assert cp.primal_objective - 1e-6 <= fa.primal_objective <= cp.upper_bound + 1e-6
    assert fa.upper_bound == pytest.approx(fa.primal_objective, rel=1e-6)


def test_crossover_gives_a_vertex_with_exact_zeros():
    ds = tiny(seed=5, n=30, irrelevant=6)
    opt, _ = solve_full(ds, 0.05, "l1")
    res = mmprog.fit(ds, program="l1m3n", C=0.05, algorithm="factored", crossover=True)
    assert res.primal_objective == pytest.approx(opt, abs=1e-7)
    irrelevant = res.weights()["state"][D:]
    assert np.count_nonzero(irrelevant) <= 2
    assert np.count_nonzero(res.weights()["state"][:D]) >= 1


def test_a_second_solver_through_pyomo_reaches_the_same_optimum():
    from mmprog.solvers import get_solver
    if not get_solver("glpk").availability():
        pytest.skip(f"glpk: {get_solver('glpk').availability().reason}")
    ds = tiny(seed=3)
    opt, _ = solve_full(ds, 0.7, "l1")
    res = mmprog.fit(ds, program="l1m3n", C=0.7, algorithm="factored", solver="glpk")
    assert res.termination == "converged"
    assert res.primal_objective == pytest.approx(opt, abs=1e-6)
    assert res.upper_bound == pytest.approx(opt, abs=1e-6)


def test_verify_and_export(tmp_path):
    ds = tiny(seed=3)
    res = mmprog.fit(ds, program="l1m3n", C=0.7, algorithm="factored")
    from mmprog.duality import check
    checks = check(res)
    status = {c.statement: c.status for c in checks}
    assert status and all(s in ("pass", "skipped") for s in status.values()), status
    assert sum(s == "pass" for s in status.values()) >= 6
    path = tmp_path / "p1.lp"
    res.export(str(path))
    text = path.read_text()
    rows = res.extra["lp_rows"]
    with pytest.raises(ParameterError, match="no working set"):
        res.support_vectors()
    # every row of the LP, by its symbolic name, once
    assert text.count("rows(") == rows
    assert text.count("_rows(") == rows


def test_time_limit_returns_a_point_with_its_full_objective():
    ds = tiny(seed=3)
    res = mmprog.fit(ds, program="l1m3n", C=0.7, algorithm="factored", time_limit=0.0)
    assert res.termination in ("time_limit", "converged")
    full = 0.5 * np.abs(res.w).sum() + 0.7 * hinge(ds, res.w).sum()
    assert res.upper_bound == pytest.approx(full, rel=1e-9, abs=1e-9)


def test_settings_it_cannot_honour_are_refused(monkeypatch):
    ds = tiny(seed=3)
    import mmprog.engine.factored_lp as chain_lp
    monkeypatch.setattr(chain_lp, "MAX_NONZEROS", 100)
    with pytest.raises(ParameterError, match='non-zeros.*algorithm="cutting_plane"'):
        mmprog.fit(ds, program="l1m3n", algorithm="factored")
    monkeypatch.undo()
    with pytest.raises(ParameterError, match='slack="n"'):
        mmprog.fit(ds, program="l1m3n", algorithm="factored", slack="one")
    with pytest.raises(ParameterError, match="order=2"):
        mmprog.fit(ds, program="l1m3n", algorithm="factored", order=2)
    with pytest.raises(ParameterError, match='algorithm="factored"'):
        mmprog.fit(ds, program="l1m3n", crossover=True)
    hidden = SequenceDataset(ds.X, [np.where(np.arange(len(y)) == 1, -1, y) for y in ds.Y], K)
    with pytest.raises(ParameterError, match="every label observed"):
        mmprog.fit(hidden, program="l1m3n", algorithm="factored")


def test_an_interrupt_stops_the_interior_point_solve_and_keeps_a_scored_point():
    """SIGINT during the solve (mmprog.engine.interrupts): HiGHS's IPM stops at its next iteration, the fit returns
    termination "interrupted" with a point whose full objective is recomputed, not a half-read LP value."""
    import os
    import signal
    import threading
    rng = np.random.default_rng(0)
    n_lab = 26
    X = [(rng.random((8, 20)) < 0.3).astype(float) for _ in range(40)]
    Y = [rng.integers(0, n_lab, 8) for _ in range(40)]
    ds = SequenceDataset(X, Y, n_lab)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        res = mmprog.fit(ds, program="l1m3n", C=1.0, algorithm="factored")
    finally:
        timer.cancel()
    assert res.termination == "interrupted"
    assert "Interrupt" in res.extra["solver_message"]
    # HiGHS hands back no point from an interrupted IPM: the fit returns w = 0, whose full objective is C · Σᵢ Tᵢ
    # (at w = 0 the most violating labeling gets every token wrong)
    assert not res.w.any()
    assert res.upper_bound == pytest.approx(1.0 * 40 * 8)
    # no lower bound is claimed for a stopped solve: the gap is infinite, not 0
    assert res.primal_objective == -np.inf and res.gap == np.inf
