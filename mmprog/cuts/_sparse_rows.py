"""Compiled (numba) products and sums of sorted sparse rows for the working set, in O(non-zeros) memory.

Why not scipy: on full CoNLL-2002 NER a ΔF row is a vector of 53 million joint features with 6–30 million
non-zeros. scipy's ``F @ rowᵀ`` converts the transposed row to CSR, an index pointer as long as the joint dimension
(212–424 MB a Gram row), and a weighted sum of rows by one sort holds ~32 bytes per entry it merges (1–2 GB for the
aggregate of ``max_cuts``). These kernels walk the rows' sorted indices side by side (a merge), so they allocate
nothing but their output.

Exactness: every row keeps sorted, distinct indices (CSR after ``sum_duplicates``). :func:`row_dots` adds the products
of the shared columns in ascending column order, the order of scipy's ``csr_matmat`` for ``F @ rowᵀ``, so the Gram
entries are the same floats as before. :func:`weighted_union` adds ``wa·a + wb·b`` per column (the weights applied to
each row first, as before); explicit zeros of the sum are left out.

Counts: every kernel reads a row's values as ``data[k] / div``. A fresh 1-slack cut of 0/1 template features is an
integer count vector divided by n; the working set keeps such a row as its int32 counts with ``div = n`` (8 bytes an
entry instead of 12) and the kernels divide on the fly, which gives the very floats the divided float64 row held
(IEEE division is correctly rounded: ``float(c) / n`` is the one double nearest c/n either way). Float rows pass
``div = 1.0`` (x / 1 is x exactly).
"""
from __future__ import annotations

import numpy as np
from numba import njit

_JIT = dict(cache=True, nogil=True, fastmath=False)


@njit(**_JIT)
def row_dots(indptr, indices, data, div, p_idx, p_val, p_div, out):
    """⟨F_q, p⟩ for every row q of a CSR matrix F (values ``data / div``), written into ``out``.

    Parameters
    ----------
    indptr : ndarray of int, shape (r + 1,)
    indices : ndarray of int, shape (nnz,)
        Sorted and distinct within each row.
    data : ndarray of float64 or int32, shape (nnz,)
    div : float
        F's values are ``data / div`` (1.0 for float rows, n for the counts of a 1-slack cut).
    p_idx : ndarray of int, shape (m,)
        The row p's sorted, distinct indices.
    p_val : ndarray of float64 or int32, shape (m,)
    p_div : float
        p's values are ``p_val / p_div``.
    out : ndarray of float64, shape (r,)
    """
    m = p_idx.shape[0]
    for q in range(indptr.shape[0] - 1):
        a, a_end = indptr[q], indptr[q + 1]
        b = 0
        s = 0.0
        while a < a_end and b < m:
            ia, ib = indices[a], p_idx[b]
            if ia == ib:
                s += (data[a] / div) * (p_val[b] / p_div)
                a += 1
                b += 1
            elif ia < ib:
                a += 1
            else:
                b += 1
        out[q] = s


@njit(**_JIT)
def row_group_dots(indptr, indices, data, div, p_idx, p_val, p_div, groups, out):
    """out[j, q] += ⟨F_{q,j}, p_j⟩ for every row q of a CSR matrix F (values ``data / div``) and every group j: the
    products of the shared columns binned by the group of their column (``groups[col]``).

    The per-template Gram rows Qʲ of multiple template learning (Mao & Tsang's Qʲ_{r,r'} = ⟨ΔF̄_{r,j}, ΔF̄_{r',j}⟩)
    in one merge per row pair. Each bin is summed in ascending column order from ``out``'s value (0 for a fresh
    row): the order of scipy's ``F @ splitᵀ`` with p split into one column per template (column r·m + j), which the
    Gram rows were computed with before, so from ``out = 0`` the same floats.

    Parameters
    ----------
    indptr : ndarray of int, shape (r + 1,)
    indices : ndarray of int, shape (nnz,)
        Sorted and distinct within each row.
    data : ndarray of float64, int32 or int16, shape (nnz,)
    div : float
        F's values are ``data / div``.
    p_idx : ndarray of int, shape (k,)
        The row p's sorted, distinct indices.
    p_val : ndarray of float64, int32 or int16, shape (k,)
    p_div : float
        p's values are ``p_val / p_div``.
    groups : ndarray of int, shape (dim,)
        Group (template) of every column, in [0, m).
    out : ndarray of float64, shape (m, r)
        Added to (may be a strided view, e.g. one new cut's slice of an (m, new, s) array).
    """
    k = p_idx.shape[0]
    for q in range(indptr.shape[0] - 1):
        a, a_end = indptr[q], indptr[q + 1]
        b = 0
        while a < a_end and b < k:
            ia, ib = indices[a], p_idx[b]
            if ia == ib:
                out[groups[ia], q] += (data[a] / div) * (p_val[b] / p_div)
                a += 1
                b += 1
            elif ia < ib:
                a += 1
            else:
                b += 1


