"""``bench certify`` hands CRFsuite the very features mmprog trains on: every active input feature of a token, one
attribute each."""
import numpy as np
import pytest
import scipy.sparse as sp

import mmprog
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


def test_bench_swap_dev_and_stretch_rows_are_consistent(tmp_path):
    """The rows issue 37 asks beside the certified one, on the tiny corpus: the swap rows (the master on the
    route's working set solved by DAQP and HiGHS, P(w) of each solver's w by the serial and the process oracle), the
    C chosen on a held-out part (a warm-started C path) and the stretch row; each row's numbers recomputed from the
    others: a master optimum in the run's [lower, upper], a P(w) no lower than the certified lower bound and the
    same by both oracles, the dev choice the best dev F1."""
    import json
    from mmprog.bench import certify
    _corpus(tmp_path)
    rec = tmp_path / "certify.json"
    assert certify.main(["--task", "chunk", "--data-root", str(tmp_path), "--skip", "crfsuite", "--gap-tol", "1e-3",
                         "--stretch", "1e-4", "--swap", "daqp,highs", "--swap-oracles", "serial,process",
                         "--swap-fits", "--dev", "0.2", "--C-grid", "1,0.1", "--record", str(rec)]) == 0
    rows = json.loads(rec.read_text())["rows"]
    main = [r for r in rows if "train_seconds" in r and not r.get("stretch") and not r.get("swap_fit")]
    assert len(main) == 1 and main[0]["route"] == "bcfw" and main[0]["gap_tol"] == 1e-3
    lower, upper = main[0]["lower_bound"], main[0]["upper_bound"]
    tol = 1e-6 * max(1.0, abs(upper))

    swap = [r for r in rows if "master_solver" in r and not r.get("swap_fit")]
    assert sorted((r["master_solver"], r["oracle"]) for r in swap) == [
        ("daqp", "process"), ("daqp", "serial"), ("highs", "process"), ("highs", "serial")]
    first = swap[0]["master_objective"]
    for r in swap:
        assert "error" not in r and r["master_form"] == "n" and r["in_bounds"] == "pass"
        assert r["lower_bound"] == lower and r["run_upper_bound"] == upper and r["gap"] == main[0]["gap"]
        assert lower - tol <= r["master_objective"] <= upper + tol
        # P(w) at any w is ≥ P0's optimum ≥ the certified lower bound, and ≥ the master's optimum on a subset of
        # P0's constraints
        assert r["upper_bound"] >= lower - tol and r["upper_bound"] >= r["master_objective"] - tol
        assert r["w_gap"] == pytest.approx((r["upper_bound"] - lower) / max(1.0, abs(r["upper_bound"])))
        assert r["objective_diff_over_gap"] == pytest.approx(abs(r["master_objective"] - first) / (upper - lower))
        assert r["objective_diff_over_gap"] <= 1.0
        assert 0 <= r["test_f1"] <= 100
    for solver in ("daqp", "highs"):
        serial, process = (next(r for r in swap if r["master_solver"] == solver and r["oracle"] == o)
                           for o in ("serial", "process"))
        assert serial["master_objective"] == process["master_objective"]
        assert process["upper_bound"] == pytest.approx(serial["upper_bound"], rel=1e-9)

    # the user's swap: a whole fit per (solver, oracle back end), each certified, its master optimum between its
    # own bounds, all four within one gap of each other
    fits = [r for r in rows if r.get("swap_fit")]
    assert sorted((r["master_solver"], r["oracle"]) for r in fits) == [
        ("daqp", "process"), ("daqp", "serial"), ("highs", "process"), ("highs", "serial")]
    for r in fits:
        assert r["route"] == "bcfw" and r["termination"] == "converged" and r["gap"] <= 1e-3
        t = 1e-6 * max(1.0, abs(r["upper_bound"]))
        assert r["in_bounds"] == "pass" and r["lower_bound"] - t <= r["master_objective"] <= r["upper_bound"] + t
        assert r["objective_diff_over_gap"] <= 1.0 and r["f1_within_0_1_of_first"]
        assert r["objective_diff_over_gap"] == pytest.approx(
            abs(r["master_objective"] - fits[0]["master_objective"]) / (fits[0]["upper_bound"] - fits[0]["lower_bound"]))

    dev = [r for r in rows if r.get("dev_path") and not r.get("refit")]
    assert [r["C"] for r in dev] == [0.1, 1.0]                      # the path runs C increasing
    assert [r["warm_start"] for r in dev] == [False, True]
    chosen = [r for r in dev if r.get("chosen")]
    assert len(chosen) == 1 and chosen[0]["dev_f1"] == max(r["dev_f1"] for r in dev)
    assert "test_f1" in chosen[0] and all("test_f1" not in r for r in dev if not r.get("chosen"))
    for r in dev:
        assert r["route"] == "bcfw" and r["gap_tol"] == 1e-3 and 0 <= r["dev_f1"] <= 100
        assert r["termination"] != "converged" or r["gap"] <= 1e-3
    # the chosen C trained again on the whole file: its test F1 is that of a whole-file fit at that C, refitted here
    refit = [r for r in rows if r.get("refit")]
    assert len(refit) == 1 and refit[0]["C"] == chosen[0]["C"] and "dev_f1" not in refit[0]
    assert refit[0]["termination"] == "converged" and refit[0]["gap"] <= 1e-3
    train, ds, test, _ = certify._features("chunk", str(tmp_path), "rich", None)
    whole = mmprog.fit(ds, C=chosen[0]["C"], route="bcfw", gap_tol=1e-3, time_limit=600)
    assert refit[0]["test_f1"] == certify._mmprog_f1(whole.fmap, whole.w, ds, test)["test_f1"]
    assert refit[0]["gap"] == whole.gap

    stretch = [r for r in rows if r.get("stretch")]
    assert len(stretch) == 1 and stretch[0]["gap_tol"] == 1e-4
    assert stretch[0]["termination"] != "converged" or stretch[0]["gap"] <= 1e-4
    assert stretch[0]["train_seconds"] >= main[0]["train_seconds"]


