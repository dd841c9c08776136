"""The defaults of a fit (issue 37): the certificate stops it, the route is the fastest certified one that covers it,
ε is an option named as such, and every result, summary and saved model carries its gap.

The truth is the enumerated optimum of the tiny programs (``tests/_enumerated.py``): a result's bounds must bracket
it, and its gap must be what the bounds say."""
import json

import numpy as np
import pytest

import mmprog
from _enumerated import solve_full, tiny
from mmprog.exceptions import ParameterError


def _bracket(res, opt):
    tol = 1e-6 * max(1.0, abs(opt))
    assert res.primal_objective - tol <= opt <= res.upper_bound + tol
    assert res.gap == pytest.approx((res.upper_bound - res.primal_objective) / max(1.0, abs(res.upper_bound)))


@pytest.mark.parametrize("program, kw", [("m3n", {}), ("m3n", {"slack": "one"}), ("l1m3n", {}),
                                         ("l1m3n", {"slack": "one"})])
def test_the_default_stops_at_a_certified_gap_that_brackets_the_optimum(program, kw):
    ds = tiny(seed=3)
    C = 0.8
    opt, _ = solve_full(ds, C, "l2" if program == "m3n" else "l1")
    res = mmprog.fit(ds, program=program, C=C, **kw)
    assert res.termination == "converged" and res.gap <= res.gap_tol == 1e-2
    _bracket(res, opt)
    # the certificate is a true one: the returned w is within the gap of the optimum
    assert (res.upper_bound - opt) / max(1.0, abs(res.upper_bound)) <= 1e-2 + 1e-9


def test_a_tighter_gap_tol_is_honoured():
    ds = tiny(seed=4)
    opt, _ = solve_full(ds, 1.0, "l2")
    res = mmprog.fit(ds, C=1.0, gap_tol=1e-4, route="cutting-plane")
    assert res.termination == "converged" and res.gap <= 1e-4 and res.gap_tol == 1e-4
    _bracket(res, opt)


def test_the_eps_rule_is_named_when_it_stops_before_the_certificate():
    """ε = 0.5 on the averaged 1-slack risk stops long before the gap is 1e-2: termination "eps", not "converged",
    with the (true) gap given; with ε small the same rule ends certified."""
    ds = tiny(seed=5, n=20)
    opt, _ = solve_full(ds, 1.0, "l2")
    loose = mmprog.fit(ds, C=1.0, slack="one", eps=0.5)
    assert loose.route == "cutting-plane"            # eps is a cutting-plane setting: auto does not pick bcfw
    assert loose.gap > 1e-2 and loose.termination == "eps"
    _bracket(loose, opt)
    tight = mmprog.fit(ds, C=1.0, slack="one", eps=1e-6)
    assert tight.termination == "converged" and tight.gap <= 1e-2
    # with both rules, whichever holds first: the gap here
    both = mmprog.fit(ds, C=1.0, slack="one", eps=1e-9, gap_tol=0.05)
    assert both.termination == "converged" and both.gap <= 0.05


def test_max_iter_is_not_converged_and_says_its_gap():
    ds = tiny(seed=6, n=20)
    res = mmprog.fit(ds, program="l1m3n", C=1.0, slack="one", max_iter=2)
    assert res.termination == "max_iter" and res.gap > 1e-2 and np.isfinite(res.gap)


def test_auto_takes_bcfw_where_it_covers_the_fit_and_the_cutting_plane_elsewhere():
    from mmprog.features import feature_map_for
    from mmprog.engine.routes import ENGINE
    from mmprog.programs import get_program
    ds = tiny(seed=7)
    fmap = feature_map_for(ds)
    prep = fmap.prepare(ds)
    assert ENGINE.covers("bcfw", get_program("m3n"), fmap, prep, "n")[0]
    ok, why = ENGINE.covers("bcfw", get_program("l1m3n"), fmap, prep, "n")
    assert not ok and "m3n" in why
    assert not ENGINE.covers("bcfw", get_program("m3n"), fmap, prep, "one")[0]
    assert mmprog.fit(ds).route == "bcfw"
    assert mmprog.fit(ds, eps=1e-3).route == "cutting-plane"               # a cutting-plane setting given
    # a solver is not one: bcfw still certifies the fit, and the solver solves the master on its working set
    res = mmprog.fit(ds, solver="highs")
    assert res.route == "bcfw" and res.solver == "highs" and res.master_solve["solver"] == "highs"
    assert res.primal_objective <= res.master_solve["objective"] * (1 + 1e-9) and \
        res.master_solve["objective"] <= res.upper_bound * (1 + 1e-9)
    assert mmprog.fit(ds, program="l1m3n").route == "cutting-plane"
    with pytest.raises(ParameterError, match="route='bcfw'.*m3n"):
        mmprog.fit(ds, program="l1m3n", route="bcfw")
    with pytest.raises(ParameterError, match="route"):
        mmprog.fit(ds, route="fastest")


