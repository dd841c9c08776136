"""Loaders: every dataset in ../shared/data against the counts in its README (skipped when the folder is absent),
malformed files written to tmp_path (the error names file and line), gzip transparency, BOM / CRLF / U+3000."""
import gzip
import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from mmprog.datasets import (SequenceDataset, load_conll, load_conllu, load_conllx, load_malt_tab, load_ocr,
                             load_sighan, load_sighan_raw, load_tsv, load_word_list, tags_to_words, words_to_tags,
                             write_tsv)
from mmprog.datasets.registry import default_data_root
from mmprog.exceptions import DataError

DATA = Path(os.environ.get("MMPROG_DATA") or default_data_root())


def need(*parts):
    p = DATA.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"shared data absent: {p}")
    return p


def raises_at(fn, path, line, *more):
    with pytest.raises(DataError) as info:
        fn()
    msg = str(info.value)
    assert "\n" not in msg, msg
    where = f"{path}:{line}" if line is not None else str(path)
    assert where in msg, (where, msg)
    for s in more:
        assert s in msg, (s, msg)
    return msg


def write(path, text, gz=False, encoding="utf-8"):
    data = text.encode(encoding) if isinstance(text, str) else text
    if gz:
        data = gzip.compress(data)
    Path(path).write_bytes(data)
    return Path(path)


# ---------------------------------------------------------------------------------------------- OCR
WORDS_PER_FOLD = [626, 704, 684, 698, 693, 651, 739, 717, 690, 675]
LETTERS_PER_FOLD = [4617, 5375, 5110, 5353, 5270, 5001, 5583, 5370, 5331, 5142]


@pytest.fixture(scope="module")
def ocr_npz():
    return load_ocr(need("ocr_letters", "letters.npz"))


@pytest.fixture(scope="module")
def ocr_tsv():
    return load_ocr(need("ocr_letters", "letter.tsv.gz"))


@pytest.mark.parametrize("which", ["ocr_npz", "ocr_tsv"])
def test_ocr_counts(which, request):
    ds = request.getfixturevalue(which)
    assert isinstance(ds, SequenceDataset) and len(ds) == 6877 and ds.n_tokens == 52152
    assert ds.n_features == 128 and ds.n_labels == 26 and ds.label_names == list("abcdefghijklmnopqrstuvwxyz")
    assert list(np.bincount(ds.fold_ids)) == WORDS_PER_FOLD
    assert list(np.bincount(ds.fold_ids, weights=ds.lengths).astype(int)) == LETTERS_PER_FOLD
    assert sorted(set(ds.lengths.tolist())) == [3] + list(range(5, 15))
    assert set(np.concatenate(ds.Y).tolist()) == set(range(26))
    assert all(x.dtype == np.float64 and set(np.unique(x)) <= {0.0, 1.0} for x in ds.X[:200])
    assert len(ds.folds()) == 10


def test_ocr_formats_agree_and_words_match(ocr_npz, ocr_tsv):
    # two independent parsers of two files must give the same data set
    assert (ocr_npz.lengths == ocr_tsv.lengths).all() and (ocr_npz.fold_ids == ocr_tsv.fold_ids).all()
    assert all((a == b).all() for a, b in zip(ocr_npz.Y, ocr_tsv.Y))
    assert all((a == b).all() for a, b in zip(ocr_npz.X, ocr_tsv.X))
    # README: every stored word string equals its label sequence (read the npz directly, not via the loader)
    words = np.load(need("ocr_letters", "letters.npz"), allow_pickle=False)["word"]
    assert ["".join(ocr_npz.label_names[k] for k in y) for y in ocr_npz.Y] == list(words)
    assert len(set(words)) == 55


def test_ocr_pixels_row_major(ocr_npz):
    z = np.load(need("ocr_letters", "letters.npz"), allow_pickle=False)
    assert (ocr_npz.X[5][2] == z["pixels"][z["word_start"][5] + 2]).all()
    assert ocr_npz.feature_names[8] == "p_1_0"  # 16 rows of 8: pixel 8 starts row 1


