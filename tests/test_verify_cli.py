"""``mmprog verify``, ``mmprog show``, ``mmprog catalogue`` and ``train --show-every`` through the CLI entry point."""
import json

import highspy
import pytest

from mmprog import duality
from mmprog.cli import main
from mmprog.programs import l1m3n  # P1's statements (p1_value) moved from mmprog.duality to its program's module
from mmprog.programs import registered

SMALL = "tiny:seed=2,n_sequences=8"


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_verify_one_program_json(capsys):
    rc, out, _ = run(capsys, "verify", "--program", "l1m3n", "--data", SMALL, "--json")
    rows = json.loads(out)
    assert rc == 0
    assert rows and all(set(r) >= {"program", "statement", "lhs", "rhs", "gap", "tolerance", "status", "reason"}
                        for r in rows)
    assert {r["status"] for r in rows} <= {"pass", "skipped"}
    sd = [r for r in rows if r["statement"] == "strong duality: P1 value = optimum of the explicit LP dual"]
    assert sd[0]["status"] == "pass" and abs(sd[0]["lhs"] - sd[0]["rhs"]) <= sd[0]["tolerance"]


def test_verify_all_passes_or_says_why(capsys):
    rc, out, _ = run(capsys, "verify", "--program", "all", "--data", SMALL, "--solver", "highs", "--solver",
                     "ipopt", "--json")
    rows = json.loads(out)
    fails = [(r["program"], r["statement"], r["reason"]) for r in rows if r["status"] == "fail"]
    assert rc == 0 and not fails
    assert {r["program"] for r in rows} == set(registered())
    for r in rows:
        if r["status"] == "skipped":
            assert r["reason"]
    # the two programs of the engine are verified, not skipped
    for prog in ("m3n", "l1m3n"):
        assert sum(r["status"] == "pass" for r in rows if r["program"] == prog) >= 8


def test_verify_table_and_nonzero_exit_on_failure(capsys, monkeypatch):
    rc, out, _ = run(capsys, "verify", "--program", "m3n", "--data", SMALL, "--solver", "highs")
    assert rc == 0
    assert "strong duality" in out and "0 failed" in out
    # a wrong P1 value (as if the objective were mis-scaled) must make the run fail
    real = l1m3n.p1_value
    monkeypatch.setattr(l1m3n, "p1_value", lambda w, xi, budget: real(w, xi, budget) + 0.01)
    rc, out, _ = run(capsys, "verify", "--program", "l1m3n", "--data", SMALL, "--solver", "highs")
    assert rc == 1
    assert "fail" in out and "failed" in out


def test_verify_unknown_program_is_one_line_error(capsys):
    rc, out, err = run(capsys, "verify", "--program", "nope", "--data", SMALL)
    assert rc == 2 and err.count("\n") == 1 and "nope" in err


def test_show_prints_families_objective_and_newest_cuts(capsys, tmp_path):
    path = tmp_path / "dual.lp"
    rc, out, _ = run(capsys, "show", "--program", "l1m3n", "--data", SMALL, "--cuts", "2", "--dual",
                     "--export-dual", str(path))
    assert rc == 0
    for word in ("variables:", "mu", "nu", "xi", "constraints:", "cuts", "objective", "the newest 2",
                 "ΔF = {", "explicit dual:", "mu_bound", "nu_bound", "budget"):
        assert word in out, word
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    objective = float(out.split("objective ", 1)[1].split()[0])
    assert h.getInfo().objective_function_value == pytest.approx(objective, rel=1e-6)


def test_show_json(capsys):
    rc, out, _ = run(capsys, "show", "--program", "m3n", "--data", SMALL, "--param", "master=dual", "--json")
    doc = json.loads(out)
    assert rc == 0
    sizes = {v["name"]: v["size"] for v in doc["master"]["variables"]}
    assert sizes == {"alpha": doc["n_cuts"]}
    assert {c["name"] for c in doc["master"]["constraints"]} == {"budget"}


def test_train_show_every_prints_the_growing_master(capsys):
    rc, out, err = run(capsys, "train", "--program", "l1m3n", "--data", SMALL, "--show-every", "1", "--json")
    assert rc == 0
    n_iter = json.loads(out)["n_iter"]
    assert err.count("model l1m3n") == n_iter
    assert "working set:" in err


def test_catalogue_check_command(capsys):
    rc, out, _ = run(capsys, "catalogue", "--check")
    assert rc == 0, out
    assert "up to date" in out
