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
