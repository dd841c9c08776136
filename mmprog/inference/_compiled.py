"""Compiled (numba, LLVM) chain kernels: max-sum Viterbi with fused Hamming loss, max-marginals, and the fused
1-slack chain oracle, for first-order chains and (``viterbi2_*``, ``chain2_separate_sum``, at the end) for
second-order ones, whose states are label pairs.

These are the only implementations of the max-product recursion in mmprog; :mod:`mmprog.inference.chain` validates
inputs and calls them. Every kernel works on one sequence at a time, a (L, K) block of node scores, with the
*transposed* edge scores of step t (between positions t and t+1) read from ``edges_t[t * step]``: ``step = 1`` for
per-position edges (T-1, K, K), ``step = 0`` for one shared (1, K, K) matrix, so both cases are one loop.

Why these are fast where the numpy kernels were not: per next label b the maximum over previous labels a is a
running maximum in a register over a contiguous row ``edges_t[s, b]`` (transposed so that this read is contiguous;
reading E[a, b] down a column was 1.1–1.6× slower, measured at K = 3, 9, 26), a whole step stays in L1 cache, and the
candidate block δ_{t-1}[a] + E[a, b] is never stored (numpy made one pass over memory per operation and paid its
call overhead per step). Two next labels are maximised per pass over a, with branch-free selects: 1.2× (K = 26),
1.15× (K = 9) and 2.2× (K = 3) faster than one label with an ``if`` (random normal scores, whose comparisons a
branch predictor cannot guess). The alternative loop order — a outer, a compare-and-select over b — was 1.6–3×
slower (stores of the running maxima and back-pointers every step). Back-pointers (int32, (L, K)) make
backtracking O(L).

Exactness: ``fastmath`` is off; the recursion adds in the same order as the textbook (δ_{t-1}[a] + E[a, b]) + node[t,
b], the loss is added to the node score before it enters the recursion (the rounding of ``loss_augment``), ties go
to the smallest previous label (strict ``>`` while a increases) and to the smallest last label. The float64 score of
the labeling found is recomputed along it in that same order, so for float64 inputs it equals the forward maximum
bit for bit, and for float32 inputs it is the float64 score of the float32 search's labeling.

``cache=True`` writes the machine code next to this file (``__pycache__``): the first call of each kernel on a new
machine compiles it (a few seconds in all), later processes load it.
"""
from __future__ import annotations

import numpy as np
from numba import njit

_JIT = dict(cache=True, nogil=True, fastmath=False)


