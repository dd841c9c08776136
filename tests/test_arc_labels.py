"""The arc labeller's structure (ArcLabelFeatureMap) against an independent string implementation of its features,
its decoder against enumeration of every labelling, and its training (m3n over the label structure) against the
full program with every labelling of every tree as an explicit constraint, solved by highspy directly."""
import itertools
from collections import Counter

import numpy as np
import pytest

import mmprog
from mmprog.datasets.base import TreeDataset
from mmprog.exceptions import DataError
from mmprog.features.arc_labels import LABEL_PRESETS, ArcLabelFeatureMap

from _enumerated import solve_enumerated
from test_arcs import random_tree, ref_arc_features

RELS = ["nsubj", "obj", "root"]


def labelled_treebank(rng, n_sent, max_len=4):
    sents, heads = [], []
    for _ in range(n_sent):
        n = int(rng.integers(1, max_len + 1))
        h = random_tree(rng, n)
        cpos = [f"C{k}" for k in rng.integers(0, 3, n)]
        # labels follow the attachment (root) and the tag, with noise, so a labeller has something to learn
        rel = ["root" if hh == 0 else ("nsubj" if c == "C0" else "obj") for hh, c in zip(h, cpos)]
        rel = [RELS[rng.integers(3)] if rng.random() < 0.2 else r for r in rel]
        sents.append({"form": [f"w{k}" for k in rng.integers(0, 6, n)], "pos": [c + "|x" for c in cpos],
                      "cpos": cpos, "feats": ["_"] * n, "lemma": ["_"] * n, "deprel": rel})
        heads.append(h)
    return TreeDataset(sents, heads)


TEMPLATES = ["mc", "hc/mc|dd", "mw", "hs/ms", "mc-1/mc/mc+1"]


def ref_label_features(sent, heads, labels, pairs):
    out = Counter()
    for m, (h, y) in enumerate(zip(heads, labels), start=1):
        for name, v in ref_arc_features(sent, int(h), m, TEMPLATES).items():
            if (name, y) in pairs:
                out[(name, y)] += v
    return out


def test_joint_features_match_reference_and_decoder_matches_enumeration():
    rng = np.random.default_rng(0)
    train = labelled_treebank(rng, 30)
    test = labelled_treebank(rng, 8)
    fm = ArcLabelFeatureMap(TEMPLATES).fit(train)
    assert fm.label_names == sorted(RELS) and fm.n_labels == 3
    # reference dictionary: (arc feature name, relation) on the gold arcs of the training data
    pairs = set()
    for s, h in zip(train.sentences, train.heads):
        for m, hh in enumerate(h, start=1):
            for name in ref_arc_features(s, int(hh), m, TEMPLATES):
                pairs.add((name, s["deprel"][m - 1]))
    assert fm.dim == len(pairs)
    base_names = fm._arcs.feature_names()
    names = [(base_names[p // fm.n_labels], fm.label_names[p % fm.n_labels]) for p in fm._pairs]
    assert set(names) == pairs
    P = fm.prepare(test)
    w = rng.normal(size=fm.dim)
    for i, (s, h) in enumerate(zip(test.sentences, test.heads)):
        n = len(h)
        labs = np.array(list(itertools.product(range(3), repeat=n)))
        F = fm.joint_features(P, np.full(len(labs), i), labs)
        for r in rng.choice(len(labs), size=min(5, len(labs)), replace=False):
            got = Counter()
            row = F[r]
            for j, v in zip(row.indices, row.data):
                got[names[j]] += v
            assert got == ref_label_features(s, h, [fm.label_names[k] for k in labs[r]], pairs)
        sc = F @ w
        loss = fm.loss(P, np.full(len(labs), i), labs)
        gold = np.array([fm.label_names.index(r) for r in s["deprel"]])
        assert np.array_equal(loss, (labs != gold).sum(axis=1))
        for aug in (False, True):
            best = labs[np.argmax(sc + loss if aug else sc)]
            got = fm.decode(w, P, [i], loss_augmented=aug)[0, :n]
            assert np.array_equal(got, best)
        dF, dl = fm.delta(P, np.full(len(labs), i), labs)
        assert np.allclose(dF @ w, (F[np.all(labs == gold, axis=1)] @ w)[0] - sc)
        assert np.array_equal(dl, loss)


@pytest.mark.parametrize("slack", ["n", "one"])
def test_m3n_on_the_label_structure_reaches_the_enumerated_optimum(slack):
    rng = np.random.default_rng(4)
    ds = labelled_treebank(rng, 6, max_len=3)
    fm = ArcLabelFeatureMap(TEMPLATES).fit(ds)
    P = fm.prepare(ds)
    rows, dls, ex = [], [], []
    for i, h in enumerate(ds.heads):
        labs = np.array(list(itertools.product(range(fm.n_labels), repeat=len(h))))
        dF, dl = fm.delta(P, np.full(len(labs), i), labs)
        rows.append(dF.toarray())
        dls.append(dl)
        ex.append(np.full(len(labs), i))
    C, eps = 0.5, 1e-4
    opt, w_full = solve_enumerated(np.vstack(rows), np.concatenate(dls), np.concatenate(ex), len(ds), C)
    res = mmprog.fit(ds, program="m3n", C=C, slack=slack, eps=eps, feature_map=fm, master="dual")
    assert res.termination == "converged"
    assert res.primal_objective <= opt + 1e-5 * max(1, opt)
    assert opt <= res.primal_objective + C * len(ds) * eps + 1e-5 * max(1, opt)
    assert np.allclose(res.w, w_full, atol=5e-2 * max(1.0, np.abs(w_full).max()))


def test_state_round_trip_and_errors(tmp_path):
    rng = np.random.default_rng(1)
    ds = labelled_treebank(rng, 20)
    fm = ArcLabelFeatureMap().fit(ds)
    assert all("hl" not in t and "ml" not in t for t in fm.templates)        # no lemmas: lemma templates dropped
    assert set(fm.templates) < set(LABEL_PRESETS["labels"])
    res = mmprog.fit(ds, program="m3n", C=1.0, eps=1e-2, feature_map=fm)
    res.save(tmp_path / "lab")
    back = mmprog.load(tmp_path / "lab.json")
    assert back.fmap.dim == fm.dim and back.fmap.label_names == fm.label_names
    P1, P2 = fm.prepare(ds), back.fmap.prepare(ds)
    assert np.array_equal(fm.decode(res.w, P1), back.fmap.decode(back.w, P2))
    bare = TreeDataset([{k: v for k, v in s.items() if k != "deprel"} for s in ds.sentences], ds.heads)
    with pytest.raises(DataError, match="deprel"):
        ArcLabelFeatureMap().fit(bare)
