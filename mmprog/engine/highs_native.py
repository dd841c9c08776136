"""One persistent highspy object per master, fed from the working set's arrays.

Pyomo's solver interfaces build every cut row from its expression, about 10 µs per non-zero: on dense inputs (OCR
pixels: ~2,500 non-zeros per ΔF row, twice that in P1's μ/ν form) that made Pyomo 95 % of a round. For the
LP masters whose rows are linear in the working set's ΔF, the program hands HiGHS the rows as one CSR block per
round instead and loads the solution back into the Pyomo variables; the Pyomo rows themselves are written on demand
(``Program.materialise``) before exports, inspection or solves through Pyomo's interfaces. A test checks that both
routes reach the same optimum.

The Gram dual masters (``m3n``'s and its metric-scaled form in ``lapm3n``/``adapm3n``) go the same way for their QP:
Pyomo's interfaces re-walk the whole ½αᵀGα expression (r² terms) on every solve, which made Pyomo 80 % of the run
time on OCR; :class:`GramDualQP` keeps one column per cut, one budget row per slack and the Hessian in one highspy
object.
"""
from __future__ import annotations


import numpy as np
import scipy.sparse as sp

from ..solvers.highs import run_highs


class NativeLP:
    """min ½xᵀdiag(hessian)x + costᵀx s.t. rows(ws) ≥ Δℓ, bounds on x — the columns and rows given by the program
    (an LP without ``hessian``).

    Parameters
    ----------
    cost, lower, upper : ndarray, shape (n_cols,)
    variables : list of Pyomo variables, one per column (values are loaded back into them)
    row_block : callable(cuts_dF CSR, example (m,)) -> CSR (m, n_cols)
        The program's map from cut data to LP rows.
    hessian : ndarray, shape (n_cols,), optional
        The diagonal of a positive semi-definite Hessian (form ``"qp_rows"``: the elastic-net M³N's μ, ν); HiGHS then
        solves the QP by its active-set method.
    """

    def __init__(self, cost, lower, upper, variables, row_block, hessian=None):
        import highspy
        self.highspy = highspy
        self.h = highspy.Highs()
        self.h.setOptionValue("output_flag", False)
        n = len(cost)
        self.h.addVars(n, np.asarray(lower, float), np.asarray(upper, float))
        self.h.changeColsCost(n, np.arange(n, dtype=np.int32), np.asarray(cost, float))
        if hessian is not None:
            # HiGHS's triangular CSC Hessian with the diagonal's non-zeros only (a column per variable)
            d = np.asarray(hessian, dtype=float)
            nz = np.flatnonzero(d)
            hess = highspy.HighsHessian()
            hess.dim_ = n
            hess.format_ = highspy.HessianFormat.kTriangular
            hess.start_ = np.searchsorted(nz, np.arange(n + 1)).astype(np.int32)
            hess.index_ = nz.astype(np.int32)
            hess.value_ = d[nz]
            self.h.passHessian(hess)
        self.variables = variables
        self.row_block = row_block
        self.n_rows = 0                            # working-set positions handed to HiGHS so far
        self.positions = np.zeros(0, np.int64)     # working-set position of each row HiGHS holds, in its order

    def sync(self, ws):
        r = ws.size
        # cuts deactivated since the last solve are deleted from HiGHS, not relaxed to free rows: a dropped row
        # kept in the matrix still costs its non-zeros in every simplex iteration (an OCR100 master of 3,400
        # rows, 2,800 of them free, re-solved in 7 s; the same active rows alone in a fraction of that). They
        # were inactive (multiplier 0, slack basic), so the basis HiGHS keeps stays valid.
        if len(self.positions):
            gone = ~ws.active_mask()[self.positions]
            if gone.any():
                rows = np.nonzero(gone)[0].astype(np.int32)
                self.h.deleteRows(len(rows), rows)
                self.positions = self.positions[~gone]
        if r > self.n_rows:
            new = np.arange(self.n_rows, r)
            new = new[ws.active_mask()[new]]
            if len(new):
                A = sp.csr_matrix(self.row_block(ws.dF()[new], ws.example_array()[new]))
                lo = ws.dl_array()[new]
                self.h.addRows(len(new), lo, np.full(len(new), self.highspy.kHighsInf), A.nnz,
                               A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32), A.data.astype(float))
                self.positions = np.r_[self.positions, new]
            self.n_rows = r

    def solve(self, ws, raise_on_failure=True, time_limit=None):
        """Run HiGHS; load column values into the Pyomo variables; return (SolveStatus, row duals (r,), 0 for the
        dropped cuts)."""
        self.sync(ws)
        status = run_highs(self.h, time_limit, raise_on_failure)
        duals = np.zeros(ws.size)
        if status.termination == "optimal":
            sol = self.h.getSolution()
            for v, x in zip(self.variables, sol.col_value):
                v.set_value(x, skip_validation=True)
            # HiGHS's row duals: for a ≥ row of a minimisation the multiplier is ≥ 0 (our sign convention)
            duals[self.positions] = np.asarray(sol.row_dual, dtype=float)
        return status, duals


