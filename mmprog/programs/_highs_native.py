"""One persistent highspy object per master, fed from the working set's arrays.

Pyomo's solver interfaces build every cut row from its expression, about 10 µs per non-zero: on dense inputs (OCR
pixels: ~2,500 non-zeros per ΔF row, twice that in P1's μ/ν form) that made Pyomo 95 % of a round. For the
LP masters whose rows are linear in the working set's ΔF, the program hands HiGHS the rows as one CSR block per
round instead and loads the solution back into the Pyomo variables; the Pyomo rows themselves are written on demand
(``Program.materialise``) before exports, inspection or solves through Pyomo's interfaces. A test checks that both
routes reach the same optimum.
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp


class NativeLP:
    """min costᵀx s.t. rows(ws) ≥ Δℓ, bounds on x — the columns and rows given by the program.

    Parameters
    ----------
    cost, lower, upper : ndarray, shape (n_cols,)
    variables : list of Pyomo variables, one per column (values are loaded back into them)
    row_block : callable(cuts_dF CSR, example (m,)) -> CSR (m, n_cols)
        The program's map from cut data to LP rows.
    """

    def __init__(self, cost, lower, upper, variables, row_block):
        import highspy
        self.highspy = highspy
        self.h = highspy.Highs()
        self.h.setOptionValue("output_flag", False)
        n = len(cost)
        self.h.addVars(n, np.asarray(lower, float), np.asarray(upper, float))
        self.h.changeColsCost(n, np.arange(n, dtype=np.int32), np.asarray(cost, float))
        self.variables = variables
        self.row_block = row_block
        self.n_rows = 0
        self.inactive = set()

    def sync(self, ws):
        r = ws.size
        if r > self.n_rows:
            new = np.arange(self.n_rows, r)
            A = sp.csr_matrix(self.row_block(ws.dF()[new], ws.example_array()[new]))
            lo = ws.dl_array()[new]
            self.h.addRows(len(new), lo, np.full(len(new), self.highspy.kHighsInf), A.nnz,
                           A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32), A.data.astype(float))
            self.n_rows = r
        for pos in np.nonzero(~ws.active_mask())[0]:
            if pos not in self.inactive:
                self.h.changeRowBounds(int(pos), -self.highspy.kHighsInf, self.highspy.kHighsInf)
                self.inactive.add(int(pos))

    def solve(self, ws, raise_on_failure=True, time_limit=None):
        """Run HiGHS; load column values into the Pyomo variables; return (SolveStatus, row duals (r,))."""
        from ..solvers import HIGHS_STATUS, SolveStatus, _finish
        self.sync(ws)
        self.h.setOptionValue("time_limit", float(time_limit) if time_limit else float("inf"))
        t0 = time.perf_counter()
        self.h.run()
        elapsed = time.perf_counter() - t0
        st = self.h.getModelStatus()
        termination = HIGHS_STATUS.get(getattr(st, "name", str(st)), "other")
        ok = termination == "optimal"
        status = SolveStatus(termination, "optimal" if ok else "none",
                             f"HiGHS model status: {self.h.modelStatusToString(st)}", elapsed,
                             float(self.h.getInfo().objective_function_value) if ok else None)
        _finish("highs", status, raise_on_failure)
        duals = np.zeros(ws.size)
        if ok:
            sol = self.h.getSolution()
            for v, x in zip(self.variables, sol.col_value):
                v.set_value(x, skip_validation=True)
            # HiGHS's row duals: for a ≥ row of a minimisation the multiplier is ≥ 0 (our sign convention)
            duals = np.asarray(sol.row_dual, dtype=float)
        return status, duals
