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
