"""First-order (arc-factored) dependency-parsing features in the style of MSTParser.

The joint feature map of a tree y is the sum of the feature vectors of its arcs, f(x, y) = Σ_{m≥1} f(x, y_m → m), so
wᵀf(x, y) = Σ_m s[y_m, m] with arc scores s[h, m] = wᵀf(x, h → m). Decoding is a maximum spanning arborescence
(Chu-Liu-Edmonds) or, with ``projective=True``, Eisner's algorithm; the loss is the number of words with a wrong head
(Mao & Tsang, section 3.1, following McDonald et al. 2005).

Templates (McDonald, Crammer & Pereira, "Online large-margin training of dependency parsers", ACL 2005, Table 1;
Mao & Tsang section 3.4). A template is written as atoms joined by ``/``, optionally followed by ``|dd``:

* ``h`` (head) or ``m`` (modifier), then a field — ``w`` form, ``p`` POS (CoNLL-U XPOS), ``c`` coarse POS (UPOS),
  ``l`` lemma, ``s`` the XPOS's first ``|`` segment (``NN`` of ``NN|UTR|SIN|DEF|NOM``), ``f`` the FEATS bundle as
  one value, ``x`` the form's first 5 characters (MSTParser's back-off for long words) — then an optional offset:
  ``hw`` head form, ``mp`` modifier POS, ``hp+1`` POS of the word right of the head, ``mp-1`` POS of the word left
  of the modifier;
* ``b`` + field: a word strictly between head and modifier — ``hp/bp/mp`` fires once for every word in between
  (so its value counts how many in-between words have each tag); ``b`` + field + ``+k`` is the k-th word from
  the head towards the modifier, one template per relative position as Mao & Tsang count them (``hp/bp+2/mp``
  fires once, on arcs spanning at least two in-between words);
* ``|dd`` conjoins the template with the attachment direction (head left or right of the modifier) and the distance
  |h − m| bucketed as 1, 2, 3, 4, 5–9, 10+.

The root is token 0 with value ``<root>`` in every field; neighbours outside the sentence are ``STR`` (left of the
root) and ``END`` (right of the last word), as in MSTParser. Each template is one template group (Mao & Tsang's
multiple-template learning weights them).

The default set ``"mcdonald05"`` is Table 1 of McDonald et al.: unigram (hw/hp, hw, hp, mw/mp, mw, mp), bigram
(hw/hp/mw/mp, hp/mw/mp, hw/mw/mp, hw/hp/mp, hw/hp/mw, hw/mw, hp/mp), in-between POS (hp/bp/mp) and surrounding POS
(hp/hp+1/mp-1/mp, hp-1/hp/mp-1/mp, hp/hp+1/mp/mp+1, hp-1/hp/mp/mp+1) — 18 templates, each once plain and once
conjoined with direction and distance, as MSTParser adds both: 36 groups. ``"mcdonald05+cpos"`` adds the POS-only
templates over the coarse tag as well (52 groups). Mao & Tsang report 568 (Danish) and 612 (Swedish) templates:
they count CPOS/POS variants and every relative position of the in-between word as separate templates; mmprog
keeps Table 1's templates (each relative position is folded into one in-between template).

``"mst-ud"`` is MSTParser's first-order set for a UD/CoNLL-X file: the POS-only templates (unigrams, bigram,
in-between trigram folded and at relative positions 1–3, the four surrounding 4-grams) over UPOS and over the XPOS's
first segment, Table 1's word templates over the form, its 5-character prefix and the lemma, each paired with both
POS fields, the full XPOS in unigram/bigram templates and the FEATS bundle beside UPOS: 81 templates, 162 groups
with direction/distance. Templates that read a column which is ``_`` throughout the training file (the lemma of
the Talbanken v1.0 files) are left out at :meth:`ArcFeatureMap.fit` (``dropped_templates``).

Features are identified by int64 keys (template values packed in mixed radix over the field vocabularies, then the
direction-distance code), never by strings; the dictionary of a template is its sorted key array, built from the
gold arcs of the training data (MSTParser's choice) or from all arcs.
"""
from __future__ import annotations

import re

import numpy as np
import scipy.sparse as sp

from ..exceptions import DataError, ModelFileError, ParameterError
from .base import Prepared

__all__ = ["ArcFeatureMap", "ARC_PRESETS", "distance_bucket", "resolve_templates"]

# field letter -> (column, derivation); the derived fields are computed from a column when sentences are encoded
_FIELDS = {"w": "form", "p": "pos", "c": "cpos", "l": "lemma", "s": "pos", "f": "feats", "x": "form"}
_DERIVED = {
    # the XPOS's first segment: "NN" of the SUC tag "NN|UTR|SIN|DEF|NOM" (a tag without "|" is itself)
    "s": lambda v: v.split("|", 1)[0],
    # MSTParser's 5-character prefix, its back-off for long (rare) words; shorter words are themselves
    "x": lambda v: v[:5],
}
_ATOM = re.compile(r"^([hmb])([wpclsfx])([+-]\d+)?$")
# value ids of the special symbols in every field; real values start at _N_SPECIAL
_ROOT, _STR, _END = 0, 1, 2
_SPECIAL = ("<root>", "STR", "END")
# their dictionary entries: a NUL prefix keeps them apart from any token string
_SPECIAL_KEYS = tuple("\0" + s for s in _SPECIAL)
_N_SPECIAL = 3
_N_DD = 12                  # 2 directions × 6 distance buckets
_KEY_LIMIT = 1 << 62
_DIST_NAMES = ("1", "2", "3", "4", "5-9", "10+")