OCR_LINE = "{id}\t{letter}\t{nxt}\t{word}\t{pos}\t{fold}\t" + "\t".join(["0"] * 127) + "\t1"


def ocr_lines(rows):
    return "\n".join(OCR_LINE.format(id=i + 1, letter=l, nxt=n, word=w, pos=p, fold=f)
                     for i, (l, n, w, p, f) in enumerate(rows)) + "\n"


GOOD_OCR = [("a", 2, 1, 1, 3), ("b", -1, 1, 2, 3), ("c", -1, 2, 1, 0)]


def test_ocr_tsv_small_and_trailing_tab(tmp_path):
    text = ocr_lines(GOOD_OCR).replace("\n", "\t\n")  # the original letter.data ends lines with a tab
    ds = load_ocr(write(tmp_path / "letter.data", text))
    assert list(ds.lengths) == [2, 1] and list(ds.fold_ids) == [3, 0] and [list(y) for y in ds.Y] == [[0, 1], [2]]
    assert ds.X[0][0, 127] == 1.0 and ds.X[0][0].sum() == 1.0


def test_ocr_tsv_bad_pixel(tmp_path):
    text = ocr_lines(GOOD_OCR).splitlines()
    text[1] = text[1][:-1] + "7"
    p = write(tmp_path / "l.tsv", "\n".join(text) + "\n")
    raises_at(lambda: load_ocr(p), p, 2, "p_15_7")


def test_ocr_tsv_fold_changes_inside_word(tmp_path):
    rows = list(GOOD_OCR)
    rows[1] = ("b", -1, 1, 2, 4)
    p = write(tmp_path / "l.tsv", ocr_lines(rows))
    raises_at(lambda: load_ocr(p), p, 2, "fold 4")


def test_ocr_tsv_wrong_columns(tmp_path):
    p = write(tmp_path / "l.tsv", "1\ta\t-1\t1\t1\t0\t0\t1\n")
    raises_at(lambda: load_ocr(p), p, 1, "columns")


def test_ocr_tsv_unfinished_word(tmp_path):
    rows = [("a", 2, 1, 1, 0)]
    p = write(tmp_path / "l.tsv", ocr_lines(rows))
    raises_at(lambda: load_ocr(p), p, 1, "ends inside word")


def test_ocr_npz_missing_array(tmp_path):
    p = tmp_path / "bad.npz"
    np.savez(p, pixels=np.zeros((3, 128), np.uint8), labels=np.zeros(3, np.int8))
    raises_at(lambda: load_ocr(p), p, None, "'word_start'")


def test_ocr_npz_small_and_gzipped(tmp_path):
    p = tmp_path / "l.npz"
    np.savez(p, pixels=np.eye(3, 128, dtype=np.uint8), labels=np.array([0, 1, 2], np.int8),
             word_start=np.array([0, 1, 3], np.int32), word_fold=np.array([5, 6], np.int8))
    a = load_ocr(p)
    b = load_ocr(write(tmp_path / "l.npz.gz", p.read_bytes(), gz=True))
    for ds in (a, b):
        assert list(ds.lengths) == [1, 2] and list(ds.fold_ids) == [5, 6] and list(ds.Y[1]) == [1, 2]


# ---------------------------------------------------------------------------------------------- CoNLL
CONLL = {
    ("conll2000", "train.txt.gz"): (8936, 211727),
    ("conll2000", "test.txt.gz"): (2012, 47377),
    ("conll2002", "esp.train.gz"): (8323, 264715),
    ("conll2002", "esp.testa.gz"): (1915, 52923),
    ("conll2002", "esp.testb.gz"): (1517, 51533),
}


@pytest.fixture(scope="module")
def conll_corpora():
    out = {}
    for (folder, f) in CONLL:
        p = DATA / folder / f
        if p.exists():
            cols = ("form", "pos", "ne") if folder == "conll2002" else ("form", "pos", "chunk")
            out[(folder, f)] = load_conll(p, columns=cols)
    return out


