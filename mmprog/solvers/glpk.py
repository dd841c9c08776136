"""GLPK's ``glpsol`` through Pyomo's LP-file interface, with its own reading of glpsol's status lines."""

from __future__ import annotations

from .base import register
from .pyomo_legacy import ExecutableLPSolver

#: glpsol's final status lines -> normalised termination (Pyomo's GLPK plugin maps some of them to "other").
GLPK_STATUS = {
    "OPTIMAL LP SOLUTION FOUND": "optimal",
    "INTEGER OPTIMAL SOLUTION FOUND": "optimal",
    "LP HAS NO PRIMAL FEASIBLE SOLUTION": "infeasible",
    "PROBLEM HAS NO PRIMAL FEASIBLE SOLUTION": "infeasible",
    "PROBLEM HAS NO FEASIBLE SOLUTION": "infeasible",
    "LP HAS UNBOUNDED PRIMAL SOLUTION": "unbounded",
    "PROBLEM HAS UNBOUNDED SOLUTION": "unbounded",
    "LP HAS NO DUAL FEASIBLE SOLUTION": "infeasible_or_unbounded",
    "PROBLEM HAS NO DUAL FEASIBLE SOLUTION": "infeasible_or_unbounded",
    "TIME LIMIT EXCEEDED": "max_time",
    "ITERATION LIMIT EXCEEDED": "max_iterations",
}


def _glpk_log_status(log):
    """The last glpsol status line found in its log, as (termination, words), or None."""
    found = None
    for line in log.splitlines():
        for words, termination in GLPK_STATUS.items():
            if words in line.upper():
                found = (termination, f"glpsol: {line.strip()}")
    return found


@register("glpk")
class GlpkSolver(ExecutableLPSolver):
    """GLPK's ``glpsol`` (simplex) through Pyomo's LP-file interface."""

    description = "GLPK glpsol (simplex), LP only, through LP files"
    install = "install it with: apt-get install glpk-utils"
    executable = "glpsol"
    factory_name = "glpk"
    time_option = "tmlim"
    log_status = staticmethod(_glpk_log_status)
