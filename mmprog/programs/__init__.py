"""One module per mathematical program, registered by name (see :mod:`mmprog.programs.base`).

Every module of this package is found here (:data:`MODULES`, imported on first use), so adding a program means writing
one module whose class is decorated with ``@register("name")`` — the module named as the program — nothing else to
edit.
"""
import ast
import functools
import importlib
import importlib.util
import pkgutil

from .base import Dims, MasterState, Program, Solution, get_program, register, registered

#: The program modules (m3n and l1m3n first, then by name); each registers the program of its own name. They are
#: imported when a program is asked for (:func:`get_program` imports the one named, :func:`registered` all of them),
#: not with this package: a fit of P0 skips the other eight (~50-60 ms of a start-up, issue 37 item 4).
MODULES = tuple(m.name for m in sorted(pkgutil.iter_modules(__path__),
                                       key=lambda m: (m.name not in ("m3n", "l1m3n"), m.name))
                if not m.name.startswith("_") and m.name not in ("base", "statements"))


def load(name=None):
    """Import the program module ``name`` (one of :data:`MODULES`), or every one of them (None)."""
    for m in MODULES if name is None else [name]:
        importlib.import_module(f"{__name__}.{m}")


@functools.lru_cache(maxsize=None)
def registration_order():
    """The program modules in the order importing :data:`MODULES` one after the other registers their programs in
    a fresh process (a module registers after the program modules it imports: adapm3n after lapm3n): the order
    :func:`registered` lists them in, whichever a process happened to import first. Read from the modules' own
    imports of each other (``from .name import``), without importing them."""
    deps = {}
    for m in MODULES:
        spec = importlib.util.find_spec(f"{__name__}.{m}")
        tree = ast.parse(open(spec.origin, encoding="utf-8").read())
        deps[m] = [n.module.split(".")[0] for n in tree.body if isinstance(n, ast.ImportFrom) and n.level == 1
                   and n.module and n.module.split(".")[0] in MODULES and n.module.split(".")[0] != m]
    order = []

    def visit(m):
        if m not in order:
            for d in deps[m]:
                visit(d)
            order.append(m)
    for m in MODULES:
        visit(m)
    return tuple(order)


__all__ = ["Dims", "MasterState", "Program", "Solution", "get_program", "register", "registered"]
