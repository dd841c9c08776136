"""sklearn-crfsuite's ``metrics`` module: scores of lists of label sequences, flattened to tokens
(:mod:`mmprog.metrics` holds them; CoNLL entity scores are :func:`mmprog.metrics.chunk_prf`)."""
from ..metrics import (flat_accuracy_score, flat_classification_report, flat_f1_score, flat_fbeta_score,
                       flat_precision_score, flat_recall_score, sequence_accuracy_score)

__all__ = ["flat_accuracy_score", "flat_precision_score", "flat_recall_score", "flat_f1_score", "flat_fbeta_score",
           "flat_classification_report", "sequence_accuracy_score"]
