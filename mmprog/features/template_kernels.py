"""Compiled (numba) kernels of the tagger's text handling and template scoring.

:func:`line_fields` counts the whitespace-separated fields of every line in one pass over the code points, where
numpy needed five passes and their temporaries. :func:`key_hash_build` / :func:`key_hash_find` look template keys
up in an open-addressing table (the tagger's replacement for a binary search over large key spaces), and
:func:`add_template_rows` / :func:`add_group_scores` add weight rows and per-value group sums into the token scores
(:mod:`mmprog.features.template_scores`).

(A fused template -> CSR kernel was tried as well and measured slower than the numpy passes of
``TemplateExtractor._stacked``, which are bound by the random reads of the look-up tables, not by Python.)

``cache=True`` keeps the compiled code beside this file, so a process pays the compilation once per installation,
not once per run.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["line_fields", "key_hash_build", "key_hash_find", "add_template_rows", "add_group_scores"]


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


@njit(cache=True, nogil=True)
def add_template_rows(cols, W, out):
    """out[t] += W[cols[t, i]] for every template i with a feature at token t (``cols[t, i] >= 0``), i ascending.

    Parameters
    ----------
    cols : ndarray of int32 or int64, shape (N, m)
        Feature index of m templates at every token, -1 = none (:meth:`TemplateExtractor.feature_columns`).
    W : ndarray of float64, shape (d, K)
    out : ndarray of float64, shape (N, K)
    """
    K = W.shape[1]
    for t in range(cols.shape[0]):
        for i in range(cols.shape[1]):
            j = cols[t, i]
            if j >= 0:
                for k in range(K):
                    out[t, k] += W[j, k]


@njit(cache=True, nogil=True)
def add_group_scores(row, pos, length, shift, S, bnd, reach, out):
    """out[t] += the summed weights of each template group of one base column at token t + r (r = the group's row
    offset): a row of the group's per-value table while t + r is inside the sentence, else the group's boundary
    vector of CRF++'s symbol there (``_B-k`` / ``_B+k``).

    Parameters
    ----------
    row : ndarray of int64, shape (N,)
        Memo row of every token's value in the base column.
    pos, length : ndarray of int64, shape (N,)
        Position of every token in its sentence, and the sentence's length.
    shift : ndarray of int64, shape (G,)
        Row offset r of each group.
    S : ndarray of float64, shape (rows, G, K)
        Per memo row and group, the sum of the group's templates' weight rows at that value.
    bnd : ndarray of float64, shape (G, 2·reach, K)
        Per group, the same sums at the boundary symbols: ``_B-k`` at k − 1, ``_B+k`` at reach + k − 1.
    reach : int
        The extractor's largest row offset.
    out : ndarray of float64, shape (N, K)
    """
    K = out.shape[1]
    for t in range(row.shape[0]):
        for g in range(shift.shape[0]):
            q = pos[t] + shift[g]
            if q < 0:
                v = bnd[g, -q - 1]
            elif q >= length[t]:
                v = bnd[g, reach + q - length[t]]
            else:
                v = S[row[t + shift[g]], g]
            for k in range(K):
                out[t, k] += v[k]


_FIB = np.uint64(11400714819323198485)     # 2⁶⁴ / golden ratio: Fibonacci hashing


@njit(cache=True)
def key_hash_build(keys):
    """Open-addressing hash table of sorted feature keys: key -> its index in ``keys``.

    Parameters
    ----------
    keys : ndarray of int64, shape (d,)
        Distinct non-negative keys.

    Returns
    -------
    slot_key : ndarray of int64, shape (2^bits,)
        The key held in each slot, -1 = empty (at least half the slots are).
    slot_val : ndarray of int64, shape (2^bits,)
    bits : int
    """
    bits = 1
    while (1 << bits) < 2 * keys.shape[0]:
        bits += 1
    size = 1 << bits
    slot_key = np.full(size, -1, np.int64)
    slot_val = np.zeros(size, np.int64)
    shift = np.uint64(64 - bits)
    for i in range(keys.shape[0]):
        h = np.int64((np.uint64(keys[i]) * _FIB) >> shift)
        while slot_key[h] != -1:
            h = (h + 1) & (size - 1)
        slot_key[h] = keys[i]
        slot_val[h] = i
    return slot_key, slot_val, bits


@njit(cache=True, nogil=True)
def key_hash_find(slot_key, slot_val, bits, query, offset, out):
    """out[i] = offset + index of query[i] in the keys of :func:`key_hash_build`, -1 if absent (or query[i] < 0).

    One or two probes a key where a binary search over a few hundred thousand sorted keys makes about twenty
    dependent reads."""
    size = slot_key.shape[0]
    shift = np.uint64(64 - bits)
    for i in range(query.shape[0]):
        q = query[i]
        out[i] = -1
        if q < 0:
            continue
        h = np.int64((np.uint64(q) * _FIB) >> shift)
        while slot_key[h] != -1:
            if slot_key[h] == q:
                out[i] = offset + slot_val[h]
                break
            h = (h + 1) & (size - 1)
