"""Tree kernels against brute force: all head assignments (n <= 5), networkx's maximum_spanning_arborescence as a
referee on larger graphs, and enumeration of all labelings of small forests for belief propagation.

Scores are small integers in most tests so that ties are frequent; a kernel may return any optimal structure, so the
tests check that what it returns is valid and attains the enumerated optimum.
"""
import itertools

import networkx as nx
import numpy as np
import pytest
from scipy.special import logsumexp

from mmprog.exceptions import DataError
from mmprog.inference import (chu_liu_edmonds, chu_liu_edmonds_batch, eisner, eisner_batch, loss_augment_arcs,
                              tree_max_product, tree_sum_product)


# ---------------------------------------------------------------------------------------------------------------
# independent brute force for dependency trees
# ---------------------------------------------------------------------------------------------------------------

def all_trees(n):
    """Every head assignment of n tokens that is a tree rooted at 0: (M, n+1) int with column 0 = -1."""
    H = np.array(list(itertools.product(range(n + 1), repeat=n)), dtype=np.intp).reshape(-1, n)
    H = H[np.all(H != np.arange(1, n + 1)[None, :], axis=1)]  # no self-loops
    full = np.concatenate([np.zeros((len(H), 1), np.intp), H], axis=1)
    P = full.copy()
    for _ in range(n):  # follow heads n times: a tree reaches the root from everywhere
        P = np.take_along_axis(full, P, axis=1)
    trees = full[np.all(P == 0, axis=1)]
    trees[:, 0] = -1
    return trees


_TREES = {n: all_trees(n) for n in range(1, 6)}


def descendants(heads, h):
    """Set of nodes below h (h excluded) in a tree given by heads (heads[0] = -1)."""
    out = set()
    for v in range(1, len(heads)):
        u = v
        while u != -1 and u != 0:
            u = heads[u]
            if u == h:
                out.add(v)
                break
    return out


def is_projective(heads):
    """Projective: for every arc (h, m), every word strictly between h and m is a descendant of h."""
    for m in range(1, len(heads)):
        h = int(heads[m])
        below = descendants(heads, h)
        if any(k not in below for k in range(min(h, m) + 1, max(h, m))):
            return False
    return True


def crosses(heads):
    """Second, independent characterisation: two arcs whose spans properly interleave."""
    arcs = [(min(int(heads[m]), m), max(int(heads[m]), m)) for m in range(1, len(heads))]
    return any(a < c < b < d for (a, b), (c, d) in itertools.permutations(arcs, 2))


_PROJ = {n: np.array([is_projective(t) for t in T]) for n, T in _TREES.items()}


def tree_scores(S, trees):
    n = S.shape[0] - 1
    return S[trees[:, 1:], np.arange(1, n + 1)[None, :]].sum(axis=1)


def assert_is_tree(heads, n):
    assert heads.shape == (n + 1,) and heads.dtype == np.int64 and heads[0] == -1
    assert np.all((heads[1:] >= 0) & (heads[1:] <= n)) and np.all(heads[1:] != np.arange(1, n + 1))
    for m in range(1, n + 1):  # reaches the root within n steps
        v, steps = m, 0
        while v != 0:
            v, steps = heads[v], steps + 1
            assert steps <= n, f"cycle through {m}: {heads}"


def score(S, heads):
    return float(sum(S[heads[m], m] for m in range(1, len(heads))))


def test_projectivity_checks_agree():
    for n, T in _TREES.items():
        for t, p in zip(T, _PROJ[n]):
            assert p == (not crosses(t))
    assert _PROJ[3].sum() < len(_TREES[3])  # the enumeration contains non-projective trees


# ---------------------------------------------------------------------------------------------------------------
# Chu-Liu-Edmonds
# ---------------------------------------------------------------------------------------------------------------

def test_cle_matches_enumeration():
    rng = np.random.default_rng(0)
    for it in range(400):
        n = int(rng.integers(1, 6))
        S = rng.integers(-3, 4, (n + 1, n + 1)).astype(float)
        heads = chu_liu_edmonds(S)
        assert_is_tree(heads, n)
        assert score(S, heads) == tree_scores(S, _TREES[n]).max()


def test_cle_single_token_and_root_only():
    np.testing.assert_array_equal(chu_liu_edmonds(np.zeros((1, 1))), [-1])
    np.testing.assert_array_equal(chu_liu_edmonds(np.array([[0.0, 5.0], [7.0, 9.0]])), [-1, 0])