@njit(**_JIT)
def viterbi_one(node, edges_t, step, gold, weight, delta, back, y):
    """Best (loss-augmented) labeling of one chain; returns its float64 score.

    Parameters
    ----------
    node : ndarray, shape (L, K)
        Node scores of the sequence (L >= 1).
    edges_t : ndarray, shape (S, K, K)
        Transposed edge scores: ``edges_t[t * step, b, a]`` scores label a at t followed by b at t+1.
    step : int
        1 (per-position edges, S >= L-1) or 0 (shared, S = 1).
    gold : ndarray of int, shape (L,) or (0,)
        Gold labels for the Hamming loss (-1: no loss at that position); length 0: no loss augmentation.
    weight : scalar of node's dtype
        Loss weight: ``node[t, k] + weight`` where ``gold[t] >= 0 and k != gold[t]``.
    delta : ndarray, shape (>= L, K), node's dtype
        Work array: max-scores δ_t.
    back : ndarray of int32, shape (>= L, K)
        Work array: back-pointers.
    y : ndarray of int, shape (>= L,)
        Output: the labeling.
    """
    L, K = node.shape
    augment = gold.shape[0] > 0
    g = gold[0] if augment else -1
    for k in range(K):
        v = node[0, k]
        if g >= 0 and k != g:
            v += weight
        delta[0, k] = v
    for t in range(1, L):
        Et = edges_t[(t - 1) * step]
        g = gold[t] if augment else -1
        # two next labels per pass: they share the loads of δ_{t-1}[a] and give the CPU two independent
        # running maxima; the selects are written branch-free (random scores made the branch unpredictable).
        # Strict ">" while a increases keeps the first maximiser.
        b = 0
        while b < K:
            b1 = b + 1 if b + 1 < K else b   # odd K: the last label is computed twice, identically
            p = delta[t - 1, 0]
            best0 = p + Et[b, 0]
            best1 = p + Et[b1, 0]
            arg0 = 0
            arg1 = 0
            for a in range(1, K):
                p = delta[t - 1, a]
                v0 = p + Et[b, a]
                v1 = p + Et[b1, a]
                c0 = v0 > best0
                c1 = v1 > best1
                arg0 = a if c0 else arg0
                best0 = v0 if c0 else best0
                arg1 = a if c1 else arg1
                best1 = v1 if c1 else best1
            v = node[t, b]
            if g >= 0 and b != g:
                v += weight
            delta[t, b] = best0 + v
            back[t, b] = arg0
            v = node[t, b1]
            if g >= 0 and b1 != g:
                v += weight
            delta[t, b1] = best1 + v
            back[t, b1] = arg1
            b += 2
    best_k = 0
    for k in range(1, K):
        if delta[L - 1, k] > delta[L - 1, best_k]:
            best_k = k
    y[L - 1] = best_k
    for t in range(L - 1, 0, -1):
        y[t - 1] = back[t, y[t]]
    # float64 score along the labeling, in the order of the recursion
    g = gold[0] if augment else -1
    v = node[0, y[0]]
    if g >= 0 and y[0] != g:
        v += weight
    s = np.float64(v)
    for t in range(1, L):
        s += np.float64(edges_t[(t - 1) * step][y[t], y[t - 1]])
        g = gold[t] if augment else -1
        v = node[t, y[t]]
        if g >= 0 and y[t] != g:
            v += weight
        s += np.float64(v)
    return s


@njit(**_JIT)
def viterbi_padded(node, edges_t, per_position, lengths, gold, weight, labels, scores):
    """:func:`viterbi_one` over a padded batch.

    node (B, T, K); edges_t (B, T-1, K, K) when ``per_position`` else (1, 1, K, K), transposed (``edges_t[..., b, a]``
    scores a followed by b); lengths (B,) in [1, T]; gold
    (B, T) or (B, 0) (no loss); outputs labels (B, T) int64 (-1 past each length) and scores (B,) float64.
    """
    B, T, K = node.shape
    delta = np.empty((T, K), node.dtype)
    back = np.empty((T, K), np.int32)
    y = np.empty(T, np.int64)
    for i in range(B):
        L = lengths[i]
        e = edges_t[i] if per_position else edges_t[0]
        g = gold[i, :L] if gold.shape[1] > 0 else gold[i, :0]
        scores[i] = viterbi_one(node[i, :L], e, 1 if per_position else 0, g, weight, delta, back, y)
        for t in range(L):
            labels[i, t] = y[t]
        for t in range(L, T):
            labels[i, t] = -1


@njit(**_JIT)
def sequence_edges(edge_t, e_indptr, e_indices, e_data, we_t, lo, hi, buf):
    """Transposed edge scores of the sequence at stacked rows ``lo:hi``, as ``(edges_t, step)`` for
    :func:`viterbi_one`.

    Without edge features (``e_indptr`` of length 0) this is the shared ``edge_t`` (1, K, K) with step 0. With them
    (a CSR matrix Xe (N, d_e) given by ``e_indptr``, ``e_indices``, ``e_data``, and weights ``we_t`` (d_e, K, K),
    transposed like ``edge_t``), step s of the sequence — between rows lo+s and lo+s+1 — scores
    ``edge_t[0] + Σ_f Xe[lo+s+1, f]·we_t[f]``: the features of the right-hand token, as CRF++ evaluates a bigram
    template at the position of the current label. They are written into ``buf`` (>= hi-lo-1, K, K), step 1. Built
    per sequence so that no (N, K, K) array is ever held (on CoNLL-2000 that would be 0.7 GB a round).
    """
    if e_indptr.shape[0] == 0:
        return edge_t, 0
    K = edge_t.shape[1]
    for t in range(lo + 1, hi):
        s = t - lo - 1
        for b in range(K):
            for a in range(K):
                buf[s, b, a] = edge_t[0, b, a]
        for p in range(e_indptr[t], e_indptr[t + 1]):
            f = e_indices[p]
            x = e_data[p]
            for b in range(K):
                for a in range(K):
                    buf[s, b, a] += x * we_t[f, b, a]
    return buf, 1


