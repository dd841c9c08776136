"""P0's n-slack dual by block-coordinate pairwise Frank–Wolfe over per-example caches of labelings, certified by
its duality gap.

The program is P0 (Taskar et al. 2003; Zhu, Xing & Zhang, KDD 2009, eq. P0)::

    min_w  P(w) = ½‖w‖² + C Σᵢ Hᵢ(w),     Hᵢ(w) = max_y Δℓᵢ(y) − wᵀΔfᵢ(y)  (≥ 0: y = yᵢ gives 0)

and its n-slack dual, one simplex of mass C per example over the labelings of that example (the gold labeling yᵢ,
whose Δf and Δℓ are 0, carries the mass of the inequality Σ_y αᵢ(y) ≤ C)::

    max_α  D(α) = Σᵢ Σ_y αᵢ(y) Δℓᵢ(y) − ½‖w(α)‖²,   w(α) = Σᵢ Σ_y αᵢ(y) Δfᵢ(y),   αᵢ ≥ 0,  Σ_y αᵢ(y) = C.

Every feasible α gives D(α) ≤ P* ≤ P(w(α)), so the relative gap (P − D) / max(1, |P|) at w = w(α) is a certificate:
the returned w is that close to P0's optimum, whichever route got there.

The elastic-net M³N (program ``enm3n``: ½‖w‖² + λ‖w‖₁ + C Σᵢ Hᵢ(w)) has the same dual but for the regulariser's
conjugate: ½‖w(α)‖² becomes ½‖soft(v(α), λ)‖² with v(α) = Σᵢ Σ_y αᵢ(y) Δfᵢ(y) and soft(v, λ) = sign(v)·max(|v| − λ,
0), whose gradient w(α) = soft(v(α), λ) is the primal point (Fenchel duality). So the route is the same with the
oracle and the gradients read at w(α), v(α) kept beside it; soft is 1-Lipschitz, so ‖f(xᵢ, a) − f(xᵢ, s)‖² still
bounds D's curvature along a pairwise direction and the step below maximises a lower model of D (exactly D for
λ = 0).

The route (Lacoste-Julien, Jaggi, Schmidt & Pletscher, ICML 2013, block-coordinate Frank–Wolfe; with the
per-example caches of labelings of Shah, Kolmogorov & Lampert, CVPR 2015, and pairwise steps as in Osokin,
Alayrac, Lukasewitz, Dokania & Lacoste-Julien, ICML 2016): examples are visited in a random order each pass; a visit
of example i

1. computes the token scores of i at the current w and runs the loss-augmented Viterbi (the oracle's kernels,
   :func:`mmprog.inference._compiled.viterbi_one`, ``viterbi2_one``/``viterbi2_allowed_one`` for the second order): ŷᵢ, whose gradient gᵢ(ŷᵢ) = Hᵢ(w) is the block's largest;
2. adds ŷᵢ to the example's cache Sᵢ (its working set: the labelings with α > 0, the gold one always);
3. takes up to ``inner`` pairwise steps on the block: mass γ moves from the cached labeling a of least gradient
   with αᵢ(a) > 0 to the one s of largest gradient, γ = min(αᵢ(a), (g(s) − g(a)) / ‖f(xᵢ, a) − f(xᵢ, s)‖²), the
   exact maximiser of D along that direction. A step that empties a removes it from the cache.

After each such oracle pass come passes of the same steps inside the caches without the oracle (Shah, Kolmogorov &
Lampert, CVPR 2015): most of the gap lies there, and a cached labeling's gradient reads only the token scores where
it differs from gold, so such a pass scores a fraction of the tokens. By default a round has 6 of them; with
``cache_rule="rate"``, as in Shah et al., they go on while they raise D faster per unit of cost than the oracle
pass before them did (at most ``cache_passes`` of them): every pairwise step's increase of D is known exactly,
γ(g(s) − g(a)) − ½γ²‖f(xᵢ, a) − f(xᵢ, s)‖², so the kernels add it up. Shah et al. measure the cost in seconds; here it
is the work the kernels count (rows of w read and moved, Viterbi cells, Gram and gradient reads), weighed by
:data:`WORK_SECONDS`, so that a fit's path is fixed by its seed and data, never by the machine's load (and swapping
the master or oracle back end still gives the same w).

Why this is cheap on template features: the gradient of a cached labeling is a sum of token scores, read once a
visit; a step moving γ from a to s then moves every cached gradient by −γ(K[m, s] − K[m, a]), with K the cached
labelings' Gram matrix K[m, m'] = Δfᵢ(y_m)ᵀΔfᵢ(y_m') (kept per example as labelings enter and leave the cache,
n·M² floats, each new row from the token Gram matrix G = XᵢXᵢᵀ, Σᵢ Tᵢ² floats computed once), so a step costs
O(|Sᵢ|) and the visit adds its net move Σ_m Δαᵢ(y_m) Δfᵢ(y_m) to v once (the differing tokens' rows of the d × K
state block). For the elastic net, whose w = soft(v, λ) is not linear in α, these are the steps of D's quadratic
lower model at the visit's start (see above): D rises at least as much as the model says.

The working set is kept as labelings (token-stacked, one row per cache slot) with their α, so the n-slack master of
P0 on that working set (:meth:`BCFWRun.working_set`: cuts Δfᵢ(y), Δℓᵢ(y) for every cached y ≠ yᵢ with α > 0) can be
built, shown, exported and re-solved; its optimum lies in [D(α), P*], within the certified gap of P(w).

Covered: the first- and second-order chain maps (the second with or without allowed bigrams) without edge, start/stop
or bias features, every gold label observed; maps built on the chain map (the arc labeller's,
:class:`~mmprog.features.arc_labels.ArcLabelFeatureMap`) too.
"""
from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from . import interrupts, memory
from ..exceptions import DataError, ParameterError, check_param
from ..features.chain import ChainFeatureMap
from ..inference.frank_wolfe import (WORK, average_step, bcfw_pass, cache_pass, rebuild_w, slot_gram, token_gram,
                                     work_arrays)

