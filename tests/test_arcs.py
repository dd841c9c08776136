"""ArcFeatureMap against an independent string implementation of the MSTParser templates, and decoding against
brute-force enumeration of all trees."""
import gzip
import itertools
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from mmprog.datasets.base import TreeDataset
from mmprog.exceptions import DataError, ParameterError
from mmprog.features.arcs import ARC_PRESETS, ArcFeatureMap
from mmprog.features.base import JointFeatureMap

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
FIELD = {"w": "form", "p": "pos", "c": "cpos", "l": "lemma", "s": "pos", "f": "feats", "x": "form"}
# derived fields, written out again here: the XPOS's first '|' segment, the form's first five characters
DERIVE = {"s": lambda v: v.split("|")[0], "x": lambda v: v[:5]}


# ------------------------------------------------------------------------------------------- reference implementation

def bucket(d):
    return str(d) if d <= 4 else ("5-9" if d < 10 else "10+")


def ref_arc_features(sent, h, m, templates):
    """Feature names of arc h -> m, written directly from the template definitions (one loop per in-between word)."""
    n = len(sent["form"])

    def val(f, q):
        if q < 0:
            return "STR"
        if q > n:
            return "END"
        if q == 0:
            return "<root>"
        v = sent[FIELD[f]][q - 1]
        return DERIVE[f](v) if f in DERIVE else v

    out = Counter()
    for spec in templates:
        body, _, conj = spec.partition("|")
        atoms = body.split("/")
        suffix = f"|{'L' if h > m else 'R'}{bucket(abs(h - m))}" if conj else ""
        between = any(a[0] == "b" and len(a) == 2 for a in atoms)
        for b in (range(min(h, m) + 1, max(h, m)) if between else [None]):
            vals = []
            for a in atoms:
                who, f, off = a[0], a[1], int(a[2:] or 0)
                if who == "b" and off:
                    # relative position: the off-th word from the head towards the modifier, if the arc spans it
                    if off >= abs(h - m):
                        vals = None
                        break
                    q = h + off if m > h else h - off
                else:
                    q = b if who == "b" else (h if who == "h" else m) + off
                vals.append(val(f, q))
            if vals is not None:
                out[f"{spec}={'/'.join(vals)}{suffix}"] += 1
    return out


def ref_dictionary(ds, templates, min_count=1):
    c = Counter()
    for s, heads in zip(ds.sentences, ds.heads):
        for m, h in enumerate(heads, start=1):
            c.update(ref_arc_features(s, int(h), m, templates))
    return {k for k, v in c.items() if v >= min_count}


def ref_tree_features(sent, heads, templates, vocab):
    f = Counter()
    for m, h in enumerate(heads, start=1):
        f.update(ref_arc_features(sent, int(h), m, templates))
    return Counter({k: v for k, v in f.items() if k in vocab})


_NAMES = {}


def as_named(fm, row):
    """A sparse row as a Counter name -> value (names may repeat when token strings contain '/')."""
    if id(fm) not in _NAMES:
        _NAMES.clear()
        _NAMES[id(fm)] = (fm, fm.feature_names())
    names = _NAMES[id(fm)][1]
    row = sp.csr_matrix(row)
    out = Counter()
    for j, v in zip(row.indices, row.data):
        out[names[j]] += v
    return Counter({k: v for k, v in out.items() if v != 0})


def random_tree(rng, n):
    order = rng.permutation(n) + 1
    heads = np.zeros(n, dtype=np.int64)
    placed = [0]
    for m in order:
        heads[m - 1] = placed[rng.integers(len(placed))]
        placed.append(m)
    return heads


def random_treebank(rng, n_sent, max_len=8, n_words=12, n_tags=5):
    sents, heads = [], []
    for _ in range(n_sent):
        n = int(rng.integers(1, max_len + 1))
        sents.append({"form": [f"w{k}" for k in rng.integers(0, n_words, n)],
                      "pos": [f"P{k}" for k in rng.integers(0, n_tags, n)],
                      "cpos": [f"C{k}" for k in rng.integers(0, 3, n)],
                      # long forms share 5-character prefixes; XPOS with '|' segments; FEATS bundles
                      "feats": [f"F{k}=a|G=b" if k else "_" for k in rng.integers(0, 3, n)],
                      "lemma": [f"l{k}" for k in rng.integers(0, 4, n)]})
        sents[-1]["form"] = [w if rng.random() < 0.5 else "prefixed" + w for w in sents[-1]["form"]]
        sents[-1]["pos"] = [p + f"|S{k}" if k else p for p, k in zip(sents[-1]["pos"], rng.integers(0, 3, n))]
        heads.append(random_tree(rng, n))
    return TreeDataset(sents, heads)


