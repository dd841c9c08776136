"""DAQP (Arnström, Bemporad & Axehill, "A dual active-set solver for embedded quadratic programming using recursive
LDLᵀ updates", IEEE TAC 2022) as a registered back end for convex QPs: dense, exact active-set, in C.

It is the back end of choice for the Gram-dual masters (``m3n``'s, Theorem 3 of the ICML 2008 Laplace M³N paper):
a dense QP over a few hundred cut multipliers α with one budget row per slack, whose optimal support is a small part
of the cuts. Measured on the 498 successive 1-slack masters of the OCR fold-0 fit (C = 100/626, eps 0.01; the
arrays dumped from the run, one core, summed over the masters): HiGHS's active-set QP 10.9 s cold (12.3 s in the
run, persistent); DAQP 7.7 s cold, 4.6 s warm-started from the previous α; PIQP 3.7 s; proxsuite 6.9 s cold, 6.5 s
warm; OSQP 28 s, Clarabel 42 s (through qpsolvers); and DAQP on the working set of the previous support plus the new
cut, grown by the KKT violators of the full master until there are none (:mod:`mmprog.engine.daqp_native`),
0.40 s — the same optima to 5e-16 relative. HiGHS on that same shrunk set took 1.8 s.

Through Pyomo (:meth:`DaqpSolver.solve`) any QP with linear constraints is extracted into DAQP's dense form
min ½xᵀHx + fᵀx s.t. blower ≤ [x; Ax] ≤ bupper (Pyomo's standard representation of the objective and rows).

Dual sign convention: DAQP's multiplier λ of a row is ≥ 0 at an active upper bound and ≤ 0 at an active lower bound
(stationarity Hx + f + Aᵀλ = 0), so the derivative of the minimum with respect to the bound is −λ; a maximisation is
handed over negated, and there the derivative of the maximum is +λ. :meth:`DaqpSolver.normalise_duals` maps the raw
λ stored in ``model.dual`` accordingly (a test checks it against finite differences and HiGHS).
"""
from __future__ import annotations

import importlib.util
import time

import numpy as np

from ..exceptions import SolverError
from .base import (SOLVE_TIME_LIMIT, Availability, AvailabilityReport, ProblemClass, Solver, SolveStatus, active_objective,
                   dual_suffix, one_line_message, pyomo_core, probe_model, record_duals, register)

#: DAQP's exit flags (its header's names, the solver's own words) -> normalised termination. Soft constraints are
#: never used by mmprog, so a "soft optimum" is not taken as an optimum.
DAQP_STATUS = {
    2: ("EXIT_SOFT_OPTIMAL", "other"),
    1: ("EXIT_OPTIMAL", "optimal"),
    -1: ("EXIT_INFEASIBLE", "infeasible"),
    -2: ("EXIT_CYCLE", "numerical"),
    -3: ("EXIT_UNBOUNDED", "unbounded"),
    -4: ("EXIT_ITERLIMIT", "max_iterations"),
    -5: ("EXIT_NONCONVEX", "numerical"),
    -6: ("EXIT_OVERDETERMINED_INITIAL", "numerical"),
    -7: ("EXIT_TIMELIMIT", "max_time"),
}

#: DAQP's bound for "no bound" (its INF)
DAQP_INF = 1e30


def daqp_status(flag, iterations, elapsed, objective=None):
    """A :class:`SolveStatus` from DAQP's exit flag, in its own words."""
    words, termination = DAQP_STATUS.get(int(flag), (f"exit flag {int(flag)}", "other"))
    ok = termination == "optimal"
    return SolveStatus(termination, "optimal" if ok else "none",
                       f"DAQP {words} (exit flag {int(flag)}) after {int(iterations)} iterations", float(elapsed),
                       objective if ok else None)


