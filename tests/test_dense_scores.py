"""Token scores of dense inputs (:meth:`ChainFeatureMap._token_scores`): a matrix scored again and again (an oracle's
rounds) is scored from its non-zeros by a compiled kernel (:func:`mmprog.features._binary.nonzero_row_scores`) from
its second scoring on; checked against the per-token sums written out here (each score Σ_j x_tj·W[j, k] added in
ascending j from 0.0, which is the kernel's order, so equal to the last bit) and against BLAS's product; a one-off
scoring, a matrix with more non-zeros than the threshold and a subset of the examples as well."""
import numpy as np
import pytest

from mmprog.datasets import SequenceDataset
from mmprog.features.chain import ChainFeatureMap


def _data(values, density, seed=0, n=30, d=17, K=4):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 7, size=n)
    X = []
    for L in lengths:
        x = (rng.random((L, d)) < density).astype(np.float64)
        if values == "real":
            x *= rng.normal(size=(L, d))
        X.append(x)
    Y = [rng.integers(0, K, size=L) for L in lengths]
    return SequenceDataset(X, Y, K), ChainFeatureMap(d, K), rng.normal(size=d * K + K * K)


def _written_out(X, W):
    out = np.zeros((X.shape[0], W.shape[1]))
    for t in range(X.shape[0]):
        for k in range(W.shape[1]):
            s = 0.0
            for j in range(X.shape[1]):
                if X[t, j] != 0.0:
                    s += X[t, j] * W[j, k]
            out[t, k] = s
    return out


@pytest.mark.parametrize("values", ["binary", "real"])
def test_scores_from_the_non_zeros_equal_the_written_out_sums(values):
    ds, fmap, w = _data(values, density=0.25)
    prep = fmap.prepare(ds)
    idx = np.arange(prep.n)
    X, W = prep.data["X"], fmap.weights(w)["state"]
    first = fmap._token_scores(w, prep, idx)[0]            # one-off: BLAS, no copy of X made
    assert prep.data["X_nonzeros"][2] is None
    np.testing.assert_allclose(first, X @ W, rtol=1e-13, atol=1e-13)
    truth = _written_out(X, W)
    for _ in range(2):                                     # scored again: from the non-zeros
        again = fmap._token_scores(w, prep, idx)[0]
        assert prep.data["X_nonzeros"][2] is not None
        np.testing.assert_array_equal(again, truth)
    np.testing.assert_allclose(again, first, rtol=1e-13, atol=1e-13)
    sub = np.array([3, 7, 8, 20])                           # gathered rows of some examples
    node, _, tok, *_ = fmap._token_scores(w, prep, sub)
    np.testing.assert_array_equal(node, truth[tok])


def test_a_mostly_non_zero_matrix_stays_with_blas():
    ds, fmap, w = _data("real", density=0.9)
    prep = fmap.prepare(ds)
    idx = np.arange(prep.n)
    for _ in range(3):
        node = fmap._token_scores(w, prep, idx)[0]
    assert prep.data["X_nonzeros"][2] is None
    np.testing.assert_allclose(node, prep.data["X"] @ fmap.weights(w)["state"], rtol=1e-13, atol=1e-13)
