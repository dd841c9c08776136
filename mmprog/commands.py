"""What every sub-command module shares (:mod:`mmprog.cli`, :mod:`mmprog.duality_cli`, :mod:`mmprog.reproduce`,
:mod:`mmprog.demo`): the registry of the sub-commands that live beside their subject (:func:`command`), printing
(``_print``, :func:`table`), data specs (:func:`load_data`) and ``NAME=VALUE`` parameters. It imports none of them,
so the command line can import them without any of them importing it back."""
from __future__ import annotations

import json
import sys

import numpy as np

from .exceptions import MMProgError

_EXTRA_COMMANDS = {}


def command(name, help_):
    """Register an extra sub-command: ``fn(subparser)`` adds arguments, returns the handler ``handler(args)``."""
    def deco(fn):
        _EXTRA_COMMANDS[name] = (help_, fn)
        return fn
    return deco


def _print(obj, as_json):
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
    from .datasets.registry import load_spec
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


def _parse_value(v):
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return {"true": True, "false": False, "none": None}.get(v.lower(), v)


#: Exit code of a fit ended by SIGINT/SIGTERM (128 + SIGINT, as shells report it); its --out files are written.
EXIT_INTERRUPTED = 130


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
        from .engine.checkpoint import path_of
        out["checkpoint"] = path_of(checkpoint)
    if res.termination != "interrupted":
        return None
    print(f"mmprog: interrupted after {res.n_iter} rounds; "
          + (f"model saved to {out['saved']}" if args.out else "no --out given, nothing saved")
          + (f", resume with --resume {out['checkpoint']}" if checkpoint else ""), file=sys.stderr)
    _print(out, args.json)
    return EXIT_INTERRUPTED
