"""``mmprog predict``: a saved model's labels, one line (or JSON list) per instance."""
from __future__ import annotations

from .common import load_data, model_arguments, print_result

NAME = "predict"
HELP = "predict with a saved model"
ORDER = 20


def add_arguments(p):
    model_arguments(p)


def run(args):
    import mmprog
    pred = mmprog.load(args.model)
    if pred.extractor is not None:       # a model trained on text reads the text itself
        from ..datasets.registry import load_spec
        from ..tagging import predict_tags
        rows = predict_tags(pred, load_spec(args.data))       # in the training file's label encoding
    else:
        ds = load_data(args.data, args.train_fold, "test" if args.train_fold is not None else "train")
        labels = pred.predict(ds)
        names = pred.label_names
        rows = [[names[int(v)] if names and v >= 0 else int(v) for v in y] for y in labels]
    if args.json:
        print_result(rows, True)
    else:
        for r in rows:
            print(" ".join(map(str, r)))
