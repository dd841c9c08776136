"""ARCHITECTURE.md: "to add a master back end, add one module" — done here from outside the package.

A solver is registered by name (``mmprog.solvers.register``) and a back end for the Gram dual form by
(form, solver) (``mmprog.engine.masters.back_end``): an accelerated projected-gradient method (FISTA; Beck &
Teboulle 2009) on max Σ α Δℓ − ½ αᵀGα over {α ≥ 0, Σ_{r∈Sᵢ} α_r ≤ C·s}, projected slack by slack. Nothing of the
package is edited: the engine's one chooser (``mmprog.engine.masters.choose``) hands P0's Gram dual to it, and the
fit reaches the optimum of P0 computed independently, over every labeling, by highspy (``tests/_enumerated.py``).
"""
import numpy as np
import pytest

import mmprog
from _enumerated import all_constraints, solve_enumerated, tiny
from mmprog.engine import masters
from mmprog.projections import simplex
from mmprog.solvers import base as solver_base
from mmprog.solvers import Availability, AvailabilityReport, ProblemClass, Solver, SolveStatus, register

CALLS = []


def budget_projection(v, budget):
    """Euclidean projection onto {α ≥ 0, Σ α ≤ budget}."""
    clipped = np.maximum(v, 0.0)
    return clipped if clipped.sum() <= budget else simplex(v, budget)


def fista_gram_dual(G, dl, slack, budget, tol=1e-12, max_steps=200_000):
    """max Σ α Δℓ − ½ αᵀGα over {α ≥ 0, Σ_{r∈S_i} α_r ≤ budget}: returns (α, steps)."""
    L = max(float(np.linalg.eigvalsh(G).max()), 1e-12)
    slacks = [np.flatnonzero(slack == i) for i in np.unique(slack)]

    def project(v):
        out = np.empty_like(v)
        for rows in slacks:
            out[rows] = budget_projection(v[rows], budget)
        return out

    alpha = y = np.zeros(len(dl))
    t = 1.0
    for step in range(1, max_steps + 1):
        new = project(y + (dl - G @ y) / L)
        t_new = (1 + np.sqrt(1 + 4 * t * t)) / 2
        y = new + (t - 1) / t_new * (new - alpha)
        moved = float(np.abs(new - alpha).max(initial=0.0))
        alpha, t = new, t_new
        if moved <= tol:
            return alpha, step
    return alpha, max_steps


@pytest.fixture
def outside_back_end(monkeypatch):
    """Registers the solver and its back end as an outside module would, in copies of the registries."""
    monkeypatch.setattr(solver_base, "REGISTRY", dict(solver_base.REGISTRY))
    monkeypatch.setattr(solver_base, "_INSTANCES", dict(solver_base._INSTANCES))
    monkeypatch.setattr(masters, "BACK_ENDS", dict(masters.BACK_ENDS))

    @register("fista")
    class Fista(Solver):
        capabilities = frozenset({ProblemClass.QP})
        description = "accelerated projected gradient on the Gram dual (an outside back end)"

        def _probe(self):
            return AvailabilityReport(Availability.FullLicense, "numpy only")

    @masters.back_end("gram_dual", "fista")
    class FistaGramDual:
        @staticmethod
        def solve(program, model, solver, options=None, time_limit=None):
            ws = model.ws
            G = program.gram_rows(model, list(range(ws.size)))
            alpha, steps = fista_gram_dual(G, ws.dl_array(), ws.example_array(),
                                           float(model.C.value) * model.slack_scale)
            for var, a in zip(ws.components, alpha):
                var.set_value(float(a), skip_validation=True)
            CALLS.append(steps)
            objective = float(alpha @ ws.dl_array() - 0.5 * alpha @ G @ alpha)
            return SolveStatus("optimal", "optimal", f"FISTA stopped after {steps} steps", 0.0, objective)

    CALLS.clear()
    yield FistaGramDual


@pytest.mark.parametrize("slack", ["n", "one"])
def test_outside_back_end_reaches_the_enumerated_optimum(outside_back_end, slack):
    ds, C = tiny(seed=5, n=6), 0.7
    res = mmprog.fit(ds, program="m3n", master="dual", C=C, slack=slack, solver="fista", eps=1e-7)
    assert res.solver == "fista" and CALLS, "the engine did not hand the Gram dual to the outside back end"
    assert res.termination == "converged"
    A, dl, ex = all_constraints(ds)
    optimum, _ = solve_enumerated(A, dl, ex, len(ds), C)
    assert res.primal_objective == pytest.approx(optimum, rel=1e-5)
    # the one chooser picks it for exactly this (form, solver) pair, and only while it is registered
    prog = mmprog.programs.get_program("m3n", master="dual")
    assert masters.choose(prog, res.model, mmprog.solvers.get_solver("fista")) is outside_back_end
    assert masters.choose(prog, res.model, mmprog.solvers.get_solver("highs")) is masters.GramDualHiGHSRoute