@njit(**_JIT)
def viterbi_stacked(node, edge, offsets, gold, weight, labels, e_indptr, e_indices, e_data, we_t):
    """:func:`viterbi_one` over sequences stored back to back (no padding): sequence i is rows
    ``offsets[i]:offsets[i+1]`` of node (N, K); edge (K, K) shared, not transposed; gold (N,) or (0,) (no loss); labels (N,)
    output. Observation-conjoined edge features: ``e_indptr``, ``e_indices``, ``e_data``, ``we_t`` as in
    :func:`sequence_edges` (``e_indptr`` of length 0: none). Empty sequences are skipped."""
    n = offsets.shape[0] - 1
    K = node.shape[1]
    T = 1
    for i in range(n):
        T = max(T, offsets[i + 1] - offsets[i])
    delta = np.empty((T, K), node.dtype)
    back = np.empty((T, K), np.int32)
    edge_t = np.ascontiguousarray(edge.T).reshape((1, K, K))
    buf = np.empty((T if e_indptr.shape[0] > 0 else 0, K, K))
    augment = gold.shape[0] > 0
    for i in range(n):
        lo, hi = offsets[i], offsets[i + 1]
        if hi > lo:
            edges_t, step = sequence_edges(edge_t, e_indptr, e_indices, e_data, we_t, lo, hi, buf)
            viterbi_one(node[lo:hi], edges_t, step, gold[lo:hi] if augment else gold[:0], weight, delta, back,
                        labels[lo:hi])


@njit(**_JIT)
def max_marginals_padded(node, edges_t, per_position, lengths, out):
    """Max-marginals of a padded batch: out[b, t, k] = α_t(k) + β_t(k) (max-product forward plus backward pass),
    -inf past each length. Shapes as :func:`viterbi_padded`; out (B, T, K) float64."""
    B, T, K = node.shape
    alpha = np.empty((T, K))
    beta = np.empty((T, K))
    back = np.empty((T, K), np.int32)
    y = np.empty(T, np.int64)
    no_gold = np.empty(0, np.int64)
    for i in range(B):
        L = lengths[i]
        e = edges_t[i] if per_position else edges_t[0]
        step = 1 if per_position else 0
        # the forward pass is Viterbi's: its δ are the α of the max-product recursion
        viterbi_one(node[i, :L], e, step, no_gold, 0.0, alpha, back, y)
        for k in range(K):
            beta[L - 1, k] = 0.0
        for t in range(L - 2, -1, -1):
            Et = e[t * step]
            for a in range(K):
                m = -np.inf
                for b in range(K):
                    v = (node[i, t + 1, b] + beta[t + 1, b]) + Et[b, a]
                    if v > m or b == 0:
                        m = v
                beta[t, a] = m
        for t in range(L):
            for k in range(K):
                out[i, t, k] = alpha[t, k] + beta[t, k]
        for t in range(L, T):
            for k in range(K):
                out[i, t, k] = -np.inf


