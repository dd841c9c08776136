"""Compiled (numba) kernels of the chain map for binary token features (0/1 template indicators): the token scores
X·W and the state block of the 1-slack cut, Xᵀ(E_gold − E_ŷ), both read from X's indices alone.

Scores (:func:`binary_row_scores`): with every stored value 1, a token's score for label k is the sum of W[j, k]
over its features j, added in stored order from 0.0 — the floats of scipy's ``X @ W`` (which adds 1.0 · W[j, k]
in the same order), without reading X's values. So X's value array is not needed by the fit, and the bench keeps
it as float32 (scipy's product would have made a float64 copy of it every round).

State block (:func:`binary_state_cut`): with scipy the block is a product over the wrong tokens' gathered rows,
summed over pieces (:meth:`~mmprog.features.chain.ChainFeatureMap._state_sum`): the running sum, the next piece's
product and their sum are three CSR matrices of (d, K) at once, 12 bytes an entry each with an index pointer as
long as d, and the cut made from them is a fourth array. On full CoNLL-2002 NER that separation step is where the
process reached its peak resident memory, round after round. Here the gathered entries are bucketed by feature (a
counting sort: one pointer per feature, one 2-byte label code per entry) and each feature's K counts are summed in
a small vector and written straight into the cut's arrays, in ascending order of the flat index j·K + k: the cut's
CSR row as it is, merged and sorted. What is held beyond the cut: 8·(d + 1) bytes of pointers and 2 bytes an entry
read. It is also several times faster than the scipy products (no gathering, transposing or sorting).

Exactness: with 0/1 features every entry of the block is an integer count of tokens (the number with gold label k
minus the number decoded as k among the wrong tokens having feature j), the same integers as scipy's sum in any
order; explicit zeros are left out as before.
"""
from __future__ import annotations

import os

import numpy as np
from numba import njit

_JIT = dict(cache=True, nogil=True, fastmath=False)


#: ranges below which a kernel runs on the calling thread alone (a thread's start costs ~50 µs, a row ~0.1–1 µs)
THREAD_MIN_ROWS = 20_000

#: threads :func:`in_threads` may use (None: the cores); the oracle's pool workers set 1, the pool being the
#: parallelism
MAX_THREADS = None


