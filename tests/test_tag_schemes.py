"""IOBES training of chunk-tagged text (``tag_scheme="iobes"``): the conversions against a line-by-line port of
conlleval's chunk rules on every short sequence, and train → tag → evaluate → predict from the command line writing
the file's own encoding."""
import gzip
import itertools
import json
import random

import numpy as np
import pytest

from mmprog.cli import main
from mmprog.exceptions import ParameterError
from mmprog.metrics import chunk_prf, chunks
from mmprog.tag_schemes import (check_chunk_labels, check_tag_scheme, detect_file_scheme, from_iobes,
                                from_iobes_ids, to_iobes)

from test_tagging import _sentences, _write


# ------------------------------------------------------------------------------------------------ reference reading
def _split(tag):
    if tag == "O":
        return "O", ""
    head, _, typ = tag.partition("-")
    return head, typ


def _start_of_chunk(prev_tag, tag, prev_type, typ):
    # conlleval.pl's startOfChunk, as written there (without the [ ] . brackets, not used here)
    return (tag == "B" or tag == "S" or (prev_tag == "E" and tag in "EI") or (prev_tag == "S" and tag in "EI")
            or (prev_tag == "O" and tag in "EI") or (tag != "O" and prev_type != typ))


def _end_of_chunk(prev_tag, tag, prev_type, typ):
    # conlleval.pl's endOfChunk
    return (prev_tag == "E" or prev_tag == "S" or (prev_tag == "B" and tag in "BSO")
            or (prev_tag == "I" and tag in "BSO") or (prev_tag != "O" and prev_type != typ))


def ref_chunks(seq):
    """Chunks (type, start, end) of one sentence, token by token as conlleval reads them."""
    out, prev_tag, prev_type, begin = set(), "O", "", None
    for t, tag in enumerate(list(seq) + ["O"]):
        head, typ = _split(tag)
        if begin is not None and _end_of_chunk(prev_tag, head, prev_type, typ):
            out.add((prev_type, begin, t - 1))
            begin = None
        if _start_of_chunk(prev_tag, head, prev_type, typ):
            begin = t
        prev_tag, prev_type = head, typ
    return out


def valid(seq, scheme):
    """Well formed in the scheme: BIO (I only inside a chunk of its type), IOB1 (B only right after a chunk of
    its type), IOBES (B … E, S; I and E only after B/I of their type)."""
    prev = ("O", "")
    for tag in seq:
        head, typ = _split(tag)
        ph, pt = prev
        inside = ph in ("B", "I") and pt == typ
        if scheme == "bio" and head == "I" and not (ph in ("B", "I") and pt == typ):
            return False
        if scheme == "iob1" and head == "B" and not (ph in ("B", "I") and pt == typ):
            return False
        if scheme == "iobes":
            if head in ("I", "E") and not inside:
                return False
            if head in ("B", "S", "O") and ph in ("B", "I"):
                return False
        if scheme in ("bio", "iob1") and head not in ("O", "B", "I"):
            return False
        prev = (head, typ)
    return scheme != "iobes" or prev[0] not in ("B", "I")


def _all(labels, max_len=4):
    for n in range(1, max_len + 1):
        yield from itertools.product(labels, repeat=n)


BIO_LABELS = ["O", "B-X", "I-X", "B-Y", "I-Y"]
IOBES_LABELS = ["O"] + [f"{p}-{t}" for p in "BIES" for t in "XY"]


def test_reference_reads_as_metrics_chunks():
    """The port and mmprog.metrics.chunks agree on every IOBES-label sequence of length ≤ 4 (so both can be
    trusted as conlleval below)."""
    seqs = [list(s) for s in _all(IOBES_LABELS)]
    got = chunks(seqs)
    want = {(typ, i, a, b) for i, s in enumerate(seqs) for typ, a, b in ref_chunks(s)}
    assert got == want


