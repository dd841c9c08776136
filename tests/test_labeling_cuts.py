"""1-slack cuts held as labelings (issue 17 item 2): a cut of a first-order chain with 0/1 token features is kept as
its wrong tokens, their gold and decoded labels and the transition counts (:class:`mmprog.cuts.LabelingCut`), and
the Gram-dual master's products go through the token matrix X.

Truth: the explicit rows of the same cuts (the oracle's count rows, as every other fit keeps them) and the working
set's products of those rows (merge kernels, themselves checked against scipy in test_cut_memory); the whole fit
against the enumerated optimum of a tiny chain with 0/1 features, and against the explicit-row fit on an NER slice.
"""
import math

import numpy as np
import pytest
import scipy.sparse as sp

import mmprog
from mmprog.cuts import CountCut, LabelingCut, labeling_counts
from mmprog.engine.oracle import Oracle
from mmprog.programs.m3n import M3N
from mmprog.cuts import LabelingBlock, WorkingSet


def _oracle_cuts(ds, n_cuts, seed):
    """The oracle's 1-slack cuts at random points, as labelings and as the explicit count rows it returned before."""
    from mmprog.features import ChainFeatureMap
    fmap = ChainFeatureMap.from_dataset(ds)
    prepared = fmap.prepare(ds)
    oracle = Oracle(fmap, prepared)
    rng = np.random.default_rng(seed)
    labeled, explicit = [], []
    for k in range(n_cuts):
        w = rng.normal(scale=0.3 / (k + 1), size=fmap.dim)
        oracle.labeling_cuts = True
        a, hinge_a = oracle.separate_one_slack(w)
        oracle.labeling_cuts = False
        b, hinge_b = oracle.separate_one_slack(w)
        assert isinstance(a, LabelingCut) and isinstance(b, CountCut) and not isinstance(b, LabelingCut)
        assert np.array_equal(hinge_a, hinge_b) and a.dl[0] == b.dl[0]
        labeled.append(a)
        explicit.append(b)
    return fmap, labeled, explicit


def test_a_labeling_cut_is_the_oracles_count_row(ner_slice):
    _, labeled, explicit = _oracle_cuts(ner_slice, 3, seed=0)
    for a, b in zip(labeled, explicit):
        A, B = labeling_counts(a.labeling), b.counts[0]
        assert np.array_equal(A.indices, B.indices) and np.array_equal(A.data, B.data)
        assert a.counts[1] == b.counts[1]
        w = np.random.default_rng(1).normal(size=A.shape[1])
        assert a.violation(w, [0.1])[0] == pytest.approx(b.violation(w, [0.1])[0], rel=1e-12, abs=1e-12)