def solve_dense(H, f, A, bupper, blower, sense=None, *, primal_start=None, time_limit=None, options=None):
    """One DAQP solve of min ½xᵀHx + fᵀx s.t. blower ≤ [x; Ax] ≤ bupper.

    Parameters
    ----------
    H : ndarray, shape (n, n)
        Symmetric positive semi-definite (a singular H is handled by DAQP's proximal-point outer loop).
    f : ndarray, shape (n,)
    A : ndarray, shape (m, n)
    bupper, blower : ndarray, shape (n + m,)
        Simple bounds on x first, then the rows; ±1e30 for none.
    sense : ndarray of int32, shape (n + m,), optional
        DAQP's constraint types (0 inequality, 5 equality).
    primal_start : ndarray, shape (n,), optional
        Warm start: DAQP takes the constraints nearly active there as its first working set.
    time_limit : float, optional
        Seconds (DAQP's own ``time_limit`` setting; default :data:`mmprog.solvers.SOLVE_TIME_LIMIT`); its
        iteration limit stays on too.
    options : dict, optional
        DAQP settings by their names (``iter_limit``, ``primal_tol``, ``eps_prox``, ...).

    Returns
    -------
    x : ndarray, shape (n,)
    lam : ndarray, shape (n + m,)
        DAQP's multipliers (≥ 0 at an active upper bound, ≤ 0 at an active lower one).
    status : SolveStatus
        Not checked here: the caller raises through :func:`mmprog.solvers._finish`.
    """
    import daqp
    n = len(f)
    if sense is None:
        sense = np.zeros(len(bupper), dtype=np.int32)
    # DAQP's own proximal-point tolerances stay: on singular H (Gram matrices of more cuts than features) a tighter
    # eta_prox (1e-12) never stopped on a 1,082-cut n-slack master (iteration limit), 1e-9 was 40 % slower
    settings = {"iter_limit": 100000}
    settings.update(options or {})
    # no solve runs unbounded: DAQP's own time limit, the package default when none is given
    settings["time_limit"] = float(time_limit) if time_limit else SOLVE_TIME_LIMIT
    kw = {} if primal_start is None else {"primal_start": np.ascontiguousarray(primal_start, dtype=float)}
    t0 = time.perf_counter()
    try:
        x, fval, flag, info = daqp.solve(np.ascontiguousarray(H, dtype=float), np.ascontiguousarray(f, dtype=float),
                                         np.ascontiguousarray(A, dtype=float).reshape(-1, n),
                                         np.ascontiguousarray(bupper, dtype=float),
                                         np.ascontiguousarray(blower, dtype=float),
                                         np.ascontiguousarray(sense, dtype=np.int32), **kw, **settings)
    except TypeError as exc:      # an unknown setting name
        raise SolverError(f"solver daqp rejected its options: {one_line_message(exc)}", termination="error",
                          solver_message=one_line_message(exc)) from exc
    elapsed = time.perf_counter() - t0
    status = daqp_status(flag, info.get("iterations", 0), elapsed, float(fval))
    return np.asarray(x, dtype=float), np.asarray(info.get("lam", np.zeros(len(bupper))), dtype=float), status


