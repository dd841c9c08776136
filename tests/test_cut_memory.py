"""1-slack cuts on sparse template features are built sparse, merged per coordinate, and change nothing.

Truth: the dense state block Xᵀ(E_gold − E_ŷ) computed the way it always was (``sparse=False``), and the fit on a
real CoNLL-2002 NER slice (134 templates) with the old dense path patched back in.
"""
import numpy as np
import pytest
import scipy.sparse as sp

import mmprog
from mmprog.features import ChainFeatureMap

# these tests are about the explicit rows (the labeling cuts are checked against them in test_labeling_cuts)
pytestmark = pytest.mark.usefixtures("explicit_rows")


def test_sparse_cut_equals_the_dense_one_with_merged_coordinates(ner_slice):
    fmap = ChainFeatureMap.from_dataset(ner_slice)
    prep = fmap.prepare(ner_slice)
    assert sp.issparse(prep.data["X"])
    w = np.random.default_rng(0).normal(size=fmap.dim) * 0.1
    dense, dl_d, h_d = fmap.separate_sum(w, prep)
    cut, dl_s, h_s = fmap.separate_sum(w, prep, sparse=True)
    assert sp.isspmatrix_csr(cut) and cut.shape == (1, fmap.dim)
    idx = cut.indices
    assert np.all(np.diff(idx) > 0) and np.all(cut.data != 0)          # one entry per coordinate, no zeros
    assert cut.nnz == np.count_nonzero(dense)                             # exactly the non-zeros of the dense sum
    np.testing.assert_allclose(cut.toarray().ravel(), dense, rtol=0, atol=1e-12)
    assert dl_s == dl_d and np.allclose(h_s, h_d, atol=1e-12)
    # a subset of the examples too (the process pool's chunks)
    part, _, _ = fmap.separate_sum(w, prep, np.arange(10, 40), sparse=True)
    np.testing.assert_allclose(part.toarray().ravel(), fmap.separate_sum(w, prep, np.arange(10, 40))[0], atol=1e-12)


def test_fit_on_the_slice_is_unchanged_within_eps(ner_slice, monkeypatch):
    eps, C = 0.1, 0.1          # converges in about 80 rounds on these 120 sentences
    new = mmprog.fit(ner_slice, program="m3n", C=C, slack="one", eps=eps, max_iter=300)
    orig = ChainFeatureMap.separate_sum

    def dense_path(self, w, prepared, idx=None, sparse=False, counts=False, labeling=False):
        dF, dl, h = orig(self, w, prepared, idx)         # the dense block, converted afterwards as before
        return sp.csr_matrix(dF[None, :]), dl, h

    monkeypatch.setattr(ChainFeatureMap, "separate_sum", dense_path)
    old = mmprog.fit(ner_slice, program="m3n", C=C, slack="one", eps=eps, max_iter=300)
    # stopped by the ε rule they were given ("eps" while the gap is above 1e-2, "converged" when it holds too)
    assert new.termination == old.termination and new.termination in ("eps", "converged")
    # both brackets [master optimum, primal at w] hold the optimum; the 1-slack stopping rule bounds each gap by
    # C·n·eps
    width = C * len(ner_slice) * eps
    assert abs(new.primal_objective - old.primal_objective) <= width
    assert max(new.primal_objective, old.primal_objective) <= min(new.upper_bound, old.upper_bound) + 1e-6


def test_bounded_working_set_reaches_the_same_objective_on_the_slice(ner_slice):
    """max_cuts aggregates the oldest cuts: at most that many rows held in every round, same optimum within eps."""
    eps, C = 0.1, 0.1
    full = mmprog.fit(ner_slice, program="m3n", C=C, slack="one", eps=eps, max_iter=300, drop_after=10)
    bounded = mmprog.fit(ner_slice, program="m3n", C=C, slack="one", eps=eps, max_iter=600, drop_after=10,
                         max_cuts=5)
    # both stopped by the ε rule they were given ("eps", or "converged" when the gap is ≤ 1e-2 by then too)
    assert {full.termination, bounded.termination} <= {"eps", "converged"}
    assert max(h.n_active for h in bounded.history) <= 5 < max(h.n_active for h in full.history)
    ws = bounded.model.ws
    assert ws.nnz == ws.dF()[ws.active_mask()].nnz            # only the active rows are held
    width = C * len(ner_slice) * eps
    assert abs(full.primal_objective - bounded.primal_objective) <= width
    assert max(full.primal_objective, bounded.primal_objective) <= min(full.upper_bound, bounded.upper_bound) + 1e-6
    # the master optimum never goes down across an aggregation (the aggregate reproduces the current α)
    lower = [h.objective for h in bounded.history]
    assert all(b >= a - 1e-6 * max(1.0, abs(a)) for a, b in zip(lower, lower[1:]))


