"""``mmprog.fit``: dataset → feature map → oracle → program + solver → cutting-plane loop → :class:`Result`."""
from __future__ import annotations

import numpy as np

from .exceptions import check_param
from .programs import get_program


def fit(dataset, program="m3n", C=1.0, solver=None, slack=None, eps=1e-3, max_iter=500, time_limit=None,
        oracle="serial", n_jobs=None, client=None, chunk_size=None, feature_map=None, drop_after=None,
        progress=False, show=None, show_every=None, snapshot_iters=(), **program_params):
    """Train a max-margin structured predictor by growing the program's master cut by cut.

    Parameters
    ----------
    dataset : SequenceDataset or TreeDataset
        Validated training data.
    program : str
        A registered program (``mmprog.programs.registered()``): ``"m3n"`` (P0, QP), ``"l1m3n"`` (P1, LP), ...
    C : float
        Slack weight on the n-slack scale: the objective is Ω(w) + C Σᵢ ξᵢ in both slack forms.
    solver : str, optional
        Registered solver name; default: the program's ``preferred_solver(dim)`` when it has one (``m3n``'s Gram
        dual master: ``daqp`` where installed), else :func:`mmprog.solvers.default_solver` of the program's class.
    slack : {"n", "one"}, optional
        Default: the program's own (``default_slack``: "one" for the 1-slack methods mtl and pblock, else "n").
    eps : float
        Violation tolerance of the stopping rule.
    max_iter : int
    time_limit : float, optional
        Wall-clock seconds.
    oracle : {"serial", "process", "dask"}
    n_jobs, client, chunk_size
        Oracle backend settings (see :class:`mmprog.oracle.Oracle`).
    feature_map : JointFeatureMap, optional
        Default: the linear chain for sequences, first-order arcs for trees.
    drop_after : int, optional
        Drop cuts inactive for this many rounds.
    **program_params
        The program's own hyper-parameters (e.g. ``master="dual"`` for m3n).

    Returns
    -------
    Result
    """
    from . import solvers as solver_registry
    from .features import feature_map_for
    from .oracle import Oracle
    from .result import Result

    prog = get_program(program, C=C, **program_params)
    slack = slack or getattr(prog, "default_slack", "n")
    check_param("slack", slack, slack in ("n", "one"), '"n" or "one"')
    fmap = feature_map if feature_map is not None else feature_map_for(dataset)
    # a program may prefer a back end for the master it builds at this size (m3n's Gram dual: daqp)
    preferred = getattr(prog, "preferred_solver", None)
    solver_name = solver or (preferred(fmap.dim) if preferred else None) \
        or solver_registry.default_solver(prog.problem_class)
    slv = solver_registry.get_solver(solver_name)
    slv.require(prog.problem_class)
    prepared = fmap.prepare(dataset)
    orc = Oracle(fmap, prepared, backend=oracle, n_jobs=n_jobs, client=client, chunk_size=chunk_size)
    try:
        kw = dict(solver=slv, slack=slack, eps=eps, max_iter=max_iter, time_limit=time_limit,
                  drop_after=drop_after, progress=progress, show=show, show_every=show_every,
                  snapshot_iters=tuple(snapshot_iters))
        if hasattr(prog, "fit"):
            # programs with an outer loop (EM over the cutting-plane master, variational updates) drive the engine
            run = prog.fit(orc, **kw)
        else:
            from .cutting_plane import run as engine_run
            run = engine_run(prog, orc, **kw)
    finally:
        orc.close()
    # a program with an outer loop may predict through its own map (PoMEN's h₂ sums out hidden nodes)
    fmap = getattr(run, "feature_map", None) or fmap
    return Result(fmap, run, program, prog.params(), solver_name, slack,
                  label_names=getattr(dataset, "label_names", None))


def nonzero_weights(w, tol=1e-8):
    """How many weights are non-zero (|w_k| > tol)."""
    return int(np.count_nonzero(np.abs(np.asarray(w)) > tol))