@njit(**_JIT)
def _first_order_cut(node, edges_t, step, gold, labels, X, lo, hi, state_t, trans, path, i):
    """One sequence's share of the first-order blocks of Σᵢ Δfᵢ(ŷᵢ) (rows ``lo:hi``, ŷ already in ``labels``):
    state block into ``state_t`` (when X has rows), transitions into ``trans``, path score difference of the state
    and edge factors into ``path[i]``; returns Δℓᵢ, the number of observed positions with ŷ_t ≠ y_t. Shared by
    :func:`chain_separate_sum` and :func:`chain2_separate_sum` (which adds the trigram block on top)."""
    dense = X.shape[0] > 0
    d = X.shape[1]
    mistakes = 0.0
    for j in range(lo, hi):
        g = gold[j]
        if g < 0:
            continue
        y = labels[j]
        if y != g:
            mistakes += 1.0
            path[i] += node[j, g] - node[j, y]
            if dense:
                for f in range(d):
                    x = X[j, f]
                    state_t[g, f] += x
                    state_t[y, f] -= x
        if j + 1 < hi and gold[j + 1] >= 0:
            g2, y2 = gold[j + 1], labels[j + 1]
            trans[g, g2] += 1.0
            trans[y, y2] -= 1.0
            E = edges_t[(j - lo) * step]
            path[i] += E[g2, g] - E[y2, y]
    return mistakes


@njit(**_JIT)
def chain_separate_sum(node, edge, offsets, gold, X, labels, state_t, trans, dl, path, e_indptr, e_indices, e_data,
                       we_t):
    """The fused 1-slack separation of the linear chain (see ``ChainFeatureMap.separate_sum``).

    For every sequence i (rows ``offsets[i]:offsets[i+1]`` of the stacked arrays): the loss-augmented Viterbi
    labeling ŷᵢ (Hamming loss, weight 1) into ``labels``, then, over the positions where the gold label is observed,
    Δℓᵢ = #{t : ŷ_t ≠ y_t} into ``dl[i]``, the path score difference wᵀf(xᵢ, yᵢ) − wᵀf(xᵢ, ŷᵢ) into ``path[i]``,
    the transition block of Σᵢ Δfᵢ(ŷᵢ) into ``trans`` (K, K) and, when X has rows (dense inputs), its state block
    transposed, Σ_t e(y_t) x_tᵀ − e(ŷ_t) x_tᵀ, into ``state_t`` (K, d).

    node (N, K) float64 = wᵀ(state features) per token; edge (K, K); gold (N,) int64 (-1 hidden); X (N, d) or (0, 0);
    the edge-feature arguments as in :func:`sequence_edges` (their block of Σᵢ Δfᵢ is left to the caller, which
    has the labels); all outputs are added to (the caller zeroes them).
    """
    n = offsets.shape[0] - 1
    K = node.shape[1]
    T = 1
    for i in range(n):
        T = max(T, offsets[i + 1] - offsets[i])
    delta = np.empty((T, K))
    back = np.empty((T, K), np.int32)
    edge_t = np.ascontiguousarray(edge.T).reshape((1, K, K))
    buf = np.empty((T if e_indptr.shape[0] > 0 else 0, K, K))
    for i in range(n):
        lo, hi = offsets[i], offsets[i + 1]
        if hi == lo:
            continue
        # the edges stay in hand for the path score below (with edge features they differ per position)
        edges_t, step = sequence_edges(edge_t, e_indptr, e_indices, e_data, we_t, lo, hi, buf)
        viterbi_one(node[lo:hi], edges_t, step, gold[lo:hi], 1.0, delta, back, labels[lo:hi])
        dl[i] += _first_order_cut(node, edges_t, step, gold, labels, X, lo, hi, state_t, trans, path, i)


# ------------------------------------------------------------------------------------- second-order chains
# Viterbi over label-pair states (y_{t-1}, y_t): K² states with K predecessors each, O(L·K³) a sequence and no
# K²×K² matrix. The trigram scores T[c, a, b] (c at t-2, a at t-1, b at t) are read transposed, ``trigram_t[a, b, c]``,
# and the max-scores of step t are kept as ``delta[t, b, a]`` (y_t = b, y_{t-1} = a): the maximum over c for a
# new state (a, b) then reads two contiguous rows, ``delta[t-1, a, :]`` and ``trigram_t[a, b, :]``, as the
# first-order kernel reads ``edges_t[s, b, :]``.