#: The programs the route solves: P0 and, with w = soft(v(α), λ), the elastic-net M³N
PROGRAMS = ("m3n", "enm3n")

#: The terminations a BCFW fit can end with (``max_iter`` counts passes over the examples).
TERMINATIONS = ("converged", "max_iter", "time_limit", "interrupted")


# ----------------------------------------------------------------------------------------------------------------------
# the driver
# ----------------------------------------------------------------------------------------------------------------------

@dataclass
class Check:
    """One certificate: P(w) and D(α) at w = w(α) recomputed from the cache."""

    passes: int
    elapsed: float
    upper: float
    lower: float
    gap: float
    estimate: float           # the pass's stale gap estimate Σᵢ block gaps / max(1, |P|) that triggered the check
    cached: int               # cached labelings with α > 0 (the working set's size, gold slots excluded)
    evicted: int
    point: int = 0            # where P was lowest: 0 at w(α), 1 at the passes' exponential average
    cache_passes: int = 0     # passes inside the caches so far (no oracle)
    oracle_seconds: float = 0.0   # so far: in the oracle (token scores, loss-augmented Viterbi, the bounds' inference)


@dataclass
class BCFWRun:
    """What :func:`fit` returns: w, the working set with its α, and the certificate.

    Attributes
    ----------
    w : ndarray, shape (dim,)
        The point whose full objective is the upper bound: w(α) or the passes' exponential average of it,
        whichever had the lower P at the last certificate.
    w_dual : ndarray, shape (dim,)
        w(α) of the working set, recomputed from it at the last certificate: v(α) = Σᵢ Σ_y αᵢ(y) Δfᵢ(y) for P0,
        soft(v(α), λ) for the elastic net.
    v_dual : ndarray, shape (dim,)
        v(α) = Σᵢ Σ_y αᵢ(y) Δfᵢ(y) (``w_dual`` itself when λ = 0).
    upper_bound, lower_bound : float
        P(w) (the full objective, every example's loss-augmented inference at w) and D(α).
    gap : float
        (upper − lower) / max(1, |upper|).
    termination : str
        ``converged`` (gap ≤ gap_tol), ``max_iter`` (passes) or ``time_limit``.
    history : list of Check
    timings : dict
        Seconds: ``pass`` (oracle passes, of which ``oracle`` in the token scores and the loss-augmented Viterbi),
        ``cache`` (passes inside the caches), ``certificate`` (of which ``certificate_oracle`` in the inference of
        the upper bounds), ``setup`` and ``total``.
    n_cache_passes : int
        Passes inside the caches (no oracle) between the oracle passes.
    work_log : list of tuple
        One per pass: (``"oracle"`` or ``"cache"``, the pass's thread CPU seconds, then its work counted by the
        kernels, one number per kind of :data:`mmprog.inference.frank_wolfe.WORK`), to check :data:`WORK_SECONDS`.
    """

    w: np.ndarray
    w_dual: np.ndarray
    upper_bound: float
    lower_bound: float
    gap: float
    termination: str
    n_passes: int
    C: float
    history: list = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    state: dict = field(default_factory=dict, repr=False)
    n_cache_passes: int = 0
    v_dual: np.ndarray = None
    work_log: list = field(default_factory=list, repr=False)

    def working_set(self, fmap, prepared, tol=0.0):
        """The working set as mmprog cuts with their multipliers: one n-slack cut Δfᵢ(y), Δℓᵢ(y) for every cached
        labeling y ≠ yᵢ with αᵢ(y) > tol.

        The master of P0 on these cuts (``program.add_cuts(model, cuts)`` on a fresh ``program.build(dims)``) has
        ``alpha`` as a feasible dual point of value :attr:`lower_bound` (with ``tol=0``), so its optimum lies
        between the certified lower and upper bounds.

        Returns
        -------
        cuts : mmprog.cuts.Cuts
            ``example`` (m,), ``dF`` CSR (m, dim), ``dl`` (m,), ``labelings`` (m, T_max) padded −1.
        alpha : ndarray, shape (m,)
        """
        from ..cuts import Cuts
        ex, alpha, labs = labelings_of(self.state, prepared, tol)
        dF, dl = fmap.delta(prepared, ex, labs)
        return Cuts(ex, dF, dl, labs), alpha

    def aggregated_cut(self):
        """The working set folded into one 1-slack cut (Joachims, Finley & Yu 2009) with its multiplier: a small
        master that certifies the same lower bound.

        Under the product of the examples' distributions αᵢ/C the 1-slack constraints average to
        wᵀΔF̄ ≥ Δℓ̄ − ξ with ΔF̄ = v(α)/(nC) and Δℓ̄ = Σᵢ Σ_y αᵢ(y)Δℓᵢ(y)/(nC), a valid cut of P0's 1-slack form;
        with multiplier nC (its whole budget) it gives back v(α), w(α) and D(α). So the 1-slack master on this one cut has
        its optimum in [D(α), P*], like the n-slack master on the labelings (:meth:`working_set`), at the size of
        one row instead of one row per cached labeling (on CoNLL-2000 tens of thousands).

        Returns
        -------
        cut : mmprog.cuts.Cuts
            ``example`` = [0], ``dF`` CSR (1, dim), ``dl`` (1,).
        alpha : ndarray, shape (1,)
        """
        from ..cuts import Cuts
        n = len(self.state["cnt"])
        scale = n * self.C
        v = self.w_dual if self.v_dual is None else self.v_dual
        nz = np.flatnonzero(v)
        dF = sp.csr_matrix((v[nz] / scale, nz, [0, len(nz)]), shape=(1, len(v)))
        # D(α) = Σ α Δℓ − ½‖w(α)‖² with w(α) = soft(v(α), λ) (= v(α) for P0)
        lin = self.lower_bound + 0.5 * float(self.w_dual @ self.w_dual)
        return Cuts(np.zeros(1, dtype=np.int64), dF, np.array([lin / scale])), np.array([scale])

    def state_arrays(self):
        """The working set and α as arrays (:func:`state_arrays`), for ``fit(resume=...)``."""
        return state_arrays(self.state, self.C)

    def save(self, path):
        """Write the working set and α (``.npz``, no pickle) to a temporary file beside ``path``, then rename."""
        save_state(self.state, path, self.C)


