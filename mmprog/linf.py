"""Sparse-to-sparse prediction with the L∞-regularised max-margin program (Szedmak, Ni, Saunders & Rousu): the names
users import. The code lives with the program in :mod:`mmprog.programs.linf`: the estimator
(:mod:`~mmprog.programs.linf.estimator`), the prediction (23)–(27) (:mod:`~mmprog.programs.linf.prediction`) and
the set perceptron (:mod:`~mmprog.programs.linf.perceptron`)."""
from __future__ import annotations

from .programs.linf.estimator import SUPPORTS, LInfFitResult, LInfMaxMargin  # noqa: F401
from .programs.linf.perceptron import PerceptronResult, set_perceptron
from .programs.linf.prediction import bounded_simplex, resolve_g, select_sets, set_prf

__all__ = ["LInfMaxMargin", "LInfFitResult", "bounded_simplex", "select_sets", "set_perceptron", "PerceptronResult",
           "set_prf", "resolve_g"]
