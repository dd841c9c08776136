"""Compiled kernels of the block-coordinate Frank–Wolfe route (:mod:`mmprog.engine.bcfw`): arrays in, arrays out.

* :func:`token_gram` — the token Gram matrix G_i = XᵢXᵢᵀ of every example (Σᵢ Tᵢ² floats, computed once);
* :func:`rebuild_w` — w(α) = Σᵢ Σ_y αᵢ(y) Δfᵢ(y) and the dual's linear part Σ α Δℓ from the per-example caches;
* :func:`bcfw_pass` — one pass over the examples in a given order: the loss-augmented Viterbi of each (the most
  violated labeling, added to its cache) and up to ``inner`` exact pairwise steps inside the cache (Lacoste-Julien,
  Jaggi, Schmidt & Pletscher, ICML 2013; Shah, Kolmogorov & Lampert, CVPR 2015; Osokin et al., ICML 2016);
* :func:`cache_pass` — the same steps without the oracle (Shah et al.'s passes over the cached planes), scoring
  only the tokens where a cached labeling differs from gold;
* :func:`average_step` — the exponential average of the passes' points w = soft(v, λ), taken after every pass.

A step reads the cached labelings' Gram matrix (:func:`slot_gram`, a row computed as a labeling enters) instead of
the token scores, so a visit's steps cost O(|Sᵢ|) each and v takes their net move once.

Both passes add up the increase of the dual D(α) their steps make (exact: γ(g(s) − g(a)) − ½γ²‖f(x, a) − f(x, s)‖²
a step), which the driver can weigh against their seconds to decide when to go back to the oracle.

The arrays come in four groups (numba tuples):

* ``data = (Xp, Xi, Xd, offsets, gold, Gp, Gv)``: the stacked token rows (CSR), the examples' token offsets, the
  gold label of every token and the token Gram matrices (example i's at ``Gv[Gp[i]:Gp[i+1]]``, Tᵢ × Tᵢ);
* ``model = (W, Tr, Tri)``: views of w's state block (d × K), transition block (K × K) and, for the second-order
  chain, its label-trigram block Tri[y_{t-2}, y_{t-1}, y_t] (K × K × K; shape (0, 0, 0) for the first order);
* ``acc = (V, TrV, TriV)``: v = ΔFᵀα in the same blocks, of which w = soft(v, λ) for the elastic net ½‖w‖² + λ‖w‖₁
  (``lam`` > 0); with λ = 0, ``acc`` is ``model`` itself (w = v). The passes keep w's label-pair and trigram blocks
  entry by entry but not its state block W, whose scores they threshold from V as they read it
  (:func:`_token_scores`): after a pass the caller sets W = soft(V, λ) before reading it;
* ``cache = (lab, alpha, loss, cnt, gram)``: token-stacked labelings ``lab`` (M slots × N tokens; example i's slot
  m is ``lab[m, offsets[i]:offsets[i+1]]``, valid for m < cnt[i], slot 0 the gold labeling) with their αᵢ(y) and
  Δℓᵢ(y) (n × M), and the slots' Gram matrices ``gram[i, m, m'] = Δfᵢ(y_m)ᵀΔfᵢ(y_m')`` (n × M × M), kept as
  labelings enter and leave the caches (:func:`slot_gram`);
* ``work``: the work arrays of :func:`work_arrays`.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ._compiled import compact_trigram, transpose_trigram, viterbi2_allowed_one, viterbi2_one, viterbi_one

_JIT = dict(cache=True, nogil=True, fastmath=False)

#: What the passes count in ``gain[1:5]``, the work whose weighted sum stands for a pass's time: rows of the
#: state block read by token scores, rows of it moved by steps, Viterbi cells (label pairs or trigrams per token)
#: and the small reads (Gram entries, gradient terms) of steps and gradients.
WORK = ("score_rows", "step_rows", "viterbi_cells", "small")


@intrinsic
def cycles(typingctx):
    """The processor's cycle counter (LLVM's ``readcyclecounter``; about 25 cycles a read on x86-64, 0 where the
    target has none): the pass kernels split their time into the oracle's part and the rest without leaving
    compiled code. The caller turns counts into seconds by the pass's wall time."""
    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(64), []),
                                            "llvm.readcyclecounter")
        return builder.call(fn, [])
    return types.uint64(), codegen


