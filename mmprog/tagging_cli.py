"""``mmprog tag`` and ``mmprog parse``: write a saved model's predictions into the input file's own format, and the
text route of ``mmprog train`` (``--templates``) and ``mmprog evaluate`` for models trained on text.

``mmprog tag --model M --data conll:FILE`` writes every token line followed by the predicted label (as CRF++'s
``crf_test`` does), sentence by sentence as they are read; ``FILE`` may be ``-`` (standard input) and ``--out``
defaults to standard output. ``mmprog parse --model M --data conllu:FILE`` writes the CoNLL-U file with HEAD predicted
(DEPREL set to ``_``: the arc model predicts no relations).
"""
from __future__ import annotations

import io
import json
import os
import sys
import tempfile
import time

from .commands import _parse_value, _print, command, long_run_options, save_first
from .exceptions import DataError, ParameterError


def _stdin_ok(path):
    return path == "-"


def _text_spec(spec, allowed=("conll",)):
    """(path, loader keyword arguments) of a text data spec; path ``-`` is standard input."""
    from .datasets.registry import parse_spec
    name = spec.partition(":")[0].strip().lower()
    if name not in allowed:
        raise ParameterError(f"--data must be a {' or '.join(allowed)} spec here (e.g. conll:FILE); got {spec!r}")
    _, args, kwargs = parse_spec(spec, path_ok=_stdin_ok)
    return str(args[0]), kwargs


def _input_stream(path):
    """The binary input: standard input for ``-``, else the file (gzip read transparently)."""
    from .datasets.reading import open_binary
    if path == "-":
        return sys.stdin.buffer if hasattr(sys.stdin, "buffer") else io.BytesIO(sys.stdin.read().encode("utf-8"))
    return open_binary(path)


