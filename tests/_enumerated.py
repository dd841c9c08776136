"""Ground truth shared by the tests: the full program with every labeling as an explicit constraint.

Independent of mmprog's feature maps, programs and solver registry: features are computed by explicit loops over
positions, every labeling of every example is enumerated, and the full QP / LP is handed to highspy directly.
"""
import itertools

import highspy
import numpy as np

from mmprog.datasets.base import SequenceDataset

K, T, D = 2, 4, 3
INF = highspy.kHighsInf


def tiny(seed, n=12, irrelevant=0, noise=0.3):
    """n sequences of T positions with D relevant and ``irrelevant`` pure-noise input features, K labels."""
    rng = np.random.default_rng(seed)
    X = [rng.normal(size=(T, D + irrelevant)) for _ in range(n)]
    w_true = rng.normal(size=(D, K))
    Y = [np.argmax(x[:, :D] @ w_true + noise * rng.normal(size=(T, K)), axis=1) for x in X]
    return SequenceDataset(X, Y, K)


def joint_f(x, y, k=K):
    """f(x, y) = [Σ_t x_t ⊗ e(y_t), Σ_t e(y_t) ⊗ e(y_t+1)] by explicit loops, shape (d·k + k·k,)."""
    d = x.shape[1]
    f = np.zeros(d * k + k * k)
    for t in range(len(y)):
        for j in range(d):
            f[j * k + y[t]] += x[t, j]
        if t + 1 < len(y):
            f[d * k + y[t] * k + y[t + 1]] += 1
    return f


def all_constraints(ds):
    """ΔF rows (m, dim), Δℓ (m,) and the example (m,) of every (example, labeling) pair of a K-label data set."""
    rows, losses, ex = [], [], []
    for i, (x, y) in enumerate(zip(ds.X, ds.Y)):
        fy = joint_f(x, y)
        for lab in itertools.product(range(K), repeat=len(y)):
            lab = np.array(lab)
            rows.append(fy - joint_f(x, lab))
            losses.append(float(np.sum(lab != y)))
            ex.append(i)
    return np.array(rows), np.array(losses), np.array(ex)


def hinge(ds, w):
    """Hᵢ(w) = max_y Δℓᵢ(y) − wᵀΔfᵢ(y) by enumeration, shape (n,)."""
    A, l, ex = all_constraints(ds)
    h = l - A @ w
    out = np.full(len(ds), -np.inf)
    np.maximum.at(out, ex, h)
    return np.maximum(out, 0.0)


def highs_qp(cost, lower, upper, rows, hess_diag=None):
    """min ½ xᵀdiag(hess_diag)x + costᵀx s.t. lo ≤ a x ≤ hi for (a, lo, hi) in rows, lower ≤ x ≤ upper, by highspy
    directly (an LP without ``hess_diag``). Asserts HiGHS reports an optimum; returns (optimum, x)."""
    nv = len(cost)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.addVars(nv, np.asarray(lower, float), np.asarray(upper, float))
    h.changeColsCost(nv, np.arange(nv, dtype=np.int32), np.asarray(cost, float))
    for a, lo, hi in rows:
        nz = np.nonzero(a)[0]
        h.addRow(lo, hi, len(nz), nz.astype(np.int32), a[nz])
    if hess_diag is not None:
        # lower triangle in CSC: only the diagonal entries that are not zero
        start, index, value = [0], [], []
        for k in range(nv):
            if hess_diag[k] != 0:
                index.append(k)
                value.append(float(hess_diag[k]))
            start.append(len(index))
        assert index, "a QP needs a Hessian entry"
        hess = highspy.HighsHessian()
        hess.dim_ = nv
        hess.format_ = highspy.HessianFormat.kTriangular
        hess.start_, hess.index_, hess.value_ = start, index, value
        h.passHessian(hess)
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return h.getInfo().objective_function_value, np.array(h.getSolution().col_value)


