"""Second-order (adjacent-sibling) Eisner against enumeration of every projective tree of tiny sentences."""
import numpy as np
import pytest

from mmprog.exceptions import DataError
from mmprog.inference import eisner, eisner2, loss_augment_arcs, sibling_tree_score, tree_score

from test_arcs import all_trees


def ref_score(A, B, h):
    """Written from the definition independently of the module: each head's children on each side, nearest
    first; the nearest takes s = h, every later one the child before it."""
    n1 = len(h)
    total = 0.0
    for head in range(n1):
        right = [m for m in range(head + 1, n1) if h[m] == head]
        left = [m for m in range(head - 1, 0, -1) if h[m] == head]
        for side in (right, left):
            prev = head
            for m in side:
                total += A[head, m] + B[head, prev, m]
                prev = m
    return total


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_eisner2_is_the_best_projective_tree(n):
    rng = np.random.default_rng(n)
    trees = all_trees(n, projective=True)
    for rep in range(6):
        A = rng.normal(size=(n + 1, n + 1))
        B = rng.normal(size=(n + 1, n + 1, n + 1)) * (2.0 if rep % 2 else 0.5)
        scores = [ref_score(A, B, t) for t in trees]
        best = trees[int(np.argmax(scores))]
        got = eisner2(A, B)
        assert got[0] == -1 and any(np.array_equal(got, t) for t in trees)        # a projective tree
        assert ref_score(A, B, got) == pytest.approx(max(scores), abs=1e-9)
        assert sibling_tree_score(A, B, got) == pytest.approx(ref_score(A, B, got), abs=1e-9)
        if len(scores) == 1 or sorted(scores)[-2] < max(scores) - 1e-9:
            assert np.array_equal(got, best)
        # loss-augmented: the head Hamming loss added to the arc scores
        gold = trees[rng.integers(len(trees))]
        aug = [s + np.sum(t[1:] != gold[1:]) for s, t in zip(scores, trees)]
        got = eisner2(loss_augment_arcs(A, gold), B)
        assert ref_score(A, B, got) + np.sum(got[1:] != gold[1:]) == pytest.approx(max(aug), abs=1e-9)


def test_zero_sibling_scores_give_first_order_eisner():
    rng = np.random.default_rng(9)
    for n in (3, 7, 12):
        A = rng.normal(size=(n + 1, n + 1))
        h1, h2 = eisner(A), eisner2(A, np.zeros((n + 1,) * 3))
        assert tree_score(A, h2) == pytest.approx(tree_score(A, h1))


def test_errors():
    with pytest.raises(DataError, match="sibling must be"):
        eisner2(np.zeros((3, 3)), np.zeros((3, 3)))
    B = np.zeros((3, 3, 3))
    B[1, 1, 2] = np.nan
    with pytest.raises(DataError, match=r"sibling\[1, 1, 2\]"):
        eisner2(np.zeros((3, 3)), B)
