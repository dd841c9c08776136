"""The engine as a program sees it: what a program with an outer loop (EM, variational updates) or another route
to its program is handed to drive the engine, so that no program imports the engine.

:func:`mmprog.fit` calls ``program.fit(oracle, ENGINE, **settings)`` when the program defines ``fit``; every other
program is grown by :meth:`Engine.cutting_plane` directly.
"""
from __future__ import annotations

import logging

import numpy as np

log = logging.getLogger("mmprog.engine.bcfw")


class Engine:
    """The routes of the engine, by name (one instance, :data:`ENGINE`)."""

    @staticmethod
    def cutting_plane(program, oracle, **settings):
        """The cutting-plane loop (:func:`mmprog.engine.loop.run`): ``settings`` as it takes them, ``model=`` to
        grow a master kept from an earlier run."""
        from .loop import run
        return run(program, oracle, **settings)

    @staticmethod
    def subgradient(oracle, radius, settings, **loop_settings):
        """The projected sub-gradient method over the ℓ1 ball of ``radius`` (:func:`mmprog.engine.subgradient.
        projected_subgradient`; KDD 2009 Algorithm 2): ``max_iter`` passes, ``time_limit`` and ``progress`` of the
        loop's settings apply (``eps``, ``slack`` and the solver play no part)."""
        from .subgradient import projected_subgradient
        return projected_subgradient(oracle, radius, n_iter=loop_settings.get("max_iter", 500),
                                     time_limit=loop_settings.get("time_limit"),
                                     progress=loop_settings.get("progress", False), **settings)

    @staticmethod
    def factored_lp(program, oracle, **settings):
        """A chain program's whole LP in polynomial size, solved once (:func:`mmprog.engine.factored_lp.
        fit_factored`)."""
        from .factored_lp import fit_factored
        return fit_factored(program, oracle, **settings)

    @staticmethod
    def sample_generation(program, samples, solver="highs", **settings):
        """A master whose rows are samples, grown with its columns by constraint generation
        (:func:`mmprog.engine.sample_generation.run`; L∞'s (10)). Returns a
        :class:`~mmprog.engine.sample_generation.SampleRun`."""
        from .sample_generation import run
        return run(program, samples, solver=solver, **settings)

    @staticmethod
    def bcfw(program, oracle, gap_tol=1e-2, max_iter=500, time_limit=None, warm_start=None):
        """P0 (or the elastic-net M³N, ``enm3n``: its λ is the program's ``lam``) by block-coordinate Frank–Wolfe on
        its n-slack dual, stopped by its duality gap (:mod:`mmprog.engine.bcfw`); ``program`` states the master the
        result holds. ``warm_start``: the working set of an earlier run on the same data (``solution.extra
        ["working_set"]`` of its EngineRun, :meth:`~mmprog.engine.bcfw.BCFWRun.state_arrays`), possibly at another
        C: its α is scaled by C / C_saved, which keeps it feasible (every example's mass becomes C). Returns
        (EngineRun, the master's slack form); the run's working set is kept in ``solution.extra["working_set"]``."""
        from . import bcfw
        resume = None
        if warm_start is not None:
            resume = dict(warm_start)
            resume["alpha"] = np.asarray(resume["alpha"], dtype=np.float64) * (program.C / float(resume["C"]))
            resume["C"] = np.float64(program.C)
        def certificate(chk):
            # one log line per certificate, as the cutting plane logs its rounds (SequenceTagger(verbose=True))
            log.info("%5d %14.8g %14.8g %10.3e %8d %8.2f", chk.passes, chk.lower, chk.upper, chk.gap, chk.cached,
                     chk.elapsed)
            return False

        log.info("%5s %14s %14s %10s %8s %8s", "iter", "lower", "upper", "gap", "cached", "elapsed")
        run = bcfw.fit(oracle, C=program.C, gap_tol=gap_tol, max_iter=max_iter, time_limit=time_limit,
                       resume=resume, callback=certificate, lam=float(getattr(program, "lam", 0.0)))
        log.info("termination: %s after %d passes, %d cached labelings, lower %.8g, upper %.8g, gap %.3e",
                 run.termination, run.n_passes, int(np.count_nonzero(run.state["alpha"][:, 1:] > 0)),
                 run.lower_bound, run.upper_bound, run.gap)
        er, slack = bcfw.engine_run(run, oracle.fmap, oracle.prepared, program)
        er.solution.extra["working_set"] = run.state_arrays()
        # the history in the rows every route reports (plots, reports, summaries): one per certificate, its pass
        # as the iteration, D(α) as the objective and lower bound, the cached labelings as the cuts
        from .records import IterationRecord
        nan = float("nan")
        er.history = [IterationRecord(iteration=c.passes, objective=c.lower, lower_bound=c.lower, upper_bound=c.upper,
                                      gap=c.gap, max_violation=nan, n_cuts=c.cached, n_active=c.cached, cut_nnz=0,
                                      new_cuts=0, oracle_time=nan, pyomo_time=0.0, solver_time=0.0, elapsed=c.elapsed)
                      for c in run.history]
        return er, slack


    @staticmethod
    def covers(route, program, fmap, prepared, slack="n"):
        """Whether ``route`` (``"bcfw"`` or ``"cutting-plane"``) solves ``program`` on ``fmap`` over ``prepared``
        in the ``slack`` form: (True, "") or (False, why not). The cutting plane takes every program; the other
        routes say what they cover themselves (:func:`mmprog.engine.bcfw.covers`)."""
        if route == "bcfw":
            from . import bcfw
            return bcfw.covers(program, fmap, prepared, slack)
        return True, ""


#: what :func:`mmprog.fit` hands to ``program.fit``
ENGINE = Engine()
