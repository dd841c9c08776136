"""Checkpoints of a cutting-plane fit: the working set and the iterate, written atomically, read back to resume.

A checkpoint is ONE ``.npz`` file (no pickle): the active cuts (their ΔF rows as CSR arrays, Δℓ, the slack each
belongs to; a 1-slack cut held as its labeling as that labeling, arrays ``lab_*``, format 2), the iterate (w, ξ),
and a JSON document in the array ``meta`` (program, its hyper-parameters, slack form, round, elapsed seconds,
bounds, history, and a fingerprint of the feature map). It is written to a temporary
file beside the target and renamed over it, so an interrupted save leaves the previous checkpoint intact, never a
half-written one.

Resuming (:func:`mmprog.fit` with ``resume=``, ``mmprog train --resume``) rebuilds the program's master from the
saved cuts, re-solves it — the same master, so the same optimum — and continues the loop from the saved round.
Cuts dropped by ``drop_after`` had multiplier 0 and are not saved: the master's optimum is unchanged without them.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile

import numpy as np
import scipy.sparse as sp

from ..version import __version__
from ..cuts import Cuts
from ..exceptions import ModelFileError
from ..datasets.reading import jsonable

FORMAT = "mmprog-checkpoint"
FORMAT_VERSION = 2          # 2: labeling cuts (lab_*) beside the rows
_LAB = ("lab_ptr", "lab_tok", "lab_gold", "lab_pred", "lab_trans", "lab_n", "lab_dl")


def fingerprint(fmap):
    """A short hash of the feature map's description: a resumed fit must use the very same joint features."""
    desc = json.dumps(fmap.describe(), sort_keys=True, default=str)
    return hashlib.sha256(desc.encode()).hexdigest()[:16]


def path_of(path):
    """``path`` with the ``.npz`` extension the checkpoint file has."""
    path = os.fspath(path)
    return path if path.endswith(".npz") else path + ".npz"


def save(path, *, model, program, fmap, w, xi, slack, iteration, elapsed, upper_bound, history, termination=None):
    """Write the checkpoint of a fit after round ``iteration`` (atomically: temporary file, then rename).

    Parameters
    ----------
    path : str
        Target file (``.npz`` is appended when missing).
    model : ConcreteModel
        The master; its working set ``model.ws`` gives the cuts (active ones only).
    program : Program
    fmap : JointFeatureMap
    w : ndarray, shape (dim,)
    xi : ndarray, shape (n_slacks,)
    slack : {"n", "one"}
    iteration : int
        Rounds completed.
    elapsed : float
        Wall-clock seconds of the fit so far (a resumed fit adds to it).
    upper_bound : float
    history : list of dict
        :class:`~mmprog.engine.records.IterationRecord` rows as dicts.
    termination : str, optional
        Set when the fit ended (``"interrupted"``, ``"time_limit"``, ...).

    Returns
    -------
    str
        The path written.
    """
    target = path_of(path)
    cuts, labs = active_cuts(model.ws)
    meta = {"format": FORMAT, "format_version": FORMAT_VERSION, "mmprog_version": __version__,
            "program": program.name, "params": program.params(), "slack": slack, "iteration": int(iteration),
            "elapsed": float(elapsed), "upper_bound": float(upper_bound), "termination": termination,
            "dim": int(fmap.dim), "n_slacks": int(len(xi)), "feature_map": fingerprint(fmap),
            "history": history}
    arrays = {"meta": np.array(json.dumps(jsonable(meta))), "w": np.asarray(w, dtype=np.float64),
              "xi": np.asarray(xi, dtype=np.float64), "example": cuts.example, "dl": cuts.dl,
              "dF_data": cuts.dF.data, "dF_indices": cuts.dF.indices, "dF_indptr": cuts.dF.indptr}
    if labs:
        arrays.update(
            lab_ptr=np.concatenate([[0], np.cumsum([len(lab["tok"]) for lab in labs])]).astype(np.int64),
            lab_tok=np.concatenate([lab["tok"] for lab in labs]).astype(np.int64),
            lab_gold=np.concatenate([lab["gold"] for lab in labs]).astype(np.int64),
            lab_pred=np.concatenate([lab["pred"] for lab in labs]).astype(np.int64),
            lab_trans=np.stack([lab["trans"] for lab in labs]), lab_n=np.array([lab["n"] for lab in labs]),
            lab_dl=np.array([lab["dl"] for lab in labs], dtype=np.float64))
    d = os.path.dirname(os.path.abspath(target))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=os.path.basename(target) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        from ..datasets.reading import publish
        publish(tmp, target)            # umask permissions, or the mode of the checkpoint it replaces
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def active_cuts(ws):
    """The active cuts of a working set, what a master grown again from them needs: its optimum is unchanged
    without the dropped ones (multiplier 0) — a checkpoint's content, and a warm start's seed at another C (a cut
    wᵀΔF ≥ Δℓ − ξ holds at every C: only the objective has C).

    Parameters
    ----------
    ws : WorkingSet
        ``model.ws`` of a master.

    Returns
    -------
    cuts : Cuts
        The explicit rows: example (m,), ΔF (m, dim) CSR, Δℓ (m,).
    labelings : list of dict
        The 1-slack cuts held as labelings (tok, gold, pred, trans, K, n, dl; the token matrix X left out, so they
        are made again on the token matrix of the fit they seed, :meth:`Checkpoint.labeling_cuts`): making their
        rows would hold every active cut's row at once (gigabytes on full CoNLL-2002 NER).
    """
    keep = np.flatnonzero(ws.active_mask()) if ws.size else np.zeros(0, np.int64)
    keep = np.array([p for p in keep if p not in ws.released], dtype=np.int64)
    dl = ws.dl_array() if ws.size else np.zeros(0)
    labs = [ws.labeling_of(p) for p in keep]
    is_lab = np.array([lab is not None for lab in labs], dtype=bool)
    labelings = [dict(tok=lab["tok"], gold=lab["gold"], pred=lab["pred"], trans=lab["trans"], K=int(lab["K"]),
                      n=float(lab["n"]), dl=float(d)) for lab, d in zip(labs, dl[keep]) if lab is not None]
    keep = keep[~is_lab]
    example = ws.example_array()[keep] if ws.size else np.zeros(0, np.int64)
    return Cuts(example, ws.explicit_rows(keep), dl[keep]), labelings


