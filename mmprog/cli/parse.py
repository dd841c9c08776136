"""``mmprog parse``: write a saved dependency model's heads and relations into the input CoNLL-U/CoNLL-X file.

``mmprog parse --model M --data conllu:FILE`` writes the file with HEAD and DEPREL predicted (DEPREL ``_`` for a
model saved without its labeller); every other byte is kept (see :mod:`mmprog.parsing`). The input's HEAD column may
be ``_``; ``FILE`` may be ``-`` (standard input) and ``--out`` defaults to standard output.
"""
from __future__ import annotations

import json
import sys

from ..exceptions import ParameterError

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

    from ..parsing import load_labeller, parse_file
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
    res = parse_file(pred, load_labeller(args.model), path, args.out, dialect, score=args.json)
    if args.json:
        print(json.dumps(res), file=sys.stderr)
    return 0
