"""Chunk label encodings: BIO (IOB2) and IOB1 text labels to IOBES and back, for training a chain on IOBES.

A chunk-tagged file (NER, chunking) labels tokens ``B-X``/``I-X``/``O``. In BIO (IOB2, CoNLL-2000 and CoNLL-2002)
every chunk starts with ``B-``; in IOB1 (CoNLL-2003) a chunk starts with ``I-`` unless it follows a chunk of the same
type, where it starts with ``B-``. IOBES (BILOU; Ratinov & Roth 2009) marks single-token chunks ``S-X`` and the last
token of a longer one ``E-X``, so a first-order chain sees where chunks end; training on it and decoding in it often
gains F1 on chunking and NER (Kudo & Matsumoto 2001 compared such chunk representations).

Chunks are read by conlleval's rules (:func:`mmprog.metrics.chunks`): a chunk starts at a B or S tag, at an I or E
tag after O, E, S or the sentence start, and wherever the type changes; it ends after every E or S, before a B, S or
O, at a type change and at the sentence end. Every token that is not O then belongs to exactly one chunk, whatever
the sequence — so the conversions below are defined on **every** sequence of prefixed tags, well formed or not:

* :func:`to_iobes` writes each chunk as ``S-X`` (one token) or ``B-X I-X … E-X``;
* :func:`from_iobes` writes each chunk as ``B-X I-X …`` (``scheme="bio"``) or, for IOB1, ``I-X …`` with ``B-X`` only
  where it directly follows a chunk of the same type.

Decoded IOBES sequences may be ill formed (``I-X`` after ``O``, ``E-X`` without a ``B-X``, ``B-X`` not closed by an
``E-X``, ``B-X I-Y``); they are read by the same rules: an ``I-X`` or ``E-X`` after ``O`` (or after a chunk's ``E``/
``S``) opens a chunk, an unclosed ``B-X I-X`` chunk ends before the next ``O``/``B``/``S``, type change or the
sentence end, and a type change splits. The chunks written back are therefore exactly the chunks conlleval reads in
the IOBES sequence itself, and scores are the same whichever of the two is scored.

The conversions are vectorised over all tokens of a corpus (numpy), for text files of any size.
"""
from __future__ import annotations

import numpy as np

from .exceptions import ParameterError

__all__ = ["TAG_SCHEMES", "FILE_SCHEMES", "check_tag_scheme", "check_chunk_labels", "detect_file_scheme",
           "to_iobes", "from_iobes", "from_iobes_ids"]

#: values of ``tag_scheme`` (:func:`mmprog.tagging.fit_text`, ``mmprog train --tag-scheme``)
TAG_SCHEMES = ("asis", "iobes")
#: encodings of chunk-tagged files that are converted to IOBES and written back
FILE_SCHEMES = ("bio", "iob1")

_O, _B, _I, _E, _S = range(5)
_PREFIX = {"B": _B, "I": _I, "E": _E, "S": _S}
_LETTER = "OBIES"


def check_tag_scheme(tag_scheme):
    """The value if it is one of :data:`TAG_SCHEMES`, else a :class:`ParameterError` naming the allowed values."""
    if not isinstance(tag_scheme, str) or tag_scheme not in TAG_SCHEMES:
        raise ParameterError(f"tag_scheme must be one of {', '.join(repr(s) for s in TAG_SCHEMES)}; "
                             f"got {tag_scheme!r}")
    return tag_scheme


