"""The solver registry: every optimisation back end mmprog can hand a Pyomo master program to, by name.

:mod:`mmprog.solvers.base` defines the interface (:class:`Solver`, :class:`PersistentHandle`), the registry, the
normalised status vocabulary, :func:`classify` and the sign convention of :func:`duals`. Each back end is one module
of this package whose :class:`Solver` subclass is decorated with ``@register("name")``:

======================  ===============================================================================
``highs``               HiGHS through Pyomo's persistent contrib interface (and its persistent handle)
``ipopt``               Ipopt through cyipopt (PyNumero) or an ``ipopt`` executable
``glpk``, ``cbc``       LP executables through Pyomo's LP-file interface
``mosek``, ``gurobi``   Pyomo's direct and legacy persistent interfaces
``scip``                pyscipopt (Pyomo's ``scip_direct``) or a ``scip`` executable
``daqp``                DAQP, dense dual active-set QP in C (the Gram-dual masters' back end)
``pyomo_legacy``        what the back ends reached through Pyomo's legacy interfaces share
======================  ===============================================================================

Adding a back end means adding one module here and one import line below; the order of those lines is the
registry's order (the order ``mmprog solvers`` lists them and the cross-solver statements try them).
"""

# importing a back end's module registers it
from . import highs  # noqa: F401
from . import ipopt  # noqa: F401
from . import glpk  # noqa: F401
from . import cbc  # noqa: F401
from . import mosek  # noqa: F401
from . import gurobi  # noqa: F401
from . import scip  # noqa: F401
from . import daqp  # noqa: F401
from .base import (SOLUTION_STATUSES, SOLVE_TIME_LIMIT, TERMINATIONS, Availability, AvailabilityReport, PersistentHandle, ProblemClass,
                   Solver, SolveStatus, classify, default_solver, duals, format_table, get_solver, model_size, register,
                   registered, table, values_of)
from .base import __all__  # noqa: F401
