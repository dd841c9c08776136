"""Sparse-to-sparse prediction with the L∞-regularised max-margin program (Szedmak, Ni, Saunders & Rousu, "Max-margin
structured output learning in L1 norm space"): the estimator :class:`LInfMaxMargin`, the prediction (23)–(27) and
the set-based perceptron (Algorithm 1).

Prediction
----------
For an input x the scores are d = Wφ(x) (Figure 1); the output is the indicator vector ψ(y) that (23) selects. The
bounded simplex problem (24), max dᵀu s.t. 𝟙ᵀu = 1, 0 ≤ u ≤ C, has the closed form (26): sort d decreasingly and put
C on the K − 1 largest, 1 − C(K − 1) on the K-th, with K = ⌈1/C⌉ (:func:`bounded_simplex`). The outer problem (27)
chooses how many outputs to predict; we read it as

    max_{t = 1, 2, ...}  t · (max_u dᵀu s.t. 𝟙ᵀu = 1, 0 ≤ u ≤ 1/t) / g(t)  =  S_t / g(t),

where S_t is the sum of the t largest scores, because at C = 1/t the closed form puts 1/t on the t largest scores.
This is the reading the paper's text describes — "if t = 1 we chose the component of d with the highest value then
the two highest ones and so on", and "g(t) = t is obviously wrong, since in case of a decreasing sequence it gives
surely the optimum when t = 1" (S_t/t is the mean of the t largest) — whereas the printed bound 0 ≤ u_t ≤ g(t)
would make the inner value decrease in t for every g ≥ 1 and always select one output. The search stops at the first
local maximum (the paper's "first local minimum" of a maximisation); the support of the winning u is the predicted
indicator vector. ``g="sqrt"`` is √t; ``g="log"`` is log(1 + t), since log t vanishes at t = 1 (S₁/log 1 = ∞ would
always stop at one output); any increasing positive callable of a float array is accepted. Rows without a positive
score predict the empty set.

The set perceptron
------------------
Algorithm 1 keeps a set W of joint indices (w its indicator) and, for every sample with ⟨w, zᵢ⟩ < λ, adds the support
Zᵢ of zᵢ to W, until an epoch makes no update. Theorem 3 bounds the number of updates by ℓ_max/Δ² (30) and the final
margin γ(w_t, S) = minᵢ⟨w_t, zᵢ⟩/‖w_t‖₂ from below by λΔ/ℓ_max (31), with Δ = δ(λ, w*)/‖w*‖₂ for a w* that satisfies
every constraint and δ(λ, w*) = minᵢ|W* ∩ Zᵢ|. The paper writes ‖w‖₂ = ⟨w, w⟩ = |W| in the definitions but uses
‖w_t‖₂² = |W_t| in the proof (32); :func:`set_perceptron` reports the bounds under both readings ("printed":
‖w‖ = |W|; "euclidean": ‖w‖ = √|W|). Under the Euclidean reading (30) can fail: on a chain Zᵢ = {eᵢ, eᵢ₊₁} with
masses ½, λ = 0.9, every sample costs one update (n − 1 in all) while ℓ_max|W*|/δ² = 2n/4 = n/2 — the proof's step
(34), ⟨w*, w_t⟩ ≥ δ(λ)t, assumes every update adds δ new elements, but an update adds only Zᵢ minus what W already
holds. It fails on the sparse generator as well (``mmprog reproduce linf``: 10⁵ updates against 8.9·10⁴ at
m = 10⁵). With W* = ∪ᵢZᵢ (the set of (18)) the printed reading gives ℓ_max|W*|²/δ² ≥ |W*| ≥ the number of updates
(each update adds at least one element of W*), so it always holds.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ...exceptions import DataError, ParameterError, check_param

__all__ = ["LInfMaxMargin", "LInfFitResult", "bounded_simplex", "select_sets", "set_perceptron", "PerceptronResult",
           "set_prf", "resolve_g"]

SUPPORTS = ("any", "min", "scale_free")


# ------------------------------------------------------------------------------------------------------------
# (24)–(27): from scores to an indicator vector
# ------------------------------------------------------------------------------------------------------------

def bounded_simplex(d, C):
    """The closed form (26) of (24): argmax dᵀu s.t. 𝟙ᵀu = 1, 0 ≤ u ≤ C, for every row of ``d`` at once.

    Parameters
    ----------
    d : ndarray, shape (n,) or (r, n)
    C : float or ndarray of shape (r,)
        Caps in (0, 1]; K = ⌈1/C⌉ ≤ n is needed for feasibility (C ≥ 1/n).

    Returns
    -------
    ndarray, same shape as ``d``
        u: C on the K − 1 largest entries, 1 − C(K − 1) on the K-th, 0 elsewhere (ties in d broken by position).
    """
    d = np.asarray(d, dtype=np.float64)
    one = d.ndim == 1
    D = d[None, :] if one else d
    if D.ndim != 2:
        raise ParameterError(f"d must be a 1-d or 2-d array; got shape {d.shape}")
    r, n = D.shape
    C = np.broadcast_to(np.asarray(C, dtype=np.float64), (r,))
    if not np.all((C > 0) & (C <= 1)) or np.any(C * n < 1 - 1e-12):
        raise ParameterError(f"C must lie in [1/n, 1] = [{1 / max(n, 1):.4g}, 1] so that (24) is feasible; got "
                             f"{C.min():.4g}..{C.max():.4g}")
    # K = ⌈1/C⌉, guarded against 1/C landing a rounding error above an integer
    K = np.ceil(1.0 / C - 1e-9).astype(np.int64)
    order = np.argsort(-D, axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(n)[None, :].repeat(r, axis=0), axis=1)
    u = np.where(rank < (K - 1)[:, None], C[:, None], 0.0)
    u = np.where(rank == (K - 1)[:, None], (1.0 - C * (K - 1))[:, None], u)
    return u[0] if one else u


def resolve_g(g):
    """The outer weight g of (27) as a function of a float array t ≥ 1: ``"sqrt"`` → √t, ``"log"`` → log(1 + t),
    or a callable (checked to give positive, non-decreasing finite values on t = 1..64)."""
    if isinstance(g, str):
        if g == "sqrt":
            return np.sqrt
        if g == "log":
            return np.log1p
    elif callable(g):
        probe = np.arange(1.0, 65.0)
        try:
            val = np.asarray(g(probe), dtype=np.float64)
        except Exception as exc:  # noqa: BLE001 — the user's function: report what it did
            raise ParameterError(f"g must accept a float array t = 1, 2, ... and return g(t); calling it failed: "
                                 f"{exc}") from exc
        if val.shape != probe.shape or not np.all(np.isfinite(val)) or np.any(val <= 0) or np.any(np.diff(val) < 0):
            raise ParameterError("g must map t = 1, 2, ... to finite, positive, non-decreasing values (elementwise "
                                 "on a float array)")
        return g
    raise ParameterError(f'g must be "sqrt", "log" or a callable; got {g!r}')


def select_sets(D, g="sqrt", block=4_000_000):
    """The predicted indicator vectors (27) for every row of the score matrix ``D`` (no loop over rows).

    Parameters
    ----------
    D : ndarray or scipy.sparse matrix, shape (n, n_outputs)
        Scores d = Wφ(x) per row.
    g : "sqrt", "log" or callable
        The outer weight (module docstring).
    block : int
        Rows are processed in chunks padded to their longest row, at most this many cells per chunk.

    Returns
    -------
    scipy.sparse.csr_matrix, shape (n, n_outputs), 0/1
        Row r marks the t* largest scores of row r, t* the first local maximum of S_t/g(t) over t = 1, 2, ...;
        only positive scores are candidates (a zero or negative next score never raises S_t/g(t)); ties are
        taken in output order.

    Notes
    -----
    Each chunk is one (rows, longest row) array sorted along its rows: many short sorts, several times faster
    than one lexsort of every score (10⁷ scores: 33 s by lexsort here).
    """
    gf = resolve_g(g)
    D = sp.csr_matrix(D, dtype=np.float64, copy=True)
    D.data[D.data <= 0] = 0.0
    D.eliminate_zeros()
    D.sort_indices()
    n, k = D.shape
    lengths = np.diff(D.indptr)
    out_rows, out_cols = [], []
    max_len = int(lengths.max(initial=0))
    if max_len == 0:
        return sp.csr_matrix((n, k))
    step = max(1, int(block) // max_len)
    g_all = np.asarray(gf(np.arange(1.0, max_len + 1.0)), dtype=np.float64)
    for r0 in range(0, n, step):
        r1 = min(n, r0 + step)
        lo, hi = D.indptr[r0], D.indptr[r1]
        if hi == lo:
            continue
        L = int(lengths[r0:r1].max())
        local = np.repeat(np.arange(r1 - r0), lengths[r0:r1])
        pos = np.arange(hi - lo) - (D.indptr[r0:r1] - lo)[local]
        vals = np.full((r1 - r0, L), -np.inf)
        cols = np.full((r1 - r0, L), -1, dtype=np.int64)
        vals[local, pos] = D.data[lo:hi]
        cols[local, pos] = D.indices[lo:hi]
        order = np.argsort(-vals, axis=1, kind="stable")       # decreasing; ties keep output order
        sv = np.take_along_axis(vals, order, axis=1)
        valid = np.isfinite(sv)
        S = np.cumsum(np.where(valid, sv, 0.0), axis=1)
        ratio = np.where(valid, S / g_all[None, :L], -np.inf)
        nxt = np.concatenate([ratio[:, 1:], np.full((r1 - r0, 1), -np.inf)], axis=1)
        stop = valid & (nxt <= ratio)
        t_star = np.argmax(stop, axis=1) + 1                    # the first local maximum
        keep = valid & (np.arange(L)[None, :] < t_star[:, None])
        rr, cc = np.nonzero(keep)
        out_rows.append(rr + r0)
        out_cols.append(np.take_along_axis(cols, order, axis=1)[rr, cc])
    rows = np.concatenate(out_rows) if out_rows else np.zeros(0, dtype=np.int64)
    cols = np.concatenate(out_cols) if out_cols else np.zeros(0, dtype=np.int64)
    return sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, k))


def set_prf(pred, truth):
    """Micro precision, recall and F1 of predicted indicator sets against the true ones.

    Parameters
    ----------
    pred, truth : sparse or dense, shape (n, n_outputs); an entry counts when > 0

    Returns
    -------
    dict
        ``precision``, ``recall``, ``f1``, ``tp``, ``n_pred``, ``n_true``.
    """
    P = sp.csr_matrix(pred) > 0
    T = sp.csr_matrix(truth) > 0
    if P.shape != T.shape:
        raise DataError(f"predicted sets have shape {P.shape} but the true sets {T.shape}")
    tp = int(P.multiply(T).sum())
    npred, ntrue = int(P.sum()), int(T.sum())
    p = tp / npred if npred else 0.0
    r = tp / ntrue if ntrue else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": p, "recall": r, "f1": f, "tp": tp, "n_pred": npred, "n_true": ntrue}


# ------------------------------------------------------------------------------------------------------------
# The estimator
# ------------------------------------------------------------------------------------------------------------

@dataclass
class LInfFitResult:
    """What :meth:`LInfMaxMargin.fit` learned about its program (``result_``).

    Attributes
    ----------
    objective : float
        ‖w‖∞ at the optimum of (10) (the LP's t).
    support : str
        Which optimum ``w_`` holds: ``"any"`` (the LP's), ``"min"`` ((17)) or ``"scale_free"`` ((18)).
    n_vars, n_cons : int
        Size of the final master LP.
    n_private : int
        Aggregated private columns among its variables.
    rounds : int
        Constraint-generation rounds.
    n_rows : int
        Samples in the final master (of ``n_samples``).
    n_samples : int
    termination : str
    history : list of dict
        Per round (see :class:`mmprog.programs.linf.LInfRun`).
    timings : dict
        Seconds: ``separation``, ``rows``, ``model``, ``solver``, ``lp_total`` (constraint generation),
        ``second_stage`` and ``total`` (all of fit).
    min_margin : float
        minᵢ zᵢᵀw over all samples at the returned ``w_`` (≥ b for the LP optimum and (17); d·(18) ≥ b).
    nnz : int
        Non-zeros of ``w_``.
    route : str
        How the master was solved: ``"native"`` (HiGHS fed with CSR blocks) or ``"pyomo"``.
    alpha : ndarray
        Multipliers of the master's margin rows.
    run : mmprog.programs.linf.LInfRun
        Everything constraint generation returned.
    model : pyomo ConcreteModel
        The master (10) as an explicit Pyomo model (written on first access on the native route).
    """

    objective: float
    support: str
    n_vars: int
    n_cons: int
    n_private: int
    rounds: int
    n_rows: int
    n_samples: int
    termination: str
    history: list = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    min_margin: float = float("nan")
    nnz: int = 0
    route: str = "native"
    alpha: np.ndarray | None = None
    run: object = field(default=None, repr=False)

    @property
    def model(self):
        return None if self.run is None else self.run.model


class LInfMaxMargin(BaseEstimator):
    """Max-margin learning of a linear operator W with ψ(y) ⇐ Wφ(x) in L1 norm space (Szedmak et al., (10)).

    Parameters
    ----------
    b : float > 0
        The margin of zᵢᵀw ≥ b.
    support : {"any", "min", "scale_free"}
        Which optimum of (10) to keep: the LP's own (``"any"``), the minimum-support solution (17) (d = the LP's
        optimum on the union of the samples' supports), or the scale-free (18) (1 on that union). (17) and (18)
        differ by the factor d only, so they predict the same sets.
    kernel : None, str, Kernel or (Kernel, Kernel)
        None: explicit joint vectors zᵢ = ψ(yᵢ) ⊗ φ(xᵢ). Otherwise the kernelised program (19)–(22) with this input
        kernel (``"linear"``, ``"poly"``, ``"rbf"``, ``"ngram"`` or a :mod:`mmprog.kernels` instance) and a linear
        output kernel, or the pair (input kernel, output kernel). With an n-gram kernel ``fit`` and ``predict`` take
        lists of token sequences instead of Φ.
    solver : str
        Registered LP solver with duals.
    route : {"auto", "native", "pyomo"}
        How the master is solved: HiGHS fed with CSR blocks and the Pyomo model written on demand (``"native"``,
        the default for HiGHS), or the Pyomo model grown and solved through the registry (``"pyomo"``).
    n_start, batch, growth, aggregate, tol, max_rounds, time_limit
        Constraint generation (:func:`mmprog.programs.linf.solve_linf`).
    g : "sqrt", "log" or callable
        Default outer weight of the prediction (27).

    Attributes
    ----------
    w_ : scipy.sparse.csr_matrix, shape (1, n_outputs · n_inputs)
        The solution, joint index j = o · n_inputs + k (None with a kernel).
    W_ : scipy.sparse.csr_matrix, shape (n_outputs, n_inputs)
        The same as an operator (None with a kernel).
    w_phi_ : scipy.sparse.csr_matrix, shape (1, n_samples)
        w_Φ of the kernelised program (21) (kernel only).
    result_ : LInfFitResult
    n_inputs_, n_outputs_ : int
    """

    def __init__(self, b=1.0, support="any", kernel=None, solver="highs", route="auto", n_start=100, batch=100,
                 growth=2.0, aggregate=True, tol=1e-7, max_rounds=1000, time_limit=None, g="sqrt"):
        self.b = b
        self.support = support
        self.kernel = kernel
        self.solver = solver
        self.route = route
        self.n_start = n_start
        self.batch = batch
        self.growth = growth
        self.aggregate = aggregate
        self.tol = tol
        self.max_rounds = max_rounds
        self.time_limit = time_limit
        self.g = g

    # --------------------------------------------------------------------------------------------------
    def _validate(self):
        check_param("b", self.b, isinstance(self.b, (int, float, np.floating)) and np.isfinite(self.b)
                    and self.b > 0, "a finite float > 0")
        check_param("support", self.support, self.support in SUPPORTS, '"any", "min" or "scale_free"')
        resolve_g(self.g)

    def _kernels(self):
        from ...kernels import Linear, get_kernel
        if self.kernel is None:
            return None
        if isinstance(self.kernel, tuple):
            if len(self.kernel) != 2:
                raise ParameterError(f"kernel as a tuple must be (input kernel, output kernel); got {self.kernel!r}")
            return get_kernel(self.kernel[0]), get_kernel(self.kernel[1])
        return get_kernel(self.kernel), Linear()

    def fit(self, Phi, Psi):
        """Learn W from the samples (rows).

        Parameters
        ----------
        Phi : scipy.sparse matrix or array, shape (m, n_inputs), ≥ 0
            φ(xᵢ) per row (or a list of token sequences with an n-gram kernel).
        Psi : scipy.sparse matrix or array, shape (m, n_outputs), ≥ 0
            ψ(yᵢ) per row.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            (:class:`mmprog.exceptions.DataError`) for a negative, NaN or infinite entry (naming matrix and entry),
            mismatched rows, or a sample with φ(xᵢ) = 0 or ψ(yᵢ) = 0 (its constraint cannot hold).
        """
        from .program import KernelSamples, TensorSamples, solve_linf
        self._validate()
        t_start = time.perf_counter()
        kernels = self._kernels()
        if kernels is None:
            samples = TensorSamples(Phi, Psi)
        else:
            samples = KernelSamples(Phi, Psi, *kernels)
        run = solve_linf(samples, float(self.b), solver=self.solver, route=self.route, n_start=self.n_start,
                         batch=self.batch, growth=self.growth, aggregate=self.aggregate, tol=self.tol,
                         max_rounds=self.max_rounds, time_limit=self.time_limit)
        t0 = time.perf_counter()
        if self.support == "any":
            J, w = run.J, run.w
        else:
            J = samples.union_support()
            w = np.full(J.size, run.objective if self.support == "min" else 1.0)
        margins = samples.margins(J, w)
        t_second = time.perf_counter() - t0
        vec = sp.csr_matrix((w, (np.zeros(J.size, dtype=np.int64), J)), shape=(1, samples.dim))
        vec.eliminate_zeros()
        if kernels is None:
            self.w_ = vec
            self.W_ = samples.operator(vec.indices.astype(np.int64), vec.data)
            self.w_phi_ = None
            self.n_inputs_ = samples.n_inputs
        else:
            self.w_ = self.W_ = None
            self.w_phi_ = vec
            self.kernels_ = kernels
            self.train_inputs_ = samples.A
            self.train_outputs_ = samples.Psi
            self.n_inputs_ = None
        self.n_outputs_ = samples.n_outputs
        timings = dict(run.timings)
        timings["lp_total"] = timings.pop("total")
        timings["second_stage"] = t_second
        timings["total"] = time.perf_counter() - t_start
        self.result_ = LInfFitResult(
            objective=run.objective, support=self.support, n_vars=run.n_vars, n_cons=run.n_cons,
            n_private=run.n_private, rounds=run.rounds, n_rows=len(run.working_set), n_samples=samples.n,
            termination=run.termination, history=run.history, timings=timings,
            min_margin=float(margins.min()), nnz=int(vec.nnz), route=run.route, alpha=run.alpha, run=run)
        return self

    # --------------------------------------------------------------------------------------------------
    def _check_fitted(self):
        if not hasattr(self, "result_"):
            raise ParameterError("this LInfMaxMargin is not fitted yet: call fit(Phi, Psi) first")

    def decision_function(self, Phi):
        """The scores d = Wφ(x) for every row (Figure 1), CSR (n, n_outputs).

        With a kernel: d = Σₖ (w_Φ)ₖ κφ(xₖ, x) ψ(yₖ) (22), over the k with (w_Φ)ₖ ≠ 0 only, W never formed.
        """
        from .program import check_nonnegative
        self._check_fitted()
        if self.w_phi_ is None:
            F = check_nonnegative("Phi", Phi)
            if F.shape[1] != self.n_inputs_:
                raise DataError(f"Phi has {F.shape[1]} columns but the model was fitted with {self.n_inputs_} "
                                f"inputs")
            return sp.csr_matrix(F @ self.W_.T)
        kx, _ = self.kernels_
        if sp.issparse(Phi) or (isinstance(Phi, np.ndarray) and Phi.ndim == 2):
            Phi = check_nonnegative("Phi", Phi)
        rep = kx.represent(Phi, reference=self.train_inputs_)
        S = self.w_phi_.indices.astype(np.int64)
        G = kx.gram(rep, kx.take(self.train_inputs_, S))            # (n, |S|)
        weighted = sp.diags(self.w_phi_.data) @ self.train_outputs_[S]
        return sp.csr_matrix(G @ weighted) if sp.issparse(G) else sp.csr_matrix(np.asarray(G) @ weighted.toarray())

    def predict(self, Phi, g=None):
        """Predicted output indicator vectors (23)–(27).

        Parameters
        ----------
        Phi : shape (n, n_inputs), ≥ 0 (or token sequences with an n-gram kernel)
        g : "sqrt", "log", callable or None
            Outer weight of (27); None uses the estimator's ``g``.

        Returns
        -------
        scipy.sparse.csr_matrix, shape (n, n_outputs), 0/1
        """
        return select_sets(self.decision_function(Phi), self.g if g is None else g)

    def score(self, Phi, Psi):
        """Micro F1 of the predicted sets against supp ψ(y) (every entry of Psi > 0 is a true output)."""
        return set_prf(self.predict(Phi), Psi)["f1"]


# ------------------------------------------------------------------------------------------------------------
# Algorithm 1: the set perceptron
# ------------------------------------------------------------------------------------------------------------

@dataclass
class PerceptronResult:
    """What :func:`set_perceptron` returns.

    Attributes
    ----------
    W : ndarray of int64
        The learned set W_t (sorted joint indices); w_t is its indicator.
    updates : int
        t, the number of set updates.
    epochs : int
        Passes over the sample (the last one makes no update when ``converged``).
    converged : bool
    l_min, l_max : int
        minᵢ and maxᵢ |Zᵢ|.
    w_star_size : int
        |W*| of the reference solution the bounds use.
    delta : int
        δ(λ, w*) = minᵢ |W* ∩ Zᵢ|.
    bound_updates : dict
        (30) ℓ_max/Δ² under the ``"printed"`` (‖w‖ = |W|) and ``"euclidean"`` (‖w‖ = √|W|) readings.
    margin : dict
        γ(w_t, S) = minᵢ⟨w_t, zᵢ⟩/‖w_t‖ under both readings.
    bound_margin : dict
        (31) λΔ/ℓ_max under both readings.
    margins : ndarray, shape (m,)
        ⟨w_t, zᵢ⟩.
    seconds : float
    """

    W: np.ndarray
    updates: int
    epochs: int
    converged: bool
    l_min: int
    l_max: int
    w_star_size: int
    delta: int
    bound_updates: dict
    margin: dict
    bound_margin: dict
    margins: np.ndarray
    seconds: float


def set_perceptron(Phi, Psi, lam=0.5, normalize=True, w_star=None, max_epochs=100):
    """Algorithm 1, the primal perceptron for sets, with the bounds (30) and (31) of Theorem 3.

    Parameters
    ----------
    Phi, Psi : non-negative, shape (m, n_inputs) and (m, n_outputs)
    lam : float in (0, 1)
        λ, the margin ⟨w, zᵢ⟩ ≥ λ.
    normalize : bool
        L1-normalise every φ(xᵢ) and ψ(yᵢ) first (the measures of section 7; then ‖zᵢ‖₁ = 1).
    w_star : array of int, optional
        Joint indices of W*, the reference solution of the bounds; default the union of the supports (18), which
        satisfies every constraint when ‖zᵢ‖₁ ≥ λ.
    max_epochs : int

    Returns
    -------
    PerceptronResult

    Notes
    -----
    The sample order is the row order. Each update adds Zᵢ \\ W and raises the margins of the samples that hold the
    new elements (their columns' entries only); the next violated sample is found by a vectorised scan of the
    samples violated at the start of the epoch (margins only grow), so the loop runs over updates, not samples.
    """
    from .program import TensorSamples, check_nonnegative
    check_param("lam", lam, isinstance(lam, (int, float)) and 0 < lam < 1, "a float in (0, 1)")
    check_param("max_epochs", max_epochs, isinstance(max_epochs, (int, np.integer)) and max_epochs >= 1,
                "an int >= 1")
    t_start = time.perf_counter()
    F = check_nonnegative("Phi", Phi)
    P = check_nonnegative("Psi", Psi)
    if normalize:
        F = sp.csr_matrix(sp.diags(1.0 / np.maximum(np.asarray(F.sum(axis=1)).ravel(), 1e-300)) @ F)
        P = sp.csr_matrix(sp.diags(1.0 / np.maximum(np.asarray(P.sum(axis=1)).ravel(), 1e-300)) @ P)
    samples = TensorSamples(F, P)
    short = np.flatnonzero(samples.norms() < lam)
    if short.size:
        i = int(short[0])
        raise DataError(f"sample {i} has ||z_i||_1 = {samples.norms()[i]:.4g} < lam = {lam}: no set W satisfies "
                        f"<w, z_i> >= lam, so Algorithm 1 would never stop; lower lam or normalize=True")
    keys, Zc = samples.column_matrix(aggregate=False)
    Zcsc = Zc.tocsc()
    m = samples.n
    in_W = np.zeros(keys.size, dtype=bool)
    margins = np.zeros(m)
    updates = epochs = 0
    converged = False
    while epochs < max_epochs:
        epochs += 1
        # margins only grow, so only the samples violated at the start of an epoch can be updated in it; they are
        # visited in order and re-checked a block at a time (the loop runs over updates, not samples)
        cands = np.flatnonzero(margins < lam)
        ptr, epoch_updates, block = 0, 0, 64
        while ptr < cands.size:
            chunk = cands[ptr:ptr + block]
            hit = np.flatnonzero(margins[chunk] < lam)
            if hit.size == 0:
                ptr += chunk.size
                block = min(2 * block, 1 << 16)
                continue
            i = int(chunk[hit[0]])
            ptr += int(hit[0]) + 1
            block = 64
            cols = Zc.indices[Zc.indptr[i]:Zc.indptr[i + 1]]
            new = cols[~in_W[cols]]
            in_W[new] = True
            # raise every sample's margin by its mass on the new elements: the new columns' entries only
            starts, ends = Zcsc.indptr[new], Zcsc.indptr[new + 1]
            lengths = ends - starts
            idx = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths) + np.arange(int(lengths.sum()))
            np.add.at(margins, Zcsc.indices[idx], Zcsc.data[idx])
            updates += 1
            epoch_updates += 1
        if epoch_updates == 0:
            converged = True
            break
    sizes = np.diff(Zc.indptr)
    l_min, l_max = int(sizes.min()), int(sizes.max())
    # the reference solution W* and δ(λ, w*) = minᵢ |W* ∩ Zᵢ|
    if w_star is None:
        star = np.ones(keys.size, dtype=bool)
    else:
        ws = np.unique(np.asarray(w_star, dtype=np.int64))
        star = np.isin(keys, ws)
    star_margins = Zc @ star.astype(np.float64)
    if np.any(star_margins < lam - 1e-12):
        i = int(np.argmin(star_margins))
        raise ParameterError(f"w_star violates the margin of sample {i}: <w*, z_i> = {star_margins[i]:.4g} < lam = "
                             f"{lam}; Theorem 3 needs a w* with <w*, z_i> >= lam for all i")
    Zb = sp.csr_matrix((np.ones(Zc.nnz), Zc.indices, Zc.indptr), shape=Zc.shape)
    delta = int((Zb @ star.astype(np.float64)).min())
    n_star = int(star.sum())
    n_W = int(in_W.sum())
    norms_star = {"printed": float(n_star), "euclidean": float(np.sqrt(n_star))}
    norms_t = {"printed": float(n_W), "euclidean": float(np.sqrt(n_W))}
    bound_updates, bound_margin, margin = {}, {}, {}
    for k in ("printed", "euclidean"):
        Delta = delta / norms_star[k]
        bound_updates[k] = l_max / Delta ** 2
        bound_margin[k] = lam * Delta / l_max
        margin[k] = float(margins.min() / norms_t[k]) if n_W else 0.0
    return PerceptronResult(W=keys[in_W], updates=updates, epochs=epochs, converged=converged, l_min=l_min,
                            l_max=l_max, w_star_size=n_star, delta=delta, bound_updates=bound_updates,
                            margin=margin, bound_margin=bound_margin, margins=margins,
                            seconds=time.perf_counter() - t_start)
