"""The ``mmprog`` command line: train, predict, evaluate, export, solvers, data, demo (and more as programs land).

Data are given as a loader name and a path or generator parameters, e.g. ``--data ocr:../shared/data/ocr_letters/letters.npz``,
``--data tsv:my.tsv``, ``--data synthetic:seed=0,n_instances=200`` (``mmprog data`` lists them).
Every command takes ``--json`` for machine-readable output. Errors are one line on stderr; the exit codes are a
contract (:data:`EPILOG`, docs/cli.md).

One module of this package per sub-command, found by name: a module that defines ``NAME`` (the sub-command),
``HELP`` (its line in ``mmprog --help``), ``ORDER`` (its place in that list), ``add_arguments(parser)`` and
``run(args) -> exit code`` is a command, so adding a command means adding one module. What the commands share is
in :mod:`mmprog.cli.common`.
"""
from __future__ import annotations

import contextlib
import sys

# Only the standard library is imported here, and KeyboardInterrupt is caught from the first line of main(); between
# this line and main() (the rest of `from mmprog.cli import main` in the mmprog script) the hook below says it in one
# line: a Ctrl-C at any moment after the interpreter has reached this module never shows a traceback.


def _interrupted_hook(exc_type, exc, tb, _previous=sys.excepthook):
    if issubclass(exc_type, KeyboardInterrupt) and "--debug" not in sys.argv:
        print("mmprog: interrupted", file=sys.stderr)
        return
    _previous(exc_type, exc, tb)


if sys.excepthook is sys.__excepthook__:
    sys.excepthook = _interrupted_hook

EPILOG = """exit codes:
  0    success
  1    verify or catalogue --check ran and found a failed check or drift
  2    bad input or parameter: one line naming the file and line or field, or the
       parameter, its range and the value got
  3    the environment failed the work: an output that cannot be written (read-only
       or full file system, no permission) or memory exhausted; one line naming the
       path and the OS error (a finished model is saved elsewhere and the line says
       where)
  4    a defect of mmprog: one line; rerun with --debug for the traceback
  130  interrupted by SIGINT (Ctrl-C), or by SIGTERM during a fit; a fit writes
       its --out and checkpoint first

Outputs never replace an input of the same command (refused before any work),
are written under a temporary name and renamed into place (umask permissions,
an overwritten file keeps its mode), and --out/--checkpoint/--export are tried
before a fit starts. Reference: docs/cli.md."""


def commands():
    """The command modules of this package, in their ``ORDER`` (then by name)."""
    import importlib
    import pkgutil
    mods = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(mod, "NAME") and hasattr(mod, "run"):
            mods.append(mod)
    return sorted(mods, key=lambda m: (getattr(m, "ORDER", 1000), m.NAME))