def of_master(model, fmap, n_slacks, source="warm_start"):
    """The active cuts of a master held in memory as a :class:`Checkpoint` without an iterate or history (``w``
    and ``xi`` None): what seeds a fit at another C (:meth:`mmprog.engine.loop.CuttingPlane.start`, ``seed=``).
    ``source`` names it in messages."""
    cuts, labelings = active_cuts(model.ws)
    meta = {"dim": int(fmap.dim), "feature_map": fingerprint(fmap), "n_slacks": int(n_slacks)}
    return Checkpoint(source, meta, None, None, cuts, labelings)


class Checkpoint:
    """A checkpoint read back: ``meta`` (the JSON document), ``w``, ``xi``, the saved ``cuts`` (explicit rows) and
    ``labelings`` (the 1-slack cuts held as labelings: dicts of tok, gold, pred, trans, K, n, dl; made into
    :class:`~mmprog.cuts.LabelingCut` on the resumed fit's token matrix by :meth:`labeling_cuts`)."""

    def __init__(self, path, meta, w, xi, cuts, labelings=()):
        self.path, self.meta, self.w, self.xi, self.cuts = path, meta, w, xi, cuts
        self.labelings = list(labelings)

    def labeling_cuts(self, fmap, prepared):
        """The saved labelings as cuts on the resumed fit's token matrix; a labeling that does not fit it (token
        rows or labels out of range) is a one-line :class:`ModelFileError`."""
        from ..cuts import LabelingCut
        if not self.labelings:
            return []
        X = prepared.data.get("X") if hasattr(prepared, "data") else None
        out = []
        for k, lab in enumerate(self.labelings):
            K = lab["K"]
            if X is None or K != getattr(fmap, "n_labels", None) or X.shape[1] * K + K * K != fmap.dim \
                    or (len(lab["tok"]) and int(lab["tok"].max()) >= X.shape[0]):
                raise ModelFileError(f"{self.path}: array 'lab_tok': labeling cut {k} does not fit these data "
                                     f"({K} labels, token rows up to {int(lab['tok'].max(initial=-1))}); resume "
                                     f"with the same data and templates")
            out.append(LabelingCut(X, lab["tok"], lab["gold"], lab["pred"], lab["trans"].reshape(K, K), K,
                                   lab["n"], lab["dl"]))
        return out

    @property
    def program(self):
        return self.meta["program"]

    @property
    def params(self):
        return dict(self.meta["params"])

    @property
    def slack(self):
        return self.meta["slack"]

    def check_compatible(self, fmap, n_slacks):
        """Raise :class:`ModelFileError` unless the fit being resumed has the same joint features and slacks."""
        m = self.meta
        if fmap.dim != m["dim"] or fingerprint(fmap) != m["feature_map"]:
            raise ModelFileError(f"{self.path}: field 'feature_map': the checkpoint was written for other joint "
                                 f"features ({m['dim']} of them, fingerprint {m['feature_map']}; these data give "
                                 f"{fmap.dim}, {fingerprint(fmap)}); resume with the same data and templates")
        if n_slacks != m["n_slacks"]:
            raise ModelFileError(f"{self.path}: field 'n_slacks' is {m['n_slacks']}, the data give {n_slacks} "
                                 f"slacks; resume with the same training set and slack form")


