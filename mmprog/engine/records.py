"""What a fit records: one row per round and what the loop hands back (shared by the loop, checkpoints and the
other routes of the engine, so that none of them imports another for its types)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

#: The terminations a fit can end with.
TERMINATIONS = ("converged", "eps", "max_iter", "time_limit", "interrupted")


@dataclass
class IterationRecord:
    """One row of the history (and of the progress table)."""

    iteration: int
    objective: float          # master optimum after this round's solve (n-slack scale)
    lower_bound: float        # best master optimum so far
    upper_bound: float        # best full objective seen at an oracle call
    gap: float                # (upper − lower) / max(1, |upper|)
    max_violation: float
    n_cuts: int
    n_active: int
    cut_nnz: int              # non-zeros of the ΔF rows held by the working set (≈ 12 bytes each)
    new_cuts: int
    oracle_time: float
    pyomo_time: float
    solver_time: float
    elapsed: float


@dataclass
class EngineRun:
    """What a route of the engine returns; :class:`mmprog.result.Result` wraps it for users."""

    model: object
    solution: object
    history: list = field(default_factory=list)
    termination: str = "max_iter"
    n_iter: int = 0
    timings: dict = field(default_factory=dict)
    upper_bound: float = np.inf
    snapshots: dict = field(default_factory=dict)
    #: how a master of this fit is solved again (:func:`mmprog.engine.masters.solve_master`): what ``verify``
    #: uses to re-solve rebuilt masters the way the fit solved them
    solve_master: object = None

    def __post_init__(self):
        if self.solve_master is None:
            from .masters import solve_master
            self.solve_master = solve_master


class DeferredMaster:
    """A route's master of record, stated in Pyomo only when it is first read (:attr:`mmprog.result.Result.model`).

    Route ``bcfw`` solves no master: the Pyomo statement of its working set is what ``show``, ``export``,
    ``to_latex`` and ``verify`` read. Stating it at the end of every fit cost the elastic net's two variables per
    joint feature, about 4 s of the sklearn-crfsuite tutorial's fit (690,237 features), which a fit that only
    predicts never reads.

    Parameters
    ----------
    build : callable
        No arguments; returns the Pyomo model.
    n_cuts : int
        The cuts it will hold.
    master : str
        Its kind as the model will say it (``model.master``: ``"primal"`` or ``"dual"``).
    """

    def __init__(self, build, n_cuts, master):
        self.build, self.n_cuts, self.master = build, int(n_cuts), master


def load_pyomo_plugins():
    """Import ``pyomo.environ`` (Pyomo's plugins: its writers, solver factories, transformations) once the master
    a route handed back is read (:attr:`mmprog.result.Result.model`), so that ``model.write(...)`` and Pyomo's own
    solvers work on it.

    The programs state their masters with ``pyomo.core`` alone, and the native back ends never need the plugins:
    loading them (about 0.2 s of CPU, twice the rest of mmprog's own modules) is left out of the start-up before the
    first round (issue 37, item 4) and paid here, or by the first solve or export through Pyomo."""
    import pyomo.environ  # noqa: F401


def relative_gap(upper, lower):
    """(upper − lower) / max(1, |upper|): the certificate every route reports."""
    return (upper - lower) / max(1.0, abs(upper))


def history_as_dicts(history):
    """The history as JSON-able dicts (checkpoints, saved models)."""
    return [asdict(h) for h in history]