def nx_best(S):
    G = nx.DiGraph()
    n1 = S.shape[0]
    for h in range(n1):
        for m in range(1, n1):
            if h != m and np.isfinite(S[h, m]):
                G.add_edge(h, m, weight=float(S[h, m]))
    A = nx.maximum_spanning_arborescence(G, attr="weight")
    assert all(A.in_degree(m) == 1 for m in range(1, n1)) and A.in_degree(0) == 0
    return sum(G[h][m]["weight"] for h, m in A.edges())


@pytest.mark.parametrize("kind", ["normal", "integer", "forbidden"])
def test_cle_matches_networkx_on_larger_graphs(kind):
    rng = np.random.default_rng({"normal": 1, "integer": 2, "forbidden": 3}[kind])
    mats = []
    for it in range(25):
        n = int(rng.integers(6, 31))
        if kind == "integer":
            S = rng.integers(0, 5, (n + 1, n + 1)).astype(float)
        else:
            S = rng.normal(size=(n + 1, n + 1))
        if kind == "forbidden":  # sparse graphs: most token-token arcs forbidden, root arcs kept so a tree exists
            S[1:, 1:][rng.random((n, n)) < 0.7] = -np.inf
        heads = chu_liu_edmonds(S)
        assert_is_tree(heads, n)
        assert score(S, heads) == pytest.approx(nx_best(S), abs=1e-9)
        mats.append(S)
    # the batched kernel (all sentences contracted together, padded to the longest) on the same graphs
    for S, heads in zip(mats, chu_liu_edmonds_batch(mats)):
        assert_is_tree(heads, S.shape[0] - 1)
        assert score(S, heads) == pytest.approx(nx_best(S), abs=1e-9)


def test_cle_batch_mixed_lengths():
    rng = np.random.default_rng(4)
    mats = [rng.integers(-2, 3, (n + 1, n + 1)).astype(float) for n in rng.integers(1, 6, 30)]
    out = chu_liu_edmonds_batch(mats)
    for S, heads in zip(mats, out):
        n = S.shape[0] - 1
        assert_is_tree(heads, n)
        assert score(S, heads) == tree_scores(S, _TREES[n]).max()


# ---------------------------------------------------------------------------------------------------------------
# Eisner
# ---------------------------------------------------------------------------------------------------------------

def test_eisner_matches_enumeration_of_projective_trees():
    rng = np.random.default_rng(5)
    for it in range(400):
        n = int(rng.integers(1, 6))
        S = rng.integers(-3, 4, (n + 1, n + 1)).astype(float)
        heads = eisner(S)
        assert_is_tree(heads, n)
        assert is_projective(heads)
        assert score(S, heads) == tree_scores(S, _TREES[n])[_PROJ[n]].max()


def test_eisner_batch_mixed_lengths():
    rng = np.random.default_rng(6)
    mats = [rng.normal(size=(n + 1, n + 1)) for n in rng.integers(1, 6, 60)]
    out = eisner_batch(mats)
    assert len(out) == 60
    for S, heads in zip(mats, out):
        n = S.shape[0] - 1
        assert_is_tree(heads, n)
        assert is_projective(heads)
        assert score(S, heads) == pytest.approx(tree_scores(S, _TREES[n])[_PROJ[n]].max(), abs=1e-12)


def test_batches_are_chunked_by_length(monkeypatch):
    # a tiny memory budget forces one chunk per few sentences; results must stay in input order and optimal
    import mmprog.inference.trees as trees_mod
    monkeypatch.setattr(trees_mod, "_CHUNK_ELEMENTS", 40)
    rng = np.random.default_rng(13)
    mats = [rng.integers(-2, 3, (n + 1, n + 1)).astype(float) for n in rng.integers(1, 6, 40)]
    for S, c, e in zip(mats, chu_liu_edmonds_batch(mats), eisner_batch(mats)):
        n = S.shape[0] - 1
        assert_is_tree(c, n)
        assert_is_tree(e, n)
        assert score(S, c) == tree_scores(S, _TREES[n]).max()
        assert score(S, e) == tree_scores(S, _TREES[n])[_PROJ[n]].max()
    assert chu_liu_edmonds_batch([]) == [] and eisner_batch([]) == []


def test_eisner_not_above_cle_and_equal_on_projective_optimum():
    # on larger sentences: the projective optimum never beats the unrestricted one, and equals it whenever the MST
    # happens to be projective (chain-favouring scores make that common)
    rng = np.random.default_rng(7)
    equal_cases = 0
    for it in range(30):
        n = int(rng.integers(6, 16))
        S = rng.normal(size=(n + 1, n + 1))
        S[np.arange(n), np.arange(1, n + 1)] += 3.0 * (it % 2)
        e, c = eisner(S), chu_liu_edmonds(S)
        assert_is_tree(e, n)
        assert is_projective(e)
        assert score(S, e) <= score(S, c) + 1e-12
        if is_projective(c):
            assert score(S, e) == pytest.approx(score(S, c), abs=1e-12)
            equal_cases += 1
    assert equal_cases >= 5