# ---------------------------------------------------------------------------------------------------------------
# the memory-bounded representations (issue 17 item 2) against the representations they replace
# ---------------------------------------------------------------------------------------------------------------

def _random_cuts(rng, m, dim, nnz_per_row):
    from mmprog.cuts import Cuts
    rows = []
    for _ in range(m):
        idx = np.sort(rng.choice(dim, size=nnz_per_row, replace=False))
        rows.append(sp.csr_matrix((rng.normal(size=nnz_per_row), idx, [0, nnz_per_row]), shape=(1, dim)))
    return Cuts(np.zeros(m, dtype=np.int64), sp.vstack(rows, format="csr"), rng.uniform(1, 2, size=m))


def test_working_set_blocks_give_the_products_of_the_stacked_matrix():
    """Per-add blocks, released rows, merges: Gram rows, ΔFᵀα (into a given vector too), ΔF w and aggregates equal
    scipy's products of the one stacked matrix (the previous representation) with the released rows zeroed."""
    from mmprog.cuts import WorkingSet
    rng = np.random.default_rng(3)
    dim = 200_000                                   # wide and sparse: the merge path, not the dense copy
    ws = WorkingSet(dim)
    for m in (1, 3, 1, 2, 1):                       # 1-slack-like single rows and n-slack-like batches
        ws.add(_random_cuts(rng, m, dim, 400))
    stacked = ws.dF().copy()
    assert stacked.shape == (8, dim) and not ws._use_dense()
    ws.active[1] = ws.active[4] = ws.active[6] = False
    ws.release([1, 4, 6])                           # a whole 1-row block, one row of a batch, one of another batch
    F = stacked.tolil()
    for p in (1, 4, 6):
        F[p, :] = 0
    F = F.tocsr()
    assert ws.nnz == F.nnz and (ws.dF() != F).nnz == 0
    G = (F @ F.T).toarray()
    np.testing.assert_allclose(ws.gram_rows([0, 3, 7]), G[[0, 3, 7]], rtol=1e-13, atol=0)
    np.testing.assert_allclose(ws.gram(), G, rtol=1e-13, atol=0)
    alpha = rng.uniform(0, 1, size=8)
    alpha[[1, 4, 6]] = 0.0
    np.testing.assert_allclose(ws.tdot(alpha), F.T @ alpha, rtol=1e-14, atol=1e-15)
    buf = rng.normal(size=dim)                      # garbage in the reused vector is overwritten
    assert ws.tdot(alpha, out=buf) is buf
    np.testing.assert_allclose(buf, F.T @ alpha, rtol=1e-14, atol=1e-15)
    w = rng.normal(size=dim)
    np.testing.assert_allclose(ws.dot(w), F @ w, rtol=1e-13, atol=1e-13)
    lam = np.array([0.2, 0.5, 0.3])
    row, dl = ws.combine([0, 3, 7], lam)
    truth = lam @ F[[0, 3, 7]].toarray()
    assert np.all(np.diff(row.indices) > 0) and np.all(row.data != 0) and row.nnz == np.count_nonzero(truth)
    np.testing.assert_allclose(row.toarray().ravel(), truth, rtol=1e-14, atol=1e-15)
    assert dl == pytest.approx(lam @ ws.dl_array()[[0, 3, 7]], rel=1e-15)


