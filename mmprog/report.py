"""One self-contained HTML page for a trained model (``mmprog report --model M``, :meth:`mmprog.result.Result.to_html`).

The page holds the model's master program and its explicit dual typeset by MathJax (the statements written by
:func:`mmprog.inspect.to_latex`, the generator of ``mmprog show --latex`` and of the docs' program pages), the
convergence plot (bounds, gap and cuts per round, a PNG inlined as a data URI), the ``verify`` table (every
statement of :func:`mmprog.duality.check` with its two numbers, gap, tolerance and status) and, for the
multiple-template programs (``mtl``, ``pblock``), the template weights μ. MathJax 3 is inlined from the
``sphinx-mathjax-offline`` wheel (the ``docs`` extra: the same renderer as the docs site, SVG output so no font file
is needed), so the page opens with no network and can be mailed as one file.
"""
from __future__ import annotations

from importlib import metadata
from pathlib import Path

__all__ = ["mathjax_dir", "report_html", "write_report"]

#: the distribution that ships MathJax 3 (``pip install 'mmprog[docs]'``)
MATHJAX_DIST = "sphinx-mathjax-offline"


def mathjax_dir():
    """The folder of MathJax 3's files inside the ``sphinx-mathjax-offline`` distribution.

    Returns
    -------
    pathlib.Path
        The folder holding ``tex-chtml.js``, ``tex-svg.js`` and their components.

    Raises
    ------
    RuntimeError
        When the distribution is not installed (one line naming the extra that brings it).
    """
    try:
        dist = metadata.distribution(MATHJAX_DIST)
    except metadata.PackageNotFoundError:
        raise RuntimeError(f"MathJax is not installed: {MATHJAX_DIST} ships it "
                           f"(pip install 'mmprog[docs]', or `make docs`)") from None
    for f in dist.files or ():
        if f.name == "tex-chtml.js":
            return Path(dist.locate_file(f)).parent
    raise RuntimeError(f"{MATHJAX_DIST} {dist.version} holds no tex-chtml.js")


def _png(fig):
    """A matplotlib Figure as a ``data:`` URI (PNG), so the page carries its pictures."""
    import base64
    import io
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _num(x):
    if x is None:
        return ""
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


def _math(tex):
    """The generator's LaTeX as MathJax reads it: each ``align*`` environment on its own, ``%`` comment lines (the
    generator's notes on component sizes) dropped outside the environments, ``\\_`` inside ``\\text{}`` written as
    the ``_`` MathJax's text mode shows as it is (without its textmacros extension, which would be fetched)."""
    import html
    import re
    tex = re.sub(r"\\text\{([^{}]*)\}", lambda m: "\\text{" + m.group(1).replace("\\_", "_") + "}", tex)
    envs = re.findall(r"\\begin\{align\*\}.*?\\end\{align\*\}", tex, flags=re.S)
    return "\n".join(f'<div class="math">{html.escape(e)}</div>' for e in envs)


