"""Shared test set-up.

mmprog, imported first, points PYOMO_CONFIG_DIR at the venv's PyNumero library (``make`` builds it there) before any
test module imports Pyomo, which reads the variable once: a bare ``python -m pytest`` then finds Ipopt as ``make
test`` does.
"""
import mmprog  # noqa: F401
import numpy as np
import pytest


@pytest.fixture(scope="module")
def ner_slice():
    """The first 120 CoNLL-2002 Spanish training sentences with the 134 ``ner`` templates (count cuts, aggregates
    and released rows all occur in a short fit on it); one per test module, so no module sees another's changes."""
    from mmprog.datasets import load_conll
    from mmprog.datasets.registry import default_data_root
    from mmprog.features.templates import TemplateExtractor
    path = default_data_root() / "conll2002" / "esp.train.gz"
    if not path.exists():
        pytest.skip(f"CoNLL-2002 not found at {path}")
    train = load_conll(path, columns=("form", "pos", "ne"))
    return TemplateExtractor("ner").to_dataset(train.subset(np.arange(120)))


@pytest.fixture
def explicit_rows(monkeypatch):
    """Fits keep every cut as its explicit ΔF row: the tests of those representations (counts, float blocks,
    aggregates, the merge kernels) run on them, not on the labeling cuts that m3n's Gram dual, mtl's QCQP dual and
    the p-block dual read by default (tests/test_labeling_cuts.py checks those against these)."""
    from mmprog.programs.base import Program
    from mmprog.programs.m3n import M3N
    from mmprog.programs.mtl import MTL
    from mmprog.programs.pblock import PBlock
    for cls in (M3N, MTL, PBlock):
        monkeypatch.setattr(cls, "reads_labeling_cuts", Program.reads_labeling_cuts)