def check_chunk_labels(label_names, what="tag_scheme='iobes'"):
    """Refuse label sets that are not BIO/IOB1 chunk labels (``O`` and ``B-X``/``I-X`` with a type X).

    Raises
    ------
    ParameterError
        One line naming the parameter, what it converts and the offending labels: character segmentation tags
        (B/I/E/S/M without a type), labels already in IOBES/IOE (``E-``, ``S-``), or labels without a chunk prefix
        (POS tags, ...).
    """
    names = sorted(set(label_names))
    if names and set(names) <= {"B", "I", "E", "S", "M"}:
        raise ParameterError(f"{what} converts chunk labels (O, B-X, I-X); got character segmentation tags "
                             f"{names} — train segmentation with tag_scheme='asis'")
    done = [t for t in names if t[:2] in ("E-", "S-") and len(t) > 2]
    if done:
        raise ParameterError(f"{what} converts BIO or IOB1 labels (O, B-X, I-X); the labels are already IOBES or "
                             f"IOE ({', '.join(done[:4])}) — train with tag_scheme='asis'")
    bad = [t for t in names if t != "O" and not (t[:2] in ("B-", "I-") and len(t) > 2)]
    if bad:
        more = f" and {len(bad) - 4} more" if len(bad) > 4 else ""
        raise ParameterError(f"{what} converts chunk labels (O, B-X, I-X); labels {', '.join(map(repr, bad[:4]))}"
                             f"{more} are not — train with tag_scheme='asis'")
    if not any(t != "O" for t in names):
        raise ParameterError(f"{what} converts chunk labels (O, B-X, I-X); the labels hold no chunk ({names})")


# ----------------------------------------------------------------------------------------------------------------------
# the vectorised core: prefix codes and type ids of all tokens, and where each sentence starts
# ----------------------------------------------------------------------------------------------------------------------

def _parse(tag):
    """(prefix code, type) of one tag; anything that is not PREFIX-TYPE with PREFIX in B/I/E/S is O."""
    head, sep, typ = tag.partition("-")
    if sep and typ and head in _PREFIX:
        return _PREFIX[head], typ
    return _O, None


def _encode(seqs):
    """Flatten: prefix codes, type ids (−1 for O), first-token mask, type names and the sentence lengths."""
    lens = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
    uniq = {}
    ids = np.fromiter((uniq.setdefault(t, len(uniq)) for s in seqs for t in s), dtype=np.int64,
                      count=int(lens.sum()))
    types, pref, tid = {}, np.empty(len(uniq), np.int64), np.empty(len(uniq), np.int64)
    for k, t in enumerate(uniq):
        p, typ = _parse(t)
        pref[k] = p
        tid[k] = -1 if typ is None else types.setdefault(typ, len(types))
    first = np.zeros(ids.shape[0], dtype=bool)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    first[starts[lens > 0]] = True
    return pref[ids], tid[ids], first, list(types), lens


def _read_chunks(p, ty, first):
    """conlleval's chunk boundaries of flat tokens: (start, last) boolean masks — token t opens a chunk, token t
    closes one. Every token with p != O lies in exactly one chunk."""
    n = p.shape[0]
    prev_p = np.empty(n, np.int64)
    prev_ty = np.empty(n, np.int64)
    prev_p[1:], prev_ty[1:] = p[:-1], ty[:-1]
    prev_p[first], prev_ty[first] = _O, -1
    inside = p != _O
    start = inside & ((p == _B) | (p == _S) | (prev_p == _O) | (prev_p == _E) | (prev_p == _S) | (ty != prev_ty))
    nxt_open = np.ones(n, dtype=bool)          # the token after t is O, opens a chunk, or t ends its sentence
    nxt_open[:-1] = (p[1:] == _O) | start[1:]
    nxt_open[:-1] |= first[1:]
    last = inside & nxt_open
    return start, last, prev_p, prev_ty


def _out_prefix(p, ty, first, to):
    """Prefix codes of the same chunks written in ``to`` ("iobes", "bio" or "iob1")."""
    start, last, prev_p, prev_ty = _read_chunks(p, ty, first)
    out = np.where(p == _O, _O, _I)
    if to == "iobes":
        out[start & last] = _S
        out[start & ~last] = _B
        out[~start & last] = _E
    elif to == "bio":
        out[start] = _B
    else:          # iob1: B only where a chunk directly follows a chunk of the same type
        out[start & (prev_p != _O) & (prev_ty == ty)] = _B
    return out


def _tag_strings(out, ty, types):
    """The tag string of every token from its prefix code and type id: object array, shape (n_tokens,)."""
    names = np.array(["O"] + [f"{_LETTER[c]}-{t}" for c in range(1, 5) for t in types], dtype=object)
    return names[np.where(out == _O, 0, 1 + (out - 1) * len(types) + ty)]