def all_trees(n, projective=False):
    """Every head assignment of n tokens that is a tree rooted at 0 (optionally projective), as (n+1,) arrays."""
    out = []
    for hs in itertools.product(range(n + 1), repeat=n):
        h = np.array((-1,) + hs)
        if any(h[m] == m for m in range(1, n + 1)):
            continue
        ok = True
        for m in range(1, n + 1):
            seen, q = set(), m
            while q != 0 and ok:
                if q in seen:
                    ok = False
                seen.add(q)
                q = h[q]
            if not ok:
                break
        if not ok:
            continue
        if projective:
            arcs = [(min(h[m], m), max(h[m], m)) for m in range(1, n + 1)]
            if any(a < c < b < d for (a, b), (c, d) in itertools.permutations(arcs, 2)):
                continue
        out.append(h)
    return out


# ------------------------------------------------------------------------------------------- tests

@pytest.mark.parametrize("preset,min_count", [("mcdonald05", 1), ("mcdonald05+cpos", 2), ("mst-ud", 1)])
def test_dictionary_and_arc_rows_match_reference(preset, min_count):
    rng = np.random.default_rng(min_count)
    train = random_treebank(rng, 40)
    test = random_treebank(rng, 10, max_len=12, n_words=16)      # unseen words, longer spans (distance 10+)
    templates = ARC_PRESETS[preset]
    fm = ArcFeatureMap(preset, min_count=min_count).fit(train)
    vocab = ref_dictionary(train, templates, min_count)
    names = fm.feature_names()
    assert len(names) == fm.dim == len(vocab) and set(names) == vocab
    P = fm.prepare(test)
    for i, s in enumerate(test.sentences):
        n = len(s["form"])
        Fi = fm.sentence_features(P, i)
        assert Fi.shape == ((n + 1) ** 2, fm.dim)
        for h in range(n + 1):
            for m in range(n + 1):
                row = Fi[h * (n + 1) + m]
                if m == 0 or h == m:
                    assert row.nnz == 0
                    continue
                ref = Counter({k: v for k, v in ref_arc_features(s, h, m, templates).items() if k in vocab})
                assert as_named(fm, row) == ref, (i, h, m)


def test_scores_equal_w_dot_f_of_explicit_trees_and_delta():
    rng = np.random.default_rng(7)
    train = random_treebank(rng, 30)
    test = random_treebank(rng, 12, max_len=9)
    templates = ARC_PRESETS["mcdonald05"]
    fm = ArcFeatureMap().fit(train)
    vocab = ref_dictionary(train, templates)
    index = {}
    for j, nm in enumerate(fm.feature_names()):
        index.setdefault(nm, []).append(j)
    assert all(len(v) == 1 for v in index.values())   # no '/' in these tokens: names are unique
    w = rng.normal(size=fm.dim)
    P = fm.prepare(test)
    S = fm.scores(w, P)
    idx = np.arange(len(test))
    trees = np.full((len(test), P.gold.shape[1]), -1)
    for i, s in enumerate(test.sentences):
        n = len(s["form"])
        y = random_tree(rng, n)
        trees[i, 1:n + 1] = y
        f_ref = ref_tree_features(s, y, templates, vocab)
        wf = sum(w[index[k][0]] * v for k, v in f_ref.items())
        m = np.arange(1, n + 1)
        assert S[i][y, m].sum() == pytest.approx(wf)
        assert np.all(np.isneginf(S[i][:, 0])) and np.all(np.isneginf(np.diag(S[i])))
        # joint_features of the explicit tree is the reference vector
        assert as_named(fm, fm.joint_features(P, [i], trees[i:i + 1])) == f_ref
    # ΔF = f(gold) - f(y) and Δℓ = wrong heads
    dF, dl = fm.delta(P, idx, trees)
    for i, s in enumerate(test.sentences):
        n = len(s["form"])
        gold = test.heads[i]
        ref = ref_tree_features(s, gold, templates, vocab)
        ref.subtract(ref_tree_features(s, trees[i, 1:n + 1], templates, vocab))
        assert as_named(fm, dF[i]) == Counter({k: v for k, v in ref.items() if v != 0})
        assert dl[i] == np.sum(gold != trees[i, 1:n + 1])
        sc_gold = S[i][gold, np.arange(1, n + 1)].sum()
        sc_y = S[i][trees[i, 1:n + 1], np.arange(1, n + 1)].sum()
        assert dF[i] @ w == pytest.approx(sc_gold - sc_y)
    # the gold trees themselves: ΔF = 0, Δℓ = 0; loss agrees with delta
    dF0, dl0 = fm.delta(P, idx, P.gold)
    assert dF0.nnz == 0 and np.all(dl0 == 0)
    assert np.array_equal(fm.loss(P, idx, trees), dl)
    # scores of a subset (and a repeated index) are the same matrices
    sub = fm.scores(w, P, np.array([3, 1, 3]))
    for k, i in enumerate([3, 1, 3]):
        assert np.array_equal(sub[k], S[i])


