"""The arc labeller's structure (ArcLabelFeatureMap, a label chain over a given tree's tokens) against an independent
string implementation of its features and views, its decoder against enumeration of every labelling, and its
training (m3n on every route that covers it) against the full program with every labelling of every tree as an
explicit constraint, solved by highspy directly."""
import itertools
from collections import Counter

import numpy as np
import pytest

import mmprog
from mmprog.datasets.base import TreeDataset
from mmprog.exceptions import DataError, ModelFileError, ParameterError
from mmprog.features.arc_labels import CONTEXT_VIEWS, LABEL_PRESETS, ArcLabelFeatureMap, view_heads

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


def ref_view_heads(view, heads):
    """The paired token of every token, by loops over the tree."""
    n = len(heads)
    out = []
    for m in range(1, n + 1):
        h = int(heads[m - 1])
        if view == "arc":
            out.append(h)
        elif view == "grand":
            out.append(0 if h == 0 else int(heads[h - 1]))
        else:
            deps = [j for j in range(1, n + 1) if heads[j - 1] == m]
            out.append(0 if not deps else (deps[0] if view == "lchild" else deps[-1]))
    return out


def ref_token_features(sent, heads, m, views):
    """{(view, feature name): count} of token m's inputs."""
    out = Counter()
    for v, templates in views.items():
        q = ref_view_heads(v, heads)[m - 1]
        for name, c in ref_arc_features(sent, q, m, templates).items():
            out[(v, name)] += c
    return out


def test_view_heads_match_loops_over_the_tree():
    rng = np.random.default_rng(3)
    for _ in range(200):
        h = random_tree(rng, int(rng.integers(1, 9)))
        for v in ("arc", "grand", "lchild", "rchild"):
            assert view_heads(v, h).tolist() == ref_view_heads(v, h)
    with pytest.raises(ParameterError, match="sibling"):
        view_heads("sibling", h)


def _names(fm):
    """Name of every coordinate of w: ((view, input feature), label) for the state block, ('T', a, b) after."""
    inputs = [(v, name) for v, vm in fm.views.items() for name in vm.feature_names()]
    K = fm.n_labels
    names = [(inputs[j], k) for j in range(len(inputs)) for k in range(K)]
    return names + [("T", a, b) for a in range(K) for b in range(K)]


def ref_joint_features(sent, heads, labels, views):
    out = Counter()
    for m, y in enumerate(labels, start=1):
        for key, c in ref_token_features(sent, heads, m, views).items():
            out[(key, y)] += c
    for a, b in zip(labels[:-1], labels[1:]):
        out[("T", a, b)] += 1
    return out


@pytest.mark.parametrize("context", [True, False])
def test_joint_features_match_reference_and_decoder_matches_enumeration(context):
    rng = np.random.default_rng(0)
    train = labelled_treebank(rng, 30)
    test = labelled_treebank(rng, 8)
    fm = ArcLabelFeatureMap(TEMPLATES, context=context).fit(train)
    asked = {"arc": TEMPLATES, **(CONTEXT_VIEWS if context else {})}
    assert fm.label_names == sorted(RELS) and fm.n_labels == 3 and list(fm.views) == list(asked)
    # the templates that read FEATS or the lemma, '_' throughout this data, are left out (ArcFeatureMap.fit)
    views = {v: [t for t in ts if not any(a[1] in "fl" for a in t.split("|")[0].split("/"))]
             for v, ts in asked.items()}
    assert {v: fm.views[v].templates for v in views} == views
    # reference dictionaries: the features of each view's pairs in the gold trees of the training data
    for v, templates in views.items():
        ref = set()
        for s, h in zip(train.sentences, train.heads):
            for m, q in enumerate(ref_view_heads(v, h), start=1):
                ref.update(ref_arc_features(s, q, m, templates))
        assert set(fm.views[v].feature_names()) == ref, v
    names = _names(fm)
    assert fm.dim == len(names)
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
            want = ref_joint_features(s, h, labs[r].tolist(), views)
            # only features of the training dictionaries are kept
            known = set(names)
            assert got == Counter({k: c for k, c in want.items() if k in known})
        sc = F @ w
        loss = fm.loss(P, np.full(len(labs), i), labs)
        gold = np.array([fm.label_names.index(r) for r in s["deprel"]])
        assert np.array_equal(loss, (labs != gold).sum(axis=1))
        for aug in (False, True):
            best = labs[np.argmax(sc + loss if aug else sc)]
            got = fm.decode(w, P, [i], loss_augmented=aug)[0, :n]
            assert np.array_equal(got, best)


