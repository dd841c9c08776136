"""Metrics against independent computations: seqeval for chunks, hand-worked cases for segmentation and attachment,
plain Python loops for token/sequence error."""
import gzip
from pathlib import Path

import numpy as np
import pytest
from seqeval.metrics.sequence_labeling import precision_recall_fscore_support as seqeval_prfs
from seqeval.metrics.sequence_labeling import get_entities

from mmprog.exceptions import DataError
from mmprog.metrics import (PUNCT_TAGS, attachment_scores, chunk_prf, chunks, is_punct, segmentation_prf,
                            sequence_error, tags_to_words, token_error)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


# ---------------------------------------------------------------------------------------------------- token / sequence

def test_token_and_sequence_error_against_loops():
    rng = np.random.default_rng(0)
    Y_true, Y_pred = [], []
    for _ in range(200):
        T = rng.integers(1, 12)
        t = rng.integers(0, 4, T)
        t[rng.random(T) < 0.2] = -1            # hidden labels are ignored
        p = np.where(rng.random(T) < 0.8, t, rng.integers(0, 4, T))
        p = np.where(p < 0, 0, p)
        Y_true.append(t)
        Y_pred.append(np.concatenate([p, -np.ones(3, int)]))   # padded predictions are allowed
    n_obs = n_wrong = n_bad_seq = 0
    for t, p in zip(Y_true, Y_pred):
        bad = False
        for a, b in zip(t, p):
            if a >= 0:
                n_obs += 1
                if a != b:
                    n_wrong += 1
                    bad = True
        n_bad_seq += bad
    assert token_error(Y_true, Y_pred) == pytest.approx(n_wrong / n_obs)
    assert sequence_error(Y_true, Y_pred) == pytest.approx(n_bad_seq / len(Y_true))


def test_token_error_hand_case_and_errors():
    Y_true = [np.array([0, 1, -1]), np.array([2, 2])]
    Y_pred = [np.array([0, 0, 1]), np.array([2, 2])]
    assert token_error(Y_true, Y_pred) == pytest.approx(1 / 4)
    assert sequence_error(Y_true, Y_pred) == pytest.approx(1 / 2)
    with pytest.raises(DataError, match="sequences"):
        token_error(Y_true, Y_pred[:1])
    with pytest.raises(DataError, match="sequence 1"):
        token_error(Y_true, [Y_pred[0], np.array([2])])


# ---------------------------------------------------------------------------------------------------- chunks

def _compare_with_seqeval(true, pred):
    ours = chunk_prf(true, pred)
    p, r, f, s = seqeval_prfs(true, pred, average="micro", zero_division=0)
    assert ours.precision == pytest.approx(p)
    assert ours.recall == pytest.approx(r)
    assert ours.f1 == pytest.approx(f)
    assert ours.n_true == s
    # per type (seqeval sorts type names too)
    types = sorted({e[0] for e in get_entities(true)} | {e[0] for e in get_entities(pred)})
    pt, rt, ft, st = seqeval_prfs(true, pred, average=None, zero_division=0)
    assert sorted(ours.per_type) == types
    for k, name in enumerate(types):
        assert ours.per_type[name].precision == pytest.approx(pt[k])
        assert ours.per_type[name].recall == pytest.approx(rt[k])
        assert ours.per_type[name].f1 == pytest.approx(ft[k])
        assert ours.per_type[name].support == st[k]
    return ours


def _entities_by_sentence(seqs):
    """seqeval's chunks of each sentence separately, as (type, sentence, start, end)."""
    out = set()
    for i, s in enumerate(seqs):
        out |= {(t, i, a, b) for t, a, b in get_entities(list(s))}
    return out


