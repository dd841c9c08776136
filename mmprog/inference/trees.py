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

__all__ = ["chu_liu_edmonds", "chu_liu_edmonds_batch", "eisner", "eisner_batch", "loss_augment_arcs", "tree_score"]


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

def _find_cycle(heads):
    """Nodes of one cycle of the head graph (heads[0] = 0 marks the root), or None when it is a tree.

    Pointer doubling (⌈log₂ N⌉ + 1 numpy gathers) lands every node on the cycle it eventually enters (or on the
    root); only the one cycle returned is walked in Python.
    """
    N = heads.shape[0]
    P = heads
    for _ in range(int(np.ceil(np.log2(max(N, 2)))) + 1):
        P = P[P]
    on = np.flatnonzero(P != 0)
    if on.size == 0:
        return None
    start = int(P[on[0]])
    cycle = [start]
    v = int(heads[start])
    while v != start:
        cycle.append(v)
        v = int(heads[v])
    return np.array(cycle, dtype=np.intp)


def _cle(S):
    """Maximum spanning arborescence rooted at 0 of a prepared score matrix (column 0 and diagonal -inf).

    Contraction (Chu & Liu 1965; Edmonds 1967): take every node's best incoming arc; if they form a cycle C,
    contract C into one node whose incoming arc (h → C) is scored max_{m∈C} S[h, m] − S[head(m), m] (the gain of
    breaking the cycle at m) and whose outgoing arc (C → m) is max_{c∈C} S[c, m]; solve the smaller problem and
    expand. Each level costs O(N²) in numpy; levels are kept on an explicit stack (no recursion limit).
    """
    stack = []
    while True:
        N = S.shape[0]
        heads = S.argmax(axis=0)
        heads[0] = 0
        cycle = _find_cycle(heads)
        if cycle is None:
            break
        in_cycle = np.zeros(N, dtype=bool)
        in_cycle[cycle] = True
        rest = np.flatnonzero(~in_cycle)  # contains 0 (the root is never on a cycle: its column is -inf)
        c = rest.size
        S2 = np.empty((c + 1, c + 1))
        S2[:c, :c] = S[np.ix_(rest, rest)]
        out_sub = S[np.ix_(cycle, rest)]  # (|C|, c): arcs leaving the cycle
        src = out_sub.argmax(axis=0)
        S2[c, :c] = out_sub[src, np.arange(c)]
        # The best incoming arc of a cycle node is finite (an all -inf column picks the root, never a cycle).
        in_sub = S[np.ix_(rest, cycle)] - S[heads[cycle], cycle][None, :]  # (c, |C|): arcs entering the cycle
        dst = in_sub.argmax(axis=1)
        S2[:c, c] = in_sub[np.arange(c), dst]
        S2[c, c] = -np.inf
        stack.append((heads, cycle, rest, src, dst))
        S = S2
    while stack:  # expand the contractions, innermost first
        inner = heads
        heads, cycle, rest, src, dst = stack.pop()
        c = rest.size
        expanded = heads.copy()  # cycle nodes keep their cycle arcs except the one broken below
        h_rest = inner[:c]
        from_cycle = h_rest == c
        expanded[rest] = np.where(from_cycle, cycle[src], rest[np.minimum(h_rest, c - 1)])
        h_in = int(inner[c])  # index (into rest) of the head of the contracted node
        expanded[cycle[dst[h_in]]] = rest[h_in]
        heads = expanded
    return heads


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
    if S.shape[0] == 1:
        return np.array([-1], dtype=np.int64)
    heads = _cle(S).astype(np.int64)
    heads[0] = -1
    return heads


def chu_liu_edmonds_batch(list_of_scores):
    """:func:`chu_liu_edmonds` for every matrix of a list (sentences of different lengths); a list of heads."""
    return [chu_liu_edmonds(s) for s in list_of_scores]


# ----------------------------------------------------------------------------------------------------------------
# Eisner
# ----------------------------------------------------------------------------------------------------------------

def _view(table, offset, shape, strides):
    """A strided view into a C-contiguous table (a diagonal band of spans), without copying."""
    return np.ndarray(shape, dtype=table.dtype, buffer=table, offset=offset * table.itemsize,
                      strides=tuple(s * table.itemsize for s in strides))