# ---------------------------------------------------------------------------------------------------------------
# loss augmentation
# ---------------------------------------------------------------------------------------------------------------

def test_loss_augmented_decoding_matches_enumeration():
    rng = np.random.default_rng(8)
    for it in range(200):
        n = int(rng.integers(1, 6))
        S = rng.integers(-3, 4, (n + 1, n + 1)).astype(float)
        T = _TREES[n]
        gold = T[rng.integers(len(T))]
        weight = float(rng.choice([1.0, 2.5]))
        aug = loss_augment_arcs(S, gold, weight)
        hamming = (T[:, 1:] != gold[None, 1:]).sum(axis=1)
        target = tree_scores(S, T) + weight * hamming
        c = chu_liu_edmonds(aug)
        assert score(S, c) + weight * np.sum(c[1:] != gold[1:]) == target.max()
        e = eisner(aug)
        assert score(S, e) + weight * np.sum(e[1:] != gold[1:]) == target[_PROJ[n]].max()


def test_loss_augment_arcs_values():
    S = np.arange(16, dtype=float).reshape(4, 4)
    gold = np.array([-1, 2, 0, 2])
    out = loss_augment_arcs(S, gold, 0.5)
    for h, m in itertools.product(range(4), range(4)):
        assert out[h, m] == S[h, m] + (0.5 if (m >= 1 and h != gold[m]) else 0.0)
    assert S[0, 1] == 1.0  # input untouched


# ---------------------------------------------------------------------------------------------------------------
# belief propagation on forests
# ---------------------------------------------------------------------------------------------------------------

def random_forest(rng, N):
    """A random forest whose node ids are shuffled (parents are not always earlier)."""
    par = np.full(N, -1)
    for i in range(1, N):
        if rng.random() < 0.8:
            par[i] = rng.integers(0, i)
    perm = rng.permutation(N)  # node i is renamed perm[i]
    out = np.full(N, -1)
    out[perm] = np.where(par >= 0, perm[np.maximum(par, 0)], -1)
    return out


def enum_forest(parent, node_pot, edge_pot):
    N, K = node_pot.shape
    Y = np.array(list(itertools.product(range(K), repeat=N)), dtype=np.intp).reshape(-1, N)
    s = node_pot[np.arange(N)[None, :], Y].sum(axis=1)
    for c in range(N):
        if parent[c] >= 0:
            s = s + edge_pot[c, Y[:, parent[c]], Y[:, c]]
    return s, Y


@pytest.mark.parametrize("integer", [True, False])
def test_tree_bp_matches_enumeration(integer):
    rng = np.random.default_rng(9 + integer)
    for it in range(150):
        N = int(rng.integers(1, 8))
        K = int(rng.integers(1, 4))
        parent = random_forest(rng, N)
        draw = (lambda shape: rng.integers(-2, 3, shape).astype(float)) if integer else \
            (lambda shape: rng.normal(size=shape) * 3)
        node_pot, edge_pot = draw((N, K)), draw((N, K, K))
        s, Y = enum_forest(parent, node_pot, edge_pot)

        labels, best = tree_max_product(parent, node_pot, edge_pot)
        assert labels.shape == (N,) and labels.dtype == np.int64
        assert best == pytest.approx(s.max(), abs=1e-12)
        mine = node_pot[np.arange(N), labels].sum() + sum(
            edge_pot[c, labels[parent[c]], labels[c]] for c in range(N) if parent[c] >= 0)
        assert mine == pytest.approx(s.max(), abs=1e-12)

        nm, em, log_z = tree_sum_product(parent, node_pot, edge_pot)
        lz = logsumexp(s)
        assert log_z == pytest.approx(lz, abs=1e-10)
        p = np.exp(s - lz)
        for c in range(N):
            np.testing.assert_allclose(nm[c], np.bincount(Y[:, c], weights=p, minlength=K), atol=1e-10)
            expect = np.zeros((K, K))
            if parent[c] >= 0:
                np.add.at(expect, (Y[:, parent[c]], Y[:, c]), p)
            np.testing.assert_allclose(em[c], expect, atol=1e-10)


