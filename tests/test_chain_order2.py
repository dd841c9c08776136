"""Second-order label states (``order=2``: label-trigram features) in the chain map.

Ground truth is independent of ChainFeatureMap: f(x, y) by explicit loops over positions (``joint_f2``), every
labeling enumerated, and the full QP handed to highspy directly (tests/_enumerated.py).
"""
import itertools
import json

import numpy as np
import pytest
import scipy.sparse as sp

import mmprog
from mmprog.datasets.base import SequenceDataset
from mmprog.exceptions import ModelFileError, ParameterError
from mmprog.features import ChainFeatureMap

from _enumerated import solve_enumerated


def joint_f2(x, y, K, d_e=0):
    """f(x, y) by explicit loops: state features of the first d − d_e columns, the shared transition, the last d_e
    columns of token t conjoined with (y_{t-1}, y_t), and the label trigram (y_{t-2}, y_{t-1}, y_t); positions
    labelled −1 contribute nothing (nor do the pairs and trigrams that contain them)."""
    d = x.shape[1]
    d_s = d - d_e
    f = np.zeros(d_s * K + K * K + d_e * K * K + K ** 3)
    tri = d_s * K + K * K + d_e * K * K
    for t in range(len(y)):
        if y[t] < 0:
            continue
        for j in range(d_s):
            f[j * K + y[t]] += x[t, j]
        if t > 0 and y[t - 1] >= 0:
            f[d_s * K + y[t - 1] * K + y[t]] += 1
            for j in range(d_e):
                f[d_s * K + K * K + j * K * K + y[t - 1] * K + y[t]] += x[t, d_s + j]
            if t > 1 and y[t - 2] >= 0:
                f[tri + y[t - 2] * K * K + y[t - 1] * K + y[t]] += 1
    return f


