"""Every tutorial in models/tutorials/ (a jupytext Markdown notebook) runs top to bottom on its small data, in under
a minute, so the tutorials never rot. A notebook's own assertions (the paper's statements on the numbers) fail the
test like any other. (The kernel draws with matplotlib's inline backend, which renders through Agg.)"""
import time
from pathlib import Path

import jupytext
import pytest
from nbclient import NotebookClient

TUTORIALS = sorted((Path(__file__).resolve().parent.parent / "models" / "tutorials").glob("*.md"))
LIMIT = 60.0
#: real data a tutorial reads from the shared data folder (the others generate theirs)
NEEDS = {"p0_p1_sparsity": "ocr_letters/letters.npz"}


def test_there_is_one_tutorial_per_paper():
    names = {p.stem for p in TUTORIALS}
    assert {"p0_p1_sparsity", "laplace", "mtl_pblock", "pomen", "linf"} <= names, names


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_runs(path, tmp_path):
    if path.stem in NEEDS:
        from mmprog.datasets.registry import default_data_root
        data = Path(default_data_root()) / NEEDS[path.stem]
        if not data.exists():
            pytest.skip(f"{path.name} reads {data}, which is absent")
    nb = jupytext.read(path)
    client = NotebookClient(nb, timeout=int(LIMIT), kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    t0 = time.perf_counter()
    client.execute()
    took = time.perf_counter() - t0
    assert took < LIMIT, f"{path.name} took {took:.1f} s (limit {LIMIT:.0f} s)"
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 2, f"{path.name}: expected the bounds plot and a picture of the weights"
