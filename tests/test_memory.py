"""mmprog.engine.memory: what each allocator mode does with freed blocks, measured by minor page faults in a fresh
interpreter: an array is allocated, touched and freed five times, and each allocation's faults are counted. A
block that is reused faults (almost) nothing; one that comes back from the kernel faults all its pages again. And
zeros_on_touch: only the pages written become resident."""
import os
import platform
import subprocess
import sys

import pytest

SCRIPT = r"""
import resource, sys, numpy as np
from mmprog.engine.memory import keep_freed_memory
print(keep_freed_memory(*sys.argv[1:]))
for mb in (256, 24):            # above and below the mapped mode's 32 MB
    faults = []
    for _ in range(5):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        a = np.ones(mb * 2**17)             # every page touched
        del a
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    print(*faults)
"""

glibc_only = pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                                reason="glibc only")


def _run(env_value, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env.pop("MMPROG_MALLOC", None)
    if env_value is not None:
        env["MMPROG_MALLOC"] = env_value
    out = subprocess.run([sys.executable, "-c", SCRIPT, *args], env=env, capture_output=True, text=True,
                         check=True).stdout
    what, big, small = out.strip().splitlines()
    return what, [int(f) for f in big.split()], [int(f) for f in small.split()]


def _reused(faults, pages):
    # later allocations fault a few pages of bookkeeping at most (2 MB huge pages or 4 kB ones: `pages` is the
    # fewest the block can fault in, at huge pages)
    return max(faults[1:]) < max(pages // 4, 8)


def _fresh(faults, pages):
    return min(faults[1:]) >= pages


@glibc_only
def test_mapped_is_the_default_and_maps_only_blocks_of_32_mb_or_more():
    what, big, small = _run(None)
    assert what == "mapped"
    assert _fresh(big, 128), big                 # 256 MB: its own mapping, given back, faulted in again
    assert _reused(small, 12), small             # 24 MB: heap, never trimmed, reused


@glibc_only
def test_kept_reuses_every_freed_block():
    what, big, small = _run("kept")
    assert what == "kept"
    assert big[0] >= 128 and _reused(big, 128), big
    assert _reused(small, 12), small


@glibc_only
def test_system_leaves_glibc_alone_and_the_argument_overrides_the_environment():
    what, big, _ = _run("system")
    assert what == "disabled by MMPROG_MALLOC=system"
    assert _fresh(big, 128), big                 # glibc's default: every 256 MB block is a fresh mapping
    what, big, _ = _run("system", "kept")
    assert what == "kept" and _reused(big, 128), big


def test_an_unknown_mode_is_reported_not_applied():
    from mmprog.engine.memory import keep_freed_memory
    assert keep_freed_memory("heap") == "MMPROG_MALLOC='heap' is not one of kept, mapped, system: the system " \
                                         "allocator is used"


linux_only = pytest.mark.skipif(platform.system() != "Linux", reason="Linux only (/proc, madvise)")


def mapped(a):
    """Whether ``a`` views an anonymous map (:func:`~mmprog.engine.memory.zeros_on_touch`'s arrays), not numpy's own
    memory."""
    import mmap
    while a is not None and not isinstance(a, mmap.mmap):
        a = a.obj if isinstance(a, memoryview) else getattr(a, "base", None)
    return a is not None


@linux_only
def test_zeros_on_touch_commits_only_the_pages_written():
    """64 MiB of slot Gram matrices (2,048 examples × 64 × 64 slots), one slot of each example written: about 8 MiB
    become resident (a 4 KiB page an example), not the 64 MiB that huge pages commit; the rest reads as zeros and
    the array outlives the function's own reference to its map."""
    import gc

    import numpy as np

    from mmprog.engine.memory import zeros_on_touch

    def resident_mib():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20

    gram = zeros_on_touch((2048, 64, 64))
    assert mapped(gram) and gram.dtype == np.float64 and gram.flags.c_contiguous and gram.flags.writeable
    gc.collect()
    before = resident_mib()
    gram[:, 0, 0] = np.arange(1, 2049)
    grown = resident_mib() - before
    assert 4 <= grown <= 24, grown
    assert gram[:, 0, 0].sum() == 2048 * 2049 / 2 and not gram[:, 1:, :].any() and not gram[:, 0, 1:].any()
    lab = zeros_on_touch((64, 1 << 16), np.int16)       # 8 MiB of int16 labelings
    assert lab.dtype == np.int16 and not lab.any()
    small = zeros_on_touch((4, 4))
    assert not mapped(small) and not small.any()
