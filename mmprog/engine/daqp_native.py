"""The Gram-dual master solved by DAQP on a shrinking working set, from the arrays the Pyomo model states.

The master (Theorem 3 of the ICML 2008 Laplace M³N paper, ``m3n``'s ``master="dual"``), as a minimisation:

    min_α ½αᵀGα − Δℓᵀα   s.t.  Σ_{r∈Sᵢ} α_r ≤ C·slack_scale  (one budget row per slack i),  α ≥ 0.

Its optimal support is a small part of the cuts (93 of 498 at the end of the OCR fold-0 fit), and the previous
round's optimum is almost optimal for the next. So each solve hands DAQP (:mod:`mmprog.solvers.daqp`) only the
sub-problem on W = previous support ∪ new cuts, warm-started from the previous α, and then checks the KKT conditions
of the *whole* master at the sub-problem's optimum: with μᵢ ≥ 0 the budget multipliers DAQP returns and the gradient
g = Gα − Δℓ, every cut r outside W (α_r = 0) needs g_r + μ_{i(r)} ≥ −tol. Violators join W and DAQP is run again
from the current α; W grows strictly, so the loop ends (at worst with W = every cut, the whole master). What comes
back satisfies the full master's KKT conditions, so it is the master's optimum, not an approximation — the same
exactness as any active-set method, whose working set this is. A test checks it against HiGHS on the Pyomo model.

Measured on the OCR fold-0 masters (see :mod:`mmprog.solvers.daqp`): 0.40 s for the 498 masters against 12.3 s for
HiGHS's persistent active-set QP in the run and 4.6 s for DAQP on the whole master warm-started.
"""
from __future__ import annotations

import time

import numpy as np

#: relative tolerance of the outside-cut KKT check (DAQP's own dual tolerance is 1e-12; the Gram entries carry
#: rounding from one sparse product per cut)
KKT_TOL = 1e-9


