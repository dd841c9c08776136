"""Dependency-tree decoding: maximum spanning arborescence (Chu-Liu-Edmonds) and best projective tree (Eisner).

A sentence of n tokens has nodes 0..n (0 the artificial root) and an arc score matrix ``scores[h, m]`` (head h,
modifier m). A dependency tree gives every token m >= 1 one head ``heads[m]`` in 0..n so that all tokens reach the
root; its score is Σ_{m>=1} scores[heads[m], m]. ``heads[0] = -1`` by convention. The root may take several children
(the MST-parser setting of McDonald et al., used by the multiple-template learning paper of Mao & Tsang for its
dependency-parsing experiments). Column 0 (arcs into the root) and the diagonal (self-loops) are never used.

For the M³N cutting-plane oracle, :func:`loss_augment_arcs` adds the Hamming loss over heads (number of tokens whose
head differs from the gold one), which is arc-factored, so that loss-augmented decoding is
``chu_liu_edmonds(loss_augment_arcs(scores, gold_heads))``.
"""
from __future__ import annotations

import numpy as np

from mmprog.exceptions import DataError, ParameterError

__all__ = ["chu_liu_edmonds", "chu_liu_edmonds_batch", "eisner", "eisner_batch", "eisner2", "loss_augment_arcs",
           "tree_score", "sibling_tree_score"]


def _check_scores(scores, name="scores"):
    """Validate an (n+1, n+1) arc score matrix; return a float64 copy with unusable arcs set to -inf."""
    S = np.asarray(scores)
    if S.ndim != 2 or S.shape[0] != S.shape[1] or S.shape[0] < 1:
        raise DataError(f"{name} must be a square (n+1, n+1) array with index 0 the root; got shape {S.shape}")
    if not np.issubdtype(S.dtype, np.number):
        raise DataError(f"{name} must be numeric; got dtype {S.dtype}")
    S = S.astype(np.float64, copy=True)
    S[:, 0] = -np.inf
    np.fill_diagonal(S, -np.inf)
    bad = np.isnan(S) | (S == np.inf)
    if bad.any():
        h, m = np.argwhere(bad)[0]
        raise DataError(f"{name}[{h}, {m}] = {S[h, m]}; arc scores must be finite or -inf (a forbidden arc)")
    return S


def tree_score(scores, heads):
    """Score Σ_{m>=1} scores[heads[m], m] of a head assignment (float64).

    Parameters
    ----------
    scores : array_like, shape (n+1, n+1)
    heads : array_like of int, shape (n+1,)
        ``heads[0]`` is ignored.
    """
    S = np.asarray(scores, dtype=np.float64)
    h = np.asarray(heads)
    m = np.arange(1, S.shape[0])
    return float(S[h[1:], m].sum())


# ----------------------------------------------------------------------------------------------------------------
# Chu-Liu-Edmonds
# ----------------------------------------------------------------------------------------------------------------

def _argmax_axis1(X):
    """First index of the maximum along axis 1 of a 3-d array, (B, J, K) -> (B, K) intp.

    numpy's ``argmax`` over a non-last axis is very slow (it transposes to a copy and loops per output element);
    the max over axis 1 is a fast pairwise reduction, and so is a max over the codes J - j of the positions equal to
    it. All -inf (or NaN) slices give 0.
    """
    J = X.shape[1]
    m = X.max(axis=1, keepdims=True)
    code = np.multiply(X == m, np.arange(J, 0, -1, dtype=np.int32)[None, :, None]).max(axis=1)
    return np.where(code > 0, J - code, 0)


