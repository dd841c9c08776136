"""``mmprog parse``: write a saved dependency model's heads and relations into the input CoNLL-U/CoNLL-X file.

``mmprog parse --model M --data conllu:FILE`` writes the file with HEAD and DEPREL predicted (DEPREL ``_`` for a
model saved without its labeller); every other byte is kept (see :mod:`mmprog.parsing`). The input's HEAD column may
be ``_``; ``FILE`` may be ``-`` (standard input) and ``--out`` defaults to standard output. ``--out`` may not be the
input or the model (refused before any work) and is written under a temporary name, then renamed.
"""
from __future__ import annotations

import json
import sys

from ..exceptions import ParameterError
from .common import OutputFile, check_outputs, close_input, input_stream, model_files, refuse_clobbering, spec_paths

NAME = "parse"
HELP = "parse a CoNLL-U/CoNLL-X file with a dependency model: the file with HEAD and DEPREL predicted"
ORDER = 130


def add_arguments(p):
    p.add_argument("--model", required=True, help="saved dependency model (trained on conllu:/conllx: data)")
    p.add_argument("--data", required=True, help="conllu:FILE or conllx:FILE")
    p.add_argument("--out", default="-", help="output file (default standard output)")
    p.add_argument("--json", action="store_true", help="print attachment scores against the file's heads on stderr")


def run(args):
    import mmprog

    from ..parsing import load_labeller, parse_stream
    outputs = [("--out", args.out)]
    refuse_clobbering(outputs, [("--data", p) for p in spec_paths(args.data)]
                      + [("--model", p) for p in model_files(args.model)])
    check_outputs(outputs)
    pred = mmprog.load(args.model)
    if getattr(pred.fmap, "kind", None) != "arcs":
        raise ParameterError(f"{args.model}: not a dependency model (feature map {pred.fmap.kind!r}); train one on "
                             f"conllu:/conllx: data")
    dialect, _, path = args.data.partition(":")
    dialect = dialect.strip().lower()
    if dialect not in ("conllu", "conllx") or not path:
        raise ParameterError(f"--data must be conllu:FILE or conllx:FILE (FILE - reads standard input); got "
                             f"{args.data!r}")
    if path != "-":
        from ..datasets.registry import parse_spec
        path = str(parse_spec(args.data)[1][0])
    labeller = load_labeller(args.model)
    stream = input_stream(path)
    try:
        with OutputFile(args.out) as out:
            res = parse_stream(pred, labeller, stream, path, out, dialect, score=args.json)
    finally:
        close_input(stream)
    if args.json:
        print(json.dumps(res), file=sys.stderr)
    return 0
