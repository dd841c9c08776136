"""P1 on chains as one polynomial-size LP: ``l1m3n`` with ``algorithm="factored"``.

KDD 2009's P1 (Zhu, Xing & Zhang, problem P1) has one constraint per labeling y of every example i,
(μ − ν)ᵀΔfᵢ(y) ≥ Δℓᵢ(y) − ξᵢ, i.e. ξᵢ + wᵀf(xᵢ, yᵢ) ≥ max_y [wᵀf(xᵢ, y) + Δℓᵢ(y)]. On a first-order chain the
right-hand side is a Viterbi recursion, and a linear program states "ξ is at least a max computed by dynamic
programming" exactly, with one variable per (token, label) — the factored (polynomial-size) form of the M³N
constraints (Taskar, Guestrin & Koller, NIPS 2003, section 4; here written with the Viterbi values instead of the
marginals' dual). With w = μ − ν, for every example i with tokens t = 0 … Tᵢ − 1 and labels a, b, y:

    token rows        V_t(y) − A_t(y) − wᵀφ(x_t, y) ≥ 1[y ≠ y_t]       (no A_0: V_0(y) − wᵀφ(x_0, y) ≥ …)
    transition rows   A_t(b) − V_{t−1}(a) − w_tr[a, b] ≥ 0                t ≥ 1, all K² pairs
    gold row          G − wᵀf(xᵢ, yᵢ) = 0
    final rows        ξᵢ + G − V_{T−1}(y) ≥ 0

φ(x_t, y) being the token's state, bias, start (t = 0) and stop (t = T − 1) features for label y. Any feasible V
bounds the Viterbi values from above, so the final rows give ξᵢ ≥ max_y [Δℓᵢ(y) − wᵀΔfᵢ(y)]; the Viterbi values
themselves are feasible. Projected onto (μ, ν, ξ) the LP's feasible set is P1's, so its optimum is P1's optimum —
no cutting plane, no working set: the whole program, ~K² rows a token, solved once. On OCR100 (100 words, 26
labels) that is 464,408 rows, 44,816 columns and 2.96 M non-zeros, which HiGHS's interior-point solver (IPX)
takes in about four minutes where the cutting plane needed 200 rounds of dual simplex (README, Known limits).

The objective is P1's: ½Σₖ(μₖ + νₖ) + C Σᵢ ξᵢ (n-slack scale). The rows are kept as one sparse matrix; HiGHS gets
them as arrays and the Pyomo rows are written on demand (:meth:`ChainLP.materialise`), before exports and before a
solve through any other LP back end (the same split as :mod:`mmprog.engine.highs_native`).
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ..exceptions import ParameterError

#: above this many non-zeros the factored LP is not built (it would need several GB): the cutting plane is the route
MAX_NONZEROS = 60_000_000


def _csr_float(X):
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    X.eliminate_zeros()
    return X


class ChainLP:
    """The factored P1 LP of a chain training set (see the module docstring).

    Parameters
    ----------
    fmap : mmprog.features.chain.ChainFeatureMap
        First order, no edge features.
    prepared : Prepared
        The training set as the feature map prepared it, every label observed.
    C : float
        P1's C (n-slack scale: one ξᵢ per example).

    Attributes
    ----------
    A : scipy.sparse.csr_matrix, shape (n_rows, n_cols)
        The constraint matrix; columns μ (dim), ν (dim), ξ (n), V (N·K), A (N'·K, tokens after the first), G (n).
    row_lower, row_upper : ndarray, shape (n_rows,)
    cost, col_lower, col_upper : ndarray, shape (n_cols,)
    blocks : dict
        Name → (first row, number of rows) of the token, transition, gold and final rows.
    """

    @staticmethod
    def _checked(fmap, prepared):
        """The token arrays of a training set the factored LP can state (first-order chain, every label observed,
        the LP not over :data:`MAX_NONZEROS`): (lengths, offsets, example and position of every token, gold)."""
        if getattr(fmap, "kind", None) != "chain":
            raise ParameterError(f'algorithm="factored" states P1 on chains; got a {type(fmap).__name__}: use '
                                 f'algorithm="cutting_plane"')
        if fmap.order != 1 or fmap.n_edge_features:
            what = "order=2" if fmap.order != 1 else f"{fmap.n_edge_features} edge features"
            raise ParameterError(f'algorithm="factored" is written for first-order chains without edge features; '
                                 f'the feature map has {what}: use algorithm="cutting_plane"')
        lengths = np.asarray(prepared.lengths, dtype=np.int64)
        n, K, dim = prepared.n, fmap.n_labels, fmap.dim
        if n == 0 or lengths.min(initial=1) < 1:
            raise ParameterError("the training set needs at least one example and no empty one for "
                                 'algorithm="factored"')
        off = prepared.data["offsets"]
        ex = prepared.data["tok_example"]
        pos = prepared.data["tok_pos"]
        gold_tok = prepared.gold[ex, pos]
        if np.any(gold_tok < 0):
            raise ParameterError(f'algorithm="factored" needs every label observed; {int(np.sum(gold_tok < 0))} '
                                 f'tokens have none (hidden labels are PoMEN\'s program)')
        N = int(off[-1])
        n_later = int((pos > 0).sum())
        X_in = prepared.data["X"]
        x_nnz = int(X_in.nnz) if sp.issparse(X_in) else int(np.count_nonzero(X_in))
        nnz_est = int(2 * K * (N * 2 + x_nnz) + 4 * K * K * n_later + 3 * K * n)
        if nnz_est > MAX_NONZEROS:
            raise ParameterError(f'algorithm="factored" would build an LP with about {nnz_est:,} non-zeros '
                                 f'({N:,} tokens × K² = {K * K} transition rows each) — more than '
                                 f'{MAX_NONZEROS:,}; use algorithm="cutting_plane" on this data')
        return lengths, off, ex, pos, gold_tok

    @staticmethod
    def _phi(fmap, prepared, lengths, ex, pos):
        """φ(x_t, y) for every token and label as the rows of a (N·K, dim) CSR matrix: state, bias, start, stop."""
        K, dim = fmap.n_labels, fmap.dim
        N = len(ex)
        labels = np.arange(K)
        X = _csr_float(prepared.data["X"])
        o = fmap.offsets
        tok_of_nz = np.repeat(np.arange(N), np.diff(X.indptr))
        phi_r = [(tok_of_nz[:, None] * K + labels[None, :]).ravel()]
        phi_c = [(o["state"] + X.indices[:, None] * K + labels[None, :]).ravel()]
        phi_v = [np.repeat(X.data, K)]
        toks = np.arange(N)
        extra = []
        if fmap.bias:
            extra.append((toks, o["bias"]))
        if fmap.start_stop:
            extra.append((toks[pos == 0], o["start"]))
            extra.append((toks[pos == lengths[ex] - 1], o["stop"]))
        for sel, first in extra:
            phi_r.append((sel[:, None] * K + labels[None, :]).ravel())
            phi_c.append(np.tile(first + labels, len(sel)))
            phi_v.append(np.ones(len(sel) * K))
        Phi = sp.csr_matrix((np.concatenate(phi_v), (np.concatenate(phi_r), np.concatenate(phi_c))),
                            shape=(N * K, dim))
        Phi.sum_duplicates()
        return Phi

    @staticmethod
    def _final_rows(off, n, K, r0, c_xi, c_G, c_V):
        """The final rows ξ_i + G_i − V_{T−1}(y) ≥ 0 from row r0: ([rows], [columns], [values], [lower bounds])."""
        last = off[1:] - 1
        fr = r0 + np.arange(n * K)
        ei = np.repeat(np.arange(n), K)
        return ([fr, fr, fr], [c_xi + ei, c_G + ei, c_V + (np.repeat(last, K) * K + np.tile(np.arange(K), n))],
                [np.ones(n * K), np.ones(n * K), -np.ones(n * K)], [np.zeros(n * K)])

    def __init__(self, fmap, prepared, C):
        lengths, off, ex, pos, gold_tok = self._checked(fmap, prepared)
        n, K, dim = prepared.n, fmap.n_labels, fmap.dim
        N = int(off[-1])
        later = pos > 0
        n_later = int(later.sum())
        self.n, self.K, self.dim, self.N = n, K, dim, N
        self.C = float(C)
        # column layout
        c_mu, c_nu, c_xi = 0, dim, 2 * dim
        c_V = c_xi + n
        c_A = c_V + N * K
        c_G = c_A + n_later * K
        n_cols = c_G + n
        a_rank = np.cumsum(later) - 1                   # rank of each later token among the later tokens
        labels = np.arange(K)
        Phi = self._phi(fmap, prepared, lengths, ex, pos)
        o = fmap.offsets
        toks = np.arange(N)
        rows, cols, vals = [], [], []
        r0 = 0
        self.blocks = {}
        # token rows: V_t(y) − A_t(y) − (μ − ν)ᵀφ(x_t, y) ≥ 1[y ≠ y_t]
        Pc = Phi.tocoo()
        tr_rows = np.arange(N * K)
        rows += [Pc.row, Pc.row, tr_rows]
        cols += [c_mu + Pc.col, c_nu + Pc.col, c_V + tr_rows]
        vals += [-Pc.data, Pc.data, np.ones(N * K)]
        lt = np.nonzero(later)[0]
        lr = (lt[:, None] * K + labels[None, :]).ravel()
        rows.append(lr)
        cols.append(c_A + (a_rank[lt][:, None] * K + labels[None, :]).ravel())
        vals.append(-np.ones(len(lr)))
        lower = [(labels[None, :] != gold_tok[:, None]).astype(np.float64).ravel()]
        self.blocks["token"] = (r0, N * K)
        r0 += N * K
        # transition rows: A_t(b) − V_{t−1}(a) − (μ − ν)[tr(a, b)] ≥ 0, row r0 + (rank, a, b)
        m = n_later * K * K
        rr = r0 + np.arange(m)
        j = np.repeat(np.arange(n_later), K * K)
        ab = np.tile(np.arange(K * K), n_later)
        a, b = np.divmod(ab, K)
        t_prev = lt[j] - 1
        tr_col = o["transition"] + ab
        rows += [rr, rr, rr, rr]
        cols += [c_A + j * K + b, c_V + t_prev * K + a, c_mu + tr_col, c_nu + tr_col]
        vals += [np.ones(m), -np.ones(m), -np.ones(m), np.ones(m)]
        lower.append(np.zeros(m))
        self.blocks["transition"] = (r0, m)
        r0 += m
        # gold rows: G_i − (μ − ν)ᵀf(x_i, y_i) = 0
        gold_rows = sp.csr_matrix((np.ones(N), (ex, toks * K + gold_tok)), shape=(n, N * K)) @ Phi
        ptr = (ex[lt], o["transition"] + gold_tok[lt - 1] * K + gold_tok[lt])
        gold_rows = (gold_rows + sp.csr_matrix((np.ones(len(lt)), ptr), shape=(n, dim))).tocoo()
        rows += [r0 + gold_rows.row, r0 + gold_rows.row, r0 + np.arange(n)]
        cols += [c_mu + gold_rows.col, c_nu + gold_rows.col, c_G + np.arange(n)]
        vals += [-gold_rows.data, gold_rows.data, np.ones(n)]
        lower.append(np.zeros(n))
        self.blocks["gold"] = (r0, n)
        r0 += n
        for part, block in zip((rows, cols, vals, lower), self._final_rows(off, n, K, r0, c_xi, c_G, c_V)):
            part += block
        self.blocks["final"] = (r0, n * K)
        r0 += n * K

        self.A = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                               shape=(r0, n_cols))
        self.A.sum_duplicates()
        self.row_lower = np.concatenate(lower)
        self.row_upper = np.full(r0, np.inf)
        g0, gn = self.blocks["gold"]
        self.row_upper[g0:g0 + gn] = 0.0
        self.cost = np.concatenate([np.full(2 * dim, 0.5), np.full(n, self.C), np.zeros(n_cols - 2 * dim - n)])
        self.col_lower = np.concatenate([np.zeros(2 * dim + n), np.full(n_cols - 2 * dim - n, -np.inf)])
        self.col_upper = np.full(n_cols, np.inf)
        self.columns = {"mu": (c_mu, dim), "nu": (c_nu, dim), "xi": (c_xi, n), "V": (c_V, N * K),
                        "A": (c_A, n_later * K), "G": (c_G, n)}

    @property
    def shape(self):
        return self.A.shape

    def split(self, x):
        """(w, ξ) of a column vector x: w = μ − ν."""
        d, n = self.dim, self.n
        return x[:d] - x[d:2 * d], x[2 * d:2 * d + n]

    def objective(self, x):
        """½Σ(μ + ν) + C Σ ξ at x."""
        return float(self.cost @ x)

    def dual_objective(self, y):
        """Σ_r y_r · (the bound of row r that is active in the dual): the LP dual's value at row multipliers y
        (y ≥ 0 on the ≥ rows, free on the gold equalities whose right-hand side is 0)."""
        return float(np.where(y > 0, np.where(np.isfinite(self.row_lower), self.row_lower, 0.0),
                              np.where(np.isfinite(self.row_upper), self.row_upper, 0.0)) @ y)

    def dual_infeasibility(self, y):
        """Largest violation of the dual constraints at y: reduced costs c − Aᵀy must be ≥ 0 on μ, ν, ξ (lower
        bound 0) and = 0 on the free columns V, A, G; y ≥ 0 on the ≥ rows."""
        z = self.cost - self.A.T @ y
        bounded = np.isfinite(self.col_lower)
        g0, gn = self.blocks["gold"]
        ge = np.ones(len(y), bool)
        ge[g0:g0 + gn] = False
        return float(max(np.maximum(-z[bounded], 0.0).max(initial=0.0), np.abs(z[~bounded]).max(initial=0.0),
                         np.maximum(-y[ge], 0.0).max(initial=0.0)))

    def max_row_violation(self, x):
        """Largest violation of the rows at x."""
        ax = self.A @ x
        return float(max(np.maximum(self.row_lower - ax, 0.0).max(initial=0.0),
                         np.maximum(ax - self.row_upper, 0.0).max(initial=0.0)))


def solve_highs(lp, time_limit=None, crossover=False, log=False):
    """Solve the factored LP from its arrays with HiGHS's interior-point solver (IPX), through its explicit dual.

    Parameters
    ----------
    lp : ChainLP
    time_limit : float, optional
        Seconds (None: :data:`mmprog.solvers.base.SOLVE_TIME_LIMIT`).
    crossover : bool
        Run IPX's crossover to a basic (vertex) solution: exact zeros in w, at extra cost.
    log : bool
        HiGHS's own log on stdout.

    Returns
    -------
    status : SolveStatus
        In HiGHS's words (an interrupted IPM reads "Interrupted by user").
    x, y : ndarray or None
        Column values and row multipliers (None when HiGHS has none).
    """
    import highspy

    from . import interrupts
    from ..solvers.highs import run_highs
    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(log))
    h.setOptionValue("solver", "ipm")
    h.setOptionValue("run_crossover", "on" if crossover else "off")
    inf = highspy.kHighsInf
    # HiGHS gets the LP's dual, stated explicitly:  min −ℓᵀy  s.t.  (Aᵀy)_j ≤ c_j for the columns x_j ≥ 0 (μ, ν, ξ),
    # (Aᵀy)_j = c_j for the free ones (V, A, G);  y ≥ 0 on the ≥ rows, free on the gold equalities. Handed the
    # primal, IPX dualises it itself and took 240 s on OCR100 fold 0; on this statement it took 151 s (same
    # optimum, 86 vs 90 IPM iterations). x is read back as the multipliers of the dual's rows.
    free_col = ~np.isfinite(lp.col_lower)
    eq_row = lp.row_upper == lp.row_lower
    assert np.all(lp.col_lower[~free_col] == 0) and np.all(~np.isfinite(lp.col_upper)) \
        and np.all(eq_row | ~np.isfinite(lp.row_upper)), "the factored LP's bounds changed shape"
    A = lp.A.tocsr()                                   # rows of A = columns of Aᵀ
    dual = highspy.HighsLp()
    dual.num_col_, dual.num_row_ = A.shape[0], A.shape[1]
    dual.col_cost_ = -lp.row_lower
    dual.col_lower_ = np.where(eq_row, -inf, 0.0)
    dual.col_upper_ = np.full(A.shape[0], inf)
    dual.row_lower_ = np.where(free_col, lp.cost, -inf)
    dual.row_upper_ = lp.cost.copy()
    dual.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    dual.a_matrix_.start_ = A.indptr
    dual.a_matrix_.index_ = A.indices
    dual.a_matrix_.value_ = A.data
    h.passModel(dual)

    # SIGINT/SIGTERM (mmprog.engine.interrupts) stop the IPM at its next iteration instead of after the whole solve
    def _poll(callback_type, message, data_out, data_in, user_data):
        if interrupts.requested():
            data_in.user_interrupt = True
    h.setCallback(_poll, None)
    h.startCallback(highspy.cb.HighsCallbackType.kCallbackIpmInterrupt)
    status = run_highs(h, time_limit=time_limit, raise_on_failure=False, objective_scale=-1.0)
    sol = h.getSolution()
    # the dual's row multipliers are ≤ 0 on its ≤ rows (HiGHS: ∂ objective / ∂ row bound, minimising), so x = −them
    x = -np.asarray(sol.row_dual, dtype=np.float64) if sol.dual_valid else None
    y = np.asarray(sol.col_value, dtype=np.float64) if sol.value_valid else None
    return status, x, y


def _solve_lp(lp, model, program, engine_kw, timings):
    """The factored LP by IPX from its arrays (the HiGHS back end; ``progress`` shows IPX's own log, the solve is
    one long call) or through the Pyomo model by any other LP back end: (status, x or None, y or None, solver)."""
    solver, time_limit = engine_kw.get("solver"), engine_kw.get("time_limit")
    if solver is None or solver.name == "highs":
        status, x, y = solve_highs(lp, time_limit=time_limit, crossover=program.crossover,
                                   log=bool(engine_kw.get("progress")))
        return status, x, y, "highs-ipx"
    t1 = time.perf_counter()
    program.materialise(model)
    timings["pyomo"] += time.perf_counter() - t1
    status = solver.solve(model, time_limit=time_limit, raise_on_failure=False)
    return status, program.factored_values(model) if status.termination == "optimal" else None, None, solver.name


def fit_factored(program, oracle, **engine_kw):
    """The ``l1m3n`` program's ``algorithm="factored"`` route (see the module docstring).

    The engine's ``time_limit`` bounds the solve; ``eps``, ``max_iter`` and the cutting-plane settings play no part.
    ``slack`` must be "n" (the factored LP has one ξᵢ per example). With the HiGHS back end the LP goes to IPX from
    its arrays; any other LP back end gets the Pyomo model.

    Returns
    -------
    mmprog.engine.records.EngineRun
        ``model`` the Pyomo statement (rows written on demand), ``solution.objective`` the LP's value at the solution
        (−∞ when the solve stopped before an optimum: no lower bound),
        ``solution.dual_objective`` the LP dual's value at HiGHS's row multipliers, ``upper_bound`` P1's full
        objective ½‖w‖₁ + C Σᵢ max(0, Hᵢ(w)) at the returned w, recomputed by the oracle.
    """
    from . import interrupts
    from .records import EngineRun
    from ..exceptions import SolverError
    from ..programs.base import Solution
    if engine_kw.get("slack", "n") != "n":
        raise ParameterError(f'algorithm="factored" is the n-slack P1 (one ξᵢ per example); got slack='
                             f'{engine_kw["slack"]!r}: use slack="n"')
    t_start = time.perf_counter()
    timings = {"build": 0.0, "pyomo": 0.0, "solver": 0.0, "oracle": 0.0}
    lp = ChainLP(oracle.fmap, oracle.prepared, program.C)
    timings["build"] = time.perf_counter() - t_start
    t0 = time.perf_counter()
    model = program.build_factored(lp)
    timings["pyomo"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    status, x, y, solved_with = _solve_lp(lp, model, program, engine_kw, timings)
    timings["solver"] = time.perf_counter() - t0
    model.solved_with = solved_with
    model.status = status
    if status.termination == "optimal":
        termination = "converged"
    elif interrupts.requested():
        termination = "interrupted"
    else:
        termination = {"max_time": "time_limit"}.get(status.termination)
    if termination is None:
        raise SolverError(f"{solved_with} on the factored P1 LP {lp.shape}: {status.solver_message}")
    if x is None:
        # stopped before any point: w = 0 is P1-feasible with ξᵢ = max_y Δℓᵢ(y)
        x = np.zeros(lp.A.shape[1])
    w, xi_lp = lp.split(x)
    t0 = time.perf_counter()
    _, hinge = oracle.separate(w)
    timings["oracle"] = time.perf_counter() - t0
    xi = np.maximum(hinge, 0.0)
    upper = program.regulariser(w) + program.C * float(xi.sum())
    if termination == "converged":
        objective = lp.objective(x)
        dual = lp.dual_objective(y) if y is not None else None
        extra = {"lp_rows": lp.shape[0], "lp_columns": lp.shape[1], "lp_nonzeros": int(lp.A.nnz),
                 "lp_row_violation": lp.max_row_violation(x),
                 "lp_dual_infeasibility": lp.dual_infeasibility(y) if y is not None else None}
    else:
        # no optimum: the LP's value at an interior iterate bounds nothing, so no lower bound is claimed (−∞: the
        # gap reads ∞, not 0); the full objective at w is upper_bound
        objective, dual = -np.inf, None
        extra = {"lp_rows": lp.shape[0], "lp_columns": lp.shape[1], "lp_nonzeros": int(lp.A.nnz)}
    model.lp_solution = x
    model.lp_duals = y
    timings["total"] = time.perf_counter() - t_start
    sol = Solution(w=w, xi=xi if termination != "converged" else np.maximum(xi_lp, 0.0), alpha=np.zeros(0),
                   objective=objective, dual_objective=dual,
                   extra={"algorithm": "factored", "solver_message": status.solver_message, **extra})
    return EngineRun(model=model, solution=sol, history=[], termination=termination, n_iter=1, timings=timings,
                     upper_bound=upper)