@intrinsic
def prefetch(typingctx, arr, idx):
    """Ask the processor to start loading the cache line of ``arr``'s element at flat index ``idx`` (LLVM's
    ``prefetch``: a read, kept in all cache levels; a hint, no effect on results): the pass kernels fetch the weight
    rows of the next visit while the current one computes, since a visit's random rows of w otherwise wait on
    memory."""
    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = builder.gep(ary.data, [args[1]])
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [ptr.type, i32, i32, i32]),
                                            "llvm.prefetch.p0")
        builder.call(fn, [ptr, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()
    return types.void(arr, types.intp), codegen


@njit(**_JIT)
def _prefetch_rows(Xp, Xi, W, lo, pos, npos):
    """Prefetch the rows of w's state block that the token scores at the positions ``pos[:npos]`` of the example
    starting at token row ``lo`` will read (every cache line of each row)."""
    K = W.shape[1]
    for x in range(npos):
        r = lo + pos[x]
        for p in range(Xp[r], Xp[r + 1]):
            base = Xi[p] * K
            for k in range(0, K, 8):
                prefetch(W, base + k)
            prefetch(W, base + K - 1)


@njit(**_JIT)
def soft(v, lam):
    """soft(v, λ) = sign(v)·max(|v| − λ, 0): the elastic-net point w of an accumulated v = ΔFᵀα, ∇ of the
    conjugate ½‖soft(v, λ)‖² of ½‖w‖² + λ‖w‖₁. Written without branches (one of the two terms is 0), so that the
    token scores' loop over labels, which thresholds v as it reads it, vectorises."""
    return max(v - lam, 0.0) + min(v + lam, 0.0)


@njit(**_JIT)
def average_step(w_ema, v, lam, ema):
    """w̄ ← (1 − ρ)w̄ + ρ·soft(v, λ) with ρ = ``ema``, in one sweep over the arrays (the pass's point w = soft(v, λ)
    is not formed: inside the caches w's state block is stale, and a separate soft and update would sweep these
    arrays, as long as w, three times)."""
    keep = 1.0 - ema
    for j in range(w_ema.shape[0]):
        w_ema[j] = keep * w_ema[j] + ema * soft(v[j], lam)


def work_arrays(T, K, M, order, allowed=None):
    """The work arrays of the pass kernels for sequences up to T tokens, K labels, M cache slots, as one tuple:
    0 node scores (T, K); 1, 2 the first-order Viterbi's δ and back-pointers (T, K); 3 the labeling found (T,);
    4 transposed edges (1, K, K); 5, 6 count buffers (K, K) and (K, K, K) (zeros; (0, 0, 0) for ``order=1``); 7 gradients (M,); 8, 9 positions
    (T + 1,) and (T,); 10–13 the allowed bigrams as lists (succ_ptr, succ, pred_ptr, pred; empty: all allowed);
    14 a (K,) buffer; 15, 16 the second-order Viterbi's δ (T, K, K), −inf where it never writes, and back-pointers;
    17, 18 the positions where each cache slot differs from gold (M, T) and their counts (M,); 19 their union (T,);
    20 a visit's net moves of α per slot (M,); 21 a slot's state part spread over positions (T, K) (zeros); 22, 23
    a position's net moves per label (K,) (zeros) and the labels they touch (K,); 24, 25 the label pairs and
    trigrams touching a labeling's differences (T + 1,); 26–28 as 17–19, for the next visit of a cache pass.
    The second-order arrays are (1, 1, 1) for ``order=1`` (one compiled signature serves both orders)."""
    T = max(int(T), 2)
    S = (T, K, K) if order == 2 else (1, 1, 1)
    e = np.zeros(0, np.int64)
    lists = (e, e, e, e)
    if allowed is not None:
        lists = ()
        for m in (allowed, allowed.T):
            a, b = np.nonzero(m)                  # row-major: b ascending within each a
            lists += (np.concatenate([[0], np.cumsum(np.bincount(a, minlength=K))]).astype(np.int64),
                      b.astype(np.int64))
    return (np.zeros((T, K)), np.empty((T, K)), np.empty((T, K), np.int32), np.empty(T, np.int64),
            np.empty((1, K, K)), np.zeros((K, K)), np.zeros((K, K, K) if order == 2 else (0, 0, 0)), np.empty(M), np.empty(T + 1, np.int64),
            np.empty(T, np.int64)) + lists + (np.empty(K), np.full(S, -np.inf), np.empty(S, np.int32),
                                              np.empty((M, T), np.int64), np.empty(M, np.int64),
                                              np.empty(T, np.int64), np.zeros(M), np.zeros((T, K)),
                                              np.zeros(K), np.empty(K, np.int64), np.empty(T + 1, np.int64),
                                              np.empty(T + 1, np.int64), np.empty((M, T), np.int64),
                                              np.empty(M, np.int64), np.empty(T, np.int64))


@njit(**_JIT)
def token_gram(Xp, Xi, Xd, offsets, Gp, Gv, buf):
    """G_i = XᵢXᵢᵀ of every example, row-major at ``Gv[Gp[i]:Gp[i+1]]`` (Tᵢ × Tᵢ); ``buf`` (d,) zeros, returned
    zero."""
    n = offsets.shape[0] - 1
    for i in range(n):
        lo, hi = offsets[i], offsets[i + 1]
        L = hi - lo
        base = Gp[i]
        for t in range(L):
            r = lo + t
            for p in range(Xp[r], Xp[r + 1]):
                buf[Xi[p]] += Xd[p]
            for u in range(t, L):
                s = 0.0
                ru = lo + u
                for p in range(Xp[ru], Xp[ru + 1]):
                    s += buf[Xi[p]] * Xd[p]
                Gv[base + t * L + u] = s
                Gv[base + u * L + t] = s
            for p in range(Xp[r], Xp[r + 1]):
                buf[Xi[p]] = 0.0


@njit(**_JIT)
def rebuild_w(data, model, cache):
    """w(α) = Σᵢ Σ_y αᵢ(y) Δfᵢ(y) into the model's blocks from zero; returns Σᵢ Σ_y αᵢ(y) Δℓᵢ(y)."""
    Xp, Xi, Xd, offsets, gold = data[0], data[1], data[2], data[3], data[4]
    W, Tr, Tri = model
    lab, alpha, loss, cnt = cache[0], cache[1], cache[2], cache[3]
    W[:, :] = 0.0
    Tr[:, :] = 0.0
    order2 = Tri.shape[0] > 0
    if order2:
        Tri[:, :, :] = 0.0
    n = offsets.shape[0] - 1
    lin = 0.0
    for i in range(n):
        lo, hi = offsets[i], offsets[i + 1]
        for m in range(1, cnt[i]):       # slot 0 is the gold labeling: Δf = 0, Δℓ = 0
            a = alpha[i, m]
            if a == 0.0:
                continue
            lin += a * loss[i, m]
            for r in range(lo, hi):
                g, y = gold[r], lab[m, r]
                if g != y:
                    for p in range(Xp[r], Xp[r + 1]):
                        v = a * Xd[p]
                        W[Xi[p], g] += v
                        W[Xi[p], y] -= v
                if r + 1 < hi:
                    Tr[g, gold[r + 1]] += a
                    Tr[y, lab[m, r + 1]] -= a
                if order2 and r + 2 < hi:
                    Tri[g, gold[r + 1], gold[r + 2]] += a
                    Tri[y, lab[m, r + 1], lab[m, r + 2]] -= a
    return lin


@njit(**_JIT)
def _gradient(node, Tr, Tri, y, yo, gold, lo, L, loss):
    """g(y) = Δℓ(y) + wᵀf(x, y) − wᵀf(x, yᵢ) of the labeling ``y[yo:yo+L]`` of the example whose tokens start at row
    ``lo``: token scores are read only where y differs from the gold labeling (elsewhere they cancel), so rows of
    ``node`` at the positions where no cached labeling differs from gold need not hold scores."""
    s = loss
    order2 = Tri.shape[0] > 0
    for t in range(L):
        r = lo + t
        q = yo + t
        if y[q] != gold[r]:
            s += node[t, y[q]] - node[t, gold[r]]
        if t + 1 < L:
            s += Tr[y[q], y[q + 1]] - Tr[gold[r], gold[r + 1]]
            if order2 and t + 2 < L:
                s += Tri[y[q], y[q + 1], y[q + 2]] - Tri[gold[r], gold[r + 1], gold[r + 2]]
    return s


@njit(**_JIT)
def _slot_gradient(node, Tr, Tri, y, gold, lo, L, loss, dp, nd):
    """:func:`_gradient` of a cached labeling from the list of its positions that differ from gold (``dp[:nd]``,
    ascending): only the token scores, label pairs and trigrams touching them, O(nd) instead of O(L)."""
    s = loss
    order2 = Tri.shape[0] > 0
    last_j = -1
    last_e = -1
    for x in range(nd):
        t = dp[x]
        r = lo + t
        s += node[t, y[r]] - node[t, gold[r]]
        for j in range(max(t - 1, last_j + 1), min(t + 1, L - 1)):     # the pairs (j, j + 1) touching t
            s += Tr[y[lo + j], y[lo + j + 1]] - Tr[gold[lo + j], gold[lo + j + 1]]
            last_j = j
        if order2:
            for e in range(max(t, 2, last_e + 1), min(t + 3, L)):      # the trigrams (e − 2, e − 1, e) touching t
                s += Tri[y[lo + e - 2], y[lo + e - 1], y[lo + e]] - Tri[gold[lo + e - 2], gold[lo + e - 1],
                                                                         gold[lo + e]]
                last_e = e
    return s


@njit(**_JIT)
def _slot_positions(lab, gold, lo, L, c, dpos, dcnt, pos):
    """For each cache slot m < c the positions where it differs from gold (``dpos[m, :dcnt[m]]``), and their union
    into ``pos``; returns the union's size."""
    npos = 0
    for m in range(c):
        dcnt[m] = 0
    for t in range(L):
        r = lo + t
        g = gold[r]
        hit = False
        for m in range(1, c):
            if lab[m, r] != g:
                dpos[m, dcnt[m]] = t
                dcnt[m] += 1
                hit = True
        if hit:
            pos[npos] = t
            npos += 1
    return npos


@njit(**_JIT)
def _take_positions(c, dsrc, csrc, usrc, nu, dpos, dcnt, upos):
    """Copy slot positions computed ahead (``dsrc``, ``csrc``, their union ``usrc[:nu]``) into the visit's arrays;
    returns the union's size. O(Σ nd), where recomputing them is O(L·c)."""
    for m in range(c):
        dcnt[m] = csrc[m]
        for x in range(csrc[m]):
            dpos[m, x] = dsrc[m, x]
    for x in range(nu):
        upos[x] = usrc[x]
    return nu


@njit(**_JIT)
def _token_scores(Xp, Xi, Xd, V, lam, lo, pos, npos, node):
    """node[t] = xₜᵀW with W = soft(V, λ), the state block of w (V itself for λ = 0), at the positions t of
    ``pos[:npos]`` (of the example starting at token row ``lo``). The elastic net's state block is thresholded
    here, as it is read, rather than kept beside v: a step then writes one row per feature, not two, and the rows it
    writes are the ones the scores just read."""
    K = V.shape[1]
    for x in range(npos):
        t = pos[x]
        r = lo + t
        for k in range(K):
            node[t, k] = 0.0
        if lam > 0.0:
            for p in range(Xp[r], Xp[r + 1]):
                v = Xd[p]
                j = Xi[p]
                for k in range(K):
                    node[t, k] += v * soft(V[j, k], lam)
        else:                   # P0's loop, the oracle's hot path, without the thresholding
            for p in range(Xp[r], Xp[r + 1]):
                v = Xd[p]
                j = Xi[p]
                for k in range(K):
                    node[t, k] += v * V[j, k]


@njit(**_JIT)
def _oracle(node, model, gold, lo, hi, work):
    """The loss-augmented Viterbi of the example (tokens lo..hi−1) at the node scores ``node[:L]``: the labeling
    into ``work[3]`` (first or second order, over the allowed bigrams when ``work`` lists them)."""
    W, Tr, Tri = model
    delta, back, y, edge_t = work[1], work[2], work[3], work[4]
    K = W.shape[1]
    L = hi - lo
    for a in range(K):
        for b in range(K):
            edge_t[0, b, a] = Tr[a, b]
    if Tri.shape[0] == 0:
        viterbi_one(node[:L], edge_t, 0, gold[lo:hi], 1.0, delta, back, y)
        return
    succ_ptr, succ, pred_ptr, pred, prev_c = work[10], work[11], work[12], work[13], work[14]
    delta, back = work[15], work[16]
    tri_t = transpose_trigram(Tri)
    if succ_ptr.shape[0] > 0:
        viterbi2_allowed_one(node[:L], edge_t, 0, tri_t, gold[lo:hi], 1.0, delta, back, y, succ_ptr, succ, pred_ptr,
                             pred, compact_trigram(tri_t, succ_ptr, succ, pred_ptr, pred), prev_c)
    else:
        viterbi2_one(node[:L], edge_t, 0, tri_t, gold[lo:hi], 1.0, delta, back, y)


@njit(**_JIT)
def bcfw_pass(order, data, model, acc, lam, cache, C, inner, tol, hinge, bgap, ogap, work, clock, gain):
    """One pass of block-coordinate pairwise Frank–Wolfe over the examples in ``order`` (see the module docstring).

    Parameters
    ----------
    hinge, bgap : ndarray, shape (n,)
        Output: Hᵢ(w) and the block gap C·Hᵢ(w) − Σ_y αᵢ(y) gᵢ(y) at the w of each visit (before its steps).
    ogap : ndarray, shape (n,)
        Output: the part of the block gap outside the cache, C·(Hᵢ(w) − max_{y∈Sᵢ} gᵢ(y)) (the rest is the gap
        inside the cache, which :func:`cache_pass` closes without the oracle).
    clock : ndarray of uint64, shape (2,)
        Added to: cycles in the oracle (token scores and loss-augmented Viterbi), cycles in the whole pass.
    gain : ndarray, shape (5,)
        Added to: [0] the increase of the dual D(α) made by the pass's pairwise steps (up to rounding; the moves
        that empty a full cache are not counted; with λ > 0 the increase of its quadratic lower model, a lower
        bound); [1:5] the pass's work, counted (:data:`WORK`), which the driver weighs instead of seconds so that
        a fit's path does not depend on the machine's load.
    acc, lam :
        The accumulated v = ΔFᵀα in blocks like ``model``, and λ ≥ 0 of the elastic net ½‖w‖² + λ‖w‖₁: the model
        scored is w = soft(v, λ), its state block thresholded as it is read, its label-pair and trigram blocks kept
        entry by entry as a step moves v (``model``'s state block is left stale). With λ = 0, ``acc`` is ``model``
        (w = v).

    Returns
    -------
    evicted : int
        Visits that found the cache full and emptied its least-weighted labeling onto the best one to make room.
    """
    Xp, Xi, Xd, offsets, gold = data[0], data[1], data[2], data[3], data[4]
    Tr, Tri = model[1], model[2]
    lab, alpha, loss, cnt, gram = cache
    node, y, gsc, pos = work[0], work[3], work[7], work[9]
    dpos, dcnt, upos = work[17], work[18], work[19]
    M = lab.shape[0]
    evicted = 0
    ahead = work[19]
    cells = _viterbi_cells(model, work)
    start = cycles()
    for oi in range(order.shape[0]):
        i = order[oi]
        lo, hi = offsets[i], offsets[i + 1]
        L = hi - lo
        if L == 0:
            hinge[i] = 0.0
            bgap[i] = 0.0
            ogap[i] = 0.0
            continue
        # token scores at the current w, every position (the Viterbi reads them all)
        c0 = cycles()
        if oi + 1 < order.shape[0] and order[oi + 1] != i:
            # the next visit's rows of w (all its tokens: its Viterbi scores them all) start loading now
            j = order[oi + 1]
            jlo = offsets[j]
            nj = offsets[j + 1] - jlo
            for t in range(nj):
                ahead[t] = t
            _prefetch_rows(Xp, Xi, acc[0], jlo, ahead, nj)
        for t in range(L):
            pos[t] = t
        _token_scores(Xp, Xi, Xd, acc[0], lam, lo, pos, L, node)
        _oracle(node, model, gold, lo, hi, work)
        clock[0] += cycles() - c0
        gain[1] += Xp[hi] - Xp[lo]
        gain[3] += L * cells
        dl = 0.0
        for t in range(L):
            if y[t] != gold[lo + t]:
                dl += 1.0
        H = _gradient(node, Tr, Tri, y, 0, gold, lo, L, dl)
        hinge[i] = H
        c = cnt[i]
        _slot_positions(lab, gold, lo, L, c, dpos, dcnt, upos)
        dot = 0.0
        gmax = 0.0
        for m in range(c):
            gsc[m] = _slot_gradient(node, Tr, Tri, lab[m], gold, lo, L, loss[i, m], dpos[m], dcnt[m])
            dot += alpha[i, m] * gsc[m]
            gmax = max(gmax, gsc[m])
        bgap[i] = C * H - dot
        ogap[i] = max(C * (H - gmax), 0.0)
        # ŷ into the cache unless it is there (the gold labeling is slot 0)
        found = False
        for m in range(c):
            same = True
            for t in range(L):
                if lab[m, lo + t] != y[t]:
                    same = False
                    break
            if same:
                found = True
                break
        if not found and H > tol:
            if c == M:
                c = _evict(i, data, model, acc, lam, cache, gsc, work, L)
                evicted += 1
            for t in range(L):
                lab[c, lo + t] = y[t]
            loss[i, c] = dl
            alpha[i, c] = 0.0
            gsc[c] = H
            c += 1
            cnt[i] = c
        # the positions where each cached labeling differs from gold: the new labeling's Gram row and the steps'
        # net moves read only those
        npos = _slot_positions(lab, gold, lo, L, c, dpos, dcnt, upos)
        gain[4] += L * c
        if not found and H > tol:
            _slot_gram_row(i, c - 1, c, data, cache, work, upos, npos)
            gain[4] += dcnt[c - 1] * npos + c
        gain[0] += _inner_steps(i, c, inner, tol, data, model, acc, lam, cache, gsc, work, upos, npos, gain)
        _compact(i, lo, L, cache, gsc)
    clock[1] += cycles() - start
    return evicted


@njit(**_JIT)
def _evict(i, data, model, acc, lam, cache, gsc, work, npos):
    """A full cache: the least-weighted labeling's mass goes to the best cached one (a feasible move), freeing its
    slot; the gradients are recomputed (the move changed the token scores). Returns the new count."""
    gold, offsets = data[4], data[3]
    Tr, Tri = model[1], model[2]
    lab, alpha, loss, cnt = cache[0], cache[1], cache[2], cache[3]
    lo, hi = offsets[i], offsets[i + 1]
    c = cnt[i]
    a_min = 1
    best = 0
    for m in range(c):
        if gsc[m] > gsc[best]:
            best = m
    for m in range(2, c):
        if alpha[i, m] < alpha[i, a_min]:
            a_min = m
    if best == a_min:
        best = 0
    dpos, dcnt = work[17], work[18]
    nd = _pair_diff(lab[a_min], lab[best], lo, dpos[a_min], dcnt[a_min], dpos[best], dcnt[best], work[8])
    _pair_step(i, a_min, best, alpha[i, a_min], data, model, acc, lam, cache, work, work[9], npos, work[8], nd)
    c = _compact(i, lo, hi - lo, cache, gsc)
    _slot_positions(lab, gold, lo, hi - lo, c, dpos, dcnt, work[19])
    for m in range(c):
        gsc[m] = _slot_gradient(work[0], Tr, Tri, lab[m], gold, lo, hi - lo, loss[i, m], dpos[m], dcnt[m])
    return c


@njit(**_JIT)
def cache_pass(order, data, model, acc, lam, cache, C, inner, tol, cgap, work, gain):
    """One pass of pairwise steps inside the caches of the examples in ``order``, without the oracle (Shah,
    Kolmogorov & Lampert, CVPR 2015: passes over the cached planes between oracle calls).

    Only the positions where some cached labeling differs from gold are scored (the gradients of cached labelings
    read nothing else; on CoNLL-2000 a fifth of the tokens), so a visit costs a fraction of an oracle visit. The
    rows of v those scores read (thresholded for the elastic net) and the steps then move are random rows of a table
    larger than the processor's caches, so the next visit's positions are found, and its rows prefetched, while this
    one computes.

    Parameters
    ----------
    cgap : ndarray, shape (n,)
        Output: the block's gap inside its cache, C·max_{y∈Sᵢ} gᵢ(y) − Σ_y αᵢ(y) gᵢ(y), at the w of each visit.
    gain : ndarray, shape (5,)
        Added to: the increase of the dual D(α) made by the pass's steps, and the pass's work (:data:`WORK`).
    Other parameters as for :func:`bcfw_pass`.
    """
    Xp, Xi, Xd, offsets, gold = data[0], data[1], data[2], data[3], data[4]
    Tr, Tri = model[1], model[2]
    lab, alpha, loss, cnt = cache[0], cache[1], cache[2], cache[3]
    node, gsc = work[0], work[7]
    dpos, dcnt, upos = work[17], work[18], work[19]
    dnext, cnext, unext = work[26], work[27], work[28]
    ready = -1              # the example whose slot positions are in dnext, cnext, unext
    nready = 0
    for oi in range(order.shape[0]):
        i = order[oi]
        c = cnt[i]
        lo, hi = offsets[i], offsets[i + 1]
        L = hi - lo
        npos = 0
        if c > 1:
            if ready == i:
                npos = _take_positions(c, dnext, cnext, unext, nready, dpos, dcnt, upos)
            else:
                npos = _slot_positions(lab, gold, lo, L, c, dpos, dcnt, upos)
        ready = -1
        if oi + 1 < order.shape[0] and order[oi + 1] != i and cnt[order[oi + 1]] > 1:
            # the next visit's slot positions now (this visit moves only example i's cache), and the rows of v its
            # scores read (and its steps write) start loading while this one computes
            j = order[oi + 1]
            jlo = offsets[j]
            nready = _slot_positions(lab, gold, jlo, offsets[j + 1] - jlo, cnt[j], dnext, cnext, unext)
            ready = j
            _prefetch_rows(Xp, Xi, acc[0], jlo, unext, nready)
        if c <= 1:
            cgap[i] = 0.0
            continue
        _token_scores(Xp, Xi, Xd, acc[0], lam, lo, upos, npos, node)
        gain[1] += _rows_at(Xp, lo, upos, npos)
        gain[4] += L * c
        dot = 0.0
        gmax = 0.0
        for m in range(c):
            gsc[m] = _slot_gradient(node, Tr, Tri, lab[m], gold, lo, L, loss[i, m], dpos[m], dcnt[m])
            dot += alpha[i, m] * gsc[m]
            gmax = max(gmax, gsc[m])
        cgap[i] = C * gmax - dot
        gain[0] += _inner_steps(i, c, inner, tol, data, model, acc, lam, cache, gsc, work, upos, npos, gain)
        _compact(i, lo, L, cache, gsc)


@njit(**_JIT)
def _touching(dp, nd, L, order2, js, es):
    """The label pairs (j, j + 1) into ``js`` and, with ``order2``, the trigrams (e − 2, e − 1, e) into ``es`` that
    touch the positions ``dp[:nd]`` (ascending), each once: where a labeling differs from gold at those positions
    only, these are the pairs and trigrams of its Δf (the others cancel). Returns their counts."""
    nj = 0
    ne = 0
    for x in range(nd):
        t = dp[x]
        for j in range(max(t - 1, js[nj - 1] + 1 if nj else 0), min(t + 1, L - 1)):
            js[nj] = j
            nj += 1
        if order2:
            for e in range(max(t, 2, es[ne - 1] + 1 if ne else 0), min(t + 3, L)):
                es[ne] = e
                ne += 1
    return nj, ne


@njit(**_JIT)
def _slot_counts(y, gold, lo, L, dp, nd, trbuf, tribuf, add, js, es):
    """The label-pair (and trigram) part of Δf(x, y) = f(x, yᵢ) − f(x, y) into the dense buffers (``add``), or
    those entries back to zero (y differing from gold at the positions ``dp[:nd]`` only)."""
    nj, ne = _touching(dp, nd, L, tribuf.shape[0] > 0, js, es)
    for x in range(nj):
        r = lo + js[x]
        if add:
            trbuf[gold[r], gold[r + 1]] += 1.0
            trbuf[y[r], y[r + 1]] -= 1.0
        else:
            trbuf[gold[r], gold[r + 1]] = 0.0
            trbuf[y[r], y[r + 1]] = 0.0
    for x in range(ne):
        r = lo + es[x] - 2
        if add:
            tribuf[gold[r], gold[r + 1], gold[r + 2]] += 1.0
            tribuf[y[r], y[r + 1], y[r + 2]] -= 1.0
        else:
            tribuf[gold[r], gold[r + 1], gold[r + 2]] = 0.0
            tribuf[y[r], y[r + 1], y[r + 2]] = 0.0


@njit(**_JIT)
def _slot_gram_row(i, m, c, data, cache, work, pos, npos):
    """Row and column m of example i's slot Gram matrix, K[m, k] = Δf(x, y_m)ᵀΔf(x, y_k) with Δf(x, y) = f(x, yᵢ) −
    f(x, y), against the slots k < c (slot 0, gold, has Δf = 0). Each slot's positions that differ from gold are
    listed in ``work[17]``, ``work[18]``, their union in ``pos[:npos]``.

    Δf(x, y_m)'s state part is first spread over the union's positions, h[u, ℓ] = Σ_{t: y_m,t ≠ yᵢ,t} G[t, u]
    ([yᵢ,t = ℓ] − [y_m,t = ℓ]) with G the token Gram matrix, and its label-pair (and trigram) counts into dense
    buffers; then each K[m, k] reads h and the buffers at slot k's positions only: O(nd_m·npos + Σ_k nd_k) in
    place of O(Σ_k nd_m·nd_k)."""
    gold, offsets, Gp, Gv = data[4], data[3], data[5], data[6]
    lab, gram = cache[0], cache[4]
    dpos, dcnt = work[17], work[18]
    trbuf, tribuf, h = work[5], work[6], work[21]
    lo = offsets[i]
    L = offsets[i + 1] - lo
    la = lab[m]
    dm, nm = dpos[m], dcnt[m]
    gbase = Gp[i]
    for x in range(nm):
        t = dm[x]
        gt, at = gold[lo + t], la[lo + t]
        row = gbase + t * L
        for z in range(npos):
            u = pos[z]
            gv = Gv[row + u]
            h[u, gt] += gv
            h[u, at] -= gv
    js, es = work[24], work[25]
    _slot_counts(la, gold, lo, L, dm, nm, trbuf, tribuf, True, js, es)
    order2 = tribuf.shape[0] > 0
    gram[i, m, 0] = 0.0
    gram[i, 0, m] = 0.0
    for k in range(1, c):
        lk = lab[k]
        dk, nk = dpos[k], dcnt[k]
        v = 0.0
        for x in range(nk):
            u = dk[x]
            v += h[u, gold[lo + u]] - h[u, lk[lo + u]]
        nj, ne = _touching(dk, nk, L, order2, js, es)
        for x in range(nj):
            r = lo + js[x]
            v += trbuf[gold[r], gold[r + 1]] - trbuf[lk[r], lk[r + 1]]
        for x in range(ne):
            r = lo + es[x] - 2
            v += tribuf[gold[r], gold[r + 1], gold[r + 2]] - tribuf[lk[r], lk[r + 1], lk[r + 2]]
        gram[i, m, k] = v
        gram[i, k, m] = v
    _slot_counts(la, gold, lo, L, dm, nm, trbuf, tribuf, False, js, es)
    K = h.shape[1]
    for z in range(npos):
        u = pos[z]
        for q in range(K):
            h[u, q] = 0.0


@njit(**_JIT)
def slot_gram(data, cache, work):
    """Every example's slot Gram matrix ``gram[i, m, m'] = Δfᵢ(y_m)ᵀΔfᵢ(y_m')`` over its cached labelings (after
    a resume; a fit from empty caches builds them one labeling at a time, as here)."""
    gold, offsets = data[4], data[3]
    lab, cnt = cache[0], cache[3]
    pos = work[19]
    n = offsets.shape[0] - 1
    for i in range(n):
        c = cnt[i]
        lo = offsets[i]
        npos = _slot_positions(lab, gold, lo, offsets[i + 1] - lo, c, work[17], work[18], pos)
        for m in range(1, c):
            _slot_gram_row(i, m, m + 1, data, cache, work, pos, npos)


@njit(**_JIT)
def _inner_steps(i, c, inner, tol, data, model, acc, lam, cache, gsc, work, pos, npos, count):
    """Up to ``inner`` pairwise steps inside the cache of example i, through its slot Gram matrix K = ``gram[i]``:
    mass γ moves from the cached labeling a of least gradient with α > 0 to the one s of largest gradient,
    γ = min(αᵢ(a), (g(s) − g(a)) / ‖Δf(y_s) − Δf(y_a)‖²) with the norm K[a, a] + K[s, s] − 2K[a, s], and every
    cached gradient moves by −γ(K[m, s] − K[m, a]): O(c) a step, no token scores read. ``gsc`` holds the
    gradients on entry. v takes the visit's net move of each slot's α once, after the steps (:func:`_move_net`; the
    positions of the slots are ``pos[:npos]``, per slot ``work[17]``, ``work[18]``).

    For P0 (λ = 0) these are the exact maximisers of D along each pair direction and the returned increase is
    D's. For the elastic net the gradients and norms are those of D's quadratic lower model at the visit's start
    (soft(·, λ) is monotone and 1-Lipschitz, so D's curvature along any direction is at most the K-norm): the steps
    maximise that model over the block, so D rises at least by the returned increase. Its work is added to
    ``count[1:5]`` (:data:`WORK`)."""
    lab, alpha, gram = cache[0], cache[1], cache[4]
    dal = work[20]
    for m in range(c):
        dal[m] = 0.0
    gain = 0.0
    for _ in range(inner):
        s = 0
        a = -1
        for m in range(c):
            if gsc[m] > gsc[s]:
                s = m
            if alpha[i, m] > 0.0 and (a < 0 or gsc[m] < gsc[a]):
                a = m
        if a < 0 or s == a or gsc[s] - gsc[a] <= tol:
            break
        norm2 = gram[i, a, a] + gram[i, s, s] - 2.0 * gram[i, a, s]
        step = alpha[i, a]
        if norm2 > 0.0:
            step = min(step, (gsc[s] - gsc[a]) / norm2)
        gain += step * (gsc[s] - gsc[a]) - 0.5 * step * step * norm2
        if step >= alpha[i, a]:
            step = alpha[i, a]
            alpha[i, a] = 0.0
        else:
            alpha[i, a] -= step
        alpha[i, s] += step
        dal[a] -= step
        dal[s] += step
        for m in range(c):
            gsc[m] -= step * (gram[i, m, s] - gram[i, m, a])
        count[4] += c
    count[2] += _move_net(i, c, dal, data, model, acc, lam, lab, work, pos, npos)
    return gain


@njit(**_JIT)
def _touch(touched, nl, q):
    """Label q into the list ``touched[:nl]`` unless it is there (a net move that adds up to 0 must not list it
    twice); returns the list's length."""
    for x in range(nl):
        if touched[x] == q:
            return nl
    touched[nl] = q
    return nl + 1


@njit(**_JIT)
def _move_net(i, c, dal, data, model, acc, lam, lab, work, pos, npos):
    """v += Σ_m dal[m]·Δfᵢ(y_m), the visit's net move, and w = soft(v, λ) where v's label-pair and trigram blocks
    moved (w is v for λ = 0; the state block is thresholded where it is read, :func:`_token_scores`). At
    each position of ``pos[:npos]`` the moves of the slots that differ from gold there are added up per label
    first, so each state row of the token is moved once per label touched (not once per slot); the label pairs and
    trigrams slot by slot. Returns the rows moved."""
    Xp, Xi, Xd, offsets, gold = data[0], data[1], data[2], data[3], data[4]
    Tr, Tri = model[1], model[2]
    V, TrV, TriV = acc
    enet = lam > 0.0
    dpos, dcnt = work[17], work[18]
    net, touched = work[22], work[23]
    lo = offsets[i]
    L = offsets[i + 1] - lo
    rows = 0
    for z in range(npos):
        r = lo + pos[z]
        g = gold[r]
        nl = 0
        for m in range(1, c):
            d = dal[m]
            k = lab[m, r]
            if d == 0.0 or k == g:
                continue
            nl = _touch(touched, nl, g)
            nl = _touch(touched, nl, k)
            net[g] += d
            net[k] -= d
        if nl == 0:
            continue
        for p in range(Xp[r], Xp[r + 1]):
            j, x = Xi[p], Xd[p]
            for q in range(nl):
                k = touched[q]
                V[j, k] += x * net[k]
        for q in range(nl):
            net[touched[q]] = 0.0
        rows += Xp[r + 1] - Xp[r]
    order2 = Tri.shape[0] > 0
    js, es = work[24], work[25]
    for m in range(1, c):
        d = dal[m]
        if d == 0.0:
            continue
        y = lab[m]
        nj, ne = _touching(dpos[m], dcnt[m], L, order2, js, es)
        for x in range(nj):
            r = lo + js[x]
            g0, g1, y0, y1 = gold[r], gold[r + 1], y[r], y[r + 1]
            TrV[g0, g1] += d
            TrV[y0, y1] -= d
            if enet:
                Tr[g0, g1] = soft(TrV[g0, g1], lam)
                Tr[y0, y1] = soft(TrV[y0, y1], lam)
        for x in range(ne):
            r = lo + es[x] - 2
            g0, g1, g2, y0, y1, y2 = gold[r], gold[r + 1], gold[r + 2], y[r], y[r + 1], y[r + 2]
            TriV[g0, g1, g2] += d
            TriV[y0, y1, y2] -= d
            if enet:
                Tri[g0, g1, g2] = soft(TriV[g0, g1, g2], lam)
                Tri[y0, y1, y2] = soft(TriV[y0, y1, y2], lam)
    return rows


@njit(**_JIT)
def _rows_at(Xp, lo, pos, npos):
    """The non-zeros of the token rows at the positions ``pos[:npos]`` of the example starting at row ``lo``."""
    r = 0
    for x in range(npos):
        t = lo + pos[x]
        r += Xp[t + 1] - Xp[t]
    return r


@njit(**_JIT)
def _viterbi_cells(model, work):
    """The cells the loss-augmented Viterbi fills per token: K² label pairs (first order), the allowed trigrams
    or K³ (second order)."""
    W, Tri = model[0], model[2]
    K = W.shape[1]
    if Tri.shape[0] == 0:
        return K * K
    succ_ptr, pred_ptr = work[10], work[12]
    if succ_ptr.shape[0] == 0:
        return K * K * K
    n = 0
    for b in range(K):
        n += (pred_ptr[b + 1] - pred_ptr[b]) * (succ_ptr[b + 1] - succ_ptr[b])
    return n


@njit(**_JIT)
def _pair_diff(la, ls, lo, da, na, ds, ns, diff):
    """The positions where labelings a and s differ, ascending, into ``diff``; returns their count. Only the
    positions where a or s differs from gold (``da[:na]``, ``ds[:ns]``, ascending) can differ, so the two lists are
    merged instead of scanning the example."""
    nd = 0
    x = 0
    z = 0
    while x < na or z < ns:
        if z >= ns or (x < na and da[x] < ds[z]):
            t = da[x]
            x += 1
        elif x >= na or ds[z] < da[x]:
            t = ds[z]
            z += 1
        else:
            t = da[x]
            x += 1
            z += 1
        if la[lo + t] != ls[lo + t]:
            diff[nd] = t
            nd += 1
    return nd


@njit(**_JIT)
def _pair_step(i, a, s, step, data, model, acc, lam, cache, work, pos, npos, diff, nd):
    """Move mass ``step`` from cached labeling a to s, which differ at the positions ``diff[:nd]`` (ascending): α,
    v (+= step·(f(x, a) − f(x, s)): the state rows of those positions only), w = soft(v, λ) where v's label-pair and
    trigram blocks moved, and the example's token scores ``work[0]`` at the positions ``pos[:npos]`` (λ = 0: through
    its Gram matrix, w = v moving linearly; λ > 0: rescored from soft(v, λ), which moves non-linearly)."""
    node = work[0]
    Xp, Xi, Xd, offsets, Gp, Gv = data[0], data[1], data[2], data[3], data[5], data[6]
    Tr, Tri = model[1], model[2]
    V, TrV, TriV = acc
    enet = lam > 0.0
    lab, alpha = cache[0], cache[1]
    if step <= 0.0:
        return
    if step >= alpha[i, a]:
        step = alpha[i, a]
        alpha[i, a] = 0.0
    else:
        alpha[i, a] -= step
    alpha[i, s] += step
    la, ls = lab[a], lab[s]
    lo, hi = offsets[i], offsets[i + 1]
    L = hi - lo
    gbase = Gp[i]
    for x in range(nd):
        t = diff[x]
        r = lo + t
        at, st = la[r], ls[r]
        for p in range(Xp[r], Xp[r + 1]):
            v = step * Xd[p]
            j = Xi[p]
            V[j, at] += v
            V[j, st] -= v
        if enet:
            continue
        row = gbase + t * L           # G is symmetric: row t, contiguous
        for z in range(npos):
            u = pos[z]
            gv = step * Gv[row + u]
            node[u, at] += gv
            node[u, st] -= gv
    if enet:
        _token_scores(Xp, Xi, Xd, V, lam, lo, pos, npos, node)
    # every pair and trigram, the cancelling ones too: (x + step) − step need not be x in floating point, and the
    # path (hence the working set a master back end is handed) stays the one of the full loop
    order2 = Tri.shape[0] > 0
    for t in range(L - 1):
        r = lo + t
        TrV[la[r], la[r + 1]] += step
        TrV[ls[r], ls[r + 1]] -= step
        if enet:
            Tr[la[r], la[r + 1]] = soft(TrV[la[r], la[r + 1]], lam)
            Tr[ls[r], ls[r + 1]] = soft(TrV[ls[r], ls[r + 1]], lam)
        if order2 and t + 2 < L:
            TriV[la[r], la[r + 1], la[r + 2]] += step
            TriV[ls[r], ls[r + 1], ls[r + 2]] -= step
            if enet:
                Tri[la[r], la[r + 1], la[r + 2]] = soft(TriV[la[r], la[r + 1], la[r + 2]], lam)
                Tri[ls[r], ls[r + 1], ls[r + 2]] = soft(TriV[ls[r], ls[r + 1], ls[r + 2]], lam)


@njit(**_JIT)
def _compact(i, lo, L, cache, gsc):
    """Drop the cached labelings of example i whose α is 0 (never the gold slot 0); returns the new count."""
    lab, alpha, loss, cnt, gram = cache
    c = cnt[i]
    m = 1
    while m < c:
        if alpha[i, m] == 0.0:
            c -= 1
            if m != c:
                for t in range(L):
                    lab[m, lo + t] = lab[c, lo + t]
                alpha[i, m] = alpha[i, c]
                loss[i, m] = loss[i, c]
                gsc[m] = gsc[c]
                for k in range(c + 1):          # slot c's Gram row and column become slot m's
                    gram[i, m, k] = gram[i, c, k]
                for k in range(c + 1):
                    gram[i, k, m] = gram[i, k, c]
                gram[i, m, m] = gram[i, c, c]
            alpha[i, c] = 0.0
        else:
            m += 1
    cnt[i] = c
    return c