def test_prepare_reuses_the_extractor_matrix(ner_slice):
    """The template extractor's sentences are views of one matrix; the chain map stacks them back without a copy
    (same matrix as the vstack it replaces), and falls back to the copy for rows that are not consecutive."""
    x0, x1 = ner_slice.X[0], ner_slice.X[1]
    assert x0.data.base is x1.data.base is not None
    fmap = ChainFeatureMap.from_dataset(ner_slice)
    X = fmap.prepare(ner_slice).data["X"]
    assert np.shares_memory(X.data, x0.data) and np.shares_memory(X.indices, x0.indices)
    assert (X != sp.vstack(ner_slice.X, format="csr")).nnz == 0
    shuffled = ner_slice.subset(np.array([5, 2, 9]))
    Xs = fmap.prepare(shuffled).data["X"]
    assert not np.shares_memory(Xs.data, x0.data)
    assert (Xs != sp.vstack(shuffled.X, format="csr")).nnz == 0


def test_state_block_in_pieces_is_the_same_integers(ner_slice, monkeypatch):
    """Σ Xᵀ(E_gold − E_ŷ) summed over pieces of a few gathered entries equals the one product (0/1 features:
    integer counts, so exactly), at w = 0 (every token wrong) and at a random w. (The scipy path, which binary
    features no longer take: see the next test.)"""
    fmap = ChainFeatureMap.from_dataset(ner_slice)
    prep = fmap.prepare(ner_slice)
    monkeypatch.setattr(ChainFeatureMap, "_binary_tokens", staticmethod(lambda prepared: False))
    for w in (np.zeros(fmap.dim), np.random.default_rng(1).normal(size=fmap.dim) * 0.01):
        whole, dl_a, h_a = fmap.separate_sum(w, prep, sparse=True)
        monkeypatch.setattr(ChainFeatureMap, "STATE_CHUNK_NNZ", 700)       # ~5 sentences' tokens a piece
        parts, dl_b, h_b = fmap.separate_sum(w, prep, sparse=True)
        monkeypatch.setattr(ChainFeatureMap, "STATE_CHUNK_NNZ", ChainFeatureMap.STATE_CHUNK_NNZ)
        np.testing.assert_array_equal(parts.indices, whole.indices)
        np.testing.assert_array_equal(parts.data, whole.data)
        assert dl_a == dl_b and np.array_equal(h_a, h_b)


def test_binary_state_counts_equal_the_scipy_products(ner_slice, monkeypatch):
    """The 1-slack cut of binary features counted by feature (features._binary) against the scipy products it replaces
    (the pieces summed by _state_sum, then _sum_cut): the same indices and the same values, float64 and int32
    counts, for all examples and a part of them, at w = 0 (every token wrong) and at random w."""
    fmap = ChainFeatureMap.from_dataset(ner_slice)
    prep = fmap.prepare(ner_slice)
    assert ChainFeatureMap._binary_tokens(prep) is True
    rng = np.random.default_rng(5)
    for w in (np.zeros(fmap.dim), rng.normal(size=fmap.dim) * 0.01, rng.normal(size=fmap.dim) * 0.1):
        for idx in (None, np.arange(10, 60)):
            for counts in (False, True):
                new = fmap.separate_sum(w, prep, idx, sparse=True, counts=counts)
                monkeypatch.setattr(ChainFeatureMap, "_binary_tokens", staticmethod(lambda prepared: False))
                old = fmap.separate_sum(w, prep, idx, sparse=True, counts=counts)
                monkeypatch.undo()
                # the scipy path makes int32 counts, the counting int16 where they fit
                assert new[0].data.dtype.kind == old[0].data.dtype.kind == ("i" if counts else "f")
                np.testing.assert_array_equal(new[0].indices, old[0].indices)
                np.testing.assert_array_equal(new[0].data, old[0].data)
                assert new[0].indices.dtype == old[0].indices.dtype and new[0].nnz == old[0].nnz > 0
                assert new[1] == old[1] and np.array_equal(new[2], old[2])
    # no wrong token and no transition changed: an empty cut
    from mmprog.features._binary import binary_state_cut
    flat, vals = binary_state_cut(prep.data["X"], np.zeros(0, np.int64), np.zeros(0, np.int64),
                                  np.zeros(0, np.int64), fmap.n_labels, np.zeros((fmap.n_labels,) * 2), fmap.dim,
                                  True)
    assert len(flat) == len(vals) == 0


