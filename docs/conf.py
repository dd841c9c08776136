"""Sphinx configuration of the mmprog docs site (`make docs`; built offline into docs/_build/html).

Generated at build time (never pasted, never committed): the program pages from the formulation cards and the LaTeX
generator (`mmprog.catalogue.regenerate`), the solver table from `mmprog solvers --json`, the benchmarks tables
from docs/records/*.json, the tutorials as notebooks executed by myst-nb, and the API reference by autosummary.
See docs/_ext/mmprog_docs.py.
"""
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE / "_ext"))
# Pyomo's PyNumero (Ipopt in the MTL tutorial) lives in the venv's Pyomo config folder, as `make` exports it
os.environ.setdefault("PYOMO_CONFIG_DIR", str(ROOT / ".venv" / "pyomo"))

import mmprog  # noqa: E402

project = "mmprog"
author = "the mmprog developers"
copyright = "2026, the mmprog developers"
release = version = mmprog.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_nb",
    "mmprog_docs",
]

# ------------------------------------------------------------------------------------------------ sources
exclude_patterns = ["_build", "records", "**.ipynb_checkpoints", "_generated"]   # _generated: {include}d only
templates_path = ["_templates"]
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]   # the cards start their sections at ### under generated headings

# ------------------------------------------------------------------------------------------------ maths, offline
# MathJax 3 is copied from the sphinx-mathjax-offline wheel into _static/mathjax by mmprog_docs (no CDN).
mathjax_path = "mathjax/tex-chtml.js"
# its fonts load from the script's own folder ([mathjax]/output/chtml/fonts), so every page finds them locally
# textmacros: \_ inside \text{} (component names such as half\_quad), loaded from _static/mathjax/input as well
mathjax3_config = {"loader": {"load": ["[tex]/textmacros"]},
                   "tex": {"processEscapes": True, "packages": {"[+]": ["textmacros"]}}}

# ------------------------------------------------------------------------------------------------ notebooks
nb_execution_mode = "force"           # every build runs the tutorials: their plots and checks are this build's
nb_execution_timeout = 180
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True

# ------------------------------------------------------------------------------------------------ API reference
autosummary_generate = True
autosummary_imported_members = False
autosummary_ignore_module_all = False
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()

# ------------------------------------------------------------------------------------------------ HTML
html_theme = "furo"
html_title = f"mmprog {release}"
html_theme_options = {"navigation_with_keys": True}
html_last_updated_fmt = None
html_copy_source = False
nitpicky = False
