"""``mmprog evaluate``: a saved model's scores on data (conlleval-like lines for a model trained on text; UAS and
LAS for a dependency model)."""
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
    if getattr(pred.fmap, "kind", None) == "arcs":      # UAS and, with the saved labeller, LAS
        from ..parsing import evaluate_parser, load_labeller
        return print_result(evaluate_parser(pred, load_labeller(args.model), ds), args.json)
    print_result(pred.evaluate(ds), args.json)