def data(seed, n=9, K=3, d=4, d_e=0, max_len=5, hidden=0.0, dense=False):
    """Integer-valued inputs (ties occur) with d_e trailing edge columns, lengths 1..max_len."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, max_len + 1, n)
    X = [rng.integers(-1, 2, (int(L), d)).astype(float) for L in lengths]
    if not dense:
        X = [sp.csr_matrix(x) for x in X]
    Y = [rng.integers(0, K, int(L)) for L in lengths]
    if hidden:
        Y = [np.where(rng.random(len(y)) < hidden, -1, y) for y in Y]
    ds = SequenceDataset(X, Y, K)
    ds.info["n_edge_features"] = d_e
    return ds


def labelings(L, K):
    return (np.array(y) for y in itertools.product(range(K), repeat=int(L)))


def dense_x(ds, i):
    x = ds.X[i]
    return x.toarray() if sp.issparse(x) else np.asarray(x)


def test_layout_joint_features_and_delta_match_loops():
    ds = data(1, d_e=1, hidden=0.3)
    K = ds.n_labels
    fmap = ChainFeatureMap.from_dataset(ds, order=2)
    assert fmap.dim == 3 * K + K * K + K * K + K ** 3
    assert fmap.weights(np.arange(fmap.dim))["trigram"].shape == (K, K, K)
    # the trigrams are label-structure features: the "transition" group
    assert np.all(fmap.groups[fmap.offsets["trigram"]:] == len(fmap.group_names) - 1)
    prep = fmap.prepare(ds)
    rng = np.random.default_rng(0)
    T = int(prep.lengths.max())
    Ys = np.full((len(ds), T), -1)
    for i, L in enumerate(prep.lengths):
        Ys[i, :L] = np.where(rng.random(L) < 0.2, -1, rng.integers(0, K, L))
    F = fmap.joint_features(prep, np.arange(len(ds)), Ys).toarray()
    dF, dl = fmap.delta(prep, np.arange(len(ds)), Ys)
    for i, L in enumerate(prep.lengths):
        x, gold = dense_x(ds, i), np.asarray(ds.Y[i])
        np.testing.assert_allclose(F[i], joint_f2(x, Ys[i, :L], K, 1))
        y = np.where(gold >= 0, Ys[i, :L], -1)
        np.testing.assert_allclose(dF[i].toarray().ravel(), joint_f2(x, gold, K, 1) - joint_f2(x, y, K, 1))
        assert dl[i] == np.sum((gold >= 0) & (Ys[i, :L] != gold))


@pytest.mark.parametrize("d_e, dense, sparse", [(0, False, False), (0, False, True), (2, False, True),
                                                 (0, True, False), (0, True, True)])
def test_viterbi_oracle_and_fused_cut_match_enumeration(d_e, dense, sparse):
    """Plain and loss-augmented order-2 Viterbi, and the fused 1-slack oracle (hinge, Σ ΔF, Σ Δℓ), against every
    labeling; integer weights so that ties occur, and real weights."""
    rng = np.random.default_rng(7)
    for trial in range(8):
        ds = data(100 + trial, d_e=d_e, dense=dense)
        K = ds.n_labels
        fmap = ChainFeatureMap.from_dataset(ds, order=2)
        prep = fmap.prepare(ds)
        w = rng.integers(-2, 3, fmap.dim).astype(float) if trial % 2 else rng.normal(size=fmap.dim)
        dF_sum, dl_sum, hinge = fmap.separate_sum(w, prep, sparse=sparse)
        dF_sum = dF_sum.toarray().ravel() if sparse else dF_sum
        aug = fmap.decode(w, prep, loss_augmented=True)
        plain = fmap.decode(w, prep)
        ref_dF, ref_dl = np.zeros(fmap.dim), 0.0
        for i, L in enumerate(prep.lengths):
            x, gold = dense_x(ds, i), np.asarray(ds.Y[i])
            score = {tuple(y): w @ joint_f2(x, y, K, d_e) for y in labelings(L, K)}
            best_aug = max(s + np.sum(np.array(y) != gold) for y, s in score.items())
            assert hinge[i] == pytest.approx(best_aug - w @ joint_f2(x, gold, K, d_e), abs=1e-10)
            y_hat = aug[i, :L]
            assert score[tuple(y_hat)] + np.sum(y_hat != gold) == pytest.approx(best_aug, abs=1e-10)
            assert score[tuple(plain[i, :L])] == pytest.approx(max(score.values()), abs=1e-10)
            ref_dF += joint_f2(x, gold, K, d_e) - joint_f2(x, y_hat, K, d_e)
            ref_dl += np.sum(y_hat != gold)
        np.testing.assert_allclose(dF_sum, ref_dF, atol=1e-10)
        assert dl_sum == ref_dl


def test_loss_weight_and_the_per_example_oracle_agree():
    """decode's loss weight against enumeration, and separate_sum equals the sum of delta()'s rows of the decoded
    labelings (the n-slack oracle's cuts), with hidden gold labels."""
    ds = data(3, n=20, hidden=0.3)
    K = ds.n_labels
    fmap = ChainFeatureMap.from_dataset(ds, order=2)
    prep = fmap.prepare(ds)
    w = np.random.default_rng(1).normal(size=fmap.dim)
    lab = fmap.decode(w, prep, loss_augmented=True, loss_weight=2.5)
    for i, L in enumerate(prep.lengths):
        x, gold = dense_x(ds, i), np.asarray(ds.Y[i])
        best = max(w @ joint_f2(x, y, K) + 2.5 * np.sum((gold >= 0) & (y != gold)) for y in labelings(L, K))
        y = lab[i, :L]
        assert w @ joint_f2(x, y, K) + 2.5 * np.sum((gold >= 0) & (y != gold)) == pytest.approx(best, abs=1e-10)
    idx = np.array([4, 17, 2, 9])
    dF, dl, hinge = fmap.separate_sum(w, prep, idx)
    lab = fmap.decode(w, prep, idx, loss_augmented=True)
    rows, dls = fmap.delta(prep, idx, lab)
    np.testing.assert_allclose(np.asarray(rows.sum(axis=0)).ravel(), dF, atol=1e-12)
    assert dl == dls.sum()
    np.testing.assert_allclose(hinge, dls - rows @ w, atol=1e-10)


@pytest.mark.parametrize("slack", ["n", "one"])
def test_cutting_plane_matches_the_full_program(slack):
    """m3n with order 2 (n-slack and 1-slack) reaches the optimum of the QP with every labeling as a constraint."""
    ds = data(11, n=8, K=2, d=3, max_len=5)
    K, C = 2, 0.7
    A, dl, ex = [], [], []
    for i, (x, y) in enumerate(zip(ds.X, ds.Y)):
        x = x.toarray()
        fy = joint_f2(x, y, K)
        for lab in labelings(len(y), K):
            A.append(fy - joint_f2(x, lab, K))
            dl.append(float(np.sum(lab != y)))
            ex.append(i)
    opt, w_full = solve_enumerated(np.array(A), np.array(dl), np.array(ex), len(ds), C)
    res = mmprog.fit(ds, program="m3n", C=C, slack=slack, eps=1e-5, max_iter=2000, order=2)
    assert res.fmap.order == 2 and res.w.shape == (3 * K + K * K + K ** 3,)
    assert res.termination == "converged"
    tol = 1e-5 * max(1.0, abs(opt))
    assert res.primal_objective <= opt + tol
    assert opt <= res.primal_objective + C * len(ds) * 1e-5 + tol
    assert np.allclose(res.w, w_full, atol=5e-2 * max(1.0, np.abs(w_full).max()))


def test_save_and_load_keep_the_order(tmp_path):
    ds = data(9, n=20)
    res = mmprog.fit(ds, program="m3n", C=1.0, slack="one", eps=1e-3, max_iter=200, order=2)
    path = tmp_path / "m"
    res.save(path)
    back = mmprog.load(path)
    assert back.fmap.order == 2 and back.fmap.dim == res.fmap.dim
    np.testing.assert_array_equal(back.w, res.w)
    assert np.array_equal(back.fmap.decode(back.w, back.fmap.prepare(ds)), res.fmap.decode(res.w, res.fmap.prepare(ds)))
    js = json.loads((tmp_path / "m.json").read_text())
    assert js["feature_map"]["order"] == 2
    # a damaged order is refused naming the field; order 1 with this w's length is refused as a size mismatch
    for bad, field in ((3, "order"), ("2", "order"), (True, "order"), (1, "w")):
        js["feature_map"]["order"] = bad
        (tmp_path / "bad.json").write_text(json.dumps(js))
        (tmp_path / "bad.npz").write_bytes((tmp_path / "m.npz").read_bytes())
        with pytest.raises(ModelFileError, match=field):
            mmprog.load(tmp_path / "bad")


def test_what_order_2_cannot_do_is_refused_by_name():
    from mmprog.exceptions import DataError
    from mmprog.programs.pomen import HiddenStructure
    ds = data(13, hidden=0.3)
    fmap = ChainFeatureMap.from_dataset(ds, order=2)
    prep = fmap.prepare(ds)
    w = np.zeros(fmap.dim)
    for call, what in ((lambda: fmap.marginals(w, prep), "marginals"), (lambda: fmap.topk(w, prep, 2), "top-k"),
                       (lambda: fmap.scores(w, prep), "scores")):
        with pytest.raises(ParameterError, match=f"{what}.*order=2.*order=1"):
            call()
    with pytest.raises(DataError, match="order=2"):
        HiddenStructure(fmap, prep)
    with pytest.raises(ParameterError, match="order"):
        ChainFeatureMap(3, 2, order=3)
    with pytest.raises(ParameterError, match="order"):
        mmprog.fit(ds, order=2, feature_map=fmap)


def test_first_order_descriptions_are_unchanged():
    """order is written only when it is 2, so first-order model files and checkpoint fingerprints stay as before."""
    ds = data(2)
    assert "order" not in ChainFeatureMap.from_dataset(ds).describe()
    assert ChainFeatureMap.from_dataset(ds, order=2).describe()["order"] == 2


# ------------------------------------------------------------------ allowed label bigrams (transitions="seen")

def random_allowed(rng, K):
    """A random bigram mask in which every label has a successor and a predecessor (a permutation is kept)."""
    m = rng.random((K, K)) < 0.45
    m[np.arange(K), rng.permutation(K)] = True
    return m


def is_allowed(y, m):
    y = np.asarray(y)
    return bool(np.all(m[y[:-1], y[1:]])) if len(y) > 1 else True


@pytest.mark.parametrize("d_e, dense, K", [(0, False, 3), (2, False, 3), (0, True, 4)])
def test_allowed_bigrams_confine_viterbi_and_oracle_to_enumeration(d_e, dense, K):
    """With a bigram mask, plain and loss-augmented Viterbi and the fused 1-slack oracle give the best *allowed*
    labeling (every labeling enumerated and the disallowed ones skipped), on masks that make the unconstrained best
    labeling disallowed."""
    rng = np.random.default_rng(5)
    for trial in range(8):
        ds = data(200 + trial, K=K, d_e=d_e, dense=dense, max_len=6)
        m = random_allowed(rng, K)
        fmap = ChainFeatureMap.from_dataset(ds, order=2, allowed=m)
        prep = fmap.prepare(ds)
        w = rng.integers(-2, 3, fmap.dim).astype(float) if trial % 2 else rng.normal(size=fmap.dim)
        dF_sum, dl_sum, hinge = fmap.separate_sum(w, prep, sparse=True)
        aug = fmap.decode(w, prep, loss_augmented=True)
        plain = fmap.decode(w, prep)
        ref_dF, ref_dl = np.zeros(fmap.dim), 0.0
        for i, L in enumerate(prep.lengths):
            x, gold = dense_x(ds, i), np.asarray(ds.Y[i])
            score = {tuple(y): w @ joint_f2(x, y, K, d_e) for y in labelings(L, K) if is_allowed(y, m)}
            best_aug = max(s + np.sum(np.array(y) != gold) for y, s in score.items())
            # the hinge is taken against the gold labeling whether or not its bigrams are allowed
            assert hinge[i] == pytest.approx(best_aug - w @ joint_f2(x, gold, K, d_e), abs=1e-10)
            y_hat, y_plain = aug[i, :L], plain[i, :L]
            assert tuple(y_hat) in score and tuple(y_plain) in score
            assert score[tuple(y_hat)] + np.sum(y_hat != gold) == pytest.approx(best_aug, abs=1e-10)
            assert score[tuple(y_plain)] == pytest.approx(max(score.values()), abs=1e-10)
            ref_dF += joint_f2(x, gold, K, d_e) - joint_f2(x, y_hat, K, d_e)
            ref_dl += np.sum(y_hat != gold)
        np.testing.assert_allclose(dF_sum.toarray().ravel(), ref_dF, atol=1e-10)
        assert dl_sum == ref_dl


def test_all_allowed_gives_the_unconstrained_search():
    """A mask of all True takes the list route and returns what the dense pair Viterbi returns, labels and all."""
    ds = data(31, n=30, K=4, max_len=8)
    full = ChainFeatureMap.from_dataset(ds, order=2)
    listed = ChainFeatureMap.from_dataset(ds, order=2, allowed=np.ones((4, 4), bool))
    w = np.random.default_rng(2).normal(size=full.dim)
    prep = full.prepare(ds)
    for aug in (False, True):
        np.testing.assert_array_equal(listed.decode(w, prep, loss_augmented=aug),
                                      full.decode(w, prep, loss_augmented=aug))
    a, b = full.separate_sum(w, prep), listed.separate_sum(w, prep)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[2], b[2])


