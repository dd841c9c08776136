"""L∞'s hook for :mod:`mmprog.duality` (``mmprog verify --program linf``): (10) and its LP dual,
Propositions 1 and 2, (17), dual sparsity and cross-solver agreement."""
from __future__ import annotations

import numpy as np

from ..statements import Check, Duality, scale_of, duality_for
from ...exceptions import MMProgError


#: the tiny instance ``mmprog verify --program linf`` uses when the data are not (Phi, Psi) sets
LINF_DATA = dict(m=60, n_inputs=40, n_outputs=12, normalize=False, seed=0)


class LInfVerifyResult:
    """What :class:`LInfDuality` checks: the run of the engine's constraint generation over samples
    (:class:`mmprog.linf.LInfRun`) with the attributes :func:`check` reads (``program``, ``params``, ``model``,
    ``solver``, ``w``, ``extra``) and the engine that grew it (``engine``, for the cross-solver statement)."""

    program = "linf"
    slack = "n"

    def __init__(self, run, samples, b, solver, engine):
        self.run, self.samples, self.engine = run, samples, engine
        self.params = {"b": float(b)}
        self.model = run.model
        self.solver = solver
        self.w = np.asarray(run.w, dtype=np.float64)
        self.xi = np.zeros(0)
        self.alpha = np.asarray(run.alpha, dtype=np.float64)
        self.primal_objective = float(run.objective)
        self.extra = {"J": run.J}


@duality_for("linf")
class LInfDuality(Duality):
    """(10) min ‖w‖∞ s.t. zᵢᵀw ≥ b, its LP dual max b·Σα s.t. ‖Σ αᵢzᵢ‖₁ ≤ 1 (the program's ``dual_model``),
    Proposition 1 ((3) and (6) equal b/‖w‖∞), Proposition 2 (optimum b/minᵢ‖zᵢ‖₁) and (17)."""

    data_note = "(Phi, Psi) sets; on other data the tiny sparse_sets instance LINF_DATA"
    #: grown by the engine's constraint generation over samples, not mmprog.fit: the trainer handed to
    #: :meth:`fit` is the engine (:data:`mmprog.engine.routes.ENGINE`; ``mmprog show`` asks the hook)
    own_fit = True

    def accepts(self, dataset):
        return None

    def fit(self, dataset, trainer, solver=None, C=None, slack=None, eps=None, b=1.0, **kw):
        """(10) on ``dataset`` (a (Phi, Psi) pair, else :data:`LINF_DATA`) grown by ``trainer``, the engine
        (``trainer.sample_generation(program, samples, ...)``)."""
        from ...datasets import sparse_sets
        from .program import LInf
        from .samples import TensorSamples
        if isinstance(dataset, tuple) and len(dataset) >= 2:
            Phi, Psi = dataset[0], dataset[1]
        else:
            Phi, Psi = sparse_sets(**LINF_DATA)
        samples = TensorSamples(Phi, Psi)
        solver = solver or "highs"
        run = trainer.sample_generation(LInf(b=b), samples, solver=solver, n_start=10, batch=10, **kw)
        return LInfVerifyResult(run, samples, b, solver, trainer)

    def dual_model(self, result):
        from .program import LInf
        return LInf(b=result.params["b"]).dual_model(result.model)

    def checks(self, ctx):
        yield from linf_checks(ctx)


def linf_checks(ctx):
    """The program's own statements (:func:`mmprog.programs.linf.linf_checks`: Propositions 1 and 2, (17), LP
    duality of (10) from the numbers, its explicit dual per solver), then dual sparsity and cross-solver agreement
    of the constraint generation through Pyomo."""
    from . import checks
    from .program import LInf
    res = ctx.result
    run, samples, b = res.run, res.samples, res.params["b"]
    t = float(run.objective)
    solvers = list(ctx.solvers or ["highs"])
    # the program's rows at 1e-7 (simplex codes reach an LP's optimum to rounding); a solver that declares a looser
    # accuracy (Solver.lp_tolerance: an interior-point method's barrier tolerance) has its own rows at that one
    from ...solvers import get_solver
    strict = 1e-7
    tolerance = {n: get_solver(n).lp_tolerance for n in solvers}
    exact = [n for n in solvers if tolerance[n] <= strict]
    rows = checks.linf_checks(run, samples, solvers=exact, tol=strict)
    for name in solvers:
        if name not in exact:
            rows += [r for r in checks.linf_checks(run, samples, solvers=[name], tol=tolerance[name])
                     if f"({name})" in r["statement"]]
    for row in rows:
        yield Check(**{"program": ctx.name, **row})
    alpha = np.asarray(run.alpha, dtype=np.float64)
    n_nz = int(np.count_nonzero(alpha > 1e-9))
    yield ctx.check("dual sparsity: #{αᵢ > 0} ≤ #columns + 1 (a basic optimum of the dual LP)", n_nz,
                    len(run.master.keys) + 1, 0.0, "≤", reason=f"{n_nz} of {len(alpha)} multipliers non-zero")
    for name, why in ctx.cross_solvers("LP"):
        if name == res.solver:
            continue
        stmt = f"cross-solver: (10) by {res.solver} = (10) by {name} (constraint generation through Pyomo)"
        from ...solvers import get_solver
        if why is None and not get_solver(name).gives_duals:
            why = f"{name} returns no duals, which the constraint generation of (10) reads"
        if why is not None:
            yield ctx.skip(stmt, why)
            continue
        try:
            other = res.engine.sample_generation(LInf(b=b), samples, solver=name, route="pyomo", n_start=10,
                                                 batch=10)
            yield ctx.check(stmt, t, float(other.objective), 1e-6 * scale_of(t))
        except MMProgError as e:
            yield Check(ctx.name, stmt, t, None, None, None, "fail", str(e))
