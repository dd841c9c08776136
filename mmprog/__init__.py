"""mmprog: max-margin structured prediction where every learning problem is an explicit mathematical program.

Quick use::

    import mmprog
    ds = mmprog.datasets.synthetic_chain(n_instances=200, seed=0)
    res = mmprog.fit(ds, program="l1m3n", C=1.0)
    res.export("p1.lp")
"""
__version__ = "0.1.0"

import os as _os
import sys as _sys

# `make` builds pynumero's ASL library (needed by cyipopt through Pyomo) inside the venv, not in $HOME; point Pyomo
# at it unless the user chose another place. Must happen before Pyomo is first imported.
if "PYOMO_CONFIG_DIR" not in _os.environ and _os.path.isdir(_os.path.join(_sys.prefix, "pyomo", "lib")):
    _os.environ["PYOMO_CONFIG_DIR"] = _os.path.join(_sys.prefix, "pyomo")


def __getattr__(name):
    # lazy: importing mmprog stays cheap (no Pyomo) for the inference kernels and the data loaders
    if name == "fit":
        from .api import fit
        return fit
    if name == "load":
        from .result import load
        return load
    if name in ("M3N", "LInfMaxMargin", "StructuredEstimator"):
        from . import estimators
        return getattr(estimators, name)
    if name in ("datasets", "features", "inference", "metrics", "programs", "solvers", "duality", "oracle",
                "cutting_plane", "result", "export", "estimators", "projections"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'mmprog' has no attribute {name!r}")
