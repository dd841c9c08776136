"""CRF++-style feature templates over token columns, with the template sets of Mao & Tsang's experiments.

A template line is written as in CRF++ (https://taku910.github.io/crfpp/#templ):

* ``U02:%x[0,0]`` — a unigram (state) template with id ``U02``; the macro ``%x[r,c]`` is the value of token column
  ``c`` at row offset ``r`` from the current token. ``U08:%x[-1,0]/%x[0,0]`` combines two macros. Every distinct
  value combination seen in the training data becomes one binary input feature; positions before the sentence give
  ``_B-1``, ``_B-2``, ... and after it ``_B+1``, ``_B+2``, ..., exactly CRF++'s boundary symbols.
* ``B`` — the bigram (transition) template. It produces no input feature: the extractor records it
  (``has_transitions_``) so that the linear-chain map adds its K×K transition features (as their own template group).
* ``B01:%x[0,1]`` — a bigram template with macros: each of its values is conjoined with the label pair
  (y_{t-1}, y_t), K×K weights per value, a transition score that depends on the input, added to the shared one. As in
  CRF++ the macros are read relative to the *second* token of the pair (``%x[0,1]`` is the POS of token t, ``%x[-1,1]``
  that of token t − 1), and the template is applied from the second token of a sentence on (the first has no pair),
  so its dictionary holds only values seen there. These become the chain map's edge features
  (``n_edge_features_``, placed after all unigram features).

Each template is one *template group* (Mao & Tsang, section 1.1: the features κⱼ(D) a template instantiates on the
training data D form group j); ``groups_`` gives the group of every input feature, in template order (unigram
templates first, then bigram templates with macros), so the state features x_t ⊗ e(y_t) and the edge features of the
chain map inherit them.

Implementation: the values of each column are mapped to integer ids once, a template's value combination is packed
into one int64 key (mixed radix over the column vocabularies, re-indexed through a fitted table when the radix would
overflow), and the feature dictionary of a template is the sorted array of its keys; ``transform`` is a
``searchsorted`` per template. No feature strings are built unless ``feature_names_`` is read. One difference from
CRF++: CRF++ identifies a feature by its expanded string, so ``%x[0,0]/%x[1,0]`` on ("a/b", "c") and on ("a", "b/c")
collide there; here the value tuple is the identity, so they are two features.
"""
from __future__ import annotations

import re
from itertools import combinations, permutations, repeat

import numpy as np
import scipy.sparse as sp

from mmprog.exceptions import DataError, ModelFileError, ParameterError
from mmprog.features.base import csr_rows
from mmprog.features.template_kernels import key_hash_build, key_hash_find

__all__ = ["TemplateExtractor", "PRESETS", "DERIVED", "parse_template", "read_lexicon"]

_MACRO = re.compile(r"%x\[\s*(-?\d+)\s*,\s*(\d+)(?::([a-z0-9]+))?\s*\]")
# keys stay below 2**62 so that key * radix + id never overflows int64
_KEY_LIMIT = 1 << 62
# a template whose keys lie below this keeps a dense key -> feature table (4 or 8 bytes per key)
_TABLE_LIMIT = 1 << 22


# ----------------------------------------------------------------------------------------------------------------------
# derived token columns
# ----------------------------------------------------------------------------------------------------------------------

