"""``mmprog.fit``: dataset → feature map → oracle → program + solver → cutting-plane loop → :class:`Result`."""
from __future__ import annotations

import numpy as np

from .exceptions import ParameterError, check_n_jobs, check_param
from .programs import get_program


#: the settings only the cutting plane reads: giving one makes ``route="auto"`` choose the cutting plane. ``solver`` is
#: not one: on route bcfw it solves the master of record (:func:`solve_master_of_record`), so swapping it keeps the
#: route that certifies the fit (issue 37: the cutting plane cannot certify CoNLL-2000 in useful time)
CUTTING_PLANE_SETTINGS = ("eps", "drop_after", "max_cuts", "show", "show_every", "snapshot_iters",
                          "solve_time_limit", "checkpoint", "checkpoint_every", "resume", "stabilise", "line_search")


#: ``max_iter`` when none is given: rounds of the cutting plane, passes of bcfw (a pass is one loss-augmented
#: inference per example, a fraction of a round's cost; the synthetic chains of ``make demo`` take ~600 to gap 1e-2)
DEFAULT_MAX_ITER = {"cutting-plane": 500, "bcfw": 10_000}


def fit(dataset, program=None, C=None, solver=None, slack=None, eps=None, max_iter=None, time_limit=None,
        oracle="serial", n_jobs=None, client=None, chunk_size=None, feature_map=None, drop_after=None,
        max_cuts=None, progress=False, show=None, show_every=None, snapshot_iters=(), solve_time_limit=None,
        checkpoint=None, checkpoint_every=None, resume=None, stabilise=None, inout_weight=0.8, line_search=0,
        gap_tol=None, order=1, transitions="all", route="auto", warm_start=None, **program_params):
    """Train a max-margin structured predictor by growing the program's master cut by cut.

    Parameters
    ----------
    dataset : SequenceDataset or TreeDataset
        Validated training data.
    program : str, optional
        A registered program (``mmprog.programs.registered()``): ``"m3n"`` (P0, QP; the default), ``"l1m3n"``
        (P1, LP), ...
    C : float, optional
        Slack weight on the n-slack scale: the objective is Ω(w) + C Σᵢ ξᵢ in both slack forms (default 1.0).
    solver : str, optional
        Registered solver name; default: the program's ``preferred_solver(dim)`` when it has one (``m3n``'s Gram
        dual master: ``daqp`` where installed), else :func:`mmprog.solvers.default_solver` of the program's class.
        On route ``"bcfw"`` (which has no QP master of its own; also under ``route="auto"`` where bcfw covers the
        fit) a given solver solves P0's master on the route's working set once the gap is certified, its optimum
        checked to lie within the certified bounds (``result.master_solve``): swapping it changes the statement of
        record's solver, not the route nor w.
    slack : {"n", "one"}, optional
        Default: the program's own (``default_slack``: "one" for the 1-slack methods mtl and pblock, else "n").
    eps : float, optional
        The ε rule, an option of the cutting plane: also stop once no constraint is violated by more than ε
        (termination ``"eps"`` unless the gap holds too; see :class:`mmprog.engine.loop.Settings`). Default None:
        the certificate alone (``gap_tol``) ends the fit.
    max_iter : int, optional
        Rounds of the cutting plane; passes over the examples on route ``"bcfw"`` (default
        :data:`DEFAULT_MAX_ITER`: 500 rounds, 10,000 passes).
    time_limit : float, optional
        Wall-clock seconds.
    oracle : {"serial", "thread", "process", "dask"}
    n_jobs, client, chunk_size
        Oracle backend settings (see :class:`mmprog.engine.oracle.Oracle`).
    feature_map : JointFeatureMap, optional
        Default: the linear chain for sequences, first-order arcs for trees.
    order : {1, 2}
        Markov order of the default chain map's labels (sequences only): 2 adds label-trigram features, decoded by
        Viterbi over label pairs (see :class:`~mmprog.features.ChainFeatureMap`).
    transitions : {"all", "seen"}
        With ``order=2``: "seen" confines the labelings to the label bigrams seen in the training labels
        (:func:`~mmprog.features.chain.allowed_bigrams`), which makes the pair Viterbi cheaper (IOBES labels of
        CoNLL-2000: 2,050 trigram terms a position instead of 64,000) and is kept in the model; "all" (default) searches every labeling.
    drop_after : int, optional
        Drop cuts inactive for this many rounds.
    max_cuts : int, optional
        Bound on the active cuts of each slack: beyond it the oldest are replaced by their α-weighted average, one
        aggregated cut that keeps the master's optimum (see :func:`mmprog.engine.loop.run`). Bounds the memory of
        1-slack fits on large corpora whose cuts are explicit rows of millions of non-zeros (mtl, pblock, real-valued
        features); m3n's Gram dual holds 1-slack cuts of 0/1 token features as labelings (:class:`mmprog.cuts.
        LabelingCut`, ~1 MB a cut on full CoNLL-2002 NER) and needs no bound there.
    solve_time_limit : float, optional
        Cap in seconds on each master solve, handed to the solver (default
        :data:`mmprog.solvers.SOLVE_TIME_LIMIT`, 600 s); a solve that hits it raises
        :class:`~mmprog.exceptions.SolverError` with the solver's words. A solve stopped by what is left of
        ``time_limit`` instead ends the fit with termination ``"time_limit"`` and the last solved point.
    checkpoint : str, optional
        File (``.npz``) where the working set and the iterate are kept (:mod:`mmprog.engine.checkpoint`), written
        atomically every ``checkpoint_every`` rounds and when the fit ends other than by convergence.
    checkpoint_every : int, optional
        Rounds between checkpoints.
    resume : str, optional
        A checkpoint to continue from: the program, C, its parameters and the slack form are the checkpoint's
        (giving different ones raises); the data and feature map must be the same (checked by a fingerprint).
        The resumed fit re-solves the saved master and goes on from the saved round.
    stabilise : {None, "in-out"}, optional
        Separate at a point between the best point so far and the master's point (in-out stabilisation of the
        cutting plane; see :func:`mmprog.engine.loop.run`); the master and its optimum are unchanged.
    inout_weight : float
        The weight λ of the best point in the in-out separation point (default 0.8, chosen by measurement: see README, Known limits).
    line_search : int
        With ``stabilise="in-out"``: the full objective is also evaluated at this many evenly spaced points of the
        segment from the master's point to the best point (one oracle call each; default 0); the lowest moves the
        best point and the upper bound (see :func:`mmprog.engine.loop.run`).
    gap_tol : float, optional
        The stopping rule of every route: stop (termination ``"converged"``) once the certified relative gap
        (upper − lower) / max(1, |upper|) between the full objective and a lower bound on the program's optimum is
        ≤ ``gap_tol`` (default :data:`mmprog.engine.loop.DEFAULT_GAP_TOL`, 1e-2). With ``eps`` and no ``gap_tol``
        the ε rule alone stops the cutting plane, and the result is ``"converged"`` only if the gap is then ≤ 1e-2.
    route : {"auto", "cutting-plane", "bcfw"}
        ``"bcfw"``: P0 (program m3n, n-slack) solved by block-coordinate Frank–Wolfe on its dual until the duality
        gap is ≤ ``gap_tol``, ``max_iter`` counting passes (:mod:`mmprog.engine.bcfw`); ``eps`` is not read.
        ``"cutting-plane"``: the program's master grown cut by cut (:mod:`mmprog.engine.loop`). ``"auto"``
        (default): ``"bcfw"`` where that route covers the fit (it says so itself, :meth:`mmprog.engine.routes.
        Engine.covers`: m3n, n-slack, the chain maps it takes) and no setting only the cutting plane reads is given
        (:data:`CUTTING_PLANE_SETTINGS`: ``eps``, ``drop_after``, ``stabilise``, checkpoints, ...; ``solver`` is
        not one); else the cutting plane.
    warm_start : Result, optional
        A fit of the same program on the same data and feature map, at this or another C (a C path): route
        ``"bcfw"`` starts from its working set with α scaled to this C (feasible; :meth:`mmprog.engine.routes.Engine.
        bcfw`); the cutting plane starts from a fresh master at this C holding the earlier master's active cuts
        (explicit rows and labeling cuts; valid at every C, since a cut wᵀΔF ≥ Δℓ − ξ has no C), solved before the
        first round, with round, history, upper bound and w afresh (:func:`mmprog.engine.loop.run`, ``seed``);
        ``result.warm_start_cuts`` says how many cuts it gave. The cutting plane refuses (``ParameterError``) an
        earlier fit of another program, slack form, number of slacks or feature map
        (:func:`mmprog.engine.checkpoint.fingerprint`); that the data are the same is the caller's promise. Programs
        whose working set is not their whole state (``checkpointable`` False: an outer EM or variational loop, the
        factored and sub-gradient algorithms) start afresh.
    **program_params
        The program's own hyper-parameters (e.g. ``master="dual"`` for m3n).

    Returns
    -------
    Result
        ``termination`` is ``"converged"`` (the gap is ≤ ``gap_tol``: certified), ``"eps"`` (the ε rule stopped it
        with the gap above ``gap_tol``), ``"max_iter"``, ``"time_limit"`` or ``"interrupted"`` (SIGINT or SIGTERM:
        the round under way finished or was abandoned, the last solved point is returned); ``gap`` says how far
        from the optimum it is in every case.
    """
    from .engine import interrupts
    from . import solvers as solver_registry
    from .features import feature_map_for
    from .engine.oracle import Oracle, blas_single
    from .engine.routes import ENGINE
    from .result import Result

    ck = None
    if resume is not None:
        from .engine.checkpoint import load as load_checkpoint
        ck = load_checkpoint(resume)
        given = {"program": program, "C": C, "slack": slack, **program_params}
        saved = {"program": ck.program, "slack": ck.slack, **ck.params}
        for key, value in given.items():
            if value is not None and key in saved and value != saved[key]:
                raise ParameterError(f"{key} is {saved[key]!r} in the checkpoint {ck.path}; got {value!r} "
                                     f"(a resumed fit keeps the checkpoint's program and parameters: drop {key})")
        program, slack, program_params = ck.program, ck.slack, ck.params
        C = program_params.pop("C", None)
    prog = get_program(program or "m3n", C=1.0 if C is None else C, **program_params)
    check_param("route", route, route in ("auto", "cutting-plane", "bcfw"), '"auto", "cutting-plane" or "bcfw"')
    if route == "bcfw" and (resume or checkpoint):
        raise ParameterError("route='bcfw' runs without checkpoint/resume; drop route or the other settings")
    if (checkpoint is not None or ck is not None) and not prog.checkpointable:
        raise ParameterError(f"checkpoint/resume is not available for program {prog.name!r} (its outer "
                             f"EM/variational loop keeps state a checkpoint of the working set does not hold); "
                             f"drop checkpoint= and resume=")
    slack = slack or getattr(prog, "default_slack", "n")
    check_param("slack", slack, slack in ("n", "one"), '"n" or "one"')
    check_n_jobs(n_jobs)
    check_param("order", order, order in (1, 2) and not isinstance(order, bool), "1 or 2")
    check_param("transitions", transitions, transitions in ("all", "seen"), '"all" or "seen"')
    if transitions != "all" and order != 2:
        raise ParameterError(f'transitions="{transitions}" confines the second-order pair Viterbi; set order=2 or '
                             f'drop transitions')
    if order != 1:
        from .datasets.base import SequenceDataset
        if feature_map is not None:
            raise ParameterError(f"order={order} builds the default chain map; with feature_map= given, build it "
                                 f"with ChainFeatureMap(..., order={order}) and drop order")
        if not isinstance(dataset, SequenceDataset):
            raise ParameterError(f"order={order} is for sequences (the chain map); got a {type(dataset).__name__}: "
                                 f"drop order")
        allowed = None
        if transitions == "seen":
            from .features.chain import allowed_bigrams
            allowed = allowed_bigrams(dataset.Y, dataset.n_labels)
        fmap = feature_map_for(dataset, order=order, allowed=allowed)
    else:
        fmap = feature_map if feature_map is not None else feature_map_for(dataset)
    prepared = fmap.prepare(dataset)
    # the cutting plane's own settings given (CUTTING_PLANE_SETTINGS; a solver is not one, see there)
    given = dict(eps=eps, drop_after=drop_after, max_cuts=max_cuts, show=show, show_every=show_every,
                 snapshot_iters=tuple(snapshot_iters) or None, solve_time_limit=solve_time_limit,
                 checkpoint=checkpoint, checkpoint_every=checkpoint_every, resume=resume, stabilise=stabilise,
                 line_search=line_search or None)
    route = choose_route(route, prog, fmap, prepared, slack, [k for k, v in given.items() if v is not None])
    # a program may prefer a back end for the master it builds at this size (m3n's Gram dual: daqp)
    preferred = getattr(prog, "preferred_solver", None)
    solver_name = solver or (preferred(fmap.dim) if preferred else None) \
        or solver_registry.default_solver(prog.problem_class)
    slv = solver_registry.get_solver(solver_name)
    if route != "bcfw" or solver is not None:
        # route bcfw solves no master unless a solver is named (the master of record, below); probing the default
        # back end (Ipopt for enm3n: a small solve) would only delay the fit
        slv.require(prog.problem_class)
    if max_iter is None:
        max_iter = DEFAULT_MAX_ITER[route]
    orc = Oracle(fmap, prepared, backend=oracle, n_jobs=n_jobs, client=client, chunk_size=chunk_size)
    try:
        kw = dict(solver=slv, slack=slack, eps=eps, max_iter=max_iter, time_limit=time_limit,
                  drop_after=drop_after, progress=progress, show=show, show_every=show_every,
                  snapshot_iters=tuple(snapshot_iters))
        if stabilise is not None:
            kw.update(stabilise=stabilise, inout_weight=inout_weight, line_search=line_search)
        if gap_tol is not None:
            kw["gap_tol"] = gap_tol
        if max_cuts is not None:
            kw["max_cuts"] = max_cuts
        if solve_time_limit is not None:
            kw["solve_time_limit"] = solve_time_limit
        if checkpoint is not None or ck is not None:
            kw.update(checkpoint=checkpoint, checkpoint_every=checkpoint_every, resume=ck)
        if warm_start is not None and route != "bcfw" and prog.checkpointable:
            # the working set is the whole state of a checkpointable program's fit, so its cuts seed one at this C
            kw["seed"] = warm_start_seed(warm_start, prog, fmap, prepared, slack, ck)
        # one handler for the whole fit, so outer loops (EM, variational steps) see the same request. BLAS runs on
        # one thread for the whole fit, not only in the oracle: the master's products are small (one Gram row and
        # ΔFᵀα a round, r × dim = 500 × 4,004 on OCR) and OpenBLAS's second thread made them 3–5× slower on the
        # shared 2-core machine (OCR fold 0, eps 0.01: solver phase 7.0 s against 3.8 s, load average 5)
        with interrupts.catch_interrupts(), blas_single():
            if route == "bcfw":
                from .engine.loop import DEFAULT_GAP_TOL
                warm = None if warm_start is None else warm_start.solution.extra.get("working_set")
                run, slack = ENGINE.bcfw(prog, orc, gap_tol=DEFAULT_GAP_TOL if gap_tol is None else gap_tol,
                                         max_iter=max_iter, time_limit=time_limit, warm_start=warm)
                # the route has no QP master of its own: a solver given solves the master of record below
                solver_name = solver or "bcfw"
            elif hasattr(prog, "fit"):
                # programs with an outer loop (EM over the cutting-plane master, variational updates) drive the
                # engine
                run = prog.fit(orc, ENGINE, **kw)
            else:
                run = ENGINE.cutting_plane(prog, orc, **kw)
    finally:
        orc.close()
    # a program with an outer loop may predict through its own map (PoMEN's h₂ sums out hidden nodes)
    fmap = getattr(run, "feature_map", None) or fmap
    # the gap the fit was asked to reach (the factored LP and the sub-gradient method take no gap_tol)
    from .engine.loop import DEFAULT_GAP_TOL
    tol = None if run.solution.extra.get("algorithm") in ("factored", "subgradient") else \
        (DEFAULT_GAP_TOL if gap_tol is None else float(gap_tol))
    res = Result(fmap, run, prog.name, prog.params(), solver_name, slack,
                  label_names=getattr(dataset, "label_names", None), trainer=fit, gap_tol=tol)
    if route == "bcfw" and solver is not None:
        solve_master_of_record(res, solver)
    return res


