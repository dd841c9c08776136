"""Sparse-to-sparse prediction with the L∞-regularised max-margin program (Szedmak, Ni, Saunders & Rousu, "Max-margin
structured output learning in L1 norm space"): the names users import.

* :func:`solve_linf` — (10) grown by the engine's constraint generation over samples
  (:mod:`mmprog.engine.sample_generation`), returning an :class:`LInfRun`;
* :class:`LInfMaxMargin` — the estimator (scikit-learn manners) around it, and the prediction (23)–(27);
* the set perceptron (Algorithm 1).

The mathematics lives with the program in :mod:`mmprog.programs.linf`: the master (10) and its algebra
(:mod:`~mmprog.programs.linf.program`), the samples (:mod:`~mmprog.programs.linf.samples`), the prediction
(:mod:`~mmprog.programs.linf.prediction`), the set perceptron (:mod:`~mmprog.programs.linf.perceptron`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from .engine.sample_generation import SampleRun, run as generate_samples
from .exceptions import DataError, ParameterError, check_param
from .programs.linf import KernelSamples, LInf, TensorSamples, check_nonnegative
from .programs.linf.perceptron import PerceptronResult, set_perceptron
from .programs.linf.prediction import bounded_simplex, resolve_g, select_sets, set_prf

# LInfRun is importable but not in __all__: it is the engine's SampleRun, documented there; listed here, Sphinx's
# viewcode took mmprog.linf as the home of every name of mmprog.engine.sample_generation and broke their source links
__all__ = ["LInfMaxMargin", "LInfFitResult", "solve_linf", "bounded_simplex", "select_sets",
           "set_perceptron", "PerceptronResult", "set_prf", "resolve_g"]

#: what :func:`solve_linf` returns (:class:`mmprog.engine.sample_generation.SampleRun`)
LInfRun = SampleRun


def solve_linf(samples, b=1.0, *, solver="highs", route="auto", n_start=100, batch=100, growth=2.0,
               aggregate=True, tol=1e-7, max_rounds=1000, time_limit=None, warm_fraction=0.05):
    """Solve (10) by constraint generation over samples (:mod:`mmprog.programs.linf`, package docstring).

    Parameters
    ----------
    samples : TensorSamples or KernelSamples
    b : float > 0
    solver : str
        A registered LP solver with duals.
    route : {"auto", "native", "pyomo"}
        ``"native"``: one highspy object fed with CSR blocks, the Pyomo model written on demand; ``"pyomo"``: the
        Pyomo model grown round by round and solved through the registry (HiGHS through its persistent handle,
        warm); ``"auto"``: native for ``solver="highs"``, else Pyomo (:func:`mmprog.engine.masters.choose_growth`).
    n_start : int
        Rows of the first master: the samples of smallest ‖zᵢ‖₁.
    batch : int
        Most violated samples added in the second round; each later round adds ``growth`` times more (a
        geometric schedule: when the optimum needs most samples — sparse joint spaces, where samples share few
        joint indices — the rounds stay logarithmic in m).
    growth : float ≥ 1
    aggregate : bool
        Give the joint indices private to one sample one shared column per sample (exact; package docstring).
        Only for :class:`TensorSamples`.
    tol : float
        A sample is violated when b − zᵢᵀw > tol · b.
    max_rounds : int
    time_limit : float, optional
        Wall-clock seconds.
    warm_fraction : float
        Re-solve warm (from the previous basis) when a round adds at most this fraction of new columns, else cold
        (:func:`mmprog.engine.masters.forget_basis`).

    Returns
    -------
    LInfRun

    Notes
    -----
    Samples are ranked by their violation per unit of ‖zᵢ‖₁, (b − zᵢᵀw)/‖zᵢ‖₁: the least increase of ‖w‖∞ that
    sample i alone would force (zᵢᵀΔw ≤ ‖zᵢ‖₁‖Δw‖∞). At w = 0 this picks the samples of smallest norm, where
    Proposition 2 locates the binding constraint.
    """
    return generate_samples(LInf(b=b), samples, solver=solver, route=route, n_start=n_start, batch=batch,
                            growth=growth, aggregate=aggregate, tol=tol, max_rounds=max_rounds,
                            time_limit=time_limit, warm_fraction=warm_fraction)


# ------------------------------------------------------------------------------------------------------------
# The estimator
# ------------------------------------------------------------------------------------------------------------

SUPPORTS = ("any", "min", "scale_free")


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
        Per round (see :class:`LInfRun`).
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
    run : LInfRun
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
        Constraint generation (:func:`solve_linf`).
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
        from .kernels import Linear, get_kernel
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