def _cle_batch(M):
    """Maximum spanning arborescences rooted at 0 of a batch of prepared score matrices M (Bn, N, N); M is consumed.

    Chu & Liu (1965) / Edmonds (1967) with incremental contraction (the dense O(n²)-per-sentence organisation of
    Tarjan 1977), run on all sentences at once. Every node keeps its best incoming arc (``heads``). While a sentence
    has a cycle C among these arcs, C is contracted into its smallest member r: an arc h → r scores
    max_{m∈C} S[h, m] − S[head(m), m] (the gain of breaking the cycle at m) and an arc r → m scores
    max_{c∈C} S[c, m]; the other members become inactive (rows and columns -inf). Only r needs a new best incoming
    arc — every other node keeps its best arc, redirected to r if it came from C — and only cycles through r can
    appear, but the next step simply looks again for any cycle. Each step contracts one cycle in every sentence that
    still has one, as a fixed number of numpy calls over those sentences (cycles are found by pointer doubling,
    ⌈log₂ N⌉ + 1 gathers); finished sentences leave the active set. The contractions are then undone in reverse.

    Returns heads (Bn, N) with heads[:, 0] = 0.
    """
    Bn, N, _ = M.shape
    nodes = np.arange(N)
    heads = _argmax_axis1(M)  # best head of every node (an all -inf column gives the root)
    heads[:, 0] = 0
    doublings = int(np.ceil(np.log2(max(N, 2)))) + 1
    steps = []
    act = np.arange(Bn)  # sentences that may still have a cycle
    while act.size:
        H = heads[act]
        rows = np.arange(act.size)[:, None]
        P, low = H, np.tile(nodes, (act.size, 1))
        for _ in range(doublings):  # then P[v] lies on the cycle v runs into, low[v] = smallest node of it
            low = np.minimum(low, low[rows, P])
            P = P[rows, P]
        on = np.zeros(H.shape, dtype=bool)
        on[rows, P] = True  # the nodes reached after >= N steps: exactly the cycle nodes (and the root)
        on[:, 0] = False
        has = on.any(axis=1)
        if not has.all():
            act, H, on, low = act[has], H[has], on[has], low[has]
            if act.size == 0:
                break
            rows = np.arange(act.size)[:, None]
        a = rows[:, 0]
        r = np.where(on, low, N).min(axis=1)  # contract the cycle holding the smallest cycle node
        mem = on & (low == r[:, None])
        # members of each contracted cycle as a padded index list (A, width); padding repeats r, harmless below
        width = int(mem.sum(axis=1).max())
        cyc = np.argsort(~mem, axis=1, kind="stable")[:, :width]
        cyc = np.where(mem[rows, cyc], cyc, r[:, None])
        sa = act[:, None]
        # Entering member m replaces its cycle arc; cycle arcs are finite (an all -inf column picks the root)
        into = M[sa, :, cyc] - M[sa, H[rows, cyc], cyc][:, :, None]  # (A, width, h): arcs into the cycle
        k = _argmax_axis1(into)
        enter = cyc[rows, k]  # enter[h]: the member an arc from h enters
        into = into[rows, k, nodes]
        out = M[sa, cyc]  # (A, width, m): arcs leaving the cycle
        k = _argmax_axis1(out)
        source = cyc[rows, k]  # source[m]: the member the best arc to m leaves from
        out = out[rows, k, nodes]
        M[sa, cyc] = -np.inf
        M[sa, :, cyc] = -np.inf
        M[act, :, r] = np.where(mem, -np.inf, into)
        M[act, r, :] = np.where(mem, -np.inf, out)
        steps.append((act, r, mem, H, enter, source))
        H = np.where(mem[rows, H], r[:, None], H)  # best arcs leaving the cycle now leave r
        H[mem] = 0  # inactive members point at the root so that they never look like a cycle
        H[a, r] = M[act, :, r].argmax(axis=1)  # (A, N) gathered column: last-axis argmax
        heads[act] = H
    for act, r, mem, H, enter, source in reversed(steps):  # undo the contractions, last first
        rows = np.arange(act.size)
        cur = heads[act]
        h = cur[rows, r]  # the head chosen for the contracted cycle
        cur = np.where((cur == r[:, None]) & ~mem, source, cur)  # arcs out of the cycle leave their best member
        cur = np.where(mem, H, cur)  # members keep their cycle arcs ...
        cur[rows, enter[rows, h]] = h  # ... except the one entered from outside
        heads[act] = cur
    return heads


