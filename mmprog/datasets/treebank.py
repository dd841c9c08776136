"""Dependency treebanks: CoNLL-U (Universal Dependencies), CoNLL-X (the 10-column format of the CoNLL-X shared task,
also the layout of the UD v1.0 pre-release ``.conll`` files) and Malt-TAB (NLTK's dependency treebank sample).

The UD Swedish-Talbanken v1.0 pre-release ``sv-ud-*.conll`` files are, despite the extension, UD v1 data in the
10-column layout shared by CoNLL-X and CoNLL-U: UPOS in column 4, SUC tags in column 5, UD features in column 6,
no lemmas, no comments, no multiword tokens or empty nodes. Either reader accepts them; ``load_conllx`` is the strict
one (it rejects CoNLL-U-only lines).

Columns of the returned :class:`~mmprog.datasets.base.TreeDataset`: ``form``, ``lemma``, ``cpos`` (CoNLL-X
CPOSTAG / CoNLL-U UPOS), ``pos`` (POSTAG / XPOS; the coarse tag when the fine one is ``_``), ``feats``, ``deprel``.
Field syntax (IDs, heads) is parsed with the ``conllu`` package's own field parsers; lines are split here so that
every error can name the file and the line.
"""
from __future__ import annotations

import numpy as np
from conllu.parser import ParseException, parse_id_value, parse_int_value

from .base import TreeDataset, check_tree
from .reading import as_path, blocks, check_int_field, fail

__all__ = ["load_conllu", "load_conllx", "load_malt_tab"]


def load_conllu(path, name=None, encoding="utf-8") -> TreeDataset:
    """Read a CoNLL-U file (plain or gzipped) into a :class:`TreeDataset` of basic dependency trees.

    Multiword-token lines (``1-2``) and empty nodes of enhanced dependencies (``8.1``) are skipped; ``#`` comment
    lines are ignored.

    Parameters
    ----------
    path : str or Path
    name : str, optional
        Dataset name (default: the file name).
    encoding : str

    Raises
    ------
    DataError
        ``file:line`` of a line without 10 tab-separated fields, a malformed ID or HEAD, IDs out of sequence, or
        (at the sentence's first line) a head structure that is not a tree.
    """
    return _read_10col(path, "conllu", name, encoding)


def load_conllx(path, name=None, encoding="utf-8") -> TreeDataset:
    """Read a CoNLL-X file (10 tab-separated columns ID FORM LEMMA CPOSTAG POSTAG FEATS HEAD DEPREL PHEAD PDEPREL;
    plain or gzipped) into a :class:`TreeDataset`. IDs must be 1, 2, … in every sentence.

    Raises
    ------
    DataError
        As :func:`load_conllu`; multiword or empty-node IDs are errors here (read such files with
        :func:`load_conllu`).
    """
    return _read_10col(path, "conllx", name, encoding)


def load_malt_tab(path, name=None, encoding="utf-8") -> TreeDataset:
    """Read a Malt-TAB file (NLTK's ``.dp``: tab-separated ``word tag head`` or ``word tag head rel``, blank line
    between sentences; plain or gzipped) into a :class:`TreeDataset`.

    The single tag column fills both ``pos`` and ``cpos``; ``lemma`` is ``_``; a fourth column becomes
    ``deprel``.

    Raises
    ------
    DataError
        ``file:line`` of a line with other than 3 or 4 fields or a non-integer head, or a sentence whose heads do
        not form a tree.
    """
    p = as_path(path)
    sentences, heads = [], []
    for block in blocks(p, encoding):
        forms, tags, hs, rels = [], [], [], []
        width = None
        for k, text in block:
            f = text.split("\t")
            if len(f) not in (3, 4):
                raise fail(p, k, f"{len(f)} tab-separated fields; Malt-TAB lines are 'word<TAB>tag<TAB>head' with an "
                                 f"optional fourth 'rel'")
            if width is None:
                width = len(f)
            elif len(f) != width:
                raise fail(p, k, f"{len(f)} fields but the sentence's first line has {width}")
            try:
                h = int(f[2])
            except ValueError:  # also a number too long to convert (Python's 4,300-digit limit)
                raise fail(p, k, f"head {f[2]!r} is not an integer (0 = root, else the 1-based head token)") from None
            check_int_field(p, k, h, "head")  # the range within the sentence: check_tree
            forms.append(f[0])
            tags.append(f[1])
            hs.append(h)
            if width == 4:
                rels.append(f[3])
        sent = {"form": forms, "lemma": ["_"] * len(forms), "cpos": list(tags), "pos": tags}
        if width == 4:
            sent["deprel"] = rels
        h = np.asarray(hs, dtype=np.int64)
        check_tree(h, len(forms), len(sentences), f"{p}:{block[0][0]}")
        sentences.append(sent)
        heads.append(h)
    return _finish(p, sentences, heads, name)