def _decode(out, ty, types, lens):
    flat = _tag_strings(out, ty, types).tolist()
    ends = np.cumsum(lens).tolist()
    return [flat[a:b] for a, b in zip([0] + ends[:-1], ends)]


def _as_lists(tags):
    if len(tags) and isinstance(tags[0], str):
        return [list(tags)], True
    return [list(s) for s in tags], False


def to_iobes(tags):
    """BIO (IOB2) or IOB1 tags as IOBES, chunk for chunk.

    Parameters
    ----------
    tags : list of list of str
        One tag sequence per sentence (or one flat list for a single sentence).

    Returns
    -------
    list of list of str
        The same shape; conlleval reads the same chunks in both (see the module notes for ill-formed input).
    """
    seqs, single = _as_lists(tags)
    p, ty, first, types, lens = _encode(seqs)
    out = _decode(_out_prefix(p, ty, first, "iobes"), ty, types, lens)
    return out[0] if single else out


def from_iobes(tags, scheme="bio"):
    """IOBES tags (any sequence, also ill-formed decoder output) back to BIO (IOB2) or IOB1.

    Parameters
    ----------
    tags : list of list of str
        One tag sequence per sentence (or one flat list).
    scheme : {"bio", "iob1"}
        ``"bio"``: ``B-`` at every chunk start; ``"iob1"``: ``B-`` only where a chunk directly follows one of the
        same type.

    Returns
    -------
    list of list of str
        Exactly the chunks conlleval reads in ``tags`` (module notes).
    """
    if scheme not in FILE_SCHEMES:
        raise ParameterError(f"scheme must be one of {', '.join(repr(s) for s in FILE_SCHEMES)}; got {scheme!r}")
    seqs, single = _as_lists(tags)
    p, ty, first, types, lens = _encode(seqs)
    out = _decode(_out_prefix(p, ty, first, scheme), ty, types, lens)
    return out[0] if single else out


def from_iobes_ids(label_names, ids, first, scheme="bio"):
    """The back-conversion on decoder output: int labels of many sentences, flat.

    Parameters
    ----------
    label_names : sequence of str
        The model's (IOBES) label names.
    ids : int array (n_tokens,)
        Predicted label of every token, sentences one after the other.
    first : bool array (n_tokens,)
        True at the first token of every sentence.
    scheme : {"bio", "iob1"}

    Returns
    -------
    object array (n_tokens,)
        The label strings in ``scheme``.
    """
    codes = [_parse(t) for t in label_names]
    types = {}
    tid = np.array([-1 if typ is None else types.setdefault(typ, len(types)) for _, typ in codes], dtype=np.int64)
    pref = np.array([c for c, _ in codes], dtype=np.int64)
    ids = np.asarray(ids, dtype=np.int64)
    p, ty = pref[ids], tid[ids]
    return _tag_strings(_out_prefix(p, ty, np.asarray(first, dtype=bool), scheme), ty, list(types))


def detect_file_scheme(tags) -> str:
    """``"iob1"`` when the tags are IOB1, else ``"bio"``.

    IOB1 writes ``B-X`` only after a chunk of the same type X and opens other chunks with ``I-X``; BIO writes ``B-X``
    at every chunk start. So the tags are IOB1 when some chunk opens with ``I-`` and no ``B-`` stands where IOB1
    would not write one (after O, another type or the sentence start); a ``B-`` there means BIO, whatever else the
    file holds (an annotation slip ``O I-X`` in a BIO file does not make it IOB1). Without either sign (no chunk, or
    every chunk directly after one of its type) both read alike and the answer is ``"bio"``.
    """
    seqs, _ = _as_lists(tags)
    p, ty, first, _, _ = _encode(seqs)
    start, _, prev_p, prev_ty = _read_chunks(p, ty, first)
    b_after_other = np.any((p == _B) & ~((prev_p != _O) & (prev_ty == ty)))
    if b_after_other:
        return "bio"
    return "iob1" if np.any(start & (p == _I)) else "bio"