_MCDONALD05 = ["hw/hp", "hw", "hp", "mw/mp", "mw", "mp",
               "hw/hp/mw/mp", "hp/mw/mp", "hw/mw/mp", "hw/hp/mp", "hw/hp/mw", "hw/mw", "hp/mp",
               "hp/bp/mp",
               "hp/hp+1/mp-1/mp", "hp-1/hp/mp-1/mp", "hp/hp+1/mp/mp+1", "hp-1/hp/mp/mp+1"]
_CPOS_EXTRA = ["hc", "mc", "hc/mc", "hc/bc/mc",
               "hc/hc+1/mc-1/mc", "hc-1/hc/mc-1/mc", "hc/hc+1/mc/mc+1", "hc-1/hc/mc/mc+1"]


def _with_dd(base):
    return [t for b in base for t in (b, b + "|dd")]


def _mst_pos(P, positions=3):
    """MSTParser's POS-only templates over the POS field P: unigrams, the bigram, the in-between trigram (folded
    over the words between, and once per relative position 1..positions as Mao & Tsang count them) and the four
    surrounding-POS 4-grams."""
    return ([f"h{P}", f"m{P}", f"h{P}/m{P}", f"h{P}/b{P}/m{P}"]
            + [f"h{P}/b{P}+{k}/m{P}" for k in range(1, positions + 1)]
            + [f"h{P}/h{P}+1/m{P}-1/m{P}", f"h{P}-1/h{P}/m{P}-1/m{P}", f"h{P}/h{P}+1/m{P}/m{P}+1",
               f"h{P}-1/h{P}/m{P}/m{P}+1"])


def _mst_word(W, P):
    """McDonald et al.'s word templates with word field W (form, 5-character prefix or lemma) and POS field P."""
    return [f"h{W}/h{P}", f"m{W}/m{P}", f"h{W}/h{P}/m{W}/m{P}", f"h{P}/m{W}/m{P}", f"h{W}/m{W}/m{P}",
            f"h{W}/h{P}/m{P}", f"h{W}/h{P}/m{W}"]


def _dedupe(ts):
    return list(dict.fromkeys(ts))


# MSTParser's first-order set over a UD file: POS templates over UPOS (c) and the XPOS's first segment (s), word
# templates over the form (w), its 5-character prefix (x) and the lemma (l, dropped when the file has none), the
# full XPOS (p) and the FEATS bundle (f) in unigram/bigram templates
_MST_UD = _dedupe(
    _mst_pos("c") + _mst_pos("s")
    + [t for W in "wxl" for t in [f"h{W}", f"m{W}", f"h{W}/m{W}"] + _mst_word(W, "c") + _mst_word(W, "s")]
    + ["hp", "mp", "hp/mp", "hw/hp", "mw/mp"]
    + ["hc/hf", "mc/mf", "hc/hf/mc/mf"])


#: Named arc template sets (see the module docstring).
ARC_PRESETS: dict[str, list[str]] = {
    "mcdonald05": _with_dd(_MCDONALD05),
    "mcdonald05+cpos": _with_dd(_MCDONALD05 + _CPOS_EXTRA),
    "mst-ud": _with_dd(_MST_UD),
}


def resolve_templates(templates, presets, default):
    """(preset name or None, template list) of a ``templates`` argument: None (the default preset), a preset name,
    or a list of specs."""
    if templates is None:
        templates = default
    if isinstance(templates, str):
        if templates not in presets:
            raise ParameterError(f"templates {templates!r} is not one of {sorted(presets)}; or pass a list of arc "
                                 f"template specs like 'hp/mp|dd'")
        return templates, presets[templates]
    return None, templates


def distance_bucket(d):
    """MSTParser-style distance bucket of |h − m|: 1, 2, 3, 4 → 0..3; 5–9 → 4; 10 and more → 5 (int array)."""
    d = np.asarray(d)
    return np.where(d <= 4, d - 1, np.where(d < 10, 4, 5)).astype(np.int64)


class _ArcTemplate:
    """A parsed arc template: atoms (who, field letter, offset) and whether it is conjoined with direction/distance."""

    def __init__(self, spec):
        self.spec = str(spec).strip()
        body, sep, conj = self.spec.partition("|")
        if sep and conj != "dd":
            raise ParameterError(f"arc template {spec!r}: only the suffix '|dd' (direction and distance) is known")
        self.dd = bool(sep)
        self.atoms = []
        for a in body.split("/"):
            m = _ATOM.match(a.strip())
            if not m:
                raise ParameterError(f"arc template {spec!r}: atom {a!r} is not h|m|b + w|p|c|l + optional offset "
                                     f"(e.g. hw, mp, hp+1, bp)")
            who, f, off = m.group(1), m.group(2), int(m.group(3) or 0)
            if who == "b" and off:
                if off < 1:
                    raise ParameterError(f"arc template {spec!r}: the in-between atom {a!r} takes a positive "
                                         f"relative position (bp+1 is the word next to the head towards "
                                         f"the modifier)")
                # one relative position: a plain atom that fires only when the arc spans more than off words
                who = "r"
            self.atoms.append((who, f, off))
        if sum(a[0] == "b" for a in self.atoms) > 1:
            raise ParameterError(f"arc template {spec!r}: at most one in-between (b) atom per template")
        self.between = any(a[0] == "b" for a in self.atoms)
        self.bound = 1          # keys lie in [0, bound); set when keys are computed


