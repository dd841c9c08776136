"""``bench parse`` hands both systems the same files: the PTB sample split by file as its README says, written as
CoNLL-U that reads back as the same trees."""
from pathlib import Path

import numpy as np
import pytest

from mmprog.bench.parse import PTB_TRAIN_FILES, prepare_files
from mmprog.datasets import load_conllu, load_malt_tab

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def test_ptb_split_by_file_reads_back_as_the_same_trees(tmp_path):
    src = DATA / "ptb_dependency_sample_nltk" / "wsj_0001-0199.dp.gz"
    if not src.exists():
        pytest.skip(f"{src} not available")
    counts = [int(line.split()[-1]) for line in open(src.parent / "file_sentence_counts.tsv")
              if line.split() and line.split()[-1].isdigit()]
    assert len(counts) == 199
    train, test = prepare_files("ptb", str(DATA), str(tmp_path))
    whole, tr, te = load_malt_tab(src), load_conllu(train), load_conllu(test)
    cut = sum(counts[:PTB_TRAIN_FILES])
    assert len(tr) == cut and len(te) == len(whole) - cut
    for a, b in ((whole.heads[:cut], tr.heads), (whole.heads[cut:], te.heads)):
        assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert [s["form"] for s in te.sentences] == [s["form"] for s in whole.sentences[cut:]]
    assert [s["pos"] for s in tr.sentences[:50]] == [s["pos"] for s in whole.sentences[:50]]


def test_bench_runs_mmprog_on_a_slice_and_records_its_certificates(tmp_path, capsys):
    """A smoke run of the bench (mmprog only, 40 sentences, C chosen on the dev file): the record holds the parser's
    and the labeller's terminations and gaps beside the scores."""
    import json

    from mmprog.bench.parse import main
    if not (DATA / "ud_swedish_talbanken").exists():
        pytest.skip("the shared Talbanken files are not available")
    rec = tmp_path / "parse.json"
    assert main(["--task", "talbanken", "--limit", "40", "--skip", "udpipe", "--data-root", str(DATA),
                 "--mmprog-args", "--slack one --eps 1 --drop-after 10 --arc-templates mcdonald05 --dev {dev} "
                 "--C-grid 0.01,0.1", "--record", str(rec)]) == 0
    row, = json.loads(rec.read_text())["rows"]
    assert row["system"] == "mmprog" and 0 < row["uas"] <= 100 and 0 < row["las"] <= row["uas"]
    assert row["termination"] in ("converged", "eps", "max_iter") and row["gap"] >= 0
    assert row["labeller_termination"] in ("converged", "eps", "max_iter") and row["labeller_gap"] >= 0
    assert row["chosen"] in ("mcdonald05 C=0.01", "mcdonald05 C=0.1") and row["parser_train_seconds"] > 0


def test_bench_records_how_many_templates_mtl_switches_off(tmp_path):
    """Issue 40's MTL row: the bench records the templates MTL drove below the paper's threshold beside the scores
    (the count the fit's summary gives, itself checked against the weights in test_mtl.py)."""
    import json

    from mmprog.bench.parse import main
    if not (DATA / "ud_swedish_talbanken").exists():
        pytest.skip("the shared Talbanken files are not available")
    rec = tmp_path / "parse.json"
    assert main(["--task", "talbanken", "--limit", "40", "--skip", "udpipe", "--data-root", str(DATA),
                 "--mmprog-args", "--program mtl --eps 1 --drop-after 10 --arc-templates mcdonald05",
                 "--record", str(rec)]) == 0
    row, = json.loads(rec.read_text())["rows"]
    assert 0 <= row["templates_removed"] < row["templates"] and 0 < row["uas"] <= 100


def test_bench_labeller_scores_certified_labellers_on_the_dev_gold_trees(tmp_path):
    """A smoke run of ``bench labeller`` (40 training sentences): one row per view set, each a certified bcfw fit,
    and its dev label accuracy is that of the saved rows' own labeller recomputed here."""
    import json

    from mmprog.bench.labeller import main
    from mmprog.datasets.base import TreeDataset
    from mmprog.parsing import predict_relations, train_labeller
    if not (DATA / "ud_swedish_talbanken").exists():
        pytest.skip("the shared Talbanken files are not available")
    rec = tmp_path / "labeller.json"
    assert main(["--limit", "40", "--C-grid", "0.1", "--data-root", str(DATA), "--record", str(rec)]) == 0
    rows = json.loads(rec.read_text())["rows"]
    assert [r["context"] for r in rows] == [False, True]
    for r in rows:
        assert r["route"] == "bcfw" and r["termination"] == "converged" and r["gap"] <= 1e-2
    base = DATA / "ud_swedish_talbanken" / "v1.0-pre_2015-01-05"
    whole, dev = load_conllu(base / "sv-ud-train.conll.gz"), load_conllu(base / "sv-ud-dev.conll.gz")
    lab = train_labeller(TreeDataset(whole.sentences[:40], whole.heads[:40]), C=0.1)
    pred = [r for rs in predict_relations(lab, dev, dev.heads) for r in rs]
    gold = [r for s in dev.sentences for r in s["deprel"]]
    assert rows[1]["dev_label_accuracy"] == round(100 * float(np.mean([p == g for p, g in zip(pred, gold)])), 2)
