"""``mmprog predict``: a saved model's labels, one line (or JSON list) per instance."""
from __future__ import annotations

from .common import model_arguments, model_data, print_result

NAME = "predict"
HELP = "predict with a saved model"
ORDER = 20


def add_arguments(p):
    model_arguments(p)


def run(args):
    import mmprog
    pred = mmprog.load(args.model)
    ds = model_data(pred, args.data, args.train_fold)
    if pred.extractor is not None:       # a model trained on text reads the text itself
        from ..tagging import predict_tags
        rows = predict_tags(pred, ds)       # in the training file's label encoding
    else:
        labels = pred.predict(ds)
        names = pred.label_names
        rows = [[names[int(v)] if names and v >= 0 else int(v) for v in y] for y in labels]
    if args.json:
        print_result(rows, True)
    else:
        for r in rows:
            print(" ".join(map(str, r)))
