"""Compiled (numba) first-order projective parsing: Eisner's algorithm, one sentence per call.

Eisner (1996); the span formulation of McDonald, Crammer & Pereira (ACL 2005), Figure 2. Tables (s ≤ t, spans of
the sentence 0..n, 0 the root):

* Cr[s, t] complete span headed by s reaching right to t, Cl[s, t] complete span headed by t reaching left to s;
* Ir[s, t] incomplete span with the arc s → t, Il[s, t] incomplete span with the arc t → s.

Recurrences (width t − s increasing)::

    Ir[s, t] = max_{s ≤ r < t} Cr[s, r] + Cl[r+1, t] + S[s, t]        (Il the same split, + S[t, s])
    Cr[s, t] = max_{s < r ≤ t} Ir[s, r] + Cr[r, t]
    Cl[s, t] = max_{s ≤ r < t} Cl[s, r] + Il[r, t]

The best tree scores Cr[0, n]; the root may have several children (no arc enters it: S[·, 0] = −∞). O(n³) time,
O(n²) tables. Ties go to the first split in increasing r (strict ``>``), so the result is deterministic. Compiled
because it is the projective arc models' oracle: on Talbanken's sentence lengths it is about 15× faster than the
same recurrences vectorised over a padded batch in numpy.
"""
from __future__ import annotations

import numpy as np
from numba import njit

_JIT = dict(cache=True, nogil=True, fastmath=False)


@njit(**_JIT)
def eisner_one(S, heads):
    """Best projective tree under arc scores ``S`` (n+1, n+1) (``S[h, m]``, −∞ unusable); fills ``heads`` (n+1,)
    (heads[0] = −1) and returns the tree's score."""
    N = S.shape[0]
    neg = -np.inf
    Cr = np.full((N, N), neg)
    Cl = np.full((N, N), neg)
    Ir = np.full((N, N), neg)
    Il = np.full((N, N), neg)
    bI = np.zeros((N, N), dtype=np.int64)
    bCr = np.zeros((N, N), dtype=np.int64)
    bCl = np.zeros((N, N), dtype=np.int64)
    for s in range(N):
        Cr[s, s] = 0.0
        Cl[s, s] = 0.0
    for w in range(1, N):
        for s in range(N - w):
            t = s + w
            best, arg = neg, s
            for r in range(s, t):
                v = Cr[s, r] + Cl[r + 1, t]
                if v > best:
                    best, arg = v, r
            bI[s, t] = arg
            Ir[s, t] = best + S[s, t]
            Il[s, t] = best + S[t, s]
            best, arg = neg, s + 1
            for r in range(s + 1, t + 1):
                v = Ir[s, r] + Cr[r, t]
                if v > best:
                    best, arg = v, r
            Cr[s, t], bCr[s, t] = best, arg
            best, arg = neg, s
            for r in range(s, t):
                v = Cl[s, r] + Il[r, t]
                if v > best:
                    best, arg = v, r
            Cl[s, t], bCl[s, t] = best, arg
    heads[:] = -1
    # backtracking with an explicit stack of (s, t, kind): 0 Cr, 1 Cl, 2 Ir, 3 Il
    stack = np.empty((6 * N + 4, 3), dtype=np.int64)   # every span pushes two halves: at most 6n + 1 entries
    stack[0, 0], stack[0, 1], stack[0, 2] = 0, N - 1, 0
    top = 1
    while top > 0:
        top -= 1
        s, t, kind = stack[top, 0], stack[top, 1], stack[top, 2]
        if s == t:
            continue
        if kind == 0:
            r = bCr[s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = s, r, 2
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = r, t, 0
            top += 2
        elif kind == 1:
            r = bCl[s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = s, r, 1
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = r, t, 3
            top += 2
        else:
            if kind == 2:
                heads[t] = s
            else:
                heads[s] = t
            r = bI[s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = s, r, 0
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = r + 1, t, 1
            top += 2
    return Cr[0, N - 1]
