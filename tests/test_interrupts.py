"""Runs that cannot hang or lose their work: per-solve time caps handed to the solver, SIGINT/SIGTERM during a fit,
atomic checkpoints, and a resumed fit reaching the uninterrupted optimum.

Ground truth: the uninterrupted fit of the same data (its optimum is itself checked against the enumerated program
in test_engine_bruteforce.py), HiGHS's own time-limit status on a QP too large to finish within the cap, and the
files on disk.
"""
import os
import signal
import subprocess
import sys
import time

import highspy
import numpy as np
import pytest

import mmprog
from mmprog.engine import checkpoint as ckpt
from mmprog.engine.loop import run as engine_run
from mmprog.exceptions import ModelFileError, ParameterError, SolverError

from _enumerated import tiny

C, EPS = 0.7, 1e-6


def _signal_at(round_, signals):
    """A ``show`` callback that sends ``signals`` to this process after round ``round_``."""
    def show(model, rec):
        if rec.iteration == round_:
            for s in signals:
                os.kill(os.getpid(), s)
    return show


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("program,kw", [("m3n", {"master": "dual"}), ("m3n", {"master": "primal"}),
                                        ("l1m3n", {})])
def test_interrupted_fit_resumes_to_the_uninterrupted_optimum(tmp_path, sig, program, kw):
    ds = tiny(seed=3, n=30)
    full = mmprog.fit(ds, program=program, C=C, eps=EPS, **kw)
    assert full.termination == "converged" and full.n_iter > 3
    ck = tmp_path / "fit.ckpt"
    # Python's default_int_handler, or SIG_IGN when the suite runs as a background job of a non-interactive shell
    before = signal.getsignal(signal.SIGINT)
    part = mmprog.fit(ds, program=program, C=C, eps=EPS, checkpoint=ck, checkpoint_every=1,
                      show=_signal_at(2, [sig]), show_every=1, **kw)
    # the round under way finished, the fit stopped with its point
    assert part.termination == "interrupted"
    assert part.n_iter == 2
    assert part.primal_objective == pytest.approx(part.history[-1].objective)
    saved = ckpt.load(str(ck))
    assert saved.meta["iteration"] == 2 and saved.meta["termination"] == "interrupted"
    np.testing.assert_array_equal(saved.w, part.w)
    # the handlers are gone after the fit: SIGINT is handled as it was before it
    assert signal.getsignal(signal.SIGINT) is before
    res = mmprog.fit(ds, eps=EPS, resume=ck)
    assert res.termination == "converged"
    assert res.program == program and res.params == full.params
    # same optimum within the stopping tolerance: both are master optima of eps-feasible cutting-plane runs
    window = C * len(ds) * EPS + 1e-6 * max(1.0, abs(full.primal_objective))
    assert abs(res.primal_objective - full.primal_objective) <= window
    assert res.upper_bound >= full.primal_objective - window
    # history continues from the saved rounds
    assert [h.iteration for h in res.history] == list(range(1, res.n_iter + 1))


def test_second_signal_abandons_the_round_and_keeps_the_last_solved_point(monkeypatch):
    ds = tiny(seed=4, n=30)
    from mmprog.engine.oracle import Oracle
    calls = {"n": 0}
    separate = Oracle.separate

    def interrupted_separate(self, w):
        calls["n"] += 1
        if calls["n"] == 3:
            os.kill(os.getpid(), signal.SIGINT)     # first: a request
            os.kill(os.getpid(), signal.SIGINT)     # second: KeyboardInterrupt inside the oracle
        return separate(self, w)

    monkeypatch.setattr(Oracle, "separate", interrupted_separate)
    res = mmprog.fit(ds, program="m3n", C=C, eps=EPS)
    assert res.termination == "interrupted"
    assert res.n_iter == 2 and len(res.history) == 2
    assert res.primal_objective == pytest.approx(res.history[-1].objective)


def test_checkpoint_write_is_atomic(tmp_path, monkeypatch):
    ds = tiny(seed=3, n=20)
    ck = tmp_path / "fit.ckpt"
    res = mmprog.fit(ds, program="m3n", C=C, eps=1e-3, checkpoint=ck, checkpoint_every=1)
    before = (tmp_path / "fit.ckpt.npz").read_bytes()

    def broken_savez(f, **arrays):
        f.write(b"PK\x03\x04 half a zip")
        raise OSError("disk full")

    monkeypatch.setattr(ckpt.np, "savez", broken_savez)
    with pytest.raises(OSError, match="disk full"):
        ckpt.save(ck, model=res.model, program=mmprog.programs.get_program("m3n", C=C), fmap=res.fmap, w=res.w,
                  xi=res.xi, slack="n", iteration=99, elapsed=1.0, upper_bound=1.0, history=[])
    # the previous checkpoint is intact and no temporary file is left behind
    assert (tmp_path / "fit.ckpt.npz").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fit.ckpt.npz"]


