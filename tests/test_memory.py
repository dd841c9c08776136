"""mmprog.memory: freed large blocks are reused by the process (no fresh page faults), and the switch turns it off.

Measured by minor page faults in a fresh interpreter: a 256 MB array allocated, touched and freed five times faults
its pages in once when the heap is kept, five times with glibc's default mmap/munmap of large blocks."""
import os
import platform
import subprocess
import sys

import pytest

SCRIPT = r"""
import resource, numpy as np
from mmprog.memory import keep_freed_memory
print(keep_freed_memory())
faults = []
for _ in range(5):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    a = np.ones(32 * 2**20)          # 256 MB, every page touched
    del a
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(*faults)
"""


def _run(env_value):
    env = dict(os.environ)
    env.pop("MALLOC_MMAP_MAX_", None)
    env.pop("MALLOC_TRIM_THRESHOLD_", None)
    if env_value is None:
        env.pop("MMPROG_MALLOC", None)
    else:
        env["MMPROG_MALLOC"] = env_value
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True).stdout
    what, faults = out.strip().splitlines()
    return what, [int(f) for f in faults.split()]


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_kept_heap_reuses_freed_blocks_and_the_switch_restores_the_default():
    what, kept = _run(None)
    assert what == "kept"
    # the first allocation faults its pages in (128 faults or more: 2 MB huge pages when numpy gets them, else 4 kB
    # pages); the later ones reuse them (a few pages of bookkeeping at most)
    assert kept[0] >= 128
    assert max(kept[1:]) < kept[0] // 20, kept
    what, system = _run("system")
    assert what == "disabled by MMPROG_MALLOC=system"
    # glibc's default: every 256 MB block is a fresh mapping, faulted in again each time
    assert min(system[1:]) > system[0] // 2, system
