"""1-slack cuts on sparse template features are built sparse, merged per coordinate, and change nothing.

Truth: the dense state block Xᵀ(E_gold − E_ŷ) computed the way it always was (``sparse=False``), and the fit on a
real CoNLL-2002 NER slice (134 templates) with the old dense path patched back in.
"""
import numpy as np
import pytest
import scipy.sparse as sp

import mmprog
from mmprog.datasets.registry import default_data_root
from mmprog.features import ChainFeatureMap


@pytest.fixture(scope="module")
def ner_slice():
    path = default_data_root() / "conll2002" / "esp.train.gz"
    if not path.exists():
        pytest.skip(f"CoNLL-2002 not found at {path}")
    from mmprog.datasets import load_conll
    from mmprog.features.templates import TemplateExtractor
    train = load_conll(path, columns=("form", "pos", "ne"))
    return TemplateExtractor("ner").to_dataset(train.subset(np.arange(120)))


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

    def dense_path(self, w, prepared, idx=None, sparse=False):
        dF, dl, h = orig(self, w, prepared, idx)         # the dense block, converted afterwards as before
        return sp.csr_matrix(dF[None, :]), dl, h

    monkeypatch.setattr(ChainFeatureMap, "separate_sum", dense_path)
    old = mmprog.fit(ner_slice, program="m3n", C=C, slack="one", eps=eps, max_iter=300)
    assert new.termination == old.termination == "converged"
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
    assert full.termination == bounded.termination == "converged"
    assert max(h.n_active for h in bounded.history) <= 5 < max(h.n_active for h in full.history)
    ws = bounded.model.ws
    assert ws.nnz == ws.dF()[ws.active_mask()].nnz            # only the active rows are held
    width = C * len(ner_slice) * eps
    assert abs(full.primal_objective - bounded.primal_objective) <= width
    assert max(full.primal_objective, bounded.primal_objective) <= min(full.upper_bound, bounded.upper_bound) + 1e-6
    # the master optimum never goes down across an aggregation (the aggregate reproduces the current α)
    lower = [h.objective for h in bounded.history]
    assert all(b >= a - 1e-6 * max(1.0, abs(a)) for a, b in zip(lower, lower[1:]))