def _lower_triangle_csc(G):
    """The lower triangle of a symmetric dense G in CSC arrays (start, index, value), as HiGHS's triangular Hessian
    wants them: column j holds G[j:, j] (no sparse conversion; HiGHS drops the zero entries itself). G's two
    triangles may differ in the last bits (each new cut's block comes from one matrix product); the lower one is
    read."""
    r = G.shape[0]
    col, row = np.triu_indices(r)        # column by column, rows j..r−1 of column j
    start = np.zeros(r + 1, dtype=np.int32)
    np.cumsum(np.arange(r, 0, -1), out=start[1:])
    return start, row.astype(np.int32), G[row, col]


def grown_gram(G, gram_rows, model, n_done, stale=False):
    """The Gram matrix of the working set's r cuts from the previous one of its first ``n_done``: the new cuts' rows
    from ``gram_rows(model, rows)`` (ndarray (len(rows), r)) mirrored into their columns; all of it recomputed when
    ``stale`` (a new metric)."""
    r = model.ws.size
    if stale:
        return gram_rows(model, list(range(r)))
    if r <= n_done:
        return G
    new = list(range(n_done, r))
    rows = gram_rows(model, new)
    grown = np.zeros((r, r))
    grown[:n_done, :n_done] = G
    grown[new, :] = rows
    grown[:, new] = rows.T
    return grown


class GramDualQP:
    """The Gram dual master min ½αᵀGα − Δℓᵀα s.t. Σ_{r∈Sᵢ} α_r ≤ C·slack_scale, α ≥ 0 in one highspy object (the
    negated maximisation of Theorem 3, ICML 2008 Laplace M³N, as HiGHS wants a convex minimisation).

    One column per cut and one budget row per slack are kept for the life of the model; the Hessian G is passed again
    when cuts arrive or, after ``model.master_state.gram_stale`` is set (a new metric), recomputed whole. The α values are loaded
    back into the Pyomo variables ``model.ws.components``.

    Parameters
    ----------
    gram_rows : callable(model, rows: list of int) -> ndarray, shape (len(rows), r)
        Rows of the Gram matrix against every cut so far: ⟨ΔF_p, ΔF_q⟩ for ``m3n``, ΔF diag(D) ΔFᵀ for a metric D.
    rescale : bool
        Hand HiGHS the objective s·(½αᵀGα − Δℓᵀα) with s = 1/max Gₖₖ when that diagonal is below 1 (the reported
        objective is divided by s again). HiGHS's active-set QP works to absolute tolerances and stalled (300,000
        iterations, no optimum) on an EM master whose rescaled Gram entries were all below 0.5 (λ = 13,020, rank 17
        of 699); scaled to max Gₖₖ = 1 it took 0.1 s.
    time_limit : float or None
        Seconds one solve may take unless the caller gives its own limit (None: no limit); a stalled active-set QP
        then ends as a SolverError instead of hanging the cutting-plane loop.
    """

    def __init__(self, gram_rows, rescale=False, time_limit=None):
        import highspy
        self.highspy = highspy
        self.h = highspy.Highs()
        self.h.setOptionValue("output_flag", False)
        self.gram_rows = gram_rows
        self.rescale = rescale
        self.time_limit = time_limit
        self.G = np.zeros((0, 0))
        self.n_cols = 0
        self.row_of_slack = {}
        self.scale = 1.0

    @classmethod
    def of(cls, model, gram_rows, **kw):
        """The object kept on ``model`` (made on the first call with these arguments)."""
        state = model.master_state
        if state.gram_qp is None:
            state.gram_qp = cls(gram_rows, **kw)
        return state.gram_qp

    def sync(self, model):
        highspy, h, ws = self.highspy, self.h, model.ws
        r = ws.size
        stale = model.master_state.gram_stale
        if r > self.n_cols or stale:
            self.G = grown_gram(self.G, self.gram_rows, model, self.n_cols, stale)
            model.master_state.gram_stale = False
            dl, ex = ws.dl_array(), ws.example_array()
            budget = float(model.C.value) * model.slack_scale
            new_pos = np.arange(self.n_cols, r)
            for slack in ex[new_pos]:
                if int(slack) not in self.row_of_slack:
                    self.row_of_slack[int(slack)] = h.getNumRow()
                    h.addRow(-highspy.kHighsInf, budget, 0, np.zeros(0, np.int32), np.zeros(0))
            if len(new_pos):
                # one call for all new columns: each single addCol re-sizes the Hessian HiGHS already holds
                rows_of = np.array([self.row_of_slack[int(e)] for e in ex[new_pos]], dtype=np.int32)
                m_new = len(new_pos)
                h.addCols(m_new, np.zeros(m_new), np.zeros(m_new), np.full(m_new, highspy.kHighsInf), m_new,
                          np.arange(m_new, dtype=np.int32), rows_of, np.ones(m_new))
            self.n_cols = r
            gmax = float(self.G.diagonal().max()) if r else 0.0
            self.scale = 1.0 / gmax if self.rescale and 0 < gmax < 1 else 1.0
            h.changeColsCost(r, np.arange(r, dtype=np.int32), -self.scale * dl)
            start, index, value = _lower_triangle_csc(self.scale * self.G)
            # the array overload: filling a HighsHessian's fields converts element by element
            h.passHessian(r, len(value), highspy.HessianFormat.kTriangular, start, index, value)
        for pos, active in enumerate(ws.active):
            if not active:
                h.changeColBounds(pos, 0.0, 0.0)

    def solve(self, model, raise_on_failure=True, time_limit=None, **_):
        """Run HiGHS on the current working set; load α into the Pyomo variables; return the SolveStatus (its
        objective the dual master's maximum), checked by :func:`mmprog.solvers.base.finish_solve` in HiGHS's own words."""
        self.sync(model)
        status = run_highs(self.h, time_limit or self.time_limit, raise_on_failure, objective_scale=-1.0 / self.scale)
        if status.termination == "optimal":
            alpha = np.array(self.h.getSolution().col_value)
            for var, a in zip(model.ws.components, alpha):
                var.set_value(max(a, 0.0), skip_validation=True)
        return status


