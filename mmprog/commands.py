"""What every sub-command module shares (:mod:`mmprog.cli`, :mod:`mmprog.duality_cli`, :mod:`mmprog.reproduce`,
:mod:`mmprog.demo`): the registry of the sub-commands that live beside their subject (:func:`command`), printing
(``_print``, :func:`table`), data specs (:func:`load_data`) and ``NAME=VALUE`` parameters. It imports none of them,
so the command line can import them without any of them importing it back."""
from __future__ import annotations

import json

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
        raise MMProgError(f"{spec!r} loads a {type(ds).__name__}, not a training set; build features first "
                          f"(e.g. mmprog.features.templates) or use a sequence/tree loader")
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