def test_to_iobes_every_short_bio_or_iob1_sequence():
    """On every sequence over 2 types of length ≤ 4: IOBES keeps conlleval's chunks and is well formed; BIO →
    IOBES → BIO is the identity on well-formed BIO, IOB1 → IOBES → IOB1 on well-formed IOB1; ill-formed input
    (I-X after O) goes back to the chunks conlleval reads in it."""
    seqs = [list(s) for s in _all(BIO_LABELS)]
    conv = to_iobes(seqs)
    back_bio, back_iob1 = from_iobes(conv, "bio"), from_iobes(conv, "iob1")
    n_bio = n_iob1 = 0
    for s, e, b, b1 in zip(seqs, conv, back_bio, back_iob1):
        assert ref_chunks(e) == ref_chunks(s) == ref_chunks(b) == ref_chunks(b1), s
        assert valid(e, "iobes") and valid(b, "bio") and valid(b1, "iob1"), (s, e, b, b1)
        if valid(s, "bio"):
            n_bio += 1
            assert b == s
        if valid(s, "iob1"):
            n_iob1 += 1
            assert b1 == s
    assert n_bio > 100 and n_iob1 > 100


def test_from_iobes_every_short_sequence_even_ill_formed():
    """Every IOBES-label sequence of length ≤ 4 over 2 types (7,380 of them, most ill formed as a decoder may
    output them): the BIO / IOB1 written back is well formed and has exactly the chunks conlleval reads in the
    IOBES sequence; the flat int route of ``mmprog tag`` writes the same strings."""
    seqs = [list(s) for s in _all(IOBES_LABELS)]
    names = IOBES_LABELS
    index = {t: k for k, t in enumerate(names)}
    ids = np.array([index[t] for s in seqs for t in s])
    first = np.concatenate([[True] + [False] * (len(s) - 1) for s in seqs])
    for scheme in ("bio", "iob1"):
        back = from_iobes(seqs, scheme)
        for s, b in zip(seqs, back):
            assert len(b) == len(s) and valid(b, scheme) and ref_chunks(b) == ref_chunks(s), (scheme, s, b)
            if valid(s, "iobes"):
                assert to_iobes([b])[0] == s          # well-formed IOBES → BIO → IOBES is the identity
        flat = from_iobes_ids(names, ids, first, scheme)
        assert flat.tolist() == [t for b in back for t in b]


def test_documented_rule_on_typical_decoder_errors():
    assert from_iobes(["O", "I-NP", "E-NP", "O"]) == ["O", "B-NP", "I-NP", "O"]          # I after O opens
    assert from_iobes(["E-NP", "E-NP"]) == ["B-NP", "B-NP"]                           # E without B: one token
    assert from_iobes(["B-NP", "I-NP", "O"]) == ["B-NP", "I-NP", "O"]                 # B never closed
    assert from_iobes(["B-NP", "I-VP", "E-VP"]) == ["B-NP", "B-VP", "I-VP"]           # type change splits
    assert from_iobes(["S-PER", "B-PER", "E-PER"], "iob1") == ["I-PER", "B-PER", "I-PER"]


def test_detect_file_scheme():
    assert detect_file_scheme([["B-NP", "I-NP", "O", "B-VP"]]) == "bio"
    assert detect_file_scheme([["I-PER", "I-PER", "O", "I-LOC", "B-LOC"]]) == "iob1"
    # a BIO file with one slip (I after O) stays BIO: a B after O is never IOB1
    assert detect_file_scheme([["B-NP", "O"], ["O", "I-NP"]]) == "bio"
    assert detect_file_scheme([["O", "O"]]) == "bio"


def test_bad_values_are_one_line_parameter_errors(tmp_path):
    from mmprog.datasets import load_conll
    from mmprog.tagging import fit_text
    for bad in ("bio", "IOBES", None, 1):
        with pytest.raises(ParameterError, match=r"tag_scheme must be one of 'asis', 'iobes'; got"):
            check_tag_scheme(bad)
    for labels, what in [(["B", "I", "E", "S"], "segmentation"), (["B-NP", "E-NP", "S-NP"], "already IOBES"),
                         (["NN", "VB", "O"], "'NN', 'VB'"), (["O"], "no chunk"), (["B-"], "'B-'")]:
        with pytest.raises(ParameterError, match="tag_scheme='iobes'") as e:
            check_chunk_labels(labels)
        assert what in str(e.value) and "\n" not in str(e.value)
    path = tmp_path / "seg.txt"
    path.write_text("a B\nb E\n\nc S\n\n", encoding="utf-8")
    corpus = load_conll(path, columns=("form", "tag"))
    with pytest.raises(ParameterError, match="segmentation"):
        fit_text(corpus, templates=["U0:%x[0,0]", "B"], tag_scheme="iobes", max_iter=2)
    with pytest.raises(ParameterError, match="tag_scheme must be"):
        fit_text(corpus, templates=["U0:%x[0,0]", "B"], tag_scheme="bilou", max_iter=2)