def test_work_log_is_written_and_its_weights_refitted(tmp_path, capsys):
    """--work-log: the passes' log round-trips through the file, and the seconds per unit of work printed are the
    least-squares fit of the logged seconds (here made exactly from known weights, so the fit must give them back),
    beside the route's weights' prediction per pass kind."""
    import json

    from mmprog.bench.certify import write_work_log
    from mmprog.engine.bcfw import WORK_SECONDS
    from mmprog.inference.frank_wolfe import WORK
    rng = np.random.default_rng(4)
    truth = np.array([3e-8, 1e-8, 5e-10, 2e-9])
    log = []
    for k in range(40):
        work = rng.integers(1, 10 ** 6, len(WORK)).astype(float)
        log.append(("oracle" if k % 3 == 0 else "cache", float(work @ truth)) + tuple(work))
    path = str(tmp_path / "work.json")
    write_work_log(path, log)
    saved = json.load(open(path))
    assert saved["work"] == list(WORK) and [tuple(p) for p in saved["passes"]] == log
    out = capsys.readouterr().out
    for name, w in zip(WORK, truth):
        assert f"{name} {w:.3g} " in out
    want = sum(p[1] for p in log if p[0] == "oracle")
    pred = sum(float(np.array(p[2:]) @ WORK_SECONDS) for p in log if p[0] == "oracle")
    assert f"oracle passes 14: {want:.1f} CPU s, the route's weights predict {pred:.1f}" in out
    assert not (tmp_path / "work.json.tmp").exists()