@pytest.mark.parametrize("projective", [False, True])
def test_decode_against_brute_force(projective):
    rng = np.random.default_rng(3 + projective)
    train = random_treebank(rng, 25, max_len=6)
    fm = ArcFeatureMap(projective=projective).fit(train, all_arcs=True)
    test = random_treebank(rng, 40, max_len=5, n_words=12)
    P = fm.prepare(test)
    trees_of = {n: all_trees(n, projective) for n in range(1, 6)}
    for trial in range(3):
        w = rng.normal(size=fm.dim)
        S = fm.scores(w, P)
        for la in (False, True):
            H = fm.decode(w, P, loss_augmented=la)
            assert H.shape == (len(test), int(P.lengths.max()) + 1) and np.all(H[:, 0] == -1)
            for i, s in enumerate(test.sentences):
                n = len(s["form"])
                gold = test.heads[i]
                m = np.arange(1, n + 1)

                def value(h):
                    return S[i][h[1:], m].sum() + (la * np.sum(h[1:] != gold))
                best = max(value(h) for h in trees_of[n])
                got = H[i, :n + 1]
                assert np.all(H[i, n + 1:] == -1)
                assert any(np.array_equal(got, h) for h in trees_of[n])      # a (projective) tree
                assert value(got) == pytest.approx(best)
    # decode on a subset keeps the batch's own width
    Hs = fm.decode(w, P, np.array([0, 1]))
    assert Hs.shape[1] == int(P.lengths[[0, 1]].max()) + 1


def test_group_bookkeeping_and_protocol():
    rng = np.random.default_rng(5)
    train = random_treebank(rng, 30)
    fm = ArcFeatureMap("mcdonald05+cpos").fit(train)
    assert isinstance(fm, JointFeatureMap)
    assert len(fm.group_names) == 52 == len(ARC_PRESETS["mcdonald05+cpos"])
    assert fm.group_names == ARC_PRESETS["mcdonald05+cpos"]
    assert fm.groups.shape == (fm.dim,) and np.all(np.diff(fm.groups) >= 0)
    spec_of = [nm.split("=", 1)[0] for nm in fm.feature_names()]
    assert [fm.group_names[g] for g in fm.groups] == spec_of
    # every template is its own group, and plain and |dd versions both exist
    assert set(fm.groups.tolist()) == set(range(52))
    assert "hp/bp/mp" in fm.group_names and "hp/bp/mp|dd" in fm.group_names
    assert len(ARC_PRESETS["mcdonald05"]) == 36
    d = fm.describe()
    assert d["kind"] == "arcs" and d["dim"] == fm.dim and sum(d["group_sizes"]) == fm.dim
    json.dumps(d)
    counts = fm.feature_counts()
    assert counts.shape == (fm.dim,) and counts.min() >= 1


def test_state_round_trip_json_npz(tmp_path):
    rng = np.random.default_rng(9)
    train = random_treebank(rng, 30)
    test = random_treebank(rng, 8, n_words=20)
    fm = ArcFeatureMap(["hw/mp|dd", "hp/bp/mp", "hp-1/hp/mp/mp+1|dd"], min_count=1, projective=True).fit(train)
    js, arrays = fm.to_state()
    (tmp_path / "f.json").write_text(json.dumps(js))
    np.savez(tmp_path / "f.npz", **arrays)
    with np.load(tmp_path / "f.npz", allow_pickle=False) as z:
        fm2 = ArcFeatureMap.from_state(json.loads((tmp_path / "f.json").read_text()), dict(z))
    assert fm2.projective and fm2.dim == fm.dim and fm2.feature_names() == fm.feature_names()
    a, b = fm.prepare(test).data["F"], fm2.prepare(test).data["F"]
    assert (a != b).nnz == 0


