"""What the command modules of :mod:`mmprog.cli` share: printing (:func:`print_result`, :func:`table`), data specs
(:func:`load_data`), ``NAME=VALUE`` parameters (:func:`program_params`), the arguments several commands take, the
long-run options of ``train``, saving a fit first (:func:`save_first`), the text input and output of ``tag`` and
``parse``, and the exit codes. It imports no command module, so every command module can import it."""
from __future__ import annotations

import io
import json
import os
import sys
import tempfile

import numpy as np

from ..exceptions import MMProgError, ParameterError

#: The data of ``verify`` and ``show`` when ``--data`` is not given.
DEFAULT_DATA = "tiny:seed=0"

#: Exit code of a fit ended by SIGINT/SIGTERM (128 + SIGINT, as shells report it); its --out files are written.
EXIT_INTERRUPTED = 130


def print_result(obj, as_json):
    """Print ``obj``: a string as it is, anything else (and everything with ``as_json``) as indented JSON."""
    if as_json:
        print(json.dumps(obj, indent=1, default=_json_default))
    elif isinstance(obj, str):
        print(obj)
    else:
        print(json.dumps(obj, indent=1, default=_json_default))


def _json_default(o):
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.generic):
        return o.item()
    return str(o)


def load_data(spec, train_fold=None, part="train"):
    """Load a data spec; with ``train_fold`` split by the source's fold ids (train = that fold, test = the rest)."""
    from ..datasets.registry import load_spec
    ds = load_spec(spec)
    if not hasattr(ds, "lengths") or not (hasattr(ds, "X") or hasattr(ds, "heads")):
        raise MMProgError(f"{spec!r} loads a {type(ds).__name__}, not a training set; to train on text give "
                          f"--templates PRESET|FILE (e.g. --templates rich), or use a sequence/tree loader")
    if train_fold is None:
        return ds
    if getattr(ds, "fold_ids", None) is None:
        raise MMProgError(f"--train-fold given but {spec!r} defines no folds; drop --train-fold")
    mask = np.asarray(ds.fold_ids) == int(train_fold)
    return ds[np.nonzero(mask if part == "train" else ~mask)[0]]


def table(rows, columns):
    """Plain-text table of dict rows."""
    widths = [max(len(c), *(len(_fmt(r.get(c))) for r in rows)) if rows else len(c) for c in columns]
    out = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)), "  ".join("-" * w for w in widths)]
    for r in rows:
        out.append("  ".join(_fmt(r.get(c)).ljust(w) for c, w in zip(columns, widths)))
    return "\n".join(out)


def _fmt(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    return "" if v is None else str(v)


def parse_value(v):
    """A ``--param`` value: int, float, true/false/none, else the string."""
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return {"true": True, "false": False, "none": None}.get(v.lower(), v)


def program_params(args):
    """``--param NAME=VALUE`` options as program keyword arguments."""
    return {k: parse_value(v) for k, v in (kv.split("=", 1) for kv in args.param or [])}


def training_arguments(p):
    """The data, program and stopping arguments of ``train`` and ``export``."""
    p.add_argument("--data", required=True, help="data spec, e.g. synthetic:seed=0 or ocr:PATH (see `mmprog data`)")
    p.add_argument("--train-fold", type=int, default=None, help="train on this fold of the source, test on the rest")
    p.add_argument("--program", default=None, help="registered program (m3n, l1m3n, ...; default m3n)")
    p.add_argument("--C", type=float, default=None, help="slack weight, n-slack scale (default 1.0)")
    p.add_argument("--solver", default=None, help="solver name (see `mmprog solvers`)")
    p.add_argument("--slack", default=None, choices=["n", "one"], help="default: the program's own (n, or one "
                   "for mtl/pblock)")
    p.add_argument("--eps", type=float, default=1e-3)
    p.add_argument("--max-iter", type=int, default=500)
    p.add_argument("--param", action="append", metavar="NAME=VALUE", help="program parameter (repeatable)")


def model_arguments(p):
    """The arguments of ``predict`` and ``evaluate``: a saved model and the data to run it on."""
    p.add_argument("--model", required=True, help="saved model (PATH.json with PATH.npz beside it)")
    p.add_argument("--data", required=True)
    p.add_argument("--train-fold", type=int, default=None, help="use the other folds of the source as test data")
    p.add_argument("--json", action="store_true")


def long_run_options(args):
    """:func:`mmprog.fit`'s keywords for the per-solve cap, checkpoints, resume and stabilisation of ``mmprog train``
    (both the data route and the text route). ``--checkpoint-every`` without ``--checkpoint`` keeps ``OUT.ckpt.npz``."""
    checkpoint = args.checkpoint
    if checkpoint is None and args.checkpoint_every:
        if not args.out:
            raise MMProgError("--checkpoint-every needs --checkpoint PATH (or --out, beside which OUT.ckpt.npz is "
                              "kept)")
        checkpoint = args.out + ".ckpt"
    return {"solve_time_limit": args.solve_time_limit, "checkpoint": checkpoint,
            "checkpoint_every": args.checkpoint_every, "resume": args.resume, "stabilise": args.stabilise,
            "inout_weight": args.inout_weight, "line_search": args.line_search, "gap_tol": args.gap_tol}


def save_first(res, args, out, checkpoint):
    """Write ``--out`` before anything else can go wrong (an interrupted fit must leave its point on disk). Returns
    :data:`EXIT_INTERRUPTED` after saying how to resume when the fit was interrupted, else None."""
    if args.out:
        out["saved"] = res.save(args.out)
    if checkpoint:
        from ..engine.checkpoint import path_of
        out["checkpoint"] = path_of(checkpoint)
    if res.termination != "interrupted":
        return None
    print(f"mmprog: interrupted after {res.n_iter} rounds; "
          + (f"model saved to {out['saved']}" if args.out else "no --out given, nothing saved")
          + (f", resume with --resume {out['checkpoint']}" if checkpoint else ""), file=sys.stderr)
    print_result(out, args.json)
    return EXIT_INTERRUPTED


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
# text input and output of tag and parse
# ----------------------------------------------------------------------------------------------------------------------

def input_stream(path):
    """The binary input: standard input for ``-``, else the file (gzip read transparently)."""
    from ..datasets.reading import open_binary
    if path == "-":
        return sys.stdin.buffer if hasattr(sys.stdin, "buffer") else io.BytesIO(sys.stdin.read().encode("utf-8"))
    return open_binary(path)


def close_input(stream):
    """Close an input of :func:`input_stream` unless it is standard input."""
    if stream is not getattr(sys.stdin, "buffer", None):
        stream.close()


class OutputFile:
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


def load_text_model(path):
    """A saved model trained on text (templates in it), else a one-line :class:`ParameterError`."""
    import mmprog
    pred = mmprog.load(path)
    if pred.extractor is None:
        raise ParameterError(f"{path}: this model was not trained on text (no templates in it); train one with "
                             f"`mmprog train --data conll:FILE --templates PRESET|FILE`")
    return pred
