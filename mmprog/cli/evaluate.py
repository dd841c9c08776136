"""``mmprog evaluate``: a saved model's scores on data (conlleval-like lines for a model trained on text)."""
from __future__ import annotations

from .common import format_scores, model_arguments, model_data, print_result

NAME = "evaluate"
HELP = "evaluate a saved model"
ORDER = 30


def add_arguments(p):
    model_arguments(p)


def run(args):
    import mmprog
    pred = mmprog.load(args.model)
    ds = model_data(pred, args.data, args.train_fold)
    if pred.extractor is not None:
        from ..tagging import score_text
        sc = score_text(pred, ds)
        print_result(sc, True) if args.json else print(format_scores(sc))
        return
    print_result(pred.evaluate(ds), args.json)