def test_resume_refuses_other_data_or_parameters(tmp_path):
    ck = tmp_path / "a"
    mmprog.fit(tiny(seed=3, n=20), program="m3n", C=C, eps=1e-3, max_iter=2, checkpoint=ck)
    with pytest.raises(ModelFileError, match="n_slacks"):
        mmprog.fit(tiny(seed=3, n=21), resume=ck)
    with pytest.raises(ParameterError, match="C is 0.7 in the checkpoint"):
        mmprog.fit(tiny(seed=3, n=20), C=2.0, resume=ck)
    with pytest.raises(ParameterError, match="checkpoint/resume is not available for program 'lapm3n'"):
        mmprog.fit(tiny(seed=3, n=20), program="lapm3n", checkpoint=ck)
    (tmp_path / "bad.npz").write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(ModelFileError, match=r"bad.npz: not a readable .npz archive"):
        mmprog.fit(tiny(seed=3, n=20), resume=tmp_path / "bad")


def _hard_qp(n, seed=0):
    """A dense convex QP (the Gram dual of n random cuts with one budget row): seconds of HiGHS time."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, n // 2))
    G = A @ A.T + 1e-3 * np.eye(n)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.addVars(n, np.zeros(n), np.full(n, highspy.kHighsInf))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), -rng.uniform(0.5, 1.5, size=n))
    h.addRow(-highspy.kHighsInf, 10.0, n, np.arange(n, dtype=np.int32), np.ones(n))
    hess = highspy.HighsHessian()
    hess.dim_, hess.format_ = n, highspy.HessianFormat.kTriangular
    tri = np.tril(G).T                      # column-wise lower triangle
    hess.start_ = np.r_[0, np.cumsum(np.arange(n, 0, -1))].astype(np.int32)
    hess.index_ = np.concatenate([np.arange(j, n) for j in range(n)]).astype(np.int32)
    hess.value_ = np.concatenate([tri[j, j:] for j in range(n)])
    h.passHessian(hess)
    return h


def test_solver_stops_at_the_cap_with_its_own_words():
    from mmprog.solvers.highs import run_highs
    h = _hard_qp(1500)
    cap = 0.2
    t0 = time.perf_counter()
    with pytest.raises(SolverError) as e:
        run_highs(h, time_limit=cap)
    assert time.perf_counter() - t0 < cap + 5.0
    assert e.value.termination == "max_time"
    assert "Time limit reached" in e.value.solver_message
    # the same QP given time solves: the cap, not the problem, stopped it
    h2 = _hard_qp(1500)
    status = run_highs(h2, time_limit=600)
    assert status.termination == "optimal" and status.solver_time > cap


def test_the_cap_is_per_solve_on_a_persistent_highs_object():
    """HiGHS sums run time over a Highs object's life; a warm re-solve must still get its own seconds."""
    from mmprog.solvers.highs import run_highs
    h = _hard_qp(600)
    times = [run_highs(h, time_limit=600).solver_time for _ in range(3)]     # HiGHS's QP re-solves from scratch
    cap = 2 * max(times)               # twice one solve, below the 3 solves the object has run for
    h.changeColCost(0, -2.0)
    again = run_highs(h, time_limit=cap)
    assert again.termination == "optimal"


@pytest.mark.parametrize("program,kw", [("m3n", {"master": "dual"}), ("m3n", {"master": "primal"}),
                                        ("l1m3n", {})])
def test_fit_raises_at_the_per_solve_cap_and_checkpoints_first(tmp_path, program, kw):
    ds = tiny(seed=3, n=30)
    ck = tmp_path / "capped"
    # m3n's Gram dual goes to daqp by default (its words: the limit met before DAQP's first pass), the rest to HiGHS
    with pytest.raises(SolverError, match=r"per-solve cap solve_time_limit=1e-09 s \((HiGHS model status: Time "
                                          r"limit reached|time limit of 1e-09 s reached before DAQP's pass 1; 1 "
                                          r"working-set pass\(es\), \d+ of \d+ cuts)\); raise solve_time_limit"):
        mmprog.fit(ds, program=program, C=C, eps=EPS, solve_time_limit=1e-9, checkpoint=ck, **kw)
    assert ckpt.load(str(ck)).meta["termination"] == "solve_time_limit"


