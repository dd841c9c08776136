"""One module per mathematical program, registered by name (see :mod:`mmprog.programs.base`)."""
from .base import Dims, Program, Solution, get_program, register, registered
from . import m3n, l1m3n  # noqa: F401  (registration)

__all__ = ["Dims", "Program", "Solution", "get_program", "register", "registered"]
