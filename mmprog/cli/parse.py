"""``mmprog parse``: write a saved dependency model's heads into the input CoNLL-U/CoNLL-X file.

``mmprog parse --model M --data conllu:FILE`` writes the CoNLL-U file with HEAD predicted (DEPREL set to ``_``: the
arc model predicts no relations); ``FILE`` may be ``-`` (standard input) and ``--out`` defaults to standard output.
"""
from __future__ import annotations

import json
import sys

from ..exceptions import DataError, ParameterError
from .common import OutputFile, close_input, input_stream

NAME = "parse"
HELP = "parse a CoNLL-U/CoNLL-X file with a dependency model: the file with HEAD predicted"
ORDER = 130


def add_arguments(p):
    p.add_argument("--model", required=True, help="saved dependency model (trained on conllu:/conllx: data)")
    p.add_argument("--data", required=True, help="conllu:FILE or conllx:FILE")
    p.add_argument("--out", default="-", help="output file (default standard output)")
    p.add_argument("--json", action="store_true", help="print attachment scores against the file's heads on stderr")


def _stream_lines(stream, source):
    """Numbered lines (1-based, line ends removed) of a binary stream, decoded piece by piece (UTF-8, a byte-order
    mark dropped, undecodable bytes a one-line error naming the line)."""
    from ..tagging import text_chunks
    for first, text in text_chunks(stream, source=source):
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        yield from enumerate(lines, first)


# sentences are parsed in batches of about this many tokens: the batched decoders stay efficient and memory stays
# bounded whatever the size of the input
_PARSE_BATCH_TOKENS = 20_000


def run(args):
    from pathlib import Path

    import numpy as np

    import mmprog

    from .. import metrics
    from ..datasets.base import TreeDataset
    from ..datasets.reading import blocks
    from ..datasets.treebank import sentence_10col
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
    src = Path(path)
    gold, got, tags = [], [], []
    n_sent = 0
    stream = input_stream(path)
    try:
        with OutputFile(args.out) as out:
            batch, n_tok = [], 0

            def flush():
                # parse the batch and write its blocks with HEAD replaced (DEPREL "_": the model predicts no
                # labels); comments, multiword tokens (1-2) and empty nodes (8.1) are written as they are
                parsed = [t for t in batch if t[1] is not None]
                if parsed:
                    ds = TreeDataset([t[1] for t in parsed], [t[2] for t in parsed], name=src.name)
                    for t, h in zip(parsed, pred.predict(ds)):
                        t[3][:] = h[1:]
                parts = []
                for block, sent, heads, pred_heads in batch:
                    m = 0
                    for _, line in block:
                        f = line.split("\t")
                        if sent is None or line.startswith("#") or not f[0].isdigit():
                            parts.append(line)
                            continue
                        f[6], f[7] = str(int(pred_heads[m])), "_"
                        m += 1
                        parts.append("\t".join(f))
                    parts.append("")
                    if sent is not None and args.json:
                        gold.append(heads)
                        got.append(pred_heads)
                        tags.append(sent["pos"])
                out.write("\n".join(parts) + "\n")
                batch.clear()

            for block in blocks(src, lines=_stream_lines(stream, path)):
                toks = [(k, t) for k, t in block if not t.startswith("#")]
                if not toks:
                    continue              # a block of comments only: no sentence
                got_sent = sentence_10col(src, toks, dialect, n_sent)
                if got_sent is None:
                    batch.append((block, None, None, None))
                    continue
                sent, heads = got_sent
                n_sent += 1
                batch.append((block, sent, heads, np.zeros(len(heads), dtype=np.int64)))
                n_tok += len(heads)
                if n_tok >= _PARSE_BATCH_TOKENS:
                    flush()
                    n_tok = 0
            if batch:
                flush()
            if not n_sent:
                raise DataError(f"{path}: no sentences found")
    finally:
        close_input(stream)
    if args.json:
        print(json.dumps({k: float(v) for k, v in metrics.attachment_scores(gold, got, pos=tags).items()}),
              file=sys.stderr)
    return 0