def in_threads(fn, n, n_threads=None):
    """``fn(lo, hi)`` on contiguous ranges covering [0, n) — of rows, or of features for :func:`xt_rows` — one range
    per thread, and wait for them.

    For the compiled kernels here that write disjoint parts of their output for disjoint ranges and release the GIL
    (``nogil``): each output entry is computed by one thread in the same order as on one thread, so the floats do
    not depend on the thread count. Threads are used only from the main thread (an oracle's worker threads already
    are the parallelism) and for ranges of at least :data:`THREAD_MIN_ROWS`; the pool lives for the call, so a
    forked child never inherits one.

    Parameters
    ----------
    fn : callable (lo, hi) -> None
    n : int
    n_threads : int, optional
        Default: :data:`MAX_THREADS`, else the cores this process may run on.
    """
    import threading
    n_threads = n_threads or MAX_THREADS
    if not n_threads:
        n_threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if n_threads < 2 or n < THREAD_MIN_ROWS or threading.current_thread() is not threading.main_thread():
        fn(0, n)
        return
    from concurrent.futures import ThreadPoolExecutor
    cuts = np.linspace(0, n, n_threads + 1).astype(np.int64)
    with ThreadPoolExecutor(n_threads, thread_name_prefix="mmprog-rows") as pool:
        for f in [pool.submit(fn, int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]:
            f.result()


@njit(**_JIT)
def binary_row_scores(indptr, indices, W, out, lo=0, hi=-1):
    """out[t] += Σ_j W[j] over the features j of token t (every stored value of X is 1), entries in stored order.

    Parameters
    ----------
    indptr, indices : the CSR arrays of X, shape (N, d)
    W : ndarray of float64, shape (d, K)
    out : ndarray of float64, shape (N, K)
        Zeros in (then the floats of scipy's ``X @ W``).
    lo, hi : int
        The rows [lo, hi) only (hi = -1: to the last; :func:`in_threads` hands ranges to threads).
    """
    K = W.shape[1]
    for t in range(lo, indptr.shape[0] - 1 if hi < 0 else hi):
        for p in range(indptr[t], indptr[t + 1]):
            j = indices[p]
            for k in range(K):
                out[t, k] += W[j, k]


@njit(**_JIT)
def nonzero_row_scores(indptr, indices, data, W, rows, out, lo=0, hi=-1):
    """out[i] += Σ_j X[rows[i], j] · W[j] over the stored non-zeros of a dense X's rows (``X_nonzeros`` of
    :meth:`mmprog.features.chain.ChainFeatureMap._dense_nonzeros`), in ascending j from 0.0.

    Why: the token scores of small, mostly-zero dense inputs (OCR's 4,617 × 128 pixels, 22 % non-zero) skip the
    zeros BLAS multiplies: 0.78–0.81 against 1.06–1.26 ms of CPU for one-thread BLAS (what the serial oracle runs,
    :func:`mmprog.engine.oracle.blas_single`) and 2.4–3.6 ms for threaded BLAS, whose idle thread spins on the other
    core (measured on a busy 2-core machine). With 0/1 values each term is W[j, k]
    exactly, and the floats are BLAS's own sum in the same order (the OCR fit's bounds and rounds are
    bit-identical).

    Parameters
    ----------
    indptr, indices, data : the CSR arrays of X's non-zeros, shape (N, d)
    W : ndarray of float64, shape (d, K)
    rows : ndarray of int, shape (m,)
        The token rows of X to score.
    out : ndarray of float64, shape (m, K)
        Zeros in.
    lo, hi : int
        The entries [lo, hi) of ``rows`` only (hi = -1: to the last; :func:`in_threads` hands ranges to threads).
    """
    K = W.shape[1]
    for i in range(lo, rows.shape[0] if hi < 0 else hi):
        t = rows[i]
        for p in range(indptr[t], indptr[t + 1]):
            j = indices[p]
            x = data[p]
            for k in range(K):
                out[i, k] += x * W[j, k]


@njit(**_JIT)
def _bucket(indptr, indices, tok, g, y, K, ptr, codes):
    """Counting sort of the entries of the rows ``tok`` of a binary CSR X by column.

    On return bucket j (the label codes g·K + y of the tokens of ``tok`` having feature j) is
    ``codes[ptr[j + 1]: ptr[j + 2]]`` (the last one ends at the entry count): the pointers are filled by
    decrementing the bucket ends, which leaves each begin one place to the right.

    Parameters
    ----------
    indptr, indices : the CSR arrays of X, shape (N, d)
    tok, g, y : ndarray of int, shape (m,)
        Token rows, gold and decoded labels.
    K : int
    ptr : ndarray of int64, shape (d + 1,)
        Zeros in.
    codes : ndarray of int16 or int32, shape (entries of the rows tok,)
    """
    d = ptr.shape[0] - 1
    for i in range(tok.shape[0]):
        t = tok[i]
        for p in range(indptr[t], indptr[t + 1]):
            ptr[indices[p] + 1] += 1
    for j in range(d):
        ptr[j + 1] += ptr[j]
    for i in range(tok.shape[0]):
        t = tok[i]
        c = g[i] * K + y[i]
        for p in range(indptr[t], indptr[t + 1]):
            j = indices[p] + 1
            ptr[j] -= 1
            codes[ptr[j]] = c


@njit(**_JIT)
def _sweep_entries(ptr, codes, K, flat, vals, write):
    """The block's non-zeros, feature by feature (each feature's K counts summed in turn): their number and largest
    magnitude, and with ``write`` their flat indices j·K + k (ascending) and counts into ``flat`` and ``vals``. Called
    twice, first to size the arrays, then to fill them (the same sweep, so the two passes cannot disagree)."""
    d = ptr.shape[0] - 1
    end = codes.shape[0]
    acc = np.zeros(K, dtype=np.int64)
    total = 0
    largest = 0
    for j in range(d):
        lo = ptr[j + 1]
        hi = ptr[j + 2] if j + 1 < d else end
        if lo == hi:
            continue
        for q in range(lo, hi):
            acc[codes[q] // K] += 1
            acc[codes[q] % K] -= 1
        for k in range(K):
            if acc[k] != 0:
                if write:
                    flat[total] = j * K + k
                    vals[total] = acc[k]
                total += 1
                largest = max(largest, abs(acc[k]))
                acc[k] = 0
    return total, largest


def binary_state_cut(X, tok, g, y, K, trans, dim, counts):
    """Σᵢ Δfᵢ of the first-order chain map without edge features, for binary token features: the state block
    Xᵀ(E_g − E_y) over the tokens ``tok`` followed by the transition block, as one CSR row.

    Parameters
    ----------
    X : scipy.sparse.csr_matrix, shape (N, d)
        Stacked token rows, every stored value 1.
    tok, g, y : ndarray of int, shape (m,)
        Token rows whose decoded label y differs from the observed gold label g.
    K : int
    trans : ndarray, shape (K, K)
        The transition block (integer-valued).
    dim : int
        d·K + K² (the row's width).
    counts : bool
        Integer values (the counts) when the transitions are integers too: int16 when every count fits (the cuts
        of later rounds, with fewer wrong tokens: 2 bytes an entry less), else int32; otherwise float64.

    Returns
    -------
    flat : ndarray of int32 (int64 when dim needs it), shape (nnz,)
        Ascending indices, no zeros.
    vals : ndarray of int16, int32 or float64, shape (nnz,)
    """
    d = X.shape[1]
    tok = np.ascontiguousarray(tok, dtype=np.int64)
    entries = int(np.diff(X.indptr)[tok].sum()) if len(tok) else 0
    # a count is at most the number of tokens; the flat index at most dim
    assert len(tok) < np.iinfo(np.int32).max, "more wrong tokens than int32 counts hold"
    ptr = np.zeros(d + 1, dtype=np.int64)
    codes = np.empty(entries, dtype=np.int16 if K * K <= np.iinfo(np.int16).max else np.int32)
    _bucket(X.indptr, X.indices, tok, np.ascontiguousarray(g, dtype=np.int64),
            np.ascontiguousarray(y, dtype=np.int64), K, ptr, codes)
    s_nnz, largest = _sweep_entries(ptr, codes, K, np.empty(0, np.int64), np.empty(0, np.int64), False)
    t_flat = np.asarray(trans, dtype=np.float64).ravel()
    t_nz = np.flatnonzero(t_flat)
    t_vals = t_flat[t_nz]
    t_counts = bool(np.all(t_vals == np.rint(t_vals))) and len(tok) + 1 < np.iinfo(np.int32).max
    largest = max(largest, int(np.abs(t_vals).max()) if len(t_vals) else 0)
    if counts and t_counts:
        vtype = np.int16 if largest <= np.iinfo(np.int16).max else np.int32
    else:
        vtype = np.float64            # the float row (counts=False, or transitions that are not counts)
    itype = np.int32 if dim < np.iinfo(np.int32).max else np.int64
    flat = np.empty(s_nnz + len(t_nz), dtype=itype)
    vals = np.empty(len(flat), dtype=vtype)
    _sweep_entries(ptr, codes, K, flat, vals, True)
    del ptr, codes
    flat[s_nnz:] = d * K + t_nz
    vals[s_nnz:] = t_vals             # integers of the value type's range when vtype is an integer type
    return flat, vals


# ---------------------------------------------------------------------------------------------------------------
# 1-slack cuts held as labelings (:class:`mmprog.cuts.LabelingCut`). For binary token features the cut's state block
# is Xᵀ(E_g − E_y) over its wrong tokens, so the tokens, their gold and decoded labels and the K × K transition
# counts determine it. Every product the Gram-dual master needs goes through X instead of the block:
#   ΔF_q·w  = Σ_i Σ_{j ∈ x_{t_i}} (w[jK + g_i] − w[jK + y_i]) + trans_q·w_T            (labeling_margin)
#   Σ_q α_q ΔF_q = Xᵀ M ⊕ Σ_q α_q trans_q,  M[t] = Σ_q α_q (e_{g} − e_{y}) over q's tokens   (scatter_labels, xt_rows)
#   ⟨ΔF_p, ΔF_q⟩ = Σ_i (U[t_i, g_i] − U[t_i, y_i]) + trans_p·trans_q,  U = X ΔF_p (tokens × K) (masked_row_scores,
#   with the new row p held dense so that each entry of X reads one cache line of it)
# All with the counts (integers, exact in float64) and the 1/n of each cut applied once at the end.


@njit(**_JIT)
def labeling_margin(indptr, indices, tok, g, y, w, K):
    """Σ_i Σ_{j ∈ row tok_i} (w[j·K + g_i] − w[j·K + y_i]): the state part of ΔF·w times n.

    Parameters
    ----------
    indptr, indices : the CSR arrays of X, shape (N, d), every stored value 1
    tok, g, y : ndarray of int, shape (m,)
        The cut's wrong tokens (rows of X), their gold and decoded labels.
    w : ndarray of float64, shape (≥ d·K,)
    K : int
    """
    s = 0.0
    for i in range(tok.shape[0]):
        t = tok[i]
        a = g[i]
        b = y[i]
        for p in range(indptr[t], indptr[t + 1]):
            base = indices[p] * K
            s += w[base + a] - w[base + b]
    return s


@njit(**_JIT)
def scatter_labels(M, tok, g, y, c, touched):
    """M[tok_i, g_i] += c, M[tok_i, y_i] −= c; marks the tokens in ``touched`` (bool, shape (N,))."""
    for i in range(tok.shape[0]):
        t = tok[i]
        M[t, g[i]] += c
        M[t, y[i]] -= c
        touched[t] = True


@njit(**_JIT)
def xt_rows(indptr, indices, touched, M, out, jlo=0, jhi=-1):
    """out[j·K + k] += Σ_t M[t, k] over the touched tokens t having feature j: Xᵀ M written into the flat w.

    Parameters
    ----------
    touched : ndarray of bool, shape (N,)
    M : ndarray of float64, shape (N, K)
    out : ndarray of float64, shape (≥ d·K,)
    jlo, jhi : int
        Only the features [jlo, jhi) (jhi = -1: all). Threads given disjoint feature ranges each read all of X's
        touched rows but write only their part of ``out`` — the random writes are the cost — and every entry gets
        its terms in token order, as on one thread.
    """
    K = M.shape[1]
    every = jhi < 0
    for t in range(touched.shape[0]):
        if not touched[t]:
            continue
        for p in range(indptr[t], indptr[t + 1]):
            j = indices[p]
            if every or (j >= jlo and j < jhi):
                base = j * K
                for k in range(K):
                    out[base + k] += M[t, k]


@njit(**_JIT)
def labeling_pair_sum(U, tok, g, y):
    """Σ_i U[tok_i, g_i] − U[tok_i, y_i]."""
    s = 0.0
    for i in range(tok.shape[0]):
        s += U[tok[i], g[i]] - U[tok[i], y[i]]
    return s


@njit(**_JIT)
def masked_row_scores(indptr, indices, touched, V, K, out, lo=0, hi=-1):
    """out[t, k] += Σ_{j ∈ row t} V[j·K + k] for the touched tokens t: X times a row held dense (flat, ≥ d·K), one
    cache line of V per entry of X (a sorted sparse row looked up by feature cost three).

    Parameters
    ----------
    touched : ndarray of bool, shape (N,)
    V : ndarray of float64, shape (≥ d·K,)
    out : ndarray of float64, shape (N, K)
    lo, hi : int
        The rows [lo, hi) only (hi = -1: to the last).
    """
    for t in range(lo, touched.shape[0] if hi < 0 else hi):
        if not touched[t]:
            continue
        for p in range(indptr[t], indptr[t + 1]):
            base = indices[p] * K
            for k in range(K):
                out[t, k] += V[base + k]


@njit(**_JIT)
def token_cut_lists(N, toks, preds, golds, starts, tptr, tq, ty, gold):
    """The labeling cuts held, listed per token: for every token t, the cuts l that have it wrong (tq) and their
    decoded label there (ty), in cut order, as CSR over the tokens (tptr); and every listed token's gold label.

    Parameters
    ----------
    N : int
        Tokens (rows of X).
    toks, preds, golds : ndarray of int, shape (E,)
        The wrong tokens, decoded and gold labels of all the cuts, concatenated in cut order.
    starts : ndarray of int64, shape (L + 1,)
        Cut l's entries are [starts[l], starts[l + 1]).
    tptr : ndarray of int64, shape (N + 1,), zeros on entry
    tq : ndarray of int32, shape (E,)
    ty, gold : ndarray of int8 or int16, shapes (E,) and (N,)
    """
    for e in range(toks.shape[0]):
        tptr[toks[e] + 1] += 1
    for t in range(N):
        tptr[t + 1] += tptr[t]
    fill = tptr[:-1].copy()
    for l in range(starts.shape[0] - 1):
        for e in range(starts[l], starts[l + 1]):
            t = toks[e]
            tq[fill[t]] = l
            ty[fill[t]] = preds[e]
            gold[t] = golds[e]
            fill[t] += 1


@njit(**_JIT)
def labeling_group_entries(indptr, indices, feature_group, gold, tptr, tq, ty, V, K, out, lo=0, hi=-1):
    """out[l, j] += Σ over cut l's wrong tokens t and their features f of template j: V[f·K + gold_t] − V[f·K +
    ŷ_{l,t}] — the state part of ⟨row p, n·ΔF_l⟩ within every template j, for all the labeling cuts l at once.

    Token by token: for each decoded label y that some cut has at the token, the token's features are looked up
    in the dense row V once (one cache line each) into a per-template difference vector D[y] (m,), which is then
    added whole to the row of every cut listing the token with that label — a contiguous m-wide addition per
    (cut, wrong token). The first version looked V up per (cut, wrong token, feature) and binned each entry by its
    template (26 s a round on full CoNLL-2002 NER).

    Parameters
    ----------
    indptr, indices : the CSR arrays of X, shape (N, d), every stored value 1
    feature_group : ndarray of int, shape (d,)
        The template of every input feature (all its K joint features share it), ids in [0, m).
    gold : ndarray of int, shape (N,)
    tptr, tq, ty : the lists of :func:`token_cut_lists`
    V : ndarray of float64, shape (≥ d·K,)
        Row p held dense.
    K : int
    out : ndarray of float64, shape (L, m)
    lo, hi : int
        The tokens [lo, hi) only (hi = -1: to the last); threads write separate ``out`` tables.
    """
    m = out.shape[1]
    D = np.zeros((K, m))
    stamp = np.full(K, -1, dtype=np.int64)
    for t in range(lo, tptr.shape[0] - 1 if hi < 0 else hi):
        a = tptr[t]
        b = tptr[t + 1]
        if a == b:
            continue
        g = gold[t]
        for e in range(a, b):
            y = ty[e]
            if stamp[y] != t:
                stamp[y] = t
                for j in range(m):
                    D[y, j] = 0.0
                for p in range(indptr[t], indptr[t + 1]):
                    f = indices[p]
                    base = f * K
                    D[y, feature_group[f]] += V[base + g] - V[base + y]
            row = tq[e]
            for j in range(m):
                out[row, j] += D[y, j]


@njit(**_JIT)
def labeling_scatter(indptr, indices, tok, g, y, K, V, zero):
    """V[j·K + g_i] += 1 and V[j·K + y_i] −= 1 over the wrong tokens' features j: the state part of a labeling
    cut's count row n·ΔF written into a dense row (integers, so the same values in any order); with ``zero`` those
    entries are set back to 0 instead."""
    for i in range(tok.shape[0]):
        t = tok[i]
        a = g[i]
        b = y[i]
        for p in range(indptr[t], indptr[t + 1]):
            base = indices[p] * K
            if zero:
                V[base + a] = 0.0
                V[base + b] = 0.0
            else:
                V[base + a] += 1.0
                V[base + b] -= 1.0


@njit(**_JIT)
def integer_counts(values, out):
    """Write ``values`` into the int32 array ``out`` if every one is an integer of int32's range; returns whether
    they all were (``out`` is then partly written and not to be used).

    Parameters
    ----------
    values : ndarray of float64, shape (m,)
    out : ndarray of int32, shape (m,)
    """
    for k in range(values.shape[0]):
        v = values[k]
        if not (-2147483647.0 <= v <= 2147483647.0) or v != np.floor(v):
            return False
        out[k] = np.int32(v)
    return True