@pytest.mark.parametrize("key", list(CONLL))
def test_conll_counts(key, conll_corpora):
    need(*key)
    c = conll_corpora[key]
    n_sent, n_tok = CONLL[key]
    assert len(c) == n_sent and c.n_tokens == n_tok
    assert c.columns == ("form", "pos") and all(len(s["pos"]) == len(lab) for s, lab in zip(c.sentences, c.labels))
    labels = c.label_set()
    assert all(lab == "O" or lab[:2] in ("B-", "I-") for lab in labels)
    if key[0] == "conll2002":
        assert labels == ["B-LOC", "B-MISC", "B-ORG", "B-PER", "I-LOC", "I-MISC", "I-ORG", "I-PER", "O"]
        assert c.label_column == "ne"
    elif key[1] == "train.txt.gz":
        assert len({lab[2:] for lab in labels if lab != "O"}) == 11  # 11 chunk types plus O


def test_conll_first_tokens(conll_corpora):
    need("conll2002", "esp.train.gz")
    s, lab = conll_corpora[("conll2002", "esp.train.gz")][0]
    assert s["form"][:3] == ["Melbourne", "(", "Australia"] and s["pos"][:2] == ["NP", "Fpa"]
    assert lab[:3] == ["B-LOC", "O", "B-LOC"]


def test_conll_small_docstart_tabs_and_gzip(tmp_path):
    text = "-DOCSTART- -X- O\n\nEl DA O\nRey NC B-PER\n\n\nsí\tRG\tO\n"
    a = load_conll(write(tmp_path / "a.txt", text), columns=("form", "pos", "ne"))
    b = load_conll(write(tmp_path / "a.bin", text, gz=True), columns=("form", "pos", "ne"))
    for c in (a, b):
        assert [s["form"] for s in c.sentences] == [["El", "Rey"], ["sí"]]
        assert c.labels == [["O", "B-PER"], ["O"]] and list(c.source_lines) == [3, 7]
    c = load_conll(tmp_path / "a.txt", columns=("form", "pos", "ne"), label_column="pos")
    assert c.columns == ("form", "ne") and c.labels[0] == ["DA", "NC"]


def test_conll_wrong_field_count(tmp_path):
    p = write(tmp_path / "bad.txt", "a DT B-NP\nb NN\n")
    raises_at(lambda: load_conll(p), p, 2, "2 fields, expected 3")


def test_conll_bad_encoding(tmp_path):
    p = write(tmp_path / "latin.txt", "a DT O\nsí RG O\n", encoding="latin-1")
    raises_at(lambda: load_conll(p), p, 2, "utf-8", "encoding")
    assert load_conll(p, encoding="latin-1").sentences[0]["form"] == ["a", "sí"]


def test_conll_bad_label_column(tmp_path):
    p = write(tmp_path / "a.txt", "a DT O\n")
    raises_at(lambda: load_conll(p, label_column="ner"), p, None, "label_column")


