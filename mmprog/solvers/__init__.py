"""The solver registry (moving into one module per back end beside :mod:`mmprog.solvers.base`)."""

from .base import *  # noqa: F401,F403
from .base import _REGISTRY, _INSTANCES, _finish, HIGHS_STATUS, IPOPT_STATUS  # noqa: F401
from .base import __all__  # noqa: F401
