"""``mmprog tag``: write a saved text model's predictions into the input file's own format.

``mmprog tag --model M --data conll:FILE`` writes every token line followed by the predicted label (as CRF++'s
``crf_test`` does), sentence by sentence as they are read; ``FILE`` may be ``-`` (standard input) and ``--out``
defaults to standard output.
"""
from __future__ import annotations

import json
import sys

from ..exceptions import DataError, ParameterError
from .common import (OutputFile, check_outputs, close_input, input_stream, load_text_model, model_files,
                     refuse_clobbering)

NAME = "tag"
HELP = "tag a CoNLL file with a model trained on text: input columns + predicted label (as crf_test)"
ORDER = 120


def _stdin_ok(path):
    return path == "-"


def _text_spec(spec, allowed=("conll",)):
    """(path, loader keyword arguments) of a text data spec; path ``-`` is standard input."""
    from ..datasets.registry import parse_spec
    name = spec.partition(":")[0].strip().lower()
    if name not in allowed:
        raise ParameterError(f"--data must be a {' or '.join(allowed)} spec here (e.g. conll:FILE); got {spec!r}")
    _, args, kwargs = parse_spec(spec, path_ok=_stdin_ok)
    if isinstance(kwargs.get("columns"), str):
        kwargs["columns"] = (kwargs["columns"],)      # columns=form: one name, not the letters f, o, r, m
    return str(args[0]), kwargs


def add_arguments(p):
    p.add_argument("--model", required=True, help="saved text model (PATH.json with PATH.npz beside it)")
    p.add_argument("--data", required=True, help="conll:FILE[,columns=a/b/c][,sep=S][,encoding=E] (FILE - reads "
                   "standard input); default columns: the training token columns, plus the gold label if the lines "
                   "have one more; the output is written in the input's encoding")
    p.add_argument("--out", default="-", help="output file (default standard output)")
    p.add_argument("--marginals", action="store_true", help="append the marginal probability of each label (for a "
                   "model trained with --tag-scheme iobes: of the IOBES label decoded, e.g. E-NP where I-NP is "
                   "written)")
    p.add_argument("--topk", type=int, default=None, metavar="K", help="write the K best labelings per sentence, "
                   "each under a header line #k=RANK,score=SCORE (one field: no token line reads as one)")
    p.add_argument("--json", action="store_true", help="print a JSON summary (sentences, tokens, seconds) on stderr")


def run(args):
    from ..tagging import check_text_encoding, tag_stream
    path, kw = _text_spec(args.data)
    unknown = set(kw) - {"columns", "sep", "encoding"}
    if unknown:
        raise ParameterError(f"tag reads columns=, sep= and encoding= from the data spec; got {sorted(unknown)}")
    if kw.get("sep") is not None and (not isinstance(kw["sep"], str) or kw["sep"] == ""):
        raise ParameterError(f"sep must be a non-empty string (sep=\\t is a tab); got {kw['sep']!r}")
    encoding = kw.get("encoding", "utf-8")
    check_text_encoding(encoding)
    if args.topk is not None and args.topk < 1:
        raise ParameterError(f"--topk must be an int >= 1; got {args.topk}")
    outputs = [("--out", args.out)]
    refuse_clobbering(outputs, [("--data", path)] + [("--model", p) for p in model_files(args.model)])
    check_outputs(outputs)
    pred = load_text_model(args.model)
    stream = input_stream(path)
    try:
        with OutputFile(args.out, encoding) as out:
            info = tag_stream(pred, stream, path, out, columns=kw.get("columns"), sep=kw.get("sep"),
                              marginals=args.marginals, topk=args.topk, encoding=encoding)
            if not info["sentences"]:
                # nothing to tag is an error, as in train, evaluate and parse (and --out is left as it was)
                raise DataError(f"{path}: no sentences found")
    finally:
        close_input(stream)
    if args.json:
        print(json.dumps(info), file=sys.stderr)
    return 0