def test_bcfw_default_brackets_the_optimum_and_verifies():
    from mmprog import duality
    ds = tiny(seed=8)
    opt, _ = solve_full(ds, 1.0, "l2")
    res = mmprog.fit(ds, C=1.0)
    assert res.route == "bcfw" and res.termination == "converged"
    _bracket(res, opt)
    checks = duality.check(res)
    assert checks[0].statement.startswith("bcfw certificate") and checks[0].status == "pass"
    assert not [c for c in checks if c.status == "fail"], [c.statement for c in checks if c.status == "fail"]


def test_a_warm_start_along_C_reaches_the_new_certificate():
    ds = tiny(seed=9)
    first = mmprog.fit(ds, C=0.5)
    opt, _ = solve_full(ds, 2.0, "l2")
    warm = mmprog.fit(ds, C=2.0, warm_start=first)
    assert warm.route == "bcfw" and warm.termination == "converged" and warm.params["C"] == 2.0
    _bracket(warm, opt)


def test_the_saved_model_and_the_summary_carry_the_gap(tmp_path):
    ds = tiny(seed=10)
    res = mmprog.fit(ds, program="l1m3n", C=1.0)
    path = res.save(tmp_path / "m")
    meta = json.loads(open(path, encoding="utf-8").read())["meta"]
    s = res.summary()
    for key in ("gap", "gap_tol", "route", "termination", "certifies"):
        assert meta[key] == s[key]
    assert meta["upper_bound"] == res.upper_bound and meta["lower_bound"] == res.primal_objective
    assert s["certifies"] == "program"


def test_the_subgradient_route_claims_no_lower_bound():
    ds = tiny(seed=11)
    res = mmprog.fit(ds, program="l1m3n", algorithm="subgradient", lam=1.0, max_iter=20)
    assert res.gap == np.inf and res.summary()["gap"] is None and res.termination != "converged"
    assert "no lower bound" in res.certifies


def test_train_chooses_C_on_held_out_text(tmp_path, capsys):
    """``--dev 0.25 --C-grid ...`` on token text: one row per C with its dev F1 (on stderr as it finishes), warm
    starts after the first C on route bcfw, the best kept; --C with --dev is refused."""
    from mmprog.cli import main
    from test_tagging import _sentences, _write
    train = tmp_path / "train.txt"
    _write(train, _sentences(60, 0))
    rc = main(["train", "--data", f"conll:{train},columns=form/pos/ne", "--templates", "ner", "--dev", "0.25",
               "--C-grid", "0.3,0.1,1", "--json", "--out", str(tmp_path / "chosen")])
    out = capsys.readouterr()
    assert rc == 0, out.err
    summary = json.loads(out.out)
    rows = summary["candidates"]
    assert [r["C"] for r in rows] == [0.1, 0.3, 1.0]
    printed = [json.loads(line) for line in out.err.strip().splitlines()[-4:]]
    assert [r["C"] for r in printed[:3]] == [0.1, 0.3, 1.0] and printed[3] == summary["refit"]
    assert [r["warm_start"] for r in rows] == [False, True, True]
    assert all(r["termination"] == "converged" and r["gap"] <= 1e-2 for r in rows + [summary["refit"]])
    best = max(rows, key=lambda r: r["dev_f1"])
    assert summary["chosen_C"] == best["C"] == summary["params"]["C"] and summary["dev_sentences"] == 15
    # the chosen C trained again on all 60 sentences: the model a fit of the whole file at that C gives
    assert summary["refit"]["refit_sentences"] == 60 and summary["refit"]["C"] == best["C"]
    assert main(["train", "--data", f"conll:{train},columns=form/pos/ne", "--templates", "ner", "--C",
                 str(best["C"]), "--json", "--out", str(tmp_path / "whole")]) == 0
    capsys.readouterr()
    np.testing.assert_array_equal(mmprog.load(str(tmp_path / "chosen.json")).w,
                                  mmprog.load(str(tmp_path / "whole.json")).w)
    rc = main(["train", "--data", f"conll:{train},columns=form/pos/ne", "--templates", "ner", "--dev", "0.25",
               "--C", "1"])
    assert rc == 2 and "--C" in capsys.readouterr().err


def test_train_route_option(capsys):
    from mmprog.cli import main
    for route, want in (("auto", "bcfw"), ("cutting-plane", "cutting-plane"), ("bcfw", "bcfw")):
        assert main(["train", "--data", "tiny:seed=0", "--route", route, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["route"] == want and out["termination"] == "converged" and out["gap"] <= out["gap_tol"]
    assert main(["train", "--data", "tiny:seed=0", "--eps", "1e-3", "--json"]) == 0       # eps: the cutting plane
    assert json.loads(capsys.readouterr().out)["route"] == "cutting-plane"
    assert main(["train", "--data", "tiny:seed=0", "--program", "l1m3n", "--route", "bcfw"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "route='bcfw'" in err[0] and "m3n" in err[0]
