"""Compiled (numba) integer kernels of the tagger's text handling.

:func:`line_fields` counts the whitespace-separated fields of every line in one pass over the code points, where
numpy needed five passes and their temporaries. Only integer arrays go in and out.

(A fused template -> CSR kernel was tried as well and measured slower than the numpy passes of
``TemplateExtractor._stacked``, which are bound by the random reads of the look-up tables, not by Python.)

``cache=True`` keeps the compiled code beside this file, so a process pays the compilation once per installation,
not once per run.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["line_fields"]


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