def test_products_through_X_equal_the_explicit_rows(ner_slice):
    """Gram rows, ΔFᵀα (into a given vector too), ΔF·w, aggregates and released cuts: the labeling working set gives
    the explicit working set's numbers (integer sums divided once, so equal to rounding)."""
    fmap, labeled, explicit = _oracle_cuts(ner_slice, 6, seed=2)
    ws_l, ws_e = WorkingSet(fmap.dim), WorkingSet(fmap.dim)
    for a, b in zip(labeled, explicit):
        ws_l.add(a)
        ws_e.add(b)
    assert all(isinstance(B, LabelingBlock) for _, B, _ in ws_l._segments)
    assert ws_l.nnz < ws_e.nnz / 10                  # the point of it
    r = ws_e.size
    # the exact Gram matrix: integer products of the count rows, divided once by n²
    counts = sp.vstack([b.counts[0] for b in explicit], format="csr").astype(np.int64)
    n = explicit[0].counts[1]
    exact = (counts @ counts.T).toarray() / (n * n)
    G = ws_l.gram_rows(list(range(r)))
    np.testing.assert_allclose(G, exact, rtol=1e-15, atol=0)
    # the explicit rows' merge sums each product of divided counts: the same to its rounding
    np.testing.assert_allclose(ws_e.gram_rows(list(range(r))), exact, rtol=1e-10, atol=0)
    assert np.all(np.linalg.eigvalsh(G) > -1e-9)
    rng = np.random.default_rng(3)
    alpha = rng.uniform(size=r)
    alpha[2] = 0.0
    w_e = ws_e.tdot(alpha)
    out = np.full(fmap.dim, 7.0)
    w_l = ws_l.tdot(alpha, out=out)
    assert w_l is out
    np.testing.assert_allclose(w_l, w_e, rtol=1e-12, atol=1e-15)
    # ΔF·w against the correctly rounded sum of the count row's products (math.fsum), within the a priori bound of a
    # recursive sum of m terms, m·2⁻⁵³·Σ|terms| (the row's m is its non-zeros; the labeling adds two w entries per
    # entry of each wrong token's features)
    margins_l, margins_e = ws_l.dot(w_e), ws_e.dot(w_e)
    for q, (a, C) in enumerate(zip(labeled, counts)):
        terms = C.data * w_e[C.indices]
        ref = math.fsum(terms) / n
        lab = a.labeling
        m_l = 2 * int(np.diff(lab["X"].indptr)[lab["tok"]].sum())
        w_state = w_e[: len(w_e) - lab["K"] ** 2]
        bound_l = m_l * 2.0 ** -53 * (np.abs(w_state).max() * m_l) / n     # Σ|terms| ≤ m·max|w|
        assert abs(margins_e[q] - ref) <= len(terms) * 2.0 ** -53 * np.abs(terms).sum() / n, q
        assert abs(margins_l[q] - ref) <= bound_l, q
        assert abs(margins_l[q] - ref) <= 1e-11 * abs(ref), q
    assert (ws_l.dF() != ws_e.dF()).nnz == 0         # the rows made on demand are the very floats
    # an aggregate (explicit row) among labeling cuts, then released cuts
    lam = np.array([0.25, 0.75])
    for ws in (ws_l, ws_e):
        row, dl = ws.combine([1, 3], lam)
        ws.add(mmprog.cuts.Cuts(np.zeros(1, dtype=np.int64), row, np.array([dl])))
        ws.active[1] = ws.active[3] = False
        ws.release([1, 3])
    assert not isinstance(ws_l._segments[-1][1], LabelingBlock)
    r = ws_e.size
    np.testing.assert_allclose(ws_l.gram_rows([0, r - 1, 4]), ws_e.gram_rows([0, r - 1, 4]), rtol=1e-10, atol=0)
    alpha = rng.uniform(size=r)
    alpha[[1, 3]] = 0.0
    np.testing.assert_allclose(ws_l.tdot(alpha), ws_e.tdot(alpha), rtol=1e-12, atol=1e-15)
    assert ws_l.gram_rows([0])[0, [1, 3]].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("n_threads", [1, 3])
def test_template_gram_rows_through_X_are_exact(ner_slice, monkeypatch, n_threads):
    """The per-template Gram entries of mtl and pblock on labeling cuts (one pass over the held cuts' wrong tokens,
    on 1 and 3 threads): the integer products of the count rows within each template's columns divided by n², to
    the last bit; the explicit rows' merge within its rounding; an aggregate (explicit row) among them, and a
    released cut reading 0."""
    from mmprog.features import _binary as B
    from mmprog.programs.mtl import template_groups
    from mmprog.programs.base import Dims
    monkeypatch.setattr(B, "THREAD_MIN_ROWS", 1)
    monkeypatch.setattr(B, "MAX_THREADS", n_threads)
    fmap, labeled, explicit = _oracle_cuts(ner_slice, 4, seed=4)
    dims = Dims(n=len(ner_slice), dim=fmap.dim, n_slacks=1, groups=lambda: fmap.groups, group_names=fmap.group_names)
    groups, names = template_groups(dims)
    m = len(names)
    ws_l, ws_e = WorkingSet(fmap.dim), WorkingSet(fmap.dim)
    for a, b in zip(labeled, explicit):
        ws_l.add(a)
        ws_e.add(b)
    r = ws_l.size
    counts = sp.vstack([b.counts[0] for b in explicit], format="csr").astype(np.int64)
    n = explicit[0].counts[1]
    exact = np.zeros((m, r, r))
    for j in range(m):
        cols = np.flatnonzero(groups == j)
        P = counts[:, cols]
        exact[j] = (P @ P.T).toarray() / (n * n)
    got = ws_l.template_gram_rows(list(range(r)), groups, m)
    assert np.array_equal(got, exact)
    assert exact.sum(axis=0) == pytest.approx(ws_l.gram_rows(list(range(r))), rel=1e-12)
    np.testing.assert_allclose(ws_e.template_gram_rows(list(range(r)), groups, m), exact, rtol=1e-10, atol=1e-15)
    for ws in (ws_l, ws_e):
        row, dl = ws.combine([0, 2], np.array([0.4, 0.6]))
        ws.add(mmprog.cuts.Cuts(np.zeros(1, dtype=np.int64), row, np.array([dl])))
    np.testing.assert_allclose(ws_l.template_gram_rows([r, 1], groups, m), ws_e.template_gram_rows([r, 1], groups, m),
                               rtol=1e-10, atol=1e-15)
    for ws in (ws_l, ws_e):
        ws.active[2] = False
        ws.release([2])
    after = ws_l.template_gram_rows([3], groups, m)
    assert not after[:, 0, 2].any()
    np.testing.assert_array_equal(np.delete(after[:, 0, :r], 2, axis=1), np.delete(exact[:, 3, :], 2, axis=1))


