"""Compiled kernels of the block-coordinate Frank–Wolfe route (:mod:`mmprog.engine.bcfw`): arrays in, arrays out.

* :func:`token_gram` — the token Gram matrix G_i = XᵢXᵢᵀ of every example (Σᵢ Tᵢ² floats, computed once);
* :func:`rebuild_w` — w(α) = Σᵢ Σ_y αᵢ(y) Δfᵢ(y) and the dual's linear part Σ α Δℓ from the per-example caches;
* :func:`bcfw_pass` — one pass over the examples in a given order: the loss-augmented Viterbi of each (the most
  violated labeling, added to its cache) and up to ``inner`` exact pairwise steps inside the cache (Lacoste-Julien,
  Jaggi, Schmidt & Pletscher, ICML 2013; Shah, Kolmogorov & Lampert, CVPR 2015; Osokin et al., ICML 2016).

The caches are token-stacked labelings ``lab`` (M slots × N tokens, slot 0 the gold labeling) with their ``alpha``
(n × M) and ``loss`` (n × M); W (d × K) and Tr (K × K) are views of w's state and transition blocks.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._compiled import viterbi_one

_JIT = dict(cache=True, nogil=True, fastmath=False)



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
def rebuild_w(Xp, Xi, Xd, offsets, gold, lab, alpha, loss, cnt, W, Tr):
    """w(α) = Σᵢ Σ_y αᵢ(y) Δfᵢ(y) into W (d, K) and Tr (K, K) from zero; returns Σᵢ Σ_y αᵢ(y) Δℓᵢ(y)."""
    W[:, :] = 0.0
    Tr[:, :] = 0.0
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
    return lin


@njit(**_JIT)
def _labeling_gradient(node, Tr, lab, gold, lo, L, loss, score_gold):
    """g(y) = Δℓ(y) + wᵀf(x, y) − wᵀf(x, yᵢ) of the labeling ``lab[lo:lo+L]`` from the token scores."""
    s = node[0, lab[lo]]
    for t in range(1, L):
        s += Tr[lab[lo + t - 1], lab[lo + t]] + node[t, lab[lo + t]]
    return loss + s - score_gold


@njit(**_JIT)
def bcfw_pass(order, Xp, Xi, Xd, offsets, gold, Gp, Gv, W, Tr, lab, alpha, loss, cnt, C, inner, tol, hinge, bgap,
              node, delta, back, y, edge_t, trbuf, gsc, diff):
    """One pass of block-coordinate pairwise Frank–Wolfe over the examples in ``order`` (see the module docstring).

    Parameters
    ----------
    lab : ndarray of int16, shape (M, N)
        Cache slot m of example i is ``lab[m, offsets[i]:offsets[i+1]]``, valid for m < cnt[i]; slot 0 the gold one.
    alpha, loss : ndarray, shape (n, M)
        αᵢ(y) and Δℓᵢ(y) of the cached labelings.
    hinge, bgap : ndarray, shape (n,)
        Output: Hᵢ(w) and the block gap C·Hᵢ(w) − Σ_y αᵢ(y) gᵢ(y) at the w of each visit (before its steps).

    Returns
    -------
    evicted : int
        Visits that found the cache full and emptied its least-weighted labeling onto the best one to make room.
    """
    M = lab.shape[0]
    K = W.shape[1]
    evicted = 0
    for oi in range(order.shape[0]):
        i = order[oi]
        lo, hi = offsets[i], offsets[i + 1]
        L = hi - lo
        if L == 0:
            hinge[i] = 0.0
            bgap[i] = 0.0
            continue
        gbase = Gp[i]
        # token scores at the current w
        for t in range(L):
            r = lo + t
            for k in range(K):
                node[t, k] = 0.0
            for p in range(Xp[r], Xp[r + 1]):
                v = Xd[p]
                j = Xi[p]
                for k in range(K):
                    node[t, k] += v * W[j, k]
        for a in range(K):
            for b in range(K):
                edge_t[0, b, a] = Tr[a, b]
        aug = viterbi_one(node[:L], edge_t, 0, gold[lo:hi], 1.0, delta, back, y)
        score_gold = node[0, gold[lo]]
        for t in range(1, L):
            score_gold += Tr[gold[lo + t - 1], gold[lo + t]] + node[t, gold[lo + t]]
        H = aug - score_gold
        hinge[i] = H
        c = cnt[i]
        dot = 0.0
        for m in range(c):
            gsc[m] = _labeling_gradient(node, Tr, lab[m], gold, lo, L, loss[i, m], score_gold)
            dot += alpha[i, m] * gsc[m]
        bgap[i] = C * H - dot
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
        evicting = False
        if not found and H > tol:
            if c == M:
                evicting = True
                # full: the least-weighted labeling's mass goes to the best cached one (a feasible move), freeing
                # its slot
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
                _pair_step(i, a_min, best, alpha[i, a_min], Xp, Xi, Xd, lo, L, Gv, gbase, W, Tr, lab, alpha, node,
                           trbuf, diff)
                c = _compact(i, lo, L, lab, alpha, loss, cnt, gsc)
                evicted += 1
            dl = 0.0
            for t in range(L):
                lab[c, lo + t] = y[t]
                if y[t] != gold[lo + t]:
                    dl += 1.0
            loss[i, c] = dl
            alpha[i, c] = 0.0
            gsc[c] = H
            c += 1
            cnt[i] = c
            if evicting:
                # the eviction's step moved the token scores: every gradient afresh (the gold one is 0)
                for m in range(c):
                    gsc[m] = _labeling_gradient(node, Tr, lab[m], gold, lo, L, loss[i, m], 0.0)
                sg = gsc[0]
                for m in range(c):
                    gsc[m] -= sg
        # pairwise steps inside the cache
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
            norm2 = _pair_norm2(lab[a], lab[s], lo, L, Gv, gbase, trbuf, diff)
            step = alpha[i, a]
            if norm2 > 0.0:
                step = min(step, (gsc[s] - gsc[a]) / norm2)
            _pair_step(i, a, s, step, Xp, Xi, Xd, lo, L, Gv, gbase, W, Tr, lab, alpha, node, trbuf, diff)
            for m in range(c):
                gsc[m] = _labeling_gradient(node, Tr, lab[m], gold, lo, L, loss[i, m], 0.0)
            sg = gsc[0]               # the gold labeling's score, so that its gradient is 0
            for m in range(c):
                gsc[m] -= sg
        _compact(i, lo, L, lab, alpha, loss, cnt, gsc)
    return evicted


@njit(**_JIT)
def _pair_norm2(la, ls, lo, L, Gv, gbase, trbuf, diff):
    """‖f(x, a) − f(x, s)‖² through the token Gram matrix; ``diff`` gets the differing positions, returns the
    squared norm (``diff[L]`` holds their count)."""
    nd = 0
    for t in range(L):
        if la[lo + t] != ls[lo + t]:
            diff[nd] = t
            nd += 1
    diff[L] = nd
    s = 0.0
    for x in range(nd):
        t = diff[x]
        at, st = la[lo + t], ls[lo + t]
        for z in range(nd):
            u = diff[z]
            au, su = la[lo + u], ls[lo + u]
            e = (1.0 if at == au else 0.0) - (1.0 if at == su else 0.0) - (1.0 if st == au else 0.0) \
                + (1.0 if st == su else 0.0)
            if e != 0.0:
                s += Gv[gbase + t * L + u] * e
    for t in range(L - 1):
        trbuf[la[lo + t], la[lo + t + 1]] += 1.0
        trbuf[ls[lo + t], ls[lo + t + 1]] -= 1.0
    for t in range(L - 1):
        for which in range(2):
            l1 = la if which == 0 else ls
            v = trbuf[l1[lo + t], l1[lo + t + 1]]
            s += v * v
            trbuf[l1[lo + t], l1[lo + t + 1]] = 0.0
    return s


@njit(**_JIT)
def _pair_step(i, a, s, step, Xp, Xi, Xd, lo, L, Gv, gbase, W, Tr, lab, alpha, node, trbuf, diff):
    """Move mass ``step`` from cached labeling a to s: α, w (+= step·(f(x, a) − f(x, s))) and the example's token
    scores (through its Gram matrix)."""
    if step <= 0.0:
        return
    if step >= alpha[i, a]:
        step = alpha[i, a]
        alpha[i, a] = 0.0
    else:
        alpha[i, a] -= step
    alpha[i, s] += step
    la, ls = lab[a], lab[s]
    for t in range(L):
        r = lo + t
        at, st = la[r], ls[r]
        if at != st:
            for p in range(Xp[r], Xp[r + 1]):
                v = step * Xd[p]
                W[Xi[p], at] += v
                W[Xi[p], st] -= v
            for u in range(L):
                gv = step * Gv[gbase + u * L + t]
                node[u, at] += gv
                node[u, st] -= gv
        if t + 1 < L:
            Tr[at, la[r + 1]] += step
            Tr[st, ls[r + 1]] -= step


@njit(**_JIT)
def _compact(i, lo, L, lab, alpha, loss, cnt, gsc):
    """Drop the cached labelings of example i whose α is 0 (never the gold slot 0); returns the new count."""
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
            alpha[i, c] = 0.0
        else:
            m += 1
    cnt[i] = c
    return c
