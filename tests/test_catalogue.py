"""The catalogue stays true: regenerating it from data/tiny_chain.tsv gives the committed files.

Exports are compared with :func:`mmprog.catalogue.same_text`: the text between numbers must be identical and the
numbers equal within 1e-6 relative (1e-9 absolute) — the ``.gms`` files carry the solution's levels, whose last
digits (e.g. 6.9e-18 for a zero) may differ between machines and BLAS builds; the ``.lp`` files carry only the cut
data, which is computed deterministically from the TSV's exact floats.

The committed files are also checked against an independent reader: highspy reads each exported ``.lp`` and
finds the optimum the card reports, and the dual file's optimum equals the master file's (strong duality on the
files themselves).
"""
import re
import shutil
from pathlib import Path

import highspy
import pytest

from mmprog import catalogue

MODELS, DATA = catalogue.default_dirs()


def test_data_file_is_the_fixed_tiny_dataset(tmp_path):
    fresh = catalogue.write_data(tmp_path / "tiny.tsv")
    assert DATA.read_text(encoding="utf-8") == fresh.read_text(encoding="utf-8")
    committed = catalogue.load_sets(DATA.parent / catalogue.SETS_NAME)
    for a, b in zip(committed, catalogue.load_sets(catalogue.write_sets(tmp_path / "sets.npz"))):
        assert a.shape == b.shape and (a != b).nnz == 0


def test_every_registered_program_has_a_card():
    from mmprog.programs import registered
    cards = {e.card for e in catalogue.ENTRIES}
    assert set(registered()) <= cards, f"programs without a card: {set(registered()) - cards}"
    for card in cards:
        assert (MODELS / f"{card}.md").exists()


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory):
    out = tmp_path_factory.mktemp("catalogue")
    for card in {e.card for e in catalogue.ENTRIES}:
        shutil.copy(MODELS / f"{card}.md", out / f"{card}.md")
    written = catalogue.regenerate(out, data=DATA)
    return out, [Path(p) for p in written]


def test_regenerated_catalogue_matches_committed_files(regenerated):
    out, written = regenerated
    assert len(written) >= 2 + 4 * 2            # two cards, at least four files each
    for p in written:
        committed = MODELS / p.name
        assert committed.exists(), f"{committed} is not committed; run `mmprog catalogue`"
        ok, where = catalogue.same_text(committed.read_text(encoding="utf-8"), p.read_text(encoding="utf-8"))
        assert ok, f"{committed} drifted: {where}; run `mmprog catalogue` and review the diff"


def test_check_reports_drift(tmp_path):
    for p in MODELS.iterdir():
        if p.is_file():                     # models/tutorials/ holds the notebooks, not catalogue files
            shutil.copy(p, tmp_path / p.name)
    lp = tmp_path / "l1m3n.lp"
    text = lp.read_text()
    m = re.search(r"-?\d+\.\d{6,}", text)
    lp.write_text(text[: m.start()] + repr(float(m.group()) * 1.001) + text[m.end():])
    gms = tmp_path / "m3n.gms"
    gms.write_text(gms.read_text().replace("xi_", "slack_", 1))
    (tmp_path / "m3n.dual.lp").unlink()
    # the card's mathematics: a hand edit of the generated statement (a sign of the dual) is drift
    card = tmp_path / "l1m3n.md"
    text = card.read_text()
    assert r"\text{mu\_bound}_{k}\colon\ \sum_{r} \Delta F_{rk}\,\alpha_{r} \leq" in text
    card.write_text(text.replace(r"\text{mu\_bound}_{k}\colon\ \sum_{r}", r"\text{mu\_bound}_{k}\colon\ -\sum_{r}"))
    drift = catalogue.check(tmp_path)
    assert len(drift) == 4, drift           # only the four files touched (the untouched ones match)
    assert any("l1m3n.md: drifted (text differs" in d for d in drift), drift
    assert any("l1m3n.lp: drifted (number" in d for d in drift), drift
    assert any("m3n.gms: drifted (text differs" in d for d in drift), drift
    assert any("m3n.dual.lp: missing" in d for d in drift), drift


