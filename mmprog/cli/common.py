"""What the command modules of :mod:`mmprog.cli` share: printing (:func:`print_result`, :func:`table`), data specs
(:func:`load_data`), ``NAME=VALUE`` parameters (:func:`program_params`), the arguments several commands take, the
long-run options of ``train``, saving a fit first (:func:`save_first`), the text input and output of ``tag`` and
``parse``, and the exit codes. It imports no command module, so every command module can import it."""
from __future__ import annotations

import io
import json
import os
import sys

import numpy as np

from ..exceptions import EnvironmentFailure, MMProgError, ParameterError

#: The data of ``verify`` and ``show`` when ``--data`` is not given.
DEFAULT_DATA = "tiny:seed=0"

#: Exit codes of every command (the contract written in ``mmprog --help`` and docs/cli.md).
EXIT_OK = 0
#: verify or catalogue --check ran and found a failed check or drift
EXIT_CHECK_FAILED = 1
#: bad input or parameter: one line naming the file and line or field, or the parameter, its range and the value
EXIT_BAD_INPUT = 2
#: the machine failed the work (read-only or full file system, no permission to write, out of memory): one line
#: naming the path and the OS error
EXIT_ENVIRONMENT = 3
#: a defect of mmprog itself (an exception it did not expect): one line; ``mmprog --debug ...`` shows the traceback
EXIT_INTERNAL = 4
#: Exit code of a run ended by SIGINT/SIGTERM (128 + SIGINT, as shells report it); a fit's --out files are written.
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


def model_data(pred, spec, train_fold=None):
    """The data of ``predict``/``evaluate`` for the saved model ``pred``, refused in one line when it is not the
    kind the model reads: token text for a model trained on text, a treebank for a dependency model, sequences for
    a chain, hierarchies for a hierarchy model (``--train-fold``: the other folds of the source)."""
    from ..datasets import base
    from ..datasets.registry import load_spec
    if pred.extractor is not None:
        ds = load_spec(spec)
        if not isinstance(ds, base.TokenCorpus) or getattr(ds, "heads", None) is not None:
            raise MMProgError(f"{spec!r} loads a {type(ds).__name__}; this model was trained on token text and reads "
                              f"a conll or sighan spec")
        return ds
    ds = load_data(spec, train_fold, "test" if train_fold is not None else "train")
    want = {"arcs": (base.TreeDataset, "a treebank (conllu: or conllx:)"),
            "chain": (base.SequenceDataset, "sequences (e.g. tsv:, ocr:, tiny:)"),
            "hierarchy": (base.HierarchicalDataset, "hierarchies")}.get(getattr(pred.fmap, "kind", None))
    if want is not None and not isinstance(ds, want[0]):
        raise MMProgError(f"{spec!r} loads a {type(ds).__name__}; this {pred.fmap.kind} model reads {want[1]}")
    return ds


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
    """``--param NAME=VALUE`` options as program keyword arguments, each NAME one the program (``args.program``,
    default m3n) takes: a one-line :class:`ParameterError` otherwise, before any work."""
    import inspect
    params = {}
    for kv in args.param or []:
        name, eq, value = kv.partition("=")
        if not eq or not name.strip():
            raise ParameterError(f"--param takes NAME=VALUE (e.g. --param beta=0.5); got {kv!r}")
        params[name.strip()] = parse_value(value)
    program = getattr(args, "program", None) or "m3n"
    if not params or getattr(args, "resume", None):
        return params
    from ..programs import get_program, registered
    if program not in registered():
        return params                       # the command says which programs there are
    takes = inspect.signature(type(get_program(program)).__init__).parameters
    if any(p.kind is p.VAR_KEYWORD for p in takes.values()):
        return params
    names = [n for n in takes if n not in ("self", "C")]
    unknown = sorted(set(params) - set(names))
    if unknown:
        raise ParameterError(f"--param {unknown[0]}: program {program!r} has no parameter {unknown[0]!r}; it takes "
                             f"{', '.join(names) or 'none'}")
    return params


