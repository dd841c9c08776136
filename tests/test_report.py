"""The report page of a fit (``Result.to_html``, ``mmprog report``): one self-contained HTML file holding the master
and its explicit dual as the LaTeX generator writes them, the convergence plot, the verify table and (MTL) the
template weights. Here the page's content is checked against the objects it is written from; that MathJax typesets
it and the plots load in a real browser is checked by ``make docs-check`` (docs/check_site.py)."""
import base64
import html
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mmprog
from mmprog.datasets import load_tsv

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "data" / "tiny_chain.tsv"

from importlib import metadata  # noqa: E402

try:
    metadata.distribution("sphinx-mathjax-offline")
except metadata.PackageNotFoundError:      # the docs extra is in requirements.lock; a bare `pip install .` lacks it
    pytest.skip("sphinx-mathjax-offline (the docs extra) is not installed", allow_module_level=True)


def _images(page):
    return [base64.b64decode(m) for m in re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", page)]


def test_page_holds_master_dual_plot_and_the_verify_rows():
    from mmprog.duality import check
    from mmprog.inspect import to_latex
    ds = load_tsv(TINY)
    res = mmprog.fit(ds, program="l1m3n", C=1.0)
    rows = check(res)
    page = res.to_html(checks=rows)
    # the statements are the generator's, environment by environment (escaped for HTML)
    for tex in (to_latex(res), to_latex(res, dual=True)):
        for env in re.findall(r"\\begin\{align\*\}.*?\\end\{align\*\}", tex, flags=re.S):
            env = re.sub(r"\\text\{([^{}]*)\}", lambda m: "\\text{" + m.group(1).replace("\\_", "_") + "}", env)
            assert html.escape(env) in page
    assert page.count("\\begin{align*}") >= 2
    # one table row per verified statement, with its status
    table = page.split("<table class='verify'>", 1)[1].split("</table>", 1)[0]
    assert table.count("<tr class=") == len(rows)
    for c in rows:
        assert html.escape(c.statement) in table
    assert f"{sum(c.status == 'pass' for c in rows)} passed, {sum(c.status == 'fail' for c in rows)} failed" in page
    # the convergence plot is a PNG carried by the page
    imgs = _images(page)
    assert len(imgs) == 1 and imgs[0][:8] == b"\x89PNG\r\n\x1a\n" and len(imgs[0]) > 1000
    # self-contained: MathJax inlined (its code mentions URLs, e.g. its menu's "about" link), and outside the
    # scripts no element refers to anything outside the page
    assert "MathJax" in page and "<script src" not in page
    markup = re.sub(r"<script>.*?</script>", "", page, flags=re.S)
    assert not re.search(r"""(src|href)\s*=\s*['"]?(https?:)?//""", markup)


def test_mtl_page_lists_the_template_weights():
    ds = load_tsv(TINY)
    res = mmprog.fit(ds, program="mtl", C=1.0, eps=0.01)
    page = res.to_html(checks=[])
    table = page.split("<table class='templates'>", 1)[1].split("</table>", 1)[0]
    got = [float(x) for x in re.findall(r"<td>([-+0-9.e]+)</td></tr>", table)]
    assert np.allclose(got, np.asarray(res.template_weights, dtype=float), rtol=1e-5, atol=1e-12)
    assert len(_images(page)) == 2          # convergence and template weights


def _cli(*argv, cwd):
    code = "import sys; from mmprog.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=cwd, timeout=600)


def test_report_command_refits_and_refuses_what_is_not_the_model(tmp_path):
    r = _cli("train", "--data", f"tsv:{TINY}", "--program", "l1m3n", "--C", "1", "--out", "m", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _cli("report", "--model", "m", "--data", f"tsv:{TINY}", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "m.report.html").read_text(encoding="utf-8")
    assert "l1m3n" in page and "<table class='verify'>" in page
    # other data: the refit is not the saved model, so no page is written for it
    r = _cli("report", "--model", "m", "--data", "tiny:seed=3", "--out", "other.html", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert "weights" in r.stderr and not (tmp_path / "other.html").exists()
    # never over an input
    before = (tmp_path / "m.json").read_bytes()
    r = _cli("report", "--model", "m", "--data", f"tsv:{TINY}", "--out", "m.json", cwd=tmp_path)
    assert r.returncode == 2 and (tmp_path / "m.json").read_bytes() == before
