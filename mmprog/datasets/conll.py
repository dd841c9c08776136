"""Column-per-token corpora of the CoNLL shared tasks: CoNLL-2000 chunking (``word POS chunk``) and CoNLL-2002
named-entity recognition (``word POS NE`` in the Spanish files with Carreras's POS tags), one token per line,
sentences separated by blank lines.

Features are not made here: the template extractor (:mod:`mmprog.features.templates`) reads the returned
:class:`~mmprog.datasets.base.TokenCorpus` and produces the sparse X; ``corpus.to_sequence_dataset(X)`` then pairs
it with integer labels.
"""
from __future__ import annotations

from pathlib import Path

from .base import TokenCorpus
from .reading import as_path, blocks, fail

__all__ = ["load_conll"]


def load_conll(path, columns=("form", "pos", "chunk"), label_column=-1, encoding="utf-8", name=None,
               sep=None, lines=None) -> TokenCorpus:
    """Read a CoNLL-2000/2002-style file (plain or gzipped) into a :class:`TokenCorpus`.

    Parameters
    ----------
    path : str or Path
        The file, e.g. ``conll2000/train.txt.gz`` or ``conll2002/esp.train.gz``.
    columns : sequence of str
        Names of the file's columns, in order; every token line must have exactly this many fields. Use
        ``("form", "pos", "ne")`` for CoNLL-2002 Spanish and ``("form", "ne")`` for the original two-column
        release.
    label_column : int, str or None
        The column holding the labels (index into ``columns``, negative counts from the end, or its name). It is
        removed from the token columns. None: the file has no labels (text to tag).
    encoding : str
        Text encoding (the shared copies are UTF-8; the original CoNLL-2002 files are Latin-1).
    name : str, optional
        Corpus name (default: the file name).
    sep : str, optional
        Field separator; default any run of whitespace (spaces in the CoNLL files, tabs accepted too).
    lines : iterable of (int, str), optional
        Numbered lines to read instead of the file (see :func:`mmprog.datasets.reading.blocks`); ``path`` then only
        names the source.

    Returns
    -------
    TokenCorpus
        ``sentences`` with the non-label columns in file order, ``labels`` the label column, ``label_column`` its
        name, ``source_lines`` the first line of each sentence. ``-DOCSTART-`` lines (document boundaries in other
        CoNLL releases) end a sentence and are not tokens.

    Raises
    ------
    DataError
        ``file:line`` of a token line with the wrong number of fields, or bad ``columns``/``label_column``.
    """
    p = as_path(path) if lines is None else Path(str(path))
    columns = tuple(str(c) for c in columns)
    if len(columns) < (1 if label_column is None else 2) or len(set(columns)) != len(columns):
        raise fail(p, None, f"columns must name at least two distinct columns (tokens and labels); got {columns}")
    if label_column is None:
        lab = None
    elif isinstance(label_column, str):
        if label_column not in columns:
            raise fail(p, None, f"label_column {label_column!r} is not one of columns {columns}")
        lab = columns.index(label_column)
    else:
        lab = int(label_column)
        if not -len(columns) <= lab < len(columns):
            raise fail(p, None, f"label_column {label_column} is outside the {len(columns)} columns {columns}")
    if lab is not None:
        lab %= len(columns)
    keep = [j for j in range(len(columns)) if j != lab]
    names = [columns[j] for j in keep]
    ncol = len(columns)
    sentences, labels, starts = [], [], []

    def flush(rows, first_line):
        if rows:
            cols = list(zip(*rows))
            sentences.append({names[a]: list(cols[j]) for a, j in enumerate(keep)})
            if lab is not None:
                labels.append(list(cols[lab]))
            starts.append(first_line)

    for block in blocks(p, encoding, lines=lines):
        rows, first = [], block[0][0]
        for k, text in block:
            fields = text.split(sep)
            if fields and fields[0] == "-DOCSTART-":
                flush(rows, first)
                rows, first = [], k + 1
                continue
            if len(fields) != ncol:
                raise fail(p, k, f"{len(fields)} fields, expected {ncol} ({' '.join(columns)}); a blank line ends a "
                                 f"sentence")
            rows.append(fields)
        flush(rows, first)
    if not sentences:
        raise fail(p, None, "no sentences found (expected one token per line, blank lines between sentences)")
    corpus = TokenCorpus(sentences, labels if lab is not None else None, columns=names,
                         label_column=columns[lab] if lab is not None else None,
                         name=name if name is not None else p.name, source_lines=starts)
    corpus.info["source"] = str(p)
    return corpus
