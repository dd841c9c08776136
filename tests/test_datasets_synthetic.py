"""Synthetic generators and the spec registry: determinism, shapes, and the samplers against exact enumeration."""
import itertools
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from mmprog.datasets import (DATA_FOLDERS, LOADERS, HierarchicalDataset, SequenceDataset, TokenCorpus, TreeDataset,
                             describe_loaders, gibbs_chain, load_spec, sample_forest, sparse_sets, synthetic_chain,
                             synthetic_hierarchy, tiny_chain, tiny_trees)
from mmprog.datasets.registry import default_data_root
from mmprog.exceptions import DataError, ParameterError


# ---------------------------------------------------------------------------------------------- exact references
def chain_probs(node, trans):
    """p(y) for every y in K^L by enumeration; node (L, K), trans (K, K)."""
    L, K = node.shape
    ys = np.array(list(itertools.product(range(K), repeat=L)))
    s = node[np.arange(L), ys].sum(axis=1)
    if L > 1:
        s = s + trans[ys[:, :-1], ys[:, 1:]].sum(axis=1)
    p = np.exp(s - s.max())
    return ys, p / p.sum()


def forest_probs(node, parents, trans):
    M, K = node.shape
    ys = np.array(list(itertools.product(range(K), repeat=M)))
    s = node[np.arange(M), ys].sum(axis=1)
    for v in range(M):
        if parents[v] >= 0:
            s = s + trans[ys[:, parents[v]], ys[:, v]]
    p = np.exp(s - s.max())
    return ys, p / p.sum()


def assert_matches(draws, ys, p):
    """Empirical frequencies of the rows of ``draws`` match ``p`` within binomial error."""
    N = draws.shape[0]
    K = int(max(ys.max(), draws.max())) + 1
    code = lambda a: (a * K ** np.arange(a.shape[1])[::-1]).sum(axis=1)  # noqa: E731
    freq = np.bincount(code(draws), minlength=K ** ys.shape[1])[code(ys)] / N
    tol = 4.5 * np.sqrt(p * (1 - p) / N) + 1e-3
    assert (np.abs(freq - p) <= tol).all(), np.max(np.abs(freq - p) - tol)


# burn-in grows with the coupling: the (5, 2) instance has strongly alternating transitions (two modes) and needed
# ~60 sweeps, where 25 left a visible bias; the stationary distribution is what is checked here
@pytest.mark.parametrize("L, K, sweeps", [(1, 3, 3), (3, 3, 20), (4, 2, 30), (5, 2, 60)])
def test_gibbs_chain_matches_enumeration(L, K, sweeps):
    rng = np.random.default_rng(L * 10 + K)
    node = rng.normal(size=(L, K))
    trans = rng.normal(scale=1.5, size=(K, K))
    N = 20000
    draws = gibbs_chain(np.broadcast_to(node, (N, L, K)), trans, sweeps=sweeps, rng=np.random.default_rng(1))
    assert draws.shape == (N, L) and draws.dtype == np.int64
    assert_matches(draws, *chain_probs(node, trans))


@pytest.mark.parametrize("K", [2, 3])
def test_sample_forest_matches_enumeration(K):
    rng = np.random.default_rng(K)
    parents = np.array([-1, 0, 0, 2, -1])  # a tree 0 -> {1, 2}, 2 -> 3, and a lone root 4
    node = rng.normal(size=(5, K))
    trans = rng.normal(scale=1.5, size=(K, K))
    N = 30000
    offsets = np.repeat(np.arange(N) * 5, 5)
    P = np.where(np.tile(parents, N) >= 0, np.tile(parents, N) + offsets, -1)
    draws = sample_forest(np.tile(node, (N, 1)), P, trans, np.random.default_rng(7)).reshape(N, 5)
    assert_matches(draws, *forest_probs(node, parents, trans))


# ---------------------------------------------------------------------------------------------- synthetic_chain
def test_synthetic_chain_shape_and_truth():
    ds, truth = synthetic_chain(n_instances=60, gibbs_sweeps=5, return_truth=True)
    assert isinstance(ds, SequenceDataset) and len(ds) == 60 and ds.n_features == 100 and ds.n_labels == 2
    assert (ds.lengths == 8).all() and not ds.is_sparse and ds.fold_ids is None
    assert truth["state"].shape == (100, 2) and truth["transition"].shape == (2, 2)
    assert (truth["state"][30:] == 0).all() and (truth["state"][:30] != 0).all()
    assert np.array_equal(truth["vector"], np.concatenate([truth["state"].ravel(), truth["transition"].ravel()]))
    assert list(truth["relevant"]) == list(range(30)) and ds.info["true_w"] is truth
    assert set(np.concatenate(ds.Y).tolist()) == {0, 1}