def report_html(result, dataset=None, solvers=None, title=None, checks=None):
    """The report page of a trained result as one HTML string (no external file: MathJax and the plots inlined).

    Parameters
    ----------
    result : Result
        A trained program (:func:`mmprog.fit`).
    dataset : optional
        The training data, passed to :func:`mmprog.duality.check` for the statements that compare predictions.
    solvers : list of str, optional
        Solvers for the ``verify`` table (default: every installed one, as ``mmprog verify``).
    title : str, optional
        The page's title (default: the program and its termination).
    checks : list of Check, optional
        The ``verify`` rows when already computed (default: :func:`mmprog.duality.check` runs here).

    Returns
    -------
    str
        The page.
    """
    import html

    from .duality import check
    from .inspect import to_latex
    esc = html.escape
    s = result.summary()
    title = title or f"mmprog report: {result.program} ({result.termination})"
    facts = [("program", result.program), ("parameters", ", ".join(f"{k} = {v}" for k, v in result.params.items())),
             ("solver", result.solver), ("slack form", result.slack), ("termination", result.termination),
             ("rounds", s["n_iter"]), ("cuts", s["n_cuts"]), ("master optimum (lower bound)", s["primal_objective"]),
             ("dual value from the solver's multipliers", s["dual_objective"]),
             ("best full objective (upper bound)", s["upper_bound"]), ("relative gap", s["gap"]),
             ("non-zero weights", f"{s['nonzero_weights']} of {result.w.size}")]
    parts = [f"<h1>{esc(title)}</h1>",
             "<table class='facts'>" + "".join(f"<tr><th>{esc(k)}</th><td>{esc(_num(v))}</td></tr>"
                                                for k, v in facts) + "</table>"]
    parts += ["<h2>The master program</h2>",
              "<p>As the Pyomo model states it at the end of the fit (<code>mmprog show --latex</code>):</p>",
              _math(to_latex(result))]
    try:
        dual = _math(to_latex(result, dual=True))
        parts += ["<h2>Its explicit dual</h2>",
                  "<p>Built from the same cuts (<code>mmprog.duality.dual_model</code>):</p>", dual]
    except (NotImplementedError, KeyError, TypeError, ValueError) as e:
        parts += ["<h2>Its explicit dual</h2>", f"<p>Not available for this fit: {esc(str(e))}</p>"]
    if getattr(result, "history", None):
        parts += ["<h2>Convergence</h2>",
                  f"<img alt='bounds, gap and cuts per round' src='{_png(result.plot_convergence())}'>"]
    rows = check(result, solvers=solvers, dataset=dataset) if checks is None else checks
    n_fail = sum(c.status == "fail" for c in rows)
    parts += ["<h2>Verified statements (<code>mmprog verify</code>)</h2>",
              f"<p>{sum(c.status == 'pass' for c in rows)} passed, {n_fail} failed, "
              f"{sum(c.status == 'skipped' for c in rows)} skipped.</p>",
              "<table class='verify'><tr><th>statement</th><th>lhs</th><th>rhs</th><th>gap</th><th>tolerance</th>"
              "<th>status</th></tr>"
              + "".join(f"<tr class='{esc(c.status)}'><td>{esc(c.statement)}</td><td>{_num(c.lhs)}</td>"
                        f"<td>{_num(c.rhs)}</td><td>{_num(c.gap)}</td><td>{_num(c.tolerance)}</td>"
                        f"<td>{esc(c.status)}{(': ' + esc(c.reason)) if c.reason else ''}</td></tr>" for c in rows)
              + "</table>"]
    tw = getattr(result, "template_weights", None)
    if tw is not None:
        import numpy as np
        names = list(getattr(result, "template_names", None) or [f"template {j}" for j in range(len(tw))])
        parts += ["<h2>Template weights μ</h2>",
                  f"<img alt='template weights' src='{_png(result.plot_template_weights())}'>",
                  "<table class='templates'><tr><th>template</th><th>μ</th></tr>"
                  + "".join(f"<tr><td>{esc(str(n))}</td><td>{_num(float(m))}</td></tr>"
                            for n, m in zip(names, np.asarray(tw, dtype=float)))
                  + "</table>"]
    mathjax = (mathjax_dir() / "tex-svg.js").read_text(encoding="utf-8").replace("</script", "<\\/script")
    style = ("body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#222}"
             "table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.25rem .5rem;"
             "text-align:left;vertical-align:top}tr.fail td{background:#fdd}tr.skipped td{color:#777}"
             "img{max-width:100%}.math{overflow-x:auto}")
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<title>{esc(title)}</title><style>{style}</style>"
            "<script>window.MathJax={tex:{processEscapes:true},svg:{fontCache:'global'}};</script>"
            f"<script>{mathjax}</script></head><body>\n" + "\n".join(parts) + "\n</body></html>\n")


def write_report(result, path, **kwargs):
    """Write :func:`report_html` to ``path`` (a temporary file beside it, then renamed). Returns the path."""
    import os
    import tempfile
    text = report_html(result, **kwargs)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".report-", suffix=".html", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return str(path)