def training_arguments(p):
    """The data, program and stopping arguments of ``train`` and ``export``."""
    p.add_argument("--data", required=True, help="data spec, e.g. synthetic:seed=0 or ocr:PATH (see `mmprog data`)")
    p.add_argument("--train-fold", type=int, default=None, help="train on this fold of the source, test on the rest")
    p.add_argument("--program", default=None, help="registered program (m3n, l1m3n, ...; default m3n)")
    p.add_argument("--C", type=float, default=None, help="slack weight, n-slack scale (default 1.0)")
    p.add_argument("--solver", default=None, help="solver name (see `mmprog solvers`): the master's back end. On route "
                   "bcfw (no QP master of its own; also --route auto where bcfw covers the fit) it solves P0's master "
                   "on the route's working set once the gap is certified, its optimum checked within the bounds")
    p.add_argument("--slack", default=None, choices=["n", "one"], help="default: the program's own (n, or one "
                   "for mtl/pblock)")
    p.add_argument("--eps", type=float, default=None,
                   help="the epsilon rule, an option of the cutting plane: stop once no constraint is violated by "
                        "more than EPS; the summary's termination is then 'eps' unless the gap is <= 1e-2 too "
                        "('converged'). Default: the certified gap alone (--gap-tol) stops the fit")
    p.add_argument("--max-iter", type=int, default=None, help="rounds of the cutting plane (default 500), passes of "
                   "bcfw (default 10000)")
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
    :data:`EXIT_INTERRUPTED` after saying how to resume when the fit was interrupted, or that a signal came during
    the round that finished it (:func:`mmprog.engine.interrupts.pending`), else None."""
    if args.out:
        out["saved"] = save_model(res, args.out, checkpoint)
    if checkpoint:
        from ..engine.checkpoint import path_of
        out["checkpoint"] = path_of(checkpoint)
    from ..engine import interrupts
    if res.termination != "interrupted":
        if interrupts.pending() is None:
            return None
        # the signal came during the fit's last round (the fit finished, its model is kept, the rest is skipped), or
        # during the refit on the whole training file (--dev FRACTION), which leaves the chosen candidate
        during = ("the refit on the whole training file; the chosen C's fit without the held-out sentences ended"
                  if (out.get("refit") or {}).get("termination") == "interrupted" else
                  "the last round of the fit, which ended")
        print(f"mmprog: {interrupts.pending()} received during {during} {res.termination!r}; "
              + (f"model saved to {out['saved']}" if args.out else "no --out given, nothing saved"), file=sys.stderr)
        print_result(out, args.json)
        return EXIT_INTERRUPTED
    print(f"mmprog: interrupted after {res.n_iter} rounds; "
          + (f"model saved to {out['saved']}" if args.out else "no --out given, nothing saved")
          + (f", resume with --resume {out['checkpoint']}" if checkpoint else ""), file=sys.stderr)
    print_result(out, args.json)
    return EXIT_INTERRUPTED


def save_model(res, path, checkpoint=None):
    """``res.save(path)``; when that write fails (the disk filled up or turned read-only during the fit), the
    model goes to a fallback path — beside the checkpoint if there is one, else in the temporary folder — and an
    :class:`EnvironmentFailure` names both paths and the OS error. A finished fit is never lost silently."""
    import tempfile
    import time
    try:
        return res.save(path)
    except OSError as e:
        first = e
    stem = os.path.basename(model_files(path)[0])[: -len(".json")] or "model"
    stamp = f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    folders = ([os.path.dirname(os.path.abspath(checkpoint))] if checkpoint else []) + [tempfile.gettempdir()]
    for folder in folders:
        try:
            saved = res.save(os.path.join(folder, f"{stem}.rescued-{stamp}"))
        except OSError:
            continue
        raise EnvironmentFailure(f"--out {model_files(path)[0]}: cannot write the model ({first.strerror or first}); "
                                 f"it was saved to {saved} instead")
    raise EnvironmentFailure(f"--out {model_files(path)[0]}: cannot write the model ({first.strerror or first}), nor "
                             f"in {' or '.join(folders)}: the fit is lost")


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
    """Standard output, or a file written under a temporary name and renamed into place when complete (with the
    umask's permissions, or the mode of the file it replaces); a device or pipe (``/dev/null``) is written in place.
    A failed write (full disk) removes the temporary file and becomes an :class:`EnvironmentFailure` naming
    ``--out``; the file at ``path`` is then as it was.

    Parameters
    ----------
    path : str or None
        ``None`` or ``-`` for standard output.
    encoding : str
        Text encoding of the file (standard output keeps its own).
    """

    def __init__(self, path, encoding="utf-8"):
        self.path = path
        self.encoding = encoding
        self._tmp = None

    def __enter__(self):
        from ..datasets.reading import temporary_beside
        if self.path in (None, "-"):
            return sys.stdout
        try:
            if os.path.exists(self.path) and not os.path.isfile(self.path):
                self._fh = open(self.path, "w", encoding=self.encoding)
            else:
                fd, self._tmp = temporary_beside(self.path)
                self._fh = os.fdopen(fd, "w", encoding=self.encoding)
        except OSError as e:
            raise EnvironmentFailure(f"--out {self.path}: cannot write there ({e.strerror})") from None
        return self._fh

    def __exit__(self, exc_type, exc, tb):
        from ..datasets.reading import publish, remove_quietly
        if self.path in (None, "-"):
            if exc_type is None:
                sys.stdout.flush()
            return False
        try:
            try:
                self._fh.close()
            except OSError as e:        # the last buffer did not fit on the disk
                if exc_type is None:
                    exc_type, exc = type(e), e
            if exc_type is None and self._tmp is not None:
                publish(self._tmp, self.path)
        except OSError as e:
            exc_type, exc = type(e), e
        finally:
            if self._tmp is not None:
                remove_quietly(self._tmp)
        if exc_type is not None and issubclass(exc_type, OSError) and not isinstance(exc, MMProgError):
            raise EnvironmentFailure(f"--out {self.path}: cannot write ({exc.strerror or exc}); nothing written"
                                     ) from None
        if exc_type is UnicodeEncodeError:
            raise MMProgError(f"--out {self.path}: a label cannot be written in {self.encoding} ({exc.reason}: "
                              f"{exc.object[exc.start:exc.end]!r}); nothing written") from None
        return False


# ----------------------------------------------------------------------------------------------------------------------
# outputs never clobber inputs, and are tried before the work
# ----------------------------------------------------------------------------------------------------------------------

def spec_paths(spec):
    """The files a data spec reads (none for a generator or standard input); an unreadable spec gives none (its
    loader says why when it runs)."""
    from ..datasets.registry import LOADERS, parse_spec
    if not isinstance(spec, str) or spec.partition(":")[0].strip().lower() not in LOADERS:
        return []
    try:
        _, args, _ = parse_spec(spec, path_ok=lambda p: p == "-")
    except MMProgError:
        return []
    return [str(a) for a in args if str(a) != "-"]


def same_file(a, b):
    """Whether paths ``a`` and ``b`` are one file: the same resolved path (symbolic links followed, whether or not
    the file exists yet) or, for existing files, the same device and inode (hard links)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def refuse_clobbering(outputs, inputs):
    """Raise :class:`ParameterError` if an output is one of the inputs — before any work, so no input is ever
    replaced.

    Parameters
    ----------
    outputs, inputs : iterable of (option, path)
        E.g. ``("--out", "m.json")`` and ``("--data", "train.txt")``; paths None or ``-`` are skipped.
    """
    inputs = [(o, p) for o, p in inputs if p not in (None, "-")]
    for oopt, opath in outputs:
        if opath in (None, "-") or (os.path.exists(opath) and not os.path.isfile(opath)):
            continue          # standard output, a device or a pipe: not a file anyone reads back
        for iopt, ipath in inputs:
            if same_file(opath, ipath):
                raise ParameterError(f"{oopt} {opath} is the input of {iopt} ({ipath}); writing it would destroy "
                                     f"the input: give another output path")


def check_outputs(outputs):
    """Try to write beside every ``(option, path)`` output before the work (:func:`check_writable`)."""
    from ..datasets.reading import check_writable
    for opt, path in outputs:
        if path not in (None, "-"):
            check_writable(path, opt)


def model_files(path):
    """The two files of a saved model given as ``path`` (with or without ``.json``)."""
    base = os.fspath(path)
    for ext in (".json", ".npz"):
        if base.endswith(ext):
            base = base[: -len(ext)]
    return base + ".json", base + ".npz"


def load_text_model(path):
    """A saved model trained on text (templates in it), else a one-line :class:`ParameterError`."""
    import mmprog
    pred = mmprog.load(path)
    if pred.extractor is None:
        raise ParameterError(f"{path}: this model was not trained on text (no templates in it); train one with "
                             f"`mmprog train --data conll:FILE --templates PRESET|FILE`")
    return pred
