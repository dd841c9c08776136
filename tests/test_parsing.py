"""mmprog.parsing and the parse/train/evaluate commands on dependency data: raw CoNLL-U in, the same bytes out but
HEAD/DEPREL (and a given DEPS), labels from the saved labeller, model selection on --dev, one-line errors."""
import io
import json
import random
import sys

import numpy as np
import pytest

import mmprog
from mmprog.cli import main
from mmprog.datasets import load_conllu
from mmprog.features.arcs import ArcFeatureMap
from mmprog.parsing import labeller_base, labelled_scores, predict_relations


def labelled_treebank(path, n_sent, seed):
    """Chains whose relation follows the tag, so that both the parser and the labeller can learn them."""
    rng = random.Random(seed)
    with open(path, "w") as fh:
        for s in range(n_sent):
            n = rng.randint(2, 6)
            fh.write(f"# sent_id = {s}\n")
            for i in range(1, n + 1):
                tag = rng.choice(["NOUN", "VERB", "ADJ"])
                head = 0 if i == 1 else i - 1
                rel = "root" if head == 0 else {"NOUN": "obj", "VERB": "conj", "ADJ": "amod"}[tag]
                fh.write(f"{i}\tw{rng.randint(0, 9)}\t_\t{tag}\t{tag[:2]}|x\tA=1\t{head}\t{rel}\t_\t_\n")
            fh.write("\n")


RAW = (
    "# newdoc id = d1\n"
    "# sent_id = a\n"
    "# text = w1 w2w3 w4\n"
    "1\tw1\t_\tNOUN\tNO|x\tA=1\t_\t_\t_\t_\n"
    "2-3\tw2w3\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No\n"
    "2\tw2\t_\tVERB\tVE|x\tA=1\t_\t_\t_\t_\n"
    "2.1\tgap\t_\tVERB\t_\t_\t_\t_\t2:conj\t_\n"
    "3\tw3\t_\tADJ\tAD|x\tA=1\t_\t_\t0:root\tKeep=this\r\n"
    "4\tw4\t_\tNOUN\tNO|x\tA=1\t_\t_\t_\t_\n"
    "\n"
    "# a comment block on its own\n"
    "\n"
    "# sent_id = b\n"
    "1\tw7\t_\tVERB\tVE|x\tA=1\t_\t_\t_\t_\n"
    "2\tw8\t_\tNOUN\tNO|x\tA=1\t_\t_\t_\t_\n"
    "\n"
)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("dep")
    train = d / "train.conllu"
    labelled_treebank(train, 40, 1)
    m = str(d / "dep")
    err, out = io.StringIO(), io.StringIO()
    old, sys.stderr = sys.stderr, err
    old_out, sys.stdout = sys.stdout, out
    try:
        assert main(["train", "--data", f"conllu:{train}", "--slack", "one", "--eps", "0.01", "--dev", "0.25",
                     "--C-grid", "0.1,1", "--out", m, "--json"]) == 0
    finally:
        sys.stderr, sys.stdout = old, old_out
    rows = [json.loads(ln) for ln in err.getvalue().splitlines() if ln.startswith("{")]
    return m, train, rows, json.loads(out.getvalue())


def test_train_chooses_c_on_dev_and_saves_the_labeller(model):
    m, train, rows, summary = model
    cands = [r for r in rows if "refit_sentences" not in r]
    assert [r["C"] for r in cands] == [0.1, 1.0] and all(0 <= r["dev_uas"] <= 1 for r in cands)
    assert all(r["gap"] >= 0 for r in rows)
    assert cands == summary["candidates"] and rows[-1] == summary["refit"]
    # the labeller's own certificate is reported beside the parser's
    lab_run = summary["labeller"]
    assert lab_run["C"] == 0.1 and lab_run["gap"] >= 0 and lab_run["termination"] in ("converged", "eps", "max_iter")
    lab = mmprog.load(labeller_base(m) + ".json")
    assert lab.fmap.kind == "arclabels" and set(lab.fmap.label_names) == {"root", "obj", "conj", "amod"}


