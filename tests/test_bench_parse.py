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