@njit(**_JIT)
def transpose_trigram(trigram):
    """``trigram_t[a, b, c] = trigram[c, a, b]`` (K, K, K), contiguous, for :func:`viterbi2_one`."""
    K = trigram.shape[0]
    out = np.empty((K, K, K), trigram.dtype)
    for c in range(K):
        for a in range(K):
            for b in range(K):
                out[a, b, c] = trigram[c, a, b]
    return out


@njit(**_JIT)
def _backtrack2(node, edges_t, step, trigram_t, gold, weight, delta, back, y):
    """The end of :func:`viterbi2_one` and :func:`viterbi2_allowed_one` (L >= 2): the best last state (ties: the
    smallest (y_{L-1}, y_{L-2})), the labeling by back-pointers into ``y``, and its float64 score recomputed along
    it in the order of the recursion."""
    L, K = node.shape
    augment = gold.shape[0] > 0
    best_b = 0
    best_a = 0
    for b in range(K):
        for a in range(K):
            if delta[L - 1, b, a] > delta[L - 1, best_b, best_a]:
                best_b = b
                best_a = a
    y[L - 1] = best_b
    y[L - 2] = best_a
    for t in range(L - 1, 1, -1):
        y[t - 2] = back[t, y[t], y[t - 1]]
    s = np.float64(0.0)
    for t in range(L):
        g = gold[t] if augment else -1
        v = node[t, y[t]]
        if g >= 0 and y[t] != g:
            v += weight
        if t == 0:
            s = np.float64(v)
            continue
        if t >= 2:
            s += np.float64(trigram_t[y[t - 1], y[t], y[t - 2]])
        s += np.float64(edges_t[(t - 1) * step][y[t], y[t - 1]])
        s += np.float64(v)
    return s


@njit(**_JIT)
def viterbi2_one(node, edges_t, step, trigram_t, gold, weight, delta, back, y):
    """Best (loss-augmented) labeling of one second-order chain; returns its float64 score.

    The score of y is Σ_t node[t, y_t] + Σ_{t≥1} E_t[y_{t-1}, y_t] + Σ_{t≥2} T[y_{t-2}, y_{t-1}, y_t], plus
    ``weight`` at every position t with ``gold[t] >= 0`` and ``y_t != gold[t]`` (the Hamming loss on the current
    label, added to the node score as in :func:`viterbi_one`).

    Parameters
    ----------
    node : ndarray, shape (L, K)
        Node scores (L >= 1).
    edges_t : ndarray, shape (S, K, K)
        Transposed first-order edge scores, as for :func:`viterbi_one` (``step`` 1 per position, 0 shared).
    step : int
    trigram_t : ndarray, shape (K, K, K)
        Transposed trigram scores, ``trigram_t[a, b, c] = T[c, a, b]`` (:func:`transpose_trigram`).
    gold : ndarray of int, shape (L,) or (0,)
        Gold labels for the loss (-1: none at that position); length 0: no loss augmentation.
    weight : float
    delta : ndarray, shape (>= L, K, K)
        Work array: ``delta[t, b, a]`` is the best score of y_0..y_t with y_{t-1} = a, y_t = b.
    back : ndarray of int32, shape (>= L, K, K)
        Work array: the best y_{t-2} of state (a, b) at t.
    y : ndarray of int, shape (>= L,)
        Output: the labeling.

    Notes
    -----
    The recursion adds ((δ_{t-1}[c, a] + T[c, a, b]) + E_t[a, b]) + node'[t, b] and the score of the labeling found
    is recomputed along it in that order, so it equals the maximum bit for bit (float64). Ties go to the smallest
    y_{t-2} (strict ``>`` while c increases) and at the end to the smallest (y_{L-1}, y_{L-2}) in that order.
    """
    L, K = node.shape
    augment = gold.shape[0] > 0
    if L == 1:
        g = gold[0] if augment else -1
        best_k = 0
        best = 0.0
        for k in range(K):
            v = node[0, k]
            if g >= 0 and k != g:
                v += weight
            if k == 0 or v > best:
                best = v
                best_k = k
        y[0] = best_k
        return np.float64(best)
    g0 = gold[0] if augment else -1
    g1 = gold[1] if augment else -1
    E = edges_t[0]
    for b in range(K):
        v1 = node[1, b]
        if g1 >= 0 and b != g1:
            v1 += weight
        for a in range(K):
            v0 = node[0, a]
            if g0 >= 0 and a != g0:
                v0 += weight
            delta[1, b, a] = (v0 + E[b, a]) + v1
    for t in range(2, L):
        E = edges_t[(t - 1) * step]
        g = gold[t] if augment else -1
        for a in range(K):
            prev = delta[t - 1, a]
            # two next labels per pass share the loads of δ_{t-1}[a, c] (as in viterbi_one)
            b = 0
            while b < K:
                b1 = b + 1 if b + 1 < K else b
                T0 = trigram_t[a, b]
                T1 = trigram_t[a, b1]
                p = prev[0]
                best0 = p + T0[0]
                best1 = p + T1[0]
                arg0 = 0
                arg1 = 0
                for c in range(1, K):
                    p = prev[c]
                    v0 = p + T0[c]
                    v1 = p + T1[c]
                    c0 = v0 > best0
                    c1 = v1 > best1
                    arg0 = c if c0 else arg0
                    best0 = v0 if c0 else best0
                    arg1 = c if c1 else arg1
                    best1 = v1 if c1 else best1
                v = node[t, b]
                if g >= 0 and b != g:
                    v += weight
                delta[t, b, a] = (best0 + E[b, a]) + v
                back[t, b, a] = arg0
                v = node[t, b1]
                if g >= 0 and b1 != g:
                    v += weight
                delta[t, b1, a] = (best1 + E[b1, a]) + v
                back[t, b1, a] = arg1
                b += 2
    return _backtrack2(node, edges_t, step, trigram_t, gold, weight, delta, back, y)


