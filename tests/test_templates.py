"""CRF++-style template extraction against a direct string implementation of CRF++'s expansion rules."""
import gzip
import re
from collections import Counter
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import mmprog.features.templates as tmod
from mmprog.datasets.base import TokenCorpus
from mmprog.exceptions import DataError, ParameterError
from mmprog.features.templates import PRESETS, TemplateExtractor, parse_template

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


# ------------------------------------------------------------------------------------------- reference implementation

def crfpp_strings(sentence, columns, template):
    """CRF++'s expansion of one template at every token, written the obvious way (string substitution)."""
    n = len(sentence[columns[0]])

    def value(t, r, c):
        q = t + r
        if q < 0:
            return f"_B-{-q}"
        if q >= n:
            return f"_B+{q - n + 1}"
        return sentence[columns[c]][q]

    return [re.sub(r"%x\[(-?\d+),(\d+)\]", lambda m: value(t, int(m.group(1)), int(m.group(2))), template)
            for t in range(n)]


def reference(train, test, columns, templates, min_count=1):
    """Dictionary (string -> template id) from train; per test sentence the set of (token, string) present.

    Unigram templates are expanded at every token; bigram templates with macros, as CRF++'s feature index does,
    from the second token on (the string of token t then scores the label pair (t-1, t)); plain ``B`` gives none.
    """
    feats = [(t, 0 if t.startswith("U") else 1) for t in templates if t.startswith("U") or "%x" in t]
    counts = Counter()
    for s in train:
        for tpl, first in feats:
            counts.update(crfpp_strings(s, columns, tpl)[first:])
    vocab = {f for f, c in counts.items() if c >= min_count}
    active = []
    for s in test:
        act = set()
        for tpl, first in feats:
            for t, f in enumerate(crfpp_strings(s, columns, tpl)):
                if t >= first and f in vocab:
                    act.add((t, f))
        active.append(act)
    return vocab, active


def ours_active(ex, X):
    names = ex.feature_names_
    out = []
    for x in X:
        x = x.tocoo()
        assert np.all(x.data == 1.0)
        out.append({(int(r), names[c]) for r, c in zip(x.row, x.col)})
    return out


def random_sentences(rng, n, vocab_words=30, vocab_tags=5):
    words = [f"w{k}" for k in range(vocab_words)]
    tags = [f"T{k}" for k in range(vocab_tags)]
    out = []
    for _ in range(n):
        T = int(rng.integers(1, 9))
        out.append({"form": [words[i] for i in rng.integers(0, vocab_words, T)],
                    "pos": [tags[i] for i in rng.integers(0, vocab_tags, T)]})
    return out


# ------------------------------------------------------------------------------------------- tests

def test_boundary_symbols_hand_case():
    ex = TemplateExtractor(["U00:%x[-2,0]/%x[1,0]", "U01:%x[0,1]", "B"]).fit([{"w": ["a", "b"], "p": ["X", "Y"]}])
    # token 0: row -2 is two before the sentence (_B-2), row +1 is "b"; token 1: row -2 is one before (_B-1), row +1
    # one after (_B+1)
    names = ex.feature_names_
    assert set(names[:2]) == {"U00:_B-2/b", "U00:_B-1/_B+1"} and set(names[2:]) == {"U01:X", "U01:Y"}
    assert ex.groups_.tolist() == [0, 0, 1, 1]
    assert ex.group_names_ == ["U00", "U01"]
    assert ex.has_transitions_ and ex.n_features_ == 4
    X = ex.transform([{"w": ["a", "b"], "p": ["X", "Y"]}, {"w": ["z"], "p": ["Y"]}])
    col = {n: k for k, n in enumerate(names)}
    expect0 = np.zeros((2, 4))
    expect0[0, [col["U00:_B-2/b"], col["U01:X"]]] = 1
    expect0[1, [col["U00:_B-1/_B+1"], col["U01:Y"]]] = 1
    assert np.array_equal(X[0].toarray(), expect0)
    # "z" is unseen and its U00 string "_B-2/_B+1" was never seen either: only U01:Y fires
    assert np.flatnonzero(X[1].toarray()[0]).tolist() == [col["U01:Y"]]


@pytest.mark.parametrize("min_count", [1, 2, 3])
def test_matches_string_reference(min_count):
    rng = np.random.default_rng(min_count)
    train = random_sentences(rng, 60)
    test = random_sentences(rng, 40, vocab_words=40)   # unseen words in test
    templates = PRESETS["ner"]
    ex = TemplateExtractor(templates, min_count=min_count).fit(train)
    vocab, ref_active = reference(train, test, ["form", "pos"], templates, min_count)
    assert set(ex.feature_names_) == vocab
    assert len(ex.feature_names_) == ex.n_features_ == len(vocab)
    assert ours_active(ex, ex.transform(test)) == ref_active
    # groups: the template id before ':' of every feature, in template order
    ids = [n.split(":", 1)[0] for n in ex.feature_names_]
    assert [ex.group_names_[g] for g in ex.groups_] == ids
    assert np.all(np.diff(ex.groups_) >= 0)
    # counts: min_count keeps exactly the strings seen often enough
    assert ex.feature_counts().min() >= min_count