def test_only_the_gram_dual_of_the_one_slack_fit_gets_labeling_cuts():
    ds = _binary_chain(0, n=8)
    # the pool's workers return labelings too (merged by the parent), so every backend's fit holds them
    for kw, expect in (({"master": "dual"}, True), ({"master": "primal"}, False), ({"slack": "n"}, False),
                       ({"oracle": "thread", "n_jobs": 2}, True), ({"oracle": "process", "n_jobs": 2}, True)):
        kw = {"slack": "one", "master": "dual", **kw}
        res = mmprog.fit(ds, program="m3n", C=1.0, eps=1e-3, max_iter=5, **kw)
        kinds = {type(B).__name__ for _, B, _ in res.model.ws._segments}
        assert ("LabelingBlock" in kinds) == expect, (kw, kinds)
    for program, kw, expect in (("mtl", {"form": "dual"}, True), ("mtl", {"form": "primal"}, False),
                                ("pblock", {}, True), ("l1m3n", {}, False)):
        res = mmprog.fit(ds, program=program, C=1.0, slack="one", eps=1e-3, max_iter=5, **kw)
        assert any(isinstance(B, LabelingBlock) for _, B, _ in res.model.ws._segments) == expect, (program, kw)


def _binary_chain(seed, n=4, T=3, K=2, d=5):
    """A tiny chain dataset of 0/1 token features (sparse), small enough to enumerate every labeling."""
    from mmprog.datasets.base import SequenceDataset
    rng = np.random.default_rng(seed)
    X = [sp.csr_matrix((rng.random((T, d)) < 0.5).astype(np.float64)) for _ in range(n)]
    Y = [rng.integers(0, K, size=T) for _ in range(n)]
    return SequenceDataset(X, Y, n_labels=K)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_fit_with_labeling_cuts_reaches_the_enumerated_optimum(seed):
    from _enumerated import solve_full
    ds = _binary_chain(seed)
    C, eps = 0.7, 1e-4
    res = mmprog.fit(ds, program="m3n", master="dual", C=C, slack="one", eps=eps, max_iter=2000)
    assert res.termination == "converged"
    assert any(isinstance(B, LabelingBlock) for _, B, _ in res.model.ws._segments)
    opt, _ = solve_full(ds, C, "l2")
    tol = 1e-6 * max(1.0, abs(opt))
    # the 1-slack ε-rule: the returned objective is within C·ε of the optimum (the averaged-risk scale times n)
    assert opt - tol <= res.primal_objective <= opt + C * len(ds) * eps + tol
    assert res.upper_bound >= opt - tol


@pytest.mark.parametrize("program,eps,n", [("m3n", 0.05, 60), ("mtl", 0.2, 40), ("pblock", 0.2, 40)])
def test_the_fit_matches_the_explicit_rows(ner_slice, monkeypatch, program, eps, n):
    """The structural SVM, MTL (the QCQP dual) and the p-block dual with labeling cuts and with explicit rows on NER
    sentences: each run's lower bound (a master optimum) and upper bound (a full objective) bracket the optimum, so
    the brackets overlap and the objectives are within the ε-rule's width; the labeling run holds a small fraction
    of the entries."""
    from mmprog.programs.base import get_program
    small = ner_slice.subset(np.arange(n))
    C = 1.0
    a = mmprog.fit(small, program=program, C=C, slack="one", eps=eps, drop_after=10, max_iter=1000)
    monkeypatch.setattr(type(get_program(program)), "reads_labeling_cuts", lambda self, model: False)
    b = mmprog.fit(small, program=program, C=C, slack="one", eps=eps, drop_after=10, max_iter=1000)
    # both stopped by the ε rule they were given ("eps"; "converged" when the gap was ≤ 1e-2 by then too), not by a limit
    assert {a.termination, b.termination} <= {"eps", "converged"}
    assert any(isinstance(B, LabelingBlock) for _, B, _ in a.model.ws._segments)
    assert not any(isinstance(B, LabelingBlock) for _, B, _ in b.model.ws._segments)
    lower = [r.history[-1].lower_bound for r in (a, b)]
    assert max(lower) <= min(a.upper_bound, b.upper_bound) + 1e-9
    assert abs(a.primal_objective - b.primal_objective) <= C * len(small) * eps
    held = lambda r: max(h.cut_nnz for h in r.history)          # noqa: E731
    assert held(a) < held(b) / 10


