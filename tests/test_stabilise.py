"""In-out stabilisation and the gap stop of the cutting-plane engine (mmprog.engine.loop.run, ``stabilise``,
``gap_tol``): the master is unchanged, so the stabilised fit reaches the optimum of the full program with every
labeling as an explicit constraint (tests/_enumerated.py, solved by highspy directly), its lower bound is a master
optimum (≤ that optimum) and its upper bound a full objective (≥ it)."""
import numpy as np
import pytest

import mmprog
from mmprog.exceptions import ParameterError

from _enumerated import solve_full, tiny


@pytest.mark.parametrize("slack", ["n", "one"])
@pytest.mark.parametrize("weight", [0.5, 0.8])
@pytest.mark.parametrize("drop_after", [None, 1])
@pytest.mark.parametrize("line_search", [0, 4])
def test_inout_reaches_the_enumerated_optimum(slack, weight, drop_after, line_search):
    ds = tiny(seed=3)
    C, eps = 0.7, 1e-4
    opt, _ = solve_full(ds, C, "l1")
    res = mmprog.fit(ds, program="l1m3n", C=C, slack=slack, eps=eps, stabilise="in-out", inout_weight=weight,
                     drop_after=drop_after, line_search=line_search)
    assert res.termination == "converged"
    tol = 1e-5 * max(1.0, abs(opt))
    assert res.primal_objective <= opt + tol
    assert opt <= res.primal_objective + C * len(ds) * eps + tol
    assert res.upper_bound >= opt - tol
    # the eps test is made at a master-point separation only: the returned w is eps-feasible
    assert res.dual_objective == pytest.approx(res.primal_objective, rel=1e-4, abs=1e-5)


@pytest.mark.parametrize("stabilise,line_search", [(None, 0), ("in-out", 0), ("in-out", 4)])
def test_gap_stop_brackets_the_enumerated_optimum(stabilise, line_search):
    ds = tiny(seed=7, n=16)
    C = 1.0
    opt, _ = solve_full(ds, C, "l1")
    res = mmprog.fit(ds, program="l1m3n", C=C, eps=1e-9, gap_tol=1e-3, stabilise=stabilise,
                     line_search=line_search)
    assert res.termination == "converged"
    tol = 1e-6 * max(1.0, abs(opt))
    # lower bound (a master optimum) ≤ optimum ≤ upper bound (a full objective), within the relative gap asked
    assert res.primal_objective <= opt + tol
    assert res.upper_bound >= opt - tol
    assert res.upper_bound - res.primal_objective <= 1e-3 * max(1.0, abs(res.upper_bound)) + tol
    h = res.history[-1]
    assert h.lower_bound == pytest.approx(res.primal_objective)


def test_inout_and_kelley_reach_the_same_optimum():
    ds = tiny(seed=3, n=20)
    a = mmprog.fit(ds, program="l1m3n", C=1.0, eps=1e-6)
    b = mmprog.fit(ds, program="l1m3n", C=1.0, eps=1e-6, stabilise="in-out")
    assert b.primal_objective == pytest.approx(a.primal_objective, rel=1e-5, abs=1e-6)
    assert a.termination == b.termination == "converged"


@pytest.mark.parametrize("kw,word", [({"stabilise": "level"}, "stabilise"), ({"stabilise": "in-out",
                                      "inout_weight": 1.0}, "inout_weight"), ({"gap_tol": 0}, "gap_tol"),
                                     ({"stabilise": "in-out", "line_search": -1}, "line_search")])
def test_parameters_are_checked(kw, word):
    with pytest.raises(ParameterError, match=word):
        mmprog.fit(tiny(seed=1), program="l1m3n", **kw)


def test_a_resumed_stabilised_fit_reaches_the_enumerated_optimum(tmp_path):
    ds = tiny(seed=3)
    C, eps = 0.7, 1e-4
    opt, _ = solve_full(ds, C, "l1")
    ck = tmp_path / "p1.npz"
    first = mmprog.fit(ds, program="l1m3n", C=C, eps=eps, max_iter=2, stabilise="in-out", checkpoint=str(ck))
    assert first.termination == "max_iter"
    res = mmprog.fit(ds, eps=eps, resume=str(ck), stabilise="in-out")
    assert res.termination == "converged"
    tol = 1e-5 * max(1.0, abs(opt))
    assert res.primal_objective <= opt + tol <= res.primal_objective + C * len(ds) * eps + 2 * tol
    assert res.upper_bound >= opt - tol