def test_parse_rewrites_only_head_deprel_deps(model, tmp_path):
    m, _, _, _ = model
    raw = tmp_path / "raw.conllu"
    raw.write_bytes(RAW.encode())
    out = tmp_path / "parsed.conllu"
    assert main(["parse", "--model", m, "--data", f"conllu:{raw}", "--out", str(out)]) == 0
    a, b = RAW.encode().split(b"\n"), out.read_bytes().split(b"\n")
    assert len(a) == len(b)
    parser, lab = mmprog.load(m), mmprog.load(labeller_base(m) + ".json")
    names = set(lab.fmap.label_names)
    heads, rels = [], []
    for x, y in zip(a, b):
        fx, fy = x.split(b"\t"), y.split(b"\t")
        if len(fx) < 10 or not fx[0].isdigit():
            assert x == y                                    # comments, 2-3, 2.1, blank lines: unchanged
            continue
        assert fx[:6] == fy[:6] and fx[9] == fy[9]          # MISC with its \r too
        h, r = int(fy[6]), fy[7].decode()
        assert r in names
        assert fy[8] == (b"_" if fx[8] == b"_" else f"{h}:{r}".encode())
        heads.append(h)
        rels.append(r)
    # the same heads and relations as the parser and labeller give on the file read whole (with dummy heads)
    ann = tmp_path / "ann.conllu"
    ann.write_text(RAW.replace("\t_\t_\t_\t_\n", "\t0\t_\t_\t_\n").replace("\t_\t_\t0:root", "\t0\t_\t0:root"))
    ds = load_conllu(ann)
    want_h = [h[1:] for h in parser.predict(ds)]
    want_r = predict_relations(lab, ds, want_h)
    assert heads == np.concatenate(want_h).tolist() and rels == [r for rs in want_r for r in rs]