def warm_start_seed(earlier, program, fmap, prepared, slack, resume=None):
    """The cutting plane's warm start from the :class:`Result` ``earlier`` (:func:`fit`'s ``warm_start``): its
    master's active cuts as a seed (:func:`mmprog.engine.checkpoint.of_master`). Refused with a one-line
    :class:`ParameterError` naming ``warm_start`` unless ``earlier`` is a fit of the same program, slack form, number
    of slacks and joint features (:func:`mmprog.engine.checkpoint.fingerprint`) with a working set, or when
    ``resume`` gives the fit its cuts too."""
    from .engine.checkpoint import fingerprint, of_master
    if resume is not None:
        raise ParameterError("warm_start and resume both give the fit its first cuts (resume: a checkpoint's, at "
                             "its own C); give one of them")
    n_slacks = prepared.n if slack == "n" else 1
    master = getattr(earlier, "model", None)
    old_fmap = getattr(earlier, "fmap", None)
    if master is None or not hasattr(master, "ws") or old_fmap is None:
        raise ParameterError(f"warm_start is a {type(earlier).__name__} without a master's working set; give the "
                             f"Result of an earlier mmprog.fit of the same program, or drop warm_start")
    got = (earlier.program, earlier.slack, len(earlier.xi), old_fmap.dim, fingerprint(old_fmap))
    want = (program.name, slack, n_slacks, fmap.dim, fingerprint(fmap))
    if got != want:
        raise ParameterError(f"warm_start is a fit of {got[0]} ({got[1]}-slack, {got[2]} slacks, {got[3]} features "
                             f"{got[4]}), this one is {want[0]} ({want[1]}-slack, {want[2]} slacks, {want[3]} features "
                             f"{want[4]}); warm-start from a fit of the same program, slack form, data and feature "
                             f"map, or drop warm_start")
    return of_master(master, fmap, n_slacks)


