"""The template programs (mtl, pblock) read the working set's blocks each round instead of its stacked copy
(issue 17 item 2): per-template Gram rows by a merge kernel, w = μ[groups] ⊙ ΔFᵀα written over the previous w,
compact group ids, and the cut vectors of a solution stacked only when asked.

Truth: the previous computations (scipy's product of the stacked rows with the new rows split by template, ``mu[groups]
* (F.T @ alpha)`` on the stacked rows, ``np.bincount``), kept here and patched back in for whole fits.
"""
import numpy as np
import pytest
import scipy.sparse as sp

import mmprog
from mmprog.cuts import CountCut, Cuts
from mmprog.programs import mtl as mtl_module
from mmprog.programs import pblock as pblock_module
from mmprog.programs.mtl import TemplateGram, group_sq_norms, template_combination, template_groups
from mmprog.cuts import WorkingSet
from test_cut_memory import _random_cuts as _float_cuts      # k float rows, nnz entries each

# these tests are about the explicit rows (the labeling cuts are checked against them in test_labeling_cuts)
pytestmark = pytest.mark.usefixtures("explicit_rows")


# ---------------------------------------------------------------------------------------------------------------
# the previous implementations (scipy on the stacked working set)
# ---------------------------------------------------------------------------------------------------------------

def old_template_rows(ws, new, groups, m):
    """The Gram rows (m, new, s) as TemplateGram.grow computed them: F @ splitᵀ, column r·m + j of splitᵀ holding
    the entries of new cut r in template j."""
    F = ws.dF()
    s = F.shape[0]
    Fn = sp.coo_matrix(F[new])
    split_t = sp.csr_matrix((Fn.data, (Fn.col, Fn.row * m + np.asarray(groups, np.int64)[Fn.col])),
                            shape=(F.shape[1], len(new) * m))
    rows = np.asarray((F @ split_t).todense()).reshape(s, len(new), m)
    return rows.transpose(2, 1, 0)


class OldTemplateGram(TemplateGram):
    """The previous Gram store: every position ever added held in an (m, s, s) buffer (dropped cuts' columns zeroed
    for the rows added after them), rows from the split product."""

    def grow(self, ws):
        s = ws.size
        if s <= self.size:
            return
        if s > self._buf.shape[1]:
            cap = max(s, 2 * self._buf.shape[1], 8)
            buf = np.zeros((self.m, cap, cap))
            buf[:, : self.size, : self.size] = self._buf[:, : self.size, : self.size]
            self._buf = buf
        new = np.arange(self.size, s)
        rows = old_template_rows(ws, new, self.groups, self.m)
        rows[:, :, ~ws.active_mask()] = 0.0
        self._buf[:, new, :s] = rows
        self._buf[:, :s, new] = rows.transpose(0, 2, 1)
        self.size = s
        self.held = np.arange(s)

    def block(self, rows, cols=None):
        cols = rows if cols is None else cols
        return self._buf[:, : self.size, : self.size][:, rows][:, :, cols]

    def quad(self, alpha):
        Q = self._buf[:, : self.size, : self.size]
        return np.einsum("jrs,r,s->j", Q, alpha, alpha, optimize=True)

    def products(self, alpha):
        return self._buf[:, : self.size, : self.size] @ alpha


def support_combination(F, alpha, dim):
    supp = np.nonzero(alpha > 0)[0]
    if not len(supp):
        return np.zeros(dim)
    lengths = np.diff(F.indptr)
    if 3 * lengths[supp].sum() < F.nnz:
        return np.asarray(F[supp].T @ alpha[supp]).ravel()
    return np.asarray(F.T @ np.where(alpha > 0, alpha, 0.0)).ravel()


def old_combination(ws, alpha, mu, groups, out=None):
    groups = np.asarray(groups, dtype=np.int64)
    return mu[groups] * support_combination(ws.dF(), alpha, ws.dim)


def old_group_sq_norms(w, groups, m):
    w = np.asarray(w, dtype=np.float64)
    return np.bincount(np.asarray(groups, np.int64), weights=w * w, minlength=m)[:m]


