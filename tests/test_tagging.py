"""Text in, labels out: derived token columns, train → tag → evaluate from the command line on tiny CoNLL files
written here, the token-dict estimator against the template route, and the one-line errors."""
import io
import json
import random
import sys

import numpy as np
import pytest

from mmprog.cli import main
from mmprog.features.templates import DERIVED, PRESETS, TemplateExtractor

NAMES = ["Ana", "Luis", "Pedro", "Marta", "Juan", "Sofía", "Carlos"]
PLACES = ["Madrid", "Lima", "Bogotá", "Quito", "Sevilla"]
WORDS = ["el", "la", "casa", "vive", "come", "de", "y", "grande", "2002", "20-10", "bien", "ayer"]


def _sentences(n, seed):
    """Word/POS/NE sentences: capitalised names tagged PER, the word after "en" a LOC, the rest O."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        toks = []
        for _ in range(rng.randint(3, 8)):
            r = rng.random()
            if r < 0.2:
                toks.append((rng.choice(NAMES), "NC", "B-PER"))
                if rng.random() < 0.4:
                    toks.append((rng.choice(NAMES), "NC", "I-PER"))
            elif r < 0.35:
                toks += [("en", "SP", "O"), (rng.choice(PLACES), "NC", "B-LOC")]
            else:
                w = rng.choice(WORDS)
                toks.append((w, "Z" if w[0].isdigit() else "V", "O"))
        out.append(toks)
    return out


def _write(path, sents, with_labels=True):
    with open(path, "w", encoding="utf-8") as fh:
        for s in sents:
            for w, p, t in s:
                fh.write(f"{w} {p} {t}\n" if with_labels else f"{w} {p}\n")
            fh.write("\n")


@pytest.fixture()
def files(tmp_path):
    train, test = tmp_path / "train.txt", tmp_path / "test.txt"
    _write(train, _sentences(60, 0))
    _write(test, _sentences(25, 1))
    return tmp_path, train, test


# ---------------------------------------------------------------------------------------------------- derived columns
def test_derived_columns_by_hand():
    assert DERIVED["shape"]("Ab-12") == "Xx-dd" and DERIVED["sshape"]("Abcd-1234") == "Xx-d"
    assert DERIVED["suf3"]("casa") == "asa" and DERIVED["pre4"]("el") == "el" and DERIVED["lower"]("ANA") == "ana"
    assert [DERIVED[f]("Ana") for f in ("title", "upper", "digit", "hyphen")] == ["1", "0", "0", "0"]
    assert DERIVED["digit"]("2002") == "1" and DERIVED["hyphen"]("20-10") == "1"
    sents = [{"form": ["Ana", "vive", "en", "Lima"], "pos": ["NC", "V", "SP", "NC"]}]
    ex = TemplateExtractor(["U1:%x[0,0:suf2]", "U2:%x[-1,0:shape]/%x[0,1:pre1]", "B"]).fit(sents)
    want = {f"U1:{w[-2:]}" for w in sents[0]["form"]}
    shapes = ["_B-1", "Xxx", "xxxx", "xx"]
    want |= {f"U2:{a}/{p[0]}" for a, p in zip(shapes, sents[0]["pos"])}
    assert set(ex.feature_names_) == want and ex.n_features_ == len(want)
    # an unseen word still has a known suffix: the derived value is computed on the new word
    X = ex.transform([{"form": ["Tina"], "pos": ["NC"]}])[0]
    assert [ex.feature_names_[j] for j in X.indices] == ["U1:na", "U2:_B-1/N"]


def test_lexicon_column_train_tag_and_errors(files, capsys):
    """A gazetteer read with --lexicon is a column the templates address: its features are the looked-up values
    (as written, else lower-cased, else "_"), the saved model carries it (tag needs nothing else), and bad lexicon
    lines are one-line errors naming file and line."""
    import mmprog
    tmp, train, test = files
    lex = tmp / "places.txt"
    lex.write_text("# a gazetteer\n" + "".join(f"{p}\tLOC\n" for p in PLACES) + "juan PER\n", encoding="utf-8")
    tpl = tmp / "tpl.txt"
    tpl.write_text("U00:%x[0,0]\nUgaz:%x[0,0:gaz]\nUgaz1:%x[-1,0:gaz]/%x[0,0:gaz]\nB\n", encoding="utf-8")
    model = str(tmp / "m")
    assert main(["train", "--data", f"conll:{train},columns=form/pos/ne", "--templates", str(tpl),
                 "--lexicon", f"gaz={lex}", "--slack", "one", "--eps", "0.1", "--out", model, "--json"]) == 0
    capsys.readouterr()
    pred = mmprog.load(model)
    names = set(pred.extractor.feature_names_)
    assert {"Ugaz:LOC", "Ugaz:PER", "Ugaz:_", "Ugaz1:_B-1/_", "Ugaz1:_/LOC"} <= names
    assert not any(n.startswith("Ugaz:") and n[5:] not in ("LOC", "PER", "_") for n in names)
    # "Juan" is found lower-cased; an unseen word outside the lexicon reads "_"
    X = pred.extractor.transform([{"form": ["Juan", "Lima", "Xyz"], "pos": ["NC", "NC", "NC"]}])[0]
    got = [[pred.extractor.feature_names_[j] for j in X[t].indices if "gaz:" in pred.extractor.feature_names_[j]]
           for t in range(3)]
    assert got == [["Ugaz:PER"], ["Ugaz:LOC"], ["Ugaz:_"]]
    out = tmp / "tagged.txt"
    assert main(["tag", "--model", model, "--data", f"conll:{test},columns=form/pos/ne", "--out", str(out)]) == 0
    from mmprog.datasets import load_conll
    want = [pred.label_names[y] for ys in pred.predict(load_conll(test, columns=("form", "pos", "ne"))) for y in ys]
    assert [ln.split()[-1] for ln in out.read_text(encoding="utf-8").splitlines() if ln] == want
    # bad lexicon lines: exit 2 and one line naming the file and the line
    for text, line, what in [("Madrid LOC\nLima\n", 2, "1 fields"), ("Lima LOC\nLima PER\n", 2, "listed again"),
                             ("a b c\n", 1, "3 fields")]:
        lex.write_text(text, encoding="utf-8")
        assert main(["train", "--data", f"conll:{train},columns=form/pos/ne", "--templates", str(tpl),
                     "--lexicon", f"gaz={lex}", "--out", model]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"{lex}:{line}:" in err[0] and what in err[0], err
    # a template naming a lexicon that was not given
    assert main(["train", "--data", f"conll:{train},columns=form/pos/ne", "--templates", str(tpl), "--out",
                 model]) == 2
    assert "'gaz'" in capsys.readouterr().err


def test_chunk_preset_is_rich_plus_crfpp_chunking_template():
    from mmprog.features.templates import parse_template
    body = lambda t: t.split(":", 1)[1] if ":" in t.split("%x", 1)[0] else t   # noqa: E731
    chunk = [body(t) for t in PRESETS["chunk"]]
    assert [body(t) for t in PRESETS["rich"]][:-1] == chunk[: len(PRESETS["rich"]) - 1] and chunk[-1] == "B"
    # CRF++ example/chunking/template, line for line (ids dropped): every one of its groups is in the preset
    crfpp = ["%x[-2,0]", "%x[-1,0]", "%x[0,0]", "%x[1,0]", "%x[2,0]", "%x[-1,0]/%x[0,0]", "%x[0,0]/%x[1,0]",
             "%x[-2,1]", "%x[-1,1]", "%x[0,1]", "%x[1,1]", "%x[2,1]", "%x[-2,1]/%x[-1,1]", "%x[-1,1]/%x[0,1]",
             "%x[0,1]/%x[1,1]", "%x[1,1]/%x[2,1]", "%x[-2,1]/%x[-1,1]/%x[0,1]", "%x[-1,1]/%x[0,1]/%x[1,1]",
             "%x[0,1]/%x[1,1]/%x[2,1]"]
    # rich reads neighbouring words lower-cased: the same macros with the lower column count as present
    have = {body(t).replace(",0:lower]", ",0]") for t in PRESETS["chunk"]}
    assert set(crfpp) <= have
    names = [parse_template(t)[1] for t in PRESETS["chunk"] if t != "B"]
    assert len(set(names)) == len(names)


def test_bench_crf_dev_scores_the_held_out_part_of_train(tmp_path, capsys):
    """``python -m mmprog.bench crf --dev F`` trains on the first sentences of the training file and scores on its
    last F only: the split is exact and no test file is read (there is none here)."""
    import gzip
    from mmprog.bench.crf import holdout_split, main as bench_crf
    from mmprog.datasets import load_conll
    sents = _sentences(40, 3)
    (tmp_path / "conll2000").mkdir()
    with gzip.open(tmp_path / "conll2000" / "train.txt.gz", "wt", encoding="utf-8") as fh:
        for s in sents:
            fh.write("".join(f"{w} {p} {t}\n" for w, p, t in s) + "\n")
    d = tmp_path / "split"
    d.mkdir()
    cols, train, tests = holdout_split("chunk", str(tmp_path), 0.25, str(d))
    tr = load_conll(train, columns=("form", "pos", "chunk"))
    dev = load_conll(tests["dev"], columns=("form", "pos", "chunk"))
    assert len(tr) == 30 and len(dev) == 10
    assert [s["form"] for s in tr.sentences + dev.sentences] == [[w for w, _, _ in s] for s in sents]
    assert bench_crf(["--task", "chunk", "--data-root", str(tmp_path), "--dev", "0.25", "--skip", "crfsuite",
                      "--json", "--mmprog-args", "--templates chunk --slack one --eps 0.5"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert list(k for k in rows[0] if k in ("dev", "test")) == ["dev"] and 0 <= rows[0]["dev"]["f1"] <= 100


def test_rich_preset_one_group_per_template_and_state_round_trip(files):
    from mmprog.datasets import load_conll
    _, train, _ = files
    corpus = load_conll(train, columns=("form", "pos", "ne"))
    ex = TemplateExtractor("rich")
    X = ex.fit_transform(corpus)
    assert ex.group_names_ == [t.split(":", 1)[0] for t in PRESETS["rich"] if t != "B"]
    assert len(set(ex.group_names_)) == len(ex.group_names_)
    js, arrays = ex.to_state()
    ex2 = TemplateExtractor.from_state(json.loads(json.dumps(js)), arrays)
    X2 = ex2.transform(corpus)
    assert all((a != b).nnz == 0 for a, b in zip(X, X2))


# ---------------------------------------------------------------------------------------------------- command line
def _train_rich(d, train, eps, capsys):
    model = str(d / "m")
    assert main(["train", "--data", f"conll:{train},columns=form/pos/ne", "--templates", "rich", "--slack", "one",
                 "--eps", str(eps), "--out", model, "--json"]) == 0
    capsys.readouterr()
    return model


def _run(capsys, argv):
    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_quick_start_train_tag_evaluate(files, capsys):
    """The README's three commands; the evaluate scores are checked against seqeval on tag's output."""
    seqeval = pytest.importorskip("seqeval.metrics")
    d, train, test = files
    model = str(d / "ner")
    # README's quick start runs with the default stopping rule (the certified gap) and route
    rc, out, err = _run(capsys, ["train", "--data", f"conll:{train},columns=form/pos/ne", "--templates", "rich",
                                 "--C", "10", "--out", model, "--json",
                                 "--test", f"conll:{test},columns=form/pos/ne"])
    assert rc == 0, err
    summary = json.loads(out)
    assert summary["termination"] == "converged" and summary["task"] == "chunk"
    assert summary["gap"] <= summary["gap_tol"] == 1e-2
    assert json.loads((d / "ner.json").read_text())["meta"]["gap"] == summary["gap"]     # the saved model keeps it
    tagged = d / "tagged.txt"
    rc, _, err = _run(capsys, ["tag", "--model", model, "--data", f"conll:{test}", "--out", str(tagged)])
    assert rc == 0, err
    lines = tagged.read_text(encoding="utf-8").split("\n")
    src = test.read_text(encoding="utf-8").split("\n")
    gold, pred, g, p = [], [], [], []
    for a, b in zip(src, lines):
        if not a:
            assert b == ""
            if g:
                gold.append(g)
                pred.append(p)
            g, p = [], []
            continue
        assert b.startswith(a + " ")          # input columns, then the predicted label
        g.append(a.split()[-1])
        p.append(b.split()[-1])
    rc, out, err = _run(capsys, ["evaluate", "--model", model, "--data", f"conll:{test},columns=form/pos/ne",
                                 "--json"])
    assert rc == 0, err
    sc = json.loads(out)
    assert sc["f1"] == pytest.approx(100 * seqeval.f1_score(gold, pred), abs=1e-9)
    assert sc["precision"] == pytest.approx(100 * seqeval.precision_score(gold, pred), abs=1e-9)
    assert summary["test"]["f1"] == pytest.approx(sc["f1"])
    assert sc["f1"] > 80          # the pattern is learnable: it is not 0 = 0
    assert set(sc["per_type"]) == {"PER", "LOC"}


def test_tag_unlabelled_stdin_marginals_topk(files, capsys, monkeypatch):
    import io
    import sys

    import mmprog
    d, train, test = files
    model = _train_rich(d, train, 0.05, capsys)
    raw = d / "raw.txt"
    sents = _sentences(5, 2)
    _write(raw, sents, with_labels=False)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw.read_bytes()), encoding="utf-8"))
    rc, out, err = _run(capsys, ["tag", "--model", model, "--data", "conll:-", "--marginals"])
    assert rc == 0, err
    rows = [r for r in out.split("\n") if r]
    assert len(rows) == sum(len(s) for s in sents)
    pred = mmprog.load(model)
    from mmprog.datasets import load_conll
    corpus = load_conll(raw, columns=("form", "pos"), label_column=None)
    want = [pred.label_names[k] for y in pred.predict(corpus) for k in y]
    M = pred.predict_marginals(corpus)
    assert [r.split("\t")[0].split()[-1] for r in rows] == want
    probs = np.array([float(r.split("\t")[1]) for r in rows])
    assert np.all((probs > 0) & (probs <= 1))
    ys = pred.predict(corpus)
    assert np.allclose(probs, np.concatenate([m[np.arange(len(y)), y] for m, y in zip(M, ys)]), atol=1e-4)
    # an independent check of the marginals: rows sum to one
    assert all(np.allclose(m.sum(axis=1), 1) for m in M)
    rc, out, err = _run(capsys, ["tag", "--model", model, "--data", f"conll:{raw}", "--topk", "2"])
    assert rc == 0, err
    heads = [r for r in out.split("\n") if r.startswith("#k=")]
    assert len(heads) == 2 * len(sents)
    scores = [float(h.split("score=")[1]) for h in heads]
    assert all(a >= b for a, b in zip(scores[::2], scores[1::2]))


def test_bad_line_one_line_error_exit_2(files, capsys):
    d, train, _ = files
    model = _train_rich(d, train, 0.5, capsys)
    bad = d / "bad.txt"
    bad.write_text("Ana NC B-PER\nvive V\n", encoding="utf-8")
    rc, out, err = _run(capsys, ["tag", "--model", model, "--data", f"conll:{bad}"])
    assert rc == 2 and err.count("\n") == 1 and f"{bad}:2:" in err
    rc, _, err = _run(capsys, ["train", "--data", f"conll:{train},columns=form/pos/ne", "--templates", "nosuch"])
    assert rc == 2 and "preset" in err and err.count("\n") == 1


def test_crfpp_template_file_and_segmentation_scores(tmp_path, capsys):
    """A CRF++ template file taken as it is; B/I/E tags are scored as words (SIGHAN), R_oov against training words."""
    from mmprog.metrics import segmentation_prf
    rng = random.Random(3)
    vocab = ["ab", "c", "de", "fgh", "ij", "k"]

    def sents(n):
        out = []
        for _ in range(n):
            words = [rng.choice(vocab) for _ in range(rng.randint(2, 6))]
            out.append(words)
        return out

    def write(path, ss):
        with open(path, "w") as fh:
            for ws in ss:
                for w in ws:
                    for k, ch in enumerate(w):
                        fh.write(f"{ch} {'B' if k == 0 else ('E' if k == len(w) - 1 else 'I')}\n")
                fh.write("\n")

    train, test = tmp_path / "tr.txt", tmp_path / "te.txt"
    write(train, sents(40))
    test_sents = sents(10) + [["xk"]]          # xk: an out-of-vocabulary word
    write(test, test_sents)
    tpl = tmp_path / "template"
    tpl.write_text("# unigram\nU00:%x[-1,0]\nU01:%x[0,0]\nU02:%x[1,0]\n\nU03:%x[-1,0]/%x[0,0]\nB\n")
    rc = main(["train", "--data", f"conll:{train},columns=char/tag", "--templates", str(tpl), "--slack", "one",
               "--eps", "0.01", "--test", f"conll:{test},columns=char/tag", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["task"] == "segmentation"
    sc = out["test"]
    assert {"precision", "recall", "f1", "r_iv", "r_oov"} <= set(sc)
    assert sc["oov_rate"] == pytest.approx(100 / sum(len(s) for s in test_sents))
    assert 0 <= sc["r_oov"] <= 100 and sc["f1"] > 90
    # the same scores from the metric module on predictions made through the Python API
    from mmprog.datasets import load_conll
    from mmprog.tagging import _words, fit_text, predict_tags
    tr = load_conll(train, columns=("char", "tag"))
    te = load_conll(test, columns=("char", "tag"))
    res = fit_text(tr, templates=tpl.read_text().splitlines(), slack="one", eps=0.01)
    ref = segmentation_prf(_words(te, te.labels), _words(te, predict_tags(res, te)),
                           train_vocab={w for ws in sents_from(tr) for w in ws})
    assert sc["f1"] == pytest.approx(100 * ref.f1)


def sents_from(corpus):
    from mmprog.metrics import tags_to_words
    return [tags_to_words(s["char"], t) for s, t in zip(corpus.sentences, corpus.labels)]


def _chain_treebank(path, n_sent, seed):
    rng = random.Random(seed)
    with open(path, "w") as fh:
        for s in range(n_sent):
            n = rng.randint(2, 5)
            fh.write(f"# sent_id = {s}\n")
            for i in range(1, n + 1):
                head = 0 if i == 1 else i - 1        # a chain: every word hangs on the one before it
                fh.write(f"{i}\tw{i}\tw{i}\tX\tT{i % 3}\t_\t{head}\tdep\t_\t_\n")
            fh.write("\n")


def _heads_of(text):
    got, cur = [], []
    for line in text.split("\n"):
        if line.startswith("#"):
            continue
        if not line:
            if cur:
                got.append(cur)
            cur = []
            continue
        cur.append(int(line.split("\t")[6]))
    return got


def test_parse_writes_predicted_heads(tmp_path, capsys):
    import mmprog
    path = tmp_path / "t.conllu"
    _chain_treebank(path, 20, 5)
    model = str(tmp_path / "dep")
    assert main(["train", "--data", f"conllu:{path}", "--slack", "one", "--eps", "0.01", "--out", model,
                 "--json"]) == 0
    capsys.readouterr()
    out = tmp_path / "parsed.conllu"
    assert main(["parse", "--model", model, "--data", f"conllu:{path}", "--out", str(out)]) == 0
    pred = mmprog.load(model)
    from mmprog.datasets import load_conllu
    want = [h[1:].tolist() for h in pred.predict(load_conllu(path))]
    assert _heads_of(out.read_text()) == want


def test_parse_streams_stdin_in_batches(tmp_path, capsys, monkeypatch):
    """parse reads standard input and parses it batch by batch: with batches of a few tokens the output (heads,
    comments, the attachment scores of --json) is the one of the whole file parsed at once."""
    import mmprog
    import mmprog.parsing as parsing
    from mmprog.datasets import load_conllu
    train, test = tmp_path / "train.conllu", tmp_path / "test.conllu"
    _chain_treebank(train, 20, 5)
    _chain_treebank(test, 15, 9)
    model = str(tmp_path / "dep")
    assert main(["train", "--data", f"conllu:{train}", "--slack", "one", "--eps", "0.01", "--out", model]) == 0
    capsys.readouterr()
    pred = mmprog.load(model)
    ds = load_conllu(test)
    want = [h[1:].tolist() for h in pred.predict(ds)]
    monkeypatch.setattr(parsing, "BATCH_TOKENS", 7)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(test.read_bytes()), encoding="utf-8"))
    assert main(["parse", "--model", model, "--data", "conllu:-", "--json"]) == 0
    cap = capsys.readouterr()
    assert _heads_of(cap.out) == want
    assert [ln for ln in cap.out.split("\n") if ln.startswith("#")] == [f"# sent_id = {s}" for s in range(15)]
    got, ref = json.loads(cap.err), pred.evaluate(ds)
    assert got["n_sentences"] == 15 and got["uas"] == pytest.approx(ref["uas"])
    assert got["uas_no_punct"] == pytest.approx(ref["uas_no_punct"])


def test_parse_bad_line_names_file_and_line(tmp_path, capsys):
    train, bad = tmp_path / "train.conllu", tmp_path / "bad.conllu"
    _chain_treebank(train, 10, 5)
    model = str(tmp_path / "dep")
    assert main(["train", "--data", f"conllu:{train}", "--slack", "one", "--eps", "0.01", "--out", model]) == 0
    lines = train.read_text().split("\n")
    k = [i for i, ln in enumerate(lines) if "\t" in ln][6]
    lines[k] = lines[k].replace("\t", " ", 1)         # 9 tab-separated fields on line k + 1
    bad.write_text("\n".join(lines))
    capsys.readouterr()
    out = tmp_path / "parsed.conllu"
    assert main(["parse", "--model", model, "--data", f"conllu:{bad}", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{bad}:{k + 1}:" in err[0] and "9 tab-separated fields" in err[0]
    assert not out.exists()                        # nothing half-written


# ---------------------------------------------------------------------------------------------------- token dicts
def test_token_dicts_predict_as_the_template_route(files):
    """sklearn-crfsuite-style dicts written by hand give the same features, weights and predictions as the templates
    that describe them."""
    import mmprog
    from mmprog.datasets import load_conll
    from mmprog.estimators import SequenceTagger
    from mmprog.tagging import fit_text, predict_tags
    _, train, test = files
    tr = load_conll(train, columns=("form", "pos", "ne"))
    te = load_conll(test, columns=("form", "pos", "ne"))

    def token_dicts(s):
        w, p = s["form"], s["pos"]
        out = []
        for t in range(len(w)):
            out.append({"low": w[t].lower(), "suf2": w[t][-2:], "title": "1" if w[t].istitle() else "0",
                        "pos-1": p[t - 1] if t > 0 else "_B-1",
                        "low+1": w[t + 1].lower() if t + 1 < len(w) else "_B+1"})
        return out

    templates = ["Ulow:%x[0,0:lower]", "Usuf2:%x[0,0:suf2]", "Utitle:%x[0,0:title]", "Upos-1:%x[-1,1]",
                 "Ulow+1:%x[1,0:lower]", "B"]
    kw = dict(program="m3n", C=1.0, slack="n", eps=1e-4, max_iter=300)
    res = fit_text(tr, templates=templates, **kw)
    est = SequenceTagger(**kw).fit([token_dicts(s) for s in tr.sentences], tr.labels)
    assert est.result_.termination == res.termination == "converged"
    assert est.extractor_.n_features_ == res.extractor.n_features_
    assert est.extractor_.group_names_ == [t.split(":")[0][1:] for t in templates[:-1]]
    # the same program on a permutation of the same features: the same optimum
    assert est.result_.primal_objective == pytest.approx(res.primal_objective, rel=1e-5)
    got = est.predict([token_dicts(s) for s in te.sentences])
    assert got == predict_tags(res, te)
    assert est.score([token_dicts(s) for s in te.sentences], te.labels) > 0.9
    marg = est.predict_marginals([token_dicts(te.sentences[0])])[0]
    assert all(set(m) == set(est.classes_) and abs(sum(m.values()) - 1) < 1e-9 for m in marg)


def test_bigram_templates_with_macros_train_tag_from_the_command_line(files, capsys):
    """A template file with ``B01:%x[0,1]``-style lines: train, save, tag (labels, marginals, top-k) from the command
    line; the tagged labels are the exact maximisers of wᵀf over every labeling (f by explicit loops), and the
    top-k scores are the k largest of those scores."""
    import itertools

    import mmprog
    from mmprog.datasets import load_conll
    d, train, test = files
    tpl = d / "template"
    tpl.write_text("U00:%x[0,0]\nU01:%x[0,1]\nU02:%x[-1,1]\nB\nB01:%x[0,1]\nB02:%x[-1,1]/%x[0,1]\n")
    model = str(d / "edges")
    rc, out, err = _run(capsys, ["train", "--data", f"conll:{train},columns=form/pos/ne", "--templates", str(tpl),
                                 "--slack", "one", "--eps", "0.01", "--out", model, "--json",
                                 "--test", f"conll:{test},columns=form/pos/ne"])
    assert rc == 0, err
    assert json.loads(out)["test"]["f1"] > 80
    pred = mmprog.load(model)
    fmap, ex = pred.fmap, pred.extractor
    assert fmap.n_edge_features == ex.n_edge_features_ > 0
    rc, out, err = _run(capsys, ["tag", "--model", model, "--data", f"conll:{test}", "--topk", "2"])
    assert rc == 0, err
    heads = [line[1:].split(",") for line in out.split("\n") if line.startswith("#k=")]
    firsts = [j for j, h in enumerate(heads) if h[0] == "k=0"]     # "#k=0,score=S" opens each sentence's list
    top_k = [[float(h[1][len("score="):]) for h in heads[a:b]] for a, b in zip(firsts, firsts[1:] + [len(heads)])]
    rc, out, err = _run(capsys, ["tag", "--model", model, "--data", f"conll:{test}", "--marginals"])
    assert rc == 0, err
    rows = [r for r in out.split("\n") if r]
    corpus = load_conll(test, columns=("form", "pos", "ne"))
    X = ex.transform(corpus)
    K, d_e = fmap.n_labels, fmap.n_edge_features
    blocks_w = fmap.weights(pred.w)
    k = 0
    for i, (x, s) in enumerate(zip(X, corpus.sentences)):
        x = x.toarray()
        L = len(s["form"])
        if L > 6:           # K^L labelings: enumerate the short sentences only
            k += L
            continue
        xs, xe = x[:, :x.shape[1] - d_e], x[:, x.shape[1] - d_e:]

        def score(y):
            v = sum(xs[t] @ blocks_w["state"][:, y[t]] for t in range(L))
            return v + sum(blocks_w["transition"][y[t - 1], y[t]] + xe[t] @ blocks_w["edge"][:, y[t - 1], y[t]]
                           for t in range(1, L))
        scores = {y: score(y) for y in itertools.product(range(K), repeat=L)}
        best = max(scores, key=scores.get)
        tagged = [r.split("\t")[0].split()[-1] for r in rows[k:k + L]]
        assert scores[tuple(pred.label_names.index(t) for t in tagged)] == pytest.approx(scores[best], abs=1e-9)
        top = sorted(scores.values(), reverse=True)[:2]
        assert np.allclose(top_k[i], top, atol=1e-6)     # written with 6 decimals
        k += L


def test_bench_tag_prints_mmprog_and_crfsuite_in_one_run(files, capsys):
    """``python -m mmprog.bench tag`` on small files: the first pass apart, the steady rows, CRFsuite beside."""
    from mmprog.bench.tag import main as bench_tag
    d, train, test = files
    model = _train_rich(d, train, 0.05, capsys)
    assert bench_tag(["--model", model, "--file", str(test), "--train", str(train), "--repeat", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    n_tok = sum(1 for ln in test.read_text(encoding="utf-8").splitlines() if ln.strip())
    rows = {ln[:60].strip(): ln[60:].split() for ln in out[1:]}
    assert list(rows) == ["mmprog tag, first pass (kernels loaded, word tables built)",
                          "mmprog tag (end to end: read, templates, Viterbi, write)",
                          "CRFsuite tagger alone (features built beforehand)",
                          "CRFsuite end to end (read, tutorial features, tag, write)"]
    assert all(int(v[0]) == n_tok and float(v[2].replace(",", "")) > 0 for v in rows.values())