def solve_master_of_record(result, solver):
    """Route ``bcfw`` with ``solver`` given: P0's master on the route's working set (``result.model``) solved by
    that back end, the way ``mmprog verify`` solves it (:func:`mmprog.duality.master_of_bcfw`: the engine's route,
    status-checked, time-capped), and its optimum required to lie in the certified [D(α), P(w)]. The model keeps
    that solution (what ``show``/``export`` read); ``w`` stays the route's certified point. Sets
    ``result.master_solve`` = {solver, objective, form, in_bounds}.

    Raises
    ------
    SolverError
        The solver failed, or its optimum lies outside the certified bounds."""
    from .duality import master_of_bcfw
    from .exceptions import SolverError
    view, row = master_of_bcfw(result, [solver])
    if row.status != "pass":
        raise SolverError(f"solver {solver!r}: {row.statement}, but its optimum is {row.lhs:.10g}")
    result.master_solve = {"solver": solver, "objective": float(view.primal_objective), "form": result.slack,
                           "cuts": len(view.alpha), "in_bounds": row.status}
    result.meta["master_solve"] = result.master_solve


def choose_route(route, program, fmap, prepared, slack, cutting_plane_settings=()):
    """The route :func:`fit` runs: ``route`` itself when it is ``"cutting-plane"`` or ``"bcfw"`` (the latter refused
    with the route's own reason when it does not cover the fit); for ``"auto"``, ``"bcfw"`` where it covers the fit
    and none of ``cutting_plane_settings`` (names of :data:`CUTTING_PLANE_SETTINGS` the caller gave) is given, else
    ``"cutting-plane"``."""
    from .engine.routes import ENGINE
    if route == "cutting-plane":
        return route
    if route == "auto" and cutting_plane_settings:
        return "cutting-plane"
    ok, why = ENGINE.covers("bcfw", program, fmap, prepared, slack)
    if route == "bcfw" and not ok:
        raise ParameterError(f"route='bcfw' solves m3n (P0) in the n-slack form on the chain maps it covers, not "
                             f"this fit ({why}); drop route or use route='cutting-plane'")
    return "bcfw" if ok else "cutting-plane"


def nonzero_weights(w, tol=1e-8):
    """How many weights are non-zero (|w_k| > tol)."""
    return int(np.count_nonzero(np.abs(np.asarray(w)) > tol))
