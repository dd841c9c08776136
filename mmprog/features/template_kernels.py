"""Compiled (numba) integer kernels of the template extractor and the tagger's text handling.

Tagging a file spends its time in per-token work that numpy can only do one template (or one pass) at a time, each
pass writing an (N,) temporary: shifting the column ids by the row offsets, packing the mixed-radix keys, the key ->
feature look-up, the boolean compaction into CSR. :func:`feature_rows` does all of it in one pass over the tokens,
writing the CSR indices directly; :func:`line_fields` counts the whitespace-separated fields of every line in one pass
over the code points. Only integer arrays go in and out (floating-point scoring and Viterbi stay in
:mod:`mmprog.features.chain` and :mod:`mmprog.inference.chain`).

``cache=True`` keeps the compiled code beside this file, so a process pays the compilation (about a second) once per
installation, not once per run.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["feature_rows", "line_fields", "build_hash"]

# Fibonacci hashing: the top bits of key * 2**64/φ spread consecutive keys (a word pair's keys differ in the low
# digits) over the whole table
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True)
def _slot(key, bits):
    return np.int64((np.uint64(key) * _GOLDEN) >> np.uint64(64 - bits))


@njit(cache=True)
def build_hash(keys, values, bits, hkeys, hvals):
    """Insert the distinct ``keys`` (≥ 0) with their ``values`` into an open-addressing table of 2**bits slots
    (``hkeys`` pre-filled with −1; linear probing)."""
    mask = (1 << bits) - 1
    for i in range(keys.shape[0]):
        h = _slot(keys[i], bits)
        while hkeys[h] >= 0:
            h = (h + 1) & mask
        hkeys[h] = keys[i]
        hvals[h] = values[i]


@njit(cache=True)
def _probe(hkeys, hvals, lo, bits, key):
    # value of key in the table starting at lo, or -1
    mask = (1 << bits) - 1
    h = _slot(key, bits)
    while True:
        k = hkeys[lo + h]
        if k == key:
            return hvals[lo + h]
        if k < 0:
            return -1
        h = (h + 1) & mask


@njit(cache=True)
def _search(a, lo, hi, x):
    # index of x in the sorted a[lo:hi], or -1
    hi0 = hi
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    if lo < hi0 and a[lo] == x:
        return lo
    return -1


@njit(cache=True)
def feature_rows(ids, vsize, lengths, K, mac_ptr, mac_row, mac_col, mac_radix, rec_lo, rec_hi, recode, tab_lo,
                 tables, hash_lo, hash_bits, hkeys, hvals, indptr, indices):
    """Input-feature columns of every token, written as CSR ``indptr``/``indices``.

    Parameters
    ----------
    ids : ndarray of int64, shape (C, N)
        Value id of every token in each column key the templates read (−1 = unseen in training).
    vsize : ndarray of int64, shape (C,)
        Vocabulary size of each column key; ``vsize + k − 1`` is the symbol ``_B-k`` and ``vsize + K + k − 1`` is
        ``_B+k``.
    lengths : ndarray of int64, shape (n_sent,)
        Sentence lengths; the tokens are in sentence order, sum(lengths) = N.
    K : int
        The largest row offset of any macro (as in the extractor).
    mac_ptr : ndarray of int64, shape (n_templates + 1,)
        Template j's macros are ``mac_ptr[j]:mac_ptr[j+1]`` in the ``mac_*`` arrays.
    mac_row, mac_col, mac_radix : ndarray of int64, shape (n_macros,)
        Row offset, column key (row of ``ids``) and radix of every macro.
    rec_lo, rec_hi : ndarray of int64, shape (n_macros,)
        The re-indexing table applied to the partial key before macro m is ``recode[rec_lo[m]:rec_hi[m]]``
        (sorted; ``rec_lo[m] < 0``: none).
    recode : ndarray of int64, shape (R,)
    tab_lo : ndarray of int64, shape (n_templates,)
        Template j's dense key -> feature table starts at ``tables[tab_lo[j]]`` (−1: no dense table; its key space
        is too large, look the key up in its hash table instead).
    tables : ndarray of int32 or int64, shape (S,)
        Feature index (offset included) of every key, −1 for keys not in the dictionary.
    hash_lo, hash_bits : ndarray of int64, shape (n_templates,)
        Template j's hash table is ``hkeys[hash_lo[j]:hash_lo[j] + 2**hash_bits[j]]`` (see :func:`build_hash`).
    hkeys : ndarray of int64, shape (H,)
        Keys of the hash slots, −1 = empty.
    hvals : ndarray of int32 or int64, shape (H,)
        Feature index (offset included) of every slot's key.
    indptr : ndarray, shape (N + 1,)
        Output: row pointers.
    indices : ndarray, shape (N * n_templates,)
        Output: column indices (the first ``indptr[N]`` are written), sorted within each row.
    """
    n_t = mac_ptr.shape[0] - 1
    N = 0
    for s in range(lengths.shape[0]):
        N += lengths[s]
    pos = np.empty(N, dtype=np.int64)
    slen = np.empty(N, dtype=np.int64)
    tok = 0
    for s in range(lengths.shape[0]):
        for p in range(lengths[s]):
            pos[tok] = p
            slen[tok] = lengths[s]
            tok += 1
    # template-major within blocks of tokens: one template's look-up table (up to a few MB) is reused over a whole
    # block instead of 40 tables taking turns in the cache at every token (3x faster on CoNLL-2002 with `rich`)
    B = 2048
    cols = np.empty((n_t, B), dtype=indices.dtype)
    cnt = 0
    indptr[0] = 0
    for b0 in range(0, N, B):
        b1 = min(N, b0 + B)
        for j in range(n_t):
            t0 = tab_lo[j]
            for t in range(b0, b1):
                p = pos[t]
                n = slen[t]
                a = t - p
                key = 0
                bad = False
                for m in range(mac_ptr[j], mac_ptr[j + 1]):
                    lo = rec_lo[m]
                    if lo >= 0:
                        # partial combinations re-indexed as at fitting, so the key stays in int64
                        key = _search(recode, lo, rec_hi[m], key)
                        if key < 0:
                            bad = True
                            break
                        key -= lo
                    q = p + mac_row[m]
                    c = mac_col[m]
                    if q < 0:
                        v = vsize[c] - q - 1
                    elif q >= n:
                        v = vsize[c] + K + q - n
                    else:
                        v = ids[c, a + q]
                        if v < 0:
                            bad = True
                            break
                    key = key * mac_radix[m] + v
                if bad:
                    cols[j, t - b0] = -1
                elif t0 >= 0:
                    cols[j, t - b0] = tables[t0 + key]
                else:
                    # one probe where a binary search over ~10^5 sorted keys took ~17 cache misses
                    cols[j, t - b0] = _probe(hkeys, hvals, hash_lo[j], hash_bits[j], key)
        for t in range(b0, b1):
            for j in range(n_t):
                f = cols[j, t - b0]
                if f >= 0:
                    indices[cnt] = f
                    cnt += 1
            indptr[t + 1] = cnt
    return cnt


@njit(cache=True)
def line_fields(cp, is_space):
    """Number of whitespace-separated fields of every line, and the code-point offset where each line starts.

    Parameters
    ----------
    cp : ndarray of uint32, shape (L,)
        The text's code points (``\\n`` ends a line; the text ends with one).
    is_space : ndarray of bool, shape (M,)
        Whether code point c < M − 1 is whitespace for ``str.split()``; code points ≥ M − 1 read ``is_space[-1]``.

    Returns
    -------
    counts : ndarray of int64, shape (n_lines,)
    starts : ndarray of int64, shape (n_lines,)
    """
    n_lines = 0
    for i in range(cp.shape[0]):
        if cp[i] == 10:
            n_lines += 1
    if cp.shape[0] and cp[cp.shape[0] - 1] != 10:
        n_lines += 1
    counts = np.zeros(n_lines, dtype=np.int64)
    starts = np.zeros(n_lines, dtype=np.int64)
    top = is_space.shape[0] - 1
    line = 0
    prev_space = True
    for i in range(cp.shape[0]):
        c = cp[i]
        if c == 10:
            line += 1
            if line < n_lines:
                starts[line] = i + 1
            prev_space = True
            continue
        sp = is_space[c] if c < top else is_space[top]
        if not sp and prev_space:
            counts[line] += 1
        prev_space = sp
    return counts, starts
