"""sklearn-crfsuite's ``scorers``: scikit-learn scorers for ``cross_val_score``, ``GridSearchCV``,
``RandomizedSearchCV``."""
from sklearn.metrics import make_scorer

from . import metrics

flat_accuracy = make_scorer(metrics.flat_accuracy_score)
sequence_accuracy = make_scorer(metrics.sequence_accuracy_score)

__all__ = ["flat_accuracy", "sequence_accuracy"]