def test_fit_equals_the_one_with_the_stacked_working_set(ner_slice, monkeypatch):
    """The 1-slack fit with max_cuts (blocks, merges, w written over) against the same fit with the previous
    products patched back in (scipy on the stacked matrix, a fresh w each round): same rounds, same objective and
    w to rounding."""
    from mmprog.cuts import WorkingSet
    kw = dict(program="m3n", C=0.1, slack="one", eps=0.1, max_iter=40, drop_after=5, max_cuts=4)
    new = mmprog.fit(ner_slice, **kw)

    def gram_rows(self, positions):
        F = self.dF()
        return np.asarray((F @ F[positions].T).T.todense())

    def tdot(self, alpha, out=None):
        return self.dF().T @ alpha

    def combine(self, positions, weights):
        F = self.dF()[positions]
        row = sp.csr_matrix(weights @ F)
        row.eliminate_zeros()
        return row, float(weights @ self.dl_array()[positions])

    monkeypatch.setattr(WorkingSet, "gram_rows", gram_rows)
    monkeypatch.setattr(WorkingSet, "tdot", tdot)
    monkeypatch.setattr(WorkingSet, "combine", combine)
    old = mmprog.fit(ner_slice, **kw)
    assert new.n_iter == old.n_iter and new.termination == old.termination
    assert new.primal_objective == pytest.approx(old.primal_objective, rel=1e-9)
    np.testing.assert_allclose(new.w, old.w, rtol=0, atol=1e-9 * np.abs(old.w).max())


# ---------------------------------------------------------------------------------------------------------------
# 1-slack cuts kept as integer counts over n (CountCut, int32 blocks of the working set) against the divided rows
# ---------------------------------------------------------------------------------------------------------------

def _count_cut(rng, dim, nnz, n):
    """A CountCut of random non-zero counts (what separate_sum sums on 0/1 features) and the float Cuts it stands
    for (the counts divided by n in place, as the oracle did)."""
    from mmprog.cuts import CountCut, Cuts
    idx = np.sort(rng.choice(dim, size=nnz, replace=False)).astype(np.int32)
    c = rng.integers(1, 300, size=nnz).astype(np.int32) * rng.choice(np.array([-1, 1], dtype=np.int32), size=nnz)
    if nnz % 1000 == 0:                              # int16 counts (what later rounds' cuts are held as)
        c = c.astype(np.int16)
    counts = sp.csr_matrix((c, idx, np.array([0, nnz], dtype=np.int32)), shape=(1, dim))
    dl = float(rng.uniform(1, 2))
    f = c.astype(np.float64)
    f /= n
    return CountCut(counts, n, dl), Cuts(np.zeros(1, dtype=np.int64), sp.csr_matrix((f, idx.copy(),
                                                                                     [0, nnz]), shape=(1, dim)),
                                         np.array([dl]))