def test_seen_transitions_fit_matches_the_full_program_over_allowed_labelings():
    """m3n with order 2 and transitions="seen" (1-slack) reaches the optimum of the QP whose constraints are every
    labeling made of bigrams seen in the training labels."""
    from mmprog.features.chain import allowed_bigrams
    ds = data(12, n=8, K=3, d=3, max_len=5)
    K, C = 3, 0.7
    m = allowed_bigrams(ds.Y, K)
    assert not m.all()
    A, dl, ex = [], [], []
    for i, (x, y) in enumerate(zip(ds.X, ds.Y)):
        x = x.toarray()
        fy = joint_f2(x, y, K)
        for lab in labelings(len(y), K):
            if is_allowed(lab, m):
                A.append(fy - joint_f2(x, lab, K))
                dl.append(float(np.sum(lab != y)))
                ex.append(i)
    opt, w_full = solve_enumerated(np.array(A), np.array(dl), np.array(ex), len(ds), C)
    res = mmprog.fit(ds, program="m3n", C=C, slack="one", eps=1e-5, max_iter=2000, order=2, transitions="seen")
    np.testing.assert_array_equal(res.fmap.allowed, m)
    assert res.termination == "converged"
    tol = 1e-5 * max(1.0, abs(opt))
    assert res.primal_objective <= opt + tol
    assert opt <= res.primal_objective + C * len(ds) * 1e-5 + tol