@njit(**_JIT)
def rows_tdot(indptr, indices, data, div, alpha, out):
    """out += Fᵀα for a CSR matrix F (values ``data / div``): rows in order, each added entry by entry (the order
    of scipy's ``F.T @ alpha``, so the same floats from out = 0); rows with α_q = 0 are skipped (they add zeros).

    Parameters
    ----------
    indptr, indices, data : the CSR arrays of F, shape (r, dim); data float64 or int32
    div : float
    alpha : ndarray of float64, shape (r,)
    out : ndarray of float64, shape (dim,)
    """
    for q in range(indptr.shape[0] - 1):
        a = alpha[q]
        if a == 0.0:
            continue
        for k in range(indptr[q], indptr[q + 1]):
            out[indices[k]] += (data[k] / div) * a


@njit(**_JIT)
def rows_dot(indptr, indices, data, div, w, out):
    """out = F w for a CSR matrix F (values ``data / div``), each row summed from 0 in its entries' order (the
    order of scipy's ``csr_matvec``, so the same floats as ``F @ w`` on the divided float64 rows).

    Parameters
    ----------
    indptr, indices, data : the CSR arrays of F, shape (r, dim); data float64 or int32
    div : float
    w : ndarray of float64, shape (dim,)
    out : ndarray of float64, shape (r,)
    """
    for q in range(indptr.shape[0] - 1):
        s = 0.0
        for k in range(indptr[q], indptr[q + 1]):
            s += (data[k] / div) * w[indices[k]]
        out[q] = s


@njit(**_JIT)
def _union_size(a_idx, b_idx):
    n_a, n_b = a_idx.shape[0], b_idx.shape[0]
    a = b = k = 0
    while a < n_a and b < n_b:
        if a_idx[a] == b_idx[b]:
            a += 1
            b += 1
        elif a_idx[a] < b_idx[b]:
            a += 1
        else:
            b += 1
        k += 1
    return k + (n_a - a) + (n_b - b)


@njit(**_JIT)
def _union_fill(a_idx, a_val, a_div, wa, b_idx, b_val, b_div, wb, out_idx, out_val):
    """Fill wa·a + wb·b (values ``a_val / a_div``, ``b_val / b_div``) into out (the union's size) and drop the
    explicit zeros; returns the entries kept."""
    n_a, n_b = a_idx.shape[0], b_idx.shape[0]
    a = b = k = 0
    while a < n_a or b < n_b:
        if b == n_b or (a < n_a and a_idx[a] < b_idx[b]):
            i, v = a_idx[a], wa * (a_val[a] / a_div)
            a += 1
        elif a == n_a or b_idx[b] < a_idx[a]:
            i, v = b_idx[b], wb * (b_val[b] / b_div)
            b += 1
        else:
            i, v = a_idx[a], wa * (a_val[a] / a_div) + wb * (b_val[b] / b_div)
            a += 1
            b += 1
        if v != 0.0:
            out_idx[k] = i
            out_val[k] = v
            k += 1
    return k


def weighted_union(a_idx, a_val, wa, b_idx, b_val, wb, a_div=1.0, b_div=1.0):
    """The sparse sum wa·a + wb·b of two rows with sorted, distinct indices, without explicit zeros.

    Parameters
    ----------
    a_idx, b_idx : ndarray of int, shapes (n_a,), (n_b,)
    a_val, b_val : ndarray of float64 or int32, shapes (n_a,), (n_b,)
    wa, wb : float
    a_div, b_div : float
        The rows' values are ``a_val / a_div`` and ``b_val / b_div`` (counts of a 1-slack cut and their n).

    Returns
    -------
    idx : ndarray, shape (u,), dtype of ``a_idx``
        The sorted union of the indices where the sum is not 0 (u ≤ n_a + n_b). Allocated at the union's size and
        cut to u only when a sum cancelled (a copy then): the inputs are not copied.
    val : ndarray of float64, shape (u,)
    """
    u = _union_size(a_idx, b_idx)
    idx, val = np.empty(u, dtype=a_idx.dtype), np.empty(u)
    k = _union_fill(a_idx, a_val, np.float64(a_div), np.float64(wa), b_idx, b_val, np.float64(b_div),
                     np.float64(wb), idx, val)
    if k < u:
        idx, val = idx[:k].copy(), val[:k].copy()
    return idx, val