def test_count_blocks_give_the_products_of_the_divided_rows():
    """A working set of CountCuts (int32 counts, n) and one of the same cuts divided into float64 rows (the previous
    representation), with float batches and an aggregate among them and rows released: Gram rows, the Gram matrix,
    ΔFᵀα, ΔF w, aggregates, dF() and the cuts' violations are equal — the same floats (assert_array_equal), since
    every value read is float(count) / n, the double the in-place division stored."""
    from mmprog.cuts import WorkingSet
    rng = np.random.default_rng(7)
    dim, n = 300_000, 8323
    ws_c, ws_f = WorkingSet(dim), WorkingSet(dim)
    for k in range(6):
        if k == 2:                                   # a float batch among the counts (an n-slack-like add)
            batch = _random_cuts(rng, 2, dim, 500)
            ws_c.add(batch)
            ws_f.add(batch)
            continue
        cc, cf = _count_cut(rng, dim, 3000 + 500 * k, n)
        assert cc.dF.dtype == np.float64 and (cc.dF != cf.dF).nnz == 0
        assert cc.dl[0] == cf.dl[0]
        w = rng.normal(size=dim)
        xi = np.array([0.3])
        np.testing.assert_array_equal(cc.violation(w, xi), cf.violation(w, xi))
        ws_c.add(cc)
        ws_f.add(cf)
    assert ws_c._segments[0][1].data.dtype == np.int16 and ws_c._segments[0][2] == float(n)
    assert ws_c._segments[1][1].data.dtype == np.int32
    assert ws_c.nnz == ws_f.nnz and not ws_c._use_dense()
    # an aggregate of counts rows and a float row (max_cuts' combine), added as a float block
    lam = np.array([0.25, 0.5, 0.25])
    (row_c, dl_c), (row_f, dl_f) = ws_c.combine([0, 2, 4], lam), ws_f.combine([0, 2, 4], lam)
    np.testing.assert_array_equal(row_c.indices, row_f.indices)
    np.testing.assert_array_equal(row_c.data, row_f.data)
    assert dl_c == dl_f
    single_c, _ = ws_c.combine([1], np.array([0.7]))
    single_f, _ = ws_f.combine([1], np.array([0.7]))
    np.testing.assert_array_equal(single_c.data, single_f.data)
    from mmprog.cuts import Cuts
    for ws, row, dl in ((ws_c, row_c, dl_c), (ws_f, row_f, dl_f)):
        ws.add(Cuts(np.zeros(1, dtype=np.int64), row, np.array([dl])))
        ws.active[0] = ws.active[3] = False
        ws.release([0, 3])                           # a counts block and a row of the float batch
    assert ws_c.nnz == ws_f.nnz
    assert (ws_c.dF() != ws_f.dF()).nnz == 0 and ws_c.dF().dtype == np.float64
    np.testing.assert_array_equal(ws_c.dF().data, ws_f.dF().data)
    r = ws_c.size
    np.testing.assert_array_equal(ws_c.gram_rows(list(range(r))), ws_f.gram_rows(list(range(r))))
    np.testing.assert_array_equal(ws_c.gram(), ws_f.gram())
    alpha = rng.uniform(0, 1, size=r)
    alpha[[0, 3]] = 0.0
    np.testing.assert_array_equal(ws_c.tdot(alpha), ws_f.tdot(alpha))
    w = rng.normal(size=dim)
    np.testing.assert_array_equal(ws_c.dot(w), ws_f.dot(w))
    # and the float rows' products are still scipy's (the reference of the tests above)
    F = ws_f.dF()
    np.testing.assert_allclose(ws_c.dot(w), F @ w, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(ws_c.tdot(alpha), F.T @ alpha, rtol=1e-14, atol=1e-15)


def test_separate_sum_counts_are_the_float_cut(ner_slice):
    """counts=True gives the same cut with int32 values (0/1 template features), and the float values otherwise;
    the oracle's CountCut reads as the divided row it replaces."""
    from mmprog.cuts import CountCut
    from mmprog.engine.oracle import Oracle
    fmap = ChainFeatureMap.from_dataset(ner_slice)
    prep = fmap.prepare(ner_slice)
    for w in (np.zeros(fmap.dim), np.random.default_rng(2).normal(size=fmap.dim) * 0.01):
        f, dl_f, h_f = fmap.separate_sum(w, prep, sparse=True)
        c, dl_c, h_c = fmap.separate_sum(w, prep, sparse=True, counts=True)
        assert f.data.dtype == np.float64 and c.data.dtype in (np.int16, np.int32)
        if np.abs(f.data).max() > np.iinfo(np.int16).max:
            assert c.data.dtype == np.int32
        np.testing.assert_array_equal(c.indices, f.indices)
        np.testing.assert_array_equal(c.data, f.data)           # the same integers
        assert dl_c == dl_f and np.array_equal(h_c, h_f)
        cut, hinge = Oracle(fmap, prep).separate_one_slack(w)
        assert isinstance(cut, CountCut)
        divided = f.data / prep.n
        np.testing.assert_array_equal(cut.dF.data, divided)
        assert cut.dl[0] == dl_f / prep.n
    # real-valued features: the float row, as before
    X = prep.data["X"]
    scaled = prep.data.copy()
    scaled["X"] = sp.csr_matrix((X.data * 0.37, X.indices, X.indptr), shape=X.shape)
    prep2 = type(prep)(n=prep.n, lengths=prep.lengths, gold=prep.gold, data=scaled)
    g, _, _ = fmap.separate_sum(np.zeros(fmap.dim), prep2, sparse=True, counts=True)
    assert g.data.dtype == np.float64


def test_fit_with_count_cuts_equals_the_one_with_float_cuts(ner_slice, monkeypatch):
    """The whole max_cuts 1-slack fit with the cuts counted by feature and kept as counts against the same fit as
    before (scipy's products, the float rows divided in place by the oracle): the same rounds, the same objective,
    bounds and w, bit for bit."""
    kw = dict(program="m3n", C=0.1, slack="one", eps=0.1, max_iter=40, drop_after=5, max_cuts=4)
    new = mmprog.fit(ner_slice, **kw)
    assert any(seg[1].data.dtype.kind == "i" for seg in new.model.ws._segments)
    orig = ChainFeatureMap.separate_sum

    def float_cuts(self, w, prepared, idx=None, sparse=False, counts=False, labeling=False):
        return orig(self, w, prepared, idx, sparse)

    monkeypatch.setattr(ChainFeatureMap, "separate_sum", float_cuts)
    monkeypatch.setattr(ChainFeatureMap, "_binary_tokens", staticmethod(lambda prepared: False))
    old = mmprog.fit(ner_slice, **kw)
    assert all(seg[1].data.dtype == np.float64 for seg in old.model.ws._segments)
    assert new.n_iter == old.n_iter and new.termination == old.termination
    assert new.primal_objective == old.primal_objective and new.upper_bound == old.upper_bound
    assert [h.objective for h in new.history] == [h.objective for h in old.history]
    np.testing.assert_array_equal(new.w, old.w)


def test_binary_scores_are_scipys_product_and_float32_ones_change_nothing(ner_slice, monkeypatch):
    """The token scores of binary features read from X's indices alone (features._binary.binary_row_scores) are
    the floats of scipy's X @ W; a dataset whose ones are stored as float32 gives the same cuts and the same
    whole max_cuts fit, bit for bit, as the float64 one (and as the scipy path)."""
    from mmprog.datasets.registry import default_data_root
    from mmprog.features._binary import binary_row_scores
    fmap = ChainFeatureMap.from_dataset(ner_slice)
    prep = fmap.prepare(ner_slice)
    X = prep.data["X"]
    W = np.random.default_rng(4).normal(size=(X.shape[1], fmap.n_labels))
    out = np.zeros((X.shape[0], fmap.n_labels))
    binary_row_scores(X.indptr, X.indices, W, out)
    np.testing.assert_array_equal(out, X @ W)
    # the same through the map, for all tokens and for a view of some sentences' rows
    w = np.random.default_rng(6).normal(size=fmap.dim)
    for idx in (np.arange(prep.n), np.arange(20, 50), np.array([7, 3, 90])):
        new = fmap._token_scores(w, prep, idx)[0]
        monkeypatch.setattr(ChainFeatureMap, "_binary_tokens", staticmethod(lambda prepared: False))
        old = fmap._token_scores(w, prep, idx)[0]
        monkeypatch.undo()
        np.testing.assert_array_equal(new, old)
    # float32 ones
    from mmprog.datasets import load_conll
    from mmprog.features.templates import TemplateExtractor
    train = load_conll(default_data_root() / "conll2002" / "esp.train.gz", columns=("form", "pos", "ne"))
    ds32 = TemplateExtractor("ner").to_dataset(train.subset(np.arange(120)), dtype=np.float32)
    assert ds32.X[0].dtype == np.float32
    assert all((a != b).nnz == 0 for a, b in zip(ds32.X, ner_slice.X))
    kw = dict(program="m3n", C=0.1, slack="one", eps=0.1, max_iter=40, drop_after=5, max_cuts=4)
    r32, r64 = mmprog.fit(ds32, **kw), mmprog.fit(ner_slice, **kw)
    assert r32.n_iter == r64.n_iter and r32.primal_objective == r64.primal_objective
    np.testing.assert_array_equal(r32.w, r64.w)
    np.testing.assert_array_equal(r32.predict(ner_slice)[0], r64.predict(ner_slice)[0])
