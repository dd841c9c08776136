"""The native master (one highspy object fed CSR blocks) and the constraint generation over samples
(:func:`solve_linf`)."""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ...cuts import Cuts
from ...exceptions import ParameterError, check_param
from ...solvers import ProblemClass, get_solver
from ..base import Dims
from ...solvers import values_of
from .program import LInf


log = logging.getLogger("mmprog.linf")


class NativeMaster:
    """(10) in one highspy object, fed with CSR blocks from the master's arrays (the native HiGHS route).

    Column 0 is t (cost 1, t ≥ 0), column p + 1 the master's p-th column; per new column the rows w − t ≤ 0 and
    w + t ≥ 0, per sample its margin row ≥ b. Writing the same LP through Pyomo's persistent interface costs about
    0.4 ms per column and per row (expression walks and per-row interface calls): 150 of 250 s at m = 10⁵ on the
    sparse generator. The Pyomo model is then written on demand (:meth:`LInf.materialise`); a test checks both
    routes reach the same optimum.
    """

    def __init__(self):
        import highspy
        self.highspy = highspy
        self.h = highspy.Highs()
        self.h.setOptionValue("output_flag", False)
        self.inf = highspy.kHighsInf
        self.h.addVar(0.0, self.inf)
        self.h.changeColCost(0, 1.0)
        self.n_cols = 0
        self.upper_rows, self.lower_rows, self.margin_rows = [], [], []
        self.n_rows = 0

    def _add_rows(self, lower, upper, A):
        A = sp.csr_matrix(A)
        self.h.addRows(A.shape[0], np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64),
                       A.nnz, A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32),
                       A.data.astype(np.float64))
        first = self.n_rows
        self.n_rows += A.shape[0]
        return np.arange(first, self.n_rows)

    def add(self, n_new, Zr, b):
        """Append ``n_new`` columns with their bound rows and the margin rows ``Zr`` (over column positions)."""
        if n_new:
            self.h.addVars(n_new, np.full(n_new, -self.inf), np.full(n_new, self.inf))
            cols = 1 + self.n_cols + np.arange(n_new)
            # rows (w_c, t) with coefficients (1, -1) and (1, 1)
            idx = np.stack([np.zeros(n_new, dtype=np.int64), cols], axis=1).ravel()
            ptr = np.arange(0, 2 * n_new + 1, 2)
            up = sp.csr_matrix((np.tile([-1.0, 1.0], n_new), idx, ptr), shape=(n_new, 1 + self.n_cols + n_new))
            lo = sp.csr_matrix((np.tile([1.0, 1.0], n_new), idx, ptr), shape=up.shape)
            self.upper_rows.extend(self._add_rows(np.full(n_new, -self.inf), np.zeros(n_new), up).tolist())
            self.lower_rows.extend(self._add_rows(np.zeros(n_new), np.full(n_new, self.inf), lo).tolist())
            self.n_cols += n_new
        if Zr.shape[0]:
            Zr = sp.csr_matrix(Zr)
            A = sp.csr_matrix((Zr.data, Zr.indices + 1, Zr.indptr), shape=(Zr.shape[0], 1 + self.n_cols))
            self.margin_rows.extend(self._add_rows(np.full(Zr.shape[0], b), np.full(Zr.shape[0], self.inf),
                                                   A).tolist())

    def solve(self, cold=False, time_limit=None):
        """Run HiGHS (from scratch when ``cold``); return (SolveStatus, column values (n_cols,), t)."""
        from ...solvers.highs import run_highs
        if cold:
            self.h.clearSolver()
        status = run_highs(self.h, time_limit)
        x = np.asarray(self.h.getSolution().col_value, dtype=np.float64)
        return status, x[1:], float(x[0])

    def duals(self):
        """Row multipliers (HiGHS: ≥ 0 on an active ≥ row, ≤ 0 on an active ≤ row of a minimisation, the sign
        convention of :func:`mmprog.solvers.duals`): margins (≥ 0), upper and lower bound rows, in column order."""
        y = np.asarray(self.h.getSolution().row_dual, dtype=np.float64)
        return {"margin": y[self.margin_rows], "upper": y[self.upper_rows],
                "lower": y[self.lower_rows]}


# ------------------------------------------------------------------------------------------------------------
# Constraint generation over samples
# ------------------------------------------------------------------------------------------------------------