def _cle_single(M):
    """:func:`_cle_batch` for one prepared matrix M (N, N) (consumed), with the cycle search as Python walks.

    Same incremental contraction; for a single sentence the per-call overhead of numpy dominates, so cycles are
    found by walking the head pointers in Python (only the walk from the contracted node can close a new cycle)
    and each contraction is a dozen numpy calls on the (N, |C|) rows and columns of the cycle.
    """
    N = M.shape[0]
    nodes = np.arange(N)
    heads = _argmax_axis1(M[None])[0]
    heads[0] = 0
    pending = _all_cycles(heads.tolist())
    steps = []
    while pending:
        C = np.array(pending.pop(), dtype=np.intp)
        r = int(C.min())
        in_c = np.zeros(N, dtype=bool)
        in_c[C] = True
        into = M[:, C] - M[heads[C], C]  # (N, |C|); cycle arcs are finite (an all -inf column picks the root)
        k = into.argmax(axis=1)
        enter = C[k]
        into = into[nodes, k]
        out = M[C]  # (|C|, N)
        k = _argmax_axis1(out[None])[0]
        source = C[k]
        out = out[k, nodes]
        M[C] = -np.inf
        M[:, C] = -np.inf
        into[in_c] = -np.inf
        out[in_c] = -np.inf
        M[:, r] = into
        M[r] = out
        steps.append((r, C, in_c, heads[C], enter, source))
        heads = np.where(in_c[heads], r, heads)
        heads[C] = 0
        heads[r] = M[:, r].argmax()
        # a new cycle can only run through r
        h = heads.tolist()
        path, seen, v = [r], {r}, h[r]
        while v != 0 and v not in seen:
            path.append(v)
            seen.add(v)
            v = h[v]
        if v == r:
            pending.append(path)
    for r, C, in_c, cycle_heads, enter, source in reversed(steps):
        h = int(heads[r])
        heads = np.where((heads == r) & ~in_c, source, heads)
        heads[C] = cycle_heads
        heads[enter[h]] = h
    return heads


def _all_cycles(h):
    """Every cycle of a head-pointer list h (h[0] = 0 is the root) as lists of nodes; one O(N) walk."""
    state = [0] * len(h)  # 0 unvisited, 1 on the current walk, 2 done
    cycles = []
    for start in range(1, len(h)):
        if state[start]:
            continue
        path, v = [], start
        while v != 0 and state[v] == 0:
            state[v] = 1
            path.append(v)
            v = h[v]
        if v != 0 and state[v] == 1:
            cycles.append(path[path.index(v):])
        for u in path:
            state[u] = 2
    return cycles


def chu_liu_edmonds(scores):
    """Maximum spanning arborescence rooted at node 0 (the non-projective MST parser).

    Parameters
    ----------
    scores : array_like, shape (n+1, n+1)
        ``scores[h, m]`` scores the arc head h → modifier m; index 0 is the root. Column 0 and the diagonal are
        ignored; ``-inf`` forbids an arc (NaN and +inf are errors).

    Returns
    -------
    heads : ndarray of int64, shape (n+1,)
        ``heads[m]`` is the head of token m, ``heads[0] = -1``. The root may have several children. If no tree of
        finite score exists, the returned tree scores ``-inf``.
    """
    S = _check_scores(scores)
    heads = _cle_single(S).astype(np.int64)
    heads[0] = -1
    return heads


def _length_chunks(sizes, budget):
    """Indices of sentences grouped by size (sorted, so padding is small) into chunks with count · N_max² <= budget
    (at least one sentence per chunk): bounds the memory of the padded (chunk, N, N) tables."""
    order = np.argsort(sizes, kind="stable")
    chunk = []
    for i in order:
        if chunk and (len(chunk) + 1) * sizes[i] ** 2 > budget:
            yield chunk
            chunk = []
        chunk.append(int(i))
    if chunk:
        yield chunk


