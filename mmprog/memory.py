"""Keep freed memory in the process instead of handing it back to the operating system (glibc only).

Why: a round of the cutting plane on a large corpus allocates and frees arrays of hundreds of megabytes (the joint
weight vector, Xᵀ(ΔY) of the oracle, Σᵣ αᵣ ΔF̄_r, the compacted working set). glibc serves each of them with a fresh
``mmap`` and returns it with ``munmap``, so the kernel zeroes every page again on first touch. On the virtual
machines we measured this is slow: on full CoNLL-2002 NER a third of each MTL round was kernel time in
``clear_page``. On a 1,500-sentence NER slice (``mmprog reproduce templates --task ner --limit 1500 --methods mtl
--max-iter 25 --drop-after 10``, beside another fit on the second core) the kept heap took the system time from
16.7 s to 5.3 s and the wall time from 74 s to 64 s, and raised the peak resident memory from 2.3 to 2.6 GB; scores
were identical (only the allocator changes).

:func:`keep_freed_memory` sets glibc's ``M_MMAP_MAX = 0`` (large blocks come from the heap too) and a trim threshold
that never trims, through ``mallopt``. The command line (``mmprog``, ``python -m mmprog.bench``) calls it at start
unless ``MMPROG_MALLOC=system``; library users may call it themselves. The same effect for any process:
``MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=1000000000000``.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os

#: mallopt parameter numbers from glibc's malloc.h
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4

#: environment variable that turns the setting off (value ``system``)
ENV = "MMPROG_MALLOC"


def keep_freed_memory():
    """Ask glibc to keep freed blocks for reuse (see the module docstring).

    Returns
    -------
    str
        What was done: ``"kept"``, ``"disabled by MMPROG_MALLOC=system"`` or why it does not apply (not glibc).
    """
    if os.environ.get(ENV, "").strip().lower() == "system":
        return f"disabled by {ENV}=system"
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return "not glibc: the system allocator is used"
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # mallopt returns 1 on success; the largest int trim threshold is never reached by a heap top
    if mallopt(M_MMAP_MAX, 0) != 1 or mallopt(M_TRIM_THRESHOLD, 2**31 - 1) != 1:
        return "mallopt refused: the system allocator is used"
    return "kept"
