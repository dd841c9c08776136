"""`mmprog show --latex` / mmprog.inspect.to_latex: every registered program's master and explicit dual, written from
the Pyomo model, compile (matplotlib's mathtext, line by line) and name every constraint family of the model; the
symbols ΔF_rk and Δℓ_r are only used where the numbers are those of the cuts."""
import re

import pyomo.environ as pyo
import pytest
from matplotlib.mathtext import MathTextParser

import mmprog
from mmprog import duality
from mmprog.cli import main as cli_main
from mmprog.datasets.registry import load_spec
from mmprog.engine.routes import ENGINE
from mmprog.inspect import to_latex
from mmprog.latex import model_latex
from mmprog.programs import get_program, registered

_PARSER = MathTextParser("path")


def math_rows(text):
    """The math of every line of the align* blocks (comments, environments, & and \\\\ removed)."""
    rows = []
    for line in text.splitlines():
        line = re.sub(r"(?<!\\)%.*$", "", line).strip()
        if not line or line.startswith(r"\begin") or line.startswith(r"\end"):
            continue
        line = line.replace("&", " ")
        if line.endswith(r"\\"):
            line = line[:-2]
        rows.append(line.strip())
    return rows


def compile_all(text):
    rows = math_rows(text)
    assert rows, "no math in the output"
    for row in rows:
        try:
            _PARSER.parse(f"${row}$")
        except Exception as e:           # mathtext's own words name the offending symbol
            pytest.fail(f"mathtext cannot compile {row!r}: {e}")
    return rows


def label(name):
    return r"\text{" + name.replace("_", r"\_") + "}"


@pytest.fixture(scope="module")
def tiny():
    return load_spec("tiny:seed=0")


@pytest.fixture(scope="module")
def trained(tiny):
    out = {}

    def get(name):
        if name not in out:
            hook = duality.hook_for(name)
            # a program grown outside mmprog.fit (linf) is handed the engine, as verify and show hand it
            res = hook.fit(tiny, ENGINE) if hook.own_fit else hook.fit(tiny, mmprog.fit, eps=1e-3)
            out[name] = res
        return out[name]
    return get


def _families_of(model):
    return [c.local_name for c in model.component_objects(pyo.Constraint, descend_into=True)
            if c.active and any(d.active for d in c.values())]


@pytest.mark.parametrize("name", registered())
@pytest.mark.parametrize("dual", [False, True], ids=["master", "dual"])
def test_every_program_compiles_and_names_every_family(trained, name, dual):
    res = trained(name)
    text = to_latex(res, dual=dual)
    rows = compile_all(text)
    model = duality.dual_model(res) if dual else res.model
    fams = _families_of(model)
    for fam in fams:
        assert any(label(fam) in r for r in rows), f"constraint family {fam} missing from\n{text}"
    for v in model.component_objects(pyo.Var, descend_into=True):
        if len(v):
            assert any(f"% {v.local_name}:" in line for line in text.splitlines()), f"variable {v.local_name}"
    obj = next(model.component_data_objects(pyo.Objective, active=True))
    head = rows[0]
    assert head.startswith(r"\min" if obj.sense == pyo.minimize else r"\max"), head
    for e in model.component_objects(pyo.Expression, descend_into=True):
        if len(e):
            assert any(r.startswith(r"\text{where}") and label(e.local_name) in r for r in rows), e.local_name


def test_expand_compiles_and_carries_the_numbers(trained):
    res = trained("l1m3n")
    text = to_latex(res, expand=True)
    compile_all(text)
    first = next(iter(res.model.cuts.values()))
    assert rf"{label('cuts')}_{{{first.index()}}}" in text
    assert f"\\geq {float(pyo.value(first.lower)):.4g}" in text


def test_renamed_and_added_components_show_up(trained):
    res = trained("m3n")
    m = res.model
    m.extra_row = pyo.Constraint(expr=m.w[0] + 2 * m.w[1] <= 3)
    try:
        text = model_latex(m)
        compile_all(text)
        assert label("extra_row") + r"\colon\ w_{0} + 2\,w_{1} \leq 3" in text
    finally:
        m.del_component(m.extra_row)
    assert "extra" not in model_latex(m)


def test_cut_symbols_are_checked_against_the_numbers(trained):
    """ΔF_rk and Δℓ_r are written only when every coefficient is the cuts': one changed number gives the generic
    symbol instead (the cut data come from model.ws, the rows from the Pyomo model)."""
    res = trained("m3n")
    ok = model_latex(res.model)
    assert r"\sum_{k} \Delta F_{rk}\,w_{k}" in ok and r"\geq \Delta\ell_{r}" in ok
    prog = get_program("m3n", **res.params)
    model = prog.build(res.model.dims)
    from mmprog.duality import working_set_arrays
    from mmprog.cuts import Cuts
    arr = working_set_arrays(res)
    prog.add_cuts(model, Cuts(arr.slack.copy(), arr.F.copy(), arr.dl.copy()))
    assert r"\Delta F_{rk}" in model_latex(model)
    # a feature many cuts touch, so a changed coefficient is no per-feature factor d_k either
    import numpy as np
    counts = np.diff(arr.F.tocsc().indptr)
    pos = next(p for p in range(len(arr.dl)) if counts[arr.F[p].indices].max() > 2)
    k = int(arr.F[pos].indices[np.argmax(counts[arr.F[pos].indices])])
    row = model.ws.components[pos]
    row.set_value((row.lower, row.body + 0.5 * model.w[k], row.upper))
    changed = model_latex(model)
    assert r"a^{cuts}_{rk}" in changed and r"\Delta F_{rk}" not in changed
    row2 = model.ws.components[1]
    row2.set_value((float(pyo.value(row2.lower)) + 1.0, row2.body, None))
    assert r"\Delta\ell_{r}" not in model_latex(model)


def test_cli_show_latex(capsys):
    assert cli_main(["show", "--program", "l1m3n", "--latex", "--dual"]) == 0
    out = capsys.readouterr().out
    rows = compile_all(out)
    assert any(label("mu_bound") in r for r in rows) and any(label("cuts") in r for r in rows)
