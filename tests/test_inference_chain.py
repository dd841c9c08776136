"""Chain kernels against brute-force enumeration of all K^L labelings, on hundreds of small random instances.

Scores are mostly small integers so that ties are frequent; under ties a kernel may return any optimal labeling, so
the tests check that the returned labeling *attains* the enumerated optimum instead of comparing labelings.
"""
import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

import mmprog.inference.chain as chain_mod
from mmprog.exceptions import DataError, ParameterError
from mmprog.inference import forward_backward, loss_augment, max_marginals, viterbi, viterbi_topk


# ---------------------------------------------------------------------------------------------------------------
# independent brute force
# ---------------------------------------------------------------------------------------------------------------

def all_labelings(K, L):
    return np.array(list(itertools.product(range(K), repeat=L)), dtype=np.intp).reshape(-1, L)


def enum_scores(node, edge, b, L, per_position):
    """Scores of every labeling of sequence b (length L): (K^L,) plus the labelings (K^L, L)."""
    K = node.shape[2]
    Y = all_labelings(K, L)
    s = node[b, np.arange(L)[None, :], Y].sum(axis=1).astype(np.float64)
    for t in range(L - 1):
        e = edge[b, t] if per_position else edge
        s = s + e[Y[:, t], Y[:, t + 1]]
    return s, Y


def score_of(node, edge, b, y, per_position):
    """Score of one labeling y (length L, no padding) of sequence b, by a plain loop."""
    total = 0.0
    for t, k in enumerate(y):
        total += float(node[b, t, k])
        if t + 1 < len(y):
            e = edge[b, t] if per_position else edge
            total += float(e[k, y[t + 1]])
    return total


def random_batch(rng, *, B=None, T=None, K=None, per_position=None, integer=True, lo=-2, hi=2, garbage=True):
    B = B or int(rng.integers(1, 9))
    T = T or int(rng.integers(1, 6))
    K = K or int(rng.integers(1, 4))
    if per_position is None:
        per_position = bool(rng.integers(2))
    draw = (lambda shape: rng.integers(lo, hi + 1, shape).astype(np.float64)) if integer else \
        (lambda shape: rng.normal(size=shape))
    node = draw((B, T, K))
    edge = draw((B, T - 1, K, K)) if per_position else draw((K, K))
    lengths = rng.integers(1, T + 1, B)
    if garbage:  # padding content must not matter: fill it with huge values and NaN
        for b in range(B):
            node[b, lengths[b]:] = rng.choice([np.nan, 1e30, -1e30], size=node[b, lengths[b]:].shape)
            if per_position:
                edge[b, max(lengths[b] - 1, 0):] = 1e30
    return node, edge, lengths, per_position


# ---------------------------------------------------------------------------------------------------------------
# viterbi
# ---------------------------------------------------------------------------------------------------------------

def test_viterbi_matches_enumeration():
    rng = np.random.default_rng(0)
    n_checked = 0
    for _ in range(60):
        node, edge, lengths, pp = random_batch(rng)
        labels, scores = viterbi(node, edge, lengths)
        B, T, K = node.shape
        assert labels.shape == (B, T) and labels.dtype == np.int64
        assert scores.shape == (B,) and scores.dtype == np.float64
        for b in range(B):
            L = lengths[b]
            s, _ = enum_scores(node, edge, b, L, pp)
            assert scores[b] == s.max()
            assert np.all(labels[b, L:] == -1)
            y = labels[b, :L]
            assert np.all((y >= 0) & (y < K))
            assert score_of(node, edge, b, y, pp) == s.max()
            n_checked += 1
    assert n_checked > 200


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_viterbi_ties_go_to_the_first_maximiser(dtype):
    """Among tied optima the labeling returned is the smallest read from the end: the smallest last label of an
    optimum, then at every step backwards the smallest predecessor that still completes an optimum (small integer
    scores, exact in float32 too, so ties are frequent; per-position edges, length-1 sequences and a weighted loss
    included)."""
    rng = np.random.default_rng(31)
    n_tied = 0
    for trial in range(80):
        node, edge, lengths, pp = random_batch(rng, lo=-1, hi=1, garbage=False)
        B, T, K = node.shape
        lengths[0] = 1                          # always one length-1 sequence
        if trial % 2:
            Y = rng.integers(-1, K, (B, T))
            node = loss_augment(node, Y, 2.0)
        labels, scores = viterbi(node.astype(dtype), edge.astype(dtype), lengths)
        for b in range(B):
            L = lengths[b]
            s, Ys = enum_scores(node, edge, b, L, pp)
            optima = Ys[s == s.max()]
            n_tied += len(optima) > 1
            expected = min(tuple(y[::-1]) for y in optima)[::-1]
            assert tuple(labels[b, :L]) == expected
            assert scores[b] == s.max()
    assert n_tied > 100