class GramDualDAQP:
    """One per master model (``model.master_state.gram_daqp``): the Gram matrix grown by one row per cut, the last
    α.

    Parameters
    ----------
    gram_rows : callable(model, rows: list of int) -> ndarray, shape (len(rows), r)
        Rows of G against every cut so far (as for :class:`mmprog.engine.highs_native.GramDualQP`).
    """

    def __init__(self, gram_rows):
        self.gram_rows = gram_rows
        self.G = np.zeros((0, 0))
        self.alpha = np.zeros(0)
        self.n_cols = 0
        self.last_working_set = 0
        self.passes = 0

    @classmethod
    def of(cls, model, gram_rows):
        state = model.master_state
        if state.gram_daqp is None:
            state.gram_daqp = cls(gram_rows)
        return state.gram_daqp

    def sync(self, model):
        from .highs_native import grown_gram
        r = model.ws.size
        self.G = grown_gram(self.G, self.gram_rows, model, self.n_cols, model.master_state.gram_stale)
        model.master_state.gram_stale = False
        alpha = np.zeros(r)
        alpha[: len(self.alpha)] = self.alpha[:r]
        self.alpha = alpha
        new_cols = np.arange(self.n_cols, r)
        self.n_cols = r
        return new_cols

    def kkt_violators(self, W, alpha, mu_W, slacks, active, ex, dl, scale):
        """The active cuts outside W whose reduced gradient (Gα − Δℓ)_r + μ_{e(r)} is negative beyond the
        tolerance: they enter W for the next pass (none: the solve on W is the whole master's optimum)."""
        outside = np.setdiff1d(np.nonzero(active)[0], W, assume_unique=True)
        if not len(outside):
            return outside
        g = self.G[np.ix_(outside, W)] @ alpha[W] - dl[outside]
        # μ of each outside cut's slack, 0 for slacks with no cut in W (an array look-up: a dict look-up per cut was
        # 0.6 s of the 504 OCR fold-0 masters)
        mu_of = np.zeros(int(ex.max()) + 1)
        mu_of[slacks] = mu_W
        tol = KKT_TOL * max(scale, float(np.abs(g).max(initial=0.0)))
        return outside[g + mu_of[ex[outside]] < -tol]

    def load(self, model, alpha, mu):
        """Keep α and load into the Pyomo variables only the α that changed since this object last loaded them
        (and the new cuts'): a set_value per cut and round was 127,000 calls, 0.6 s, in the OCR fold-0 fit. Any
        other route that writes them clears ``model.master_state.alpha_loaded``, and then every α is loaded. Returns the dual
        master's objective at α."""
        ws = model.ws
        r, dl = ws.size, ws.dl_array()
        loaded = model.master_state.alpha_loaded
        if loaded is None or len(loaded) > r:
            changed = np.arange(r)
        else:
            changed = np.union1d(np.flatnonzero(alpha[: len(loaded)] != loaded), np.arange(len(loaded), r))
        self.alpha = alpha
        components = ws.components
        for pos in changed.tolist():
            components[pos].set_value(float(alpha[pos]), skip_validation=True)
        model.master_state.alpha_loaded = alpha.copy()
        return float(dl @ alpha) - 0.5 * float(alpha @ self.G @ alpha)

    def solve(self, model, raise_on_failure=True, time_limit=None, **_):
        """Solve the master on the current working set (see the module docstring); load α into the Pyomo
        variables; return the checked :class:`~mmprog.solvers.SolveStatus` (its objective the dual master's
        maximum, its time the whole solve's, KKT checks included)."""
        from ..solvers.daqp import DAQP_INF, solve_dense
        from ..solvers.base import SOLVE_TIME_LIMIT, SolveStatus, finish_solve
        t_start = time.perf_counter()
        time_limit = time_limit or SOLVE_TIME_LIMIT          # no solve runs unbounded
        new_cols = self.sync(model)
        ws = model.ws
        r = ws.size
        G, dl = self.G, ws.dl_array()
        ex = ws.example_array()
        active = ws.active_mask()
        budget = float(model.C.value) * model.slack_scale
        alpha = np.where(active, self.alpha, 0.0)
        W = np.union1d(np.nonzero(alpha > 0)[0], new_cols[active[new_cols]])
        if len(W) == 0:
            W = np.nonzero(active)[0]
        scale = max(1.0, float(np.abs(dl).max(initial=0.0)))
        status, passes = None, 0
        mu = {}
        while True:
            passes += 1
            m = len(W)
            slacks, row_of = np.unique(ex[W], return_inverse=True)
            A = np.zeros((len(slacks), m))
            A[row_of, np.arange(m)] = 1.0
            bupper = np.concatenate([np.full(m, DAQP_INF), np.full(len(slacks), budget)])
            blower = np.concatenate([np.zeros(m), np.full(len(slacks), -DAQP_INF)])
            remaining = time_limit - (time.perf_counter() - t_start)
            if remaining <= 0:
                status = SolveStatus("max_time", "none", f"time limit of {time_limit:g} s reached before DAQP's "
                                     f"pass {passes}", time.perf_counter() - t_start, None)
                break
            x, lam, status = solve_dense(G[np.ix_(W, W)], -dl[W], A, bupper, blower, primal_start=alpha[W],
                                         time_limit=remaining)
            if status.termination != "optimal":
                break
            alpha = np.zeros(r)
            alpha[W] = np.maximum(x, 0.0)
            mu = dict(zip(slacks.tolist(), np.maximum(lam[m:], 0.0).tolist()))
            violators = self.kkt_violators(W, alpha, np.maximum(lam[m:], 0.0), slacks, active, ex, dl, scale)
            if not len(violators):
                break
            W = np.union1d(W, violators)
        elapsed = time.perf_counter() - t_start
        objective = None
        if status.termination == "optimal":
            objective = self.load(model, alpha, mu)
        self.last_working_set, self.passes = len(W), passes
        status = SolveStatus(status.termination, status.solution_status,
                             f"{status.solver_message}; {passes} working-set pass(es), {len(W)} of {r} cuts", elapsed,
                             objective)
        return finish_solve("daqp", status, raise_on_failure)