# elements of one padded (chunk, N, N) table: 8 MB of float64 (Eisner keeps 12 such tables, CLE 1)
_CHUNK_ELEMENTS = 1 << 20


def chu_liu_edmonds_batch(list_of_scores):
    """:func:`chu_liu_edmonds` for a list of sentences of any lengths, contracted together in padded batches.

    Sentences are sorted by length and cut into chunks of bounded memory; inside a chunk, padding nodes hang from the
    root by a 0-score arc and have no other arcs, so they never enter a cycle and never change a sentence's tree.
    Much faster than calling :func:`chu_liu_edmonds` per sentence (numpy call overhead is shared by the chunk).

    Returns
    -------
    list of ndarray of int64
        heads (n_i+1,) per sentence, in input order.
    """
    mats = [_check_scores(s) for s in list_of_scores]
    out = [None] * len(mats)
    sizes = np.array([S.shape[0] for S in mats], dtype=np.int64)
    for chunk in _length_chunks(sizes, _CHUNK_ELEMENTS):
        N = int(sizes[chunk].max())
        M = np.full((len(chunk), N, N), -np.inf)
        for k, i in enumerate(chunk):
            n1 = sizes[i]
            M[k, :n1, :n1] = mats[i]
            M[k, 0, n1:] = 0.0
        heads = _cle_batch(M).astype(np.int64)
        heads[:, 0] = -1
        for k, i in enumerate(chunk):
            out[i] = heads[k, :sizes[i]].copy()
    return out


# ----------------------------------------------------------------------------------------------------------------
# Eisner
# ----------------------------------------------------------------------------------------------------------------

def eisner(scores):
    """Best projective dependency tree (Eisner's O(n³) dynamic program, compiled).

    Parameters
    ----------
    scores : array_like, shape (n+1, n+1)
        As for :func:`chu_liu_edmonds`.

    Returns
    -------
    heads : ndarray of int64, shape (n+1,)
        The best projective tree (no crossing arcs when drawn above the sentence with the root at position 0),
        ``heads[0] = -1``; the root may have several children.
    """
    return eisner_batch([scores])[0]


def eisner_batch(list_of_scores):
    """:func:`eisner` for a list of sentences (the compiled kernel :func:`mmprog.inference._eisner1.eisner_one`,
    one call per sentence).

    Returns
    -------
    list of ndarray of int64
        heads (n_i+1,) per sentence, in input order.
    """
    from ._eisner1 import eisner_one
    out = []
    for scores in list_of_scores:
        S = _check_scores(scores)
        heads = np.empty(S.shape[0], dtype=np.int64)
        eisner_one(S, heads)
        out.append(heads)
    return out


# ----------------------------------------------------------------------------------------------------------------
# second order: adjacent siblings (projective only)
# ----------------------------------------------------------------------------------------------------------------

def _sibling_parts(scores, sibling):
    """T[h, s, m] = scores[h, m] + sibling[h, s, m] with unusable parts -inf (validated float64)."""
    S = _check_scores(scores)
    n1 = S.shape[0]
    B = np.asarray(sibling)
    if B.shape != (n1, n1, n1) or not np.issubdtype(B.dtype, np.number):
        raise DataError(f"sibling must be a numeric (n+1, n+1, n+1) = ({n1}, {n1}, {n1}) array of scores "
                        f"sibling[h, s, m] (s = h: m is h's nearest child on its side); got shape {B.shape}, "
                        f"dtype {B.dtype}")
    if np.isnan(B).any() or (B == np.inf).any():
        h, s, m = np.argwhere(np.isnan(B) | (B == np.inf))[0]
        raise DataError(f"sibling[{h}, {s}, {m}] = {B[h, s, m]}; sibling scores must be finite or -inf")
    return np.ascontiguousarray(S[:, None, :] + B)


