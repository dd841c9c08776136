"""``bench certify`` hands CRFsuite the very features mmprog trains on: every active input feature of a token, one
attribute each."""
import numpy as np
import pytest
import scipy.sparse as sp

from mmprog.bench.certify import _attributes


def test_attributes_are_the_token_rows_active_features():
    X = sp.random(7, 40, density=0.2, random_state=3, format="csr")
    X.data[:] = 1.0
    attrs = _attributes(X)
    assert len(attrs) == X.shape[0]
    for t, a in enumerate(attrs):
        assert sorted(int(j) for j in a) == np.flatnonzero(X[t].toarray().ravel()).tolist()


def test_attributes_refuse_real_valued_rows():
    X = sp.csr_matrix(np.array([[0.0, 2.0, 1.0]]))
    with pytest.raises(ValueError, match="attribute of value 1"):
        _attributes(X)


def _corpus(tmp_path):
    """A tiny corpus laid out like CoNLL-2000 under tmp_path."""
    import gzip
    rng = np.random.default_rng(0)
    words, tags = ["a", "b", "c", "d"], ["B-NP", "I-NP", "O"]
    (tmp_path / "conll2000").mkdir()
    for name, n in (("train.txt.gz", 25), ("test.txt.gz", 8)):
        with gzip.open(tmp_path / "conll2000" / name, "wt") as f:
            for _ in range(n):
                for _ in range(int(rng.integers(2, 6))):
                    w = words[int(rng.integers(4))]
                    f.write(f"{w} {w.upper()} {tags[int(rng.integers(3))]}\n")
                f.write("\n")


@pytest.mark.parametrize("entry", ["certify", "crf --same-features"])
def test_bench_runs_mmprog_to_its_certificate_and_records_it(tmp_path, entry):
    """The whole bench path on a tiny corpus laid out like CoNLL-2000 (CRFsuite skipped: a bench extra), through
    ``bench certify`` and through ``bench crf --same-features`` (the same code): the mmprog row carries a certified
    gap, its bounds bracket each other, its F1 is a percentage and its time is split into oracle and the rest."""
    import json
    from mmprog.bench import certify, crf
    _corpus(tmp_path)
    rec = tmp_path / "certify.json"
    args = ["--task", "chunk", "--data-root", str(tmp_path), "--templates", "rich", "--skip", "crfsuite",
            "--gap-tol", "1e-3", "--stretch", "0", "--record", str(rec)]
    main = certify.main if entry == "certify" else lambda a: crf.main(["--same-features"] + a)
    assert main(args) == 0
    assert json.loads(rec.read_text())["bench"] == "certify"
    rows = [r for r in json.loads(rec.read_text())["rows"] if "train_seconds" in r]
    assert len(rows) == 1 and rows[0]["termination"] == "converged" and rows[0]["gap"] <= 1e-3
    assert rows[0]["lower_bound"] <= rows[0]["upper_bound"]
    assert 0 <= rows[0]["test_f1"] <= 100
    assert rows[0]["oracle_seconds"] > 0 and rows[0]["non_oracle_seconds"] > 0
    assert rows[0]["oracle_seconds"] + rows[0]["non_oracle_seconds"] <= rows[0]["train_seconds"]