def test_synthetic_chain_deterministic():
    a = synthetic_chain(n_instances=30, gibbs_sweeps=5, seed=3)
    b = synthetic_chain(n_instances=30, gibbs_sweeps=5, seed=3)
    c = synthetic_chain(n_instances=30, gibbs_sweeps=5, seed=4)
    assert all(np.array_equal(x, y) for x, y in zip(a.X, b.X)) and all(np.array_equal(x, y) for x, y in zip(a.Y, b.Y))
    assert not np.array_equal(a.X[0], c.X[0])


def test_synthetic_chain_model_seed_shares_the_crf():
    _, t1 = synthetic_chain(n_instances=10, gibbs_sweeps=2, seed=1, model_seed=9, return_truth=True)
    d2, t2 = synthetic_chain(n_instances=10, gibbs_sweeps=2, seed=2, model_seed=9, return_truth=True)
    assert np.array_equal(t1["vector"], t2["vector"])
    _, t3 = synthetic_chain(n_instances=10, gibbs_sweeps=2, seed=1, return_truth=True)
    assert not np.array_equal(t1["vector"], t3["vector"])


def test_synthetic_chain_correlated_groups():
    ds = synthetic_chain(n_instances=200, gibbs_sweeps=1, seed=0)
    Z = np.vstack(ds.X)  # (1600, 100)
    C = np.corrcoef(Z, rowvar=False)
    for g in range(10):
        block = C[3 * g:3 * g + 3, 3 * g:3 * g + 3]
        assert block.min() > 0.99  # N(0,1) copies with N(0, 0.05²) noise: correlation ≈ 1/(1+0.0025)
    off = C.copy()
    for g in range(10):
        off[3 * g:3 * g + 3, 3 * g:3 * g + 3] = 0
    np.fill_diagonal(off, 0)
    assert np.abs(off).max() < 0.15
    assert abs(Z[:, 30:].std() - 1) < 0.02 and abs(Z[:, 30:].mean()) < 0.02
    iid = np.vstack(synthetic_chain(n_instances=200, gibbs_sweeps=1, correlated=False).X)
    C2 = np.corrcoef(iid[:, :30], rowvar=False)
    np.fill_diagonal(C2, 0)
    assert np.abs(C2).max() < 0.15


def test_synthetic_chain_labels_follow_the_crf():
    # End to end: if Y ~ p(y|x) then E[p(Y|X)] = E_X[Σ_y p(y|X)²]; compute both exactly per sequence.
    ds, truth = synthetic_chain(n_instances=4000, n_features=6, n_relevant=3, length=3, n_labels=2,
                                gibbs_sweeps=20, seed=5, return_truth=True)
    p_drawn, p_sq = [], []
    for x, y in ds:
        ys, p = chain_probs(x @ truth["state"], truth["transition"])
        p_drawn.append(p[(ys == y).all(axis=1)][0])
        p_sq.append((p ** 2).sum())
    p_drawn, p_sq = np.array(p_drawn), np.array(p_sq)
    se = p_drawn.std() / np.sqrt(len(p_drawn))
    assert abs(p_drawn.mean() - p_sq.mean()) < 4 * se
    # and the labels carry signal: far more probable under the true model than a uniform draw (1/8)
    assert p_drawn.mean() > 0.2


@pytest.mark.parametrize("kwargs", [dict(n_relevant=31), dict(n_relevant=101), dict(length=0),
                                    dict(n_labels=True), dict(noise_std=-1.0), dict(gibbs_sweeps=0)])
def test_synthetic_chain_bad_params(kwargs):
    with pytest.raises(ParameterError):
        synthetic_chain(n_instances=5, **kwargs)


# ---------------------------------------------------------------------------------------------- synthetic_hierarchy
def test_synthetic_hierarchy_structure():
    ds, truth = synthetic_hierarchy(n_instances=40, n_inner=(2, 3), n_leaves=(1, 4), seed=2, return_truth=True)
    assert isinstance(ds, HierarchicalDataset) and len(ds) == 40 and ds.n_features == 20 and ds.n_labels == 4
    for i in range(len(ds)):
        p, y, yt = ds.parents[i], ds.Y[i], truth["Y"][i]
        depth, leaf = ds.depth(i), ds.leaf_mask(i)
        assert p[0] == -1 and (p[1:] >= 0).all() and depth.max() == 2
        m = int((depth == 1).sum())
        assert 2 <= m <= 3 and (p[1:m + 1] == 0).all()
        counts = np.bincount(p[depth == 2], minlength=m + 1)[1:]
        assert counts.min() >= 1 and counts.max() <= 4
        assert (leaf == (depth == 2)).all()
        assert (y[~leaf] == -1).all() and (y[leaf] == yt[leaf]).all() and (yt >= 0).all()
    full = synthetic_hierarchy(n_instances=40, n_inner=(2, 3), n_leaves=(1, 4), seed=2, hidden_inner=False)
    assert all(np.array_equal(a, b) for a, b in zip(full.Y, truth["Y"]))