@njit(**_JIT)
def compact_trigram(trigram_t, succ_ptr, succ, pred_ptr, pred):
    """The trigram scores :func:`viterbi2_allowed_one` reads, back to back in its loop order: for each a, for each
    allowed b after a (ascending), ``trigram_t[a, b, c]`` for the c allowed before a (ascending); shape
    (Σ_a |succ(a)|·|pred(a)|,)."""
    K = succ_ptr.shape[0] - 1
    n = 0
    for a in range(K):
        n += (succ_ptr[a + 1] - succ_ptr[a]) * (pred_ptr[a + 1] - pred_ptr[a])
    out = np.empty(n, trigram_t.dtype)
    off = 0
    for a in range(K):
        for i in range(succ_ptr[a], succ_ptr[a + 1]):
            b = succ[i]
            for j in range(pred_ptr[a], pred_ptr[a + 1]):
                out[off] = trigram_t[a, b, pred[j]]
                off += 1
    return out


@njit(**_JIT)
def viterbi2_allowed_one(node, edges_t, step, trigram_t, gold, weight, delta, back, y, succ_ptr, succ, pred_ptr,
                         pred, tri_c, prev_c):
    """:func:`viterbi2_one` over the labelings whose every label bigram is allowed (``allowed[a, b]``: a at t-1 may
    be followed by b at t), by lists instead of a mask: Σ_a |succ(a)|·|pred(a)| trigram terms a position instead of
    K³ (IOBES chunk labels of CoNLL-2000, K = 40: 2,050 against 64,000).

    Parameters
    ----------
    succ_ptr, succ : ndarray of int64, shapes (K+1,), (n_allowed,)
        The labels b allowed after a, ascending: ``succ[succ_ptr[a]:succ_ptr[a + 1]]`` (CSR of the mask).
    pred_ptr, pred : ndarray of int64, shapes (K+1,), (n_allowed,)
        The labels c allowed before a, ascending (CSR of the mask's transpose).
    tri_c : ndarray, shape (Σ_a |succ(a)|·|pred(a)|,)
        :func:`compact_trigram` of ``trigram_t``: the maximum over c then reads two contiguous rows, the gathered
        δ_{t-1}[a, pred(a)] and the pair's compacted trigram row, and selects without branches, as the dense kernel
        does (a gather per term with a branch was 1.6× slower than the dense kernel at K = 9).
    prev_c : ndarray, shape (>= K,)
        Work array.
    Other parameters as for :func:`viterbi2_one`.

    Notes
    -----
    ``delta`` must hold −inf at the states (a, b) not allowed (at every t < L): they are never written, so one fill
    serves every sequence (a fill per position cost as much as the trigram terms). The first position's label is
    free, a single-token sequence takes any label. Additions, their order and the tie rule (smallest y_{t-2} among
    the allowed, smallest (y_{L-1}, y_{L-2}) at the end) are those of :func:`viterbi2_one`, so it returns what
    :func:`viterbi2_one` returns with the disallowed bigrams' scores at −inf. Every label needs a successor (the
    caller's mask guarantees it), so some allowed labeling of every length exists.
    """
    L, K = node.shape
    if L == 1:
        return viterbi2_one(node, edges_t, step, trigram_t, gold, weight, delta, back, y)
    augment = gold.shape[0] > 0
    g0 = gold[0] if augment else -1
    g1 = gold[1] if augment else -1
    E = edges_t[0]
    for a in range(K):
        v0 = node[0, a]
        if g0 >= 0 and a != g0:
            v0 += weight
        for i in range(succ_ptr[a], succ_ptr[a + 1]):
            b = succ[i]
            v1 = node[1, b]
            if g1 >= 0 and b != g1:
                v1 += weight
            delta[1, b, a] = (v0 + E[b, a]) + v1
    for t in range(2, L):
        E = edges_t[(t - 1) * step]
        g = gold[t] if augment else -1
        off = 0
        for a in range(K):
            prev = delta[t - 1, a]
            lo, hi = pred_ptr[a], pred_ptr[a + 1]
            m = hi - lo
            if m == 0:                    # a label nothing may precede: its states are unreachable
                for i in range(succ_ptr[a], succ_ptr[a + 1]):
                    delta[t, succ[i], a] = -np.inf
                continue
            for j in range(m):
                prev_c[j] = prev[pred[lo + j]]
            for i in range(succ_ptr[a], succ_ptr[a + 1]):
                b = succ[i]
                best = prev_c[0] + tri_c[off]
                arg = 0
                for j in range(1, m):
                    v = prev_c[j] + tri_c[off + j]
                    c0 = v > best
                    arg = j if c0 else arg
                    best = v if c0 else best
                off += m
                v = node[t, b]
                if g >= 0 and b != g:
                    v += weight
                delta[t, b, a] = (best + E[b, a]) + v
                back[t, b, a] = pred[lo + arg]
    return _backtrack2(node, edges_t, step, trigram_t, gold, weight, delta, back, y)