def patch_old_path(monkeypatch):
    # the Gram rows from the stacked split product; the store (live cuts only) is the same in both fits, its
    # compaction is checked against the full store above
    monkeypatch.setattr(WorkingSet, "template_gram_rows", old_template_rows)
    monkeypatch.setattr(mtl_module, "template_combination", old_combination)
    monkeypatch.setattr(pblock_module, "template_combination", old_combination)
    monkeypatch.setattr(mtl_module, "group_sq_norms", old_group_sq_norms)


def forbid_stacking(monkeypatch):
    """Make WorkingSet.dF raise: the fit's per-round path must not stack the working set."""
    def dF(self):
        raise AssertionError("the per-round path stacked the working set (WorkingSet.dF)")
    monkeypatch.setattr(WorkingSet, "dF", dF)


# ---------------------------------------------------------------------------------------------------------------
# the Gram kernel
# ---------------------------------------------------------------------------------------------------------------

def _count_cut(rng, dim, nnz, n, dtype):
    idx = np.sort(rng.choice(dim, size=nnz, replace=False)).astype(np.int32)
    c = rng.integers(1, 300, size=nnz) * rng.choice([-1, 1], size=nnz)
    counts = sp.csr_matrix((c.astype(dtype), idx, np.array([0, nnz], dtype=np.int32)), shape=(1, dim))
    return CountCut(counts, n, float(rng.uniform(1, 2)))


@pytest.mark.parametrize("m", [1, 7, 40_000])
def test_template_gram_rows_equal_the_split_product(m):
    """int16 and int32 count blocks, float batches, an aggregate (combine) and released rows: the per-template Gram
    rows from the blocks are the floats of scipy's product of the stacked rows with the new rows split by template
    (int16 ids below 32,768 templates, int32 above)."""
    rng = np.random.default_rng(11)
    dim, n = 120_000, 8323
    # templates in runs of columns, as the chain map lays them out, and shuffled ids within the range
    groups = np.sort(rng.integers(0, m, size=dim))
    groups, names = template_groups(type("D", (), {"dim": dim, "group_names": None,
                                                   "group_ids": lambda self: groups})())
    assert groups.dtype == (np.int16 if m <= 32_768 else np.int32) and len(names) == groups.max() + 1
    ws = WorkingSet(dim)
    ws.add(_count_cut(rng, dim, 4000, n, np.int16))
    ws.add(_count_cut(rng, dim, 5000, n, np.int32))
    ws.add(_float_cuts(rng, 2, dim, 3000))
    ws.add(_count_cut(rng, dim, 6000, n, np.int16))
    row, dl = ws.combine([0, 2, 3], np.array([0.2, 0.3, 0.5]))          # a float aggregate of counts and floats
    ws.add(Cuts(np.zeros(1, dtype=np.int64), row, np.array([dl])))
    ws.add(_count_cut(rng, dim, 3000, n, np.int32))
    for p in (0, 3):                                   # a whole counts block and one row of the float batch
        ws.active[p] = False
    ws.release([0, 3])
    kinds = {seg[1].data.dtype for seg in ws._segments}
    assert {np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.float64)} <= kinds
    m_t = len(names)
    new = np.arange(ws.size)
    got = ws.template_gram_rows(new, groups, m_t)
    want = old_template_rows(ws, new, groups, m_t)
    assert got.shape == want.shape == (m_t, ws.size, ws.size)
    np.testing.assert_array_equal(got, want)
    # summed over templates: the plain Gram rows
    np.testing.assert_allclose(got.sum(axis=0), ws.gram_rows(list(new)), rtol=1e-12, atol=1e-15)
    # and through TemplateGram as the previous grow on the live cuts; the dropped ones are not held (read as 0)
    g, ref = TemplateGram(groups, m_t), OldTemplateGram(groups, m_t)
    g.grow(ws)
    ref.grow(ws)
    act = np.nonzero(ws.active_mask())[0]
    np.testing.assert_array_equal(g.held, act)
    np.testing.assert_array_equal(g.block(act), ref.block(act))
    assert not g.Q[:, ~ws.active_mask()].any() and not g.Q[:, :, ~ws.active_mask()].any()


