"""The adjacent-sibling feature map (McDonald & Pereira 2006): its features against a string-built reference, its
decoder against enumeration of projective trees, ΔF against explicit trees."""
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp

from mmprog.exceptions import ParameterError
from mmprog.features.siblings import SiblingFeatureMap, adjacent_siblings
from mmprog.inference import sibling_tree_score
from test_arcs import all_trees, random_tree, random_treebank

FIELD = {"w": "form", "c": "cpos", "p": "pos", "s": "pos"}


def ref_siblings(heads):
    """s_m by its definition: the child of h_m between h_m and m nearest to m, else h_m."""
    out = [-1]
    for m in range(1, len(heads)):
        h = heads[m]
        between = [c for c in range(min(h, m) + 1, max(h, m)) if heads[c] == h]
        out.append((max(between) if m > h else min(between)) if between else h)
    return out


def ref_sibling_features(sent, heads, templates):
    """Counter of 'sib:SPEC=v1/v2|D' names of a tree, built from the strings."""
    def val(f, q):
        if q == 0:
            return "<root>"
        v = sent[FIELD[f]][q - 1]
        return v.split("|", 1)[0] if f == "s" else v
    sib = ref_siblings(heads)
    out = Counter()
    for m in range(1, len(heads)):
        h, s = heads[m], sib[m]
        for t in templates:
            vals = []
            for a in t.split("/"):
                who, f = a[0], a[1]
                q = {"h": h, "s": s, "m": m}[who]
                vals.append("<first>" if who == "s" and s == h else val(f, q))
            out[f"sib:{t}={'/'.join(vals)}|{'R' if m > h else 'L'}"] += 1
    return out


def named(fm, row, names):
    row = sp.csr_matrix(row)
    c = Counter()
    for j, v in zip(row.indices, row.data):
        c[names[j]] += v
    return Counter({k: v for k, v in c.items() if v != 0})


def test_adjacent_siblings_by_definition():
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(1, 9))
        heads = np.concatenate([[-1], random_tree(rng, n)])
        assert adjacent_siblings(heads).tolist() == ref_siblings(heads.tolist())


def test_features_match_the_string_reference_and_delta():
    rng = np.random.default_rng(1)
    train, test = random_treebank(rng, 40), random_treebank(rng, 15, max_len=7)
    tmpl = ["sc/mc", "sw/mw", "hc/sc/mc", "ss/mw"]
    fm = SiblingFeatureMap("mst-ud", tmpl).fit(train)
    assert fm.group_names[-4:] == [f"sib:{t}" for t in tmpl] and fm.groups.shape == (fm.dim,)
    names = fm.feature_names()
    sib_names = set(names[fm.n_arc_features:])
    # the dictionary is the gold trees' sibling features
    ref_dict = Counter()
    for s, h in zip(train.sentences, train.heads):
        ref_dict.update(ref_sibling_features(s, [-1] + list(h), tmpl))
    assert sib_names == set(ref_dict)
    P = fm.prepare(test)
    idx = np.arange(len(test))
    trees = np.full((len(test), P.gold.shape[1]), -1)
    for i, s in enumerate(test.sentences):
        n = len(s["form"])
        trees[i, 1:n + 1] = random_tree(rng, n)
        f = fm.joint_features(P, [i], trees[i:i + 1])
        got = Counter({k: v for k, v in named(fm, f, names).items() if k.startswith("sib:")})
        want = Counter({k: v for k, v in ref_sibling_features(s, trees[i, :n + 1].tolist(), tmpl).items()
                        if k in sib_names})
        assert got == want, i
    # ΔF = f(gold) − f(y); Δℓ = wrong heads; the gold trees give 0
    dF, dl = fm.delta(P, idx, trees)
    Fg = fm.joint_features(P, idx, P.gold)
    Fy = fm.joint_features(P, idx, trees)
    assert abs(dF - (Fg - Fy)).max() == 0
    assert np.array_equal(dl, [(P.gold[i, 1:n + 1] != trees[i, 1:n + 1]).sum()
                               for i, n in enumerate(P.lengths)])
    dF0, dl0 = fm.delta(P, idx, P.gold)
    assert dF0.nnz == 0 and not dl0.any()