def test_synthetic_hierarchy_deterministic_and_model_seed():
    a = synthetic_hierarchy(n_instances=10, seed=1)
    b = synthetic_hierarchy(n_instances=10, seed=1)
    assert all(np.array_equal(x, y) for x, y in zip(a.X, b.X)) and all(
        np.array_equal(x, y) for x, y in zip(a.parents, b.parents))
    _, t1 = synthetic_hierarchy(n_instances=5, seed=1, model_seed=4, return_truth=True)
    _, t2 = synthetic_hierarchy(n_instances=5, seed=2, model_seed=4, return_truth=True)
    assert np.array_equal(t1["transition"], t2["transition"])


def test_synthetic_hierarchy_bad_range():
    with pytest.raises(ParameterError, match="n_leaves"):
        synthetic_hierarchy(n_leaves=(3, 2))


# ---------------------------------------------------------------------------------------------- sparse_sets
def test_sparse_sets_against_bruteforce_rule():
    Phi, Psi, R = sparse_sets(m=300, n_inputs=50, n_outputs=12, input_density=0.1, output_size=3, fanout=2,
                              seed=4, return_truth=True)
    assert sp.isspmatrix_csr(Phi) and sp.isspmatrix_csr(Psi) and Phi.shape == (300, 50) and Psi.shape == (300, 12)
    assert (Phi.data > 0).all() and np.allclose(np.asarray(Phi.sum(axis=1)).ravel(), 1.0)
    assert (np.diff(Phi.indptr) == 5).all()  # 0.1 · 50 distinct inputs per row
    assert set(np.unique(Psi.data)) == {1.0}
    assert (np.asarray(R.sum(axis=1)).ravel() == 2).all()
    Pd, Rd, Qd = Phi.toarray(), R.toarray(), Psi.toarray()
    for i in range(300):
        scores = Pd[i] @ Rd
        ranked = sorted((j for j in range(12) if scores[j] > 0), key=lambda j: (-scores[j], j))
        assert set(np.flatnonzero(Qd[i])) == set(ranked[:3]), i


def test_sparse_sets_unnormalised_and_deterministic():
    a = sparse_sets(m=50, normalize=False, seed=1)
    b = sparse_sets(m=50, normalize=False, seed=1)
    assert (a[0] != b[0]).nnz == 0 and (a[1] != b[1]).nnz == 0
    assert a[0].data.min() >= 0.1 and a[0].data.max() <= 1.0


def test_sparse_sets_large_m():
    Phi, Psi = sparse_sets(m=100_000, n_inputs=10_000, n_outputs=500, input_density=0.001, output_size=4)
    assert Phi.shape == (100_000, 10_000) and Psi.shape == (100_000, 500)
    assert (np.diff(Psi.indptr) >= 1).all() and (np.diff(Psi.indptr) <= 4).all()


@pytest.mark.parametrize("kwargs", [dict(input_density=0.0), dict(input_density=1.5), dict(output_size=101),
                                    dict(fanout=0), dict(m=0)])
def test_sparse_sets_bad_params(kwargs):
    with pytest.raises(ParameterError):
        sparse_sets(**kwargs)


# ---------------------------------------------------------------------------------------------- tiny
def test_tiny_chain_defaults_and_truth():
    ds, truth = tiny_chain(return_truth=True)
    assert len(ds) == 20 and (ds.lengths == 4).all() and ds.n_labels == 2 and ds.n_features == 3
    assert all(np.array_equal(a, b) for a, b in zip(ds.Y, truth["Y"]))
    assert truth["vector"].shape == (3 * 2 + 2 * 2,)


def test_tiny_chain_options():
    ds = tiny_chain(n_sequences=50, length=5, min_length=2, n_labels=3, sparse=True, hidden_fraction=0.4, seed=2)
    assert ds.is_sparse and ds.lengths.min() == 2 and ds.lengths.max() == 5
    assert sum((x.toarray() == 0).sum() for x in ds.X) > 0
    assert all(int((y == -1).sum()) == round(0.4 * len(y)) for y in ds.Y)
    a, b = tiny_chain(seed=8), tiny_chain(seed=8)
    assert all(np.array_equal(x, y) for x, y in zip(a.Y, b.Y))


