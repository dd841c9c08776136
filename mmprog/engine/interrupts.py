"""SIGINT / SIGTERM during a fit: finish the round, keep the best point.

A fit on a full corpus takes an hour or more; one Ctrl-C or a scheduler's SIGTERM must not lose it. While
:func:`catch_interrupts` is active, the first signal only sets a flag that the cutting-plane loop reads between
phases (:func:`requested`): the round under way finishes or is abandoned cleanly and the fit returns its best point
with termination ``"interrupted"``. A second signal raises :class:`KeyboardInterrupt` at once (a solve stuck in C
code is abandoned); the loop catches it and still returns the last solved master.

A signal that comes during a fit's last round, which then ends ``converged`` (or by another rule before it reads the
request), is not dropped when the fit returns: it stays :func:`pending` until :func:`forget` is called, so that a
caller running several fits (a C path) stops after the one under way, and a command writes its outputs and exits
130 as the signal asked.

Handlers can only be installed from the main thread; elsewhere (a fit inside a worker thread) signals keep their
default behaviour and :func:`requested` stays False.
"""
from __future__ import annotations

import contextlib
import logging
import signal
import threading

log = logging.getLogger("mmprog.engine.interrupts")

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_state = {"depth": 0, "signal": None, "pending": None}


def requested():
    """The name of the signal received since the outermost :func:`catch_interrupts` began, or None."""
    return _state["signal"]


def pending():
    """The name of the signal received during a fit since the last :func:`forget`, or None.

    Unlike :func:`requested` it outlives the fit: it is how a signal that arrived while a fit was ending (the fit
    returned ``converged``, not ``interrupted``) still stops the caller's next fit and the command."""
    return _state["pending"]


def forget():
    """Clear :func:`pending`: a caller starting a sequence of fits (a command, a C path) is not stopped by a signal
    that an earlier, finished sequence received."""
    _state["pending"] = None


def _handler(signum, frame):
    name = signal.Signals(signum).name
    if _state["signal"] is not None:
        raise KeyboardInterrupt(f"second {name}: abandoning the round under way")
    _state["signal"] = _state["pending"] = name
    log.warning("%s received: finishing the current round, then returning the best point so far "
                "(send it again to abandon the round)", name)


@contextlib.contextmanager
def catch_interrupts():
    """Turn SIGINT and SIGTERM into a request the fit honours at its next phase boundary (re-entrant: nested uses
    share the outermost handlers and flag). The request is cleared when the outermost use exits; it stays
    :func:`pending` past it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if _state["depth"] == 0:
        _state["signal"] = None
        previous = {s: signal.signal(s, _handler) for s in _SIGNALS}
    _state["depth"] += 1
    try:
        yield
    finally:
        _state["depth"] -= 1
        if _state["depth"] == 0:
            for s, h in previous.items():
                signal.signal(s, h)
            _state["signal"] = None
