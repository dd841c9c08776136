"""Seeded synthetic data, as in the papers' experiments, plus tiny instances for brute-force tests.

* :func:`synthetic_chain` — sequences labelled by a random linear-chain CRF over a few relevant input features,
  labels drawn by Gibbs sampling (Zhu, Xing & Zhang, KDD 2009, section 5.1; Laplace M³N, ICML 2008, section 6.1).
* :func:`synthetic_hierarchy` — two-level hierarchies (root → inner nodes → leaves) labelled by a random tree CRF,
  inner nodes hidden (the record-level web-extraction shape of PoMEN, NIPS 2008, section 4.2).
* :func:`sparse_sets` — non-negative sparse inputs Φ and 0/1 output indicators Ψ tied by a hidden sparse rule
  (the sparse-to-sparse setting of Szedmak et al., "Max-margin structured output learning in L1 norm space").
* :func:`tiny_chain`, :func:`tiny_trees` — instances small enough to enumerate every labelling / head assignment.

Every generator takes ``seed`` (default 0); the same arguments give the same data on every run and machine (numpy
``default_rng``). Generators that draw a model can keep it fixed across data sets with ``model_seed``.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..exceptions import ParameterError, check_param
from .base import HierarchicalDataset, SequenceDataset, TreeDataset

__all__ = ["synthetic_chain", "synthetic_hierarchy", "sparse_sets", "tiny_chain", "tiny_trees",
           "gibbs_chain", "sample_forest"]


def _int(name, value, lo, hi=None):
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= lo and (
        hi is None or value <= hi)
    check_param(name, value, ok, f"an int ≥ {lo}" + (f" and ≤ {hi}" if hi is not None else ""))
    return int(value)


def _pos(name, value, allow_zero=True):
    ok = isinstance(value, (int, float, np.number)) and not isinstance(value, bool) and np.isfinite(value) and (
        value >= 0 if allow_zero else value > 0)
    check_param(name, value, ok, "a finite number ≥ 0" if allow_zero else "a finite number > 0")
    return float(value)


# ---------------------------------------------------------------------------------------------- samplers
def gibbs_chain(node_scores, transition, sweeps, rng, init=None):
    """Gibbs sampling of label sequences from linear-chain CRFs, all sequences updated together.

    Parameters
    ----------
    node_scores : ndarray, shape (n, L, K)
        Log-potential of label k at position t of sequence i.
    transition : ndarray, shape (K, K)
        ``transition[a, b]`` is the log-potential of label a at t followed by b at t+1.
    sweeps : int
        Number of full sweeps (each position resampled once per sweep: the even positions, then the odd ones).
    rng : numpy.random.Generator
    init : ndarray of int, shape (n, L), optional
        Starting labels (default uniform random).

    Returns
    -------
    ndarray of int64, shape (n, L)
        The state after the last sweep: one draw per sequence from p(y | x) ∝ exp(Σ_t node[t, y_t] +
        Σ_t transition[y_t, y_{t+1}]), up to the chain's mixing.
    """
    n, L, K = node_scores.shape
    # labels padded with a sentinel K at both ends whose transition scores are 0: no branches for the chain ends
    y = np.full((n, L + 2), K, dtype=np.int64)
    y[:, 1:-1] = rng.integers(0, K, size=(n, L)) if init is None else np.asarray(init, dtype=np.int64)
    trans_in = np.vstack([np.asarray(transition, dtype=np.float64), np.zeros((1, K))])  # [prev label, label]
    trans_out = np.vstack([np.asarray(transition, dtype=np.float64).T, np.zeros((1, K))])  # [next label, label]
    # Positions of one parity are conditionally independent given the other parity (the chain is bipartite), so a
    # sweep is two vectorised blocks instead of L single-site steps — still a Gibbs sampler, with exact conditionals.
    blocks = [(slice(p, L, 2), slice(p + 1, L + 1, 2), slice(p + 2, L + 2, 2),
               np.ascontiguousarray(node_scores[:, p::2, :])) for p in (0, 1) if p < L]
    for _ in range(int(sweeps)):
        for left, here, right, node in blocks:
            s = node + trans_in[y[:, left]] + trans_out[y[:, right]]
            y[:, here] = _draw(s, rng)
    y = y[:, 1:-1]
    return y.astype(np.int64)


def _draw(s, rng):
    """One draw per row of softmax(s) along the last axis (inverse CDF; for K = 2 a single logistic test)."""
    u = rng.random(s.shape[:-1])
    if s.shape[-1] == 2:
        return (u * (1.0 + np.exp(s[..., 0] - s[..., 1])) < 1.0).astype(np.int64)  # u < sigmoid(s1 - s0)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    c = np.cumsum(e, axis=-1)
    return np.minimum((u[..., None] * c[..., -1:] >= c).sum(axis=-1), s.shape[-1] - 1)


def sample_forest(node_scores, parents, transition, rng):
    """Exact draws from tree-structured CRFs (forests given in topological order), vectorised over all nodes.

    p(y) ∝ exp(Σ_v node_scores[v, y_v] + Σ_{v with parent u} transition[y_u, y_v]); sum-product messages flow from
    the deepest nodes up, then labels are drawn from the roots down.

    Parameters
    ----------
    node_scores : ndarray, shape (M, K)
        Log-potentials of every node (all examples stacked).
    parents : ndarray of int, shape (M,)
        Global index of each node's parent (−1 for roots); parents precede children.
    transition : ndarray, shape (K, K)
        ``transition[a, b]``: parent label a, child label b.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of int64, shape (M,)
    """
    M, K = node_scores.shape
    parents = np.asarray(parents, dtype=np.int64)
    depth = np.zeros(M, dtype=np.int64)
    for v in np.flatnonzero(parents >= 0):  # parents precede children, so one pass settles every depth
        depth[v] = depth[parents[v]] + 1
    belief = np.array(node_scores, dtype=np.float64)
    levels = [np.flatnonzero(depth == d) for d in range(int(depth.max()) + 1)] if M else []
    for nodes in reversed(levels[1:]):
        z = belief[nodes][:, None, :] + transition[None, :, :]  # (c, a, b)
        zmax = z.max(axis=2, keepdims=True)
        msg = (zmax + np.log(np.exp(z - zmax).sum(axis=2, keepdims=True)))[:, :, 0]  # (c, a)
        np.add.at(belief, parents[nodes], msg)
    y = np.empty(M, dtype=np.int64)
    for d, nodes in enumerate(levels):
        s = belief[nodes] if d == 0 else belief[nodes] + transition[y[parents[nodes]], :]
        y[nodes] = _draw(s, rng)
    return y


# ---------------------------------------------------------------------------------------------- synthetic_chain
def synthetic_chain(n_instances=1000, n_features=100, n_relevant=30, correlated=True, length=8, n_labels=2,
                    gibbs_sweeps=1000, weight_scale=1.0, transition_scale=1.0, group_size=3, noise_std=0.05,
                    seed=0, model_seed=None, return_truth=False):
    """Sequences labelled by a random linear-chain CRF whose state weights are zero on the irrelevant features.

    The set-up of Zhu, Xing & Zhang (KDD 2009, section 5.1) and Laplace M³N (ICML 2008, section 6.1): d = 100 input
    features per position, of which the first ``n_relevant`` (30) are relevant; with ``correlated`` they come in
    ``n_relevant / group_size`` groups (10 groups of 3), each group three copies of one N(0, 1) value spoilt by
    N(0, noise_std²) noise (noise_std = 0.05); the irrelevant features (and all features when not correlated) are
    i.i.d. N(0, 1). The CRF has one real-valued state feature per (input feature, label) (d·K = 200) and K×K
    transition features (4); state weights of relevant features ~ N(0, weight_scale²), of irrelevant features 0,
    transition weights ~ N(0, transition_scale²). Labels (L = 8 binary states) are drawn by Gibbs sampling. The
    Laplace M³N paper runs 5000 iterations; the default is 1000 sweeps, ample for transition weights of this scale
    (strongly alternating transitions mix slowest: on 5 binary labels with |weights| ≈ 2, 25 sweeps were not enough
    and 200 were). Pass ``gibbs_sweeps=5000`` for the paper's count. The sampler is checked against exact
    enumeration in the test suite.

    Parameters
    ----------
    n_instances, n_features, n_relevant, length, n_labels : int
    correlated : bool
    gibbs_sweeps : int
        Full Gibbs sweeps per data set (all sequences are sampled together).
    weight_scale, transition_scale, noise_std : float
    group_size : int
        Copies per correlated group; ``n_relevant`` must be a multiple of it when ``correlated``.
    seed : int
        Seed of the inputs and the sampler (and of the model unless ``model_seed`` is given).
    model_seed : int, optional
        Seed of the CRF weights alone, to draw several data sets from one model (ICML 2008, section 6.1.2).
    return_truth : bool
        Also return the generating model.

    Returns
    -------
    ds : SequenceDataset
        ``n_instances`` dense sequences of ``length`` positions × ``n_features``; ``ds.info["true_w"]`` holds the
        model.
    truth : dict, only with ``return_truth``
        ``"state"`` (d, K), ``"transition"`` (K, K), ``"vector"`` (d·K + K·K,) in the layout of the default chain
        feature map (state index j·K + k, then transition a·K + b), ``"relevant"`` (n_relevant,) indices.
    """
    n = _int("n_instances", n_instances, 1)
    d = _int("n_features", n_features, 1)
    r = _int("n_relevant", n_relevant, 0, d)
    L = _int("length", length, 1)
    K = _int("n_labels", n_labels, 1)
    sweeps = _int("gibbs_sweeps", gibbs_sweeps, 1)
    g = _int("group_size", group_size, 1)
    if correlated and r % g:
        raise ParameterError(f"n_relevant must be a multiple of group_size ({g}) when correlated=True; got {r}")
    ws, ts, ns = _pos("weight_scale", weight_scale), _pos("transition_scale", transition_scale), _pos(
        "noise_std", noise_std)
    rng = np.random.default_rng(seed)
    mrng = rng if model_seed is None else np.random.default_rng(model_seed)
    state = np.zeros((d, K))
    state[:r] = mrng.normal(0.0, ws, size=(r, K))
    transition = mrng.normal(0.0, ts, size=(K, K))
    X = rng.standard_normal(size=(n, L, d))
    if correlated and r:
        base = rng.standard_normal(size=(n, L, r // g))
        X[:, :, :r] = np.repeat(base, g, axis=2) + rng.normal(0.0, ns, size=(n, L, r))
    Y = gibbs_chain(X @ state, transition, sweeps, rng)
    ds = SequenceDataset(list(X), list(Y), K, name="synthetic")
    truth = {"state": state, "transition": transition,
             "vector": np.concatenate([state.ravel(), transition.ravel()]), "relevant": np.arange(r)}
    ds.info.update(true_w=truth, generator="synthetic_chain",
                   params=dict(n_instances=n, n_features=d, n_relevant=r, correlated=bool(correlated), length=L,
                               n_labels=K, gibbs_sweeps=sweeps, weight_scale=ws, transition_scale=ts,
                               group_size=g, noise_std=ns, seed=seed, model_seed=model_seed))
    return (ds, truth) if return_truth else ds


# ---------------------------------------------------------------------------------------------- synthetic_hierarchy
def _range_param(name, value):
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = (int(value), int(value))
    ok = (isinstance(value, (tuple, list)) and len(value) == 2 and all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value) and 1 <= value[0] <= value[1])
    check_param(name, value, ok, "an int ≥ 1 or a pair (lo, hi) with 1 ≤ lo ≤ hi")
    return int(value[0]), int(value[1])


def synthetic_hierarchy(n_instances=200, n_inner=(2, 4), n_leaves=(2, 5), n_features=20, n_relevant=10,
                        n_labels=4, hidden_inner=True, weight_scale=1.0, transition_scale=2.0, seed=0,
                        model_seed=None, return_truth=False):
    """Two-level hierarchies labelled by a random tree CRF: a root, inner nodes under it, leaves under those.

    The record-level shape of the PoMEN web-extraction experiment (NIPS 2008, section 4.2): every example is a
    record whose leaves (its elements) are labelled and whose inner nodes (blocks grouping elements) and root are
    hidden. Node features are i.i.d. N(0, 1); the tree CRF has state weights ~ N(0, weight_scale²) on the first
    ``n_relevant`` features (0 on the rest) and one parent→child transition matrix ~ N(0, transition_scale²),
    shared by all edges, so that a hidden inner label couples its leaves' labels. Labels are exact draws (sum-product
    upward, sampling downward).

    Parameters
    ----------
    n_instances : int
    n_inner, n_leaves : int or (lo, hi)
        Inner nodes per example, leaves per inner node (uniform in [lo, hi]).
    n_features, n_relevant, n_labels : int
    hidden_inner : bool
        Hide (−1) the labels of the root and inner nodes; leaves stay observed.
    weight_scale, transition_scale : float
    seed, model_seed : int
        As in :func:`synthetic_chain`.
    return_truth : bool

    Returns
    -------
    ds : HierarchicalDataset
        Nodes ordered root, inner nodes, then the leaves of each inner node in turn (parents precede children).
    truth : dict, only with ``return_truth``
        ``"state"`` (d, K), ``"transition"`` (K, K), ``"Y"`` the full labels (hidden ones included).
    """
    n = _int("n_instances", n_instances, 1)
    inner = _range_param("n_inner", n_inner)
    leaves = _range_param("n_leaves", n_leaves)
    d = _int("n_features", n_features, 1)
    r = _int("n_relevant", n_relevant, 0, d)
    K = _int("n_labels", n_labels, 1)
    ws, ts = _pos("weight_scale", weight_scale), _pos("transition_scale", transition_scale)
    rng = np.random.default_rng(seed)
    mrng = rng if model_seed is None else np.random.default_rng(model_seed)
    state = np.zeros((d, K))
    state[:r] = mrng.normal(0.0, ws, size=(r, K))
    transition = mrng.normal(0.0, ts, size=(K, K))
    parents_local = []
    for _ in range(n):
        m = int(rng.integers(inner[0], inner[1] + 1))
        counts = rng.integers(leaves[0], leaves[1] + 1, size=m)
        p = np.concatenate([[-1], np.zeros(m, dtype=np.int64), np.repeat(np.arange(1, m + 1), counts)])
        parents_local.append(p.astype(np.int64))
    sizes = np.array([len(p) for p in parents_local])
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    P = np.concatenate([np.where(p >= 0, p + o, -1) for p, o in zip(parents_local, offsets[:-1])])
    X_all = rng.standard_normal(size=(int(offsets[-1]), d))
    Y_all = sample_forest(X_all @ state, P, transition, rng)
    X = np.split(X_all, offsets[1:-1])
    Y_full = np.split(Y_all, offsets[1:-1])
    Y = []
    for p, y in zip(parents_local, Y_full):
        y = y.copy()
        if hidden_inner:
            has_child = np.zeros(len(p), dtype=bool)
            has_child[p[p >= 0]] = True
            y[has_child] = -1
        Y.append(y)
    ds = HierarchicalDataset(X, parents_local, Y, K, name="hierarchy")
    truth = {"state": state, "transition": transition, "Y": Y_full}
    ds.info.update(true_w={"state": state, "transition": transition}, generator="synthetic_hierarchy",
                   params=dict(n_instances=n, n_inner=inner, n_leaves=leaves, n_features=d, n_relevant=r,
                               n_labels=K, hidden_inner=bool(hidden_inner), weight_scale=ws, transition_scale=ts,
                               seed=seed, model_seed=model_seed))
    return (ds, truth) if return_truth else ds


# ---------------------------------------------------------------------------------------------- sparse_sets
def sparse_sets(m=1000, n_inputs=1000, n_outputs=100, input_density=0.01, output_size=3, fanout=2,
                normalize=True, seed=0, return_truth=False):
    """Non-negative sparse input vectors φ(x_i) and 0/1 output indicator vectors ψ(y_i) tied by a hidden sparse rule.

    Each input row has ``round(input_density · n_inputs)`` (≥ 1) random active inputs with values U(0.1, 1)
    (L1-normalised when ``normalize``, as the measures of the set perceptron in Szedmak et al., section 7). A hidden
    rule R (n_inputs, n_outputs) links every input to ``fanout`` random outputs; output scores are s_i = φ(x_i) R and
    ψ(y_i) marks the ``output_size`` highest-scoring outputs (ties to the lower index; fewer when fewer outputs
    score above 0). So a linear operator W = Rᵀ explains the outputs and ψ(y) ⇐ Wφ(x) is learnable.

    Parameters
    ----------
    m : int
        Number of samples (tested up to 10⁵; the work is a few sparse products and one lexsort).
    n_inputs, n_outputs : int
    input_density : float in (0, 1]
    output_size, fanout : int
    normalize : bool
    seed : int
    return_truth : bool

    Returns
    -------
    Phi : scipy.sparse.csr_matrix, shape (m, n_inputs), float64 ≥ 0
    Psi : scipy.sparse.csr_matrix, shape (m, n_outputs), float64 in {0, 1}
    R : scipy.sparse.csr_matrix, shape (n_inputs, n_outputs), only with ``return_truth``
    """
    m = _int("m", m, 1)
    ni = _int("n_inputs", n_inputs, 1)
    no = _int("n_outputs", n_outputs, 1)
    dens = float(input_density) if isinstance(input_density, (int, float, np.number)) else np.nan
    check_param("input_density", input_density, 0.0 < dens <= 1.0, "a float in (0, 1]")
    k_out = _int("output_size", output_size, 1, no)
    fo = _int("fanout", fanout, 1, no)
    rng = np.random.default_rng(seed)
    k_in = max(1, int(round(dens * ni)))
    # rule: each input -> `fanout` distinct outputs (argpartition of random keys = sampling without replacement)
    if fo < no:
        outs = np.argpartition(rng.random((ni, no)), fo, axis=1)[:, :fo] if ni * no <= 5e7 else \
            _distinct_ints(rng, ni, no, fo)
    else:
        outs = np.tile(np.arange(no), (ni, 1))
    R = sp.csr_matrix((np.ones(ni * fo), outs.ravel(), np.arange(0, ni * fo + 1, fo)), shape=(ni, no))
    R.sum_duplicates()
    cols = _distinct_ints(rng, m, ni, k_in)
    vals = rng.uniform(0.1, 1.0, size=(m, k_in))
    if normalize:
        vals /= vals.sum(axis=1, keepdims=True)
    Phi = sp.csr_matrix((vals.ravel(), cols.ravel(), np.arange(0, m * k_in + 1, k_in)), shape=(m, ni))
    Phi.sort_indices()
    S = (Phi @ R).tocsr()
    S.eliminate_zeros()
    S.sort_indices()
    counts = np.diff(S.indptr)
    rows = np.repeat(np.arange(m), counts)
    pos = np.arange(S.nnz) - S.indptr[rows]
    # per-row top-k on a padded (m, max nnz per row) array: rows are short, so this beats one global sort; the
    # stable sort keeps ties in output-index order (the indices are sorted within each row)
    pad = np.full((m, int(counts.max())), np.inf)
    pad[rows, pos] = -S.data
    top = np.argsort(pad, axis=1, kind="stable")[:, :k_out]
    ok = np.isfinite(np.take_along_axis(pad, top, axis=1))
    r_keep = np.broadcast_to(np.arange(m)[:, None], top.shape)[ok]
    Psi = sp.csr_matrix((np.ones(r_keep.size), (r_keep, S.indices[S.indptr[r_keep] + top[ok]])), shape=(m, no))
    Psi.sort_indices()
    return (Phi, Psi, R) if return_truth else (Phi, Psi)


def _distinct_ints(rng, rows, high, k):
    """(rows, k) ints in [0, high), distinct within each row, without a dense (rows, high) array: draw with
    replacement and redraw the rows that collided (few when k ≪ high)."""
    out = rng.integers(0, high, size=(rows, k))
    if k == 1:
        return out
    if k > high // 2:  # dense regime: permutations are cheap enough
        return np.argsort(rng.random((rows, high)), axis=1)[:, :k]
    while True:
        s = np.sort(out, axis=1)
        bad = np.flatnonzero((s[:, 1:] == s[:, :-1]).any(axis=1))
        if bad.size == 0:
            return out
        out[bad] = rng.integers(0, high, size=(bad.size, k))


# ---------------------------------------------------------------------------------------------- tiny instances
def tiny_chain(n_sequences=20, length=4, n_labels=2, n_features=3, min_length=None, sparse=False,
               hidden_fraction=0.0, weight_scale=1.0, seed=0, return_truth=False):
    """A tiny chain data set whose every labelling can be enumerated (K^T ≤ a few thousand), for brute-force tests.

    Features are N(0, 1) (with ``sparse``, entries with |x| < 0.5 are zeroed and X is CSR); labels are exact draws
    from a random chain CRF (state weights and transitions ~ N(0, weight_scale²)), so a learner can fit them.

    Parameters
    ----------
    n_sequences, length, n_labels, n_features : int
        Defaults 20 sequences × 4 positions, 2 labels, 3 features.
    min_length : int, optional
        If given, lengths are uniform in [min_length, length] (to exercise padding); else all equal ``length``.
    sparse : bool
    hidden_fraction : float in [0, 1]
        Fraction of each sequence's labels hidden (−1), for partially observed tests.
    weight_scale : float
    seed : int
    return_truth : bool
        Also return ``{"state", "transition", "vector", "Y"}`` (Y before hiding).
    """
    n = _int("n_sequences", n_sequences, 1)
    T = _int("length", length, 1)
    K = _int("n_labels", n_labels, 1)
    d = _int("n_features", n_features, 1)
    lo = T if min_length is None else _int("min_length", min_length, 1, T)
    ws = _pos("weight_scale", weight_scale)
    rng = np.random.default_rng(seed)
    state = rng.normal(0.0, ws, size=(d, K))
    transition = rng.normal(0.0, ws, size=(K, K))
    lengths = rng.integers(lo, T + 1, size=n)
    X_all = rng.standard_normal(size=(int(lengths.sum()), d))
    if sparse:
        X_all[np.abs(X_all) < 0.5] = 0.0
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    # a chain is a forest whose parent of position t is t-1
    P = np.arange(-1, int(offsets[-1]) - 1)
    P[offsets[:-1]] = -1
    Y_all = sample_forest(X_all @ state, P, transition, rng)
    X = np.split(X_all, offsets[1:-1])
    if sparse:
        X = [sp.csr_matrix(x) for x in X]
    Y_full = np.split(Y_all, offsets[1:-1])
    ds = SequenceDataset(X, [y.copy() for y in Y_full], K, name="tiny")
    if hidden_fraction:
        ds = ds.hide_labels(hidden_fraction, seed=int(rng.integers(2 ** 31)))
    truth = {"state": state, "transition": transition,
             "vector": np.concatenate([state.ravel(), transition.ravel()]), "Y": Y_full}
    ds.info.update(true_w={"state": state, "transition": transition}, generator="tiny_chain")
    return (ds, truth) if return_truth else ds


def tiny_trees(n_sentences=10, n_words=4, min_words=None, n_forms=6, n_tags=3, projective=False, seed=0):
    """A tiny :class:`TreeDataset` of random sentences (forms ``w0..``, tags ``T0..``) with random gold trees.

    Parameters
    ----------
    n_sentences, n_words : int
        Defaults 10 sentences of 4 words (every head assignment enumerable: (n+1)^n = 625).
    min_words : int, optional
        If given, lengths are uniform in [min_words, n_words].
    n_forms, n_tags : int
        Vocabulary sizes.
    projective : bool
        Draw projective trees (a random root splits the span, recursively); else each token, in a random order,
        attaches to a random token placed before it (the first to the root), which may cross arcs.
    seed : int
    """
    n = _int("n_sentences", n_sentences, 1)
    W = _int("n_words", n_words, 1)
    lo = W if min_words is None else _int("min_words", min_words, 1, W)
    nf, nt = _int("n_forms", n_forms, 1), _int("n_tags", n_tags, 1)
    rng = np.random.default_rng(seed)
    sentences, heads = [], []
    for _ in range(n):
        m = int(rng.integers(lo, W + 1))
        forms = [f"w{k}" for k in rng.integers(0, nf, size=m)]
        tags = [f"T{k}" for k in rng.integers(0, nt, size=m)]
        h = np.zeros(m, dtype=np.int64)
        if projective:
            stack = [(1, m, 0)]
            while stack:
                a, b, head = stack.pop()
                if a > b:
                    continue
                root = int(rng.integers(a, b + 1))
                h[root - 1] = head
                stack.append((a, root - 1, root))
                stack.append((root + 1, b, root))
        else:
            order = rng.permutation(m) + 1
            for j in range(1, m):
                h[order[j] - 1] = order[int(rng.integers(0, j))]
            h[order[0] - 1] = 0
        sentences.append({"form": forms, "pos": tags})
        heads.append(h)
    ds = TreeDataset(sentences, heads, name="tiny_trees")
    ds.info["generator"] = "tiny_trees"
    return ds