def test_bench_cli_rows_time_the_users_command_and_its_solver_swaps(tmp_path):
    """``--cli``: the command a user types (``mmprog train --data ... --templates rich --out M``, its defaults) as a
    whole process, then with ``--solver daqp`` and ``--solver highs``: each row's gap and bounds are those of
    ``mmprog.fit`` at the command's defaults (route bcfw, C = 1, gap 1e-2) on the same features, refitted here; its
    F1 is the saved model's, recomputed here; the swaps keep the objective within the gap and F1 within 0.1."""
    import json

    from mmprog.bench import certify
    _corpus(tmp_path)
    rec = tmp_path / "certify.json"
    assert certify.main(["--task", "chunk", "--data-root", str(tmp_path), "--skip", "crfsuite", "--stretch", "0",
                         "--swap", "daqp,highs", "--cli", "--record", str(rec)]) == 0
    rows = [r for r in json.loads(rec.read_text())["rows"] if r.get("cli")]
    assert [r["solver"] for r in rows] == [None, "daqp", "highs"]
    train, ds, test, _ = certify._features("chunk", str(tmp_path), "rich", None)
    ref = mmprog.fit(ds, C=1.0, route="bcfw", gap_tol=1e-2, time_limit=600)
    f1 = certify._mmprog_f1(ref.fmap, ref.w, ds, test)["test_f1"]
    for r in rows:
        assert r["command_rc"] == 0 and "error" not in r and r["command_seconds"] >= r["fit_seconds"] > 0
        assert r["route"] == "bcfw" and r["C"] == 1.0 and r["gap_tol"] == 1e-2
        assert r["termination"] == "converged" and r["gap"] <= 1e-2
        assert r["upper_bound"] == pytest.approx(ref.upper_bound, rel=1e-9)
        assert r["lower_bound"] == pytest.approx(ref.primal_objective, rel=1e-9)
        assert r["test_f1"] == pytest.approx(f1, abs=1e-9)
    for r in rows[1:]:
        t = 1e-6 * max(1.0, abs(r["upper_bound"]))
        assert r["in_bounds"] == "pass" and r["lower_bound"] - t <= r["master_objective"] <= r["upper_bound"] + t
        assert r["objective_diff_over_gap"] <= 1.0 and r["f1_within_0_1_of_first"]


def test_bench_cache_passes_list_fits_once_per_count(tmp_path, capsys):
    """``--cache-passes 0,2,6``: one certified mmprog row per count, each the fit ``bcfw.fit(cache_passes=N)`` makes
    on the same features (its passes, passes inside the caches and bounds recomputed here), its time split into
    oracle and the rest; a count that is not an int ≥ 0 is refused in one line naming the option (exit 2)."""
    import json

    from mmprog.bench import certify
    from mmprog.engine import bcfw
    from mmprog.engine.oracle import Oracle
    _corpus(tmp_path)
    rec = tmp_path / "cp.json"
    assert certify.main(["--task", "chunk", "--data-root", str(tmp_path), "--skip", "crfsuite", "--stretch", "0",
                         "--gap-tol", "1e-4", "--cache-passes", "0,2,6", "--record", str(rec)]) == 0
    rows = [r for r in json.loads(rec.read_text())["rows"] if "train_seconds" in r]
    assert [r["setting"] for r in rows] == [f"bcfw C=1 cache_passes={n} gap_tol=0.0001" for n in (0, 2, 6)]
    _, ds, _, _ = certify._features("chunk", str(tmp_path), "rich", None)
    for n, r in zip((0, 2, 6), rows):
        fmap = certify._fmap(ds, 1, "seen")
        run = bcfw.fit(Oracle(fmap, fmap.prepare(ds)), C=1.0, gap_tol=1e-4, cache_passes=n)
        assert r["termination"] == run.termination == "converged" and r["gap"] <= 1e-4
        assert (r["passes"], r["cache_passes"]) == (run.n_passes, run.n_cache_passes)
        assert r["upper_bound"] == pytest.approx(run.upper_bound, rel=1e-12)
        assert r["lower_bound"] == pytest.approx(run.lower_bound, rel=1e-12)
        assert r["oracle_seconds"] > 0 and r["non_oracle_per_oracle"] == pytest.approx(
            r["non_oracle_seconds"] / r["oracle_seconds"])
    assert rows[0]["cache_passes"] == 0 and rows[2]["cache_passes"] == 6 * rows[2]["passes"]
    capsys.readouterr()
    for bad in ("2,x", "-1"):
        assert certify.main(["--task", "chunk", "--data-root", str(tmp_path), "--cache-passes", bad]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--cache-passes" in err[0] and bad in err[0]