class GrownLP:
    """min costᵀx s.t. row groups lower ≤ A x ≤ upper, grown by columns and by rows (form ``"lp_columns"``), in one
    persistent highspy object fed with CSR blocks.

    The program states its LP as arrays: its first columns (:meth:`Program.grown_lp`) and, per round, the new
    columns with their bounds and the new rows by named group (:meth:`Program.grown_rows`). Writing the same LP
    through Pyomo's persistent interface costs about 0.4 ms per column and per row (expression walks and per-row
    interface calls): 150 of 250 s at m = 10⁵ on L∞'s sparse generator. The Pyomo model is then written on demand
    (``Program.materialise``); a test checks both routes reach the same optimum.

    Parameters
    ----------
    cost, lower, upper : array-like, shape (n_first,)
        The first columns: their costs and bounds (later columns cost 0).
    """

    def __init__(self, cost, lower, upper):
        import highspy
        self.h = highspy.Highs()
        self.h.setOptionValue("output_flag", False)
        self.inf = highspy.kHighsInf
        n = len(cost)
        if n == 1:
            self.h.addVar(float(lower[0]), float(upper[0]))
            self.h.changeColCost(0, float(cost[0]))
        else:
            self.h.addVars(n, np.asarray(lower, float), np.asarray(upper, float))
            self.h.changeColsCost(n, np.arange(n, dtype=np.int32), np.asarray(cost, float))
        self.n_cols = n
        self.n_rows = 0
        self.groups = {}                  # group name -> row indices in HiGHS's order

    def add_columns(self, lower, upper):
        """Append columns (cost 0) with these bounds."""
        n = len(lower)
        if n:
            self.h.addVars(n, np.asarray(lower, float), np.asarray(upper, float))
            self.n_cols += n

    def add_rows(self, group, lower, upper, A):
        """Append the rows lower ≤ A x ≤ upper (A CSR over every column so far) to ``group``."""
        A = sp.csr_matrix(A)
        if A.shape[0] == 0:
            return
        self.h.addRows(A.shape[0], np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64),
                       A.nnz, A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32),
                       A.data.astype(np.float64))
        first = self.n_rows
        self.n_rows += A.shape[0]
        self.groups.setdefault(group, []).extend(range(first, self.n_rows))

    def solve(self, cold=False, time_limit=None):
        """Run HiGHS (from scratch when ``cold``: presolved, without the previous basis); return (SolveStatus,
        column values (n_cols,))."""
        if cold:
            self.h.clearSolver()
        status = run_highs(self.h, time_limit)
        return status, np.asarray(self.h.getSolution().col_value, dtype=np.float64)

    def duals(self):
        """Row multipliers by group (HiGHS: ≥ 0 on an active ≥ row, ≤ 0 on an active ≤ row of a minimisation, the
        sign convention of :func:`mmprog.solvers.duals`), each in its rows' order."""
        y = np.asarray(self.h.getSolution().row_dual, dtype=np.float64)
        return {g: y[rows] for g, rows in self.groups.items()}
