"""Compiled (numba) second-order projective parsing: Eisner's algorithm with adjacent-sibling factors.

McDonald & Pereira, "Online learning of approximate dependency parsing algorithms" (EACL 2006), section 3 and
Figure 4: the score of a tree is Σ_{(h, s, m)} T[h, s, m] over its arcs h → m, where s is m's adjacent sibling —
the child of h on the same side of h, between h and m, closest to m — or s = h when m is the child of h nearest to
h on its side. The arc score and the loss of arc h → m are folded into T[h, ·, m] by the caller.

Tables (s ≤ t, spans of the sentence 0..n, 0 the root):

* Cr[s, t] complete span headed by s reaching right to t, Cl[s, t] complete span headed by t reaching left to s;
* Ir[s, t] incomplete span with the arc s → t, Il[s, t] incomplete span with the arc t → s;
* Sb[s, t] sibling span: s's right half and t's left half meeting, s and t adjacent children of a head outside.

Recurrences (width t − s increasing; every candidate split reads narrower spans or, for C, the same width's I):

    Sb[s, t] = max_{s ≤ r < t} Cr[s, r] + Cl[r+1, t]
    Ir[s, t] = max( Cl[s+1, t] + T[s, s, t],                       t is s's first right child
                    max_{s < q < t} Ir[s, q] + Sb[q, t] + T[s, q, t] )   q its previous right sibling
    Il[s, t] = max( Cr[s, t−1] + T[t, t, s],
                    max_{s < q < t} Sb[s, q] + Il[q, t] + T[t, q, s] )
    Cr[s, t] = max_{s < m ≤ t} Ir[s, m] + Cr[m, t]
    Cl[s, t] = max_{s ≤ m < t} Cl[s, m] + Il[m, t]

No arc enters the root (Il[0, ·] = −∞); the root may have several children (as :func:`mmprog.inference.eisner`). The
best tree scores Cr[0, n]. O(n³) time, O(n²) tables. Ties go to the first candidate met in the loops' order (strict
``>``), so the result is deterministic; ``fastmath`` is off.
"""
from __future__ import annotations

import numpy as np
from numba import njit

_JIT = dict(cache=True, nogil=True, fastmath=False)
_NEG = -np.inf


@njit(**_JIT)
def eisner2_one(T, heads):
    """Best projective tree under adjacent-sibling scores ``T`` (n+1, n+1, n+1); fills ``heads`` (n+1,) (heads[0]
    = -1) and returns the tree's score."""
    N = T.shape[0]
    Cr = np.full((N, N), _NEG)
    Cl = np.full((N, N), _NEG)
    Ir = np.full((N, N), _NEG)
    Il = np.full((N, N), _NEG)
    Sb = np.full((N, N), _NEG)
    bCr = np.zeros((N, N), dtype=np.int64)
    bCl = np.zeros((N, N), dtype=np.int64)
    bIr = np.full((N, N), -1, dtype=np.int64)
    bIl = np.full((N, N), -1, dtype=np.int64)
    bSb = np.zeros((N, N), dtype=np.int64)
    for s in range(N):
        Cr[s, s] = 0.0
        Cl[s, s] = 0.0
    for k in range(1, N):
        for s in range(N - k):
            t = s + k
            # sibling span
            best, arg = _NEG, s
            for r in range(s, t):
                v = Cr[s, r] + Cl[r + 1, t]
                if v > best:
                    best, arg = v, r
            Sb[s, t] = best
            bSb[s, t] = arg
            # arc s -> t
            best, arg = Cl[s + 1, t] + T[s, s, t], -1
            for q in range(s + 1, t):
                v = Ir[s, q] + Sb[q, t] + T[s, q, t]
                if v > best:
                    best, arg = v, q
            Ir[s, t] = best
            bIr[s, t] = arg
            # arc t -> s (never into the root)
            if s > 0:
                best, arg = Cr[s, t - 1] + T[t, t, s], -1
                for q in range(s + 1, t):
                    v = Sb[s, q] + Il[q, t] + T[t, q, s]
                    if v > best:
                        best, arg = v, q
                Il[s, t] = best
                bIl[s, t] = arg
            # complete spans
            best, arg = _NEG, t
            for m in range(s + 1, t + 1):
                v = Ir[s, m] + Cr[m, t]
                if v > best:
                    best, arg = v, m
            Cr[s, t] = best
            bCr[s, t] = arg
            best, arg = _NEG, s
            for m in range(s, t):
                v = Cl[s, m] + Il[m, t]
                if v > best:
                    best, arg = v, m
            Cl[s, t] = best
            bCl[s, t] = arg
    # backtracking with an explicit stack of (kind, s, t): 0 Cr, 1 Cl, 2 Ir, 3 Il, 4 Sb
    heads[:] = -1
    stack = np.empty((4 * N + 4, 3), dtype=np.int64)
    top = 0
    stack[0, 0], stack[0, 1], stack[0, 2] = 0, 0, N - 1
    top = 1
    while top > 0:
        top -= 1
        kind, s, t = stack[top, 0], stack[top, 1], stack[top, 2]
        if s == t and kind < 2:
            continue
        if kind == 0:
            m = bCr[s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = 2, s, m
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = 0, m, t
            top += 2
        elif kind == 1:
            m = bCl[s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = 1, s, m
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = 3, m, t
            top += 2
        elif kind == 2:
            heads[t] = s
            q = bIr[s, t]
            if q < 0:
                stack[top, 0], stack[top, 1], stack[top, 2] = 1, s + 1, t
                top += 1
            else:
                stack[top, 0], stack[top, 1], stack[top, 2] = 2, s, q
                stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = 4, q, t
                top += 2
        elif kind == 3:
            heads[s] = t
            q = bIl[s, t]
            if q < 0:
                stack[top, 0], stack[top, 1], stack[top, 2] = 0, s, t - 1
                top += 1
            else:
                stack[top, 0], stack[top, 1], stack[top, 2] = 4, s, q
                stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = 3, q, t
                top += 2
        else:
            r = bSb[s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = 0, s, r
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = 1, r + 1, t
            top += 2
    return Cr[0, N - 1]