#: above this many cached labelings :func:`master` folds the working set into one 1-slack cut: the n-slack Gram dual
#: holds r² entries (CoNLL-2000 ends with ~80,000 labelings, 6.4·10⁹ entries)
MAX_MASTER_CUTS = 2000


def master(run, fmap, prepared, program, form="auto"):
    """P0's Pyomo master (``program``, an :class:`mmprog.programs.m3n.M3N`) on the run's working set, its α
    loaded.

    The statement that ``show``, ``export``, ``to_latex`` and ``verify`` read, whose optimum lies in
    [``run.lower_bound``, P*]: ``form="n"`` the n-slack program on the cuts of :meth:`BCFWRun.working_set` (one per
    cached labeling), ``form="one"`` the 1-slack program on :meth:`BCFWRun.aggregated_cut`, ``"auto"`` the first up
    to :data:`MAX_MASTER_CUTS` labelings. On the Gram dual master the α variables hold the route's α, so the
    model's dual value is the certified lower bound before any re-solve.

    Returns
    -------
    program : M3N
    model : pyomo ConcreteModel
    alpha : ndarray, shape (n_cuts,)
    slack : {"n", "one"}
    """
    dims, cuts, alpha, form = _master_parts(run, fmap, prepared, form)
    return program, _state_master(program, dims, cuts, alpha), alpha, form


def _master_parts(run, fmap, prepared, form):
    """The master's dimensions, cuts and α on the run's working set (``form`` as for :func:`master`)."""
    from ..programs.base import Dims
    check_param("form", form, form in ("auto", "n", "one"), '"auto", "n" or "one"')
    if form == "auto":
        form = "n" if int(np.count_nonzero(run.state["alpha"][:, 1:] > 0)) <= MAX_MASTER_CUTS else "one"
    dims = Dims(n=prepared.n, dim=fmap.dim, n_slacks=prepared.n if form == "n" else 1, groups=lambda: fmap.groups,
                group_names=fmap.group_names)
    cuts, alpha = run.working_set(fmap, prepared) if form == "n" else run.aggregated_cut()
    return dims, cuts, alpha, form


def _state_master(program, dims, cuts, alpha):
    """``program``'s Pyomo master on ``cuts``, its α loaded on a Gram dual."""
    model = program.build(dims)
    if len(cuts):
        program.add_cuts(model, cuts)
        if model.master == "dual":
            for var, a in zip(model.ws.components, alpha):
                var.set_value(float(a))
    return model


def engine_run(run, fmap, prepared, program, form="auto"):
    """The run as the engine's :class:`~mmprog.engine.records.EngineRun`, for :class:`mmprog.result.Result`: the
    master of :func:`master` as ``model``, stated when first read (:class:`~mmprog.engine.records.DeferredMaster`:
    its cuts and α are taken from the run now); ``solution.objective`` = D(α) (the certified lower bound, ≤ the
    master's optimum), ``upper_bound`` = P(w), so ``Result.gap`` is the route's certificate; ``n_iter`` counts
    passes.

    Returns
    -------
    EngineRun
    slack : {"n", "one"}
        The master's slack form (for ``Result(..., slack)``).
    """
    from .records import DeferredMaster, EngineRun
    from ..programs.base import Solution
    dims, cuts, alpha, form = _master_parts(run, fmap, prepared, form)
    model = DeferredMaster(lambda: _state_master(program, dims, cuts, alpha), len(cuts),
                           program.resolved_master(dims))
    sol = Solution(w=run.w, xi=np.zeros(prepared.n if form == "n" else 1), alpha=alpha, objective=run.lower_bound,
                   dual_objective=run.lower_bound, extra={"master": model.master, "route": "bcfw", "gap": run.gap})
    return EngineRun(model=model, solution=sol, history=list(run.history), termination=run.termination,
                     n_iter=run.n_passes, timings=dict(run.timings), upper_bound=run.upper_bound), form


def labelings_of(state, prepared, tol=0.0):
    """Example, α and padded labeling (m, T_max) of every cached labeling y ≠ yᵢ with α > tol."""
    lab, alpha, cnt = state["lab"], state["alpha"], state["cnt"]
    offsets = prepared.data["offsets"]
    rows = [(i, m) for i in range(len(cnt)) for m in range(1, int(cnt[i])) if alpha[i, m] > tol]
    T = int(prepared.lengths.max()) if prepared.n else 0
    labs = np.full((len(rows), T), -1, dtype=np.int64)
    for r, (i, m) in enumerate(rows):
        labs[r, : prepared.lengths[i]] = lab[m, offsets[i]: offsets[i + 1]]
    ex = np.array([i for i, _ in rows], dtype=np.int64)
    return ex, np.array([alpha[i, m] for i, m in rows], dtype=np.float64), labs


def state_arrays(state, C):
    """The working set (every cached y ≠ yᵢ with α > 0, its labels token-stacked) and α as plain arrays: what
    :func:`save_state` writes and ``fit(resume=...)`` takes."""
    lab, alpha, cnt = state["lab"], state["alpha"], state["cnt"]
    offsets = state["offsets"]
    ex, mm = [], []
    for i in range(len(cnt)):
        for m in range(1, int(cnt[i])):
            if alpha[i, m] > 0:
                ex.append(i)
                mm.append(m)
    ex = np.array(ex, dtype=np.int64)
    mm = np.array(mm, dtype=np.int64)
    pieces = [lab[m, offsets[i]: offsets[i + 1]] for i, m in zip(ex, mm)]
    return dict(example=ex, alpha=alpha[ex, mm] if len(ex) else np.zeros(0),
                tokens=np.concatenate(pieces) if pieces else np.zeros(0, np.int16), C=np.float64(C),
                n=np.int64(len(cnt)), n_tokens=np.int64(offsets[-1]))