class _Output:
    """Standard output, or a file written under a temporary name and renamed into place when complete."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        if self.path in (None, "-"):
            return sys.stdout
        d = os.path.dirname(os.path.abspath(self.path))
        self._tmp = tempfile.NamedTemporaryFile("w", dir=d, suffix=".tmp", delete=False, encoding="utf-8")
        return self._tmp

    def __exit__(self, exc_type, exc, tb):
        if self.path in (None, "-"):
            sys.stdout.flush()
            return False
        self._tmp.close()
        if exc_type is None:
            os.replace(self._tmp.name, self.path)
        else:
            os.unlink(self._tmp.name)
        return False


def _load_text_model(path):
    import mmprog
    pred = mmprog.load(path)
    if pred.extractor is None:
        raise ParameterError(f"{path}: this model was not trained on text (no templates in it); train one with "
                             f"`mmprog train --data conll:FILE --templates PRESET|FILE`")
    return pred


# ----------------------------------------------------------------------------------------------------------------------
# train / evaluate on text (called from mmprog.cli)
# ----------------------------------------------------------------------------------------------------------------------

def _lexicons(specs):
    """``--lexicon NAME=FILE`` options as {NAME: {word: value}} (each file read with one-line errors)."""
    from .features.templates import read_lexicon
    out = {}
    for spec in specs or []:
        name, eq, path = spec.partition("=")
        if not eq or not name or not path:
            raise ParameterError(f"--lexicon takes NAME=FILE (e.g. brown=clusters.txt); got {spec!r}")
        if name in out:
            raise ParameterError(f"--lexicon {name!r} given twice")
        out[name] = read_lexicon(path)
    return out


def train_text(args):
    """``mmprog train --templates ...``: features from templates on a CoNLL file, then the chosen program."""
    from .datasets.registry import load_spec
    from .tagging import fit_text, read_templates, score_text
    corpus = load_spec(args.data)
    if not hasattr(corpus, "sentences") or hasattr(corpus, "heads") or not hasattr(corpus, "labels"):
        raise ParameterError(f"--templates needs token text (a conll or sighan spec); {args.data!r} loads a "
                             f"{type(corpus).__name__}")
    extra = {k: _parse_value(v) for k, v in (kv.split("=", 1) for kv in args.param or [])}
    long_run = long_run_options(args)
    t0 = time.perf_counter()
    res = fit_text(corpus, templates=read_templates(args.templates), min_count=args.min_count,
                   lexicons=_lexicons(args.lexicon), tag_scheme=args.tag_scheme,
                   program=args.program, C=args.C, solver=args.solver, slack=args.slack, eps=args.eps,
                   max_iter=args.max_iter, time_limit=args.time_limit, oracle=args.oracle, n_jobs=args.n_jobs,
                   client=args.client, drop_after=args.drop_after, max_cuts=args.max_cuts, progress=not args.json, order=args.order,
                   transitions=args.transitions, **long_run, **extra)
    out = res.summary()
    out["train_seconds"] = round(time.perf_counter() - t0, 2)
    out["n_input_features"] = res.meta["n_input_features"]
    out["task"] = res.meta["task"]
    out["tag_scheme"] = res.meta["tag_scheme"]
    if "file_scheme" in res.meta:
        out["file_scheme"] = res.meta["file_scheme"]
    rc = save_first(res, args, out, long_run["checkpoint"])
    if rc is not None:
        return rc
    if args.test:
        out["test"] = score_text(res, load_spec(args.test))
    if args.json:
        _print(out, True)
    else:
        test = out.pop("test", None)
        _print(out, False)
        if test is not None:
            print(format_scores(test))


def evaluate_text(pred, args):
    from .datasets.registry import load_spec
    from .tagging import score_text
    sc = score_text(pred, load_spec(args.data))
    _print(sc, True) if args.json else print(format_scores(sc))


def format_scores(sc):
    """conlleval-like lines: overall, then one per type (chunk); the SIGHAN summary (segmentation)."""
    if sc["task"] == "segmentation":
        return (f"words: {sc['n_gold']}; predicted: {sc['n_pred']}; correct: {sc['n_correct']}\n"
                f"precision: {sc['precision']:6.2f}%; recall: {sc['recall']:6.2f}%; F1: {sc['f1']:6.2f}; "
                f"R_iv: {sc['r_iv']:6.2f}%; R_oov: {sc['r_oov']:6.2f}%; OOV rate: {sc['oov_rate']:6.2f}%")
    lines = [f"phrases: {sc['n_true']}; found: {sc['n_pred']}; correct: {sc['n_correct']}",
             f"{'overall':>17}: precision: {sc['precision']:6.2f}%; recall: {sc['recall']:6.2f}%; "
             f"FB1: {sc['f1']:6.2f}"]
    for t, s in sc["per_type"].items():
        lines.append(f"{t:>17}: precision: {s['precision']:6.2f}%; recall: {s['recall']:6.2f}%; "
                     f"FB1: {s['f1']:6.2f}  {s['support']}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------------------------------
# tag
# ----------------------------------------------------------------------------------------------------------------------

@command("tag", "tag a CoNLL file with a model trained on text: input columns + predicted label (as crf_test)")
def _tag_parser(p):
    p.add_argument("--model", required=True, help="saved text model (PATH.json with PATH.npz beside it)")
    p.add_argument("--data", required=True, help="conll:FILE[,columns=a/b/c] (FILE - reads standard input); "
                   "default columns: the training token columns, plus the gold label if the lines have one more")
    p.add_argument("--out", default="-", help="output file (default standard output)")
    p.add_argument("--marginals", action="store_true", help="append the marginal probability of each label (for a "
                   "model trained with --tag-scheme iobes: of the IOBES label decoded, e.g. E-NP where I-NP is "
                   "written)")
    p.add_argument("--topk", type=int, default=None, metavar="K", help="write the K best labelings per sentence")
    p.add_argument("--json", action="store_true", help="print a JSON summary (sentences, tokens, seconds) on stderr")
    return cmd_tag


def cmd_tag(args):
    from .tagging import tag_stream
    pred = _load_text_model(args.model)
    path, kw = _text_spec(args.data)
    unknown = set(kw) - {"columns", "sep"}
    if unknown:
        raise ParameterError(f"tag reads columns= and sep= from the data spec; got {sorted(unknown)}")
    stream = _input_stream(path)
    try:
        with _Output(args.out) as out:
            info = tag_stream(pred, stream, path, out, columns=kw.get("columns"), sep=kw.get("sep"),
                              marginals=args.marginals, topk=args.topk)
    finally:
        if stream is not getattr(sys.stdin, "buffer", None):
            stream.close()
    if args.json:
        print(json.dumps(info), file=sys.stderr)
    return 0


# ----------------------------------------------------------------------------------------------------------------------
# parse
# ----------------------------------------------------------------------------------------------------------------------

@command("parse", "parse a CoNLL-U/CoNLL-X file with a dependency model: the file with HEAD and DEPREL predicted")
def _parse_parser(p):
    p.add_argument("--model", required=True, help="saved dependency model (trained on conllu:/conllx: data)")
    p.add_argument("--data", required=True, help="conllu:FILE or conllx:FILE")
    p.add_argument("--out", default="-", help="output file (default standard output)")
    p.add_argument("--json", action="store_true", help="print attachment scores against the file's heads on stderr")
    return cmd_parse


def cmd_parse(args):
    import mmprog

    from .parsing import load_labeller, parse_file
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
        from .datasets.registry import parse_spec
        path = str(parse_spec(args.data)[1][0])
    res = parse_file(pred, load_labeller(args.model), path, args.out, dialect, score=args.json)
    if args.json:
        print(json.dumps({k: v for k, v in res.items()}), file=sys.stderr)
    return 0