def test_evaluate_reports_las_beside_uas(model, capsys):
    m, train, _, _ = model
    assert main(["evaluate", "--model", m, "--data", f"conllu:{train}", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert 0 <= got["las"] <= got["uas"] <= 1 and "las_no_punct" in got


def test_labelled_scores_by_hand():
    sc = labelled_scores([[0, 1, 1]], [["root", "a", "b"]], [[0, 1, 2]], [["root", "b", "b"]],
                         pos=[["NN", "MAD", "NN"]])
    assert sc["uas"] == pytest.approx(2 / 3) and sc["las"] == pytest.approx(1 / 3)
    assert sc["uas_no_punct"] == pytest.approx(1 / 2) and sc["las_no_punct"] == pytest.approx(1 / 2)


@pytest.mark.parametrize("edit,msg", [
    (lambda t: t.replace("2\tw8\t_\tNOUN\tNO|x\tA=1\t_", "2\tw8\t_\tNOUN\tNO|x\tA=1\t1"), "give every token a head"),
    (lambda t: t.replace("4\tw4\t_\tNOUN", "4 w4\t_\tNOUN"), "9 tab-separated fields"),
    (lambda t: t.replace("w7", "w\udcff7"), "not UTF-8"),
])
def test_bad_input_is_one_line_naming_file_and_line(model, tmp_path, capsys, edit, msg):
    m, _, _, _ = model
    bad = tmp_path / "bad.conllu"
    bad.write_bytes(edit(RAW).encode("utf-8", "surrogateescape"))
    out = tmp_path / "o.conllu"
    capsys.readouterr()
    assert main(["parse", "--model", m, "--data", f"conllu:{bad}", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{bad}:" in err[0] and msg in err[0], err
    assert not out.exists()


def test_output_may_not_be_the_input(model, tmp_path, capsys):
    m, _, _, _ = model
    raw = tmp_path / "raw.conllu"
    raw.write_bytes(RAW.encode())
    assert main(["parse", "--model", m, "--data", f"conllu:{raw}", "--out", str(raw)]) == 2
    assert raw.read_bytes() == RAW.encode()


def test_a_held_out_fraction_chooses_c_and_the_whole_file_trains_it(model, tmp_path, capsys):
    """--dev 0.25 picks C on the last quarter, then the saved parser is that C trained on all 40 sentences: the
    same w as a fit of the whole file at that C without --dev; --no-refit keeps the candidate trained on 30."""
    m, train, rows, summary = model
    best = max(summary["candidates"], key=lambda r: r["dev_uas_no_punct"])
    assert summary["refit"]["refit_sentences"] == 40 and summary["refit"]["C"] == best["C"]
    whole = str(tmp_path / "whole")
    assert main(["train", "--data", f"conllu:{train}", "--slack", "one", "--eps", "0.01", "--C", str(best["C"]),
                 "--out", whole, "--json"]) == 0
    capsys.readouterr()
    saved = mmprog.load(m + ".json")
    np.testing.assert_allclose(saved.w, mmprog.load(whole + ".json").w, rtol=0, atol=1e-9)
    part = str(tmp_path / "part")
    assert main(["train", "--data", f"conllu:{train}", "--slack", "one", "--eps", "0.01", "--dev", "0.25",
                 "--C-grid", "0.1,1", "--no-refit", "--out", part, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "refit" not in out
    # the kept candidate's features are those of the first 30 sentences (the refit's, of all 40, are more)
    ds = load_conllu(str(train))
    dims = [ArcFeatureMap("mcdonald05").fit(d).dim for d in (ds[np.arange(30)], ds)]
    assert dims[0] < dims[1]
    assert mmprog.load(part + ".json").fmap.dim == dims[0] and saved.fmap.dim == dims[1]


def test_the_refit_leaves_the_checkpoint_to_the_candidates(model, tmp_path, capsys):
    """--checkpoint on a C path with --dev FRACTION: the refit (other sentences, other features) writes none, so the
    file still holds a candidate's fit and --resume of the same command takes it."""
    m, train, rows, summary = model
    ck = tmp_path / "c.ckpt"
    argv = ["train", "--data", f"conllu:{train}", "--slack", "one", "--eps", "0.01", "--dev", "0.25", "--C-grid",
            "1", "--out", str(tmp_path / "p"), "--json", "--checkpoint", str(ck), "--checkpoint-every", "1"]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(argv + ["--resume", str(ck) + ".npz"]) == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["refit"]["refit_sentences"] == 40


def test_split_dev_and_selection_errors(tmp_path):
    from mmprog.exceptions import ParameterError
    from mmprog.parsing import split_dev, train_treebank
    path = tmp_path / "t.conllu"
    labelled_treebank(path, 10, 3)
    ds = load_conllu(path)
    tr, dev = split_dev(ds, "0.3")
    assert len(tr) == 7 and len(dev) == 3
    assert [s["form"] for s in dev.sentences] == [s["form"] for s in ds.sentences[7:]]
    assert split_dev(ds, None) == (ds, None)
    for bad in ("0", "1.5", "0.01"):
        with pytest.raises(ParameterError, match="fraction"):
            split_dev(ds, bad)
    with pytest.raises(ParameterError, match="needs --dev"):
        train_treebank(ds, {"C": 1.0}, templates="mcdonald05,mst-ud")
    with pytest.raises(ParameterError, match="needs --dev"):
        train_treebank(ds, {}, C_grid=[0.1, 1.0])


def test_projective_parser_is_saved_and_parses_projective_trees(tmp_path, capsys):
    def is_projective(heads):
        spans = [(min(h, m), max(h, m)) for m, h in enumerate(heads, start=1)]
        return not any(a < c < b < d for a, b in spans for c, d in spans)
    train = tmp_path / "train.conllu"
    labelled_treebank(train, 20, 3)
    m = str(tmp_path / "proj")
    assert main(["train", "--data", f"conllu:{train}", "--slack", "one", "--eps", "0.1", "--C", "0.1",
                 "--projective", "--out", m, "--json"]) == 0
    parser = mmprog.load(m + ".json")
    assert parser.fmap.projective
    # on random scores a non-projective decoder often crosses arcs; the saved projective one never does
    rng = np.random.default_rng(0)
    parser.w = rng.normal(size=parser.w.shape)
    ds = load_conllu(str(train))
    assert all(is_projective(h[1:]) for h in parser.predict(ds))
    capsys.readouterr()
    assert main(["train", "--data", "tiny:seed=0", "--projective"]) == 2
    assert "--projective" in capsys.readouterr().err


def test_second_order_parser_trains_chooses_c_and_parses(tmp_path, capsys):
    train = tmp_path / "train.conllu"
    labelled_treebank(train, 30, 5)
    m = str(tmp_path / "sib")
    assert main(["train", "--data", f"conllu:{train}", "--slack", "one", "--eps", "0.1", "--second-order",
                 "--dev", "0.25", "--C-grid", "0.1,1", "--out", m, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [c["C"] for c in out["candidates"]] == [0.1, 1.0]
    parser = mmprog.load(m + ".json")
    assert parser.fmap.describe()["kind"] == "siblings" and any(g.startswith("sib:") for g in parser.fmap.group_names)
    # the chains of the file are projective and follow the tags: learnt
    assert out["train"]["uas"] > 0.9
    assert main(["evaluate", "--model", m, "--data", f"conllu:{train}"]) == 0
