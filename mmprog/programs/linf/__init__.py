"""The L∞-regularised max-margin LP of Szedmak, Ni, Saunders & Rousu, "Max-margin structured output learning in
L1 norm space", as explicit Pyomo models grown by constraint generation over samples.

Inputs and outputs are non-negative sparse vectors φ(xᵢ) (n_inputs) and ψ(yᵢ) (n_outputs); the joint vector
zᵢ = ψ(yᵢ) ⊗ φ(xᵢ) has the joint index j = o · n_inputs + k for output o and input k, so w read row-major is the
operator W (n_outputs, n_inputs) of ψ(y) ⇐ Wφ(x), and zᵢᵀw = ψ(yᵢ)ᵀWφ(xᵢ) (eq. 1).

The programs
------------
(10), the master (``LInf``, registered as ``"linf"``)::

    min_{t, w}  t                       (= ‖w‖∞)
    s.t.        zᵢᵀw ≥ b                 margin[i],   i in the working set S
                w_j − t ≤ 0              w_upper[j],  j ∈ J
                w_j + t ≥ 0              w_lower[j],  j ∈ J
                (w_private[i] with private_upper[i], private_lower[i]: the aggregated columns below)

(3), the L1 distance of the hyperplane {u : wᵀu = b} from the origin (:func:`distance_model`), and its dual (6)
(:func:`distance_dual_model`); Proposition 1: both equal b/‖w‖∞, which is why (10) maximises the L1 margin.

Why the master holds only the columns J of active rows, and only some rows
--------------------------------------------------------------------------
The joint dimension n_outputs · n_inputs can be 10⁸ and m can be 10⁵, so neither z nor w is ever dense. The master
holds a variable w_j only for the joint indices J = ∪_{i∈S} supp(zᵢ) of its rows. This loses nothing: take any
feasible (t, w) of the master over *all* joint indices and set w_j = 0 for j ∉ J; no row in S involves such j, so
the rows still hold, and |w_j| ≤ t still holds, so the objective is unchanged. Hence the restricted master has the
same optimum, and its solution extended by zeros is an optimal solution of the master over all indices — the
zero extension picks the point 0 of the interval [−d, d] that the paper's (15) leaves free for components no sample
touches (section 4.1, the structure behind Proposition 2).

Rows are generated (by the engine's constraint generation over samples, :mod:`mmprog.engine.sample_generation`;
:func:`mmprog.linf.solve_linf`): the master starts from a few samples; each round one sparse product gives
zᵢᵀw for all m samples (:meth:`TensorSamples.margins_of_columns`: the rows restricted to the union of supports, a
sparse (m, |U|) matrix built once — never a dense z), the violated samples are added — their rows zᵢ built as sparse
Kronecker products (:meth:`TensorSamples.rows`) — and the master is re-solved warm. When no sample is violated, the
zero-extended w is feasible for all m constraints and optimal for a relaxation of (10), hence optimal for (10). The
LP dual of the master (not in the paper; :meth:`LInf.dual_model`) is max b·Σᵢαᵢ s.t. ‖Σᵢ αᵢzᵢ‖₁ ≤ 1, α ≥ 0, and
the master's multipliers, padded with zeros, are feasible for the dual of the full (10): they certify the optimum.
Whether the master stays small depends on the data: with equal ‖zᵢ‖₁ every row forces w = d on its whole support, and
where samples share few joint indices (the sparse generator at joint dimension 10⁸) every sample ends up in the
master; the geometric batch schedule then keeps the rounds near log₂(m / batch).

Private columns. A joint index that occurs in exactly one sample over the whole data (its count in the pattern
product (Ψ ≠ 0)ᵀ(Φ ≠ 0) is 1) appears in one row only, forever. All such indices of sample i share one column
``w_private[i]`` with coefficient sᵢ = Σ_{j private to i} z_ij and the bounds −t ≤ w_private[i] ≤ t: a solution
of this master gives w_j = w_private[i] on those j with the same row value and bounds; conversely any w gives
w_private[i] = Σⱼ z_ij w_j / sᵢ, a weighted mean of values in [−t, t], with the same row value. The two masters
have the same optimum, and in sparse data most joint indices are private (a rare word with a given output).

Two routes solve the master. The explicit Pyomo model (components ``t``, ``w``, ``w_private``, ``w_upper``,
``w_lower``, ``private_upper``, ``private_lower``, ``margin``) grown round by round and solved through the solver
registry (HiGHS through its persistent handle) is ``route="pyomo"``. Writing rows through Pyomo costs about 0.4 ms
per column and per row (13 of 16 s at m = 10⁴ on the sparse generator), so with HiGHS the default is
``route="native"``: the same rows go to one highspy object as CSR blocks (the engine's back end for the master form
``"lp_columns"``, :class:`mmprog.engine.highs_native.GrownLP`, fed by :meth:`LInf.grown_rows`; 2.7 s at m = 10⁴,
46 s at m = 10⁵) and the Pyomo model is written on demand (:meth:`LInf.materialise`, on first access to
``LInfRun.model``) with the solution loaded, for inspection, export and the dualities. A test checks that both
routes reach the same optimum and that the written model holds every row and column.

Closed forms for non-negative z (the paper's setting)
----------------------------------------------------
* Proposition 2: the optimum of (10) is d = b / minᵢ‖zᵢ‖₁, attained by w = d·𝟙 (:func:`proposition2`).
* (17), the minimum-support solution of (16): w_j = d on the union of the supports U = ∪ᵢ supp(zᵢ), 0 elsewhere
  (:func:`min_support_solution`); U is the support of ΨᵀΦ, one sparse product.
* (18), the scale-free solution: 𝟙 on U (:func:`scale_free_solution`).

(17) is optimal for (10) (zᵢᵀw = d‖zᵢ‖₁ ≥ b). It is the *minimum*-support optimum — the solution of (16) — when
every ‖zᵢ‖₁ is equal (L1-normalised φ and ψ, as in section 7): then each row forces w_j = d on its whole support.
With unequal norms a row with ‖zᵢ‖₁ > minₖ‖zₖ‖₁ needs only part of its support at d, and (16) can have a smaller
support than U. :func:`min_support_model` states (16) exactly (a mixed-integer program, for small instances) so the
claim can be checked.

The package
-----------
:mod:`.samples` (Φ, Ψ and the joint rows), :mod:`.program` (the master (10), :class:`LInf`, its algebra — margins
of samples, the joint solution — and its LP as arrays for the native back end), :mod:`.propositions` (Propositions
1–2, (16)–(18)), :mod:`.checks` (the statements, :func:`linf_checks`), :mod:`.duality` (the hook of ``mmprog
verify``), the prediction (23)–(27) (:mod:`.prediction`) and the set perceptron (:mod:`.perceptron`). The loop is
the engine's (:mod:`mmprog.engine.sample_generation`); :func:`~mmprog.linf.solve_linf` and the estimator
:class:`~mmprog.linf.LInfMaxMargin` are in the face, :mod:`mmprog.linf`.
"""
from .samples import KernelSamples, TensorSamples, check_nonnegative
from .program import LInf, joint_solution, restrict_to_columns, sample_margins  # registers the program
from .propositions import (distance_dual_model, distance_model, min_support_model,
                           min_support_solution, proposition2, scale_free_solution)
from .checks import duality_report, linf_checks
from . import duality  # noqa: F401  (registers the hook of mmprog verify)

__all__ = ["check_nonnegative", "TensorSamples", "KernelSamples", "LInf", "distance_model", "distance_dual_model",
           "proposition2", "min_support_solution", "scale_free_solution", "min_support_model", "duality_report",
           "restrict_to_columns", "joint_solution", "sample_margins", "linf_checks"]