@njit(**_JIT)
def _viterbi2(node, edges_t, step, trigram_t, gold, weight, delta, back, y, succ_ptr, succ, pred_ptr, pred, tri_c,
              prev_c):
    """:func:`viterbi2_allowed_one` when an allowed-bigram list is given (``succ_ptr`` non-empty), else
    :func:`viterbi2_one`."""
    if succ_ptr.shape[0] > 0:
        return viterbi2_allowed_one(node, edges_t, step, trigram_t, gold, weight, delta, back, y, succ_ptr, succ,
                                    pred_ptr, pred, tri_c, prev_c)
    return viterbi2_one(node, edges_t, step, trigram_t, gold, weight, delta, back, y)


@njit(**_JIT)
def viterbi2_stacked(node, edge, trigram, offsets, gold, weight, labels, e_indptr, e_indices, e_data, we_t,
                     succ_ptr, succ, pred_ptr, pred):
    """:func:`viterbi2_one` over sequences stored back to back, as :func:`viterbi_stacked`; trigram (K, K, K) with
    ``trigram[c, a, b]`` scoring c at t-2, a at t-1, b at t (not transposed). With ``succ_ptr`` non-empty only the
    allowed label bigrams are searched (:func:`viterbi2_allowed_one`); empty arrays: all."""
    n = offsets.shape[0] - 1
    K = node.shape[1]
    T = 2
    for i in range(n):
        T = max(T, offsets[i + 1] - offsets[i])
    delta = np.full((T, K, K), -np.inf, node.dtype)     # the allowed-bigram kernel's unwritten states
    back = np.empty((T, K, K), np.int32)
    edge_t = np.ascontiguousarray(edge.T).reshape((1, K, K))
    trigram_t = transpose_trigram(trigram)
    tri_c = compact_trigram(trigram_t, succ_ptr, succ, pred_ptr, pred) if succ_ptr.shape[0] > 0 \
        else np.empty(0, trigram_t.dtype)
    prev_c = np.empty(K, node.dtype)
    buf = np.empty((T if e_indptr.shape[0] > 0 else 0, K, K))
    augment = gold.shape[0] > 0
    for i in range(n):
        lo, hi = offsets[i], offsets[i + 1]
        if hi > lo:
            edges_t, step = sequence_edges(edge_t, e_indptr, e_indices, e_data, we_t, lo, hi, buf)
            _viterbi2(node[lo:hi], edges_t, step, trigram_t, gold[lo:hi] if augment else gold[:0], weight, delta,
                      back, labels[lo:hi], succ_ptr, succ, pred_ptr, pred, tri_c, prev_c)


