"""How freed memory is handed back to the operating system (glibc only): three modes, one switch.

Why: a round of the cutting plane on a large corpus allocates and frees arrays of tens to hundreds of megabytes
(the joint weight vector, the oracle's cut, Σᵣ αᵣ ΔF̄_r, the aggregated cuts). glibc serves each block above its
mmap threshold with a fresh ``mmap`` and returns it with ``munmap``, and below it trims the heap's top whenever
128 kB or more are free there, so the kernel zeroes those pages again on first touch. On the virtual machines we
measured this is slow: on full CoNLL-2002 NER a third of each MTL round was kernel time in ``clear_page``.

``MMPROG_MALLOC`` chooses (the command line, ``mmprog`` and ``python -m mmprog.bench``, calls
:func:`keep_freed_memory` at start; library users may call it themselves):

``mapped`` (default)
    Blocks of 32 MB or more (glibc's largest threshold) get their own mapping, returned when freed, so they leave no
    holes between live blocks; the heap below them is never trimmed, so the many smaller blocks of a round are
    reused without page faults. On full CoNLL-2002 NER (``python -m mmprog.bench ner``, 471 rounds, the same objective
    and testb F1 in every mode) it peaked at 2,982 MB with 132 s of system time, against 3,157 MB and 23 s kept, and
    2,839 MB and 214 s with glibc's own trimming of the heap (``system`` with a fixed 32 MB mmap threshold).
``kept``
    ``M_MMAP_MAX = 0`` (large blocks come from the heap too) and a trim threshold that is never reached: nothing is
    given back. The fewest page faults; over hundreds of rounds the heap keeps the holes between live blocks. On a
    1,500-sentence NER slice (``mmprog reproduce templates --task ner --limit 1500 --methods mtl --max-iter 25
    --drop-after 10``, beside another fit) it took the system time from 16.7 s to 5.3 s and the wall time from 74 s
    to 64 s against glibc's defaults, and raised the peak resident memory from 2.3 to 2.6 GB; scores identical.
``system``
    glibc's defaults, untouched.

The same effects for any process, through glibc's environment: ``MALLOC_MMAP_THRESHOLD_=33554432
MALLOC_TRIM_THRESHOLD_=1000000000000`` (mapped), ``MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=1000000000000``
(kept).

And how fresh memory is committed: :func:`zeros_on_touch` gives zeros of which only the pages written become
resident, 4 KiB at a time, for arrays a run writes a small corner of (route ``bcfw``'s caches).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os

#: mallopt parameter numbers from glibc's malloc.h
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_MMAP_MAX = -4

#: environment variable that chooses the mode
ENV = "MMPROG_MALLOC"
MODES = ("kept", "mapped", "system")
#: the mode of the command line when the variable is not set
DEFAULT = "mapped"
#: glibc refuses mmap thresholds above HEAP_MAX_SIZE / 2 = 32 MB on 64-bit systems
MAPPED_FROM = 32 * 2**20
#: the largest int trim threshold: never reached by a heap top
NEVER = 2**31 - 1


def keep_freed_memory(mode=None):
    """Set glibc's allocator to ``mode`` (default: ``$MMPROG_MALLOC``, else :data:`DEFAULT`; see the module docstring).

    Parameters
    ----------
    mode : {"kept", "mapped", "system"}, optional
        Overrides the environment variable.

    Returns
    -------
    str
        What was done: the mode set, ``"disabled by MMPROG_MALLOC=system"``, or why it does not apply (not glibc,
        an unknown mode).
    """
    if mode is None:
        mode = os.environ.get(ENV, "").strip().lower() or DEFAULT
        if mode == "system":
            return f"disabled by {ENV}=system"
    if mode not in MODES:
        return f"{ENV}={mode!r} is not one of {', '.join(MODES)}: the system allocator is used"
    if mode == "system":
        return "system"
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return "not glibc: the system allocator is used"
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # mallopt returns 1 on success
    if mode == "kept":
        done = mallopt(M_MMAP_MAX, 0) == 1 and mallopt(M_TRIM_THRESHOLD, NEVER) == 1
    else:
        done = mallopt(M_MMAP_THRESHOLD, MAPPED_FROM) == 1 and mallopt(M_TRIM_THRESHOLD, NEVER) == 1
    if not done:
        return "mallopt refused: the system allocator is used"
    return mode


#: arrays of :func:`zeros_on_touch` from this many bytes are mapped page by page (below it, numpy gives 4 KiB pages)
ZEROS_ON_TOUCH_FROM = 1 << 22


def zeros_on_touch(shape, dtype="float64"):
    """Zeros whose memory is committed page by page (4 KiB) as it is first written: for arrays of which a run writes
    a small corner, such as route ``bcfw``'s caches sized by ``cache_size`` (:mod:`mmprog.engine.bcfw`), where an
    example's slots beyond the labelings it has cached are never touched (on the tutorial's features 3 labelings an
    example on average, of 64 slots).

    numpy backs arrays of 4 MiB and more with transparent huge pages (2 MiB), so writing one slot of an example
    commits the slots of its neighbours too: the slot Gram matrices, n·M² floats, were all resident after the first
    pass (260 MB of the tutorial fit's peak; ``bench crf --tutorial`` records the peak beside CRFsuite's). An
    anonymous map advised against huge pages keeps the untouched pages uncommitted; the values, the layout and every
    kernel's arithmetic are those of ``np.zeros``, so the path is unchanged. Where the advice does not exist (not
    Linux), or below :data:`ZEROS_ON_TOUCH_FROM` bytes, ``np.zeros``."""
    import numpy as np          # here: the command line reads this module before anything else, at start-up
    shape = tuple(int(x) for x in shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    if nbytes < max(ZEROS_ON_TOUCH_FROM, 1) or not hasattr(mmap, "MADV_NOHUGEPAGE"):
        return np.zeros(shape, dtype=dtype)
    buf = mmap.mmap(-1, nbytes)              # anonymous, private, zero-filled on first touch
    buf.madvise(mmap.MADV_NOHUGEPAGE)
    return np.frombuffer(buf, dtype=dtype).reshape(shape)     # the array holds the map (its base) alive