def test_same_text_tolerates_last_digits_only():
    assert catalogue.same_text("x(1) + 0.1 y <= 6.9388939039072284e-18", "x(1) + 0.10000000000000001 y <= 0")[0]
    assert not catalogue.same_text("x(1) + 0.1 y", "x(1) + 0.1001 y")[0]
    assert not catalogue.same_text("x(1) + 0.1 y", "x(2) + 0.1 y")[0]
    assert not catalogue.same_text("c: x >= 1", "c: x <= 1")[0]
    assert not catalogue.same_text("x + 1", "x + 1 + 2")[0]


def card_number(card, label):
    text = (MODELS / card).read_text(encoding="utf-8")
    return [float(v.rstrip(".")) for v in re.findall(label + r" ([-\d.e+]+)", text)]


LP_QP_CARDS = ("m3n", "l1m3n", "enm3n", "pomen", "p4", "lapm3n", "adapm3n", "linf")  # exports highspy reads and solves


@pytest.mark.parametrize("stem,card", [(s, f"{s}.md") for s in LP_QP_CARDS])
def test_exported_files_solve_to_the_cards_optimum(stem, card):
    values = {}
    for f in (f"{stem}.lp", f"{stem}.dual.lp"):
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        assert h.readModel(str(MODELS / f)) == highspy.HighsStatus.kOk
        h.run()
        assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
        values[f] = h.getInfo().objective_function_value
    master = card_number(card, "master optimum" if stem != "linf" else "optimum t =")[0]
    assert values[f"{stem}.lp"] == pytest.approx(master, rel=1e-8)
    assert values[f"{stem}.dual.lp"] == pytest.approx(values[f"{stem}.lp"], rel=1e-7)
    assert card_number(card, r"Optimum \(highs\):")[0] == pytest.approx(master, rel=1e-7)


def test_cards_name_the_model_components_exactly(tmp_path):
    """A meaning for a component the model lacks, or a component without a meaning, stops the regeneration."""
    entry = next(e for e in catalogue.ENTRIES if e.stem == "l1m3n")
    saved = dict(entry.meanings)
    try:
        entry.meanings["w"] = "not a component of the P1 master"
        with pytest.raises(KeyError, match="'w'|w that"):
            catalogue.regenerate(tmp_path, data=DATA, cards=["l1m3n"])
        entry.meanings.clear()
        entry.meanings.update({k: v for k, v in saved.items() if k != "mu"})
        with pytest.raises(KeyError, match="'mu'"):
            catalogue.regenerate(tmp_path, data=DATA, cards=["l1m3n"])
    finally:
        entry.meanings.clear()
        entry.meanings.update(saved)


def test_generated_statement_uses_the_model_names():
    """Every variable, constraint and expression in a card's component table appears in its generated statement
    (constraints and expressions as \\text{name}, variables on their domain line), so the mathematics a reader sees
    is the Pyomo model's."""
    for card in {e.card for e in catalogue.ENTRIES}:
        text = (MODELS / f"{card}.md").read_text(encoding="utf-8")
        prose, block = text.split(catalogue.BEGIN)
        math = "\n".join(re.findall(r"```math\n(.*?)```", block, flags=re.S))
        assert math, f"{card}.md has no generated statement"
        rows = re.findall(r"^\| `([A-Za-z_]+)` \| (variable|constraint|expression) \|", block, flags=re.M)
        assert rows
        for n, kind in rows:
            if kind == "variable":
                assert f"% {n}:" in math, f"{card}.md: variable {n} is not in the statement"
            else:
                assert "\\text{" + n.replace("_", "\\_") + "}" in math, f"{card}.md: {kind} {n} not in the statement"
