"""Edge features (observations conjoined with the label pair, CRF++'s ``B01:%x[0,1]``) in the chain map.

Ground truth is independent of ChainFeatureMap: f(x, y) by explicit loops over positions (``joint_f_edges``), every
labeling enumerated, and the full QP handed to highspy directly (tests/_enumerated.py).
"""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

import mmprog
from mmprog.datasets.base import SequenceDataset
from mmprog.features import ChainFeatureMap

from _enumerated import solve_enumerated


def joint_f_edges(x, y, K, d_e):
    """f(x, y) by explicit loops: the first d − d_e columns as state features, the shared transition, and the last
    d_e columns of token t conjoined with (y_{t-1}, y_t); positions labelled −1 contribute nothing."""
    d = x.shape[1]
    d_s = d - d_e
    f = np.zeros(d_s * K + K * K + d_e * K * K)
    for t in range(len(y)):
        if y[t] < 0:
            continue
        for j in range(d_s):
            f[j * K + y[t]] += x[t, j]
        if t > 0 and y[t - 1] >= 0:
            f[d_s * K + y[t - 1] * K + y[t]] += 1
            for j in range(d_e):
                f[d_s * K + K * K + j * K * K + y[t - 1] * K + y[t]] += x[t, d_s + j]
    return f


def data(seed, n=9, K=3, d_s=3, d_e=2, max_len=4, hidden=0.0):
    """Integer-valued sparse inputs (ties occur) with d_e trailing edge columns, lengths 1..max_len."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, max_len + 1, n)
    X = [sp.csr_matrix(rng.integers(-1, 2, (int(L), d_s + d_e)).astype(float)) for L in lengths]
    Y = [rng.integers(0, K, int(L)) for L in lengths]
    if hidden:
        Y = [np.where(rng.random(len(y)) < hidden, -1, y) for y in Y]
    ds = SequenceDataset(X, Y, K)
    ds.info["n_edge_features"] = d_e
    return ds


def labelings(L, K):
    return (np.array(y) for y in itertools.product(range(K), repeat=int(L)))


def test_layout_groups_and_joint_features_match_loops():
    ds = data(1, hidden=0.3)
    K, d_e = ds.n_labels, 2
    fmap = ChainFeatureMap(5, K, groups=np.array([0, 1, 1, 2, 3]), n_edge_features=d_e)
    assert fmap.n_edge_features == d_e and fmap.dim == 3 * K + K * K + d_e * K * K
    assert fmap.weights(np.arange(fmap.dim))["edge"].shape == (d_e, K, K)
    # edge features inherit their input feature's group, as state features do
    edge = fmap.offsets["edge"]
    assert np.array_equal(fmap.groups[edge: edge + 2 * K * K], np.repeat([2, 3], K * K))
    assert np.array_equal(fmap.groups[: 3 * K], np.repeat([0, 1, 1], K))
    prep = fmap.prepare(ds)
    rng = np.random.default_rng(0)
    T = int(prep.lengths.max())
    Ys = np.full((len(ds), T), -1)
    for i, L in enumerate(prep.lengths):
        Ys[i, :L] = np.where(rng.random(L) < 0.2, -1, rng.integers(0, K, L))
    F = fmap.joint_features(prep, np.arange(len(ds)), Ys).toarray()
    for i in range(len(ds)):
        L = prep.lengths[i]
        assert np.allclose(F[i], joint_f_edges(ds.X[i].toarray(), Ys[i, :L], K, d_e))
    dF, dl = fmap.delta(prep, np.arange(len(ds)), Ys)
    for i in range(len(ds)):
        L = prep.lengths[i]
        gold = np.asarray(ds.Y[i])
        y = np.where(gold >= 0, Ys[i, :L], -1)
        ref = joint_f_edges(ds.X[i].toarray(), gold, K, d_e) - joint_f_edges(ds.X[i].toarray(), y, K, d_e)
        assert np.allclose(dF[i].toarray().ravel(), ref)
        assert dl[i] == np.sum((gold >= 0) & (Ys[i, :L] != gold))


@pytest.mark.parametrize("sparse", [False, True])
def test_fused_oracle_and_decode_match_enumeration(sparse):
    """Loss-augmented and plain Viterbi with per-position edges, and the fused 1-slack oracle (hinge, Σ ΔF, Σ Δℓ),
    against every labeling; integer weights so that ties occur."""
    rng = np.random.default_rng(7)
    for trial in range(10):
        ds = data(100 + trial)
        K, d_e = ds.n_labels, 2
        fmap = ChainFeatureMap.from_dataset(ds)
        prep = fmap.prepare(ds)
        w = rng.integers(-2, 3, fmap.dim).astype(float)
        dF_sum, dl_sum, hinge = fmap.separate_sum(w, prep, sparse=sparse)
        dF_sum = dF_sum.toarray().ravel() if sparse else dF_sum
        aug = fmap.decode(w, prep, loss_augmented=True)
        plain = fmap.decode(w, prep)
        ref_dF, ref_dl = np.zeros(fmap.dim), 0.0
        for i, L in enumerate(prep.lengths):
            x, gold = ds.X[i].toarray(), np.asarray(ds.Y[i])
            score = {tuple(y): w @ joint_f_edges(x, y, K, d_e) for y in labelings(L, K)}
            best_aug = max(s + np.sum(np.array(y) != gold) for y, s in score.items())
            assert hinge[i] == pytest.approx(best_aug - w @ joint_f_edges(x, gold, K, d_e), abs=1e-12)
            y_hat = aug[i, :L]
            assert score[tuple(y_hat)] + np.sum(y_hat != gold) == pytest.approx(best_aug, abs=1e-12)
            assert score[tuple(plain[i, :L])] == pytest.approx(max(score.values()), abs=1e-12)
            ref_dF += joint_f_edges(x, gold, K, d_e) - joint_f_edges(x, y_hat, K, d_e)
            ref_dl += np.sum(y_hat != gold)
        np.testing.assert_allclose(dF_sum, ref_dF, atol=1e-12)
        assert dl_sum == ref_dl


def test_oracle_on_a_subset_and_with_hidden_labels_equals_per_example_cuts():
    """Σ over examples of the per-example separations equals the batch separation (gathered rows of Xe), with
    hidden gold labels (their steps carry no edge feature)."""
    ds = data(3, n=30, hidden=0.3)
    fmap = ChainFeatureMap.from_dataset(ds)
    prep = fmap.prepare(ds)
    w = np.random.default_rng(1).normal(size=fmap.dim)
    idx = np.array([4, 17, 2, 9, 25])
    dF, dl, hinge = fmap.separate_sum(w, prep, idx)
    ref = sum(fmap.separate_sum(w, prep, [i])[0] for i in idx)
    np.testing.assert_allclose(dF, ref, atol=1e-12)
    assert dl == sum(fmap.separate_sum(w, prep, [i])[1] for i in idx)
    assert np.allclose(hinge, [fmap.separate_sum(w, prep, [i])[2][0] for i in idx])
    # the batch's ΔF is the sum of delta()'s rows of the decoded labelings
    lab = fmap.decode(w, prep, idx, loss_augmented=True)
    rows, _ = fmap.delta(prep, idx, lab)
    np.testing.assert_allclose(np.asarray(rows.sum(axis=0)).ravel(), dF, atol=1e-12)


def test_scores_marginals_and_topk_use_the_per_position_edges():
    ds = data(5, n=6, max_len=4)
    K, d_e = ds.n_labels, 2
    fmap = ChainFeatureMap.from_dataset(ds)
    prep = fmap.prepare(ds)
    w = np.random.default_rng(2).normal(size=fmap.dim)
    node, edges, lengths = fmap.scores(w, prep)
    assert edges.shape == (len(ds), node.shape[1] - 1, K, K)
    M = fmap.marginals(w, prep)
    Y, S = fmap.topk(w, prep, 3)
    for i, L in enumerate(lengths):
        x = ds.X[i].toarray()
        ys = list(labelings(L, K))
        s = np.array([w @ joint_f_edges(x, y, K, d_e) for y in ys])
        # the score from scores() along every labeling is wᵀf
        for y, v in zip(ys, s):
            assert node[i, np.arange(L), y].sum() + sum(edges[i, t, y[t], y[t + 1]] for t in range(L - 1)) == \
                pytest.approx(v, abs=1e-12)
        p = np.exp(s - s.max())
        p /= p.sum()
        for t in range(L):
            np.testing.assert_allclose(M[i, t], [p[[y[t] == k for y in ys]].sum() for k in range(K)], atol=1e-10)
        np.testing.assert_allclose(S[i, :min(3, len(ys))], np.sort(s)[::-1][:3], atol=1e-10)


def test_save_and_load_keep_the_edge_block(tmp_path):
    ds = data(9, n=20)
    res = mmprog.fit(ds, program="m3n", C=1.0, slack="one", eps=1e-3, max_iter=200)
    path = tmp_path / "m"
    res.save(path)
    back = mmprog.load(path)
    assert back.fmap.n_edge_features == 2
    prep = back.fmap.prepare(ds)
    assert np.array_equal(back.fmap.decode(back.w, prep), res.fmap.decode(res.w, res.fmap.prepare(ds)))
    # a damaged count is refused naming the field, before anything is sized from it
    import json
    from mmprog.exceptions import ModelFileError
    js = json.loads((tmp_path / "m.json").read_text())
    for bad in (-1, 10**6, "2"):
        js["feature_map"]["n_edge_features"] = bad
        (tmp_path / "bad.json").write_text(json.dumps(js))
        (tmp_path / "bad.npz").write_bytes((tmp_path / "m.npz").read_bytes())
        with pytest.raises(ModelFileError, match="n_edge_features"):
            mmprog.load(tmp_path / "bad")


def test_cutting_plane_matches_the_full_program():
    """1-slack m3n with edge features reaches the optimum of the QP with every labeling as a constraint."""
    ds = data(11, n=8, K=2, max_len=4)
    K, d_e, C = 2, 2, 0.7
    A, dl, ex = [], [], []
    for i, (x, y) in enumerate(zip(ds.X, ds.Y)):
        x = x.toarray()
        fy = joint_f_edges(x, y, K, d_e)
        for lab in labelings(len(y), K):
            A.append(fy - joint_f_edges(x, lab, K, d_e))
            dl.append(float(np.sum(lab != y)))
            ex.append(i)
    opt, w_full = solve_enumerated(np.array(A), np.array(dl), np.array(ex), len(ds), C)
    res = mmprog.fit(ds, program="m3n", C=C, slack="n", eps=1e-5)
    assert res.termination == "converged"
    tol = 1e-5 * max(1.0, abs(opt))
    assert res.primal_objective <= opt + tol
    assert opt <= res.primal_objective + C * len(ds) * 1e-5 + tol
    assert np.allclose(res.w, w_full, atol=5e-2 * max(1.0, np.abs(w_full).max()))


def test_pomen_refuses_edge_features_with_a_one_line_error():
    from mmprog.exceptions import DataError
    from mmprog.programs.pomen import HiddenStructure
    ds = data(13, hidden=0.3)
    fmap = ChainFeatureMap.from_dataset(ds)
    with pytest.raises(DataError, match="edge features"):
        HiddenStructure(fmap, fmap.prepare(ds))


def test_edge_feature_count_is_checked():
    from mmprog.exceptions import ParameterError
    with pytest.raises(ParameterError, match="n_edge_features"):
        ChainFeatureMap(3, 2, n_edge_features=4)