def _pyomo_qp(model):
    """Dense (H, f, constant, A, lower, upper) of a Pyomo QP with linear rows, its variables and rows in order.

    The objective is returned as a minimisation (negated for a maximisation, with ``sign`` = −1)."""
    from pyomo.repn.standard_repn import generate_standard_repn
    pe = pyomo_core()
    obj = active_objective(model)
    sign = 1.0 if obj.sense == pe.minimize else -1.0
    rows = list(model.component_data_objects(pe.Constraint, active=True, descend_into=True))
    index, variables = {}, []

    def col(v):
        k = index.get(id(v))
        if k is None:
            k = index[id(v)] = len(variables)
            variables.append(v)
        return k

    orep = generate_standard_repn(obj.expr, quadratic=True)
    if orep.nonlinear_expr is not None:
        raise SolverError("solver daqp takes quadratic objectives only; the objective is non-linear",
                          termination="error", solver_message="")
    lin = [(col(v), float(c)) for v, c in zip(orep.linear_vars, orep.linear_coefs)]
    quad = [(col(a), col(b), float(c)) for (a, b), c in zip(orep.quadratic_vars, orep.quadratic_coefs)]
    crow = []
    for c in rows:
        rep = generate_standard_repn(c.body, quadratic=False)
        if rep.nonlinear_expr is not None or not rep.is_linear():
            raise SolverError(f"solver daqp takes linear constraints only; {c.name} is not linear",
                              termination="error", solver_message="")
        lo = pe.value(c.lower) if c.has_lb() else None
        up = pe.value(c.upper) if c.has_ub() else None
        const = float(rep.constant)
        crow.append(([col(v) for v in rep.linear_vars], [float(a) for a in rep.linear_coefs],
                     -DAQP_INF if lo is None else lo - const, DAQP_INF if up is None else up - const,
                     c.equality))
    n = len(variables)
    H = np.zeros((n, n))
    for i, j, c in quad:
        if i == j:
            H[i, i] += 2.0 * c
        else:
            H[i, j] += c
            H[j, i] += c
    f = np.zeros(n)
    for i, c in lin:
        f[i] += c
    A = np.zeros((len(crow), n))
    lo_rows, up_rows, eq = np.empty(len(crow)), np.empty(len(crow)), np.zeros(len(crow), dtype=bool)
    for k, (cols, coefs, lo, up, is_eq) in enumerate(crow):
        np.add.at(A[k], cols, coefs)
        lo_rows[k], up_rows[k], eq[k] = lo, up, is_eq
    lo_x = np.array([-DAQP_INF if v.lb is None else float(v.lb) for v in variables])
    up_x = np.array([DAQP_INF if v.ub is None else float(v.ub) for v in variables])
    sense = np.concatenate([np.zeros(n, np.int32), np.where(eq, 5, 0).astype(np.int32)])
    return (sign * H, sign * f, float(orep.constant), A, np.concatenate([lo_x, lo_rows]),
            np.concatenate([up_x, up_rows]), sense, sign, variables, rows)


@register("daqp")
class DaqpSolver(Solver):
    """DAQP (daqp on PyPI): dual active-set QP in C on dense data; exact, warm-startable, no licence."""

    capabilities = frozenset({ProblemClass.QP})
    gives_duals = True
    persistent = False
    description = "DAQP (daqp): dense dual active-set convex QP in C; the Gram-dual masters' default"
    install = "install it with: pip install daqp"

    def _probe(self):
        if importlib.util.find_spec("daqp") is None:
            return AvailabilityReport(Availability.NotFound, f"the daqp module is not installed; {self.install}")
        m, expected = probe_model(quadratic=True)
        status = self._solve(m, {}, False, False, 10.0)
        if not status.ok or abs(status.objective - expected) > 1e-6:
            return AvailabilityReport(Availability.BadVersion,
                                      f"DAQP failed its test QP ({status.solver_message}, objective "
                                      f"{status.objective}, expected {expected}); reinstall daqp")
        from importlib.metadata import version
        return AvailabilityReport(Availability.FullLicense, f"DAQP {version('daqp')} works")

    def _solve(self, model, options, warm, load_duals, time_limit):
        H, f, const, A, lo, up, sense, sign, variables, rows = _pyomo_qp(model)
        start = None
        if warm:
            start = np.array([0.0 if v.value is None else float(v.value) for v in variables])
        x, lam, status = solve_dense(H, f, A, up, lo, sense, primal_start=start, time_limit=time_limit,
                                     options=options)
        if status.termination == "optimal":
            for v, val in zip(variables, x):
                v.set_value(float(val), skip_validation=True)
            status.objective = sign * (0.5 * float(x @ H @ x) + float(f @ x)) + const
            if load_duals:
                suffix = dual_suffix(model, create=True)
                for c, y in zip(rows, lam[len(variables):]):
                    suffix[c] = float(y)
                record_duals(model, ("daqp", "daqp"))
        return status

    def normalise_duals(self, raw, minimise, route=None):
        raw = np.asarray(raw, dtype=float)
        return -raw if minimise else raw