def _eisner_tables(S):
    """Fill Eisner's four span tables for a batch of prepared score matrices S (Bn, N, N); return their split points.

    Spans [s, t] with t − s = w are processed together (one strided view per width: the candidates of all spans of
    width w and all split points form one (Bn, N−w, w) block). Tables, for s < t:
      Ir[s, t] incomplete span with arc s → t, Il[s, t] incomplete span with arc t → s,
      Cr[s, t] complete span headed by s, Cl[s, t] complete span headed by t.
    """
    Bn, N, _ = S.shape
    Ir = np.full((Bn, N, N), -np.inf)
    Il = np.full((Bn, N, N), -np.inf)
    Cr = np.full((Bn, N, N), -np.inf)
    Cl = np.full((Bn, N, N), -np.inf)
    bI = np.zeros((Bn, N, N), dtype=np.intp)  # split of Ir/Il (shared: both take the same best split)
    bCr = np.zeros((Bn, N, N), dtype=np.intp)
    bCl = np.zeros((Bn, N, N), dtype=np.intp)
    d = N + 1  # stride from [s, t] to [s+1, t+1]
    Bs = N * N  # stride between sentences
    _view(Cr, 0, (Bn, N), (Bs, d))[...] = 0.0
    _view(Cl, 0, (Bn, N), (Bs, d))[...] = 0.0
    for w in range(1, N):
        m = N - w
        # Ir/Il[s, s+w] = max_{j<w} Cr[s, s+j] + Cl[s+j+1, s+w]  (+ the arc's score)
        cand = _view(Cr, 0, (Bn, m, w), (Bs, d, 1)) + _view(Cl, N + w, (Bn, m, w), (Bs, d, N))
        j = cand.argmax(axis=2)
        best = np.take_along_axis(cand, j[:, :, None], axis=2)[:, :, 0]
        _view(bI, w, (Bn, m), (Bs, d))[...] = j
        _view(Ir, w, (Bn, m), (Bs, d))[...] = best + _view(S, w, (Bn, m), (Bs, d))
        _view(Il, w, (Bn, m), (Bs, d))[...] = best + _view(S, w * N, (Bn, m), (Bs, d))
        # Cr[s, s+w] = max_{1<=j<=w} Ir[s, s+j] + Cr[s+j, s+w]
        cand = _view(Ir, 1, (Bn, m, w), (Bs, d, 1)) + _view(Cr, N + w, (Bn, m, w), (Bs, d, N))
        j = cand.argmax(axis=2)
        _view(bCr, w, (Bn, m), (Bs, d))[...] = j + 1
        _view(Cr, w, (Bn, m), (Bs, d))[...] = np.take_along_axis(cand, j[:, :, None], axis=2)[:, :, 0]
        # Cl[s, s+w] = max_{0<=j<w} Cl[s, s+j] + Il[s+j, s+w]
        cand = _view(Cl, 0, (Bn, m, w), (Bs, d, 1)) + _view(Il, w, (Bn, m, w), (Bs, d, N))
        j = cand.argmax(axis=2)
        _view(bCl, w, (Bn, m), (Bs, d))[...] = j
        _view(Cl, w, (Bn, m), (Bs, d))[...] = np.take_along_axis(cand, j[:, :, None], axis=2)[:, :, 0]
    return Cr, bI, bCr, bCl


def _eisner_backtrack(n, bI, bCr, bCl):
    """Heads (n+1,) of the best tree of one sentence from its split tables (iterative, O(n))."""
    heads = np.full(n + 1, -1, dtype=np.int64)
    stack = [(0, n, "Cr")]
    while stack:
        s, t, kind = stack.pop()
        if s == t:
            continue
        if kind == "Cr":
            r = s + int(bCr[s, t])
            stack.append((s, r, "Ir"))
            stack.append((r, t, "Cr"))
        elif kind == "Cl":
            r = s + int(bCl[s, t])
            stack.append((s, r, "Cl"))
            stack.append((r, t, "Il"))
        else:  # incomplete span: the arc, then the two complete halves
            if kind == "Ir":
                heads[t] = s
            else:
                heads[s] = t
            r = s + int(bI[s, t])
            stack.append((s, r, "Cr"))
            stack.append((r + 1, t, "Cl"))
    return heads


def eisner(scores):
    """Best projective dependency tree (Eisner's O(n³) dynamic program, maximisations vectorised).

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
    """:func:`eisner` for a list of sentences, run as one padded batch (one vectorised DP over all sentences).

    Sentences are padded to the longest; a sentence's best tree only depends on spans inside [0, n], so padding
    never reaches it. Cost O(B N³) arithmetic in O(N) vectorised steps; the O(n) backtracking runs per sentence.
    """
    mats = [_check_scores(s) for s in list_of_scores]
    if not mats:
        return []
    N = max(S.shape[0] for S in mats)
    S = np.zeros((len(mats), N, N))
    for b, M in enumerate(mats):
        S[b, :M.shape[0], :M.shape[0]] = M
    _, bI, bCr, bCl = _eisner_tables(S)
    return [_eisner_backtrack(M.shape[0] - 1, bI[b], bCr[b], bCl[b]) for b, M in enumerate(mats)]


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