def _shape(w: str) -> str:
    # one symbol per character: X upper, x lower, d digit, the character itself otherwise ("Xxxx", "dd-dd")
    return "".join("X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else ch for ch in w)


def _short_shape(w: str) -> str:
    # runs of one symbol collapsed ("Xx", "d-d"): the shape of long and short words of one kind agree
    s = _shape(w)
    return "".join(ch for k, ch in enumerate(s) if k == 0 or ch != s[k - 1])


def _flag(pred):
    return lambda w: "1" if pred(w) else "0"


#: Derived token columns, addressed in a template as ``%x[r,c:NAME]`` (column ``c`` passed through NAME): lower-cased
#: form, word shape (``Xxxx``, ``dd-dd``) and its collapsed form (``Xx``, ``d-d``), prefixes and suffixes of 1–4
#: characters (the whole value when shorter), and the 0/1 flags is-title, is-upper, is-digit, has-hyphen. ``pre2`` of
#: the POS column is the POS prefix of the CoNLL systems. Each is computed once per distinct value of the column.
DERIVED = {
    "lower": str.lower,
    "shape": _shape,
    "sshape": _short_shape,
    **{f"pre{k}": (lambda k: lambda w: w[:k])(k) for k in range(1, 5)},
    **{f"suf{k}": (lambda k: lambda w: w[-k:])(k) for k in range(1, 5)},
    "title": _flag(str.istitle),
    "upper": _flag(str.isupper),
    "digit": _flag(str.isdigit),
    "hyphen": _flag(lambda w: "-" in w),
}


def column_index(ckey) -> int:
    """Base column index of a column key (``2`` or ``"2:suf3"``)."""
    return ckey if isinstance(ckey, int) else int(ckey.split(":", 1)[0])


def _array_name(ckey) -> str:
    return str(ckey).replace(":", "_")


# ----------------------------------------------------------------------------------------------------------------------
# presets
# ----------------------------------------------------------------------------------------------------------------------

def _cws_unigram_templates(extra_bigrams: bool) -> list[str]:
    # Mao & Tsang Table 2 (column 0 = the character). TP1 = U00-U09 + B (11 templates), TP2 = U00-U16 + B (18).
    t = ["U00:%x[-2,0]", "U01:%x[-1,0]", "U02:%x[0,0]", "U03:%x[1,0]", "U04:%x[2,0]",
         "U05:%x[-2,0]/%x[-1,0]/%x[0,0]", "U06:%x[-1,0]/%x[0,0]/%x[1,0]", "U07:%x[0,0]/%x[1,0]/%x[2,0]",
         "U08:%x[-1,0]/%x[0,0]", "U09:%x[0,0]/%x[1,0]"]
    if extra_bigrams:
        t += ["U10:%x[-2,0]/%x[-1,0]", "U11:%x[1,0]/%x[2,0]", "U12:%x[-2,0]/%x[0,0]", "U13:%x[-1,0]/%x[1,0]",
              "U14:%x[0,0]/%x[2,0]", "U15:%x[-2,0]/%x[1,0]", "U16:%x[-1,0]/%x[2,0]"]
    return t + ["B"]


def _ner_templates() -> list[str]:
    """The 134-template NER set of Mao & Tsang section 3.3 (column 0 = word, 1 = POS), reconstructed.

    The paper says only: "we enumerate in the range of [-3,3] the combination of uni-gram and bi-gram templates in
    terms of words and part-of-speech (POS) respectively, the combination of tri-gram on POS only, and a state-state
    transition template. There are 134 templates in total." Counted over the 7 window positions:

    ====================================================================  =====
    word unigrams %x[r,0], r = -3..3                                          7
    POS unigrams %x[r,1]                                                      7
    word bigrams %x[r,0]/%x[s,0], all pairs r < s                            21
    POS bigrams %x[r,1]/%x[s,1], all pairs r < s                             21
    word/POS bigrams %x[r,0]/%x[s,1], all ordered pairs r ≠ s                42
    POS trigrams %x[r,1]/%x[s,1]/%x[t,1], all triples r < s < t              35
    B (transitions)                                                           1
    ====================================================================  =====

    which is 134. This is the only natural enumeration we found that reaches exactly 134: bigrams over the 14 items
    (7 words, 7 tags) at two distinct positions. Adding the same-position word/POS pairs would give 141; word and POS
    bigrams alone (no mixed pairs) give 92. The paper does not list its templates, so the set (and its order, which
    fixes the group ids U000-U132) is ours. The feature count confirms it: fitted on CoNLL-2002 esp.train with
    min_count=1 this set instantiates 5,926,794 input features; the paper reports 5,926,876 features for ESP, 82
    more — the 9 × 9 = 81 transition features of B plus one. The 141-template variant would add the same-position
    word/POS features and miss the paper's count by far.
    """
    pos = range(-3, 4)
    t = [f"%x[{r},0]" for r in pos] + [f"%x[{r},1]" for r in pos]
    t += [f"%x[{r},0]/%x[{s},0]" for r, s in combinations(pos, 2)]
    t += [f"%x[{r},1]/%x[{s},1]" for r, s in combinations(pos, 2)]
    t += [f"%x[{r},0]/%x[{s},1]" for r, s in permutations(pos, 2)]
    t += [f"%x[{r},1]/%x[{s},1]/%x[{u},1]" for r, s, u in combinations(pos, 3)]
    return [f"U{k:03d}:{x}" for k, x in enumerate(t)] + ["B"]


def _rich_templates() -> list[str]:
    """The ``"rich"`` set for word/POS data (column 0 = word, 1 = POS): the token features of strong CoNLL taggers.

    Each line is one template group (so MTL weighs, and can switch off, each kind of evidence): the word and its
    lower-cased neighbours in [−2, 2] and their bigrams, word shape and collapsed shape in [−1, 1], prefixes and
    suffixes of 1–4 characters, neighbours' 3-suffixes, the case/digit/hyphen flags and the title pattern of the
    window, POS in [−2, 2] with its bigrams and trigram, the 2-letter POS prefix in [−1, 1], word/POS, and B. It
    contains the sklearn-crfsuite tutorial's features (lower-cased word, 2/3-suffixes, is-upper/title/digit, POS and
    its prefix, the same for the neighbours) as a subset.
    """
    t = ["Uw:%x[0,0]"]
    t += [f"Ulow[{r}]:%x[{r},0:lower]" for r in range(-2, 3)]
    t += ["Ulow[-1,0]:%x[-1,0:lower]/%x[0,0:lower]", "Ulow[0,1]:%x[0,0:lower]/%x[1,0:lower]"]
    t += [f"Ushape[{r}]:%x[{r},0:shape]" for r in range(-1, 2)]
    t += ["Usshape[0]:%x[0,0:sshape]", "Usshape[-1,0,1]:%x[-1,0:sshape]/%x[0,0:sshape]/%x[1,0:sshape]"]
    t += [f"Upre{k}:%x[0,0:pre{k}]" for k in range(1, 5)] + [f"Usuf{k}:%x[0,0:suf{k}]" for k in range(1, 5)]
    t += ["Usuf3[-1]:%x[-1,0:suf3]", "Usuf3[1]:%x[1,0:suf3]"]
    t += ["Utitle:%x[0,0:title]", "Uupper:%x[0,0:upper]", "Udigit:%x[0,0:digit]", "Uhyphen:%x[0,0:hyphen]",
          "Utitle[-1,0,1]:%x[-1,0:title]/%x[0,0:title]/%x[1,0:title]", "Uupper[-1,1]:%x[-1,0:upper]/%x[1,0:upper]"]
    t += [f"Upos[{r}]:%x[{r},1]" for r in range(-2, 3)]
    t += ["Upos[-1,0]:%x[-1,1]/%x[0,1]", "Upos[0,1]:%x[0,1]/%x[1,1]", "Upos[-1,0,1]:%x[-1,1]/%x[0,1]/%x[1,1]"]
    t += [f"Upos2[{r}]:%x[{r},1:pre2]" for r in range(-1, 2)]
    t += ["Ulowpos:%x[0,0:lower]/%x[0,1]"]
    return t + ["B"]


def _chunk_templates() -> list[str]:
    """The ``"chunk"`` set (column 0 = word, 1 = POS): ``rich`` plus what CRF++'s example chunking template adds.

    CRF++'s ``example/chunking/template`` (words in [−2, 2] with the bigrams w₋₁w₀ and w₀w₁, POS in [−2, 2] with all
    four adjacent bigrams and the three trigrams) gave the structural SVM 93.45 F1 on CoNLL-2000 and ``rich`` 93.59;
    this set is their union — ``rich``'s groups, the word-form bigrams, the outer POS bigrams and trigrams — plus
    the word conjoined with the neighbours' POS and the neighbours' words with their own POS, which chunk boundaries
    depend on (a determiner before a noun, a verb after a modal). One template per group, so MTL can weigh them.
    Measured on the last 20 % of CoNLL-2000's train.txt (1-slack SVM, C = 1): 93.88 F1 against ``rich``'s 93.90,
    with twice the features — kept for MTL / p-block to select groups from, not as the default.
    """
    t = [x for x in _rich_templates() if x != "B"]
    t += ["Uw[-1,0]:%x[-1,0]/%x[0,0]", "Uw[0,1]:%x[0,0]/%x[1,0]",
          "Upos[-2,-1]:%x[-2,1]/%x[-1,1]", "Upos[1,2]:%x[1,1]/%x[2,1]",
          "Upos[-2,-1,0]:%x[-2,1]/%x[-1,1]/%x[0,1]", "Upos[0,1,2]:%x[0,1]/%x[1,1]/%x[2,1]",
          "Ulowpos[-1]:%x[-1,0:lower]/%x[-1,1]", "Ulowpos[1]:%x[1,0:lower]/%x[1,1]",
          "Ulow0pos[-1]:%x[0,0:lower]/%x[-1,1]", "Ulow0pos[1]:%x[0,0:lower]/%x[1,1]"]
    return t + ["B"]


#: Named template sets: ``"tp1"`` and ``"tp2"`` (Chinese word segmentation, Table 2 of Mao & Tsang; one column, the
#: character) and ``"ner"`` (their 134-template NER set; columns word, POS — see :func:`_ner_templates` for how the
#: count is reached), ``"rich"`` (word/POS data with derived columns: :func:`_rich_templates`) and ``"chunk"``
#: (``rich`` with CRF++'s chunking template added: :func:`_chunk_templates`).
PRESETS: dict[str, list[str]] = {
    "tp1": _cws_unigram_templates(extra_bigrams=False),
    "tp2": _cws_unigram_templates(extra_bigrams=True),
    "ner": _ner_templates(),
    "rich": _rich_templates(),
    "chunk": _chunk_templates(),
}


# ----------------------------------------------------------------------------------------------------------------------
# template parsing
# ----------------------------------------------------------------------------------------------------------------------

def parse_template(line: str, lexicons=()):
    """Parse one CRF++ template line.

    Parameters
    ----------
    line : str
        E.g. ``"U08:%x[-1,0]/%x[0,0]"`` or ``"B"``.
    lexicons : collection of str
        Names of user lexicons, addressable as derived columns besides those of :data:`DERIVED`.

    Returns
    -------
    kind : str
        ``"U"`` or ``"B"`` (a ``B`` line with macros conjoins their values with the label pair).
    name : str
        The template id: the text before the first ``:`` (the whole line if there is none).
    macros : list of (int, int or str)
        (row offset, column key) of each ``%x[r,c]``, in order; the key is the column index ``c``, or ``"c:NAME"``
        for ``%x[r,c:NAME]``, column ``c`` through the derived column NAME of :data:`DERIVED`.
    pieces : list of str
        The literal text around the macros (len(macros) + 1 pieces), to rebuild CRF++ feature strings.
    """
    text = line.strip()
    if not text or text[0] not in "UB":
        raise ParameterError(f"template {line!r} must start with U (unigram) or B (bigram), as in CRF++")
    macros = []
    for m in _MACRO.finditer(text):
        c, op = int(m.group(2)), m.group(3)
        if op is not None and op not in DERIVED and op not in lexicons:
            known = ", ".join(list(DERIVED) + [f"{n} (lexicon)" for n in lexicons])
            raise ParameterError(f"template {line!r}: derived column {op!r} is not one of {known}")
        macros.append((int(m.group(1)), c if op is None else f"{c}:{op}"))
    pieces = _MACRO.split(text)[::4]
    if "%x" in "".join(pieces):
        raise ParameterError(f"template {line!r} has a malformed macro; write %x[row,column], e.g. %x[-1,0]")
    # the id ends at the first ':' before any macro (a derived column's macro holds a ':' of its own)
    head = text.split("%x", 1)[0]
    name = head.split(":", 1)[0] if ":" in head else text
    return text[0], name, macros, pieces


def read_lexicon(path) -> dict:
    """A lexicon file: one ``word value`` pair per line (separated by a tab, else by whitespace; blank lines and
    ``#`` comments skipped), e.g. a gazetteer (``Madrid LOC``) or word clusters (``Madrid 110100``).

    Returns
    -------
    dict str -> str

    Raises
    ------
    DataError
        ``file:line`` of a line without exactly two fields or of a word listed twice with different values.
    """
    from ..datasets.reading import iter_lines
    table, where = {}, {}
    for k, text in iter_lines(path):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        f = text.split("\t") if "\t" in text else text.split()
        f = [x.strip() for x in f]
        if len(f) != 2 or not f[0] or not f[1]:
            raise DataError(f"{path}:{k}: {len(f)} fields; a lexicon line is 'word<TAB>value' (or 'word value')")
        w, v = f
        if w in table and table[w] != v:
            raise DataError(f"{path}:{k}: {w!r} is listed again with value {v!r} (line {where[w]} gave "
                            f"{table[w]!r}); one value per word")
        table[w] = v
        where.setdefault(w, k)
    if not table:
        raise DataError(f"{path}: no 'word value' lines found; a lexicon file has one pair per line")
    return table


def _read_templates(templates) -> list[str]:
    if isinstance(templates, str):
        if templates in PRESETS:
            return list(PRESETS[templates])
        if "\n" not in templates and "%x" not in templates and templates.strip() != "B":
            raise ParameterError(f"templates {templates!r} is neither a preset ({', '.join(sorted(PRESETS))}) nor "
                                 f"template text; pass a preset name, a list of lines or CRF++ template file text")
        templates = templates.splitlines()
    lines = [t.strip() for t in templates]
    # CRF++ template files allow blank lines and '#' comments
    return [t for t in lines if t and not t.startswith("#")]


class _Template:
    """One unigram template, or bigram template with macros: its macros and, after fitting, its sorted feature
    keys."""

    def __init__(self, line, lexicons=()):
        self.line = line
        self.kind, self.name, self.macros, self.pieces = parse_template(line, lexicons)
        self.keys = None          # (d_j,) int64 sorted feature keys
        self.counts = None        # (d_j,) training counts
        self.recode = []          # per macro step k: sorted partial keys used to re-index (None = no re-indexing)
        self.bound = 1            # keys lie in [0, bound)
        self.table = None         # dense key -> feature lookup, built on first transform
        self.hash = None          # hashed key -> feature lookup (feature_columns(hashed=True))

    def compute_keys(self, atoms, radices, fitting, n):
        """Pack the macro values of every token into one int64 key; -1 where a value is unknown.

        Parameters
        ----------
        atoms : list of ndarray, each (N,) int64
            Value id of each macro at every token (-1 = value unseen in training).
        radices : list of int
            Number of possible ids of each macro.
        fitting : bool
            Build the re-indexing tables (training data) or use them (other data).
        n : int
            Number of tokens (a template without macros, a bias, has key 0 everywhere).
        """
        if not fitting and len(atoms) == 1 and (not self.recode or self.recode[0] is None):
            # one macro, no re-indexing: the key is the value id itself (already -1 where unknown)
            self.bound = radices[0]
            return atoms[0]
        key = np.zeros(n, dtype=np.int64)
        bad = np.zeros(n, dtype=bool)
        bound = 1
        if fitting:
            self.recode = []
        for k, (a, r) in enumerate(zip(atoms, radices)):
            table = None
            if bound * r >= _KEY_LIMIT:
                # re-index the partial combinations seen in training so the key space stays in int64
                if fitting:
                    table = np.unique(key[~bad])
                else:
                    table = self.recode[k]
                if table is not None:
                    pos = np.searchsorted(table, key)
                    pos_c = np.minimum(pos, max(table.shape[0] - 1, 0))
                    found = (pos < table.shape[0]) & (table[pos_c] == key) if table.shape[0] else \
                        np.zeros(n, dtype=bool)
                    bad |= ~found
                    key = np.where(found, pos_c, 0).astype(np.int64)
                    bound = max(table.shape[0], 1)
            if fitting:
                self.recode.append(table)
            bad |= a < 0
            key = key * r + np.where(a < 0, 0, a)
            bound *= r
        key[bad] = -1
        self.bound = bound
        return key

    def decode_keys(self, keys, radices):
        """Inverse of :meth:`compute_keys`: macro value ids (len(macros) arrays) of the given keys."""
        ids = [None] * len(self.macros)
        key = keys.astype(np.int64)
        for k in range(len(self.macros) - 1, -1, -1):
            key, ids[k] = np.divmod(key, radices[k])
            table = self.recode[k] if k < len(self.recode) else None
            if table is not None:
                key = table[key]
        return ids


# ----------------------------------------------------------------------------------------------------------------------
# extractor
# ----------------------------------------------------------------------------------------------------------------------

class TemplateExtractor:
    """Sparse input features from CRF++-style templates, one template group per unigram template.

    Parameters
    ----------
    templates : str or list of str
        A preset name (``"tp1"``, ``"tp2"``, ``"ner"``; see :data:`PRESETS`), a list of template lines, or the text
        of a CRF++ template file (blank lines and ``#`` comments skipped). Template ids must be unique.
    columns : list of str, optional
        Names of the token columns that ``%x[r,c]`` column index ``c`` refers to (keys of the sentence dicts).
        Default: the keys of the first training sentence, in order (for CoNLL token files: the columns in file order
        without the label column).
    min_count : int
        Keep only features seen at least this often in the training data (CRF++'s ``-f``).
    lexicons : dict str -> dict str -> str, optional
        Gazetteers or word clusters: ``{NAME: {word: value}}``. ``%x[r,c:NAME]`` is column ``c``'s value looked up
        in lexicon NAME — as written, else lower-cased, else ``"_"`` — so templates address it like any column
        (e.g. ``U50:%x[0,0:brown]``). Saved with the extractor (:func:`read_lexicon` reads one from a file).

    Attributes
    ----------
    n_features_ : int
        d, the number of input features.
    groups_ : ndarray, shape (d,), int
        Template index (into ``group_names_``) of every feature; features are ordered by template.
    group_names_ : list of str
        Ids of the unigram templates (e.g. ``"U02"``), in template order.
    feature_names_ : list of str
        CRF++ feature strings (e.g. ``"U08:el/perro"``), built on first access.
    has_transitions_ : bool
        Whether a plain ``B`` template is present (the chain map then adds K×K transition features).
    n_edge_features_ : int
        How many of the d input features come from bigram templates with macros (the last ones): the chain map
        conjoins them with the label pair instead of the label.
    columns_ : list of str
    """

    def __init__(self, templates, columns=None, min_count=1, lexicons=None):
        if not isinstance(min_count, (int, np.integer)) or min_count < 1:
            raise ParameterError(f"min_count must be an int >= 1; got {min_count!r}")
        self.lexicons = {}
        for name, table in (lexicons or {}).items():
            if not isinstance(name, str) or not re.fullmatch(r"[a-z0-9]+", name) or name in DERIVED:
                raise ParameterError(f"lexicon name {name!r} must be lower-case letters/digits and not one of the "
                                     f"derived columns ({', '.join(DERIVED)})")
            if not isinstance(table, dict):
                raise ParameterError(f"lexicon {name!r} must be a dict word -> value; got {type(table).__name__}")
            self.lexicons[name] = {str(k): str(v) for k, v in table.items()}
        self.templates = _read_templates(templates)
        if not self.templates:
            raise ParameterError("templates is empty; pass a preset name or at least one template line")
        self.columns = list(columns) if columns is not None else None
        self.min_count = int(min_count)
        parsed = [_Template(t, self.lexicons) for t in self.templates]
        # unigram templates first, then the bigram ones with macros: edge features are the last input columns
        self._feature_templates = [t for t in parsed if t.kind == "U"] + [t for t in parsed if t.kind == "B" and t.macros]
        bigram = [t for t in parsed if t.kind == "B" and not t.macros]
        names = [t.name for t in self._feature_templates]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ParameterError(f"template ids must be unique; {dup[0]!r} appears {names.count(dup[0])} times")
        self.has_transitions_ = bool(bigram)
        self._fitted = False
        self._feature_names = None
        self.label_names_ = None

    # -- data access ---------------------------------------------------------------------------------------------------

    @staticmethod
    def _sentences(data):
        return data.sentences if hasattr(data, "sentences") else data

    def _columns_used(self):
        """Column keys the templates read (base indices and derived ``"c:NAME"`` keys)."""
        return sorted({c for t in self._feature_templates for _, c in t.macros}, key=str)

    def _derived(self, ckey):
        """The function of a derived column key (``"c:NAME"``), None for a plain column index."""
        if not isinstance(ckey, str):
            return None
        name = ckey.split(":", 1)[1]
        if name in DERIVED:
            return DERIVED[name]
        table = self.lexicons[name]

        def look_up(w):
            v = table.get(w)
            return table.get(w.lower(), "_") if v is None else v
        return look_up

    def _ids(self, sentences, fitting):
        """Lengths (n_sent,) and the value id of every token in every used column (-1 = unseen in training).

        Each base column is read once into ids over its distinct values; a derived column is its function applied
        to those distinct values (not to every token), looked up in (or, when fitting, added to) its vocabulary.
        """
        lens, values = self._flat_columns(sentences, self._base_columns())
        return lens, self._ids_of_values(values, fitting)

    def _base_columns(self):
        return sorted({column_index(c) for c in self._columns_used()})

    def _ids_of_values(self, values, fitting):
        used = self._columns_used()
        ids = {}
        for b, vals in values.items():
            if not fitting:
                ids.update(self._memo_ids(b, vals))
                continue
            local = {}
            tok = np.fromiter((local.setdefault(v, len(local)) for v in vals), dtype=np.int64, count=len(vals))
            distinct = list(local)
            for ckey in used:
                if column_index(ckey) != b:
                    continue
                f = self._derived(ckey)
                derived = distinct if f is None else [f(v) for v in distinct]
                d = self._vocab.setdefault(ckey, {})
                lut = np.fromiter((d.setdefault(v, len(d)) for v in derived), dtype=np.int64, count=len(derived))
                ids[ckey] = lut[tok] if lut.shape[0] else np.zeros(0, np.int64)
        return ids

    # a value's ids in every column key derived from its base column are computed once and remembered (tagging
    # streams meet the same words again and again); the memo is emptied when it grows past this many values
    _MEMO_LIMIT = 2_000_000

    def _memo_ids(self, b, vals):
        """Ids of the tokens ``vals`` of base column ``b`` in each of its column keys: {ckey: (N,) int64}.

        The memo maps a value to a row of ``_memo_table[b]`` (its id in every key of column b); values not in it
        are computed (derived functions, vocabulary look-ups) once and appended.
        """
        memos = self.__dict__.setdefault("_memo", {})
        tables = self.__dict__.setdefault("_memo_table", {})
        row, keys = self.memo_rows(b, vals, memos, tables, self._MEMO_LIMIT)
        L = tables[b]
        return {c: L[row, j] for j, c in enumerate(keys)}

    def column_keys(self, b):
        """The column keys (plain ``b`` and derived ``"b:NAME"``) the templates read from base column ``b``, in the
        order of the memo tables' columns (:meth:`memo_rows`)."""
        return [c for c in self._columns_used() if column_index(c) == b]

    def memo_rows(self, b, vals, memos, tables, limit):
        """Row of every token's value of base column ``b`` in a memo table of its ids, new values appended.

        Parameters
        ----------
        b : int
            Base column index.
        vals : list of str, length N
        memos : dict int -> dict str -> int
            Per base column, value -> row; updated. Emptied (with its table) when it holds more than ``limit``
            values, so a stream of ever new words keeps bounded memory.
        tables : dict int -> ndarray of int64, shape (rows, len(column_keys(b)))
            Per base column, the value ids (-1 = unseen in training) of each memo row in every column key; rows
            are only appended, so a row index stays valid until the memo is emptied.
        limit : int

        Returns
        -------
        row : ndarray of int64, shape (N,)
        keys : list
            :meth:`column_keys` of ``b``: the meaning of the table's columns.
        """
        keys = self.column_keys(b)
        memo = memos.get(b)
        if memo is None or len(memo) > limit:
            memo = memos[b] = {}
            tables[b] = np.zeros((0, len(keys)), dtype=np.int64)
        n = len(vals)
        # map(dict.get, ...) runs the look-ups in C, without a Python frame per token
        row = np.fromiter(map(memo.get, vals, repeat(-1)), dtype=np.int64, count=n)
        miss = np.flatnonzero(row < 0)
        if miss.size:
            new = list(dict.fromkeys(vals[i] for i in miss.tolist()))
            cols = []
            for ckey in keys:
                f = self._derived(ckey)
                d = self._vocab[ckey]
                cols.append(np.fromiter((d.get(v if f is None else f(v), -1) for v in new), dtype=np.int64,
                                        count=len(new)))
            base = tables[b].shape[0]
            tables[b] = np.concatenate([tables[b], np.stack(cols, axis=1).reshape(len(new), len(keys))])
            memo.update(zip(new, range(base, base + len(new))))
            row[miss] = np.fromiter(map(memo.__getitem__, (vals[i] for i in miss.tolist())), dtype=np.int64,
                                    count=miss.size)
        return row, keys

    def transform_columns(self, values, lengths, dtype=np.float64):
        """Input features of many sentences at once, from their token columns flattened in corpus order.

        Parameters
        ----------
        values : dict int -> list of str
            For every base column index the templates read (see :meth:`base_columns`), the values of all tokens.
        lengths : ndarray of int, shape (n_sent,)

        Returns
        -------
        scipy.sparse.csr_matrix, shape (sum(lengths), d)
            The rows of :meth:`transform`'s matrices, stacked.
        """
        self._check_fitted()
        lens = np.asarray(lengths, dtype=np.int64)
        if lens.size and lens.min() < 1:
            raise DataError("empty sentence in the batch; every sentence needs at least one token")
        return self._stacked(lens, self._ids_of_values(values, fitting=False), dtype)

    def base_columns(self):
        """Indices of the columns (of ``columns_``) the templates read, plain or derived."""
        return self._base_columns()

    def _flat_columns(self, sentences, used):
        """Lengths (n_sent,) and, per base column index in ``used``, the list of all values in corpus order."""
        if len(sentences) == 0:
            raise DataError("no sentences given; pass at least one sentence")
        cols = self.columns_
        lens = np.empty(len(sentences), dtype=np.int64)
        for i, s in enumerate(sentences):
            if not isinstance(s, dict):
                raise DataError(f"sentence {i} is a {type(s).__name__}; pass dicts column name -> list of str")
            n = None
            for c in used:
                name = cols[c]
                if name not in s:
                    raise DataError(f"sentence {i} has no column {name!r} (columns {list(s)}); templates use column "
                                    f"index {c} = {name!r}")
                m = len(s[name])
                if n is not None and m != n:
                    raise DataError(f"sentence {i}: column {name!r} has {m} values but another column has {n}")
                n = m
            if n is None:
                n = len(next(iter(s.values()))) if s else 0
            if n == 0:
                raise DataError(f"sentence {i} is empty; drop empty sentences")
            lens[i] = n
        values = {c: [v for s in sentences for v in s[cols[c]]] for c in used}
        return lens, values

    def _atoms(self, lens, ids, fitting, which=None):
        """Feature key of every template (or of the templates ``which``, indices into the feature templates) at
        every token (-1 where a value is unknown): list of (N,) int64."""
        N = int(lens.sum())
        tok = np.arange(N)
        pos = tok - np.repeat(np.cumsum(lens) - lens, lens)
        n_of = np.repeat(lens, lens)
        K = self._K
        cache = {}   # templates share macros (the NER set has 14 distinct ones for 133 templates)
        shifts = {}  # per row offset r: source token, and the tokens whose row falls outside with their symbol

        def shift(r):
            if r not in shifts:
                q = pos + r
                out_at = np.flatnonzero((q < 0) | (q >= n_of))
                qo, no = q[out_at], n_of[out_at]
                # _B-k is id V + k - 1, _B+k is id V + K + k - 1 (k = how far outside the sentence): offsets from V
                shifts[r] = (np.clip(tok + r, 0, N - 1), out_at, np.where(qo < 0, -qo - 1, K + qo - no))
            return shifts[r]

        def atom(r, c):
            if (r, c) not in cache:
                src, out_at, sym = shift(r)
                a = ids[c][src]
                a[out_at] = self._vocab_size[c] + sym
                cache[r, c] = a
            return cache[r, c]

        out = []
        first = pos == 0
        for t in self._feature_templates if which is None else [self._feature_templates[j] for j in which]:
            atoms = [atom(r, c) for r, c in t.macros]
            radices = [self._vocab_size[c] + 2 * K for _, c in t.macros]
            keys = t.compute_keys(atoms, radices, fitting, N)
            if t.kind == "B":
                # CRF++ applies bigram templates from the second token on: the first has no label pair
                keys = np.where(first, -1, keys)
            out.append(keys)
        return out

    # -- fitting -------------------------------------------------------------------------------------------------------

    def fit(self, sentences):
        """Build the feature dictionary from training sentences only.

        Parameters
        ----------
        sentences : list of dict (column -> list of str) or TokenCorpus
            Training sentences.

        Returns
        -------
        self
        """
        if len(self._sentences(sentences)) == 0:
            raise DataError("no sentences given; pass at least one training sentence")
        if self.columns is not None:
            self.columns_ = list(self.columns)
        else:
            self.columns_ = list(getattr(sentences, "columns", None) or sentences[0].keys())
        for t in self._feature_templates:
            for r, c in t.macros:
                if column_index(c) >= len(self.columns_):
                    raise ParameterError(f"template {t.line!r} uses column {c} but there are only "
                                         f"{len(self.columns_)} columns {self.columns_}; pass columns= or fix it")
        sentences = self._sentences(sentences)
        self._K = max([abs(r) for t in self._feature_templates for r, _ in t.macros] + [1])
        self._vocab = {}
        lens, ids = self._ids(sentences, fitting=True)
        self._vocab_list = {c: list(d) for c, d in self._vocab.items()}
        self._vocab_size = {c: len(d) for c, d in self._vocab.items()}
        keys = self._atoms(lens, ids, fitting=True)
        offsets = [0]
        for t, k in zip(self._feature_templates, keys):
            u, cnt = np.unique(k[k >= 0], return_counts=True)
            keep = cnt >= self.min_count
            t.keys, t.counts = u[keep], cnt[keep]
            t.table = t.hash = None
            offsets.append(offsets[-1] + t.keys.shape[0])
        self._set_sizes(offsets)
        self._feature_names = None
        self._fitted = True
        return self

    def _set_sizes(self, offsets):
        """Feature offsets of the templates (len(templates) + 1,) → ``n_features_``, ``n_edge_features_``,
        ``groups_``, ``group_names_``."""
        self._offsets = np.asarray(offsets, dtype=np.int64)
        self.n_features_ = int(self._offsets[-1])
        sizes = np.diff(self._offsets)
        self.n_edge_features_ = int(sum(n for t, n in zip(self._feature_templates, sizes) if t.kind == "B"))
        self.groups_ = np.repeat(np.arange(len(self._feature_templates)), sizes).astype(np.int64)
        self.group_names_ = [t.name for t in self._feature_templates]

    def _check_fitted(self):
        if not self._fitted:
            raise ParameterError("this TemplateExtractor is not fitted; call fit(training_sentences) first")

    # -- transforming --------------------------------------------------------------------------------------------------

    def transform(self, sentences, dtype=np.float64):
        """Input features of each sentence; strings unseen in training are dropped.

        Parameters
        ----------
        sentences : list of dict (column -> list of str) or TokenCorpus
        dtype : numpy dtype
            Dtype of the stored ones.

        Returns
        -------
        list of scipy.sparse.csr_matrix, each (T_i, d)
            Binary; row t has at most one 1 per unigram template, columns in template order. The matrices are views
            of one stacked CSR matrix.
        """
        self._check_fitted()
        sentences = self._sentences(sentences)
        lens, ids = self._ids(sentences, fitting=False)
        X = self._stacked(lens, ids, dtype)
        bounds = np.concatenate([[0], np.cumsum(lens)])
        # views of X, not copies: the chain map's prepare stacks them back into X (features.base.stacked_view)
        return [csr_rows(X, a, b) for a, b in zip(bounds[:-1], bounds[1:])]

    def _stacked(self, lens, ids, dtype):
        keys = self._atoms(lens, ids, fitting=False)
        N = int(lens.sum())
        cols = self.feature_columns(keys, range(len(self._feature_templates)), N)
        mask = cols >= 0
        # boolean indexing walks in row-major order whatever the layout, and template offsets increase with j, so
        # each row's columns come out sorted: no sort needed
        indices = cols[mask]
        indptr = np.concatenate([[0], np.cumsum(mask.sum(axis=1))]).astype(indices.dtype)
        data = np.ones(indices.shape[0], dtype=dtype)
        return sp.csr_matrix((data, indices, indptr), shape=(N, self.n_features_))

    def feature_columns(self, keys, which, n, hashed=False):
        """Input feature index of the templates ``which`` at every token, from their keys.

        Parameters
        ----------
        keys : list of ndarray of int64, each (n,)
            Keys of the templates ``which``, in that order (from :meth:`_atoms` or :meth:`_Template.compute_keys`;
            -1 = a value unseen in training).
        which : sequence of int
            Indices into the feature templates.
        n : int
        hashed : bool
            Look keys of large key spaces up in a hash table built on first use and kept on the template
            (:func:`~mmprog.features.template_kernels.key_hash_build`: about 32 bytes a feature) instead of a
            binary search: for the tagger, which transforms again and again.

        Returns
        -------
        ndarray of int32 (int64 past 2³¹ features), shape (n, len(which)), Fortran order
            -1 where the template has no feature for the token.
        """
        # Fortran order: each template fills one contiguous column
        cols = np.full((n, len(which)), -1, dtype=np.int64 if self.n_features_ >= 2**31 else np.int32, order="F")
        for i, (j, k) in enumerate(zip(which, keys)):
            t = self._feature_templates[j]
            d_j = t.keys.shape[0]
            if d_j == 0:
                continue
            table = t.table
            if table is None and t.bound <= _TABLE_LIMIT:
                # small key space: a dense lookup table beats binary search; built once and kept (tagging calls
                # transform again and again)
                table = np.full(t.bound + 1, -1, dtype=cols.dtype)
                table[t.keys] = np.arange(d_j) + self._offsets[j]
                t.table = table
            if table is not None:
                cols[:, i] = table[k]        # k = -1 reads table[-1] = -1
            elif hashed:
                if t.hash is None:
                    t.hash = key_hash_build(t.keys)
                key_hash_find(*t.hash, k, self._offsets[j], cols[:, i])
            elif t.bound <= 4 * n:
                table = np.full(t.bound + 1, -1, dtype=cols.dtype)
                table[t.keys] = np.arange(d_j) + self._offsets[j]
                cols[:, i] = table[k]
            else:
                pos = np.minimum(np.searchsorted(t.keys, k), d_j - 1)
                found = (k >= 0) & (t.keys[pos] == k)
                cols[found, i] = pos[found] + self._offsets[j]
        return cols

    def fit_transform(self, sentences, dtype=np.float64):
        """:meth:`fit` then :meth:`transform` on the same sentences."""
        return self.fit(sentences).transform(sentences, dtype=dtype)

    def to_dataset(self, corpus, label_names=None, unknown="error", name=None, dtype=np.float64):
        """A :class:`mmprog.datasets.SequenceDataset` from a token corpus (fits on it first if not fitted).

        Parameters
        ----------
        corpus : TokenCorpus
            With ``.sentences`` (list of dict column -> list of str) and ``.labels`` (list of list of str).
        label_names : list of str, optional
            Label of each class index. Default: the names used by the previous ``to_dataset`` call, else the sorted
            labels of this corpus — so convert the training corpus first and the test corpora after it.
        unknown : {"error", "hide"} or str
            What to do with a label missing from ``label_names`` (see ``TokenCorpus.to_sequence_dataset``).
        name : str, optional
            Dataset name (default: the corpus name).
        dtype : numpy float dtype
            Dtype of the stored ones (:meth:`transform`). The chain map reads binary features from their indices
            alone (:mod:`mmprog.features._binary`), so float32 halves the value array at no cost to the fit
            (140 MB on full CoNLL-2002 NER).

        Returns
        -------
        SequenceDataset
            X from :meth:`transform`, Y as int arrays, ``groups=groups_``, ``group_names=group_names_``;
            ``info["templates"]`` holds :meth:`describe`, ``info["has_transitions"]`` whether a plain B template
            was given and ``info["n_edge_features"]`` ``n_edge_features_`` (read by the chain map).
        """
        if not self._fitted:
            self.fit(corpus)
        X = self.transform(corpus, dtype=dtype)
        if label_names is None and self.label_names_ is not None:
            label_names = self.label_names_
        ds = corpus.to_sequence_dataset(X, label_names=label_names, groups=self.groups_,
                                        group_names=self.group_names_, name=name, unknown=unknown)
        self.label_names_ = list(ds.label_names)
        ds.info["templates"] = self.describe()
        ds.info["has_transitions"] = self.has_transitions_
        ds.info["n_edge_features"] = self.n_edge_features_
        return ds

    # -- names and persistence -----------------------------------------------------------------------------------------

    @property
    def feature_names_(self) -> list[str]:
        self._check_fitted()
        if self._feature_names is None:
            K = self._K
            symbols = {c: np.array(self._vocab_list[c] + [f"_B-{k}" for k in range(1, K + 1)]
                                   + [f"_B+{k}" for k in range(1, K + 1)], dtype=object)
                       for c in self._vocab_list}
            names = []
            for t in self._feature_templates:
                radices = [self._vocab_size[c] + 2 * K for _, c in t.macros]
                ids = t.decode_keys(t.keys, radices)
                # object-array concatenation: one C loop per piece instead of a Python loop per feature
                s = np.full(t.keys.shape[0], t.pieces[0], dtype=object)
                for k, (_, c) in enumerate(t.macros):
                    s = s + symbols[c][ids[k]] + t.pieces[k + 1]
                names.extend(s.tolist())
            self._feature_names = names
        return self._feature_names

    def feature_counts(self) -> np.ndarray:
        """Training count of every feature, shape (d,)."""
        self._check_fitted()
        return np.concatenate([t.counts for t in self._feature_templates]) if self._feature_templates else np.zeros(0, np.int64)

    def describe(self) -> dict:
        """JSON-able summary: templates, columns, min_count, sizes per template."""
        d = {"type": "crfpp_templates", "templates": list(self.templates), "columns": self.columns,
             "min_count": self.min_count, "has_transitions": self.has_transitions_,
             "lexicons": {n: len(t) for n, t in self.lexicons.items()}}
        if self._fitted:
            d.update(columns_=self.columns_, n_features=self.n_features_, n_edge_features=self.n_edge_features_,
                     group_names=self.group_names_,
                     group_sizes=np.diff(self._offsets).tolist())
        return d

    def to_state(self):
        """(json_dict, arrays_dict) from which :meth:`from_state` rebuilds the fitted extractor (no pickle)."""
        self._check_fitted()
        js = self.describe()
        js["K"] = self._K
        js["label_names"] = self.label_names_
        arrays = {}
        for c in self._vocab_list:
            arrays[f"vocab_{_array_name(c)}"] = np.array(self._vocab_list[c], dtype=str)
        for n, t in self.lexicons.items():
            arrays[f"lexicon_{n}_words"] = np.array(list(t), dtype=str)
            arrays[f"lexicon_{n}_values"] = np.array(list(t.values()), dtype=str)
        for j, t in enumerate(self._feature_templates):
            arrays[f"keys_{j}"] = t.keys
            arrays[f"counts_{j}"] = t.counts
            for k, table in enumerate(t.recode):
                if table is not None:
                    arrays[f"recode_{j}_{k}"] = table
        return js, arrays

    @classmethod
    def from_state(cls, js, arrays):
        """Rebuild a fitted extractor from :meth:`to_state` output (e.g. read back from JSON + .npz)."""
        try:
            lex = {n: dict(zip((str(w) for w in arrays[f"lexicon_{n}_words"]),
                               (str(v) for v in arrays[f"lexicon_{n}_values"])))
                   for n in js.get("lexicons") or {}}
            ex = cls(js["templates"], columns=js["columns"], min_count=js["min_count"], lexicons=lex)
            ex.columns_ = list(js["columns_"])
            ex._K = int(js["K"])
            ex._vocab_list, ex._vocab = {}, {}
            for c in ex._columns_used():
                vals = [str(v) for v in arrays[f"vocab_{_array_name(c)}"]]
                ex._vocab_list[c] = vals
                ex._vocab[c] = {v: k for k, v in enumerate(vals)}
            ex._vocab_size = {c: len(v) for c, v in ex._vocab_list.items()}
            offsets = [0]
            for j, t in enumerate(ex._feature_templates):
                t.keys = np.asarray(arrays[f"keys_{j}"], dtype=np.int64)
                t.counts = np.asarray(arrays[f"counts_{j}"], dtype=np.int64)
                t.recode = [np.asarray(arrays[f"recode_{j}_{k}"], dtype=np.int64) if f"recode_{j}_{k}" in arrays
                            else None for k in range(len(t.macros))]
                offsets.append(offsets[-1] + t.keys.shape[0])
        except KeyError as e:
            raise ModelFileError(f"template extractor state lacks field {e.args[0]!r}; save it with to_state()") \
                from None
        ex._set_sizes(offsets)
        ex.label_names_ = js.get("label_names")
        ex._fitted = True
        return ex