def save_state(state, path, C):
    """:func:`state_arrays` as ``.npz`` (no pickle), written to a temporary file beside ``path`` and renamed."""
    arrays = state_arrays(state, C)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".bcfw_", suffix=".npz", dir=folder)
    os.close(fd)
    try:
        np.savez(tmp, **arrays)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load_state(path):
    """What :func:`save_state` wrote: a dict of arrays (``example``, ``alpha``, ``tokens``, ``C``, ``n``,
    ``n_tokens``)."""
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _chain_arrays(fmap, prepared):
    """CSR arrays of the stacked token rows (float64 values), offsets and gold labels per token; refuses what the
    route does not cover."""
    if not isinstance(fmap, ChainFeatureMap) or fmap.n_edge_features or fmap.start_stop or fmap.bias:
        raise ParameterError("route 'bcfw' covers the chain map (first or second order) without edge, start/stop "
                             "or bias features; use the cutting-plane route for this feature map")
    X = prepared.data["X"]
    X = sp.csr_matrix(X) if not sp.issparse(X) else X
    if not X.has_sorted_indices:
        X = X.sorted_indices()
    offsets = np.asarray(prepared.data["offsets"], dtype=np.int64)
    ex = np.repeat(np.arange(prepared.n), prepared.lengths)
    pos = np.arange(offsets[-1]) - np.repeat(offsets[:-1], prepared.lengths)
    gold = np.ascontiguousarray(prepared.gold[ex, pos], dtype=np.int64)
    if np.any(gold < 0):
        raise DataError("route 'bcfw' needs every gold label observed; this data set hides "
                        f"{int(np.sum(gold < 0))} token labels (use the cutting-plane route)")
    if fmap.n_labels > np.iinfo(np.int16).max:
        raise ParameterError(f"route 'bcfw' keeps labels as int16; got n_labels = {fmap.n_labels}")
    return (X.indptr.astype(np.int64), X.indices.astype(np.int64), np.asarray(X.data, dtype=np.float64), offsets,
            gold)


def _hinge(oracle, w):
    """Hᵢ(w) of every example by the oracle (loss-augmented inference on all examples at w), shape (n,)."""
    fmap, prepared = oracle.fmap, oracle.prepared
    if oracle.backend == "serial" and hasattr(fmap, "separate_sum"):
        from .oracle import blas_single
        with blas_single():
            return np.asarray(fmap.separate_sum(w, prepared, sparse=True, counts=True, labeling=True)[2])
    return np.asarray(oracle.separate_one_slack(w)[1])


#: passes inside the caches after an oracle pass, by ``cache_rule``: always 6 (``"fixed"``), at most 16 (``"rate"``);
#: with the average taking every pass's point, 6 certified gap 1e-2 about 6 % sooner than 4 on the tutorial's
#: features (paired whole runs); on CoNLL-2000 rich and esp.train order 2, 3 to 6 are within the machine's noise of
#: each other and 1 or 2 slower (``bench certify --cache-passes 1,2,3,4,6``, the ``cache-passes`` record)
CACHE_PASSES = {"fixed": 6, "rate": 16}

#: Seconds per unit of each kind of work the pass kernels count (:data:`mmprog.inference.frank_wolfe.WORK`: rows of
#: w read by token scores, rows moved by steps, Viterbi cells, small reads), for ``cache_rule="rate"``: a
#: non-negative least-squares fit of passes' thread CPU seconds (relative error) on CoNLL-2000 ``rich`` (order 1),
#: esp.train ``rich`` (order 2, seen bigrams) and the sklearn-crfsuite tutorial's features (elastic net), 3,000
#: sentences each; ``python -m mmprog.bench certify --work-log PATH`` refits them on its own passes.
WORK_SECONDS = np.array([2.0e-8, 9.7e-9, 8.3e-10, 8.0e-9])