@dataclass
class LInfRun:
    """What :func:`solve_linf` returns.

    Attributes
    ----------
    objective : float
        t = ‖w‖∞ at the optimum of (10).
    J : ndarray of int64, shape (nnz,)
        Sorted joint indices where w may be non-zero (the master's joint columns and the private joint indices of
        its aggregated columns); w is 0 at every other index.
    w : ndarray, shape (nnz,)
        w on J.
    alpha : ndarray, shape (n_rows,)
        Multipliers of the master's margin rows (≥ 0 up to solver tolerance), in working-set order.
    working_set : ndarray of int64, shape (n_rows,)
        Sample ids in the master.
    rounds : int
        Constraint-generation rounds (master solves).
    history : list of dict
        Per round: ``round``, ``objective``, ``violated``, ``added``, ``n_rows``, ``n_cols``, ``separation``,
        ``rows``, ``model``, ``solver`` (seconds).
    timings : dict
        Totals in seconds: ``separation`` (the sparse products zᵢᵀw), ``rows`` (Kronecker rows), ``model`` (the
        master's bookkeeping; on the Pyomo route also building the Pyomo rows and loading values), ``solver``,
        ``total``.
    termination : str
        ``"converged"`` (no sample violated), ``"max_rounds"`` or ``"time_limit"``.
    n_vars, n_cons : int
        LP size: columns + 1 (t) variables, 2 · columns + rows constraints.
    n_private : int
        How many of the columns are aggregated private columns.
    max_violation : float
        maxᵢ (b − zᵢᵀw)⁺ over all m samples at the returned w.
    route : str
        ``"native"`` (HiGHS fed with CSR blocks) or ``"pyomo"`` (the registry solver through Pyomo).
    model : pyomo ConcreteModel
        The master as an explicit Pyomo model (written on first access on the native route).
    """

    objective: float
    J: np.ndarray
    w: np.ndarray
    alpha: np.ndarray
    working_set: np.ndarray
    master: object = field(repr=False)
    rounds: int = 0
    history: list = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    termination: str = "converged"
    n_vars: int = 0
    n_cons: int = 0
    n_private: int = 0
    max_violation: float = 0.0
    solver: str = "highs"
    route: str = "pyomo"

    @property
    def model(self):
        LInf(b=self.master.b).materialise(self.master)
        return self.master


def _cold(handle):
    """Drop the basis of a persistent HiGHS handle so the next solve presolves from scratch.

    The master (10) is highly degenerate (every column is tied to t by two rows): after a round that adds many
    columns, a HiGHS simplex hot-started from the old basis took 9-18 s on 16-41 thousand columns where a presolved
    cold solve took 0.3-1 s. Solvers without such a handle are left alone."""
    highs = getattr(getattr(handle, "_opt", None), "_solver_model", None)
    if highs is not None and hasattr(highs, "clearSolver"):
        highs.clearSolver()


def joint_solution(samples, model):
    """w of the master over joint indices: its joint columns as they are and each aggregated column w_private[i]
    copied to every joint index private to sample i.

    Returns
    -------
    (ndarray of int64, ndarray)
        Sorted joint indices and the values there.
    """
    keys = np.asarray(model.keys, dtype=np.int64)
    vals = LInf(b=model.b).read_solution(model).w
    jd = model.joint_dim
    joint = keys < jd
    J, w = [keys[joint]], [vals[joint]]
    if (~joint).any():
        ids = keys[~joint] - jd
        Z = samples.rows(ids)
        cols = Z.indices.astype(np.int64)
        private = samples.private_mask(cols)
        row = np.repeat(np.arange(len(ids)), np.diff(Z.indptr))
        J.append(cols[private])
        w.append(vals[~joint][row[private]])
    J, w = np.concatenate(J), np.concatenate(w)
    order = np.argsort(J)
    return J[order], w[order]


def _margins(samples, model, keys, vals, aggregate):
    """zᵢᵀw for all samples at the master's point (its columns ``keys`` with values ``vals``)."""
    if hasattr(samples, "margins_of_columns") and int(samples.support_sizes().sum()) <= samples.cache_limit:
        return samples.margins_of_columns(keys, vals, aggregate=aggregate)
    if aggregate:
        return samples.margins(*joint_solution(samples, model))
    return samples.margins(keys, vals)


