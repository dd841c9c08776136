"""Results, save/load, export read back by highspy, the CLI, scikit-learn manners and the oracle backends."""
import json
import os

import highspy
import numpy as np
import pytest

import mmprog
from mmprog.cli import main as cli_main
from mmprog.datasets.base import SequenceDataset
from mmprog.exceptions import ModelFileError, ParameterError


def tiny(seed=0, n=16, T=5, d=4, K=3):
    rng = np.random.default_rng(seed)
    X = [rng.normal(size=(T - (i % 2), d)) for i in range(n)]
    W = rng.normal(size=(d, K))
    Y = [np.argmax(x @ W + 0.2 * rng.normal(size=(len(x), K)), axis=1) for x in X]
    return SequenceDataset(X, Y, K)


@pytest.fixture(scope="module")
def trained():
    return mmprog.fit(tiny(), program="m3n", C=1.0, eps=1e-4)


def test_result_fields_and_history(trained):
    r = trained
    assert r.termination == "converged"
    assert r.n_iter == len(r.history) and r.n_cuts == r.model.ws.size
    # bounds bracket the optimum and the history is monotone in the lower bound
    lows = [h.lower_bound for h in r.history]
    assert all(b >= a - 1e-9 for a, b in zip(lows, lows[1:]))
    assert r.upper_bound >= r.primal_objective - 1e-6
    assert set(r.timings) >= {"oracle", "pyomo", "solver", "total"}
    blocks = r.weights()
    assert blocks["state"].shape == (4, 3) and blocks["transition"].shape == (3, 3)
    assert np.array_equal(np.concatenate([blocks["state"].ravel(), blocks["transition"].ravel()]), r.w)
    # support vectors: every cut with α > 0; stationarity w = Σ α ΔF recomputed from the working set
    sv = r.support_vectors()
    assert sum(len(v) for v in sv.values()) == int(np.sum(r.alpha > 1e-8))
    assert np.allclose(r.model.ws.dF().T @ r.alpha, r.w, atol=1e-4)


def test_predict_marginals_topk(trained):
    ds = tiny(seed=1, n=5)
    pred = trained.predict(ds)
    top = trained.predict_topk(ds, 3)
    marg = trained.predict_marginals(ds)
    for p, (labs, scores), m, x in zip(pred, top, marg, ds.X):
        assert np.array_equal(labs[0], p)              # the best of the k-best is the Viterbi labeling
        assert np.all(np.diff(scores) <= 1e-9)
        assert np.allclose(m.sum(axis=1), 1.0)
        assert m.shape == (len(x), 3)
    ev = trained.evaluate(ds)
    assert 0.0 <= ev["token_error"] <= 1.0


def test_save_load_roundtrip(tmp_path, trained):
    path = trained.save(tmp_path / "model")
    assert path.endswith(".json") and os.path.exists(tmp_path / "model.npz")
    doc = json.load(open(path))
    assert doc["program"] == "m3n" and doc["mmprog_version"] == mmprog.__version__
    back = mmprog.load(tmp_path / "model")
    ds = tiny(seed=2, n=6)
    assert all(np.array_equal(a, b) for a, b in zip(back.predict(ds), trained.predict(ds)))
    with np.load(tmp_path / "model.npz", allow_pickle=False) as z:   # never pickle
        assert "w" in z.files


def test_load_bad_files(tmp_path, trained):
    with pytest.raises(ModelFileError, match="no such file"):
        mmprog.load(tmp_path / "missing")
    trained.save(tmp_path / "m")
    (tmp_path / "m.json").write_text("{\n \"format\": \n")
    with pytest.raises(ModelFileError, match=r"m\.json: line \d+"):
        mmprog.load(tmp_path / "m")
    trained.save(tmp_path / "m2")
    doc = json.load(open(tmp_path / "m2.json"))
    del doc["feature_map"]
    json.dump(doc, open(tmp_path / "m2.json", "w"))
    with pytest.raises(ModelFileError, match="missing field 'feature_map'"):
        mmprog.load(tmp_path / "m2")


@pytest.mark.parametrize("program,kw", [("l1m3n", {}), ("m3n", {"master": "primal"})])
@pytest.mark.parametrize("ext", [".lp", ".mps"])
def test_export_read_back_by_highspy(tmp_path, program, kw, ext):
    res = mmprog.fit(tiny(seed=4), program=program, C=0.5, eps=1e-5, **kw)
    path = res.export(tmp_path / f"master{ext}")
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    # the written master has the optimum the engine found (the objective constant-free on the n-slack scale)
    assert h.getInfo().objective_function_value == pytest.approx(res.primal_objective, rel=1e-5, abs=1e-6)