def _lookup(keys_sorted, k, bound):
    """Positions of keys k (in [0, bound), or -1 for 'no key') in a sorted key array, -1 where absent."""
    d = keys_sorted.shape[0]
    if d == 0:
        return np.full(k.shape[0], -1, dtype=np.int64)
    if bound <= max(1 << 25, 2 * k.shape[0]):
        # small key space: a dense table beats binary search (its last slot answers k = -1)
        table = np.full(bound + 1, -1, dtype=np.int32 if d < 2**31 else np.int64)
        table[keys_sorted] = np.arange(d)
        return table[k]
    pos = np.minimum(np.searchsorted(keys_sorted, k), d - 1)
    return np.where((k >= 0) & (keys_sorted[pos] == k), pos, -1)


class _ArcContext:
    """Arcs of a batch of sentences with cached atom values and direction/distance codes (templates share them)."""

    def __init__(self, arcs, ids, with_between):
        self.arcs = arcs
        self.ids = ids
        self._cache = {}
        self.between = None
        if with_between:
            lo = np.minimum(arcs["h"], arcs["m"])
            c = np.maximum(np.abs(arcs["h"] - arcs["m"]) - 1, 0)
            sel = np.repeat(np.arange(lo.shape[0]), c)
            first = np.repeat(np.cumsum(c) - c, c)
            self.between = (sel, np.repeat(lo + 1, c) + (np.arange(sel.shape[0]) - first))

    def _field(self, side, name):
        if side == "arcs":
            return self.arcs[name]
        if (side, name) not in self._cache:
            self._cache[side, name] = self.arcs[name][self.between[0]]
        return self._cache[side, name]

    def atom(self, side, who, f, off):
        """Value ids (-1 unknown) of atom (who, f, off) at every arc (side="arcs") or in-between pair."""
        k = (side, who, f, off)
        if k not in self._cache:
            if who == "b":
                q = self.between[1]
                a = self.ids[f][self._field(side, "base") + q]
            elif who == "r":
                # the off-th word from the head towards the modifier; -1 (no feature) when the arc is too short
                h, m = self._field(side, "h"), self._field(side, "m")
                q = h + off * np.sign(m - h)
                inside = off < np.abs(m - h)
                a = np.full(q.shape[0], -1, dtype=np.int64)
                a[inside] = self.ids[f][self._field(side, "base")[inside] + q[inside]]
            else:
                q = self._field(side, who) + off if off else self._field(side, who)
                n = self._field(side, "n")
                base = self._field(side, "base")
                if off == 0:
                    a = self.ids[f][base + q]
                else:
                    inside = (q >= 0) & (q <= n)
                    a = np.full(q.shape[0], _END, dtype=np.int64)
                    a[q < 0] = _STR
                    a[inside] = self.ids[f][base[inside] + q[inside]]
            self._cache[k] = a
        return self._cache[k]

    def dd(self, side):
        """Direction × distance-bucket code (0..11) of every arc or in-between pair."""
        k = (side, "dd")
        if k not in self._cache:
            h, m = self._field(side, "h"), self._field(side, "m")
            self._cache[k] = (h > m) * 6 + distance_bucket(np.abs(h - m))
        return self._cache[k]


