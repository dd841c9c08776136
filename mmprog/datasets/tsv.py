"""A plain-text format for users' own labelled sequences.

Format (UTF-8, plain or gzipped)::

    # lines starting with '#' are comments
    LABEL<TAB>FEATURE<TAB>FEATURE ...     one token per line
    LABEL<TAB>FEATURE ...
                                          a blank line ends a sequence
    LABEL<TAB>FEATURE ...

* The first field is the token's label (any string not starting with ``#``); ``?`` marks an unobserved label
  (−1, for partially labelled data).
* The remaining fields are either all numbers — then every token line of the file has the same number of them and
  they are the dense feature values (**numeric** kind) — or strings — each string is a binary feature that is on
  for that token (**strings** kind, sparse one-hot; a string repeated on a line counts twice). In the strings kind,
  ``prefix=value`` puts the feature in template group ``prefix`` (so ``w=the`` and ``w[-1]=a`` are two templates);
  a string without ``=`` is in group ``x``.
* Fields are separated by tabs; a line with no tab is split on runs of spaces instead.

``load_tsv`` decides the kind from the content (numeric if every feature field of the file is a number) unless
``kind`` is given or a leading comment line says ``# kind=numeric`` or ``# kind=strings``. :func:`write_tsv` writes a :class:`SequenceDataset` back in this format.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..exceptions import DataError, ParameterError
from .base import SequenceDataset
from .reading import as_path, atomic_write_text, blocks, fail, iter_lines

__all__ = ["load_tsv", "write_tsv", "HIDDEN_LABEL"]

HIDDEN_LABEL = "?"


def _split(text):
    return text.split("\t") if "\t" in text else text.split()


def _feature_group(name: str) -> str:
    return name.split("=", 1)[0] if "=" in name else "x"


def load_tsv(path, kind="auto", label_names=None, feature_names=None, name=None) -> SequenceDataset:
    """Read the sequence TSV format (module docstring) into a :class:`SequenceDataset`.

    Parameters
    ----------
    path : str or Path
    kind : {"auto", "numeric", "strings"}
        Force the reading of the feature fields; ``"auto"`` picks numeric when every feature field is a number.
    label_names : list of str, optional
        Label order (label k = ``label_names[k]``); default the sorted labels of the file. Pass the training
        file's ``ds.label_names`` when reading test data; a label outside it is an error.
    feature_names : list of str, optional
        Strings kind only: the feature dictionary (default: the file's strings in order of first appearance).
        Pass the training ``ds.feature_names`` when reading test data; strings outside it are dropped.
    name : str, optional
        Default: the file name.

    Returns
    -------
    SequenceDataset
        Numeric kind: dense float64 X. Strings kind: CSR X with ``feature_names`` and ``groups``/``group_names``
        from the ``prefix=`` of each string.

    Raises
    ------
    DataError
        ``file:line`` of a line without a label, a numeric line of the wrong width or with a non-number, or a label
        outside ``label_names``.
    """
    if kind not in ("auto", "numeric", "strings"):
        raise ParameterError(f"kind must be 'auto', 'numeric' or 'strings'; got {kind!r}")
    p = as_path(path)
    if kind == "auto":
        kind = _declared_kind(p)
    seqs = []  # list of list of (line, label, fields)
    for block in blocks(p, "utf-8", comment="#"):
        rows = []
        for k, text in block:
            f = _split(text)
            if not f or f[0] == "":
                raise fail(p, k, "token line without a label; the first field of a token line is its label")
            rows.append((k, f[0], f[1:]))
        seqs.append(rows)
    if not seqs:
        raise fail(p, None, "no sequences found (one token per line: LABEL<TAB>features; blank line between "
                            "sequences)")
    if kind == "auto":
        kind = "numeric"
        for rows in seqs:
            for _, _, f in rows:
                try:
                    [float(v) for v in f]
                except ValueError:
                    kind = "strings"
                    break
            if kind == "strings":
                break
    labels_seen = sorted({lab for rows in seqs for _, lab, _ in rows if lab != HIDDEN_LABEL})
    if label_names is None:
        label_names = labels_seen
        if not label_names:
            raise fail(p, None, "every label is '?' (unobserved); pass label_names to say which labels exist")
    label_names = [str(s) for s in label_names]
    index = {s: j for j, s in enumerate(label_names)}
    Y = []
    for rows in seqs:
        y = np.empty(len(rows), dtype=np.int64)
        for t, (k, lab, _) in enumerate(rows):
            if lab == HIDDEN_LABEL:
                y[t] = -1
            elif lab in index:
                y[t] = index[lab]
            else:
                raise fail(p, k, f"label {lab!r} is not in label_names {label_names}")
        Y.append(y)
    if kind == "numeric":
        width = len(seqs[0][0][2])
        if width == 0:
            raise fail(p, seqs[0][0][0], "no feature fields after the label; the numeric kind needs at least one")
        X = []
        for rows in seqs:
            x = np.empty((len(rows), width), dtype=np.float64)
            for t, (k, _, f) in enumerate(rows):
                if len(f) != width:
                    raise fail(p, k, f"{len(f)} feature values but the file's first token has {width}; numeric "
                                     f"lines must all have the same width")
                try:
                    x[t] = [float(v) for v in f]
                except ValueError:
                    bad = next(v for v in f if not _is_number(v))
                    raise fail(p, k, f"feature value {bad!r} is not a number (numeric kind)") from None
                if not np.isfinite(x[t]).all():
                    raise fail(p, k, "feature values must be finite (no nan/inf)")
            X.append(x)
        ds = SequenceDataset(X, Y, len(label_names), label_names=label_names, name=name or p.name)
    else:
        fixed = feature_names is not None
        names = [str(s) for s in feature_names] if fixed else []
        fidx = {s: j for j, s in enumerate(names)}
        indptr, indices = [0], []
        for rows in seqs:
            for _, _, f in rows:
                for s in f:
                    if s == "":
                        continue
                    j = fidx.get(s)
                    if j is None:
                        if fixed:
                            continue  # unseen at training time: no weight can exist for it
                        j = fidx[s] = len(names)
                        names.append(s)
                    indices.append(j)
                indptr.append(len(indices))
        if not names:
            raise fail(p, None, "no feature strings found; give at least one feature per file")
        big = sp.csr_matrix((np.ones(len(indices)), np.asarray(indices, dtype=np.int64), np.asarray(indptr)),
                            shape=(len(indptr) - 1, len(names)))
        big.sum_duplicates()
        offsets = np.cumsum([0] + [len(rows) for rows in seqs])
        X = [big[offsets[i]:offsets[i + 1]] for i in range(len(seqs))]
        gnames, gidx = [], {}
        groups = np.empty(len(names), dtype=np.int64)
        for j, s in enumerate(names):
            g = _feature_group(s)
            if g not in gidx:
                gidx[g] = len(gnames)
                gnames.append(g)
            groups[j] = gidx[g]
        ds = SequenceDataset(X, Y, len(label_names), groups=groups, label_names=label_names, feature_names=names,
                             group_names=gnames, name=name or p.name)
    ds.info.update(source=str(p), kind=kind)
    return ds


def _declared_kind(p):
    """The kind declared by a ``# kind=numeric`` / ``# kind=strings`` comment in the file's leading comment lines,
    else "auto"."""
    for _, text in iter_lines(p, "utf-8"):
        if not text.startswith("#"):
            break
        body = text[1:].strip().replace(" ", "")
        if body in ("kind=numeric", "kind=strings"):
            return body.split("=", 1)[1]
    return "auto"


def _is_number(v):
    try:
        float(v)
        return True
    except ValueError:
        return False


def write_tsv(dataset: SequenceDataset, path) -> None:
    """Write ``dataset`` in the sequence TSV format, atomically (a temporary file renamed into place).

    Dense X is written as numbers (``repr`` precision, so reading back gives the same floats). Sparse X is written as
    feature strings and needs ``feature_names`` and non-negative integer values (counts); the strings must not
    contain tabs. Labels are written by name (``label_names``, else their ints), −1 as ``?``.

    Raises
    ------
    DataError
        If sparse X has no feature names or non-integer values, or a name contains a tab / a label starts with
        ``#``.
    """
    lab = dataset.label_names if dataset.label_names is not None else [str(k) for k in range(dataset.n_labels)]
    for s in lab:
        if s.startswith("#") or "\t" in s or s == HIDDEN_LABEL or s == "" or s != s.strip():
            raise DataError(f"write_tsv: label name {s!r} cannot be written (no leading '#', tabs, '?', or "
                            f"surrounding spaces)")
    out = [f"# mmprog sequence TSV: {dataset.name or ''} ({len(dataset)} sequences)\n",
           f"# kind={'strings' if dataset.is_sparse else 'numeric'}\n"]
    if dataset.is_sparse:
        names = dataset.feature_names
        if names is None:
            raise DataError("write_tsv: sparse X needs feature_names to be written as feature strings")
        for s in names:
            if "\t" in s or s == "" or s != s.strip():
                raise DataError(f"write_tsv: feature name {s!r} cannot be written (tabs, empty or surrounding spaces)")
    for i, (x, y) in enumerate(dataset):
        if i:
            out.append("\n")
        if sp.issparse(x):
            if x.data.size and ((x.data != np.round(x.data)).any() or (x.data < 0).any()):
                raise DataError(f"write_tsv: sequence {i}: sparse values must be non-negative integer counts to be "
                                f"written as feature strings")
            for t in range(x.shape[0]):
                a, b = x.indptr[t], x.indptr[t + 1]
                feats = [names[j] for j, c in zip(x.indices[a:b], x.data[a:b]) for _ in range(int(c))]
                label = HIDDEN_LABEL if y[t] < 0 else lab[y[t]]
                out.append("\t".join([label] + feats) + "\n")
        else:
            for t in range(x.shape[0]):
                label = HIDDEN_LABEL if y[t] < 0 else lab[y[t]]
                out.append("\t".join([label] + [repr(float(v)) for v in x[t]]) + "\n")
    atomic_write_text(path, "".join(out))