@pytest.mark.parametrize("n_threads", [2, 3])
def test_the_x_passes_on_threads_give_the_same_floats(n_threads, monkeypatch):
    """The three passes over X that a round makes (token scores, a new cut's Gram row, Xᵀ M) split into row or
    feature ranges on threads: bit for bit the single-thread floats, which equal scipy's products within rounding."""
    from mmprog.features import _binary as B
    monkeypatch.setattr(B, "THREAD_MIN_ROWS", 1)
    rng = np.random.default_rng(n_threads)
    N, d, K = 700, 300, 4
    X = sp.random(N, d, density=0.05, format="csr", random_state=n_threads)
    X.data[:] = 1.0
    X.sort_indices()
    W = rng.normal(size=(d, K))
    touched = rng.random(N) < 0.6
    M = rng.normal(size=(N, K)) * touched[:, None]
    V = rng.normal(size=d * K)
    runs = {}
    for nt in (1, n_threads):
        s, u, w = np.zeros((N, K)), np.zeros((N, K)), np.zeros(d * K)
        B.in_threads(lambda a, b: B.binary_row_scores(X.indptr, X.indices, W, s, a, b), N, nt)
        B.in_threads(lambda a, b: B.masked_row_scores(X.indptr, X.indices, touched, V, K, u, a, b), N, nt)
        B.in_threads(lambda a, b: B.xt_rows(X.indptr, X.indices, touched, M, w, a, b), d, nt)
        runs[nt] = (s, u, w)
    for one, many in zip(runs[1], runs[n_threads]):
        assert np.array_equal(one, many)
    s, u, w = runs[n_threads]
    np.testing.assert_allclose(s, X @ W, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(u, (X @ V.reshape(d, K)) * touched[:, None], rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(w, (X.T @ M).ravel(), rtol=1e-13, atol=1e-13)


def test_the_oracle_pool_workers_start_no_threads_of_their_own():
    """A process-pool worker (the pool is the parallelism) runs the passes over X on its one thread."""
    from concurrent.futures import ProcessPoolExecutor

    from mmprog.engine.oracle import _init_worker
    with ProcessPoolExecutor(1, initializer=_init_worker, initargs=(None, None)) as pool:
        got = pool.submit(eval, "__import__('mmprog.features._binary', fromlist=['_']).MAX_THREADS").result()
    assert got == 1


def test_the_fit_on_threads_is_the_fit_on_one(ner_slice, monkeypatch):
    """With every pass over X on threads (ranges of any size) the labeling-cut fit retraces the single-thread fit:
    the same rounds and bounds, to the last bit."""
    from mmprog.features import _binary as B
    small = ner_slice.subset(np.arange(60))
    kw = dict(program="m3n", C=1.0, slack="one", eps=0.05, drop_after=10, max_iter=1000)
    monkeypatch.setattr(B, "THREAD_MIN_ROWS", 10 ** 12)
    one = mmprog.fit(small, **kw)
    monkeypatch.setattr(B, "THREAD_MIN_ROWS", 1)
    monkeypatch.setattr(B.os, "sched_getaffinity", lambda pid: {0, 1, 2})
    many = mmprog.fit(small, **kw)
    # the ε rule given stops both (named "eps" when it fires before the certificate); the same stop either way
    assert one.termination == many.termination and one.termination in ("eps", "converged")
    assert [(h.lower_bound, h.upper_bound) for h in one.history] == \
        [(h.lower_bound, h.upper_bound) for h in many.history]
    assert np.array_equal(one.w, many.w)


def test_a_checkpoint_keeps_labeling_cuts_as_labelings_and_resumes(tmp_path):
    """Saved as their labelings (no rows made), read back with their checks, resumed to the uninterrupted optimum;
    a labeling that does not fit is refused in one line."""
    from mmprog.engine import checkpoint as ckpt
    from mmprog.exceptions import ModelFileError
    from _enumerated import solve_full
    ds = _binary_chain(5, n=10)
    C, eps = 0.7, 1e-4
    opt, _ = solve_full(ds, C, "l2")
    part = mmprog.fit(ds, program="m3n", master="dual", C=C, slack="one", eps=eps, max_iter=4,
                      checkpoint=tmp_path / "fit", checkpoint_every=1)
    assert part.termination == "max_iter"
    saved = ckpt.load(tmp_path / "fit")
    active = [p for p in np.flatnonzero(part.model.ws.active_mask()) if p not in part.model.ws.released]
    assert saved.meta["format_version"] == 2 and len(saved.labelings) == len(active) and len(saved.cuts) == 0
    for lab, p in zip(saved.labelings, active):
        held = part.model.ws.labeling_of(p)
        assert np.array_equal(lab["tok"], held["tok"]) and np.array_equal(lab["pred"], held["pred"])
        assert lab["dl"] == part.model.ws.dl_array()[p]
    res = mmprog.fit(ds, eps=eps, resume=tmp_path / "fit")
    assert res.termination == "converged"
    assert any(isinstance(B, LabelingBlock) for _, B, _ in res.model.ws._segments)
    tol = 1e-6 * max(1.0, abs(opt))
    assert opt - tol <= res.primal_objective <= opt + C * len(ds) * eps + tol
    # a labeling whose gold and decoded labels agree, then one naming a token row the data do not have
    with np.load(tmp_path / "fit.npz", allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    for change, needle in ((lambda a: a["lab_pred"].__setitem__(0, a["lab_gold"][0]), "gold ≠ decoded"),
                           (lambda a: a["lab_tok"].__setitem__(0, 10 ** 6), "does not fit these data")):
        bad = {k: v.copy() for k, v in arrays.items()}
        change(bad)
        np.savez(tmp_path / "bad.npz", **bad)
        with pytest.raises(ModelFileError, match=needle) as e:
            mmprog.fit(ds, eps=eps, resume=tmp_path / "bad")
        assert "\n" not in str(e.value) and str(e.value).startswith(str(tmp_path / "bad.npz"))


@pytest.mark.parametrize("backend", ["thread", "process"])
def test_pool_one_slack_cut_is_the_serial_cut(ner_slice, backend):
    """The pool's workers return labelings (or integer counts) for their examples and the parent merges them: the
    very cut of the serial oracle — same type, same arrays — so a fit takes the same path on every backend. (Float
    rows summed in parts and divided by n, as before, differed from the serial cut in the last bits, and the OCR
    fit of ``bench oracle`` ended its 100 rounds 0.16 % apart.)"""
    from mmprog.features import ChainFeatureMap
    fmap = ChainFeatureMap.from_dataset(ner_slice)
    prepared = fmap.prepare(ner_slice)
    serial = Oracle(fmap, prepared)
    pool = Oracle(fmap, prepared, backend=backend, n_jobs=2, chunk_size=37)
    rng = np.random.default_rng(3)
    try:
        for labeling in (True, False):
            serial.labeling_cuts = pool.labeling_cuts = labeling
            for k in range(3):
                w = rng.normal(scale=0.3 / (k + 1), size=fmap.dim)
                a, hinge_a = serial.separate_one_slack(w)
                b, hinge_b = pool.separate_one_slack(w)
                assert type(a) is type(b) is (LabelingCut if labeling else CountCut)
                assert a.dl[0] == b.dl[0] and a.counts[1] == b.counts[1]
                A, B = a.counts[0], b.counts[0]
                assert A.data.dtype == B.data.dtype
                for x, y in ((A.indptr, B.indptr), (A.indices, B.indices), (A.data, B.data)):
                    assert np.array_equal(x, y)
                if labeling:
                    for key in ("tok", "gold", "pred", "trans"):
                        assert np.array_equal(a.labeling[key], b.labeling[key])
                    assert b.labeling["X"] is prepared.data["X"]
                np.testing.assert_allclose(hinge_b, hinge_a, rtol=0, atol=1e-12)
    finally:
        pool.close()


def test_fits_on_every_backend_take_the_serial_path(ner_slice):
    """The same rounds, objective and w, bit for bit, with the oracle serial, on threads and on a process pool: on
    labeling cuts (NER slice, ``m3n``) and on dense 0/1 inputs (OCR-like pixels, float rows summed exactly)."""
    rng = np.random.default_rng(4)
    X = [(rng.random(size=(5 + i % 3, 12)) < 0.4).astype(np.float64) for i in range(60)]
    W = rng.normal(size=(12, 4))
    pixels = mmprog.datasets.base.SequenceDataset(X, [np.argmax(x @ W, axis=1) for x in X], 4)
    for ds, C in ((ner_slice, 1.0), (pixels, 0.5)):
        fits = [mmprog.fit(ds, program="m3n", C=C, slack="one", eps=0.05, max_iter=25, oracle=backend, n_jobs=2,
                           chunk_size=23) for backend in ("serial", "thread", "process")]
        for res in fits[1:]:
            assert res.n_iter == fits[0].n_iter and res.primal_objective == fits[0].primal_objective
            assert np.array_equal(res.w, fits[0].w)
