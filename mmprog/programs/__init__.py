"""One module per mathematical program, registered by name (see :mod:`mmprog.programs.base`).

Every module of this package is imported here, so adding a program means writing one module whose class is
decorated with ``@register("name")`` — nothing else to edit.
"""
import importlib
import pkgutil

from .base import Dims, MasterState, Program, Solution, get_program, register, registered

for _m in sorted(pkgutil.iter_modules(__path__), key=lambda m: (m.name not in ("m3n", "l1m3n"), m.name)):
    if not _m.name.startswith("_") and _m.name not in ("base", "statements"):
        importlib.import_module(f"{__name__}.{_m.name}")

__all__ = ["Dims", "MasterState", "Program", "Solution", "get_program", "register", "registered"]