def test_fit_time_limit_binding_inside_a_solve_ends_with_time_limit(monkeypatch):
    """What is left of time_limit is what the solver gets; a solve stopped by it ends the fit, keeping the last
    solved point."""
    from mmprog.features import feature_map_for
    from mmprog.engine.oracle import Oracle
    from mmprog.programs import get_program
    from mmprog.solvers import get_solver

    ds = tiny(seed=3, n=30)
    prog = get_program("m3n", C=C, master="dual")
    fmap = feature_map_for(ds)
    orc = Oracle(fmap, fmap.prepare(ds))
    given = []
    import mmprog.engine.loop as loop
    solve = loop.solve_master

    def spy(program, model, solver, options=None, time_limit=None):
        given.append(time_limit)
        if len(given) == 3:
            # the real solver at a limit it cannot meet, as when the fit's deadline falls inside this solve
            return solve(program, model, solver, options=options, time_limit=1e-9)
        return solve(program, model, solver, options=options, time_limit=time_limit)

    monkeypatch.setattr(loop, "solve_master", spy)      # every master solve of the loop goes through it
    er = engine_run(prog, orc, solver=get_solver("highs"), eps=EPS, time_limit=50.0, solve_time_limit=100.0)
    # the fit's remaining seconds (< 50) bound every solve, not the 100 s cap
    assert all(0 < t <= 50.0 for t in given)
    assert er.termination == "time_limit"
    assert er.n_iter == 2 and len(er.history) == 2
    assert er.solution.objective == pytest.approx(er.history[-1].objective)
    monkeypatch.setattr(loop, "solve_master", solve)
    er2 = engine_run(prog, orc, solver=get_solver("highs"), eps=EPS, solve_time_limit=7.0, max_iter=3)
    assert er2.n_iter == 3


def test_cli_sigint_writes_the_model_and_exits_130(tmp_path):
    """A real Ctrl-C to a running `mmprog train`: exit 130, --out written, the checkpoint resumable."""
    out, ck = tmp_path / "m", tmp_path / "m.ckpt"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd()] + sys.path))
    cmd = [sys.executable, "-m", "mmprog.cli", "train", "--data", "synthetic:seed=0,n_instances=400",
           "--C", "10", "--eps", "1e-9", "--max-iter", "100000", "--time-limit", "120", "--out", str(out),
           "--checkpoint", str(ck), "--checkpoint-every", "1", "--json"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.time() + 90
        while not (tmp_path / "m.ckpt.npz").exists() and time.time() < deadline and p.poll() is None:
            time.sleep(0.05)
        assert p.poll() is None, p.communicate()
        p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "interrupted after" in stderr and "--resume" in stderr
    assert (tmp_path / "m.json").exists() and (tmp_path / "m.npz").exists()
    model = mmprog.load(str(out))
    saved = ckpt.load(str(ck))
    assert saved.meta["termination"] == "interrupted"
    np.testing.assert_array_equal(model.w, saved.w)
    # and the checkpoint continues to the end from the command line
    from mmprog.cli import main
    rc = main(["train", "--data", "synthetic:seed=0,n_instances=400", "--eps", "1e-2", "--resume", str(ck),
               "--json"])
    assert rc == 0


def test_a_signal_in_the_round_that_finishes_the_fit_stays_pending(monkeypatch):
    """A signal that comes during the last round's separation, the one that finds nothing violated, cannot stop that
    fit any more (its stopping rule certifies it first); it is not dropped with the fit's handlers either, so a C
    path or a command still stops on it."""
    from mmprog.engine import interrupts
    from mmprog.engine.oracle import Oracle
    ds = tiny(seed=3, n=30)
    calls = {"n": 0, "signal_at": None}
    separate = Oracle.separate

    def counted_separate(self, w):
        calls["n"] += 1
        if calls["n"] == calls["signal_at"]:
            os.kill(os.getpid(), signal.SIGINT)
        return separate(self, w)

    monkeypatch.setattr(Oracle, "separate", counted_separate)
    full = mmprog.fit(ds, program="m3n", C=C, eps=EPS)
    assert full.termination == "converged" and full.n_iter > 3
    calls.update(signal_at=calls["n"], n=0)
    interrupts.forget()
    before = signal.getsignal(signal.SIGINT)
    res = mmprog.fit(ds, program="m3n", C=C, eps=EPS)
    # the fit is the uninterrupted one; the request outlived it
    assert calls["n"] == calls["signal_at"]
    assert res.termination == "converged" and res.n_iter == full.n_iter
    np.testing.assert_array_equal(res.w, full.w)
    assert interrupts.pending() == "SIGINT" and interrupts.requested() is None
    assert signal.getsignal(signal.SIGINT) is before
    # a later fit is not stopped by it (a library user's next fit): only callers that ask for pending() stop
    calls["signal_at"] = None
    again = mmprog.fit(ds, program="m3n", C=C, eps=EPS)
    assert again.termination == "converged" and again.n_iter == full.n_iter
    assert interrupts.pending() == "SIGINT"
    interrupts.forget()
    assert interrupts.pending() is None


def test_a_probe_interrupted_by_ctrl_c_is_not_remembered_as_a_missing_solver(monkeypatch):
    """Pyomo's output capture turns a KeyboardInterrupt in a solver's test solve into a RuntimeError; that is an
    interruption (raised as one), not a verdict on the solver to cache."""
    from mmprog.solvers import get_solver
    solver = get_solver("highs")

    def interrupted():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("Captured output does not match sys.stdout")

    monkeypatch.setattr(solver, "_probe", interrupted)
    with pytest.raises(KeyboardInterrupt):
        solver.probe(refresh=True)
    monkeypatch.undo()
    assert solver.probe(refresh=True)          # the real test solve: HiGHS is there
