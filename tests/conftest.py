"""Shared test set-up.

mmprog, imported first, points PYOMO_CONFIG_DIR at the venv's PyNumero library (``make`` builds it there) before any
test module imports Pyomo, which reads the variable once: a bare ``python -m pytest`` then finds Ipopt as ``make
test`` does.
"""
import mmprog  # noqa: F401