def is_projective(heads):
    full = [0] + list(heads)
    for m in range(1, len(full)):
        h = full[m]
        for t in range(min(h, m) + 1, max(h, m)):
            a = t
            while a not in (0, h):
                a = full[a]
            if a != h:
                return False
    return True


def test_tiny_trees():
    ds = tiny_trees()
    assert isinstance(ds, TreeDataset) and len(ds) == 10 and (ds.lengths == 4).all()
    proj = tiny_trees(n_sentences=200, n_words=6, min_words=1, projective=True, seed=1)
    assert all(is_projective(h) for h in proj.heads) and proj.lengths.min() == 1
    assert all(int((h == 0).sum()) == 1 for h in proj.heads)
    free = tiny_trees(n_sentences=200, n_words=6, seed=1)
    assert not all(is_projective(h) for h in free.heads)  # the free sampler reaches non-projective trees
    assert all(int((h == 0).sum()) == 1 for h in free.heads)
    assert (proj.projective() == np.array([is_projective(h) for h in proj.heads])).all()


# ---------------------------------------------------------------------------------------------- registry
@pytest.mark.parametrize("spec, kind", [
    ("synthetic:seed=1,n_instances=20,gibbs_sweeps=2", SequenceDataset),
    ("hierarchy:seed=0,n_instances=5,n_inner=2/3", HierarchicalDataset),
    ("tiny:seed=0", SequenceDataset),
    ("tinytrees", TreeDataset),
    ("TINY:sparse=true,min_length=none", SequenceDataset),
])
def test_load_spec_generators(spec, kind):
    assert isinstance(load_spec(spec), kind)


def test_load_spec_values_reach_the_generator():
    ds = load_spec("synthetic:seed=2,n_instances=7,gibbs_sweeps=3,correlated=false,noise_std=0.5,length=4")
    ref = synthetic_chain(seed=2, n_instances=7, gibbs_sweeps=3, correlated=False, noise_std=0.5, length=4)
    assert all(np.array_equal(a, b) for a, b in zip(ds.X, ref.X)) and all(np.array_equal(a, b) for a, b in zip(ds.Y, ref.Y))
    Phi, Psi = load_spec("sparse:m=30,n_inputs=40")
    assert Phi.shape == (30, 40)


def test_load_spec_paths_and_data_root(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("El DA O\nRey NC B-PER\n")
    c = load_spec(f"conll:{tmp_path / 'sub' / 'a.txt'},columns=form/pos/ne")
    assert isinstance(c, TokenCorpus) and c.labels == [["O", "B-PER"]]
    monkeypatch.setenv("MMPROG_DATA", str(tmp_path))
    assert default_data_root() == tmp_path
    c = load_spec("conll:sub/a.txt,columns=form/pos/ne,label_column=1")
    assert c.labels == [["DA", "NC"]]
    with pytest.raises(DataError, match="also tried"):
        load_spec("conll:sub/missing.txt")
    monkeypatch.delenv("MMPROG_DATA")
    c = load_spec("conll:a.txt,columns=form/pos/ne", data_root=tmp_path / "sub")
    assert c.labels == [["O", "B-PER"]]


@pytest.mark.parametrize("spec, needle", [
    ("bogus:1", "valid names: ocr, conll"),
    ("ocr", "ocr:PATH"),
    ("ocr:seed=1", "ocr:PATH"),
    ("synthetic:wrong=1", "it takes: n_instances"),
    ("synthetic:seed", "not key=value"),
    ("synthetic:return_truth=true", "no parameter 'return_truth'"),
    ("", "non-empty"),
])
def test_load_spec_errors(spec, needle):
    with pytest.raises(ParameterError) as info:
        load_spec(spec)
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_describe_loaders_rows():
    rows = describe_loaders()
    assert [r["name"] for r in rows] == list(LOADERS)
    for r in rows:
        assert r["kind"] == ("file" if LOADERS[r["name"]][2] else "generator")
        assert r["usage"].startswith(r["name"]) and r["description"] and "return_truth" not in r["options"]


def test_data_folders_exist():
    root = default_data_root()
    if not root.exists():
        pytest.skip(f"shared data absent: {root}")
    for folder, (names, _) in DATA_FOLDERS.items():
        assert (root / folder).is_dir(), folder
        assert all(n.strip() in LOADERS for n in names.split(","))
    assert set(DATA_FOLDERS) == {p.name for p in Path(root).iterdir() if p.is_dir()}
