"""``bench ner`` hands SVM^hmm the very features mmprog trains on: the export read back equals the token rows."""
import numpy as np
import scipy.sparse as sp

from mmprog.bench.ner import _write_svmhmm
from mmprog.datasets.base import SequenceDataset


def _read(path):
    rows = []
    for line in open(path):
        tag, qid, *feats = line.split()
        rows.append((int(tag), int(qid.split(":")[1]), [(int(f.split(":")[0]), float(f.split(":")[1]))
                                                        for f in feats]))
    return rows


def test_export_reads_back_as_the_token_rows(tmp_path):
    rng = np.random.default_rng(0)
    X = [sp.random(T, 30, density=0.2, random_state=k, format="csr") for k, T in enumerate((3, 1, 4))]
    Y = [rng.integers(0, 3, size=x.shape[0]) for x in X]
    Y[2][1] = -1                                             # a hidden position (a testb tag unseen in training)
    ds = SequenceDataset(X, Y, 3)
    path = tmp_path / "train.dat"
    _write_svmhmm(ds, path, hidden_tag=1)
    rows = _read(path)
    assert len(rows) == sum(x.shape[0] for x in X)
    at = 0
    for q, (x, y) in enumerate(zip(X, Y)):
        dense = x.toarray()
        for t in range(x.shape[0]):
            tag, qid, feats = rows[at]
            at += 1
            assert qid == q + 1 and tag == (y[t] + 1 if y[t] >= 0 else 1)
            idx = [j for j, _ in feats]
            assert idx == sorted(idx) and min(idx, default=1) >= 1   # SVM^hmm wants 1-based ascending features
            back = np.zeros(30)
            back[np.array(idx, dtype=int) - 1] = [v for _, v in feats]
            np.testing.assert_allclose(back, dense[t], rtol=1e-9)