def test_viterbi_real_scores_and_float32():
    rng = np.random.default_rng(1)
    for _ in range(40):
        node, edge, lengths, pp = random_batch(rng, integer=False, garbage=False)
        labels, scores = viterbi(node, edge, lengths)
        labels32, scores32 = viterbi(node.astype(np.float32), edge.astype(np.float32), lengths)
        for b in range(node.shape[0]):
            L = lengths[b]
            s, _ = enum_scores(node, edge, b, L, pp)
            assert scores[b] == pytest.approx(s.max(), abs=1e-12)
            # float32 search: the labeling is optimal up to float32 rounding; its score is reported in float64
            assert score_of(node, edge, b, labels32[b, :L], pp) == pytest.approx(s.max(), abs=1e-5)
            assert scores32[b] == pytest.approx(score_of(node.astype(np.float32).astype(np.float64),
                                                         edge.astype(np.float32).astype(np.float64), b,
                                                         labels32[b, :L], pp), abs=1e-9)


def test_viterbi_float32_integer_scores_exact():
    rng = np.random.default_rng(2)
    for _ in range(30):
        node, edge, lengths, pp = random_batch(rng, garbage=False, lo=-5, hi=5)
        labels, scores = viterbi(node.astype(np.float32), edge.astype(np.float32), lengths)
        for b in range(node.shape[0]):
            s, _ = enum_scores(node, edge, b, lengths[b], pp)
            assert scores[b] == s.max()
            assert score_of(node, edge, b, labels[b, :lengths[b]], pp) == s.max()


def test_viterbi_padding_does_not_matter_and_order_independent():
    rng = np.random.default_rng(3)
    for _ in range(20):
        node, edge, lengths, pp = random_batch(rng, B=7, garbage=False)
        clean_labels, clean_scores = viterbi(node, edge, lengths)
        node2 = node.copy()
        for b in range(7):
            node2[b, lengths[b]:] = rng.normal(size=node2[b, lengths[b]:].shape) * 1e6
        labels2, scores2 = viterbi(node2, edge, lengths)
        np.testing.assert_array_equal(scores2, clean_scores)
        np.testing.assert_array_equal(labels2, clean_labels)
        # each sequence alone gives the same optimum as inside the batch
        for b in range(7):
            e = edge[b:b + 1] if pp else edge
            lb, sb = viterbi(node[b:b + 1], e, lengths[b:b + 1])
            assert sb[0] == clean_scores[b]


def test_viterbi_forbidden_transitions():
    # -inf scores forbid labels/transitions; the optimum must avoid them
    rng = np.random.default_rng(4)
    for _ in range(30):
        node, edge, lengths, pp = random_batch(rng, K=3, per_position=False, garbage=False)
        edge = edge.copy()
        edge[0, 1] = -np.inf
        edge[2, 2] = -np.inf
        labels, scores = viterbi(node, edge, lengths)
        for b in range(node.shape[0]):
            s, _ = enum_scores(node, edge, b, lengths[b], False)
            assert scores[b] == s.max()
            assert score_of(node, edge, b, labels[b, :lengths[b]], False) == s.max()


def test_viterbi_larger_k_against_plain_dp():
    # beyond enumeration: a per-sequence textbook DP (argmax back-pointers) as the second implementation
    rng = np.random.default_rng(5)
    B, T, K = 40, 12, 30
    node = rng.normal(size=(B, T, K))
    edge = rng.normal(size=(K, K))
    lengths = rng.integers(1, T + 1, B)
    labels, scores = viterbi(node, edge, lengths)
    for b in range(B):
        L = lengths[b]
        d = node[b, 0].copy()
        for t in range(1, L):
            d = (d[:, None] + edge).max(axis=0) + node[b, t]
        assert scores[b] == pytest.approx(d.max(), abs=1e-10)
        assert score_of(node, edge, b, labels[b, :L], False) == pytest.approx(d.max(), abs=1e-10)