def load(path):
    """Read a checkpoint written by :func:`save`; every defect is a one-line :class:`ModelFileError`."""
    target = path_of(path)
    if not os.path.exists(target):
        raise ModelFileError(f"{target}: no such checkpoint file")
    from ..datasets.reading import read_npz
    arrays = read_npz(target, target, error=ModelFileError)
    for k in ("meta", "w", "xi", "example", "dl", "dF_data", "dF_indices", "dF_indptr"):
        if k not in arrays:
            raise ModelFileError(f"{target}: missing array {k!r}")
    if arrays["meta"].dtype.kind != "U" or arrays["meta"].shape != ():
        raise ModelFileError(f"{target}: array 'meta' is not one JSON string")
    try:
        meta = json.loads(str(arrays["meta"]))
    except (json.JSONDecodeError, RecursionError) as e:
        raise ModelFileError(f"{target}: array 'meta': not valid JSON ({_one_line(e)})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelFileError(f"{target}: field 'format' is not {FORMAT!r}")
    version = meta.get("format_version")
    if type(version) is not int or version > FORMAT_VERSION or version < 1:
        raise ModelFileError(f"{target}: field 'format_version' is {_short(version)}, this mmprog reads 1 to "
                             f"{FORMAT_VERSION}")
    for key, kind in (("program", str), ("params", dict), ("slack", str), ("iteration", int), ("dim", int),
                      ("n_slacks", int), ("feature_map", str), ("history", list), ("upper_bound", (int, float)),
                      ("elapsed", (int, float))):
        if key not in meta:
            raise ModelFileError(f"{target}: missing field {key!r}")
        if not isinstance(meta[key], kind) or isinstance(meta[key], bool):
            raise ModelFileError(f"{target}: field {key!r} is {_short(meta[key])}, not a {_kind_name(kind)}")
    if meta["slack"] not in ("n", "one") or meta["dim"] < 1 or meta["n_slacks"] < 1 or meta["iteration"] < 0:
        raise ModelFileError(f"{target}: fields 'slack', 'dim', 'n_slacks', 'iteration' are {meta['slack']!r}, "
                             f"{meta['dim']}, {meta['n_slacks']}, {meta['iteration']}: out of range")
    from dataclasses import fields
    from .records import IterationRecord
    names = {f.name for f in fields(IterationRecord)}
    if not all(isinstance(h, dict) and set(h) == names and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                               for v in h.values()) for h in meta["history"]):
        raise ModelFileError(f"{target}: field 'history' is not a list of round records (numbers named "
                             f"{', '.join(sorted(names))})")
    for name in ("w", "xi", "dl", "dF_data", "example", "dF_indices", "dF_indptr"):
        a = arrays[name]
        if a.ndim != 1 or a.dtype.kind not in ("iu" if name in ("example", "dF_indices", "dF_indptr") else "f"):
            raise ModelFileError(f"{target}: array {name!r} is {a.dtype} of shape {a.shape}, expected a 1-d "
                                 f"{'integer' if name in ('example', 'dF_indices', 'dF_indptr') else 'float'} array")
    m, dim = len(arrays["dl"]), int(meta["dim"])
    try:
        if len(arrays["dF_indptr"]) != m + 1:
            raise ValueError(f"indptr has {len(arrays['dF_indptr'])} entries for {m} rows")
        dF = sp.csr_matrix((arrays["dF_data"], arrays["dF_indices"], arrays["dF_indptr"]), shape=(m, dim))
        dF.check_format(full_check=True)
    except (ValueError, TypeError, OverflowError) as e:
        raise ModelFileError(f"{target}: arrays 'dF_*' do not form a ({m}, {dim}) sparse matrix ({_one_line(e)})") \
            from None
    w, xi = arrays["w"], arrays["xi"]
    if w.shape != (dim,) or xi.shape != (int(meta["n_slacks"]),) or arrays["example"].shape != (m,):
        raise ModelFileError(f"{target}: arrays 'w', 'xi', 'example' have shapes {w.shape}, {xi.shape}, "
                             f"{arrays['example'].shape}; expected ({dim},), ({meta['n_slacks']},), ({m},)")
    for name in ("w", "xi", "dl", "dF_data"):
        if not np.all(np.isfinite(arrays[name])):
            raise ModelFileError(f"{target}: array {name!r} holds NaN or infinite values")
    ex = arrays["example"]
    if m and (ex.min() < 0 or ex.max() >= int(meta["n_slacks"])):
        raise ModelFileError(f"{target}: array 'example' names slacks outside 0..{int(meta['n_slacks']) - 1}")
    cuts = Cuts(ex.astype(np.int64), dF, arrays["dl"].astype(np.float64))
    return Checkpoint(target, meta, w.astype(np.float64), xi.astype(np.float64), cuts,
                      _labelings(target, arrays, int(meta["n_slacks"])))


