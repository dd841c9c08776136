"""One module per mathematical program, registered by name (see :mod:`mmprog.programs.base`).

Every module of this package is found here (:data:`MODULES`, imported on first use), so adding a program means writing
one module whose class is decorated with ``@register("name")`` — the module named as the program — nothing else to
edit.
"""
import importlib
import pkgutil

from .base import Dims, MasterState, Program, Solution, get_program, register, registered

#: The program modules (l1m3n and m3n first, then by name), the order :func:`registered` lists their programs in; each
#: registers the program of its own name. They are imported when a program is asked for (:func:`get_program` imports
#: the one named, :func:`registered` all of them), not with this package: a fit of P0 skips the other nine (~50-60 ms
#: of a start-up, issue 37 item 4).
MODULES = tuple(m.name for m in sorted(pkgutil.iter_modules(__path__),
                                       key=lambda m: (m.name not in ("m3n", "l1m3n"), m.name))
                if not m.name.startswith("_") and m.name not in ("base", "statements"))


def load(name=None):
    """Import the program module ``name`` (one of :data:`MODULES`), or every one of them (None)."""
    for m in MODULES if name is None else [name]:
        importlib.import_module(f"{__name__}.{m}")


__all__ = ["Dims", "MasterState", "Program", "Solution", "get_program", "register", "registered"]
