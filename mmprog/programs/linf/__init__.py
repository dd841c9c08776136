"""The L∞-regularised max-margin LP of Szedmak, Ni, Saunders & Rousu, "Max-margin structured output learning in
L1 norm space": the program and its constraint generation (:mod:`.program`), the estimator, prediction (23)–(27)
and the set perceptron (:mod:`.estimator`)."""
from .program import *  # noqa: F401,F403
from .program import __all__  # noqa: F401