@pytest.mark.parametrize("scheme", ["bio", "iob1", "iobes", "garbage"])
def test_chunk_prf_random_against_seqeval(scheme):
    rng = np.random.default_rng({"bio": 1, "iob1": 2, "iobes": 3, "garbage": 4}[scheme])
    types = ["PER", "LOC", "ORG", "MISC"]
    prefixes = {"bio": "BI", "iob1": "BI", "iobes": "BIES", "garbage": "BIES"}[scheme]

    def well_formed_bio(T, iob1):
        out, t = [], 0
        while t < T:
            if rng.random() < 0.5:
                out.append("O")
                t += 1
                continue
            ty = types[rng.integers(4)]
            L = min(int(rng.integers(1, 4)), T - t)
            # IOB1: B only when the previous chunk has the same type and touches this one
            first = "B" if not iob1 or (out and out[-1] != "O" and out[-1][2:] == ty) else "I"
            out += [f"{first}-{ty}"] + [f"I-{ty}"] * (L - 1)
            t += L
        return out

    def random_tags(T):
        if scheme in ("bio", "iob1"):
            return well_formed_bio(T, scheme == "iob1")
        # IOBES-style and arbitrary (ill-formed) sequences exercise every start/end rule
        return ["O" if rng.random() < 0.3 else f"{prefixes[rng.integers(len(prefixes))]}-{types[rng.integers(4)]}"
                for _ in range(T)]

    for _ in range(20):
        true = [random_tags(int(rng.integers(1, 15))) for _ in range(30)]
        pred = []
        for s in true:
            q = list(s)
            for k in range(len(q)):
                if rng.random() < 0.25:
                    q[k] = "O" if rng.random() < 0.3 else \
                        f"{prefixes[rng.integers(len(prefixes))]}-{types[rng.integers(4)]}"
            pred.append(q)
        _compare_with_seqeval(true, pred)
        assert chunks(true) == _entities_by_sentence(true)
        assert chunks(pred) == _entities_by_sentence(pred)


def test_chunk_prf_hand_case_and_int_labels():
    true = [["B-PER", "I-PER", "O", "B-LOC"], ["O", "B-ORG"]]
    pred = [["B-PER", "I-PER", "O", "B-ORG"], ["O", "I-ORG"]]   # I-ORG after O opens an ORG chunk
    s = chunk_prf(true, pred)
    # true chunks: PER(0-1), LOC(3), ORG(s1,1); predicted: PER(0-1), ORG(3), ORG(s1,1); correct: PER, ORG(s1)
    assert (s.n_true, s.n_pred, s.n_correct) == (3, 3, 2)
    assert s.f1 == pytest.approx(2 / 3)
    assert s.per_type["LOC"].recall == 0.0 and s.per_type["ORG"].precision == pytest.approx(0.5)
    names = ["O", "B-PER", "I-PER", "B-LOC", "B-ORG", "I-ORG"]
    to_int = lambda seqs: [np.array([names.index(t) for t in q]) for q in seqs]   # noqa: E731
    s2 = chunk_prf(to_int(true), to_int(pred), label_names=names)
    assert (s2.precision, s2.recall, s2.f1) == (s.precision, s.recall, s.f1)
    with pytest.raises(DataError, match="sentence 1"):
        chunk_prf(true, [pred[0], ["O"]])


def _read_columns(path):
    sents, cur = [], []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                if cur:
                    sents.append(cur)
                cur = []
            else:
                cur.append(line.split()[-1])
    if cur:
        sents.append(cur)
    return sents


@pytest.mark.parametrize("name", ["conll2002/esp.testa.gz", "conll2000/test.txt.gz"])
def test_chunk_prf_real_tags_against_seqeval(name):
    path = DATA / name
    if not path.exists():
        pytest.skip(f"{path} not available")
    true = _read_columns(path)
    rng = np.random.default_rng(5)
    tagset = sorted({t for s in true for t in s})
    # real-looking predictions: the gold tags with 5% of tokens replaced, which leaves ill-formed I- tags too
    pred = [[tagset[rng.integers(len(tagset))] if rng.random() < 0.05 else t for t in s] for s in true]
    ours = _compare_with_seqeval(true, pred)
    assert 0.5 < ours.f1 < 1.0
    assert chunk_prf(true, true).f1 == 1.0


# ---------------------------------------------------------------------------------------------------- segmentation

def test_segmentation_hand_case():
    gold = [["我", "爱", "北京", "天安门"], "他  来了"]          # a SIGHAN gold line is accepted as a string
    pred = [["我爱", "北京", "天", "安门"], ["他", "来了"]]
    # chars 我0 爱1 北2 京3 天4 安5 门6: gold spans (0,1)(1,2)(2,4)(4,7), predicted (0,2)(2,4)(4,5)(5,7): 1 correct;
    # sentence 2: both words correct. 6 gold, 6 predicted, 3 correct.
    vocab = {"我", "爱", "北京", "他"}
    s = segmentation_prf(gold, pred, train_vocab=vocab)
    assert (s.n_gold, s.n_pred, s.n_correct) == (6, 6, 3)
    assert s.precision == pytest.approx(0.5) and s.recall == pytest.approx(0.5) and s.f1 == pytest.approx(0.5)
    # IV gold words 我 爱 北京 他, of which 北京 and 他 are found; OOV 天安门 (missed) and 来了 (found)
    assert s.r_iv == pytest.approx(2 / 4)
    assert s.r_oov == pytest.approx(1 / 2)
    assert s.oov_rate == pytest.approx(2 / 6)
    s2 = segmentation_prf(gold, pred)
    assert np.isnan(s2.r_iv) and np.isnan(s2.oov_rate)
    with pytest.raises(DataError, match="sentence 0"):
        segmentation_prf(gold, [["我", "爱"], ["他", "来了"]])