def test_truncated_gzip(tmp_path):
    good = gzip.compress(("a DT O\n" * 2000).encode())
    p = write(tmp_path / "cut.gz", good[: len(good) // 2])
    raises_at(lambda: load_conll(p), p, None, "gzip")


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        load_conll(tmp_path / "nope.txt")


# ---------------------------------------------------------------------------------------------- treebanks
UD = {
    ("v1.0-pre_2015-01-05", "sv-ud-train.conll.gz"): (4287, 65893, 44, 1),
    ("v1.0-pre_2015-01-05", "sv-ud-dev.conll.gz"): (497, 9558, 8, 1),
    ("v1.0-pre_2015-01-05", "sv-ud-test.conll.gz"): (1215, 20259, 13, 0),
    ("master_2025-12-10", "sv_talbanken-ud-dev.conllu.gz"): (504, 9797, 24, 0),
    ("master_2025-12-10", "sv_talbanken-ud-test.conllu.gz"): (1219, 20377, 25, 0),
}


@pytest.fixture(scope="module")
def ud_banks():
    out = {}
    for key in UD:
        p = DATA / "ud_swedish_talbanken" / key[0] / key[1]
        if p.exists():
            out[key] = (load_conllx if p.name.endswith(".conll.gz") else load_conllu)(p)
    return out


@pytest.mark.parametrize("key", list(UD))
def test_ud_counts(key, ud_banks):
    need("ud_swedish_talbanken", *key)
    ds = ud_banks[key]
    n_sent, n_words, n_nonproj, n_two_roots = UD[key]
    assert len(ds) == n_sent and ds.n_tokens == n_words
    assert int((~ds.projective()).sum()) == n_nonproj
    assert sum(int((h == 0).sum()) > 1 for h in ds.heads) == n_two_roots
    assert ds.columns == ["form", "lemma", "cpos", "pos", "feats", "deprel"]
    if key[0].startswith("v1.0"):
        assert all(set(s["lemma"]) == {"_"} for s in ds.sentences[:50])  # README: no lemmas


def test_ud_first_sentence(ud_banks):
    need("ud_swedish_talbanken", "v1.0-pre_2015-01-05", "sv-ud-dev.conll.gz")
    s, h = ud_banks[("v1.0-pre_2015-01-05", "sv-ud-dev.conll.gz")][0]
    assert s["form"][:3] == ["Kibbutzgrundarna", "kom", "från"] and list(h[:3]) == [2, 0, 5]
    assert s["cpos"][0] == "NOUN" and s["pos"][0] == "NN|UTR|PLU|DEF|NOM" and s["deprel"][1] == "root"


def test_ud_pre_release_same_with_either_reader(ud_banks):
    p = need("ud_swedish_talbanken", "v1.0-pre_2015-01-05", "sv-ud-dev.conll.gz")
    a, b = ud_banks[("v1.0-pre_2015-01-05", "sv-ud-dev.conll.gz")], load_conllu(p)
    assert a.sentences == b.sentences and all((x == y).all() for x, y in zip(a.heads, b.heads))


def test_conllx_rejects_empty_nodes_of_master():
    p = need("ud_swedish_talbanken", "master_2025-12-10", "sv_talbanken-ud-dev.conllu.gz")
    raises_at(lambda: load_conllx(p), p, 4886, "'19.1'", "load_conllu")


def test_ptb_dependency_sample():
    p = need("ptb_dependency_sample_nltk", "wsj_0001-0199.dp.gz")
    ds = load_malt_tab(p)
    assert len(ds) == 3914 and ds.n_tokens == 94084
    assert all(int((h == 0).sum()) == 1 for h in ds.heads)  # exactly one root each
    assert ds.projective().all()
    counts = [int(line.split("\t")[1]) for line in
              (DATA / "ptb_dependency_sample_nltk" / "file_sentence_counts.tsv").read_text().splitlines()[1:]]
    assert len(counts) == 199 and sum(counts) == len(ds)
    s, h = ds[0]
    assert s["form"][:2] == ["Pierre", "Vinken"] and s["pos"][:2] == ["NNP", "NNP"] and list(h[:3]) == [2, 8, 2]
    assert s["cpos"] == s["pos"] and set(s["lemma"]) == {"_"}


CONLLU_OK = """# sent_id = 1
# text = Det är bra.
1-2\tDet's\t_\t_\t_\t_\t_\t_\t_\t_
1\tDet\tden\tPRON\tPN\t_\t3\tnsubj\t_\t_
2\tär\tvara\tAUX\tVB\t_\t3\tcop\t_\t_
2.1\tx\tx\tX\t_\t_\t_\t_\t3:dep\t_
3\tbra\tbra\tADJ\t_\t_\t0\troot\t_\t_

1\tJa\tja\tINTJ\tIN\t_\t0\troot\t_\t_
"""


def test_conllu_small_skips_multiword_and_empty(tmp_path):
    for gz in (False, True):
        ds = load_conllu(write(tmp_path / f"a{gz}.conllu", CONLLU_OK, gz=gz))
        assert len(ds) == 2 and list(ds.lengths) == [3, 1]
        assert ds.sentences[0]["form"] == ["Det", "är", "bra"] and list(ds.heads[0]) == [3, 3, 0]
        assert ds.sentences[0]["pos"] == ["PN", "VB", "ADJ"]  # XPOS, falling back to UPOS when '_'


def test_conllu_crlf_and_bom(tmp_path):
    text = "\ufeff" + CONLLU_OK.replace("\n", "\r\n")
    ds = load_conllu(write(tmp_path / "crlf.conllu", text))
    assert ds.sentences[1]["form"] == ["Ja"] and ds.sentences[0]["deprel"] == ["nsubj", "cop", "root"]


@pytest.mark.parametrize("bad_line, line, needle", [
    ("3\tbra\tbra\tADJ\t_\t_\tx\troot\t_\t_", 7, "HEAD 'x'"),
    ("4\tbra\tbra\tADJ\t_\t_\t0\troot\t_\t_", 7, "token ID 4 out of sequence"),
    ("3\tbra\tbra\tADJ\t_\t_\t0\troot", 7, "8 tab-separated fields"),
    ("a\tbra\tbra\tADJ\t_\t_\t0\troot\t_\t_", 7, "ID 'a'"),
])
def test_conllu_malformed_line(tmp_path, bad_line, line, needle):
    text = CONLLU_OK.replace("3\tbra\tbra\tADJ\t_\t_\t0\troot\t_\t_", bad_line)
    p = write(tmp_path / "bad.conllu", text)
    raises_at(lambda: load_conllu(p), p, line, needle)


def test_conllu_cycle_names_sentence_line(tmp_path):
    text = CONLLU_OK.replace("3\tbra\tbra\tADJ\t_\t_\t0\troot", "3\tbra\tbra\tADJ\t_\t_\t1\troot")
    p = write(tmp_path / "cyc.conllu", text)
    raises_at(lambda: load_conllu(p), p, 3, "sentence 0", "no token has head 0")
    text = CONLLU_OK.replace("1\tDet\tden\tPRON\tPN\t_\t3", "1\tDet\tden\tPRON\tPN\t_\t2").replace(
        "2\tär\tvara\tAUX\tVB\t_\t3", "2\tär\tvara\tAUX\tVB\t_\t1")
    p = write(tmp_path / "cyc2.conllu", text)
    raises_at(lambda: load_conllu(p), p, 3, "cycle (1 -> 2 -> 1")


def test_conllx_rejects_multiword(tmp_path):
    p = write(tmp_path / "a.conll", CONLLU_OK)
    raises_at(lambda: load_conllx(p), p, 3, "'1-2'", "load_conllu")


def test_malt_malformed(tmp_path):
    p = write(tmp_path / "a.dp", "Pierre\tNNP\t2\nVinken\tNNP\tx\n")
    raises_at(lambda: load_malt_tab(p), p, 2, "head 'x'")
    p = write(tmp_path / "b.dp", "Pierre\tNNP\t2\tnn\nVinken\tNNP\n")
    raises_at(lambda: load_malt_tab(p), p, 2, "2 tab-separated fields")
    p = write(tmp_path / "c.dp", "a\tDT\t0\n\nb\tNN\t2\nc\tNN\t1\nd\tVB\t0\n")
    raises_at(lambda: load_malt_tab(p), p, 3, "sentence 1", "cycle")


def test_malt_with_relations(tmp_path):
    ds = load_malt_tab(write(tmp_path / "a.dp", "a\tDT\t2\tdet\nb\tNN\t0\tROOT\n"))
    assert ds.sentences[0]["deprel"] == ["det", "ROOT"] and list(ds.heads[0]) == [2, 0]


# ---------------------------------------------------------------------------------------------- SIGHAN
SIGHAN = {
    "pku": (1944, 104372, 172733, 55303),
    "cityu": (1492, 40936, 67689, 69085),
}


def gold_words(corpus):
    """Words of a gold file read directly (independently of the loader): one sentence per non-blank line."""
    path = DATA / "sighan2005_icwb2" / "gold" / f"{corpus}_test_gold.utf8.gz"
    with gzip.open(path, "rt", encoding="utf-8-sig") as fh:
        return [line.split() for line in fh if line.split()]


@pytest.fixture(scope="module")
def sighan():
    out = {}
    for corpus in SIGHAN:
        g = DATA / "sighan2005_icwb2" / "gold" / f"{corpus}_test_gold.utf8.gz"
        r = DATA / "sighan2005_icwb2" / "testing" / f"{corpus}_test.utf8.gz"
        if g.exists() and r.exists():
            out[corpus] = (load_sighan(g), load_sighan_raw(r))
    return out


@pytest.mark.parametrize("corpus", list(SIGHAN))
def test_sighan_counts(corpus, sighan):
    need("sighan2005_icwb2", "gold", f"{corpus}_test_gold.utf8.gz")
    gold, raw = sighan[corpus]
    n_sent, n_words, n_chars, n_vocab = SIGHAN[corpus]
    words = gold_words(corpus)
    assert len(gold) == len(words) == n_sent and sum(map(len, words)) == n_words and gold.n_tokens == n_chars
    assert [s["char"] for s in gold.sentences] == [list("".join(ws)) for ws in words]
    assert len(raw) == n_sent and raw.n_tokens == n_chars and raw.labels is None
    # README: the raw test file has the gold file's characters, line by line
    assert [s["char"] for s in raw.sentences] == [s["char"] for s in gold.sentences]
    assert (raw.source_lines == gold.source_lines).all()
    assert gold.label_set() == ["B", "E", "I", "S"]
    assert all(len(c) == 1 for s in gold.sentences[:100] for c in s["char"])
    assert "\ufeff" not in gold.sentences[0]["char"] and "\r" not in gold.sentences[0]["char"]
    vocab = load_word_list(need("sighan2005_icwb2", "gold", f"{corpus}_training_words.utf8.gz"))
    assert len(vocab) == n_vocab


@pytest.mark.parametrize("corpus", list(SIGHAN))
@pytest.mark.parametrize("tagset", ["BIES", "BIE"])
def test_sighan_tags_recover_words(corpus, tagset, sighan):
    need("sighan2005_icwb2", "gold", f"{corpus}_test_gold.utf8.gz")
    gold = sighan[corpus][0] if tagset == "BIES" else load_sighan(
        need("sighan2005_icwb2", "gold", f"{corpus}_test_gold.utf8.gz"), tagset=tagset)
    for s, lab, ws in zip(gold.sentences, gold.labels, gold_words(corpus)):
        assert lab == words_to_tags(ws, tagset) and set(lab) <= set(tagset)
        assert tags_to_words(s["char"], lab, tagset) == ws


def test_sighan_bom_crlf_ideographic_space(tmp_path):
    text = "\ufeff共同  创造\u3000美好\r\n\r\n的 新\r\n"
    for gz in (False, True):
        c = load_sighan(write(tmp_path / f"g{gz}.utf8", text, gz=gz))
        assert [tags_to_words(s["char"], lab) for s, lab in zip(c.sentences, c.labels)] == [
            ["共同", "创造", "美好"], ["的", "新"]]
        assert c.labels == [["B", "E", "B", "E", "B", "E"], ["S", "S"]] and list(c.source_lines) == [1, 3]
        c = load_sighan(tmp_path / f"g{gz}.utf8", tagset="BIE")
        assert c.labels[1] == ["B", "B"]
    raw = load_sighan_raw(write(tmp_path / "r.utf8", "\ufeff共同 创造\r\n"))
    assert raw.sentences == [{"char": list("共同创造")}]


def test_sighan_bad_utf8(tmp_path):
    p = write(tmp_path / "bad.utf8", b"ok ok\r\n\xff\xfe bad\r\n")
    raises_at(lambda: load_sighan(p), p, 2, "utf-8")


def test_tags_to_words_lenient():
    assert tags_to_words("abcd", ["I", "E", "E", "B"]) == ["ab", "c", "d"]
    assert tags_to_words("abc", ["B", "I", "I"]) == ["abc"]


# ---------------------------------------------------------------------------------------------- TSV
def test_tsv_numeric_and_hidden(tmp_path):
    text = "# comment\nA\t1\t2.5\nB\t0\t-1e-3\n\n\n?\t3\t4\n# inner comment\nA 5 6\n"
    ds = load_tsv(write(tmp_path / "n.tsv", text))
    assert not ds.is_sparse and ds.label_names == ["A", "B"] and list(ds.lengths) == [2, 2]
    assert np.array_equal(ds.X[0], [[1, 2.5], [0, -1e-3]]) and list(ds.Y[1]) == [-1, 0]
    assert ds.info["kind"] == "numeric"


def test_tsv_strings_groups(tmp_path):
    text = "O\tw=the\tp=DT\nB\tw=cat\tw=cat\tbare\n\nO\tw=the\n"
    ds = load_tsv(write(tmp_path / "s.tsv", text, gz=True))
    assert ds.is_sparse and ds.feature_names == ["w=the", "p=DT", "w=cat", "bare"]
    assert ds.group_names == ["w", "p", "x"] and list(ds.groups) == [0, 1, 0, 2]
    assert np.array_equal(ds.X[0].toarray(), [[1, 1, 0, 0], [0, 0, 2, 1]])
    test = load_tsv(write(tmp_path / "t.tsv", "B\tw=dog\tw=the\n"), feature_names=ds.feature_names,
                    label_names=ds.label_names)
    assert np.array_equal(test.X[0].toarray(), [[1, 0, 0, 0]]) and list(test.Y[0]) == [0]


def test_tsv_numeric_width_mismatch(tmp_path):
    p = write(tmp_path / "w.tsv", "A\t1\t2\nA\t1\n")
    raises_at(lambda: load_tsv(p), p, 2, "1 feature values", "2")


def test_tsv_forced_numeric_bad_value(tmp_path):
    p = write(tmp_path / "v.tsv", "A\t1\t2\n\nA\t1\tx2\n")
    raises_at(lambda: load_tsv(p, kind="numeric"), p, 3, "'x2'")
    assert load_tsv(p).info["kind"] == "strings"


def test_tsv_unknown_label(tmp_path):
    p = write(tmp_path / "l.tsv", "A\t1\nC\t2\n")
    raises_at(lambda: load_tsv(p, label_names=["A", "B"]), p, 2, "'C'")


def test_tsv_nonfinite(tmp_path):
    p = write(tmp_path / "f.tsv", "A\t1\nA\tnan\n")
    raises_at(lambda: load_tsv(p), p, 2, "finite")


def test_tsv_roundtrip_dense(tmp_path):
    rng = np.random.default_rng(0)
    X = [rng.standard_normal((t, 3)) for t in (2, 4, 1)]
    Y = [np.array([0, -1]), np.array([1, 2, 0, 0]), np.array([2])]
    ds = SequenceDataset(X, Y, 3, label_names=["x", "y", "z"], name="rt")
    write_tsv(ds, tmp_path / "rt.tsv")
    back = load_tsv(tmp_path / "rt.tsv", label_names=ds.label_names)
    assert all(np.array_equal(a, b) for a, b in zip(ds.X, back.X))  # exact floats
    assert all(np.array_equal(a, b) for a, b in zip(ds.Y, back.Y))


def test_tsv_roundtrip_sparse_numeric_looking_names(tmp_path):
    X = [sp.csr_matrix(np.array([[1, 0, 2], [0, 1, 0]], dtype=float)), sp.csr_matrix(np.array([[0, 0, 1.0]]))]
    ds = SequenceDataset(X, [np.array([0, 1]), np.array([1])], 2, feature_names=["1", "2", "3"])
    write_tsv(ds, tmp_path / "sp.tsv")
    back = load_tsv(tmp_path / "sp.tsv", label_names=["0", "1"])  # '# kind=strings' wins over the numbers
    assert back.is_sparse and back.feature_names == ["1", "3", "2"]
    order = [back.feature_names.index(s) for s in ds.feature_names]
    assert all(np.array_equal(a.toarray(), b.toarray()[:, order]) for a, b in zip(ds.X, back.X))


def test_write_tsv_failure_leaves_target_untouched(tmp_path):
    target = write(tmp_path / "keep.tsv", "A\t1\n")
    X = [sp.csr_matrix(np.array([[0.5, 0.0]]))]
    ds = SequenceDataset(X, [np.array([0])], 1, feature_names=["a", "b"])
    with pytest.raises(DataError, match="integer counts"):
        write_tsv(ds, target)
    assert target.read_text() == "A\t1\n" and sorted(q.name for q in tmp_path.iterdir()) == ["keep.tsv"]