@pytest.mark.parametrize("loss_augmented", [False, True])
def test_decode_against_enumeration_of_projective_trees(loss_augmented):
    rng = np.random.default_rng(2 + loss_augmented)
    train, test = random_treebank(rng, 30, max_len=6), random_treebank(rng, 25, max_len=5)
    fm = SiblingFeatureMap("mcdonald05", ["sp/mp", "sw/mw", "hp/sp/mp", "sw/mp"]).fit(train)
    P = fm.prepare(test)
    w = rng.normal(size=fm.dim)
    # integer-free random weights: ties have probability 0, so the argmax tree is unique
    pred = fm.decode(w, P, loss_augmented=loss_augmented)
    for i in range(len(test)):
        n = int(P.lengths[i])
        cands = np.array(all_trees(n, projective=True))
        lab = np.full((len(cands), P.gold.shape[1]), -1)
        lab[:, :n + 1] = cands
        val = fm.joint_features(P, np.full(len(cands), i), lab) @ w
        if loss_augmented:
            val = val + fm.loss(P, np.full(len(cands), i), lab)
        best = cands[np.argmax(val)]
        assert np.array_equal(pred[i, :n + 1], best), i
        # the decoder's own score of its tree: arc + sibling parts as eisner2 reads them
        S = fm.arcs.scores(w[:fm.n_arc_features], P, [i])[0]
        assert sibling_tree_score(S, fm.sibling_scores(w, P, i), best) == pytest.approx(
            float(val.max()) - (fm.loss(P, [i], lab[[np.argmax(val)]])[0] if loss_augmented else 0.0))


def test_errors():
    with pytest.raises(ParameterError, match="atom"):
        SiblingFeatureMap(sibling_templates=["sc/qq"])
    with pytest.raises(ParameterError, match="not one of"):
        SiblingFeatureMap(sibling_templates="nope")
    rng = np.random.default_rng(4)
    with pytest.raises(ParameterError, match="no arc template reads"):
        SiblingFeatureMap(["hp/mp"], ["sc/mc"]).fit(random_treebank(rng, 5))


def test_fit_save_load_round_trip(tmp_path):
    import mmprog
    rng = np.random.default_rng(5)
    train = random_treebank(rng, 25, max_len=6)
    fm = SiblingFeatureMap("mst-ud").fit(train)
    res = mmprog.fit(train, feature_map=fm, C=1.0, slack="one", max_iter=300)
    assert res.termination in ("converged", "eps") and res.gap >= 0     # eps: no cut violated, gap above 1e-2
    pred = res.predict(train)
    # the training trees are mostly learnt (random trees, many non-projective, which no projective tree matches)
    acc = np.mean(np.concatenate([p[1:] == h for p, h in zip(pred, train.heads)]))
    assert acc > 0.75
    assert all(not any(a < c < b < d for a, b in spans for c, d in spans)
               for spans in ([(min(h, m), max(h, m)) for m, h in enumerate(p[1:], 1)] for p in pred))
    res.save(tmp_path / "sib")
    back = mmprog.load(tmp_path / "sib.json")
    assert back.fmap.describe()["kind"] == "siblings" and back.fmap.dim == fm.dim
    assert all(np.array_equal(a, b) for a, b in zip(back.predict(train), pred))


@pytest.mark.parametrize("dense_limit", [0, None])
@pytest.mark.parametrize("templates", [["sc/mc", "sw/mw", "hc/sc/mc", "ss/mw"], None,
                                       ["hc/mc", "hw/sc/mw", "mc/hs/sc", "sw/mw", "hc/hw/sc/mc"]])
def test_compiled_sibling_scores_are_the_feature_rows_scores(templates, dense_limit):
    """sibling_scores (compiled: keys and look-ups fused over the O(n³) triples, the h-free templates' scores
    computed once per (s, m)) against the feature path (_sib_keys, _lookup: what joint_features and ΔF are built
    from, itself checked against strings above): at every usable triple (s = h or strictly between h and m) the
    score is w_sib summed over the triple's features; 0 elsewhere. Test sentences have values unseen in training
    (no feature) and first children (s = h)."""
    rng = np.random.default_rng(8)
    train, test = random_treebank(rng, 30, max_len=7), random_treebank(rng, 12, max_len=9)
    fm = SiblingFeatureMap("mst-ud", templates).fit(train)
    P = fm.prepare(test)
    w = rng.normal(size=fm.dim)
    ws = w[fm.n_arc_features:]
    unseen = 0
    for i in range(len(test)):
        n = int(P.lengths[i])
        got = fm.sibling_scores(w, P, i, fm.dense_scores(w, dense_limit))
        want = np.zeros_like(got)
        for h in range(n + 1):
            for m in range(1, n + 1):
                if m == h:
                    continue
                for s in [h] + list(range(min(h, m) + 1, max(h, m))):
                    one = lambda v: np.array([v], dtype=np.int64)
                    for j, t in enumerate(fm._sib):
                        k = fm._sib_keys(t, P.data["sib_ids"], one(P.data["sib_base"][i]), one(h), one(s), one(m))
                        pos = fm._lookup(j, k)[0]
                        unseen += pos < 0
                        if pos >= 0:
                            want[h, s, m] += ws[pos]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert unseen > 0
    # the route taken: binary search for every h-template (limit 0), dense tables for the small ones (default)
    off, _ = fm.dense_scores(w, dense_limit)
    h_templates = [j for j, t in enumerate(fm._sib) if any(who == "h" for who, _ in t.atoms)]
    assert h_templates and all((off[j] >= 0) == (dense_limit is None) for j in h_templates)
