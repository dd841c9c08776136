"""``bench ocr --ocr100``: a signal ends the protocol with the interrupted fit's row, not just that one fit.

Ground truth: a real SIGTERM sent to this process during the first fold's fit (as a scheduler or Ctrl-C would),
and the count of fits the protocol started.
"""
import argparse
import os
import signal

import numpy as np

import mmprog
from mmprog.bench.ocr import _ocr100
from mmprog.datasets.base import SequenceDataset


def test_a_signal_during_a_fold_ends_the_protocol(monkeypatch, capsys):
    rng = np.random.default_rng(0)
    words = 30
    X = [rng.integers(0, 2, size=(int(rng.integers(2, 5)), 6)).astype(float) for _ in range(words)]
    Y = [rng.integers(0, 3, size=x.shape[0]) for x in X]
    ds = SequenceDataset(X, Y, 3)
    folds = np.repeat(np.arange(10), 3)
    real_fit, calls = mmprog.fit, []

    def fit_signalled_in_round_2(data, **kw):
        calls.append(kw)

        def show(model, rec):
            if rec.iteration == 2:
                os.kill(os.getpid(), signal.SIGTERM)
        return real_fit(data, show=show, show_every=1, **kw)

    monkeypatch.setattr(mmprog, "fit", fit_signalled_in_round_2)
    args = argparse.Namespace(programs=["l1m3n"], C100=[1.0], folds=[0, 1, 2], time_limit=60,
                              p1_algorithm="cutting_plane")
    assert _ocr100(ds, folds, args) == 130
    out = capsys.readouterr().out
    assert len(calls) == 1
    row = [line for line in out.splitlines() if line.split()[:1] == ["l1m3n"]]
    assert len(row) == 1 and "interrupted" in row[0] and row[0].split()[2] == "0"
    assert "interrupted during fold 0: the remaining fits were not started" in out


def test_the_taskar_split_rows_of_both_separation_points_bound_one_optimum(tmp_path, capsys):
    """``bench ocr --eps 0.1``: one mmprog row per separation point (Kelley's, and in-out stabilised), each a fit of
    P0 on fold 0 in a child process. Both bracket the same program's optimum, so each row's master optimum (a lower
    bound) lies below the other's full objective at its w (an upper bound); the ε rule ended both."""
    import json
    from pathlib import Path

    import pytest

    from mmprog.bench.ocr import main
    from mmprog.datasets.registry import default_data_root
    path = Path(os.environ.get("MMPROG_DATA") or default_data_root()) / "ocr_letters" / "letters.npz"
    if not path.exists():
        pytest.skip(f"shared data absent: {path}")
    rec = tmp_path / "ocr.json"
    assert main(["--path", str(path), "--eps", "0.1", "--record", str(rec)]) == 0
    rows = json.loads(rec.read_text())["rows"]
    assert [r["setting"] for r in rows] == ["eps=0.1 one-slack oracle=serial",
                                            "eps=0.1 one-slack in-out oracle=serial"]
    for r in rows:
        assert r["termination"] in ("eps", "converged") and r["objective"] <= r["upper"]
        assert 0.0 < r["test_err"] < 0.5          # scored here from the model the child wrote
    assert max(r["objective"] for r in rows) <= min(r["upper"] for r in rows)
    assert "separation: in-out" in capsys.readouterr().out