@pytest.mark.parametrize("min_count", [1, 2])
def test_bigram_templates_with_macros_match_string_reference(min_count):
    """``B01:%x[0,1]`` lines: CRF++'s strings from the second token on, placed after every unigram feature
    (``n_edge_features_`` of them), one group per template, and kept through to_state / from_state."""
    rng = np.random.default_rng(20 + min_count)
    train = random_sentences(rng, 60)
    test = random_sentences(rng, 40, vocab_words=40)
    templates = ["B10:%x[0,1]", "U00:%x[0,0]", "B", "B11:%x[-1,1]/%x[0,1]", "U01:%x[-1,0]/%x[1,1]",
                 "B12:%x[0,0]/%x[-1,1]"]
    ex = TemplateExtractor(templates, min_count=min_count).fit(train)
    vocab, ref_active = reference(train, test, ["form", "pos"], templates, min_count)
    assert set(ex.feature_names_) == vocab
    assert ours_active(ex, ex.transform(test)) == ref_active
    assert ex.group_names_ == ["U00", "U01", "B10", "B11", "B12"] and ex.has_transitions_
    ids = [n.split(":", 1)[0] for n in ex.feature_names_]
    assert ex.n_edge_features_ == sum(i.startswith("B") for i in ids) > 0
    assert all(i.startswith("B") for i in ids[ex.n_features_ - ex.n_edge_features_:])
    assert ex.describe()["n_edge_features"] == ex.n_edge_features_
    js, arrays = ex.to_state()
    ex2 = TemplateExtractor.from_state(js, arrays)
    assert ex2.n_edge_features_ == ex.n_edge_features_
    assert ours_active(ex2, ex2.transform(test)) == ref_active


def test_key_reindexing_path_matches_reference(monkeypatch):
    # force the int64-overflow path (partial keys re-indexed through fitted tables) on small data
    monkeypatch.setattr(tmod, "_KEY_LIMIT", 50)
    rng = np.random.default_rng(11)
    train = random_sentences(rng, 50)
    test = random_sentences(rng, 30, vocab_words=35)
    templates = ["U0:%x[-1,0]/%x[0,0]/%x[1,0]/%x[0,1]", "U1:%x[-2,1]/%x[-1,1]/%x[0,1]/%x[1,1]/%x[2,1]",
                 "U2:%x[0,0]"]
    ex = TemplateExtractor(templates).fit(train)
    assert any(tab is not None for t in ex._feature_templates for tab in t.recode)
    vocab, ref_active = reference(train, test, ["form", "pos"], templates)
    assert set(ex.feature_names_) == vocab
    assert ours_active(ex, ex.transform(test)) == ref_active
    js, arrays = ex.to_state()
    ex2 = TemplateExtractor.from_state(js, arrays)
    assert ours_active(ex2, ex2.transform(test)) == ref_active


def test_state_round_trip_through_json_and_npz(tmp_path):
    import json
    rng = np.random.default_rng(2)
    train, test = random_sentences(rng, 40), random_sentences(rng, 10, vocab_words=45)
    ex = TemplateExtractor(PRESETS["tp2"], columns=["pos"], min_count=2).fit(train)
    js, arrays = ex.to_state()
    (tmp_path / "t.json").write_text(json.dumps(js))
    np.savez(tmp_path / "t.npz", **arrays)
    with np.load(tmp_path / "t.npz", allow_pickle=False) as z:
        ex2 = TemplateExtractor.from_state(json.loads((tmp_path / "t.json").read_text()), dict(z))
    assert ex2.feature_names_ == ex.feature_names_
    assert ex2.group_names_ == ex.group_names_ and np.array_equal(ex2.groups_, ex.groups_)
    for a, b in zip(ex.transform(test), ex2.transform(test)):
        assert (a != b).nnz == 0


def test_presets_are_table_2_and_the_ner_count():
    uni = [f"%x[{r},0]" for r in range(-2, 3)]
    tri = [f"%x[{r},0]/%x[{r + 1},0]/%x[{r + 2},0]" for r in range(-2, 1)]
    bi_tp1 = ["%x[-1,0]/%x[0,0]", "%x[0,0]/%x[1,0]"]
    # TP2 "enumerates all the bi-gram templates in [-2, +2]": Table 2 lists every pair except (-2, 2)
    bi_tp2 = [f"%x[{a},0]/%x[{b},0]" for a, b in combinations(range(-2, 3), 2) if (a, b) != (-2, 2)]
    body = lambda ts: [t.split(":", 1)[1] for t in ts if t != "B"]   # noqa: E731
    assert body(PRESETS["tp1"]) == uni + tri + bi_tp1
    assert sorted(body(PRESETS["tp2"])) == sorted(uni + tri + bi_tp2)
    assert len(PRESETS["tp1"]) == 11 and len(PRESETS["tp2"]) == 18       # Table 2's index columns
    assert PRESETS["tp1"][-1] == "B" and PRESETS["tp2"][-1] == "B"
    assert [t.split(":")[0] for t in PRESETS["tp2"][:-1]] == [f"U{k:02d}" for k in range(17)]
    # Table 2 by id
    assert "U08:%x[-1,0]/%x[0,0]" in PRESETS["tp1"] and "U16:%x[-1,0]/%x[2,0]" in PRESETS["tp2"]
    assert "U05:%x[-2,0]/%x[-1,0]/%x[0,0]" in PRESETS["tp1"]

    ner = PRESETS["ner"]
    assert len(ner) == 134
    kinds = Counter()
    for t in ner:
        kind, _, macros, _ = parse_template(t)
        if kind == "B":
            kinds["B"] += 1
            continue
        assert all(-3 <= r <= 3 for r, _ in macros)
        assert len({r for r, _ in macros}) == len(macros)          # distinct positions
        kinds[tuple(c for _, c in macros)] += 1
    assert kinds == {(0,): 7, (1,): 7, (0, 0): 21, (1, 1): 21, (0, 1): 42, (1, 1, 1): 35, "B": 1}
    assert len(set(ner)) == 134


