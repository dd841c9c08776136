"""COIN-OR CBC (CLP's simplex for LPs) through Pyomo's LP-file interface."""

from __future__ import annotations

from .base import register
from .pyomo_legacy import ExecutableLPSolver


@register("cbc")
class CbcSolver(ExecutableLPSolver):
    """COIN-OR CBC (CLP's simplex for LPs) through Pyomo's LP-file interface."""

    description = "COIN-OR CBC/CLP, LP only, through LP files"
    install = "install it with: apt-get install coinor-cbc"
    executable = "cbc"
    factory_name = "cbc"
    time_option = "sec"
