"""The tagger's fast path (:mod:`mmprog.features.template_scores`): state scores summed per template group without
building X, against X·W from the extractor's CSR rows; the hashed key look-up against binary search; Viterbi from
given state scores against :meth:`ChainFeatureMap.decode`; and ``tag_stream``'s labels against ``predict``."""
import io

import numpy as np
import pytest

from mmprog.exceptions import DataError, ParameterError
from mmprog.features.chain import ChainFeatureMap, allowed_bigrams
from mmprog.features.template_kernels import key_hash_build, key_hash_find
from mmprog.features.template_scores import StateScorer
from mmprog.features.templates import TemplateExtractor

WORDS = ["el", "La", "casa", "VIVE", "come", "de", "y", "Grande", "2002", "20-10", "bien", "ayer", "Ana", "Lima"]
POS = ["DA", "NC", "VM", "SP", "CC", "Z", "NP"]

# every kind of template: one column at one offset (grouped, offsets -2..2, derived columns, two templates on one
# value), several offsets or columns (scored one by one; the word bigram's key space needs the hash), a constant
TEMPLATES = ["Uw:%x[0,0]", "Ulow[-2]:%x[-2,0:lower]", "Ulow[-1]:%x[-1,0:lower]", "Usuf3:%x[0,0:suf3]",
             "Ushape:%x[0,0:shape]", "Ulowshape:%x[0,0:lower]/%x[0,0:shape]", "Uw[2]:%x[2,0]",
             "Upos[1]:%x[1,1]", "Upos[-1,0]:%x[-1,1]/%x[0,1]", "Uw[-1,0]:%x[-1,0]/%x[0,0]",
             "Ulowpos:%x[0,0:lower]/%x[0,1]", "Ubias", "B"]


def _sentences(n, seed, words=WORDS):
    rng = np.random.default_rng(seed)
    return [{"form": [str(rng.choice(words)) for _ in range(L)], "pos": [str(rng.choice(POS)) for _ in range(L)]}
            for L in rng.integers(1, 9, size=n)]


def _flat(sents):
    return ({0: [w for s in sents for w in s["form"]], 1: [p for s in sents for p in s["pos"]]},
            np.array([len(s["form"]) for s in sents]))


def _fitted(min_count=1):
    ex = TemplateExtractor(TEMPLATES, columns=["form", "pos"], min_count=min_count)
    return ex.fit(_sentences(120, 0))


def test_state_scores_equal_x_times_w_across_chunks_and_memo_resets():
    ex = _fitted()
    W = np.random.default_rng(1).normal(size=(ex.n_features_, 5))
    sc = StateScorer(ex, W, memo_limit=6)
    # grouped and one-by-one templates as designed
    grouped = {j for gs in sc.groups.values() for _, js in gs for j in js}
    names = ex.group_names_
    assert {names[j] for j in sc.rest} == {"Upos[-1,0]", "Uw[-1,0]", "Ulowpos", "Ubias"}
    assert {names[j] for j in grouped} | {names[j] for j in sc.rest} == set(names)
    # unseen words (new strings, new shapes) and sentences of one token meet every boundary symbol; a memo of six
    # values is emptied several times within and between the calls
    for seed in (2, 3, 4):
        sents = _sentences(40, seed, WORDS + ["Quito", "x-1", "ZZ"])
        values, lens = _flat(sents)
        ref = ex.transform_columns(values, lens) @ W
        got = sc(values, lens)
        # the same sums in another order: equal within a few ulps of the largest partial sums
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-13 * len(TEMPLATES) * np.abs(W).max())
    assert np.abs(ref).max() > 1       # not zero = zero