def test_labels_of_another_tree_read_that_tree():
    rng = np.random.default_rng(6)
    ds = labelled_treebank(rng, 12, max_len=6)
    fm = ArcLabelFeatureMap(TEMPLATES).fit(ds)
    other = [random_tree(rng, len(h)) for h in ds.heads]
    P = fm.prepare(ds, heads=other)
    names = _names(fm)
    views = {v: vm.templates for v, vm in fm.views.items()}
    known = set(names)
    for i, s in enumerate(ds.sentences):
        lab = np.zeros((1, len(other[i])), dtype=np.int64)
        row = fm.joint_features(P, [i], lab)
        got = Counter({names[j]: v for j, v in zip(row.indices, row.data)})
        want = ref_joint_features(s, other[i], lab[0].tolist(), views)
        assert got == Counter({k: c for k, c in want.items() if k in known})


@pytest.mark.parametrize("route,slack", [("bcfw", "n"), ("cutting-plane", "n"), ("cutting-plane", "one")])
def test_m3n_on_the_label_structure_reaches_the_enumerated_optimum(route, slack):
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
    C = 0.5
    opt, w_full = solve_enumerated(np.vstack(rows), np.concatenate(dls), np.concatenate(ex), len(ds), C)
    res = mmprog.fit(ds, program="m3n", C=C, slack=slack, gap_tol=1e-6, feature_map=fm, route=route)
    assert res.termination == "converged" and res.route == route
    # the certificate brackets the enumerated optimum: lower bound ≤ P* ≤ P(w) = upper bound, within the gap
    assert res.primal_objective <= opt + 1e-6 * max(1, opt) <= res.upper_bound + 2e-6 * max(1, opt)
    assert res.upper_bound - opt <= 1e-5 * max(1, opt)
    assert np.allclose(res.w, w_full, atol=5e-2 * max(1.0, np.abs(w_full).max()))


def test_state_round_trip_and_errors(tmp_path):
    rng = np.random.default_rng(1)
    ds = labelled_treebank(rng, 20)
    fm = ArcLabelFeatureMap().fit(ds)
    assert all("hl" not in t and "ml" not in t for t in fm.templates)        # no lemmas: lemma templates dropped
    assert set(fm.templates) < set(LABEL_PRESETS["labels"])
    res = mmprog.fit(ds, program="m3n", C=1.0, feature_map=fm)
    assert res.route == "bcfw" and res.termination == "converged"
    res.save(tmp_path / "lab")
    back = mmprog.load(tmp_path / "lab.json")
    assert back.fmap.dim == fm.dim and back.fmap.label_names == fm.label_names
    other = [random_tree(rng, len(h)) for h in ds.heads]
    P1, P2 = fm.prepare(ds, heads=other), back.fmap.prepare(ds, heads=other)
    assert np.array_equal(fm.decode(res.w, P1), back.fmap.decode(back.w, P2))
    desc, arrays = fm.to_state()
    old = {k: v for k, v in desc.items() if k != "structure"}
    with pytest.raises(ModelFileError, match="earlier mmprog"):
        ArcLabelFeatureMap.from_state(old, arrays)
    with pytest.raises(ModelFileError, match="dim"):
        ArcLabelFeatureMap.from_state({**desc, "dim": fm.dim + 1}, arrays)
    bare = TreeDataset([{k: v for k, v in s.items() if k != "deprel"} for s in ds.sentences], ds.heads)
    with pytest.raises(DataError, match="deprel"):
        ArcLabelFeatureMap().fit(bare)
    with pytest.raises(DataError, match="head vectors"):
        fm.prepare(ds, heads=ds.heads[:-1])