# ---------------------------------------------------------------------------------------------------- command line
def _chunk_sentences(n, seed):
    """_sentences with longer PER chunks (B I I) so that IOBES has B, I, E and S labels to learn."""
    rng = random.Random(seed)
    out = []
    for s in _sentences(n, seed):
        row = []
        for w, p, t in s:
            row.append((w, p, t))
            if t == "I-PER" and rng.random() < 0.5:
                row.append(("Ruiz", "NC", "I-PER"))
        out.append(row)
    return out


def _labels(path):
    return [ln.split()[-1] for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


def _by_sentence(path, col=-1):
    out, cur = [], []
    for ln in path.read_text(encoding="utf-8").splitlines() + [""]:
        if ln.strip():
            cur.append(ln.split()[col])
        elif cur:
            out.append(cur)
            cur = []
    return out


def test_cli_train_tag_evaluate_predict_with_iobes(tmp_path, capsys):
    """train --tag-scheme iobes records the scheme in the model file; tag (plain, --marginals, --topk), evaluate
    and predict then give BIO, the file's encoding, and evaluate scores what tag wrote."""
    import mmprog
    train, test = tmp_path / "train.txt", tmp_path / "test.txt"
    _write(train, _chunk_sentences(60, 0))
    _write(test, _chunk_sentences(25, 1))
    model = str(tmp_path / "m")
    rc = main(["train", "--data", f"conll:{train},columns=form/pos/ne", "--templates", "rich", "--slack", "one",
               "--eps", "0.05", "--C", "10", "--tag-scheme", "iobes", "--out", model, "--json",
               "--test", f"conll:{test},columns=form/pos/ne"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    summary = json.loads(out.out)
    assert summary["tag_scheme"] == "iobes" and summary["file_scheme"] == "bio"
    doc = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    assert doc["meta"]["tag_scheme"] == "iobes" and doc["meta"]["file_scheme"] == "bio"
    assert {"S-LOC", "B-PER", "I-PER", "E-PER", "S-PER", "O"} <= set(doc["label_names"])
    assert not any(t.startswith("I-") and t[2:] == "LOC" for t in doc["label_names"])

    tagged = tmp_path / "tagged.txt"
    assert main(["tag", "--model", model, "--data", f"conll:{test}", "--out", str(tagged)]) == 0
    pred = _by_sentence(tagged)
    gold = _by_sentence(test)
    assert all(valid(p, "bio") for p in pred)
    assert {t[:2] for p in pred for t in p} <= {"O", "B-", "I-"} and any(t == "I-PER" for p in pred for t in p)
    # the chain decoded IOBES: the written chunks are those of its own labels
    m = mmprog.load(model)
    from mmprog.datasets import load_conll
    corpus = load_conll(test, columns=("form", "pos", "ne"))
    iobes = [[m.label_names[k] for k in y] for y in m.predict(corpus)]
    assert pred == from_iobes(iobes)
    assert chunks(pred) == chunks(iobes)

    assert main(["evaluate", "--model", model, "--data", f"conll:{test},columns=form/pos/ne", "--json"]) == 0
    sc = json.loads(capsys.readouterr().out)
    want = chunk_prf(gold, pred)
    assert sc["f1"] == pytest.approx(100 * want.f1) and sc["n_pred"] == want.n_pred
    assert summary["test"]["f1"] == pytest.approx(sc["f1"]) and sc["f1"] > 80

    assert main(["predict", "--model", model, "--data", f"conll:{test},columns=form/pos/ne", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == pred

    marg = tmp_path / "marg.txt"
    assert main(["tag", "--model", model, "--data", f"conll:{test}", "--marginals", "--out", str(marg)]) == 0
    rows = [ln for ln in marg.read_text(encoding="utf-8").splitlines() if ln]
    assert [r.split("\t")[0].split()[-1] for r in rows] == [t for p in pred for t in p]
    M = m.predict_marginals(corpus)
    probs = [float(r.split("\t")[1]) for r in rows]
    assert np.allclose(probs, np.concatenate([mm[np.arange(len(y)), y] for mm, y in zip(M, m.predict(corpus))]),
                       atol=1e-4)             # the marginal of the decoded IOBES label

    top = tmp_path / "top.txt"
    assert main(["tag", "--model", model, "--data", f"conll:{test}", "--topk", "3", "--out", str(top)]) == 0
    blocks = top.read_text(encoding="utf-8").split("\n\n")
    best = [[ln.split()[-1] for ln in b.splitlines()[1:]] for b in blocks if b.startswith("#k=0,")]
    assert best == pred
    everyone = [[ln.split()[-1] for ln in b.splitlines()[1:]] for b in blocks if b.startswith("#k=")]
    assert len(everyone) > len(pred) and all(valid(s, "bio") for s in everyone)


def test_iob1_file_is_written_back_in_iob1(tmp_path):
    """An IOB1 training file (as CoNLL-2003's) is detected, recorded and written back in IOB1."""
    from mmprog.datasets import load_conll
    from mmprog.tagging import fit_text, predict_tags, score_text
    sents = _chunk_sentences(60, 0)
    for s in sents:                       # PER PER chunks side by side keep a B- in IOB1
        s.insert(0, ("Ana", "NC", "B-PER"))
    iob1 = []
    for s in sents:
        tags = from_iobes(to_iobes([t for _, _, t in s]), "iob1")
        iob1.append([(w, p, t) for (w, p, _), t in zip(s, tags)])
    path = tmp_path / "iob1.txt"
    _write(path, iob1)
    corpus = load_conll(path, columns=("form", "pos", "ne"))
    assert detect_file_scheme(corpus.labels) == "iob1"
    res = fit_text(corpus, templates="rich", tag_scheme="iobes", slack="one", eps=0.05, C=10.0, progress=False)
    assert res.meta["tag_scheme"] == "iobes" and res.meta["file_scheme"] == "iob1"
    tags = predict_tags(res, corpus)
    assert all(valid(t, "iob1") for t in tags)
    assert score_text(res, corpus)["f1"] > 90


def test_model_without_tag_scheme_behaves_as_before(tmp_path, capsys):
    """Models saved before the field existed (no tag_scheme in meta) tag with their own labels, as asis does."""
    import mmprog
    from mmprog.datasets import load_conll
    from mmprog.tagging import predict_tags
    train = tmp_path / "train.txt"
    _write(train, _chunk_sentences(40, 0))
    model = str(tmp_path / "m")
    assert main(["train", "--data", f"conll:{train},columns=form/pos/ne", "--templates", "rich", "--slack", "one",
                 "--eps", "0.5", "--out", model, "--json"]) == 0
    capsys.readouterr()
    doc = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    assert doc["meta"]["tag_scheme"] == "asis"
    del doc["meta"]["tag_scheme"]
    (tmp_path / "old.json").write_text(json.dumps(doc), encoding="utf-8")
    (tmp_path / "old.npz").write_bytes((tmp_path / "m.npz").read_bytes())
    corpus = load_conll(train, columns=("form", "pos", "ne"))
    new, old = mmprog.load(model), mmprog.load(str(tmp_path / "old"))
    want = [[new.label_names[k] for k in y] for y in new.predict(corpus)]
    assert predict_tags(old, corpus) == predict_tags(new, corpus) == want
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    assert main(["tag", "--model", model, "--data", f"conll:{train}", "--out", str(a)]) == 0
    assert main(["tag", "--model", str(tmp_path / "old"), "--data", f"conll:{train}", "--out", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes()


def test_tag_scheme_errors_from_the_command_line(tmp_path, capsys):
    train = tmp_path / "train.txt"
    _write(train, _chunk_sentences(10, 0))
    assert main(["train", "--data", "synthetic:seed=0", "--tag-scheme", "iobes"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--tag-scheme iobes" in err and "--templates" in err
    seg = tmp_path / "seg.txt"
    seg.write_text("a B\nb E\n\nc S\n\n", encoding="utf-8")
    assert main(["train", "--data", f"conll:{seg},columns=form/tag", "--templates", "rich",
                 "--tag-scheme", "iobes"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "tag_scheme='iobes'" in err and "segmentation" in err
    with pytest.raises(SystemExit):
        main(["train", "--data", f"conll:{train},columns=form/pos/ne", "--templates", "rich", "--tag-scheme", "x"])
    assert "choose from 'asis', 'iobes'" in capsys.readouterr().err


def test_bench_crf_passes_tag_scheme_through(tmp_path, capsys):
    """``python -m mmprog.bench crf --mmprog-args "... --tag-scheme iobes"`` trains an IOBES model and scores the
    BIO written back (the bench calls ``mmprog train`` and ``predict_tags``)."""
    from mmprog.bench.crf import main as bench_crf
    (tmp_path / "conll2000").mkdir()
    with gzip.open(tmp_path / "conll2000" / "train.txt.gz", "wt", encoding="utf-8") as fh:
        for s in _chunk_sentences(40, 3):
            fh.write("".join(f"{w} {p} {t}\n" for w, p, t in s) + "\n")
    model = tmp_path / "kept"
    assert bench_crf(["--task", "chunk", "--data-root", str(tmp_path), "--dev", "0.25", "--skip", "crfsuite",
                      "--json", "--save-model", str(model),
                      "--mmprog-args", "--templates rich --slack one --eps 0.5 --tag-scheme iobes"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert "--tag-scheme iobes" in rows[0]["system"] and 0 <= rows[0]["dev"]["f1"] <= 100
    assert json.loads((tmp_path / "kept.json").read_text(encoding="utf-8"))["meta"]["tag_scheme"] == "iobes"


def test_cli_iobes_second_order_on_seen_transitions(tmp_path, capsys):
    """train --tag-scheme iobes --order 2 --transitions seen keeps the bigram mask of the training labels in the
    model; tag decodes only labelings made of those bigrams (every IOBES bigram it writes is allowed, so the
    written chunks are well-formed IOBES read back), and evaluate scores what tag wrote."""
    import mmprog
    from mmprog.datasets import load_conll
    train, test = tmp_path / "train.txt", tmp_path / "test.txt"
    _write(train, _chunk_sentences(60, 0))
    _write(test, _chunk_sentences(25, 1))
    model = str(tmp_path / "m")
    rc = main(["train", "--data", f"conll:{train},columns=form/pos/ne", "--templates", "rich", "--slack", "one",
               "--eps", "0.05", "--C", "10", "--tag-scheme", "iobes", "--order", "2", "--transitions", "seen",
               "--out", model, "--json"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    m = mmprog.load(model)
    names = m.label_names
    seen = np.zeros((len(names),) * 2, bool)
    for y in to_iobes([s for s in _by_sentence(train)]):
        k = [names.index(t) for t in y]
        seen[k[:-1], k[1:]] = True
    assert m.fmap.order == 2 and m.fmap.allowed is not None
    np.testing.assert_array_equal(m.fmap.allowed[seen], True)
    assert not m.fmap.allowed.all()            # IOBES forbids e.g. B-X followed by O
    corpus = load_conll(test, columns=("form", "pos", "ne"))
    decoded = m.predict(corpus)
    assert all(m.fmap.allowed[y[:-1], y[1:]].all() for y in decoded)
    tagged = tmp_path / "tagged.txt"
    assert main(["tag", "--model", model, "--data", f"conll:{test}", "--out", str(tagged)]) == 0
    pred = _by_sentence(tagged)
    assert pred == from_iobes([[names[k] for k in y] for y in decoded])
    assert main(["evaluate", "--model", model, "--data", f"conll:{test},columns=form/pos/ne", "--json"]) == 0
    sc = json.loads(capsys.readouterr().out)
    assert sc["f1"] == pytest.approx(100 * chunk_prf(_by_sentence(test), pred).f1) and sc["f1"] > 80
    assert main(["tag", "--model", model, "--data", f"conll:{test}", "--topk", "2"]) == 2
    assert "order=2" in capsys.readouterr().err