def sibling_tree_score(scores, sibling, heads):
    """Second-order score of a head assignment: Σ_m scores[h_m, m] + sibling[h_m, s_m, m], s_m the adjacent
    sibling of m between h_m and m (h_m itself when there is none) — see :func:`eisner2`."""
    heads = np.asarray(heads)
    n1 = heads.shape[0]
    total = 0.0
    for m in range(1, n1):
        h = int(heads[m])
        between = [c for c in range(min(h, m) + 1, max(h, m)) if heads[c] == h]
        s = (max(between) if m > h else min(between)) if between else h
        total += float(scores[h, m]) + float(sibling[h, s, m])
    return total


def eisner2(scores, sibling):
    """Best projective tree under first-order arc scores plus adjacent-sibling scores (McDonald & Pereira 2006).

    Exact for projective trees only: non-projective second-order decoding is NP-hard (McDonald & Pereira), and
    mmprog offers no approximation of it; a treebank's non-projective trees are out of this decoder's reach.

    Parameters
    ----------
    scores : array_like, shape (n+1, n+1)
        Arc scores as for :func:`eisner` (loss-augment them with :func:`loss_augment_arcs` for the M³N oracle:
        the head Hamming loss is arc-factored).
    sibling : array_like, shape (n+1, n+1, n+1)
        ``sibling[h, s, m]``: score of m taking s as its adjacent sibling under head h — s the child of h on m's
        side, between h and m, nearest to m; ``s = h`` when m is h's nearest child on that side. Entries whose
        s is not between h and m are never read.

    Returns
    -------
    heads : ndarray of int64, shape (n+1,)
        The best projective tree, ``heads[0] = -1``; the root may have several children. Its score is
        :func:`sibling_tree_score`.
    """
    from ._eisner2 import eisner2_one
    T = _sibling_parts(scores, sibling)
    heads = np.full(T.shape[0], -1, dtype=np.int64)
    if T.shape[0] > 1:
        eisner2_one(T, heads)
    heads[0] = -1
    return heads


# ----------------------------------------------------------------------------------------------------------------
# loss augmentation
# ----------------------------------------------------------------------------------------------------------------

def loss_augment_arcs(scores, gold_heads, weight=1.0):
    """Add the weighted head Hamming loss to arc scores: weight to every arc (h, m), m >= 1, with h ≠ gold_heads[m].

    Parameters
    ----------
    scores : array_like, shape (n+1, n+1)
    gold_heads : array_like of int, shape (n+1,)
        Gold heads, ``gold_heads[0] = -1`` and ``gold_heads[m]`` in [0, n] for m >= 1.
    weight : float

    Returns
    -------
    ndarray of float64, shape (n+1, n+1)
        A new array; column 0 is unchanged. The tree score of the result is s(y) + weight·Σ_m 1[y_m ≠ gold_m].
    """
    S = np.asarray(scores)
    if S.ndim != 2 or S.shape[0] != S.shape[1] or S.shape[0] < 1:
        raise DataError(f"scores must be a square (n+1, n+1) array with index 0 the root; got shape {S.shape}")
    n1 = S.shape[0]
    g = np.asarray(gold_heads)
    if g.shape != (n1,) or not np.issubdtype(g.dtype, np.integer):
        raise DataError(f"gold_heads must be an integer array of shape (n+1,) = ({n1},); got shape {g.shape}, "
                        f"dtype {g.dtype}")
    if n1 > 1 and (g[1:].min() < 0 or g[1:].max() >= n1):
        m = int(np.flatnonzero((g[1:] < 0) | (g[1:] >= n1))[0]) + 1
        raise DataError(f"gold_heads[{m}] = {int(g[m])} is outside [0, n = {n1 - 1}]")
    w = float(weight)
    if not np.isfinite(w):
        raise ParameterError(f"weight must be a finite float; got {weight!r}")
    wrong = np.arange(n1)[:, None] != g[None, :]
    wrong[:, 0] = False
    return S.astype(np.float64) + w * wrong