def test_segmentation_random_against_span_sets():
    rng = np.random.default_rng(7)
    alphabet = list("abcdefgh")
    gold, pred = [], []
    for _ in range(100):
        text = "".join(rng.choice(alphabet, int(rng.integers(1, 20))))

        def cut(s):
            pts = sorted(set(rng.integers(1, len(s), int(rng.integers(0, len(s)))).tolist())) if len(s) > 1 else []
            b = [0] + pts + [len(s)]
            return [s[x:y] for x, y in zip(b[:-1], b[1:])]
        gold.append(cut(text))
        pred.append(cut(text))
    vocab = {w for s in gold[:50] for w in s}
    n_correct = n_iv = n_iv_hit = 0
    for g, p in zip(gold, pred):
        spans = lambda ws: {(sum(map(len, ws[:k])), sum(map(len, ws[:k + 1]))) for k in range(len(ws))}  # noqa
        gs, ps = spans(g), spans(p)
        n_correct += len(gs & ps)
        for k, w in enumerate(g):
            sp = (sum(map(len, g[:k])), sum(map(len, g[:k + 1])))
            if w in vocab:
                n_iv += 1
                n_iv_hit += sp in ps
    s = segmentation_prf(gold, pred, vocab)
    assert s.n_correct == n_correct
    assert s.precision == pytest.approx(n_correct / sum(map(len, pred)))
    assert s.recall == pytest.approx(n_correct / sum(map(len, gold)))
    assert s.r_iv == pytest.approx(n_iv_hit / n_iv)


def test_tags_to_words():
    assert tags_to_words("我爱北京天安门", list("SSBEBIE")) == ["我", "爱", "北京", "天安门"]
    # Mao & Tsang's three-tag scheme: single-character words are B
    assert tags_to_words("我爱北京天安门", list("BBBEBIE")) == ["我", "爱", "北京", "天安门"]
    assert tags_to_words(["ab", "c"], ["B", "E"]) == ["abc"]
    assert tags_to_words("", []) == []
    # round trip from words through BIES tags on random segmentations
    rng = np.random.default_rng(3)
    for _ in range(50):
        words = ["".join(rng.choice(list("xyz"), int(rng.integers(1, 5)))) for _ in range(int(rng.integers(1, 8)))]
        tags = [t for w in words for t in (["S"] if len(w) == 1 else ["B"] + ["I"] * (len(w) - 2) + ["E"])]
        assert tags_to_words("".join(words), tags) == words
    with pytest.raises(DataError, match="'X'"):
        tags_to_words("ab", ["B", "X"])
    with pytest.raises(DataError, match="2 tags for 3"):
        tags_to_words("abc", ["B", "E"])


@pytest.mark.parametrize("corpus", ["pku", "cityu"])
def test_segmentation_real_gold_scores_itself(corpus):
    gold_path = DATA / "sighan2005_icwb2" / "gold" / f"{corpus}_test_gold.utf8.gz"
    vocab_path = DATA / "sighan2005_icwb2" / "gold" / f"{corpus}_training_words.utf8.gz"
    if not gold_path.exists() or not vocab_path.exists():
        pytest.skip(f"{gold_path} not available")
    with gzip.open(gold_path, "rt", encoding="utf-8-sig") as fh:
        gold = [line.split() for line in fh if line.strip()]
    with gzip.open(vocab_path, "rt", encoding="utf-8-sig") as fh:
        vocab = {line.strip() for line in fh if line.strip()}
    s = segmentation_prf(gold, gold, vocab)
    assert s.f1 == 1.0 and s.r_iv == 1.0
    assert s.n_gold == {"pku": 104372, "cityu": 40936}[corpus]   # the README's (official) word counts
    # a character-by-character segmentation finds exactly the single-character gold words
    chars = [list("".join(w)) for w in gold]
    s1 = segmentation_prf(gold, chars, vocab)
    n_single = sum(len(w) == 1 for ws in gold for w in ws)
    assert s1.n_correct == n_single