class ArcFeatureMap:
    """First-order MSTParser-style arc features as a joint feature map for :class:`TreeDataset` (see module doc).

    Parameters
    ----------
    templates : str or list of str, optional
        A key of :data:`ARC_PRESETS` (default ``"mcdonald05"``) or a list of template specs such as ``"hp/mp|dd"``.
    min_count : int
        Keep features seen at least this often when fitting.
    projective : bool
        Decode with Eisner's algorithm (projective trees) instead of Chu-Liu-Edmonds.

    Attributes
    ----------
    dim : int
        Number of joint features (set by :meth:`fit`, as the attributes below).
    groups : ndarray of int64, shape (dim,)
        Template index of every feature (features are ordered by template).
    group_names : list of str
        The template specs.
    """

    kind = "arcs"

    def __init__(self, templates=None, min_count=1, projective=False):
        self.preset, templates = resolve_templates(templates, ARC_PRESETS, "mcdonald05")
        self.templates = [str(t).strip() for t in templates]
        if not self.templates:
            raise ParameterError("templates is empty; pass a preset name or at least one template spec")
        if len(set(self.templates)) != len(self.templates):
            dup = next(t for t in self.templates if self.templates.count(t) > 1)
            raise ParameterError(f"arc template {dup!r} appears twice; template specs must be unique")
        self._parsed = [_ArcTemplate(t) for t in self.templates]
        if not isinstance(min_count, (int, np.integer)) or min_count < 1:
            raise ParameterError(f"min_count must be an int >= 1; got {min_count!r}")
        self.min_count = int(min_count)
        self.projective = bool(projective)
        self.fields = sorted({f for t in self._parsed for _, f, _ in t.atoms})
        self._fitted = False

    # ------------------------------------------------------------------ token encoding
    def _encode(self, dataset, fitting):
        """Flattened value ids per field with a root slot before every sentence.

        Returns
        -------
        lengths : (S,) int64, base : (S,) int64 (slot of each sentence's root), ids : dict field -> (sum(n+1),)
        """
        sents = dataset.sentences
        lengths = np.asarray([len(s["form"]) for s in sents], dtype=np.int64)
        base = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int64)
        ids = {}
        for f in self.fields:
            col = _FIELDS[f]
            for i, s in enumerate(sents):
                if col not in s:
                    raise DataError(f"sentence {i} has no column {col!r} (columns {sorted(s)}); arc templates use "
                                    f"field {f!r} = {col!r}")
            vals = [v for s in sents for v in (_SPECIAL_KEYS[_ROOT], *s[col])]
            if f in _DERIVED:
                g = _DERIVED[f]
                vals = [v if v.startswith("\0") else g(v) for v in vals]
            if fitting:
                d = {key: k for k, key in enumerate(_SPECIAL_KEYS)}
                arr = np.fromiter((d.setdefault(v, len(d)) for v in vals), dtype=np.int64, count=len(vals))
                self._vocab[f] = d
            else:
                d = self._vocab[f]
                arr = np.fromiter((d.get(v, -1) for v in vals), dtype=np.int64, count=len(vals))
            ids[f] = arr
        return lengths, base, ids

    def encode(self, dataset):
        """Value ids of the fitted fields, a root slot before every sentence (what templates over other parts —
        :mod:`mmprog.features.siblings` — read).

        Returns
        -------
        lengths : ndarray (S,) int64
        base : ndarray (S,) int64
            Slot of each sentence's root; token m of sentence i is slot ``base[i] + m``.
        ids : dict field letter -> ndarray (Σ(n_i+1),) int64
            Value ids, -1 for a value not seen in training; ids < 3 are ``<root>``, ``STR``, ``END``.
        """
        self._check_fitted()
        return self._encode(dataset, fitting=False)

    def vocabulary_size(self, f):
        """Number of value ids of field ``f`` (the three special symbols included)."""
        self._check_fitted()
        return self._radix[f]

    def value_name(self, f, a):
        """The string of value id ``a`` of field ``f``."""
        return self._value_name(f, a)

    # ------------------------------------------------------------------ keys of arcs
    def _keys(self, t, ctx):
        """Feature keys (int64, -1 = unknown value) of template t for every arc of ``ctx`` — or, for a template with
        an in-between atom, for every (arc, in-between word) pair of ``ctx``."""
        side = "between" if t.between else "arcs"
        key = None
        bad = None
        for who, f, off in t.atoms:
            a = ctx.atom(side, who, f, off)
            r = self._radix[f]
            key = np.maximum(a, 0) if key is None else key * r + np.maximum(a, 0)
            bad = (a < 0) if bad is None else bad | (a < 0)
        if t.dd:
            key = key * _N_DD + ctx.dd(side)
        bound = self._key_bound(t)
        if bound >= _KEY_LIMIT:
            raise ParameterError(f"arc template {t.spec!r} combines too many large vocabularies for 63-bit keys "
                                 f"(bound {bound}); split it into smaller templates")
        t.bound = bound
        if bad.any():
            key[bad] = -1
        return key

    def _key_bound(self, t):
        """Keys of template t lie in [0, bound): the product of its atoms' vocabulary sizes (times the distance
        codes)."""
        bound = 1
        for _, f, _ in t.atoms:
            bound *= self._radix[f]
        return bound * _N_DD if t.dd else bound

    def tree_arc_matrix(self, dataset, heads=None):
        """Feature rows of the arcs of given trees only, f(x_i, heads_i[m] → m) for m = 1..n_i.

        Parameters
        ----------
        dataset : TreeDataset
        heads : list of int arrays, each (n_i,), optional
            Heads of tokens 1..n_i (0 = root); default the dataset's own.

        Returns
        -------
        scipy.sparse.csr_matrix, shape (Σ n_i, dim)
            Row offsets[i] + m − 1 is the arc into token m of sentence i.
        """
        self._check_fitted()
        lengths, base, ids = self._encode(dataset, fitting=False)
        heads = dataset.heads if heads is None else heads
        sent = np.repeat(np.arange(len(lengths)), lengths)
        m = np.arange(sent.shape[0]) - np.repeat(np.cumsum(lengths) - lengths, lengths) + 1
        h = np.concatenate([np.asarray(hh, dtype=np.int64) for hh in heads]) if len(heads) else m[:0]
        if h.shape != m.shape:
            raise DataError(f"heads hold {h.shape[0]} tokens but the sentences {m.shape[0]}; pass one head per token")
        arcs = {"h": h, "m": m, "n": lengths[sent], "base": base[sent]}
        ctx = _ArcContext(arcs, ids, any(t.between for t in self._parsed))
        return self._chunk_matrix(ctx, np.arange(m.shape[0]), m.shape[0])

    @staticmethod
    def _all_arcs(lengths, base, sent_ids):
        """Every arc h → m (h in 0..n, m in 1..n, h ≠ m) of the given sentences, with its row h·(n+1)+m."""
        n = lengths[sent_ids]
        per = (n + 1) * (n + 1)
        tot = int(per.sum())
        s_rep = np.repeat(np.arange(len(sent_ids)), per)
        local = np.arange(tot) - np.repeat(np.cumsum(per) - per, per)
        n_rep = np.repeat(n, per)
        h, m = np.divmod(local, n_rep + 1)
        keep = (m >= 1) & (h != m)
        return {"h": h[keep], "m": m[keep], "n": n_rep[keep], "base": base[sent_ids][s_rep[keep]],
                "sent": s_rep[keep], "row": local[keep]}

    # ------------------------------------------------------------------ fitting
    def fit(self, dataset, all_arcs=False, heads=None):
        """Build the feature dictionary from training trees.

        Parameters
        ----------
        dataset : TreeDataset
            Training sentences with gold heads.
        all_arcs : bool
            Count features of every possible arc instead of only the gold arcs (MSTParser uses the gold arcs).
        heads : list of int arrays, each (n_i,), optional
            Count the features of these pairs h_m → m instead of the gold arcs: any token in 0..n_i per token, not
            necessarily a tree (the labeller's context views pair a token with its grandparent or a dependent,
            :mod:`mmprog.features.arc_labels`).

        Returns
        -------
        self
        """
        if len(dataset) == 0:
            raise DataError("the training dataset is empty; pass at least one sentence")
        self._drop_absent_fields(dataset)
        self._vocab = {}
        lengths, base, ids = self._encode(dataset, fitting=True)
        self._radix = {f: len(self._vocab[f]) for f in self.fields}
        if all_arcs:
            arcs = self._all_arcs(lengths, base, np.arange(len(lengths)))
        else:
            m = np.concatenate([np.arange(1, n + 1) for n in lengths])
            sent = np.repeat(np.arange(len(lengths)), lengths)
            h = np.concatenate([np.asarray(hh, dtype=np.int64) for hh in (dataset.heads if heads is None else heads)])
            if h.shape != m.shape:
                raise DataError(f"heads hold {h.shape[0]} tokens but the sentences {m.shape[0]}; pass one head per "
                                f"token")
            arcs = {"h": h, "m": m, "n": lengths[sent], "base": base[sent]}
        ctx = _ArcContext(arcs, ids, any(t.between for t in self._parsed))
        self._keys_of, self._counts_of = [], []
        for t in self._parsed:
            k = self._keys(t, ctx)
            u, c = np.unique(k[k >= 0], return_counts=True)
            keep = c >= self.min_count
            self._keys_of.append(u[keep])
            self._counts_of.append(c[keep])
        self._finish()
        return self

    def _drop_absent_fields(self, dataset):
        """Leave out the templates that read a column the training file does not fill (every value ``_``, e.g. the
        lemma of the Talbanken v1.0 files): they would each add one constant feature. Recorded in
        ``dropped_templates``."""
        absent = set()
        for f in self.fields:
            col = _FIELDS[f]
            if all(col in s for s in dataset.sentences) and \
                    all(v == "_" for s in dataset.sentences for v in s[col]):
                absent.add(f)
        keep = [j for j, t in enumerate(self._parsed) if not any(a[1] in absent for a in t.atoms)]
        if not keep:
            raise DataError(f"every arc template reads a column that is '_' throughout the training data "
                            f"({sorted(_FIELDS[f] for f in absent)}); choose templates over filled columns")
        self.dropped_templates = [t for j, t in enumerate(self.templates) if j not in set(keep)]
        self.templates = [self.templates[j] for j in keep]
        self._parsed = [self._parsed[j] for j in keep]
        self.fields = sorted({f for t in self._parsed for _, f, _ in t.atoms})

    def _finish(self):
        sizes = np.array([k.shape[0] for k in self._keys_of], dtype=np.int64)
        self._offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.dim = int(self._offsets[-1])
        self.groups = np.repeat(np.arange(len(self._parsed)), sizes).astype(np.int64)
        self.group_names = list(self.templates)
        self._vocab_list = {f: [None] * len(d) for f, d in self._vocab.items()}
        for f, d in self._vocab.items():
            for v, k in d.items():
                self._vocab_list[f][k] = v
        self._fitted = True

    def _check_fitted(self):
        if not self._fitted:
            raise ParameterError("this ArcFeatureMap is not fitted; call fit(training_treebank) first")

    # ------------------------------------------------------------------ prepare
    def prepare(self, dataset, max_entries=8_000_000):
        """Arc feature matrices of every sentence, stacked.

        Parameters
        ----------
        dataset : TreeDataset
        max_entries : int
            Sentences are processed in chunks of about this many arcs plus in-between words (bounds the memory of
            the intermediate arrays).

        Returns
        -------
        Prepared
            ``lengths`` (S,) tokens per sentence; ``gold`` (S, T_max+1) heads in the decoder layout (column 0 = -1,
            column m = head of token m, -1 padding); ``data["F"]`` the CSR matrix (Σ(n_i+1)², dim) whose row
            ``row_offsets[i] + h·(n_i+1) + m`` holds f(x_i, h → m) (rows of arcs into the root and of self-loops are
            empty); ``data["row_offsets"]`` (S+1,). :meth:`sentence_features` gives sentence i's
            ((n_i+1)², dim) block.
        """
        self._check_fitted()
        held = getattr(self, "_held", None)
        if held is not None and held[0] is dataset:
            return held[1]
        if len(dataset) == 0:
            raise DataError("the dataset is empty; pass at least one sentence")
        lengths, base, ids = self._encode(dataset, fitting=False)
        S = len(lengths)
        per = (lengths + 1) ** 2
        row_offsets = np.concatenate([[0], np.cumsum(per)]).astype(np.int64)
        # cost of a sentence: its arcs, plus its in-between words if a template needs them
        cost = lengths * (lengths + 1)
        if any(t.between for t in self._parsed):
            cost = cost + (lengths + 1) ** 3 // 3
        chunks, start, acc = [], 0, 0
        for i in range(S):
            acc += int(cost[i])
            if acc >= max_entries:
                chunks.append((start, i + 1))
                start, acc = i + 1, 0
        if start < S:
            chunks.append((start, S))
        blocks = []
        for a, b in chunks:
            sent_ids = np.arange(a, b)
            arcs = self._all_arcs(lengths, base, sent_ids)
            ctx = _ArcContext(arcs, ids, any(t.between for t in self._parsed))
            rows = arcs["row"] + (row_offsets[a:b] - row_offsets[a])[arcs["sent"]]
            blocks.append(self._chunk_matrix(ctx, rows, int(row_offsets[b] - row_offsets[a])))
        F = sp.vstack(blocks, format="csr") if len(blocks) > 1 else blocks[0]
        T = int(lengths.max())
        gold = np.full((S, T + 1), -1, dtype=np.int64)
        if hasattr(dataset, "heads"):
            sent = np.repeat(np.arange(S), lengths)
            pos = np.concatenate([np.arange(1, n + 1) for n in lengths])
            gold[sent, pos] = np.concatenate([np.asarray(h, dtype=np.int64) for h in dataset.heads])
        return Prepared(n=S, lengths=lengths, gold=gold, data={"F": F, "row_offsets": row_offsets})

    def hold(self, dataset):
        """Keep ``dataset``'s :meth:`prepare` until :meth:`release`: fits at several C on the same training set
        (model selection on a dev set) build its arc matrix — the costly part of a fit's set-up — once."""
        self._held = None
        self._held = (dataset, self.prepare(dataset))

    def release(self):
        """Forget the arrays kept by :meth:`hold`."""
        self._held = None

    def _chunk_matrix(self, ctx, rows, n_rows):
        """CSR (n_rows, dim) of the arcs of one chunk, built without sorting: arcs come in row order and template
        offsets increase, so the plain templates' columns are already in CSR order; the in-between templates, which
        repeat features within an arc, are counted with one np.unique and added."""
        idx_dtype = np.int32 if self.dim < 2**31 and n_rows < 2**31 else np.int64
        plain = [j for j, t in enumerate(self._parsed) if not t.between]
        cols = np.full((rows.shape[0], len(plain)), -1, dtype=idx_dtype, order="F")
        for c, j in enumerate(plain):
            t = self._parsed[j]
            col = _lookup(self._keys_of[j], self._keys(t, ctx), t.bound)
            cols[:, c] = np.where(col >= 0, col + self._offsets[j], -1)
        mask = cols >= 0
        indices = cols[mask]
        indptr = np.zeros(n_rows + 1, dtype=idx_dtype)
        indptr[1:] = np.cumsum(np.bincount(rows, weights=mask.sum(axis=1), minlength=n_rows).astype(np.int64))
        F = sp.csr_matrix((np.ones(indices.shape[0]), indices, indptr), shape=(n_rows, self.dim))
        betw = [j for j, t in enumerate(self._parsed) if t.between]
        if betw:
            keys = []
            for j in betw:
                t = self._parsed[j]
                col = _lookup(self._keys_of[j], self._keys(t, ctx), t.bound)
                ok = col >= 0
                keys.append(rows[ctx.between[0][ok]] * self.dim + (col[ok] + self._offsets[j]))
            u, cnt = np.unique(np.concatenate(keys), return_counts=True)
            r, c = np.divmod(u, self.dim)
            ip = np.zeros(n_rows + 1, dtype=idx_dtype)
            ip[1:] = np.cumsum(np.bincount(r, minlength=n_rows))
            F = F + sp.csr_matrix((cnt.astype(np.float64), c.astype(idx_dtype), ip), shape=(n_rows, self.dim))
        return F

    @staticmethod
    def sentence_features(prepared, i):
        """Sentence i's arc feature matrix, CSR ((n_i+1)², dim), row h·(n_i+1) + m = f(x_i, h → m)."""
        ro = prepared.data["row_offsets"]
        return prepared.data["F"][int(ro[i]):int(ro[i + 1])]

    # ------------------------------------------------------------------ scores and decoding
    def scores(self, w, prepared, idx=None):
        """Arc score matrices s[h, m] = wᵀf(x_i, h → m).

        Returns
        -------
        list of ndarray, each (n_i+1, n_i+1)
            Column 0 (arcs into the root) and the diagonal (self-loops) are -inf.
        """
        self._check_fitted()
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.dim,):
            raise DataError(f"w has shape {w.shape}; this arc feature map needs ({self.dim},)")
        idx = np.arange(prepared.n) if idx is None else np.asarray(idx, dtype=np.int64)
        ro = prepared.data["row_offsets"]
        F = prepared.data["F"]
        if idx.shape[0] == prepared.n and np.array_equal(idx, np.arange(prepared.n)):
            s_all, starts = F @ w, ro[idx]
        else:
            per = ro[idx + 1] - ro[idx]
            rows = np.repeat(ro[idx] - np.concatenate([[0], np.cumsum(per)[:-1]]), per) + np.arange(int(per.sum()))
            s_all, starts = F[rows] @ w, np.concatenate([[0], np.cumsum(per)[:-1]])
        out = []
        for k, i in enumerate(idx):
            n1 = int(prepared.lengths[i]) + 1
            s = s_all[starts[k]:starts[k] + n1 * n1].reshape(n1, n1).copy()
            s[:, 0] = -np.inf
            np.fill_diagonal(s, -np.inf)
            out.append(s)
        return out

    def decode(self, w, prepared, idx=None, loss_augmented=False, loss_weight=1.0):
        """Best tree per sentence, argmax_y wᵀf(x_i, y) [+ loss_weight · Δℓ_i(y)].

        Returns
        -------
        ndarray of int64, shape (len(idx), T+1)
            T = the longest sentence of ``idx``; row k holds heads[0] = -1, heads[m] for m = 1..n, -1 padding.
        """
        from ..inference import chu_liu_edmonds_batch, eisner_batch, loss_augment_arcs
        idx = np.arange(prepared.n) if idx is None else np.asarray(idx, dtype=np.int64)
        mats = self.scores(w, prepared, idx)
        if loss_augmented:
            mats = [loss_augment_arcs(s, prepared.gold[i, :s.shape[0]], weight=loss_weight)
                    for s, i in zip(mats, idx)]
        # the batched parsers share numpy's per-call overhead across sentences (~4x one-by-one calls at n = 20)
        heads = eisner_batch(mats) if self.projective else chu_liu_edmonds_batch(mats)
        T = int(prepared.lengths[idx].max()) if idx.shape[0] else 0
        out = np.full((idx.shape[0], T + 1), -1, dtype=np.int64)
        for k, h in enumerate(heads):
            out[k, :h.shape[0]] = h
        out[:, 0] = -1
        return out

    # ------------------------------------------------------------------ features, ΔF and loss
    def _check_heads(self, prepared, idx, labelings):
        idx = np.asarray(idx, dtype=np.int64)
        lab = np.asarray(labelings)
        if lab.ndim != 2 or lab.shape[0] != idx.shape[0]:
            raise DataError(f"labelings must be (len(idx), T+1) = ({idx.shape[0]}, ...) head arrays; got shape "
                            f"{lab.shape}")
        n = prepared.lengths[idx]
        if idx.shape[0] and lab.shape[1] < int(n.max()) + 1:
            raise DataError(f"labelings have {lab.shape[1]} columns but sentence {int(idx[np.argmax(n)])} needs "
                            f"{int(n.max()) + 1} (root slot + one head per token)")
        return idx, lab.astype(np.int64, copy=False), n

    def _arc_rows(self, prepared, idx, heads, n):
        """(batch row, stacked-F row) of every arc heads[k, m] → m, m = 1..n_k, whose head and gold head are known."""
        T1 = heads.shape[1]
        m = np.arange(T1)[None, :]
        gold = prepared.gold[idx]
        gold = np.pad(gold, ((0, 0), (0, max(0, T1 - gold.shape[1]))), constant_values=-1)[:, :T1]
        inside = (m >= 1) & (m <= n[:, None])
        # hidden gold heads (-1) leave the token out of both f(x, y_i) and f(x, y), as the chain map does
        use = inside & (gold >= 0)
        bad = use & ((heads < 0) | (heads > n[:, None]) | (heads == m))
        if bad.any():
            k, t = np.argwhere(bad)[0]
            raise DataError(f"labeling {k} (sentence {int(idx[k])}): token {t} has head {int(heads[k, t])}, outside "
                            f"[0, {int(n[k])}] or itself")
        k, t = np.nonzero(use)
        ro = prepared.data["row_offsets"]
        return k, ro[idx[k]] + heads[k, t] * (n[k] + 1) + t

    def joint_features(self, prepared, idx, labelings):
        """f(x_i, y) = Σ_m f(x_i, y_m → m) for one head array per row.

        Parameters
        ----------
        prepared : Prepared
        idx : ndarray of int, shape (r,)
            Sentence of each row (repeats allowed).
        labelings : ndarray of int, shape (r, T+1)
            Heads in the decoder layout (column 0 ignored, -1 padding).

        Returns
        -------
        scipy.sparse.csr_matrix, shape (r, dim)
        """
        idx, lab, n = self._check_heads(prepared, idx, labelings)
        k, rows = self._arc_rows(prepared, idx, lab, n)
        Sel = sp.csr_matrix((np.ones(k.shape[0]), (k, rows)), shape=(idx.shape[0], prepared.data["F"].shape[0]))
        return (Sel @ prepared.data["F"]).tocsr()

    def loss(self, prepared, idx, labelings):
        """Δℓ_i(y): number of tokens whose head differs from the gold head (tokens with gold -1 ignored), (r,)."""
        idx, lab, n = self._check_heads(prepared, idx, labelings)
        T1 = lab.shape[1]
        gold = prepared.gold[idx]
        gold = np.pad(gold, ((0, 0), (0, max(0, T1 - gold.shape[1]))), constant_values=-1)[:, :T1]
        m = np.arange(T1)[None, :]
        use = (m >= 1) & (m <= n[:, None]) & (gold >= 0)
        return (use & (lab != gold)).sum(axis=1).astype(np.float64)

    def delta(self, prepared, idx, labelings):
        """ΔF rows Δf_i(y) = f(x_i, y_i) − f(x_i, y) and Δℓ_i(y) for head arrays y (decoder layout).

        Returns
        -------
        dF : scipy.sparse.csr_matrix, shape (r, dim)
        dl : ndarray, shape (r,)
        """
        idx, lab, n = self._check_heads(prepared, idx, labelings)
        gold = prepared.gold[idx]
        T1 = max(gold.shape[1], lab.shape[1])
        gold = np.pad(gold, ((0, 0), (0, T1 - gold.shape[1])), constant_values=-1)
        lab = np.pad(lab, ((0, 0), (0, T1 - lab.shape[1])), constant_values=-1)
        kg, rg = self._arc_rows(prepared, idx, gold, n)
        kp, rp = self._arc_rows(prepared, idx, lab, n)
        # one selection matrix: +1 on the gold arcs, -1 on the predicted ones (shared arcs cancel)
        Sel = sp.csr_matrix((np.concatenate([np.ones(kg.shape[0]), -np.ones(kp.shape[0])]),
                             (np.concatenate([kg, kp]), np.concatenate([rg, rp]))),
                            shape=(idx.shape[0], prepared.data["F"].shape[0]))
        Sel.eliminate_zeros()
        dF = (Sel @ prepared.data["F"]).tocsr()
        dF.eliminate_zeros()
        return dF, self.loss(prepared, idx, lab)

    # ------------------------------------------------------------------ names and persistence
    def _value_name(self, f, a):
        if a < _N_SPECIAL:
            return _SPECIAL[a]
        return self._vocab_list[f][a]

    def feature_names(self) -> list[str]:
        """Readable name of every feature, e.g. ``"hp/mp|dd=NN/VB|L3"`` (direction L: head right of modifier)."""
        self._check_fitted()
        names = []
        for t, keys in zip(self._parsed, self._keys_of):
            for key in keys.tolist():
                suffix = ""
                if t.dd:
                    key, dd = divmod(key, _N_DD)
                    suffix = f"|{'L' if dd >= 6 else 'R'}{_DIST_NAMES[dd % 6]}"
                vals = []
                for who, f, off in reversed(t.atoms):
                    key, a = divmod(key, self._radix[f])
                    vals.append(self._value_name(f, a))
                names.append(f"{t.spec}={'/'.join(reversed(vals))}{suffix}")
        return names

    def feature_counts(self) -> np.ndarray:
        """Training count of every feature, (dim,)."""
        self._check_fitted()
        return np.concatenate(self._counts_of).astype(np.int64)

    def describe(self) -> dict:
        """JSON-able description (templates, options, sizes)."""
        d = {"kind": self.kind, "templates": list(self.templates), "preset": self.preset,
             "min_count": self.min_count, "projective": self.projective}
        if getattr(self, "dropped_templates", None):
            d["dropped_templates"] = list(self.dropped_templates)
        if self._fitted:
            d.update(dim=self.dim, group_names=self.group_names,
                     group_sizes=np.diff(self._offsets).tolist(), fields=self.fields)
        return d

    def to_state(self):
        """(json_dict, arrays_dict) from which :meth:`from_state` rebuilds the fitted map (JSON + .npz, no pickle)."""
        self._check_fitted()
        js = self.describe()
        arrays = {}
        for f in self.fields:
            # the special symbols are rebuilt by from_state; store the real values in id order
            arrays[f"vocab_{f}"] = np.array(self._vocab_list[f][_N_SPECIAL:], dtype=str)
        for j, (k, c) in enumerate(zip(self._keys_of, self._counts_of)):
            arrays[f"keys_{j}"] = k
            arrays[f"counts_{j}"] = c
        return js, arrays

    @classmethod
    def from_state(cls, desc, arrays):
        """Rebuild a fitted map from :meth:`to_state` output."""
        try:
            fm = cls(desc["templates"], min_count=desc["min_count"], projective=desc["projective"])
            fm.preset = desc.get("preset")
            fm._vocab = {}
            for f in fm.fields:
                d = {key: k for k, key in enumerate(_SPECIAL_KEYS)}
                for v in arrays[f"vocab_{f}"].tolist():
                    d[str(v)] = len(d)
                fm._vocab[f] = d
            fm._radix = {f: len(fm._vocab[f]) for f in fm.fields}
            state = [(np.asarray(arrays[f"keys_{j}"]), np.asarray(arrays[f"counts_{j}"]))
                     for j in range(len(fm._parsed))]
        except KeyError as e:
            raise ModelFileError(f"arc feature map state lacks field {e.args[0]!r}; save it with to_state()") from None
        for j, (t, (keys, counts)) in enumerate(zip(fm._parsed, state)):
            # _lookup indexes a table by key and binary-searches the sorted keys: both need this exact layout
            bound = fm._key_bound(t)
            if keys.dtype.kind not in "iu" or keys.ndim != 1 or (keys.size and (
                    keys.min() < 0 or keys.max() >= bound or (np.diff(keys) <= 0).any())):
                raise ModelFileError(f"array 'fmap__keys_{j}' (template {t.spec!r}) must be strictly increasing "
                                     f"integer keys in [0, {bound}); got dtype {keys.dtype}, shape {keys.shape}")
            if counts.dtype.kind not in "iu" or counts.shape != keys.shape:
                raise ModelFileError(f"array 'fmap__counts_{j}' must be integer counts of shape {keys.shape} like "
                                     f"'fmap__keys_{j}'; got dtype {counts.dtype}, shape {counts.shape}")
        fm._keys_of = [keys.astype(np.int64) for keys, _ in state]
        fm._counts_of = [counts.astype(np.int64) for _, counts in state]
        fm._finish()
        if "dim" in desc and fm.dim != desc["dim"]:
            raise ModelFileError(f"arc feature map state: dictionary has {fm.dim} features but 'dim' says "
                                 f"{desc['dim']}")
        return fm
