"""Writing a master program to a file (``.lp``, ``.mps``, ``.nl``, ``.gms``) with readable names."""
from __future__ import annotations

import os

from .exceptions import ParameterError

FORMATS = {".lp": "lp", ".mps": "mps", ".nl": "nl", ".gms": "gams"}


def write_model(model, path, fmt=None):
    """Write ``model`` with symbolic names (``w[3]``, ``xi[0]``, ``cuts[12]``) to ``path``.

    The format follows the extension unless ``fmt`` is given. Written to a temporary file and moved into place, so
    a failed write leaves nothing behind (a device or pipe such as ``/dev/null`` is written in place); the file
    gets the umask's permissions, or keeps its mode when it is overwritten.
    """
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    fmt = fmt or FORMATS.get(ext)
    if fmt not in FORMATS.values():
        raise ParameterError(f"export format must be one of {', '.join(FORMATS)} (by extension) or fmt=; "
                             f"got {path!r}")
    import pyomo.environ  # noqa: F401  (Pyomo's writers register with its plugins: the masters use pyomo.core only)
    from pyomo.opt import ProblemFormat

    from .datasets.reading import publish
    # Pyomo names the LP format "cpxlp"; passing its enum keeps it from warning about the extension
    pf = {"lp": ProblemFormat.cpxlp, "mps": ProblemFormat.mps, "nl": ProblemFormat.nl, "gams": ProblemFormat.gams}[fmt]
    if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
        model.write(path, format=pf, io_options={"symbolic_solver_labels": True})     # a device: renaming would
        return path                                                                    # replace the device node
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    tmp = os.path.join(d, f".{os.path.basename(path)}.tmp{ext}")
    try:
        model.write(tmp, format=pf, io_options={"symbolic_solver_labels": True})
        publish(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
        row = os.path.splitext(tmp)[0] + ".row"
        col = os.path.splitext(tmp)[0] + ".col"
        for extra in (row, col):
            if os.path.exists(extra):
                os.unlink(extra)
    return path