def test_viterbi_reused_work_arrays_threads_and_alternating_shapes():
    # work arrays are kept per thread between calls: results must not depend on what ran before or alongside
    import threading
    rng = np.random.default_rng(13)
    batches = [random_batch(rng, B=int(rng.integers(1, 40)), T=int(rng.integers(1, 9)), K=int(rng.integers(1, 6)),
                            integer=False) for _ in range(12)]
    expected = [viterbi(*b[:3]) for b in batches]
    for (node, edge, lengths, _), (lab, sc) in zip(batches[::-1], expected[::-1]):
        lab2, sc2 = viterbi(node, edge, lengths)
        np.testing.assert_array_equal(lab2, lab)
        np.testing.assert_array_equal(sc2, sc)
    failures = []

    def worker(order):
        for i in order * 5:
            lab2, sc2 = viterbi(*batches[i][:3])
            if not (np.array_equal(lab2, expected[i][0]) and np.array_equal(sc2, expected[i][1])):
                failures.append(i)
    threads = [threading.Thread(target=worker, args=(list(range(12)),)),
               threading.Thread(target=worker, args=(list(range(11, -1, -1)),))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert failures == []


# ---------------------------------------------------------------------------------------------------------------
# loss augmentation
# ---------------------------------------------------------------------------------------------------------------

def test_loss_augmented_viterbi_matches_enumeration():
    rng = np.random.default_rng(6)
    n_checked = 0
    for _ in range(50):
        node, edge, lengths, pp = random_batch(rng)
        B, T, K = node.shape
        Y = rng.integers(0, K, (B, T))
        Y[rng.random((B, T)) < 0.2] = -1  # hidden labels inside the sequence
        for b in range(B):
            Y[b, lengths[b]:] = -1
        weight = float(rng.choice([1.0, 0.5, 2.0]))
        aug = loss_augment(node, Y, weight)
        assert aug is not node
        labels, scores = viterbi(aug, edge, lengths)
        for b in range(B):
            L = lengths[b]
            s, Ys = enum_scores(node, edge, b, L, pp)
            gold = Y[b, :L]
            hamming = ((Ys != gold[None, :]) & (gold[None, :] >= 0)).sum(axis=1)
            target = (s + weight * hamming).max()
            assert scores[b] == target
            y = labels[b, :L]
            assert score_of(node, edge, b, y, pp) + weight * np.sum((y != gold) & (gold >= 0)) == target
            n_checked += 1
    assert n_checked > 150


def test_loss_augment_values_and_no_mutation():
    rng = np.random.default_rng(7)
    node = rng.normal(size=(3, 4, 5))
    before = node.copy()
    Y = np.array([[0, 1, -1, 4], [2, 2, 2, -1], [-1, -1, -1, -1]])
    out = loss_augment(node, Y, 0.25)
    np.testing.assert_array_equal(node, before)
    for b, t, k in itertools.product(range(3), range(4), range(5)):
        expected = before[b, t, k] + (0.25 if (Y[b, t] >= 0 and Y[b, t] != k) else 0.0)
        assert out[b, t, k] == expected


# ---------------------------------------------------------------------------------------------------------------
# forward-backward and max-marginals
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("scale", [1.0, 300.0])  # 300: exp would overflow without log-space shifting
def test_forward_backward_matches_enumeration(scale):
    rng = np.random.default_rng(8)
    for _ in range(40):
        node, edge, lengths, pp = random_batch(rng, integer=False)
        node, edge = node * scale, edge * scale
        nm, em, log_z = forward_backward(node, edge, lengths)
        B, T, K = node.shape
        assert nm.shape == (B, T, K) and em.shape == (B, T - 1, K, K) and log_z.shape == (B,)
        for b in range(B):
            L = lengths[b]
            s, Ys = enum_scores(node, edge, b, L, pp)
            lz = logsumexp(s)
            assert log_z[b] == pytest.approx(lz, rel=1e-12, abs=1e-9)
            p = np.exp(s - lz)
            for t in range(L):
                expect = np.bincount(Ys[:, t], weights=p, minlength=K)
                np.testing.assert_allclose(nm[b, t], expect, atol=1e-10)
            for t in range(L - 1):
                expect = np.zeros((K, K))
                np.add.at(expect, (Ys[:, t], Ys[:, t + 1]), p)
                np.testing.assert_allclose(em[b, t], expect, atol=1e-10)
            assert np.all(nm[b, L:] == 0) and np.all(em[b, L - 1:] == 0)


def test_forward_backward_with_forbidden_labels():
    rng = np.random.default_rng(9)
    for _ in range(20):
        node, edge, lengths, pp = random_batch(rng, K=3, per_position=False, integer=False, garbage=False)
        node[:, :, 1] = np.where(rng.random(node.shape[:2]) < 0.5, -np.inf, node[:, :, 1])
        edge[2, 0] = -np.inf
        nm, em, log_z = forward_backward(node, edge, lengths)
        for b in range(node.shape[0]):
            L = lengths[b]
            s, Ys = enum_scores(node, edge, b, L, False)
            lz = logsumexp(s)
            assert log_z[b] == pytest.approx(lz, abs=1e-10)
            p = np.exp(s - lz)
            for t in range(L):
                np.testing.assert_allclose(nm[b, t], np.bincount(Ys[:, t], weights=p, minlength=3), atol=1e-10)
        assert np.all(np.isfinite(nm)) and np.all(np.isfinite(em))


def test_max_marginals_match_enumeration():
    rng = np.random.default_rng(10)
    for _ in range(60):
        node, edge, lengths, pp = random_batch(rng)
        mm = max_marginals(node, edge, lengths)
        B, T, K = node.shape
        for b in range(B):
            L = lengths[b]
            s, Ys = enum_scores(node, edge, b, L, pp)
            for t in range(L):
                for k in range(K):
                    assert mm[b, t, k] == s[Ys[:, t] == k].max()
            assert np.all(mm[b, L:] == -np.inf)


# ---------------------------------------------------------------------------------------------------------------
# k-best
# ---------------------------------------------------------------------------------------------------------------

def test_topk_matches_sorted_enumeration():
    rng = np.random.default_rng(11)
    n_checked = 0
    for _ in range(60):
        node, edge, lengths, pp = random_batch(rng)
        k = int(rng.integers(1, 12))
        labels, scores = viterbi_topk(node, edge, lengths, k)
        B, T, K = node.shape
        assert labels.shape == (B, k, T) and scores.shape == (B, k)
        for b in range(B):
            L = lengths[b]
            s, _ = enum_scores(node, edge, b, L, pp)
            expect = np.sort(s)[::-1][:k]
            m = len(expect)
            np.testing.assert_array_equal(scores[b, :m], expect)
            assert np.all(scores[b, m:] == -np.inf) and np.all(labels[b, m:] == -1)
            got = labels[b, :m, :L]
            assert len({tuple(r) for r in got}) == m  # distinct labelings
            for j in range(m):
                assert score_of(node, edge, b, got[j], pp) == scores[b, j]
            assert np.all(labels[b, :, L:] == -1)
            n_checked += 1
    assert n_checked > 200


def test_topk_first_equals_viterbi_score():
    rng = np.random.default_rng(12)
    node, edge, lengths, pp = random_batch(rng, B=50, T=8, K=4, integer=False)
    _, vs = viterbi(node, edge, lengths)
    _, ts = viterbi_topk(node, edge, lengths, 3)
    np.testing.assert_allclose(ts[:, 0], vs, rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------------------------------------
# input errors: one-line DataError / ParameterError
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("node_shape,edge_shape,lengths,match", [
    ((2, 3), (2, 2), [1, 1], "node_scores must have shape"),
    ((2, 3, 2), (3, 3), [1, 1], "edge_scores must have shape"),
    ((2, 3, 2), (2, 3, 2, 2), [1, 1], "edge_scores must have shape"),
    ((2, 3, 2), (2, 2), [1], "lengths must be"),
    ((2, 3, 2), (2, 2), [0, 1], r"lengths\[0\] = 0"),
    ((2, 3, 2), (2, 2), [1, 4], r"lengths\[1\] = 4"),
    ((2, 3, 2), (2, 2), [1.0, 2.0], "lengths must be an integer"),
])
def test_chain_input_errors(node_shape, edge_shape, lengths, match):
    with pytest.raises(DataError, match=match) as err:
        viterbi(np.zeros(node_shape), np.zeros(edge_shape), np.array(lengths))
    assert "\n" not in str(err.value)


def test_loss_augment_and_topk_errors():
    with pytest.raises(DataError, match=r"Y\[0, 1\] = 3"):
        loss_augment(np.zeros((1, 2, 3)), np.array([[0, 3]]))
    with pytest.raises(DataError, match="Y must be"):
        loss_augment(np.zeros((1, 2, 3)), np.array([[0, 1, 2]]))
    with pytest.raises(ParameterError, match="k must be"):
        viterbi_topk(np.zeros((1, 2, 3)), np.zeros((3, 3)), np.array([2]), 0)
