"""SIGHAN 2005 (second International Chinese Word Segmentation Bakeoff, Emerson 2005) files.

Word segmentation becomes character tagging (Mao & Tsang, section 3: "B, I, E" tags): each character is tagged by
its place in its word. Two tag sets:

* ``"BIES"``: B begins a word of ≥ 2 characters, I is inside, E ends it, S is a single-character word.
* ``"BIE"`` (the paper's three labels): as BIES but a single-character word is tagged B — it begins a word and no
  I/E follows, so words are still recovered (a word starts at every B).

Gold files hold one sentence per line with words separated by whitespace (two ASCII spaces in PKU, one in CityU;
U+3000 ideographic spaces are separators too), CRLF line ends, and a UTF-8 byte-order mark in the CityU files.
Blank lines are skipped; ``source_lines`` keeps each sentence's line so output can be written back in file order.
"""
from __future__ import annotations

from .base import TokenCorpus
from .reading import as_path, fail, iter_lines

__all__ = ["load_sighan", "load_sighan_raw", "load_word_list", "words_to_tags", "tags_to_words", "TAGSETS"]

TAGSETS = {"BIES": ("B", "I", "E", "S"), "BIE": ("B", "I", "E")}


def _check_tagset(tagset):
    if tagset not in TAGSETS:
        from ..exceptions import ParameterError
        raise ParameterError(f"tagset must be one of {sorted(TAGSETS)}; got {tagset!r}")


def words_to_tags(words, tagset="BIES") -> list[str]:
    """Tags of the characters of ``words`` (a list of str) under ``tagset``."""
    _check_tagset(tagset)
    single = "S" if tagset == "BIES" else "B"
    tags = []
    for w in words:
        n = len(w)
        if n == 1:
            tags.append(single)
        elif n > 1:
            tags.append("B")
            tags.extend("I" * (n - 2))
            tags.append("E")
    return tags


def tags_to_words(chars, tags, tagset="BIES") -> list[str]:
    """Words from characters and their tags (inverse of :func:`words_to_tags` on well-formed tags).

    A word ends after E or S and before B or S; ill-formed predicted sequences (an I after E, a leading I) are read
    leniently: I and E continue the current word, so every character lands in exactly one word.
    """
    _check_tagset(tagset)
    words, cur = [], ""
    for c, t in zip(chars, tags):
        if t in ("B", "S") and cur:
            words.append(cur)
            cur = ""
        cur += c
        if t in ("E", "S"):
            words.append(cur)
            cur = ""
    if cur:
        words.append(cur)
    return words


def load_sighan(path, tagset="BIES", name=None) -> TokenCorpus:
    """Read a segmented (gold) SIGHAN file into a character :class:`TokenCorpus`.

    Parameters
    ----------
    path : str or Path
        e.g. ``gold/pku_test_gold.utf8.gz`` (plain or gzipped, UTF-8, BOM and CRLF handled).
    tagset : {"BIES", "BIE"}
    name : str, optional
        Default: the file name.

    Returns
    -------
    TokenCorpus
        Column ``char`` (one character per token), ``labels`` the tags, ``label_column`` ``"tag"``,
        ``source_lines`` the line of each sentence. The gold words of sentence i are
        ``tags_to_words(corpus.sentences[i]["char"], corpus.labels[i], tagset)``. PKU test gold: 1,944 sentences,
        104,372 words, 172,733 characters.

    Raises
    ------
    DataError
        ``file:line`` when a line cannot be decoded as UTF-8; ParameterError for an unknown tag set.
    """
    _check_tagset(tagset)
    p = as_path(path)
    sentences, labels, lines = [], [], []
    for k, text in iter_lines(p, "utf-8"):
        ws = text.split()  # str.split() also splits on U+3000 and other Unicode spaces
        if not ws:
            continue
        chars = [c for w in ws for c in w]
        sentences.append({"char": chars})
        labels.append(words_to_tags(ws, tagset))
        lines.append(k)
    if not sentences:
        raise fail(p, None, "no sentences found (expected one segmented sentence per line)")
    corpus = TokenCorpus(sentences, labels, columns=("char",), label_column="tag",
                         name=name if name is not None else p.name, source_lines=lines)
    corpus.info.update(source=str(p), tagset=tagset)
    return corpus


def load_sighan_raw(path, name=None) -> TokenCorpus:
    """Read an unsegmented SIGHAN test file into an unlabelled character :class:`TokenCorpus`.

    Whitespace inside a line (a few test lines contain ASCII spaces) is dropped, so the characters match the
    gold file's line by line; blank lines are skipped and ``source_lines`` keeps the line of each sentence.
    """
    p = as_path(path)
    sentences, lines = [], []
    for k, text in iter_lines(p, "utf-8"):
        chars = [c for c in "".join(text.split())]
        if not chars:
            continue
        sentences.append({"char": chars})
        lines.append(k)
    if not sentences:
        raise fail(p, None, "no sentences found")
    corpus = TokenCorpus(sentences, None, columns=("char",), label_column="tag",
                         name=name if name is not None else p.name, source_lines=lines)
    corpus.info["source"] = str(p)
    return corpus


def load_word_list(path) -> set[str]:
    """The training-vocabulary list of the bakeoff (``gold/*_training_words.utf8``; one word per line) as a set, for
    in-vocabulary recall R_iv."""
    p = as_path(path)
    out = set()
    for _, text in iter_lines(p, "utf-8"):
        w = text.strip()
        if w:
            out.add(w)
    return out