@njit(**_JIT)
def chain2_separate_sum(node, edge, trigram, offsets, gold, X, labels, state_t, trans, tri, dl, path, e_indptr,
                        e_indices, e_data, we_t, succ_ptr, succ, pred_ptr, pred):
    """The fused 1-slack separation of the second-order chain: :func:`chain_separate_sum` with
    :func:`viterbi2_one`, and also the trigram block of Σᵢ Δfᵢ(ŷᵢ), Σ_t e(y_{t-2}, y_{t-1}, y_t) − e(ŷ_{t-2},
    ŷ_{t-1}, ŷ_t) over the steps whose three gold labels are observed, into ``tri`` (K, K, K), and its scores in
    ``path``. trigram (K, K, K) and the allowed-bigram lists as in :func:`viterbi2_stacked`; the other arguments as
    in :func:`chain_separate_sum`; all outputs are added to."""
    n = offsets.shape[0] - 1
    K = node.shape[1]
    T = 2
    for i in range(n):
        T = max(T, offsets[i + 1] - offsets[i])
    delta = np.full((T, K, K), -np.inf)                   # the allowed-bigram kernel's unwritten states
    back = np.empty((T, K, K), np.int32)
    edge_t = np.ascontiguousarray(edge.T).reshape((1, K, K))
    trigram_t = transpose_trigram(trigram)
    tri_c = compact_trigram(trigram_t, succ_ptr, succ, pred_ptr, pred) if succ_ptr.shape[0] > 0 \
        else np.empty(0, trigram_t.dtype)
    prev_c = np.empty(K, node.dtype)
    buf = np.empty((T if e_indptr.shape[0] > 0 else 0, K, K))
    for i in range(n):
        lo, hi = offsets[i], offsets[i + 1]
        if hi == lo:
            continue
        edges_t, step = sequence_edges(edge_t, e_indptr, e_indices, e_data, we_t, lo, hi, buf)
        _viterbi2(node[lo:hi], edges_t, step, trigram_t, gold[lo:hi], 1.0, delta, back, labels[lo:hi], succ_ptr, succ,
                  pred_ptr, pred, tri_c, prev_c)
        dl[i] += _first_order_cut(node, edges_t, step, gold, labels, X, lo, hi, state_t, trans, path, i)
        for j in range(lo, hi - 2):
            if gold[j] >= 0 and gold[j + 1] >= 0 and gold[j + 2] >= 0:
                g, g2, g3 = gold[j], gold[j + 1], gold[j + 2]
                y, y2, y3 = labels[j], labels[j + 1], labels[j + 2]
                tri[g, g2, g3] += 1.0
                tri[y, y2, y3] -= 1.0
                path[i] += trigram[g, g2, g3] - trigram[y, y2, y3]