def _finish(p, sentences, heads, name):
    if not sentences:
        raise fail(p, None, "no sentences found")
    ds = TreeDataset(sentences, heads, name=name if name is not None else p.name)
    ds.info["source"] = str(p)
    return ds


def _read_10col(path, dialect, name, encoding):
    p = as_path(path)
    sentences, heads = [], []
    for block in blocks(p, encoding, comment="#"):
        got = sentence_10col(p, block, dialect, len(sentences))
        if got is not None:
            sentences.append(got[0])
            heads.append(got[1])
    return _finish(p, sentences, heads, name)


def sentence_10col(p, block, dialect, index, unannotated=False):
    """One sentence of a CoNLL-U/CoNLL-X file from its token lines (comment lines already removed).

    Parameters
    ----------
    p : Path
        The source, for messages.
    block : list of (int, str)
        The sentence's numbered lines (:func:`mmprog.datasets.reading.blocks`).
    dialect : {"conllu", "conllx"}
    index : int
        0-based number of the sentence, for messages.
    unannotated : bool
        Accept a sentence whose HEAD column is ``_`` on every token (text to parse); its heads are then -1.

    Returns
    -------
    (dict, ndarray of int64 shape (n,)) or None
        The sentence's columns and heads; None when it has no basic token (multiword/empty-node lines only).
    """
    form, lemma, cpos, pos, feats, deprel, hs = [], [], [], [], [], [], []
    for k, text in block:
        f = text.split("\t")
        if len(f) != 10:
            raise fail(p, k, f"{len(f)} tab-separated fields, expected 10 (ID FORM LEMMA "
                             f"{'UPOS XPOS' if dialect == 'conllu' else 'CPOSTAG POSTAG'} FEATS HEAD DEPREL "
                             f"{'DEPS MISC' if dialect == 'conllu' else 'PHEAD PDEPREL'})")
        try:
            tid = parse_id_value(f[0])
        except (ParseException, ValueError):  # ValueError: more digits than Python converts
            tid = "bad"
        if isinstance(tid, tuple):
            if dialect == "conllx":
                raise fail(p, k, f"ID {f[0]!r} is a CoNLL-U multiword/empty-node ID; read the file with "
                                 f"load_conllu")
            continue  # multiword token or empty node: not part of the basic tree
        if not isinstance(tid, int):
            raise fail(p, k, f"ID {f[0]!r} is not a token number")
        if tid != len(form) + 1:
            raise fail(p, k, f"token ID {tid} out of sequence; expected {len(form) + 1} (IDs run 1, 2, ... in "
                             f"each sentence, a blank line between sentences)")
        missing = unannotated and f[6] == "_"
        if missing:
            h = -1
        else:
            try:
                h = parse_int_value(f[6])
            except (ParseException, ValueError):
                h = None
            if h is None:
                raise fail(p, k, f"HEAD {f[6]!r} is not an integer (0 = root, else the ID of the head token)"
                                 + (" or '_'" if unannotated else ""))
            check_int_field(p, k, h, "head")  # the range within the sentence: check_tree
        if hs and missing != none_given:
            raise fail(p, k, f"HEAD {f[6]!r} but the sentence's first token has HEAD "
                             f"{'_' if none_given else repr(str(hs[0]))}; give every token a head or none ('_')")
        none_given = missing
        form.append(f[1])
        lemma.append(f[2])
        cpos.append(f[3])
        pos.append(f[4] if f[4] != "_" else f[3])
        feats.append(f[5])
        deprel.append(f[7])
        hs.append(h)
    if not form:
        return None  # a block of multiword/empty-node lines only cannot occur in valid files; nothing to keep
    h = np.asarray(hs, dtype=np.int64)
    if not none_given:
        check_tree(h, len(form), index, f"{p}:{block[0][0]}")
    return {"form": form, "lemma": lemma, "cpos": cpos, "pos": pos, "feats": feats, "deprel": deprel}, h