def test_export_dual_master_lp(tmp_path):
    res = mmprog.fit(tiny(seed=4), program="m3n", C=0.5, eps=1e-5, master="dual", slack="one")
    path = res.export(tmp_path / "dual.lp")
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(path))
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert h.getInfo().objective_function_value == pytest.approx(res.primal_objective, rel=1e-5)


def test_bad_parameters_name_themselves():
    ds = tiny()
    with pytest.raises(ParameterError, match=r"C must be a finite float > 0; got -1"):
        mmprog.fit(ds, C=-1)
    with pytest.raises(ParameterError, match=r"slack must be"):
        mmprog.fit(ds, slack="two")
    with pytest.raises(ParameterError, match=r"program must be one of"):
        mmprog.fit(ds, program="nope")
    with pytest.raises(ParameterError, match=r"master"):
        mmprog.fit(ds, program="l1m3n", master="dual")


def test_solver_that_cannot_take_the_class_fails_before_work():
    from mmprog.exceptions import SolverUnavailable
    from mmprog.solvers import get_solver
    glpk = get_solver("glpk")
    with pytest.raises(SolverUnavailable):
        mmprog.fit(tiny(), program="m3n", solver="glpk")
    assert glpk is not None


def test_sklearn_estimator_and_gridsearch():
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV
    ds = tiny(seed=7, n=24)
    est = mmprog.M3N(C=0.5)
    assert clone(est).get_params()["C"] == 0.5
    gs = GridSearchCV(mmprog.M3N(n_labels=3, eps=1e-3), {"C": [0.01, 1.0]}, cv=3)
    gs.fit(list(ds.X), list(ds.Y))
    assert gs.best_params_["C"] in (0.01, 1.0)
    assert 0.0 <= gs.best_score_ <= 1.0
    with pytest.raises(ParameterError, match="norm must be"):
        mmprog.M3N(norm="l3").fit(list(ds.X), list(ds.Y))
    l1 = mmprog.M3N(norm="l1", C=0.5).fit(list(ds.X), list(ds.Y))
    assert hasattr(l1, "coef_") and l1.result_.program == "l1m3n"


def test_process_pool_oracle_matches_serial():
    from mmprog.features import ChainFeatureMap
    from mmprog.engine.oracle import Oracle
    ds = tiny(seed=9, n=40)
    fmap = ChainFeatureMap.from_dataset(ds)
    prep = fmap.prepare(ds)
    w = np.random.default_rng(0).normal(size=fmap.dim)
    a, ha = Oracle(fmap, prep).separate(w)
    orc = Oracle(fmap, prep, backend="process", n_jobs=2, chunk_size=7)
    try:
        b, hb = orc.separate(w)
    finally:
        orc.close()
    assert np.array_equal(a.example, b.example) and np.allclose(ha, hb)
    assert abs(a.dF - b.dF).max() < 1e-12


@pytest.mark.parametrize("chunk_size,shared_w", [(None, False), (7, False), (None, True)])
def test_process_pool_one_slack_sums_equal_serial(chunk_size, shared_w):
    """Workers return only their examples' sums (ΔF, Δℓ) and hinges; the 1-slack cut is the serial one, for the
    chain map's direct sum and for the generic per-example path (start/stop features); w pickled into the tasks or
    (as for large w) read from the parent's shared copy, over several rounds."""
    from mmprog.features import ChainFeatureMap
    from mmprog.engine.oracle import Oracle
    ds = tiny(seed=9, n=40)
    for fmap in (ChainFeatureMap.from_dataset(ds), ChainFeatureMap.from_dataset(ds, start_stop=True)):
        prep = fmap.prepare(ds)
        w = np.random.default_rng(0).normal(size=fmap.dim)
        a, ha = Oracle(fmap, prep).separate_one_slack(w)
        orc = Oracle(fmap, prep, backend="process", n_jobs=2, chunk_size=chunk_size)
        if shared_w:
            orc.SHARED_W_BYTES = 0
        try:
            for k in range(3):
                w_k = w * (k + 1)
                a, ha = Oracle(fmap, prep).separate_one_slack(w_k)
                b, hb = orc.separate_one_slack(w_k)
                assert np.allclose(ha, hb) and b.dl == pytest.approx(a.dl)
                assert abs(a.dF - b.dF).max() < 1e-12
            assert (orc._w_shm is not None) == shared_w
            shared_file = orc._w_shm
        finally:
            orc.close()
        assert shared_file is None or not os.path.exists(shared_file)


