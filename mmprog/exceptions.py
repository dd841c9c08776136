"""The one exceptions module of mmprog.

Every message is a single line that names what is wrong (file, line, field, parameter, allowed range, value got)
and, where it can, what to change.
"""


class MMProgError(Exception):
    """Base class of all mmprog errors."""


class DataError(MMProgError, ValueError):
    """Invalid input data: a file, line or field that does not fit the expected format, or an array that does not
    fit the data model. A ``ValueError`` so that generic callers (scikit-learn) treat it as bad input."""


class ParameterError(MMProgError, ValueError):
    """A hyper-parameter outside its allowed range: the message names the parameter, the range and the value got."""


class SolverUnavailable(MMProgError, RuntimeError):
    """A solver cannot be used: not installed, no licence, licence too small for the model, or it cannot take the
    program's class. Raised before any work is done."""


class SolverError(MMProgError, RuntimeError):
    """A solve ended without a trustworthy optimum (infeasible, unbounded, limit hit, numerical trouble). Carries the
    solver's own words in ``solver_message`` and the normalised ``termination``."""

    def __init__(self, message, *, termination=None, solver_message=None):
        super().__init__(message)
        self.termination = termination
        self.solver_message = solver_message


class ModelFileError(MMProgError, ValueError):
    """A saved model (JSON + .npz) that cannot be read back: missing file, wrong version, missing field, or an
    ``.npz`` whose checksum is not the one its ``.json`` recorded."""


class EnvironmentFailure(MMProgError, OSError):
    """The machine, not the input, stopped the work: an output that cannot be written (read-only or full file
    system, no permission), named with the OS error. The command line exits with code 3 on it."""


def check_param(name, value, ok, allowed):
    """Raise :class:`ParameterError` unless ``ok``; the message names the parameter, the allowed range and the value.

    Parameters
    ----------
    name : str
        Parameter name as the user wrote it.
    value : object
        The value received.
    ok : bool
        Whether the value is acceptable.
    allowed : str
        Human description of the allowed range, e.g. ``"a float > 0"``.
    """
    if not ok:
        raise ParameterError(f"{name} must be {allowed}; got {value!r}")
    return value


def check_n_jobs(n_jobs, name="n_jobs"):
    """``n_jobs`` must be None (every core) or an int >= 1: 0 or -2 would otherwise be taken silently as None or
    fail deep inside a worker pool after the features are built."""
    from numbers import Integral
    ok = n_jobs is None or (isinstance(n_jobs, Integral) and not isinstance(n_jobs, bool) and n_jobs >= 1)
    return check_param(name, n_jobs, ok, "None (every core) or an int >= 1")


def caused_by_interrupt(exc):
    """Whether ``exc`` was raised because of a KeyboardInterrupt (Ctrl-C): Python and some libraries turn one that
    lands in their code into another exception with the interrupt as its cause or context (a class body's
    ``__set_name__`` gives a RuntimeError; Pyomo's output capture re-raises from its reader threads). Such an
    exception is an interruption, not a failure to report (or to remember, as a solver's availability)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False