def solve_enumerated(A, dl, ex, n, C, norm="l2", metric=None, lam=0.0):
    """min Ω(w) + C Σᵢ ξᵢ s.t. A_r w + ξ_{ex_r} ≥ dl_r for every row r, ξ ≥ 0, by highspy directly.

    Parameters
    ----------
    A : ndarray, shape (m, dim)
        ΔF rows of the enumerated labelings.
    dl, ex : ndarray, shape (m,)
        Δℓ and the example (slack) of each row.
    n : int
        Number of slacks.
    C : float
        Slack weight.
    norm : {"l2", "l1", "enet"}
        ``"l2"``: Ω = ½ wᵀD⁻¹w (P0 with D = 1, the Laplace QP (6) with D = σ, the adaptive QP (5) with
        D = β²/(2λ)); wₖ = 0 where Dₖ = 0. ``"l1"``: Ω = ½‖w‖₁ (P1, w = μ − ν). ``"enet"``: Ω = ½‖w‖² + λ‖w‖₁
        (the elastic-net M³N), written with w free and tₖ ≥ |wₖ| (rows tₖ − wₖ ≥ 0, tₖ + wₖ ≥ 0), not with
        mmprog's μ, ν split.
    metric : ndarray, shape (dim,), optional
        The diagonal metric D of ``"l2"`` (default all ones).
    lam : float
        λ of ``"enet"``.

    Returns
    -------
    optimum : float
    w : ndarray, shape (dim,)
    """
    m, dim = A.shape
    if norm == "l2":
        Dm = np.ones(dim) if metric is None else np.asarray(metric, float)
        nv, k0 = dim + n, 0
        cost = np.r_[np.zeros(dim), C * np.ones(n)]
        lower = np.r_[np.where(Dm > 0, -INF, 0.0), np.zeros(n)]
        upper = np.r_[np.where(Dm > 0, INF, 0.0), INF * np.ones(n)]
        hess = np.r_[np.where(Dm > 0, 1.0 / np.where(Dm > 0, Dm, 1.0), 0.0), np.zeros(n)]
    elif norm == "enet":
        assert metric is None
        # columns w (free), t ≥ 0, ξ ≥ 0; Hessian 1 on w, cost λ on t
        nv, k0 = 2 * dim + n, dim
        cost = np.r_[np.zeros(dim), lam * np.ones(dim), C * np.ones(n)]
        lower = np.r_[-INF * np.ones(dim), np.zeros(dim + n)]
        upper = INF * np.ones(nv)
        hess = np.r_[np.ones(dim), np.zeros(dim + n)]
    else:
        assert norm == "l1" and metric is None
        nv, k0 = 2 * dim + n, dim
        cost = np.r_[0.5 * np.ones(2 * dim), C * np.ones(n)]
        lower, upper, hess = np.zeros(nv), INF * np.ones(nv), None
    rows = []
    for r in range(m):
        a = np.zeros(nv)
        a[:dim] = A[r]
        if norm == "l1":
            a[dim:2 * dim] = -A[r]
        a[k0 + dim + ex[r]] = 1.0
        rows.append((a, dl[r], INF))
    if norm == "enet":
        for k in range(dim):
            for sign in (-1.0, 1.0):            # t_k − w_k ≥ 0 and t_k + w_k ≥ 0
                a = np.zeros(nv)
                a[k], a[dim + k] = sign, 1.0
                rows.append((a, 0.0, INF))
    opt, x = highs_qp(cost, lower, upper, rows, hess)
    return opt, (x[:dim] if norm in ("l2", "enet") else x[:dim] - x[dim:2 * dim])


def solve_full(ds, C, norm="l2", metric=None, lam=0.0):
    """:func:`solve_enumerated` over :func:`all_constraints` of a K-label data set; returns (optimum, w)."""
    A, dl, ex = all_constraints(ds)
    return solve_enumerated(A, dl, ex, len(ds), C, norm, metric, lam)