def test_to_dataset_builds_sequence_dataset():
    rng = np.random.default_rng(4)
    sents = random_sentences(rng, 30)
    labels = [[["O", "B-X", "I-X"][i] for i in rng.integers(0, 3, len(s["form"]))] for s in sents]
    train = TokenCorpus(sents[:20], labels[:20])
    test = TokenCorpus(sents[20:], labels[20:])
    ex = TemplateExtractor("tp1")
    ds = ex.to_dataset(train)
    assert ds.n_features == ex.n_features_ and ds.n_labels == 3
    assert ds.label_names == ["B-X", "I-X", "O"]
    assert np.array_equal(ds.groups, ex.groups_) and ds.group_names == ex.group_names_
    assert ds.info["has_transitions"] is True
    for x, x2 in zip(ds.X, ex.transform(train)):
        assert sp.issparse(x) and (x != x2).nnz == 0
    for y, lab in zip(ds.Y, labels[:20]):
        assert [ds.label_names[k] for k in y] == lab
    dt = ex.to_dataset(test)                 # reuses the training labels and dictionary
    assert dt.label_names == ds.label_names and dt.n_features == ds.n_features


def test_errors():
    with pytest.raises(ParameterError, match="must start with U"):
        TemplateExtractor(["X00:%x[0,0]"])
    with pytest.raises(ParameterError, match="unique"):
        TemplateExtractor(["U00:%x[0,0]", "U00:%x[1,0]"])
    with pytest.raises(ParameterError, match="unique"):
        TemplateExtractor(["B01:%x[0,0]", "B01:%x[0,1]"])
    with pytest.raises(ParameterError, match="malformed"):
        TemplateExtractor(["U00:%x[0]"])
    with pytest.raises(ParameterError, match="preset"):
        TemplateExtractor("tp9")
    with pytest.raises(ParameterError, match="min_count"):
        TemplateExtractor("tp1", min_count=0)
    with pytest.raises(ParameterError, match="column 1"):
        TemplateExtractor(["U00:%x[0,1]"]).fit([{"w": ["a"]}])
    with pytest.raises(ParameterError, match="not fitted"):
        TemplateExtractor("tp1").transform([{"w": ["a"]}])
    ex = TemplateExtractor(["U00:%x[0,0]/%x[0,1]"]).fit([{"w": ["a"], "p": ["X"]}])
    with pytest.raises(DataError, match="sentence 1 has no column 'p'"):
        ex.transform([{"w": ["a"], "p": ["X"]}, {"w": ["b"]}])
    with pytest.raises(DataError, match="sentence 0: column 'p' has 2 values"):
        ex.transform([{"w": ["a"], "p": ["X", "Y"]}])
    # a template without macros is a bias feature firing at every token
    ex = TemplateExtractor(["U00:%x[0,0]", "U01:bias"]).fit([{"w": ["a", "b"]}])
    assert ex.feature_names_[-1] == "U01:bias"
    assert ex.transform([{"w": ["c", "a", "b"]}])[0].toarray()[:, -1].tolist() == [1, 1, 1]
    # a CRF++ template file with comments and blank lines
    ex = TemplateExtractor("# unigram\nU00:%x[0,0]\n\nB\n")
    assert ex.templates == ["U00:%x[0,0]", "B"]


def _read_conll(path, limit):
    sents, labels, cur = [], [], []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            f = line.split()
            if not f:
                if cur:
                    sents.append({"form": [c[0] for c in cur], "pos": [c[1] for c in cur]})
                    labels.append([c[2] for c in cur])
                    cur = []
                    if len(sents) == limit:
                        break
                continue
            cur.append(f)
    return sents, labels


def test_ner_preset_on_real_spanish_slice():
    path = DATA / "conll2002" / "esp.train.gz"
    if not path.exists():
        pytest.skip(f"{path} not available")
    sents, _ = _read_conll(path, 120)
    train, test = sents[:80], sents[80:]
    ex = TemplateExtractor("ner").fit(train)
    vocab, ref_active = reference(train, test, ["form", "pos"], PRESETS["ner"])
    assert set(ex.feature_names_) == vocab
    assert ours_active(ex, ex.transform(test)) == ref_active
