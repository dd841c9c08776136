"""Run one system of a bench in a child process of its own and take its peak memory from the kernel.

(:mod:`mmprog.bench.crf` has the same helper as a private function; this is the shared, public one.)
"""
from __future__ import annotations

import os
import subprocess
import threading
import time

__all__ = ["run_child"]


def run_child(argv):
    """Run ``argv`` and wait for it.

    Returns
    -------
    (str, float, float)
        Its standard output, its peak resident memory in MB (``ru_maxrss`` of the child, taken with ``wait4``:
        ``Popen.communicate`` would reap the child first) and its wall-clock seconds.

    Raises
    ------
    RuntimeError
        The child exited non-zero; the message is the last line of its standard error.
    """
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out_chunks, err_chunks = [], []

    def pump(stream, sink):
        for line in stream:
            sink.append(line)
    threads = [threading.Thread(target=pump, args=(proc.stdout, out_chunks)),
               threading.Thread(target=pump, args=(proc.stderr, err_chunks))]
    for t in threads:
        t.start()
    _, status, usage = os.wait4(proc.pid, 0)
    for t in threads:
        t.join()
    code = os.waitstatus_to_exitcode(status)
    if code:
        tail = "".join(err_chunks).strip().splitlines()[-1:] or ["(no message)"]
        raise RuntimeError(f"child exited {code}: {tail[0]}")
    return "".join(out_chunks), usage.ru_maxrss / 1024, time.perf_counter() - t0
