"""``mmprog evaluate``: a saved model's scores on data (conlleval-like lines for a model trained on text; UAS and
LAS for a dependency model)."""
from __future__ import annotations

from .common import format_scores, load_data, model_arguments, print_result

NAME = "evaluate"
HELP = "evaluate a saved model"
ORDER = 30


def add_arguments(p):
    model_arguments(p)


def run(args):
    import mmprog
    pred = mmprog.load(args.model)
    if pred.extractor is not None:
        return evaluate_text(pred, args)
    ds = load_data(args.data, args.train_fold, "test" if args.train_fold is not None else "train")
    if getattr(pred.fmap, "kind", None) == "arcs":      # UAS and, with the saved labeller, LAS
        from ..parsing import evaluate_parser, load_labeller
        return print_result(evaluate_parser(pred, load_labeller(args.model), ds), args.json)
    print_result(pred.evaluate(ds), args.json)


def evaluate_text(pred, args):
    from ..datasets.registry import load_spec
    from ..tagging import score_text
    sc = score_text(pred, load_spec(args.data))
    print_result(sc, True) if args.json else print(format_scores(sc))
