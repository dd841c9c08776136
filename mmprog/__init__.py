"""mmprog: max-margin structured prediction where every learning problem is an explicit mathematical program.

Quick use::

    import mmprog
    ds = mmprog.datasets.synthetic_chain(n_instances=200, seed=0)
    res = mmprog.fit(ds, program="l1m3n", C=1.0)
    res.export("p1.lp")
"""
from .version import __version__  # noqa: F401

import os as _os
import sys as _sys

# `make` builds pynumero's ASL library (needed by cyipopt through Pyomo) inside the venv, not in $HOME; point Pyomo
# at it unless the user chose another place. Must happen before Pyomo is first imported.
if "PYOMO_CONFIG_DIR" not in _os.environ and _os.path.isdir(_os.path.join(_sys.prefix, "pyomo", "lib")):
    _os.environ["PYOMO_CONFIG_DIR"] = _os.path.join(_sys.prefix, "pyomo")


class _DeferredScipySubpackages:
    """Import finder that hands out ``scipy.stats``, ``scipy.spatial`` and ``scipy.integrate`` through
    :class:`importlib.util.LazyLoader`: each is executed on its first attribute access instead of when imported.

    Why: Pyomo's ``pyomo.common.dependencies._finalize_scipy`` imports all three as soon as anything imports scipy
    (mmprog imports ``scipy.sparse`` everywhere), and scipy.stats alone took 2.1 s of the 3.2 s that importing
    ``mmprog.api`` cost, though no program of mmprog fits with them. Code that does use them gets the real modules at
    first use. One-shot per name; installed only when none of them was imported before mmprog.
    """

    names = {"scipy.stats", "scipy.spatial", "scipy.integrate"}

    def find_spec(self, fullname, path, target=None):
        if fullname not in self.names:
            return None
        self.names.discard(fullname)
        import importlib.machinery
        import importlib.util
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = importlib.util.LazyLoader(spec.loader)
        return spec


if not any(n in _sys.modules for n in _DeferredScipySubpackages.names):
    _sys.meta_path.insert(0, _DeferredScipySubpackages())   # it must answer before the default PathFinder


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
    if name in ("datasets", "features", "inference", "metrics", "programs", "solvers", "duality", "engine",
                "result", "export", "estimators", "projections"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'mmprog' has no attribute {name!r}")