def _labelings(target, arrays, n_slacks):
    """The labeling cuts of a format-2 checkpoint (arrays ``lab_*``), checked; [] when it has none."""
    present = [k for k in _LAB if k in arrays]
    if not present:
        return []
    if len(present) < len(_LAB):
        raise ModelFileError(f"{target}: missing array {[k for k in _LAB if k not in arrays][0]!r}")
    if n_slacks != 1:
        raise ModelFileError(f"{target}: arrays 'lab_*' are 1-slack cuts, the checkpoint has {n_slacks} slacks")
    a = {k: arrays[k] for k in _LAB}
    for k in ("lab_ptr", "lab_tok", "lab_gold", "lab_pred"):
        if a[k].ndim != 1 or a[k].dtype.kind not in "iu":
            raise ModelFileError(f"{target}: array {k!r} is {a[k].dtype} of shape {a[k].shape}, expected a 1-d "
                                 f"integer array")
    for k in ("lab_trans", "lab_n", "lab_dl"):
        if a[k].dtype.kind != "f" or not np.all(np.isfinite(a[k])):
            raise ModelFileError(f"{target}: array {k!r} is not a finite float array")
    ptr, m = a["lab_ptr"], len(a["lab_dl"])
    KK = a["lab_trans"].shape[1] if a["lab_trans"].ndim == 2 else -1
    K = int(round(np.sqrt(max(KK, 0))))
    if (len(ptr) != m + 1 or a["lab_n"].shape != (m,) or a["lab_dl"].ndim != 1 or a["lab_trans"].shape != (m, KK)
            or K < 1 or K * K != KK or ptr[0] != 0 or np.any(np.diff(ptr) < 0) or ptr[-1] != len(a["lab_tok"])
            or not len(a["lab_tok"]) == len(a["lab_gold"]) == len(a["lab_pred"])):
        raise ModelFileError(f"{target}: arrays 'lab_*' do not describe {m} labeling cuts (pointers, lengths, "
                             f"a (cuts, K²) transition array)")
    if len(a["lab_tok"]) and (a["lab_tok"].min() < 0 or min(a["lab_gold"].min(), a["lab_pred"].min()) < 0
                              or max(a["lab_gold"].max(), a["lab_pred"].max()) >= K
                              or np.any(a["lab_gold"] == a["lab_pred"])) or np.any(a["lab_n"] < 1):
        raise ModelFileError(f"{target}: arrays 'lab_*' hold token rows, labels (0..{K - 1}, gold ≠ decoded) or "
                             f"counts n out of range")
    return [dict(tok=a["lab_tok"][ptr[r]: ptr[r + 1]], gold=a["lab_gold"][ptr[r]: ptr[r + 1]],
                 pred=a["lab_pred"][ptr[r]: ptr[r + 1]], trans=a["lab_trans"][r].astype(np.float64), K=K,
                 n=float(a["lab_n"][r]), dl=float(a["lab_dl"][r])) for r in range(m)]


def _one_line(e):
    return " ".join(str(e).split())[:200]


def _short(value):
    return repr(value)[:60]


def _kind_name(kind):
    return " or ".join(k.__name__ for k in kind) if isinstance(kind, tuple) else kind.__name__