def fit(oracle, C=1.0, gap_tol=1e-2, max_iter=1000, time_limit=None, inner=10, cache_size=64, seed=0,
        check_every=20, resume=None, tol=1e-12, verbose=False, callback=None, average=True, ema=0.1, sampling="gap",
        full_every=2, cache_passes=None, cache_sampling="gap", cache_rule="fixed", lam=0.0, cost_power=0.5):
    """Solve P0 (or, with ``lam`` > 0, the elastic-net M³N) by block-coordinate pairwise Frank–Wolfe on its n-slack
    dual until the duality gap is certified.

    Parameters
    ----------
    oracle : mmprog.engine.oracle.Oracle
        Over a chain map (order 1 or 2) without edge/start-stop/bias features; its loss-augmented inference on every
        example gives the upper bound P(w) at each certificate.
    C : float
        P0's slack weight (n-slack scale: ½‖w‖² + C Σᵢ ξᵢ), > 0.
    gap_tol : float
        Stop (``converged``) once (P(w) − D(α)) / max(1, |P(w)|) ≤ gap_tol.
    max_iter : int
        Oracle passes over the examples (each followed by up to ``cache_passes`` passes inside the caches).
    time_limit : float, optional
        Wall-clock seconds; checked after every pass (a pass on CoNLL-2000 takes about a second).
    inner : int
        Pairwise steps per visit (Shah et al.'s multi-plane steps; 0: pure cache growth), O(|Sᵢ|) each (to gap 1e-2
        on CoNLL-2000 ``rich``, 3, 10 and 20 steps took alike times; on esp.train at order 2, 20 took longer than 10).
    cache_passes : int, optional
        Passes (``"fixed"``; default 6) or the most passes (``"rate"``; default 16) inside the caches after each
        oracle pass (pairwise steps among the cached labelings, no oracle: Shah, Kolmogorov & Lampert, CVPR 2015),
        where most of the gap lies (94 % at pass 100 of the oracle-only route on CoNLL-2000); such a pass scores only
        the tokens where a cached labeling differs from gold.
    cache_sampling : {"gap", "uniform"}
        A cache pass's visits: by the blocks' last seen gaps inside their caches (``cost_power``), or a permutation.
    cache_rule : {"fixed", "rate"}
        ``"fixed"``: always ``cache_passes``. ``"rate"``: a round's cache passes stop once one raises D(α) less per
        unit of counted work than its oracle pass did (Shah et al.'s rule, with the kernels' work counts weighed by
        :data:`WORK_SECONDS` in place of seconds). Both paths are fixed by ``seed``. ``python -m mmprog.bench
        certify --cache-rule rate`` times a rate fit beside CRFsuite (the default: a fixed one) and ``--work-log PATH``
        checks the weights against the passes' CPU seconds.
    cache_size : int
        Labelings kept per example, gold included (a full cache empties its least-weighted labeling onto the best;
        a cache smaller than the optimum's support per example cannot reach the optimum); n·cache_size² floats.
    seed : int
        Seed of the visiting order (one permutation a pass).
    check_every : int
        Passes between certificates (each costs about two passes: w rebuilt from α and two oracle calls); a
        certificate is also computed when the pass's stale gap estimate (Σᵢ block gaps at the w of each visit),
        scaled by the ratio of true gap to estimate at the last certificate, falls to gap_tol — then no sooner than
        1, 2, 4, … passes after the last while that prediction proves wrong.
    resume : str or dict, optional
        A working set saved by :meth:`BCFWRun.save` (path) or its dict: the fit starts from that α.
    tol : float
        Gradient difference below which a pairwise step is not taken.
    average : bool
        Also evaluate P at an exponential average of the w(α) of every pass (with the oracle or inside the caches),
        w̄ₖ = (1 − ρ)w̄ₖ₋₁ + ρ w(αₖ) with ρ = ``ema``, and keep the lower (P bounds P* at any w; w(α)'s P lags D(α)).
        Lacoste-Julien et al.'s (2013) weights 2/(k + 2) never gave the lowest P on 2,000 CoNLL-2000 sentences.
    ema : float
        Weight of the newest pass in the exponential average, in (0, 1]; ``bench certify --ema`` times another.
    sampling : {"gap", "uniform"}
        ``"gap"``: the passes between full ones draw their n visits by the blocks' last seen gaps (``cost_power``);
        ``"uniform"``: a permutation every pass (CoNLL-2000, 2,000 sentences, gap 2e-2: 105 passes against 180).
    full_every : int
        With ``sampling="gap"``: every ``full_every``-th pass visits every example once (refreshing every gap).
    cost_power : float
        κ ≥ 0 of both gap samplings, which draw block i in proportion to gᵢ / (Lᵢ·|Sᵢ|)^κ (:meth:`FrankWolfe.draw`).
    callback : callable, optional
        Called with every :class:`Check`; returning True stops the fit (termination ``interrupted``).
    lam : float
        λ ≥ 0 of the elastic-net M³N ½‖w‖² + λ‖w‖₁ + C Σᵢ Hᵢ(w) (program ``enm3n``; 0: P0; see the module docstring).

    Returns
    -------
    BCFWRun
    """
    cache_passes = CACHE_PASSES.get(cache_rule, CACHE_PASSES["fixed"]) if cache_passes is None else cache_passes
    _check_args(C, gap_tol, max_iter, inner, cache_size, check_every, ema, sampling, full_every, cache_passes,
                cache_sampling, cache_rule, lam, cost_power)
    settings = dict(C=float(C), inner=int(inner), tol=float(tol), average=average, ema=ema, verbose=verbose,
                    cache_passes=int(cache_passes), cache_sampling=cache_sampling, cache_rule=cache_rule,
                    lam=float(lam), cost_power=float(cost_power))
    fw = FrankWolfe(oracle, int(cache_size), resume, seed, settings)
    return fw.run(gap_tol, max_iter, time_limit, check_every, sampling, full_every, callback)


def _check_args(C, gap_tol, max_iter, inner, cache_size, check_every, ema, sampling, full_every, cache_passes,
                cache_sampling, cache_rule, lam, cost_power):
    """:func:`fit`'s arguments in their ranges, or a ParameterError naming the first that is not."""
    check_param("C", C, np.isfinite(C) and C > 0, "a finite float > 0")
    check_param("gap_tol", gap_tol, np.isfinite(gap_tol) and gap_tol >= 0, "a finite float ≥ 0")
    check_param("max_iter", max_iter, int(max_iter) >= 1, "an int ≥ 1")
    check_param("inner", inner, int(inner) >= 0, "an int ≥ 0")
    check_param("cache_size", cache_size, int(cache_size) >= 3, "an int ≥ 3")
    check_param("check_every", check_every, int(check_every) >= 1, "an int ≥ 1")
    check_param("ema", ema, 0 < ema <= 1, "a float in (0, 1]")
    check_param("sampling", sampling, sampling in ("uniform", "gap"), '"uniform" or "gap"')
    check_param("full_every", full_every, int(full_every) >= 1, "an int ≥ 1")
    check_param("cache_passes", cache_passes, int(cache_passes) >= 0, "an int ≥ 0")
    check_param("cache_sampling", cache_sampling, cache_sampling in ("uniform", "gap"), '"uniform" or "gap"')
    check_param("cache_rule", cache_rule, cache_rule in CACHE_PASSES, '"rate" or "fixed"')
    check_param("lam", lam, np.isfinite(lam) and lam >= 0, "a finite float ≥ 0")
    check_param("cost_power", cost_power, np.isfinite(cost_power) and cost_power >= 0, "a finite float ≥ 0")