def test_state_scores_with_min_count_and_errors():
    ex = _fitted(min_count=3)          # rare values have no feature: their rows of W are never read
    W = np.random.default_rng(5).normal(size=(ex.n_features_, 3))
    values, lens = _flat(_sentences(30, 6))
    np.testing.assert_allclose(StateScorer(ex, W)(values, lens), ex.transform_columns(values, lens) @ W,
                               rtol=0, atol=1e-12)
    with pytest.raises(ParameterError, match=r"W must have shape \(n_features_, K\)"):
        StateScorer(ex, W[:-1])
    with pytest.raises(DataError, match="empty sentence"):
        StateScorer(ex, W)(values, np.r_[lens, 0])
    edge = TemplateExtractor(["Uw:%x[0,0]", "B01:%x[0,1]"], columns=["form", "pos"]).fit(_sentences(10, 0))
    with pytest.raises(ParameterError, match="edge features"):
        StateScorer(edge, np.zeros((edge.n_features_, 2)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hashed_key_lookup_equals_binary_search(seed):
    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(0, 1 << 61, size=int(rng.integers(1, 3000))))
    query = np.concatenate([rng.choice(keys, 500), rng.integers(0, 1 << 61, size=500), [-1, 0, keys[0]]])
    out = np.empty(len(query), dtype=np.int32)
    key_hash_find(*key_hash_build(keys), query, 7, out)
    pos = np.minimum(np.searchsorted(keys, query), len(keys) - 1)
    want = np.where((query >= 0) & (keys[pos] == query), pos + 7, -1)
    np.testing.assert_array_equal(out, want)
    assert (out >= 0).sum() >= 500


@pytest.mark.parametrize("order,start_stop,bias", [(1, False, False), (1, True, True), (2, False, False),
                                                   (2, True, False)])
def test_decode_from_state_scores_equals_decode(order, start_stop, bias):
    ex = _fitted()
    sents = _sentences(50, 7)
    values, lens = _flat(sents)
    X = ex.transform_columns(values, lens)
    K = 4
    rng = np.random.default_rng(order + 2 * start_stop)
    gold = [rng.integers(0, K, size=L) for L in lens]
    allowed = allowed_bigrams(gold, K) if order == 2 else None
    fmap = ChainFeatureMap(ex.n_features_, K, start_stop=start_stop, bias=bias, order=order, allowed=allowed)
    w = rng.normal(size=fmap.dim)
    prep = fmap.prepare_stacked(X, lens)
    want = fmap.decode(w, prep)[prep.data["tok_example"], prep.data["tok_pos"]]
    S = np.asarray(X @ fmap.weights(w)["state"])
    S0 = S.copy()
    got = fmap.decode_state_scores(w, S, lens)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(S, S0)          # the caller's scores are left as they were
    if order == 2:
        starts = np.cumsum(lens) - lens
        inner = np.setdiff1d(np.arange(1, len(got)), starts)
        assert allowed[got[inner - 1], got[inner]].all()
    with pytest.raises(DataError, match="state_scores must have shape"):
        fmap.decode_state_scores(w, S[:-1], lens)


@pytest.mark.parametrize("order", [1, 2])
def test_tag_stream_labels_equal_predict(order, monkeypatch, tmp_path):
    """Tagging through the scorer (labels only, streamed in many small pieces) writes predict()'s labels; with the
    scorer switched off the same text comes out."""
    from mmprog import tagging
    from mmprog.datasets import load_conll
    from mmprog.result import Predictor
    ex = _fitted()
    names = ["B-LOC", "I-LOC", "B-PER", "I-PER", "O"]
    rng = np.random.default_rng(10 + order)
    train_gold = [rng.integers(0, 5, size=L) for L in rng.integers(1, 9, size=60)]
    fmap = ChainFeatureMap(ex.n_features_, 5, order=order,
                           allowed=allowed_bigrams(train_gold, 5) if order == 2 else None)
    pred = Predictor(fmap, rng.normal(size=fmap.dim), "m3n", label_names=names,
                     meta={"columns": ["form", "pos"], "label_column": "ne"})
    pred.extractor = ex
    sents = _sentences(80, 11, WORDS + ["Quito", "x-1"])
    text = "".join("".join(f"{w} {p}\n" for w, p in zip(s["form"], s["pos"])) + "\n" for s in sents)
    out = io.StringIO()
    info = tagging.tag_stream(pred, io.BytesIO(text.encode()), "t.txt", out, chunk_bytes=200)
    assert info["tokens"] == sum(len(s["form"]) for s in sents) and "_state_scorer" in pred.__dict__
    rows = [r.split() for r in out.getvalue().split("\n") if r]
    (tmp_path / "t.txt").write_text(text, encoding="utf-8")
    corpus = load_conll(tmp_path / "t.txt", columns=("form", "pos"), label_column=None)
    want = [names[k] for y in pred.predict(corpus) for k in y]
    assert [r[2] for r in rows] == want
    assert [r[:2] for r in rows] == [[w, p] for s in sents for w, p in zip(s["form"], s["pos"])]
    monkeypatch.setattr(tagging, "_state_scorer", lambda predictor: None)
    slow = io.StringIO()
    tagging.tag_stream(pred, io.BytesIO(text.encode()), "t.txt", slow, chunk_bytes=200)
    assert slow.getvalue() == out.getvalue()