def solve_linf(samples, b=1.0, *, solver="highs", route="auto", n_start=100, batch=100, growth=2.0,
               aggregate=True, tol=1e-7, max_rounds=1000, time_limit=None, warm_fraction=0.05):
    """Solve (10) by constraint generation over samples (module docstring).

    Parameters
    ----------
    samples : TensorSamples or KernelSamples
    b : float > 0
    solver : str
        A registered LP solver with duals.
    route : {"auto", "native", "pyomo"}
        ``"native"``: one highspy object fed with CSR blocks (:class:`NativeMaster`), the Pyomo model written on
        demand; ``"pyomo"``: the Pyomo model grown round by round and solved through the registry (HiGHS through
        its persistent handle, warm); ``"auto"``: native for ``solver="highs"``, else Pyomo.
    n_start : int
        Rows of the first master.
    batch : int
        Most violated samples added in the second round; each later round adds ``growth`` times more (a
        geometric schedule: when the optimum needs most samples — sparse joint spaces, where samples share few
        joint indices — the rounds stay logarithmic in m).
    growth : float ≥ 1
    aggregate : bool
        Give the joint indices private to one sample one shared column per sample (exact; module docstring).
        Only for :class:`TensorSamples`.
    tol : float
        A sample is violated when b − zᵢᵀw > tol · b.
    max_rounds : int
    time_limit : float, optional
        Wall-clock seconds.
    warm_fraction : float
        Re-solve warm (from the previous basis) when a round adds at most this fraction of new columns, else cold
        (see :func:`_cold`).

    Returns
    -------
    LInfRun

    Notes
    -----
    Samples are ranked by their violation per unit of ‖zᵢ‖₁, (b − zᵢᵀw)/‖zᵢ‖₁: the least increase of ‖w‖∞ that
    sample i alone would force (zᵢᵀΔw ≤ ‖zᵢ‖₁‖Δw‖∞). At w = 0 this picks the samples of smallest norm, where
    Proposition 2 locates the binding constraint.
    """
    check_param("route", route, route in ("auto", "native", "pyomo"), '"auto", "native" or "pyomo"')
    check_param("n_start", n_start, isinstance(n_start, (int, np.integer)) and n_start >= 1, "an int >= 1")
    check_param("batch", batch, isinstance(batch, (int, np.integer)) and batch >= 1, "an int >= 1")
    check_param("growth", growth, isinstance(growth, (int, float)) and growth >= 1, "a float >= 1")
    check_param("tol", tol, isinstance(tol, (int, float)) and 0 < tol < 1, "a float in (0, 1)")
    check_param("max_rounds", max_rounds, isinstance(max_rounds, (int, np.integer)) and max_rounds >= 1,
                "an int >= 1")
    if time_limit is not None:
        check_param("time_limit", time_limit, isinstance(time_limit, (int, float)) and time_limit > 0,
                    "a number of seconds > 0 or None")
    aggregate = bool(aggregate) and getattr(samples, "kind", "") == "tensor"
    prog = LInf(b=b)
    slv = get_solver(solver)
    slv.require(ProblemClass.LP)
    if not slv.gives_duals:
        raise ParameterError(f"solver {solver!r} returns no duals, which certify the optimum of (10); use one that "
                             f"does, e.g. 'highs'")
    if route == "auto":
        route = "native" if slv.name == "highs" else "pyomo"
    elif route == "native" and slv.name != "highs":
        raise ParameterError(f'route="native" feeds HiGHS directly; with solver={solver!r} use route="pyomo"')
    t_start = time.perf_counter()
    timings = {"separation": 0.0, "rows": 0.0, "model": 0.0, "solver": 0.0}
    key_dim = samples.dim + (samples.n if aggregate else 0)
    model = prog.build(Dims(n=samples.n, dim=key_dim, n_slacks=0), joint_dim=samples.dim)
    model.solved_with = "highs-native" if route == "native" else slv.name
    native = NativeMaster() if route == "native" else None
    norms = samples.norms()
    in_ws = np.zeros(samples.n, dtype=bool)
    # first master: the samples of smallest ‖zᵢ‖₁ (the ranking below at w = 0)
    chosen = np.argsort(norms, kind="stable")[:min(n_start, samples.n)]
    handle = None
    history = []
    termination = "max_rounds"
    t = 0.0
    rnd = 0
    size = float(batch)
    while True:
        rnd += 1
        t0 = time.perf_counter()
        Z = samples.rows(chosen, aggregate=True) if aggregate else samples.rows(chosen)
        t_rows = time.perf_counter() - t0
        t0 = time.perf_counter()
        n_cols_before = len(model.keys)
        if native is not None:
            n_new, Zr = prog.record(model, Cuts(chosen, Z, np.full(len(chosen), prog.b)))
            native.add(n_new, Zr, prog.b)
            t_py = time.perf_counter() - t0
            status, vals, t = native.solve(cold=n_new > warm_fraction * max(n_cols_before, 1))
            t_solve = status.solver_time
        else:
            if handle is None and slv.persistent:
                # set up on the empty master: columns then go to the solver in one batch per round (discovering
                # them row by row inside the solver interface costs seconds per thousand columns)
                handle = model.master_state.handle = slv.persistent_handle(model)
            new_vars, new_cons = prog.add_cuts(model, Cuts(chosen, Z, np.full(len(chosen), prog.b)))
            if handle is not None:
                handle.add_variables(new_vars)
                handle.add_constraints(new_cons)
                if len(new_vars) > warm_fraction * max(n_cols_before, 1):
                    _cold(handle)
            t_py = time.perf_counter() - t0
            t0 = time.perf_counter()
            status = handle.solve(load_duals=False) if handle is not None else slv.solve(model, load_duals=False)
            t_solve = time.perf_counter() - t0
            t0 = time.perf_counter()
            vals, t = values_of(model.w_list), float(model.t.value)
            t_py += time.perf_counter() - t0 + max(0.0, t_solve - status.solver_time)
        model.col_values, model.t_value = vals, t
        in_ws[chosen] = True
        keys = prog.columns(model)
        t0 = time.perf_counter()
        viol = prog.b - _margins(samples, model, keys, vals, aggregate)
        t_sep = time.perf_counter() - t0
        bad = np.flatnonzero((viol > tol * prog.b) & ~in_ws)
        timings["rows"] += t_rows
        timings["model"] += t_py
        timings["solver"] += status.solver_time
        timings["separation"] += t_sep
        history.append({"round": rnd, "objective": t, "violated": int(bad.size), "added": int(len(chosen)),
                        "n_rows": int(model.ws.size), "n_cols": len(model.keys), "separation": t_sep,
                        "rows": t_rows, "model": t_py, "solver": status.solver_time})
        log.info("round %d: t = %.10g, %d rows, %d columns, %d violated", rnd, t, model.ws.size, len(model.keys),
                 bad.size)
        if bad.size == 0:
            termination = "converged"
            break
        if rnd >= max_rounds:
            break
        if time_limit is not None and time.perf_counter() - t_start >= time_limit:
            termination = "time_limit"
            break
        score = viol[bad] / norms[bad]
        chosen = bad[np.argsort(-score, kind="stable")[:int(size)]]
        size *= growth
    # the certificate: multipliers of the final master (a warm re-solve of an optimal LP)
    t0 = time.perf_counter()
    if native is not None:
        model.native_duals = native.duals()
        alpha = model.native_duals["margin"]
    else:
        status = handle.solve(load_duals=True) if handle is not None else slv.solve(model, load_duals=True)
        timings["solver"] += status.solver_time
        alpha = model.ws.duals(model)
    timings["model"] += time.perf_counter() - t0
    t0 = time.perf_counter()
    J, w = joint_solution(samples, model) if aggregate else (keys, np.asarray(vals))
    if not aggregate:
        order = np.argsort(J)
        J, w = J[order], w[order]
    timings["model"] += time.perf_counter() - t0
    timings["total"] = time.perf_counter() - t_start
    n_cols = len(model.keys)
    n_private = int(np.count_nonzero(keys >= model.joint_dim))
    return LInfRun(objective=t, J=J, w=w, alpha=alpha, working_set=model.ws.example_array(), master=model,
                   rounds=rnd, history=history, timings=timings, termination=termination,
                   n_vars=n_cols + 1, n_cons=2 * n_cols + model.ws.size, n_private=n_private,
                   max_violation=float(np.max(viol, initial=0.0)), solver=slv.name, route=route)
