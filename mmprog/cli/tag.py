"""``mmprog tag``: write a saved text model's predictions into the input file's own format.

``mmprog tag --model M --data conll:FILE`` writes every token line followed by the predicted label (as CRF++'s
``crf_test`` does), sentence by sentence as they are read; ``FILE`` may be ``-`` (standard input) and ``--out``
defaults to standard output.
"""
from __future__ import annotations

import json
import sys

from ..exceptions import ParameterError
from .common import OutputFile, close_input, input_stream, load_text_model

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
    return str(args[0]), kwargs


def add_arguments(p):
    p.add_argument("--model", required=True, help="saved text model (PATH.json with PATH.npz beside it)")
    p.add_argument("--data", required=True, help="conll:FILE[,columns=a/b/c] (FILE - reads standard input); "
                   "default columns: the training token columns, plus the gold label if the lines have one more")
    p.add_argument("--out", default="-", help="output file (default standard output)")
    p.add_argument("--marginals", action="store_true", help="append the marginal probability of each label (for a "
                   "model trained with --tag-scheme iobes: of the IOBES label decoded, e.g. E-NP where I-NP is "
                   "written)")
    p.add_argument("--topk", type=int, default=None, metavar="K", help="write the K best labelings per sentence")
    p.add_argument("--json", action="store_true", help="print a JSON summary (sentences, tokens, seconds) on stderr")


def run(args):
    from ..tagging import tag_stream
    pred = load_text_model(args.model)
    path, kw = _text_spec(args.data)
    unknown = set(kw) - {"columns", "sep"}
    if unknown:
        raise ParameterError(f"tag reads columns= and sep= from the data spec; got {sorted(unknown)}")
    stream = input_stream(path)
    try:
        with OutputFile(args.out) as out:
            info = tag_stream(pred, stream, path, out, columns=kw.get("columns"), sep=kw.get("sep"),
                              marginals=args.marginals, topk=args.topk)
    finally:
        close_input(stream)
    if args.json:
        print(json.dumps(info), file=sys.stderr)
    return 0
