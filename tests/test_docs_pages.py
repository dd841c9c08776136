"""The parts of the docs that are generated (docs/_ext/mmprog_docs.py) and the front door: the benchmarks tables
hold every row of every committed record with the record's own numbers; the program pages' maths becomes MathJax
environments; README stays a front door. The whole site is built and browser-checked by `make docs-check`."""
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
mmprog_docs = pytest.importorskip("mmprog_docs")


def test_records_page_shows_every_row_of_every_record(tmp_path, monkeypatch):
    from mmprog.bench import record
    rows = [{"system": "mmprog", "setting": "a", "seconds": 1.23456789, "f1": 93.8},
            {"system": "peer", "setting": "a", "seconds": 2.5, "peak_mb": 1024.0}]
    record.write(tmp_path / "records" / "x.json", "x", rows, notes=["one note"], argv=["--flag"])
    monkeypatch.setattr(mmprog_docs, "RECORDS", tmp_path / "records")
    monkeypatch.setattr(mmprog_docs, "GENERATED", tmp_path / "gen")
    mmprog_docs.generate_records()
    page = (tmp_path / "gen" / "records.md").read_text()
    assert "python -m mmprog.bench x --flag" in page and "- one note" in page
    table = [line for line in page.splitlines() if line.startswith("| ")]
    assert table[0] == "| system | setting | seconds | f1 | peak_mb |"
    assert table[2:] == ["| mmprog | a | 1.235 | 93.8 | — |", "| peer | a | 2.5 | — | 1,024 |"]


def test_committed_records_render():
    """Every committed record is one a bench wrote: it has the record's fields and rows naming system and setting."""
    files = sorted((ROOT / "docs" / "records").glob("*.json"))
    assert files, "docs/records/ holds the records the benchmarks page is rendered from"
    for f in files:
        rec = json.loads(f.read_text())
        assert rec["command"].startswith("python -m mmprog.bench ") and rec["rows"], f
        assert all("system" in r and "setting" in r for r in rec["rows"]), f


def test_card_maths_becomes_one_nowrap_block_per_environment():
    card = ("text\n\n```math\n% model m\n\\begin{align*}\na &= b \\\\  % note\n\\end{align*}\n% symbols\n"
            "\\begin{align*}\n& C = 1\n\\end{align*}\n```\n\nmore\n")
    out = mmprog_docs._math_blocks(card)
    blocks = re.findall(r"```\{math\}\n:nowrap:\n(.*?)\n```", out, flags=re.S)
    assert blocks == ["\\begin{align*}\na &= b \\\\  % note\n\\end{align*}", "\\begin{align*}\n& C = 1\n\\end{align*}"]
    assert "% symbols" not in out and out.startswith("text") and out.rstrip().endswith("more")


def test_readme_is_a_front_door():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    assert "load average" not in text.lower()
    assert not re.search(r"\b(at|from|commit) [0-9a-f]{7,40}\b", text), "no commit hashes in README"
    for cmd in ("make demo", "make test", "make docs", "mmprog show", "mmprog verify", "mmprog export",
                "mmprog tag", "mmprog evaluate", "mmprog parse"):
        assert cmd in text, cmd
