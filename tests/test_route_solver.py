"""``mmprog.fit(route="bcfw", solver=...)``: the route has no QP master of its own, so a given solver solves P0's
master on the route's working set (the master of record), checked against the enumerated optimum of P0
(tests/_enumerated.py: every labeling an explicit constraint, the full QP handed to highspy directly)."""
import numpy as np
import pytest

import mmprog

from _enumerated import solve_full, tiny

C = 0.7


@pytest.fixture(scope="module")
def instance():
    ds = tiny(seed=3)
    opt, _ = solve_full(ds, C)
    return ds, opt, mmprog.fit(ds, C=C, route="bcfw", gap_tol=1e-4)


@pytest.mark.parametrize("solver", ["daqp", "highs"])
def test_a_given_solver_solves_the_master_of_record(instance, solver):
    ds, opt, base = instance
    res = mmprog.fit(ds, C=C, route="bcfw", gap_tol=1e-4, solver=solver)
    assert res.route == "bcfw" and res.solver == solver and res.termination == "converged"
    m = res.master_solve
    assert m["solver"] == solver and m["in_bounds"] == "pass" and m["cuts"] > 0
    tol = 1e-6 * max(1.0, abs(opt))
    # the master holds a subset of P0's constraints: its optimum lies between the route's D(α) and P0's optimum
    assert res.primal_objective - tol <= m["objective"] <= opt + tol
    assert opt <= res.upper_bound + tol
    # w stays the route's certified point: the solve changes the statement of record, not the model
    assert np.array_equal(res.w, base.w) and res.gap == base.gap
    assert res.summary()["master_solve"] == m
    assert base.master_solve is None and "master_solve" not in base.summary()


def test_swapping_the_solver_moves_the_objective_less_than_the_gap(instance):
    ds, opt, base = instance
    a = mmprog.fit(ds, C=C, route="bcfw", gap_tol=1e-4, solver="daqp")
    b = mmprog.fit(ds, C=C, route="bcfw", gap_tol=1e-4, solver="highs")
    assert abs(a.master_solve["objective"] - b.master_solve["objective"]) <= a.upper_bound - a.primal_objective
    assert np.array_equal(a.predict(ds), b.predict(ds))
