"""Start-up (issue 37 item 4): what a fresh process imports before mmprog's first round, checked from sys.modules in a
subprocess — never timed here (timings live in ``python -m mmprog.bench startup``).

* ``import mmprog`` and the command line's help load neither Pyomo nor numba nor SciPy: loaders and kernels are
  imported on use;
* the fit path — every module a fit imports, and a fit's first round on a master a native back end solves — loads
  Pyomo's modelling layer (``pyomo.core``) but not its plugins (``pyomo.environ``: writers, solver factories, GDP,
  DAE, about 0.2 s of CPU), nor does the fit itself; they are loaded when the master is read from the result
  (``Result.model``), so that ``model.write`` works.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pyomo", "numba", "scipy", "highspy", "daqp", "sklearn", "dask", "matplotlib")


def loaded_after(code):
    """The top-level names among HEAVY (and whether pyomo.environ is) in sys.modules after running ``code``."""
    probe = (f"{code}\nimport json, sys\n"
             f"print(json.dumps({{'heavy': sorted(m for m in {HEAVY!r} if m in sys.modules), "
             f"'environ': 'pyomo.environ' in sys.modules, 'core': 'pyomo.core' in sys.modules}}))")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("code", [
    "import mmprog",
    "import contextlib, io\nfrom mmprog.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n    try:\n        main(['--help'])\n    except SystemExit:\n"
    "        pass",
    "import contextlib, io\nfrom mmprog.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n    try:\n        main(['train', '--help'])\n"
    "    except SystemExit:\n        pass",
])
def test_the_package_and_the_help_import_nothing_heavy(code):
    assert loaded_after(code)["heavy"] == []


def test_the_fit_path_leaves_pyomos_plugins_out():
    got = loaded_after("import mmprog.api, mmprog.tagging, mmprog.cli.train, mmprog.linf")
    assert got["core"] and not got["environ"], got


def test_a_first_round_leaves_pyomos_plugins_out_and_the_result_can_be_written(tmp_path):
    # the round's stages run with pyomo.core alone (the master built, grown and solved by DAQP from its arrays), and
    # so do the result's read-outs; reading the master from the result loads the plugins, and Pyomo then writes it
    code = f"""
import sys
import mmprog
from mmprog.datasets import synthetic_chain
from mmprog.engine import loop
seen = []
stage = loop.CuttingPlane.record
def record(self, *a, **k):
    seen.append('pyomo.environ' in sys.modules)
    return stage(self, *a, **k)
loop.CuttingPlane.record = record
res = mmprog.fit(synthetic_chain(n_instances=10, seed=0), program="m3n", solver="daqp", max_iter=2,
                 route="cutting-plane")
assert seen and not any(seen), seen
res.predict(synthetic_chain(n_instances=2, seed=1))
assert 'pyomo.environ' not in sys.modules
res.model.write({str(tmp_path / 'm.lp')!r})
"""
    got = loaded_after(code)
    assert got["environ"]
    assert (tmp_path / "m.lp").stat().st_size > 0


@pytest.mark.parametrize("own", [True, False])
def test_only_the_processs_own_command_skips_the_final_collections(own):
    # main() from the mmprog script or python -m mmprog.cli freezes the heap at exit (Python's final collections
    # over NumPy/SciPy/numba/Pyomo objects cost ~0.3 s of a short run); main([...]) called by a program does not
    code = f"""
import atexit, contextlib, gc, io, sys
from mmprog.cli import main
atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))   # registered first: runs after main's
sys.argv = ['mmprog', 'data']
with contextlib.redirect_stdout(io.StringIO()):
    main() if {own!r} else main(['data'])
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == f"frozen {own}"


def test_a_command_run_as_a_process_still_writes_its_model_and_output(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-m", "mmprog.cli", "train", "--data", "synthetic:seed=0,n_instances=20",
                          "--max-iter", "2", "--out", str(tmp_path / "m"), "--json"],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "timings" in json.loads(out.stdout)
    import mmprog
    assert mmprog.load(str(tmp_path / "m")).w.size > 0


def test_a_fit_of_p0_imports_no_other_program_and_the_registry_keeps_its_order():
    # the program modules are imported on demand; registered() lists them in the order of programs.MODULES, whatever
    # a process imported first (here m3n by a fit, L-inf by mmprog.linf) and whatever order that registered them in
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}

    def run(code):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                             timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        return json.loads(out.stdout.strip().splitlines()[-1])
    fresh = run("import json, mmprog.programs as P\nP.load()\nprint(json.dumps([list(P.MODULES), P.registered()]))")
    got = run("import json, sys, mmprog\nfrom mmprog.datasets import synthetic_chain\n"
              "mmprog.fit(synthetic_chain(n_instances=10, seed=0), program='m3n', solver='daqp', max_iter=1)\n"
              "loaded = sorted(m for m in sys.modules if m.startswith('mmprog.programs.'))\n"
              "import mmprog.linf\nfrom mmprog.programs import registered\n"
              "print(json.dumps([loaded, registered()]))")
    assert got[0] == ["mmprog.programs.base", "mmprog.programs.m3n", "mmprog.programs.statements"], got[0]
    modules, listed = fresh
    assert got[1] == listed == modules and modules[:2] == ["l1m3n", "m3n"] and len(modules) == 10, (got[1], fresh)