def test_allowed_bigrams_fill_labels_without_a_seen_neighbour():
    from mmprog.features.chain import allowed_bigrams
    m = allowed_bigrams([np.array([0, 1, 1]), np.array([2, -1, 0]), np.array([3])], 4)
    # seen: 0→1, 1→1; labels 2 and 3 are never followed by anything, so they may be followed by every label, which
    # also gives 0, 2 and 3 (never seen after anything) predecessors
    expect = np.zeros((4, 4), bool)
    expect[0, 1] = expect[1, 1] = True
    expect[2] = expect[3] = True
    np.testing.assert_array_equal(m, expect)
    # every label followed by something, label 2 never after anything: its column is filled
    m = allowed_bigrams([np.array([2, 0, 1, 0])], 3)
    np.testing.assert_array_equal(m, [[False, True, True], [True, False, True], [True, False, True]])


def test_allowed_is_saved_checked_and_refused_by_name(tmp_path):
    ds = data(9, n=20)
    res = mmprog.fit(ds, program="m3n", C=1.0, slack="one", eps=1e-3, max_iter=200, order=2, transitions="seen")
    res.save(tmp_path / "m")
    back = mmprog.load(tmp_path / "m")
    np.testing.assert_array_equal(back.fmap.allowed, res.fmap.allowed)
    assert np.array_equal(back.fmap.decode(back.w, back.fmap.prepare(ds)), res.fmap.decode(res.w, res.fmap.prepare(ds)))
    arrays = dict(np.load(tmp_path / "m.npz"))
    K = ds.n_labels
    for bad in (np.ones((K, K + 1), bool), np.ones((K, K)), np.eye(K, dtype=bool)[:, ::-1] & False):
        np.savez(tmp_path / "bad.npz", **{**arrays, "fmap__allowed": bad})
        # without the .npz checksum (as models saved before it), so that the check of the array itself is reached
        doc = json.loads((tmp_path / "m.json").read_text())
        doc.pop("npz_sha256")
        (tmp_path / "bad.json").write_text(json.dumps(doc))
        with pytest.raises(ModelFileError, match="fmap__allowed"):
            mmprog.load(tmp_path / "bad")
    with pytest.raises(ParameterError, match="order=2"):
        ChainFeatureMap(3, 2, allowed=np.ones((2, 2), bool))
    with pytest.raises(ParameterError, match="no successor or no predecessor"):
        ChainFeatureMap(3, 2, order=2, allowed=np.array([[True, False], [True, False]]))
    with pytest.raises(ParameterError, match="transitions"):
        mmprog.fit(ds, transitions="seen")
    with pytest.raises(ParameterError, match="transitions"):
        mmprog.fit(ds, order=2, transitions="some")