@pytest.mark.parametrize("chunk_size", [None, 7])
def test_thread_oracle_equals_serial(chunk_size):
    """The thread backend runs contiguous chunks (views of the token rows): the per-example
    cuts are the serial ones, and the 1-slack sums agree with the serial oracle's to rounding, for the chain map's
    compiled sum and for the generic per-example path (start/stop features)."""
    from mmprog.features import ChainFeatureMap
    from mmprog.engine.oracle import Oracle
    ds = tiny(seed=9, n=40)
    for fmap in (ChainFeatureMap.from_dataset(ds), ChainFeatureMap.from_dataset(ds, start_stop=True)):
        prep = fmap.prepare(ds)
        w = np.random.default_rng(0).normal(size=fmap.dim)
        orc = Oracle(fmap, prep, backend="thread", n_jobs=2, chunk_size=chunk_size)
        try:
            a, ha = Oracle(fmap, prep).separate(w)
            b, hb = orc.separate(w)
            assert np.array_equal(a.example, b.example) and np.array_equal(a.labelings, b.labelings)
            assert np.allclose(ha, hb, rtol=0, atol=1e-12) and abs(a.dF - b.dF).max() < 1e-12
            a1, ha1 = Oracle(fmap, prep).separate_one_slack(w)
            b1, hb1 = orc.separate_one_slack(w)
            assert np.allclose(ha1, hb1, rtol=0, atol=1e-12) and b1.dl == pytest.approx(a1.dl)
            assert abs(a1.dF - b1.dF).max() < 1e-12
        finally:
            orc.close()
        assert orc._threads is None


def test_dask_oracle_on_local_cluster():
    distributed = pytest.importorskip("dask.distributed")
    from mmprog.features import ChainFeatureMap
    from mmprog.engine.oracle import Oracle
    ds = tiny(seed=10, n=30)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        res_d = mmprog.fit(ds, program="m3n", C=1.0, eps=1e-4, oracle="dask", client=client, chunk_size=8)
    res_s = mmprog.fit(ds, program="m3n", C=1.0, eps=1e-4)
    assert res_d.primal_objective == pytest.approx(res_s.primal_objective, rel=1e-6)
    # without a client the oracle starts a LocalCluster of n_jobs worker processes and closes it with itself
    fmap = ChainFeatureMap.from_dataset(ds)
    prep = fmap.prepare(ds)
    w = np.random.default_rng(1).normal(size=fmap.dim)
    orc = Oracle(fmap, prep, backend="dask", n_jobs=2)
    try:
        assert orc._cluster is not None and orc.n_jobs == 2
        one_d, h_d = orc.separate_one_slack(w)
    finally:
        orc.close()
    assert orc._cluster is None and orc._client is None
    one_s, h_s = Oracle(fmap, prep).separate_one_slack(w)
    assert np.allclose(h_d, h_s) and abs(one_d.dF - one_s.dF).max() < 1e-12 and one_d.dl == pytest.approx(one_s.dl)


def test_cli_train_predict_evaluate_export(tmp_path, capsys):
    tsv = tmp_path / "d.tsv"
    rng = np.random.default_rng(0)
    lines = []
    for s in range(12):
        for t in range(4):
            lab = int(rng.integers(0, 2))
            lines.append(f"{'AB'[lab]}\t{lab + rng.normal() * 0.1:.3f}\t{rng.normal():.3f}")
        lines.append("")
    tsv.write_text("\n".join(lines) + "\n")
    spec = f"tsv:{tsv}"
    assert cli_main(["train", "--data", spec, "--program", "l1m3n", "--C", "1", "--out", str(tmp_path / "m"),
                     "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["termination"] == "converged" and out["train"]["token_error"] < 0.2
    assert cli_main(["evaluate", "--model", str(tmp_path / "m"), "--data", spec, "--json"]) == 0
    ev = json.loads(capsys.readouterr().out)
    assert ev["token_error"] == pytest.approx(out["train"]["token_error"])
    assert cli_main(["predict", "--model", str(tmp_path / "m.json"), "--data", spec, "--json"]) == 0
    pred = json.loads(capsys.readouterr().out)
    assert len(pred) == 12 and set(pred[0]) <= {"A", "B"}
    assert cli_main(["export", "--data", spec, "--program", "l1m3n", "--out", str(tmp_path / "p1.mps"),
                     "--at-iter", "2", "--json"]) == 0
    ex = json.loads(capsys.readouterr().out)
    assert ex["n_iter"] <= 2 and os.path.exists(tmp_path / "p1.mps")
    assert cli_main(["solvers", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert any(r["name"] == "highs" for r in rows)
    assert cli_main(["data", "--json"]) == 0
    assert cli_main(["train", "--data", f"tsv:{tmp_path}/missing.tsv"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mmprog: error:") and err.count("\n") == 1