class FrankWolfe:
    """One run of :func:`fit`: the per-example caches, w(α), the bounds and the history between passes. A pass is
    :meth:`order` (which examples, in which order) then :meth:`one_pass`; :meth:`certificate` computes the bounds."""

    def __init__(self, oracle, cache_size, resume, seed, settings):
        self.t_start = time.perf_counter()
        self.oracle, self.s = oracle, settings
        C = settings["C"]
        fmap, prepared = oracle.fmap, oracle.prepared
        self.Xp, self.Xi, self.Xd, self.offsets, self.gold = _chain_arrays(fmap, prepared)
        n, K, N = prepared.n, fmap.n_labels, int(self.offsets[-1])
        d = fmap.n_features
        lengths = np.asarray(prepared.lengths, dtype=np.int64)
        self.lengths = np.maximum(lengths, 1).astype(np.float64)
        self.Gp = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths * lengths, out=self.Gp[1:])
        self.Gv = np.empty(int(self.Gp[-1]))
        token_gram(self.Xp, self.Xi, self.Xd, self.offsets, self.Gp, self.Gv, np.zeros(d))
        M = cache_size
        self.lab = memory.zeros_on_touch((M, N), np.int16)
        self.lab[0] = self.gold
        self.alpha = np.zeros((n, M))
        self.alpha[:, 0] = C
        self.loss = np.zeros((n, M))
        self.cnt = np.ones(n, dtype=np.int64)
        if resume is not None:
            _restore(load_state(resume) if isinstance(resume, str) else resume, C, n, self.offsets, self.lab,
                     self.alpha, self.loss, self.cnt, self.gold)
        self.w = np.zeros(fmap.dim)
        # v = ΔFᵀα, of which the elastic net scores w = soft(v, λ); P0 scores v itself (one array)
        self.lam = settings["lam"]
        self.v = np.zeros(fmap.dim) if self.lam > 0 else self.w
        self.model, self.acc = _blocks(fmap, self.w), _blocks(fmap, self.v)
        self.W, self.Tr, self.Tri = self.model
        self.data = (self.Xp, self.Xi, self.Xd, self.offsets, self.gold, self.Gp, self.Gv)
        # the steps read the cached labelings' Gram matrices (n·M² floats) in place of token scores
        self.gram = memory.zeros_on_touch((n, M, M))
        self.cache = (self.lab, self.alpha, self.loss, self.cnt, self.gram)
        self.lin = self.rebuild()
        T = int(lengths.max()) if n else 1
        # the pass kernels' work arrays, made once
        self.work = work_arrays(T, K, M, fmap.order, fmap.allowed)
        if resume is not None:
            slot_gram(self.data, self.cache, self.work)
        self.hinge, self.bgap, self.cgap, self.ogap = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
        self.rng = np.random.default_rng(seed)
        self.history, self.timings = [], {"pass": 0.0, "oracle": 0.0, "cache": 0.0, "certificate": 0.0,
                                         "certificate_oracle": 0.0}
        self.timings["setup"] = time.perf_counter() - self.t_start
        self.state = dict(lab=self.lab, alpha=self.alpha, loss=self.loss, cnt=self.cnt, offsets=self.offsets)
        self.passes, self.evicted, self.cache_passes = 0, 0, 0
        self.work_log = []
        self.upper = self.lower = self.gap = np.inf
        self.w_best, self.w_dual, self.w_ema = self.w.copy(), self.w.copy(), self.w.copy()
        self.v_dual = None

    def rebuild(self):
        """v(α) and w(α) = soft(v(α), λ) recomputed from the caches; returns Σ α Δℓ."""
        lin = rebuild_w(self.data, self.acc, self.cache)
        self.threshold()
        return lin

    def threshold(self):
        """w = soft(v, λ), the gradient of the conjugate of ½‖·‖² + λ‖·‖₁ (the engine names no program): the passes
        score w's state block from v as they read it and leave it stale here (λ = 0: w is v)."""
        if self.lam > 0:
            np.copyto(self.w, np.sign(self.v) * np.maximum(np.abs(self.v) - self.lam, 0.0))

    def regulariser(self, w):
        """½‖w‖² + λ‖w‖₁."""
        return 0.5 * float(w @ w) + (self.lam * float(np.abs(w).sum()) if self.lam > 0 else 0.0)

    def certificate(self, estimate):
        """P(w) (an upper bound at any w: at w(α) and at the passes' exponential average, the lower kept with its
        w) and D(α) at w = w(α) recomputed from the cache; returns the :class:`Check`."""
        t0 = time.perf_counter()
        C, w = self.s["C"], self.w
        self.lin = self.rebuild()
        # D(α) = Σ α Δℓ − ½‖soft(v(α), λ)‖² (the conjugate of the regulariser at v(α); ½‖v(α)‖² for P0)
        self.lower = self.lin - 0.5 * float(w @ w)
        t1 = time.perf_counter()
        self.upper = self.regulariser(w) + C * float(np.maximum(_hinge(self.oracle, w), 0.0).sum())
        self.w_best, point = w.copy(), 0
        if self.s["average"] and self.passes > 0:
            w_ema = self.w_ema
            up = self.regulariser(w_ema) + C * float(np.maximum(_hinge(self.oracle, w_ema), 0.0).sum())
            if up < self.upper:
                self.upper, self.w_best, point = up, w_ema.copy(), 1
        self.timings["certificate_oracle"] += time.perf_counter() - t1
        self.gap = (self.upper - self.lower) / max(1.0, abs(self.upper))
        self.w_dual = w.copy()
        self.v_dual = self.v.copy() if self.lam > 0 else None
        self.timings["certificate"] += time.perf_counter() - t0
        rec = Check(self.passes, time.perf_counter() - self.t_start, self.upper, self.lower, self.gap, estimate,
                    int(np.count_nonzero(self.alpha[:, 1:] > 0)), self.evicted, point, self.cache_passes,
                    self.timings["oracle"] + self.timings["certificate_oracle"])
        self.history.append(rec)
        if self.s["verbose"]:
            print(f"pass {self.passes:4d}  {rec.elapsed:8.1f}s  upper {self.upper:.6g}  lower {self.lower:.6g}  "
                  f"gap {self.gap:.3e}  (estimate {estimate:.3e})  cached {rec.cached}  evicted {self.evicted}",
                  flush=True)
        return rec

    def order(self, sampling, full_every):
        """The visiting order of the next pass."""
        if sampling == "gap" and self.passes % full_every != 0:
            return self.draw(self.bgap)
        return self.rng.permutation(len(self.bgap)).astype(np.int64)

    def draw(self, gaps):
        """n visits drawn in proportion to the blocks' last seen gaps gᵢ (Osokin et al., ICML 2016) over their visit
        costs Lᵢ·|Sᵢ| (tokens times cached labelings) to the power κ = ``cost_power``; a permutation when no gap is
        left (κ = 0: Osokin et al.'s sampling).

        A pass's visits are drawn at its start, so a block whose gap is many times the others' is visited that many
        times in the pass, however much its first visit closed: on the sklearn-crfsuite tutorial's data one
        1,238-token example with 64 cached labelings took about 40 % of a cache pass's work at κ = 0. κ = 0.5 was
        chosen by timing fits to gap 1e-2 on the tutorial's data, CoNLL-2000 ``rich`` and esp.train at order 2 (0.3
        to 0.7 were alike, 1 took more passes); ``python -m mmprog.bench certify --cost-power K`` times another value
        beside CRFsuite."""
        n = len(gaps)
        p = np.maximum(gaps, 0.0)
        if self.s["cost_power"] > 0:
            p = p / (self.lengths * self.cnt) ** self.s["cost_power"]
        total = p.sum()
        return (self.rng.choice(n, n, p=p / total) if total > 0 else self.rng.permutation(n)).astype(np.int64)

    def one_pass(self, order):
        """Visit the examples of ``order``; returns the pass's stale gap estimate (Σᵢ block gaps at the w of each
        visit, relative)."""
        t0 = time.perf_counter()
        s = self.s
        clock = np.zeros(2, np.uint64)
        gain = np.zeros(1 + len(WORK))
        c0 = time.thread_time()
        self.evicted += bcfw_pass(order, self.data, self.model, self.acc, self.lam, self.cache, s["C"], s["inner"],
                                  s["tol"], self.hinge,
                                  self.bgap, self.ogap, self.work, clock, gain)
        # the pass's increase of D(α) per unit of its counted work, which the passes inside the caches after it
        # must beat (cache_rule "rate")
        self.last_gain = float(gain[0])          # the exact increase of D(α) the pass made
        self.rate = self.last_gain / self.cost(gain[1:], time.thread_time() - c0, "oracle")
        # the oracle's share of the pass (token scores and Viterbi), by the kernel's cycle counts
        if clock[1] > 0:
            self.timings["oracle"] += (time.perf_counter() - t0) * float(clock[0]) / float(clock[1])
        self.passes += 1
        self.threshold()
        if s["average"]:
            average_step(self.w_ema, self.w, 0.0, s["ema"])
        self.timings["pass"] += time.perf_counter() - t0
        self.est_upper = self.regulariser(self.w) + s["C"] * float(np.maximum(self.hinge, 0).sum())
        self.cgap[:] = self.bgap - self.ogap
        return float(self.bgap.sum()) / max(1.0, abs(self.est_upper))

    def cache_only(self, sampling):
        """A pass of pairwise steps inside the caches, no oracle (visits in proportion to the blocks' last seen
        gaps inside their caches with ``sampling="gap"``). With λ > 0 it leaves w's state block stale (the next
        :meth:`one_pass` or :meth:`certificate` thresholds v again)."""
        t0 = time.perf_counter()
        s = self.s
        order = self.draw(self.cgap) if sampling == "gap" else self.rng.permutation(len(self.cgap)).astype(np.int64)
        gain = np.zeros(1 + len(WORK))
        c0 = time.thread_time()
        cache_pass(order, self.data, self.model, self.acc, self.lam, self.cache, s["C"], s["inner"], s["tol"],
                   self.cgap, self.work, gain)
        self.last_gain = float(gain[0])
        self.cache_rate = self.last_gain / self.cost(gain[1:], time.thread_time() - c0, "cache")
        self.cache_passes += 1
        if s["average"]:
            # the average takes these passes' points too (w = soft(v, λ); w's state block is stale here): a point a
            # pass at ρ = 0.1 certified gap 1e-2 in fewer passes and less time, the update's sweep included, than a
            # point a round at ρ = 0.3 on the tutorial's features, CoNLL-2000 rich and esp.train order 2 (4 cache
            # passes a round; `bench certify --ema` times another ρ beside CRFsuite)
            average_step(self.w_ema, self.v, self.lam, s["ema"])
        self.timings["cache"] += time.perf_counter() - t0
        return float(self.cgap.sum() + self.ogap.sum()) / max(1.0, abs(self.est_upper))

    def cost(self, work, cpu, kind):
        """A pass's cost for ``cache_rule="rate"``: its counted work weighed by :data:`WORK_SECONDS`. The pass's
        thread CPU seconds go only into :attr:`work_log` (``kind``, seconds, the counts), from which the weights
        are checked: never into the path."""
        self.work_log.append((kind, float(cpu)) + tuple(float(x) for x in work))
        return max(float(WORK_SECONDS @ work), 1e-12)

    def may_hold(self, estimate, gap_tol, wait):
        """Whether a pass's stale gap estimate, calibrated by the last certificate's ratio of true gap to estimate,
        says gap_tol may hold, ``wait`` oracle passes or more after that certificate."""
        last = self.history[-1]
        ratio = last.gap / last.estimate if np.isfinite(last.estimate) and last.estimate > 0 else 1.0
        return estimate * ratio <= gap_tol and self.passes - last.passes >= wait

    def run(self, gap_tol, max_iter, time_limit, check_every, sampling, full_every, callback):
        termination = "max_iter"
        self.certificate(np.inf)
        wait = 1
        stop = self.gap <= gap_tol
        if stop:
            termination = "converged"
        while not stop and self.passes < max_iter:
            if time_limit is not None and time.perf_counter() - self.t_start >= time_limit:
                termination = "time_limit"
                break
            if interrupts.requested():
                # SIGINT/SIGTERM (mmprog.engine.interrupts): the last pass is complete; its point is certified below
                termination = "interrupted"
                break
            estimate = self.one_pass(self.order(sampling, full_every))
            # passes inside the caches (no oracle): the gap there is most of the gap (labelings found, mass not yet
            # moved to them), and such a pass costs a fraction of an oracle pass
            for _ in range(self.s["cache_passes"]):
                estimate = self.cache_only(self.s["cache_sampling"])
                # Shah, Kolmogorov & Lampert (CVPR 2015): back to the oracle once a pass inside the caches raises D
                # more slowly per unit of cost than the last oracle pass did; and to the certificate as soon as the gap
                # may hold (a round of up to 16 cache passes is several seconds on CoNLL-2000; the fixed rule keeps
                # its path)
                if self.s["cache_rule"] == "rate" and (self.cache_rate < self.rate or
                                                       self.may_hold(estimate, gap_tol, wait)):
                    break
            # a certificate costs about two passes: taken every check_every passes, and when the calibrated estimate
            # says the gap may hold, then no sooner than `wait` passes after the last, `wait` doubling while it is
            # wrong (the stale estimate calibrated by the last certificate's ratio of true gap to estimate, 0.6–0.7
            # on CoNLL-2000, where a certificate every 5 passes was 30 % of the fit's CPU time)
            due = self.passes % check_every == 0 or self.passes == max_iter
            if self.may_hold(estimate, gap_tol, wait):
                due = True
                wait = min(2 * wait, check_every)
            if due:
                rec = self.certificate(estimate)
                if self.gap <= gap_tol:
                    termination = "converged"
                    break
                if callback is not None and callback(rec):
                    termination = "interrupted"
                    break
        if time_limit is not None and termination == "max_iter" and self.passes < max_iter:
            termination = "time_limit"
        if self.history[-1].passes != self.passes:
            self.certificate(np.nan)
            if self.gap <= gap_tol:
                termination = "converged"
        self.timings["total"] = time.perf_counter() - self.t_start
        return BCFWRun(w=self.w_best, w_dual=self.w_dual, upper_bound=self.upper, lower_bound=self.lower,
                       gap=self.gap, termination=termination, n_passes=self.passes, C=self.s["C"],
                       history=self.history, timings=self.timings, state=self.state, n_cache_passes=self.cache_passes,
                       v_dual=self.v_dual, work_log=self.work_log)