# ---------------------------------------------------------------------------------------------------- attachment

def test_attachment_hand_case():
    gold = [np.array([2, 3, 0, 3]), np.array([2, 0])]
    pos = [["DT", "NN", "VBD", "."], ["NNS", "VBP"]]
    pred = [np.array([2, 3, 0, 2]), np.array([0, 2])]
    # 6 tokens, 3 correct (the/cat/sat); without the '.', 5 tokens and 3 correct.
    # sentence 1 is complete apart from its punctuation, sentence 2 is all wrong.
    s = attachment_scores(gold, pred, pos=pos, punct_tags="ptb")
    assert s.uas == pytest.approx(3 / 6)
    assert s.uas_no_punct == pytest.approx(3 / 5)
    assert s.complete == 0.0
    assert s.complete_no_punct == pytest.approx(1 / 2)
    assert (s.n_tokens, s.n_tokens_no_punct, s.n_sentences) == (6, 5, 2)
    assert dict(s.items())["uas_no_punct"] == s.uas_no_punct and s.as_dict()["n_tokens"] == 6
    # decoder layout: (B, T_max + 1) with -1 at the root slot and -1 padding
    dec = np.array([[-1, 2, 3, 0, 2], [-1, 0, 2, -1, -1]])
    assert attachment_scores(gold, dec, pos=pos, punct_tags="ptb") == s
    s0 = attachment_scores(gold, pred)
    assert s0.uas == s.uas and np.isnan(s0.uas_no_punct)
    with pytest.raises(DataError, match="sentence 1"):
        attachment_scores(gold, [pred[0], np.array([0, 2, 1])])


def test_punctuation_tag_sets():
    assert is_punct(["PUNCT", "NOUN"], "ud").tolist() == [True, False]
    assert is_punct(["MAD", "MID", "PAD", "NN|UTR|SIN|IND|NOM", "PM|NOM"], "suc").tolist() == \
        [True, True, True, False, False]
    assert is_punct(["IP", "IK", "IM", "ID", "I?"], "talbanken05").tolist() == [True, True, False, False, True]
    assert is_punct(["``", "''", ",", ".", ":", "-LRB-", "$", "NN"]).tolist() == [True] * 5 + [False] * 3
    # the default union never flags a word tag of another tag set
    for words in (["NN", "IN", "VB", "JJ", "DT", "PRP$", "WP$"], ["NOUN", "VERB", "ADP", "SYM"],
                  ["NN", "VB", "PP", "AB", "PM"]):
        assert not is_punct(words).any()
    assert set(PUNCT_TAGS) == {"ptb", "ud", "suc", "talbanken05", "ddt"}
    with pytest.raises(DataError, match="punct_tags"):
        is_punct(["."], "nonsense")


def test_attachment_real_ptb_sample():
    path = DATA / "ptb_dependency_sample_nltk" / "wsj_0001-0199.dp.gz"
    if not path.exists():
        pytest.skip(f"{path} not available")
    heads, pos, cur_h, cur_p = [], [], [], []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            f = line.split()
            if not f:
                if cur_h:
                    heads.append(np.array(cur_h))
                    pos.append(cur_p)
                cur_h, cur_p = [], []
                continue
            cur_p.append(f[1])
            cur_h.append(int(f[2]))
    if cur_h:
        heads.append(np.array(cur_h))
        pos.append(cur_p)
    # left-branching baseline: every token's head is the next token, the last token the root
    pred = [np.append(np.arange(2, len(h) + 1), 0) for h in heads]
    s = attachment_scores(heads, pred, pos=pos, punct_tags="ptb")
    gold = np.concatenate(heads)
    p = np.concatenate(pred)
    punct = np.isin(np.concatenate([np.array(q) for q in pos]), ["``", "''", ",", ".", ":"])
    assert s.n_tokens == 94084
    assert s.uas == pytest.approx(np.mean(gold == p))
    assert s.uas_no_punct == pytest.approx(np.mean(gold[~punct] == p[~punct]))
    assert s.complete == pytest.approx(np.mean([np.array_equal(h, q) for h, q in zip(heads, pred)]))