def test_errors():
    with pytest.raises(ParameterError, match="atom 'hz'"):
        ArcFeatureMap(["hz"])
    with pytest.raises(ParameterError, match="positive relative position"):
        ArcFeatureMap(["hp/bp-1/mp"])
    with pytest.raises(ParameterError, match="'\\|dd'"):
        ArcFeatureMap(["hp|d"])
    with pytest.raises(ParameterError, match="not one of"):
        ArcFeatureMap("mst2")
    with pytest.raises(ParameterError, match="twice"):
        ArcFeatureMap(["hp", "hp"])
    with pytest.raises(ParameterError, match="not fitted"):
        ArcFeatureMap().prepare(random_treebank(np.random.default_rng(0), 2))
    rng = np.random.default_rng(1)
    ds = random_treebank(rng, 5, max_len=4)
    fm = ArcFeatureMap().fit(ds)
    P = fm.prepare(ds)
    bad = P.gold.copy()
    n0 = int(P.lengths[0])
    bad[0, 1] = n0 + 3
    with pytest.raises(DataError, match="labeling 0"):
        fm.delta(P, np.arange(len(ds)), bad)
    with pytest.raises(DataError, match="w has shape"):
        fm.scores(np.zeros(fm.dim + 1), P)
    with pytest.raises(DataError, match="no column 'lemma'"):
        ArcFeatureMap(["hl"]).fit(_NoLemma(ds))


class _NoLemma:
    """A dataset-like object without the lemma column (TreeDataset always adds one)."""

    def __init__(self, ds):
        self.sentences = [{k: v for k, v in s.items() if k != "lemma"} for s in ds.sentences]
        self.heads = ds.heads

    def __len__(self):
        return len(self.sentences)


def test_real_treebank_slice_matches_reference():
    path = DATA / "ptb_dependency_sample_nltk" / "wsj_0001-0199.dp.gz"
    if not path.exists():
        pytest.skip(f"{path} not available")
    sents, heads, cur = [], [], []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            f = line.split("\t")
            if len(f) < 3:
                if cur:
                    sents.append({"form": [c[0] for c in cur], "pos": [c[1] for c in cur]})
                    heads.append(np.array([int(c[2]) for c in cur]))
                    cur = []
                    if len(sents) == 60:
                        break
                continue
            cur.append([x.strip() for x in f])
    train = TreeDataset(sents[:50], heads[:50])
    test = TreeDataset(sents[50:53], heads[50:53])
    templates = ARC_PRESETS["mcdonald05"]
    fm = ArcFeatureMap().fit(train)
    vocab = ref_dictionary(train, templates)
    assert set(fm.feature_names()) == vocab
    P = fm.prepare(test)
    dF, dl = fm.delta(P, np.arange(3), P.gold)
    assert dF.nnz == 0 and np.all(dl == 0)
    for i, s in enumerate(test.sentences):
        n = len(s["form"])
        Fi = fm.sentence_features(P, i)
        for h, m in [(0, 1), (n, 1), (1, n), (2, min(n, 9))]:
            if h == m or m == 0:
                continue
            ref = Counter({k: v for k, v in ref_arc_features(s, h, m, templates).items() if k in vocab})
            assert as_named(fm, Fi[h * (n + 1) + m]) == ref


def test_absent_lemma_column_drops_its_templates_and_relative_position_needs_positive_offset():
    rng = np.random.default_rng(3)
    train = random_treebank(rng, 20)
    for s in train.sentences:
        s["lemma"] = ["_"] * len(s["form"])
    fm = ArcFeatureMap("mst-ud").fit(train)
    lemma_templates = [t for t in ARC_PRESETS["mst-ud"] if "hl" in t or "ml" in t]
    assert lemma_templates and fm.dropped_templates == lemma_templates
    assert set(fm.dropped_templates) | set(fm.templates) == set(ARC_PRESETS["mst-ud"])
    # the saved state keeps the templates actually used
    fm2 = ArcFeatureMap.from_state(*fm.to_state())
    assert fm2.templates == fm.templates and fm2.dim == fm.dim


def test_hold_keeps_one_datasets_arrays_until_release():
    rng = np.random.default_rng(11)
    train, other = random_treebank(rng, 20), random_treebank(rng, 6)
    fm = ArcFeatureMap().fit(train)
    fresh = fm.prepare(train)
    fm.hold(train)
    kept = fm.prepare(train)
    assert fm.prepare(train) is kept                      # held: built once
    assert (kept.data["F"] != fresh.data["F"]).nnz == 0 and np.array_equal(kept.gold, fresh.gold)
    assert fm.prepare(other) is not kept                  # another dataset (even of equal content) is built anew
    fm.release()
    assert fm.prepare(train) is not kept