def _blocks(fmap, flat):
    """The (state, transition, trigram) views of a flat vector the pass kernels take (trigram (0, 0, 0) for the
    first order)."""
    blocks = fmap.weights(flat)
    return (blocks["state"], blocks["transition"],
            blocks["trigram"] if fmap.order == 2 else np.zeros((0, 0, 0)))


def _restore(saved, C, n, offsets, lab, alpha, loss, cnt, gold):
    """Fill the caches from a saved working set (checked against this data set)."""
    if int(saved["n"]) != n or int(saved["n_tokens"]) != offsets[-1]:
        raise DataError(f"the saved working set is of {int(saved['n'])} examples and {int(saved['n_tokens'])} tokens; "
                        f"this data set has {n} and {int(offsets[-1])}: resume on the data it was saved from")
    if float(saved["C"]) != float(C):
        raise ParameterError(f"C is {float(saved['C'])!r} in the saved working set; got {C!r} (its α is feasible "
                             f"for that C only)")
    M = lab.shape[0]
    pos = 0
    for i, a in zip(saved["example"], saved["alpha"]):
        lo, hi = offsets[i], offsets[i + 1]
        y = saved["tokens"][pos: pos + hi - lo]
        pos += hi - lo
        c = cnt[i]
        if c == M:
            raise ParameterError(f"the saved working set holds more than cache_size − 1 = {M - 1} labelings of "
                                 f"example {int(i)}; resume with a larger cache_size")
        lab[c, lo:hi] = y
        alpha[i, c] = a
        loss[i, c] = float(np.sum(y != gold[lo:hi]))
        alpha[i, 0] -= a
        cnt[i] = c + 1
    # the gold slot carries what is left of C (rounding may leave −1e-16)
    alpha[:, 0] = np.maximum(alpha[:, 0], 0.0)


def covers(program, fmap, prepared, slack="n"):
    """Whether this route solves ``program`` on ``fmap`` over ``prepared`` (the capability :func:`mmprog.fit`'s
    ``route="auto"`` asks before choosing it): (True, "") or (False, why not, one line).

    Covered: P0 (program ``m3n``) and the elastic-net M³N (``enm3n``, ``fit(lam=...)``) in the n-slack form on what
    :func:`fit` takes (see the module docstring).
    """
    if getattr(program, "name", None) not in PROGRAMS:
        return False, (f"route 'bcfw' solves P0 (program m3n) and the elastic-net M³N (enm3n), not "
                       f"{getattr(program, 'name', program)!r}")
    if slack not in (None, "n"):
        return False, "route 'bcfw' solves P0's n-slack dual; the 1-slack form is the cutting plane's"
    try:
        _chain_arrays(fmap, prepared)
    except (ParameterError, DataError) as e:
        return False, str(e)
    return True, ""