def test_grown_cut_by_cut_equals_the_split_product():
    """TemplateGram grown after every add, cuts dropped on the way (released or not): the live cuts' Qʲ equal the
    previous grow's, dropped cuts are compacted away, and the buffer stays as small as the live cuts (it held every
    position ever added)."""
    rng = np.random.default_rng(12)
    dim, n, m = 50_000, 977, 9
    groups = (np.arange(dim) * m // dim).astype(np.int16)
    new, old = TemplateGram(groups, m), OldTemplateGram(groups, m)
    ws = WorkingSet(dim)
    for k in range(24):
        ws.add(_count_cut(rng, dim, 2000 + 100 * k, n, np.int16 if k % 2 else np.int32) if k % 6 != 4
               else _float_cuts(rng, 3, dim, 1500))
        if k == 5:
            ws.active[1] = ws.active[5] = False
            ws.release([1, 5])
        if k >= 8:                                     # from here at most 4 live cuts: the oldest are dropped
            live = np.nonzero(ws.active_mask())[0]
            for p in live[:-4]:
                ws.active[p] = False
            if k % 2:
                ws.release(list(live[:-4]))
        new.grow(ws)
        old.grow(ws)
        act = np.nonzero(ws.active_mask())[0]
        np.testing.assert_array_equal(new.held, act)
        np.testing.assert_array_equal(new.block(act), old.block(act))
        alpha = np.where(ws.active_mask(), rng.uniform(0, 1, ws.size), 0.0)
        np.testing.assert_allclose(new.quad(alpha), old.quad(alpha), rtol=1e-13, atol=0)
        np.testing.assert_allclose(new.products(alpha), old.products(alpha) * ws.active_mask(), rtol=1e-13,
                                   atol=0)
    assert ws.size > 30 and new._buf.shape[1] <= 8 < old._buf.shape[1]


def test_group_kernels_equal_numpy():
    """‖wⱼ‖² and μ[groups] ⊙ ΔFᵀα (into a given vector) against bincount and the stacked product."""
    rng = np.random.default_rng(13)
    dim, n, m = 80_000, 501, 13
    groups = rng.integers(0, m, size=dim).astype(np.int16)
    w = rng.normal(size=dim)
    np.testing.assert_array_equal(group_sq_norms(w, groups, m), old_group_sq_norms(w, groups, m))
    np.testing.assert_array_equal(group_sq_norms(w, groups.astype(np.int32), m + 2),
                                  old_group_sq_norms(w, groups, m + 2))
    ws = WorkingSet(dim)
    for k in range(4):
        ws.add(_count_cut(rng, dim, 3000, n, np.int16 if k % 2 else np.int32))
    ws.add(_float_cuts(rng, 2, dim, 2000))
    alpha = rng.uniform(0, 1, size=ws.size)
    alpha[2] = 0.0
    mu = rng.dirichlet(np.ones(m))
    mu[3] = 0.0
    want = old_combination(ws, alpha, mu, groups)
    np.testing.assert_array_equal(template_combination(ws, alpha, mu, groups), want)
    buf = rng.normal(size=dim)
    assert template_combination(ws, alpha, mu, groups, out=buf) is buf
    np.testing.assert_array_equal(buf, want)
    empty = WorkingSet(dim)
    np.testing.assert_array_equal(template_combination(empty, np.zeros(0), mu, groups, out=buf), 0.0)


# ---------------------------------------------------------------------------------------------------------------
# whole fits against the previous path
# ---------------------------------------------------------------------------------------------------------------



def _same_fit(new, old, exact=True):
    assert new.n_iter == old.n_iter and new.termination == old.termination
    assert [h.n_cuts for h in new.history] == [h.n_cuts for h in old.history]
    if exact:
        assert [h.objective for h in new.history] == [h.objective for h in old.history]
        assert new.primal_objective == old.primal_objective and new.upper_bound == old.upper_bound
        np.testing.assert_array_equal(new.template_weights, old.template_weights)
        np.testing.assert_array_equal(new.w, old.w)
    else:
        np.testing.assert_allclose([h.objective for h in new.history], [h.objective for h in old.history],
                                   rtol=1e-10)
        np.testing.assert_allclose(new.template_weights, old.template_weights, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(new.w, old.w, rtol=1e-10, atol=1e-10 * np.abs(old.w).max())


@pytest.mark.parametrize("program", ["mtl", "pblock"])
def test_template_fit_on_the_ner_slice_equals_the_stacked_path(ner_slice, program, monkeypatch):
    """The 1-slack max_cuts fit on 120 CoNLL-2002 sentences (134 templates, count cuts, aggregates, released rows,
    w written over) without ever stacking the working set, against the same fit through the previous scipy path:
    the same rounds, objectives, template weights and w, bit for bit; the cut vectors still there when asked."""
    kw = dict(program=program, C=0.1, slack="one", eps=0.1, max_iter=25, drop_after=5, max_cuts=4)
    with monkeypatch.context() as mp:
        forbid_stacking(mp)
        new = mmprog.fit(ner_slice, **kw)
    assert any(seg[1].data.dtype.kind == "i" for seg in new.model.ws._segments)
    assert new.model.groups.dtype == np.int16 and new.model.gram.groups is new.model.groups
    with monkeypatch.context() as mp:
        patch_old_path(mp)
        old = mmprog.fit(ner_slice, **kw)
    _same_fit(new, old)
    # the cut vectors of the last solution are not stacked by the fit; its round's aggregation released some of its
    # rows afterwards (max_cuts), and the lazy view says so instead of holding them for one more round
    P = new.cut_p
    assert P._stacked is None and P.shape == (len(new.alpha), new.fmap.dim) and "NegatedRows" in repr(P)
    with pytest.raises(mmprog.exceptions.ParameterError, match="released"):
        P.toarray()


def test_mtl_fit_on_dense_features_equals_the_stacked_path(monkeypatch):
    """Real-valued features dense enough for the working set's BLAS copy (which m3n uses): MTL still gets scipy's
    floats from the blocks — the n-slack fit, float batches, the same numbers as before."""
    from test_mtl import grouped
    ds = grouped(5, n=12, T=4, groups=(0, 0, 1, 1, 2))
    kw = dict(program="mtl", C=1.0, slack="n", eps=1e-4, max_iter=30)
    with monkeypatch.context() as mp:
        forbid_stacking(mp)
        new = mmprog.fit(ds, **kw)
    assert new.model.ws._use_dense()
    with monkeypatch.context() as mp:
        patch_old_path(mp)
        old = mmprog.fit(ds, **kw)
    _same_fit(new, old)
    assert new.cut_p._stacked is None
    np.testing.assert_array_equal(new.cut_p.toarray(), old.cut_p.toarray())
    np.testing.assert_array_equal(new.cut_p @ new.w, old.cut_p @ old.w)


def test_rows_snapshot_is_the_rows_of_its_moment():
    """A solution's rows: later cuts are not in it, rows released before it read as released, rows released after
    it are refused (ParameterError), and nothing is stacked until asked."""
    rng = np.random.default_rng(14)
    dim, n = 30_000, 77
    ws = WorkingSet(dim)
    for k in range(3):
        ws.add(_count_cut(rng, dim, 500, n, np.int16))
    ws.add(_float_cuts(rng, 2, dim, 400))
    ws.active[1] = False
    ws.release([1])
    snap = ws.rows()
    want = ws.dF().copy()
    assert snap.shape == want.shape == (5, dim) and snap.nnz == want.nnz
    ws.add(_count_cut(rng, dim, 600, n, np.int32))
    P = mtl_module.NegatedRows(snap)
    assert P._stacked is None
    np.testing.assert_array_equal(P.toarray(), -want.toarray())
    later = ws.rows()
    ws.active[3] = False
    ws.release([3])
    with pytest.raises(mmprog.exceptions.ParameterError, match=r"cuts \[3\] were released"):
        later.tocsr()
    np.testing.assert_array_equal(ws.rows().tocsr().toarray(), ws.dF().toarray())