def test_tree_bp_with_forbidden_labels():
    rng = np.random.default_rng(11)
    for it in range(80):
        N, K = int(rng.integers(2, 7)), 3
        parent = random_forest(rng, N)
        node_pot = rng.normal(size=(N, K))
        edge_pot = rng.normal(size=(N, K, K))
        node_pot[rng.random((N, K)) < 0.25] = -np.inf
        edge_pot[rng.random((N, K, K)) < 0.25] = -np.inf
        s, Y = enum_forest(parent, node_pot, edge_pot)
        nm, em, log_z = tree_sum_product(parent, node_pot, edge_pot)
        labels, best = tree_max_product(parent, node_pot, edge_pot)
        assert best == s.max() or best == pytest.approx(s.max(), abs=1e-12)
        if not np.isfinite(s.max()):
            assert log_z == -np.inf
            continue
        lz = logsumexp(s)
        assert log_z == pytest.approx(lz, abs=1e-10)
        p = np.exp(s - lz)
        for c in range(N):
            np.testing.assert_allclose(nm[c], np.bincount(Y[:, c], weights=p, minlength=K), atol=1e-10)
            if parent[c] >= 0:
                expect = np.zeros((K, K))
                np.add.at(expect, (Y[:, parent[c]], Y[:, c]), p)
                np.testing.assert_allclose(em[c], expect, atol=1e-10)


def test_two_level_hierarchy_batch_as_one_forest():
    # PoMEN's shape: many examples, each a root over a few leaves, joined into one forest
    rng = np.random.default_rng(12)
    sizes = rng.integers(1, 5, 40)
    parent, offsets = [], []
    for size in sizes:
        base = len(parent)
        offsets.append(base)
        parent += [-1] + [base] * int(size)
    parent = np.array(parent)
    N, K = len(parent), 3
    node_pot, edge_pot = rng.normal(size=(N, K)), rng.normal(size=(N, K, K))
    nm, em, log_z = tree_sum_product(parent, node_pot, edge_pot)
    labels, best = tree_max_product(parent, node_pot, edge_pot)
    total_z, total_best = 0.0, 0.0
    for base, size in zip(offsets, sizes):
        idx = np.arange(base, base + size + 1)
        sub_parent = np.where(parent[idx] >= 0, parent[idx] - base, -1)
        s, Y = enum_forest(sub_parent, node_pot[idx], edge_pot[idx])
        total_z += logsumexp(s)
        total_best += s.max()
        p = np.exp(s - logsumexp(s))
        for j, c in enumerate(idx):
            np.testing.assert_allclose(nm[c], np.bincount(Y[:, j], weights=p, minlength=K), atol=1e-10)
    assert log_z == pytest.approx(total_z, abs=1e-9)
    assert best == pytest.approx(total_best, abs=1e-9)


# ---------------------------------------------------------------------------------------------------------------
# input errors
# ---------------------------------------------------------------------------------------------------------------

def test_tree_input_errors():
    with pytest.raises(DataError, match="square"):
        chu_liu_edmonds(np.zeros((2, 3)))
    with pytest.raises(DataError, match=r"scores\[1, 2\] = nan"):
        S = np.zeros((3, 3))
        S[1, 2] = np.nan
        eisner(S)
    with pytest.raises(DataError, match=r"gold_heads\[2\] = 5"):
        loss_augment_arcs(np.zeros((3, 3)), np.array([-1, 0, 5]))
    with pytest.raises(DataError, match="not a forest"):
        tree_max_product(np.array([1, 2, 0]), np.zeros((3, 2)), np.zeros((3, 2, 2)))
    with pytest.raises(DataError, match=r"parent\[1\] = 7"):
        tree_sum_product(np.array([-1, 7]), np.zeros((2, 2)), np.zeros((2, 2, 2)))
    with pytest.raises(DataError, match="edge_pot must have shape"):
        tree_sum_product(np.array([-1, 0]), np.zeros((2, 2)), np.zeros((2, 3, 3)))


def test_eisner_on_long_sentences_equals_cle_when_the_best_tree_is_projective():
    # long sentences exercise the compiled kernel's backtracking stack; planting a projective tree with a large
    # margin makes it the best tree overall, which Chu-Liu-Edmonds (checked by enumeration above) finds as well
    rng = np.random.default_rng(21)
    for n in (40, 120, 250):
        S = rng.normal(size=(n + 1, n + 1))
        planted = np.concatenate([[-1, 0], np.arange(1, n)])        # a chain 0 → 1 → 2 → ... → n
        S[planted[1:], np.arange(1, n + 1)] += 10 * n
        e, c = eisner(S), chu_liu_edmonds(S)
        assert_is_tree(e, n) and is_projective(e)
        assert np.array_equal(e, planted) and np.array_equal(c, planted)
    # a random long matrix: Eisner's tree is projective and never scores above the unrestricted optimum
    S = rng.normal(size=(201, 201))
    e, c = eisner(S), chu_liu_edmonds(S)
    assert_is_tree(e, 200) and is_projective(e) and score(S, e) <= score(S, c) + 1e-9