def build_parser():
    import argparse
    import shutil
    import textwrap

    from ..version import __version__
    # the epilog's table is kept as written (raw), so the description is wrapped here as argparse would wrap it
    width = shutil.get_terminal_size().columns - 2
    ap = argparse.ArgumentParser(prog="mmprog", description=textwrap.fill(__doc__.splitlines()[0], width),
                                 epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=f"mmprog {__version__}")
    ap.add_argument("-v", "--verbose", action="store_true", help="log the cutting-plane progress table")
    ap.add_argument("--debug", action="store_true", help="on an error, show the Python traceback too (for reports)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for mod in commands():
        p = sub.add_parser(mod.NAME, help=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(fn=mod.run)
    return ap


def main(argv=None):
    """Run one ``mmprog`` command line; returns the exit code (argparse's usage errors exit 2 through SystemExit).

    Every failure ends in one line on stderr and an exit code of the contract (:data:`EPILOG`); ``--debug`` lets
    the exception through, traceback and all."""
    if argv is None:                    # the process's own command line (the mmprog script, python -m mmprog.cli)
        no_collection_at_exit()
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv
    try:
        with _interrupts_outside_imports():
            return _dispatch(argv, debug)
    except KeyboardInterrupt:
        if debug:
            raise
        # outside a fit (starting, loading data, evaluating): nothing to keep
        print("mmprog: interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        from ..exceptions import caused_by_interrupt
        if debug or not (caused_by_interrupt(e) or _SIGINT_SEEN):
            raise
        print("mmprog: interrupted", file=sys.stderr)
        return 130


# Set by a SIGINT while a command runs outside a fit (cleared when the next command starts): whatever a library makes of the KeyboardInterrupt,
# the command then ends as interrupted (main, _dispatch).
_SIGINT_SEEN = []


def _importing(frame):
    """Whether ``frame`` runs inside Python's import machinery (a module being imported, C extensions included) or
    Pyomo's output capture (whose reader threads print a traceback when an interrupt lands in it)."""
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith("<frozen importlib") or name.endswith(("pyomo/common/tee.py", "pyomo\\common\\tee.py")):
            return True
        frame = frame.f_back
    return False


def _interrupt_outside_imports(signum, frame):
    """SIGINT while a command runs: KeyboardInterrupt, except inside an import, where it is asked again shortly.

    An interrupt raised inside an import is not always a KeyboardInterrupt by the time it leaves it: a C extension
    that imports a module of its own reports it as an ImportError (NumPy: "PyCapsule_Import could not import module
    datetime"), which a ``try: import ... except ImportError`` then swallows, and the signal is lost."""
    import signal
    _SIGINT_SEEN.append(signum)
    if _importing(frame):
        signal.setitimer(signal.ITIMER_REAL, 0.01)
        return
    raise KeyboardInterrupt


def _ask_again(signum, frame):
    import os
    import signal
    if _importing(frame):
        signal.setitimer(signal.ITIMER_REAL, 0.01)
        return
    # the SIGINT handler in force now decides: this module's, or a fit's (mmprog.engine.interrupts: a request)
    os.kill(os.getpid(), signal.SIGINT)


@contextlib.contextmanager
def _interrupts_outside_imports():
    """While a command runs (from the main thread, with Python's own SIGINT handling in force): SIGINT is raised as
    KeyboardInterrupt only outside imports (:func:`_interrupt_outside_imports`); the handlers are restored after."""
    import signal
    import threading
    _SIGINT_SEEN.clear()
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return
    saved = signal.signal(signal.SIGALRM, _ask_again), signal.signal(signal.SIGINT, _interrupt_outside_imports)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGINT, saved[1])
        signal.signal(signal.SIGALRM, saved[0])


def no_collection_at_exit():
    """Freeze the garbage collector's view of the heap (:func:`gc.freeze`) once the exit handlers registered after
    this one have run, so that Python's finalisation does not run full collections over everything NumPy, SciPy,
    numba and Pyomo allocated: those took about 0.3 s of a one-round ``mmprog train`` on 100 sentences (issue 37,
    item 4), for memory the process hands back anyway. Nothing is lost: every file mmprog writes is closed (and
    renamed) before the command returns, standard output is flushed by :func:`main`, and the handlers that finish
    work (logging's, ``weakref.finalize``'s, worker pools') run first (atexit runs the last registered first)."""
    import atexit
    import gc
    atexit.register(gc.freeze)


def _dispatch(argv, debug):
    import logging

    from ..exceptions import EnvironmentFailure, MMProgError
    from .common import EXIT_BAD_INPUT, EXIT_ENVIRONMENT, EXIT_INTERNAL, EXIT_INTERRUPTED
    args = build_parser().parse_args(argv)
    try:
        from ..engine import interrupts
        from ..engine.memory import keep_freed_memory
        # before any large array exists: large rounds otherwise pay the kernel to zero fresh pages (engine.memory)
        keep_freed_memory()
        logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(message)s")
        interrupts.forget()             # a command run in-process after another starts with no signal pending
        rc = args.fn(args)
        if not rc and (interrupts.pending() or _SIGINT_SEEN):
            # the signal came while a fit was ending and the fit finished anyway, or a library swallowed the
            # KeyboardInterrupt: the command did its work (a train has saved its model and stopped there,
            # mmprog.cli.common.save_first) and says it was asked to stop
            sig = interrupts.pending()
            when = f" ({sig} during the last round of a fit that finished)" if sig else ""
            print(f"mmprog: interrupted{when}", file=sys.stderr)
            rc = EXIT_INTERRUPTED
        try:
            sys.stdout.flush()          # a full or closed standard output fails here, not at exit
        except OSError as e:
            e.filename = "standard output"
            raise
        return int(rc or 0)
    except KeyboardInterrupt:
        raise
    except Exception as e:
        from ..exceptions import caused_by_interrupt
        # an interruption that a library turned into another exception (or into a verdict such as "solver not
        # found") is reported as the interruption it is, not as bad input or a defect
        if debug or caused_by_interrupt(e) or _SIGINT_SEEN:
            raise
        if isinstance(e, EnvironmentFailure):
            return _fail(str(e), EXIT_ENVIRONMENT)
        if isinstance(e, MMProgError):
            return _fail(str(e), EXIT_BAD_INPUT)
        if isinstance(e, (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)):
            return _fail(f"{e.filename}: {e.strerror}", EXIT_BAD_INPUT)
        if isinstance(e, BrokenPipeError):
            _silence_stdout()
            return _fail("standard output was closed before the output was written (broken pipe)", EXIT_ENVIRONMENT)
        if isinstance(e, OSError):
            if e.filename in (None, "standard output"):
                _silence_stdout()
            where = e.filename if e.filename is not None else "writing the output"
            return _fail(f"{where}: {e.strerror or e}", EXIT_ENVIRONMENT)
        if isinstance(e, MemoryError):
            return _fail(f"out of memory ({e or 'MemoryError'}); try smaller data or --max-cuts", EXIT_ENVIRONMENT)
        from ..datasets.reading import one_line
        return _fail(f"internal error ({type(e).__name__}: {one_line(e)[:300]}); this is a defect of mmprog: rerun "
                     f"with --debug and report the traceback", EXIT_INTERNAL)


def _fail(message, code):
    print(f"mmprog: error: {message}", file=sys.stderr)
    return code


def _silence_stdout():
    """Point standard output at /dev/null, so that the interpreter's last flush at exit cannot fail again (only
    the process's own standard output, never a stream put in its place by a caller)."""
    import os
    if sys.stdout is not sys.__stdout__:
        return
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass
