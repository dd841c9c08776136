"""sklearn-crfsuite's names over mmprog: a CRFsuite script switches with one import.

::

    from mmprog import crfsuite as sklearn_crfsuite        # was: import sklearn_crfsuite
    from mmprog.crfsuite import metrics, scorers           # was: from sklearn_crfsuite import metrics, scorers

``CRF`` is :class:`mmprog.estimators.SequenceTagger`: it takes every argument of ``sklearn_crfsuite.CRF`` and maps
it to its max-margin meaning (the table in its docstring and in docs/user_guide/from_sklearn_crfsuite.md; ``c2`` is
the ℓ2 weight with C = 1/(2·c2)), and it fits by the certified default route (the fit ends at a proven relative gap
to the optimum of its program, ``CRF().result_.gap``). ``metrics`` and ``scorers`` have sklearn-crfsuite's functions.
sklearn-crfsuite itself is not needed (nor imported).
"""
from ..estimators import SequenceTagger as CRF
from . import metrics, scorers

__all__ = ["CRF", "metrics", "scorers"]
