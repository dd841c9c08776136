"""Second-order (adjacent-sibling) dependency features: first-order arcs plus sibling factors, decoded exactly by
the second-order Eisner algorithm (projective trees).

McDonald & Pereira, "Online learning of approximate dependency parsing algorithms" (EACL 2006), section 3: the
score of a tree is

    wᵀf(x, y) = Σ_m wᵀf_arc(x, y_m → m) + Σ_m wᵀf_sib(x, y_m, s_m, m),

where s_m is m's adjacent sibling — the child of y_m on m's side of y_m, between y_m and m, nearest to m — or y_m
itself when m is its head's nearest child on that side (its "first" child). The arc part is an
:class:`~mmprog.features.arcs.ArcFeatureMap` (any of its templates, projective decoding); the sibling part has
templates of its own over the three words, written as atoms ``h``/``s``/``m`` + field (``w`` form, ``p`` XPOS, ``c``
UPOS, ``s`` the XPOS's first segment, ``x`` 5-character prefix, ``l`` lemma, ``f`` FEATS) joined by ``/``, every
template conjoined with the direction (head left or right of m). The s-atom of a first child has the value
``<first>``. A sibling template's fields must be among the arc templates' fields (they share the value
dictionaries). Each sibling template is one template group (named ``sib:SPEC``).

Decoding is :func:`mmprog.inference.eisner2` on T[h, s, m] = s_arc[h, m] (+ the arc's loss when loss-augmented:
the head Hamming loss is arc-factored) + s_sib[h, s, m]; exact over projective trees, O(n³).
"""
from __future__ import annotations

import re

import numpy as np
import scipy.sparse as sp
from numba import njit

from ..exceptions import DataError, ModelFileError, ParameterError
from .arcs import ArcFeatureMap

__all__ = ["SiblingFeatureMap", "SIBLING_PRESETS", "adjacent_siblings"]

#: Sibling templates of McDonald & Pereira (2006, section 3.1) over UPOS (c) and the form (w): the two siblings'
#: tags, forms and mixed pairs, and the head with both siblings' tags; the same over the XPOS's first segment (s).
#: ``mp06-xpos``: the same over the XPOS (p) alone, for arc templates that read no UPOS (``mcdonald05``).
SIBLING_PRESETS: dict[str, list[str]] = {
    "mp06": ["sc/mc", "sw/mw", "sw/mc", "sc/mw", "hc/sc/mc", "ss/ms", "hs/ss/ms"],
    "mp06-xpos": ["sp/mp", "sw/mw", "sw/mp", "sp/mw", "hp/sp/mp"],
}
_ATOM = re.compile(r"^([hsm])([wpclsfx])$")


def adjacent_siblings(heads):
    """s_m of every token of a tree: the adjacent sibling of m under its head h_m, or h_m for a first child.

    Parameters
    ----------
    heads : array_like of int, shape (n+1,)
        heads[m] for m = 1..n (0 = root); heads[0] is ignored.

    Returns
    -------
    ndarray of int64, shape (n+1,)
        sib[m] for m = 1..n; sib[0] = -1.
    """
    heads = np.asarray(heads, dtype=np.int64)
    n = heads.shape[0] - 1
    sib = np.full(n + 1, -1, dtype=np.int64)
    last = {}                        # (head, side) -> the child of that side nearest m met so far
    # right children, left to right: the sibling of m is the previous right child of h (nearer h)
    for m in range(1, n + 1):
        h = int(heads[m])
        if m > h:
            sib[m] = last.get((h, 1), h)
            last[h, 1] = m
    # left children, right to left
    for m in range(n, 0, -1):
        h = int(heads[m])
        if m < h:
            sib[m] = last.get((h, 0), h)
            last[h, 0] = m
    return sib


@njit(cache=True, nogil=True)
def _sib_key(j, h, s, m, first, right, base, ids, who, row, radix, t_ptr):
    """The key of sibling template j at (h, s, m) as :meth:`SiblingFeatureMap._sib_keys` builds it (``first``: s
    is h's first child on m's side, its s-atoms take the value radix − 1), or −1 when a value is unseen."""
    key = 0
    for a in range(t_ptr[j], t_ptr[j + 1]):
        r = radix[a]
        if who[a] == 1 and first:
            v = r - 1
        else:
            p = h if who[a] == 0 else s if who[a] == 1 else m
            v = ids[row[a], base + p]
            if v < 0:
                return -1
        key = key * r + v
    return key * 2 + right


@njit(cache=True, nogil=True)
def _sib_find(key, j, keys, k_ptr):
    """Position of ``key`` in template j's sorted keys ``keys[k_ptr[j]:k_ptr[j+1]]`` (absolute), or −1."""
    if key < 0:
        return -1
    a0, a1 = k_ptr[j], k_ptr[j + 1]
    while a0 < a1:
        mid = (a0 + a1) // 2
        if keys[mid] < key:
            a0 = mid + 1
        else:
            a1 = mid
    return a0 if a0 < k_ptr[j + 1] and keys[a0] == key else -1


#: Largest key space (entries of float64) of a template with an h-atom scored from a dense table (:func:`dense_scores`):
#: the POS-only templates (``hc/sc/mc``: 48³·2 keys on UD) fit many times over, a template with a word atom does not.
DENSE_LIMIT = 4_000_000


@njit(cache=True, nogil=True)
def dense_scores(who, radix, t_ptr, keys, k_ptr, ws, limit):
    """Dense score tables of the templates with an h-atom whose key space has at most ``limit`` entries:
    D[off[j] + key] = w_sib at template j's feature with that key, 0 for a key that is no feature; off[j] = −1 for
    the other templates (looked up by binary search). Built once per w in O(keys + table), read once per triple."""
    nt = t_ptr.shape[0] - 1
    off = np.full(nt, -1, dtype=np.int64)
    size = 0
    for j in range(nt):
        span, has_h = 2, False
        for a in range(t_ptr[j], t_ptr[j + 1]):
            span *= radix[a]
            has_h = has_h or who[a] == 0
        if has_h and span <= limit - size:
            off[j] = size
            size += span
    D = np.zeros(size)
    for j in range(nt):
        if off[j] >= 0:
            for q in range(k_ptr[j], k_ptr[j + 1]):
                D[off[j] + keys[q]] = ws[q]
    return off, D


@njit(cache=True, nogil=True)
def sibling_table(n, base, ids, who, row, radix, t_ptr, keys, k_ptr, ws, out, off, D):
    """out[h, s, m] += w_sibᵀ f_sib(x, h, s, m) over the usable triples of one sentence: m = 1..n, h ≠ m, s = h (m is
    h's first child on its side) or lo < s < hi (lo, hi = min, max of h, m).

    A template's key is built as :meth:`SiblingFeatureMap._sib_keys` builds it (:func:`_sib_key`) and found by
    binary search in its sorted keys (``keys[k_ptr[j]:k_ptr[j+1]]``; ``ws`` the sibling part of w in that
    order). A template without an h-atom reads h only through the direction and the first-child flag, and for s
    strictly between h and m the direction is m > s: its scores are O(n²) numbers, A[s, m] and F[m, direction],
    looked up once instead of once per triple (all but two of the ``mp06`` templates). A template with an h-atom
    and a small key space is read from its dense table (``off``, ``D``: :func:`dense_scores`) at its key, without
    the binary search that was most of the per-triple time.
    """
    nt = t_ptr.shape[0] - 1
    has_h = np.zeros(nt, dtype=np.bool_)
    for j in range(nt):
        for a in range(t_ptr[j], t_ptr[j + 1]):
            if who[a] == 0:
                has_h[j] = True
    A = np.zeros((n + 1, n + 1))
    F = np.zeros((n + 1, 2))
    for j in range(nt):
        if has_h[j]:
            continue
        for m in range(1, n + 1):
            for s in range(n + 1):
                if s != m:
                    pos = _sib_find(_sib_key(j, -1, s, m, False, 1 if m > s else 0, base, ids, who, row, radix,
                                             t_ptr), j, keys, k_ptr)
                    if pos >= 0:
                        A[s, m] += ws[pos]
            for d in range(2):
                pos = _sib_find(_sib_key(j, -1, -1, m, True, d, base, ids, who, row, radix, t_ptr), j, keys, k_ptr)
                if pos >= 0:
                    F[m, d] += ws[pos]
    for h in range(n + 1):
        for m in range(1, n + 1):
            if m == h:
                continue
            lo, hi = min(h, m), max(h, m)
            right = 1 if m > h else 0
            for q in range(hi - lo):
                s = h if q == 0 else lo + q
                total = F[m, right] if q == 0 else A[s, m]
                for j in range(nt):
                    if has_h[j]:
                        key = _sib_key(j, h, s, m, q == 0, right, base, ids, who, row, radix, t_ptr)
                        if off[j] >= 0:
                            if key >= 0:
                                total += D[off[j] + key]
                        else:
                            pos = _sib_find(key, j, keys, k_ptr)
                            if pos >= 0:
                                total += ws[pos]
                out[h, s, m] += total


class _SibTemplate:
    def __init__(self, spec):
        self.spec = str(spec).strip()
        self.atoms = []
        for a in self.spec.split("/"):
            mt = _ATOM.match(a.strip())
            if not mt:
                raise ParameterError(f"sibling template {spec!r}: atom {a!r} is not h|s|m + w|p|c|l|s|f|x "
                                     f"(e.g. sc, mw, hp)")
            self.atoms.append((mt.group(1), mt.group(2)))


class SiblingFeatureMap:
    """First-order arc features plus adjacent-sibling features (see the module docstring); projective trees.

    Parameters
    ----------
    templates : str or list of str, optional
        Arc templates (a key of :data:`~mmprog.features.arcs.ARC_PRESETS` or specs), default ``"mst-ud"`` (whose
        fields the default sibling templates read).
    sibling_templates : str or list of str, optional
        A key of :data:`SIBLING_PRESETS` or sibling template specs; default ``"mp06"`` when the arc templates read
        UPOS, the XPOS's first segment and the form, else ``"mp06-xpos"``.
    min_count : int
        Keep arc and sibling features seen at least this often on the gold trees.

    Attributes (after :meth:`fit`)
    ------------------------------
    dim : int
        Arc features first (``arcs.dim`` of them), then the sibling features.
    groups, group_names
        The arc templates' groups, then one group per sibling template (``sib:SPEC``).
    """

    kind = "arcs"
    projective = True

    def __init__(self, templates=None, sibling_templates=None, min_count=1):
        self.arcs = ArcFeatureMap("mst-ud" if templates is None else templates, min_count=min_count,
                                  projective=True)
        if sibling_templates is None:
            sibling_templates = "mp06" if {"c", "s", "w"} <= set(self.arcs.fields) else "mp06-xpos"
        if isinstance(sibling_templates, str):
            if sibling_templates not in SIBLING_PRESETS:
                raise ParameterError(f"sibling_templates {sibling_templates!r} is not one of "
                                     f"{sorted(SIBLING_PRESETS)}; or pass a list of specs like 'sc/mc'")
            sibling_templates = SIBLING_PRESETS[sibling_templates]
        self.sibling_templates = [str(t).strip() for t in sibling_templates]
        if not self.sibling_templates or len(set(self.sibling_templates)) != len(self.sibling_templates):
            raise ParameterError(f"sibling_templates must be a non-empty list of distinct specs; got "
                                 f"{self.sibling_templates!r}")
        self._sib = [_SibTemplate(t) for t in self.sibling_templates]
        self.min_count = min_count
        self._fitted = False

    # ------------------------------------------------------------------ keys
    def _radix(self, f):
        return self.arcs.vocabulary_size(f)

    def _sib_keys(self, t, ids, base, h, s, m):
        """Keys (int64, -1 = an unknown value) of sibling template t at triples (h, s, m) of sentences whose root
        slots are ``base``; s == h is the first-child value (one past the field's vocabulary)."""
        key = np.zeros(h.shape[0], dtype=np.int64)
        bad = np.zeros(h.shape[0], dtype=bool)
        for who, f in t.atoms:
            r = self._radix(f) + 1
            pos = {"h": h, "s": s, "m": m}[who]
            a = ids[f][base + pos]
            if who == "s":
                a = np.where(s == h, r - 1, a)
            bad |= a < 0
            key = key * r + np.maximum(a, 0)
        key = key * 2 + (m > h)
        key[bad] = -1
        return key

    def _bound(self, t):
        b = 2
        for _, f in t.atoms:
            b *= self._radix(f) + 1
        return b

    def _tree_triples(self, lengths, base, heads_list):
        """(row, h, s, m, base) of every token of the given trees (row = index into heads_list)."""
        rows, hs, ss, ms, bs = [], [], [], [], []
        for k, (n, b, heads) in enumerate(zip(lengths, base, heads_list)):
            heads = np.asarray(heads, dtype=np.int64)[:n + 1]
            sib = adjacent_siblings(heads)
            m = np.arange(1, n + 1)
            rows.append(np.full(n, k))
            hs.append(heads[1:])
            ss.append(sib[1:])
            ms.append(m)
            bs.append(np.full(n, b))
        cat = (lambda x: np.concatenate(x).astype(np.int64)) if rows else (lambda x: np.zeros(0, dtype=np.int64))
        return cat(rows), cat(hs), cat(ss), cat(ms), cat(bs)

    # ------------------------------------------------------------------ fitting
    def fit(self, dataset):
        """Arc dictionary (:meth:`ArcFeatureMap.fit`) and sibling dictionary from the gold trees of ``dataset``."""
        self.arcs.fit(dataset)
        missing = sorted({f for t in self._sib for _, f in t.atoms} - set(self.arcs.fields))
        if missing:
            raise ParameterError(f"sibling templates read fields {missing} that no arc template reads (the arc "
                                 f"templates' fields are {self.arcs.fields}); add arc templates over them")
        lengths, base, ids = self.arcs.encode(dataset)
        heads = [np.concatenate([[-1], np.asarray(h, dtype=np.int64)]) for h in dataset.heads]
        _, h, s, m, b = self._tree_triples(lengths, base, heads)
        self._keys_of, self._counts_of = [], []
        for t in self._sib:
            k = self._sib_keys(t, ids, b, h, s, m)
            u, c = np.unique(k[k >= 0], return_counts=True)
            keep = c >= self.min_count
            self._keys_of.append(u[keep])
            self._counts_of.append(c[keep])
        self._finish()
        return self

    def _finish(self):
        sizes = np.array([k.shape[0] for k in self._keys_of], dtype=np.int64)
        self._keys_flat = np.concatenate([np.asarray(k, dtype=np.int64) for k in self._keys_of]) \
            if self._keys_of else np.zeros(0, dtype=np.int64)
        self._spec = None
        self._offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.n_arc_features = self.arcs.dim
        self.dim = self.arcs.dim + int(self._offsets[-1])
        na = len(self.arcs.group_names)
        self.groups = np.concatenate([self.arcs.groups, na + np.repeat(np.arange(len(self._sib)), sizes)])
        self.group_names = list(self.arcs.group_names) + [f"sib:{t.spec}" for t in self._sib]
        self._fitted = True

    def _check_fitted(self):
        if not self._fitted:
            raise ParameterError("this SiblingFeatureMap is not fitted; call fit(training_treebank) first")

    def _lookup(self, j, k):
        keys = self._keys_of[j]
        if keys.shape[0] == 0:
            return np.full(k.shape[0], -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(keys, k), keys.shape[0] - 1)
        return np.where((k >= 0) & (keys[pos] == k), self._offsets[j] + pos, -1)

    # ------------------------------------------------------------------ prepare, scores, decoding
    def prepare(self, dataset):
        """The arc map's :meth:`~mmprog.features.arcs.ArcFeatureMap.prepare` plus the sentences' value ids (the
        sibling features are looked up when scored, O(n³) triples a sentence are never stored)."""
        self._check_fitted()
        P = self.arcs.prepare(dataset)
        lengths, base, ids = self.arcs.encode(dataset)
        P.data.update(sib_base=base, sib_ids=ids)
        return P

    def dense_scores(self, w, limit=None):
        """(off, D) of :func:`dense_scores` for ``w`` (``limit`` default :data:`DENSE_LIMIT`; 0: no dense table)."""
        ws = np.asarray(w, dtype=np.float64)[self.n_arc_features:]
        _, who, _, radix, t_ptr = self._table_spec()
        return dense_scores(who, radix, t_ptr, self._keys_flat, self._offsets, ws,
                            DENSE_LIMIT if limit is None else int(limit))

    def sibling_scores(self, w, prepared, i, dense=None):
        """sib[h, s, m] = w_sibᵀ f_sib(x_i, h, s, m) for every usable triple of sentence i (s = h, or s strictly
        between h and m), 0 elsewhere, (n+1, n+1, n+1).

        Compiled (:func:`sibling_table`): the O(n³) triples are keyed and looked up in one loop. The numpy
        version (a meshgrid of the triples, then per template their keys and a binary search) was most of the
        second-order oracle's time; the keys are the same as :meth:`_sib_keys` builds for the feature rows (a test
        compares every triple's score with w against those rows). ``dense``: :meth:`dense_scores` of this ``w``
        (built here when not given; a pass over many sentences builds it once).
        """
        n = int(prepared.lengths[i])
        ws = np.asarray(w, dtype=np.float64)[self.n_arc_features:]     # the keys' positions are in this part
        spec = self._table_spec()
        # the value ids of the fields the templates read, one row a field, kept beside the prepared data (with the
        # fields they are for)
        seen = prepared.data.get("sib_ids_stacked")
        if seen is None or seen[0] != spec[0]:
            seen = prepared.data["sib_ids_stacked"] = (spec[0], np.stack(
                [np.asarray(prepared.data["sib_ids"][f], np.int64) for f in spec[0]]))
        ids = seen[1]
        out = np.zeros((n + 1, n + 1, n + 1))
        off, D = self.dense_scores(w) if dense is None else dense
        sibling_table(n, int(prepared.data["sib_base"][i]), ids, *spec[1:], self._keys_flat, self._offsets, ws, out,
                      off, D)
        return out

    def _table_spec(self):
        """The sibling templates as arrays for :func:`sibling_table`: (fields, who, field row, radix, t_ptr)."""
        if getattr(self, "_spec", None) is None:
            fields = sorted({f for t in self._sib for _, f in t.atoms})
            who, row, radix, t_ptr = [], [], [], [0]
            for t in self._sib:
                for w_, f in t.atoms:
                    who.append("hsm".index(w_))
                    row.append(fields.index(f))
                    radix.append(self._radix(f) + 1)
                t_ptr.append(len(who))
            self._spec = (fields,) + tuple(np.asarray(a, dtype=np.int64) for a in (who, row, radix, t_ptr))
        return self._spec

    def decode(self, w, prepared, idx=None, loss_augmented=False, loss_weight=1.0):
        """Best projective tree per sentence under arc + sibling scores [+ loss_weight · Δℓ]; the layout of
        :meth:`ArcFeatureMap.decode` ((len(idx), T+1), heads[0] = -1, -1 padding)."""
        from ..inference import eisner2, loss_augment_arcs
        self._check_fitted()
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.dim,):
            raise DataError(f"w has shape {w.shape}; this sibling feature map needs ({self.dim},)")
        idx = np.arange(prepared.n) if idx is None else np.asarray(idx, dtype=np.int64)
        mats = self.arcs.scores(w[:self.n_arc_features], prepared, idx)
        T = int(prepared.lengths[idx].max()) if idx.shape[0] else 0
        out = np.full((idx.shape[0], T + 1), -1, dtype=np.int64)
        dense = self.dense_scores(w)
        for k, (S, i) in enumerate(zip(mats, idx)):
            if loss_augmented:
                S = loss_augment_arcs(S, prepared.gold[i, :S.shape[0]], weight=loss_weight)
            heads = eisner2(S, self.sibling_scores(w, prepared, i, dense))
            out[k, :heads.shape[0]] = heads
        out[:, 0] = -1
        return out

    # ------------------------------------------------------------------ features, ΔF and loss
    def _sibling_rows(self, prepared, idx, labelings):
        """CSR (r, dim) of the sibling features of one tree per row (columns past the arc features)."""
        n = prepared.lengths[idx]
        base = prepared.data["sib_base"][idx]
        rows, h, s, m, b = self._tree_triples(n, base, labelings)
        cols, rr = [], []
        for j, t in enumerate(self._sib):
            pos = self._lookup(j, self._sib_keys(t, prepared.data["sib_ids"], b, h, s, m))
            ok = pos >= 0
            cols.append(pos[ok] + self.n_arc_features)
            rr.append(rows[ok])
        cols, rr = np.concatenate(cols), np.concatenate(rr)
        return sp.csr_matrix((np.ones(cols.shape[0]), (rr, cols)), shape=(len(idx), self.dim))

    def joint_features(self, prepared, idx, labelings):
        """f(x_i, y) (arc features, then sibling features) for one head array per row, CSR (r, dim)."""
        idx = np.asarray(idx, dtype=np.int64)
        lab = np.asarray(labelings, dtype=np.int64)
        arc = self.arcs.joint_features(prepared, idx, lab)
        arc = sp.csr_matrix((arc.data, arc.indices, arc.indptr), shape=(arc.shape[0], self.dim))
        return (arc + self._sibling_rows(prepared, idx, lab)).tocsr()

    def loss(self, prepared, idx, labelings):
        """Δℓ_i(y): tokens with a wrong head (:meth:`ArcFeatureMap.loss`)."""
        return self.arcs.loss(prepared, idx, labelings)

    def delta(self, prepared, idx, labelings):
        """ΔF rows f(x_i, y_i) − f(x_i, y) (CSR (r, dim)) and Δℓ_i(y) (r,) for head arrays y (decoder layout)."""
        idx = np.asarray(idx, dtype=np.int64)
        lab = np.asarray(labelings, dtype=np.int64)
        dA, dl = self.arcs.delta(prepared, idx, lab)
        dA = sp.csr_matrix((dA.data, dA.indices, dA.indptr), shape=(dA.shape[0], self.dim))
        gold = [prepared.gold[i] for i in idx]
        if any((g[1:int(prepared.lengths[i]) + 1] < 0).any() for g, i in zip(gold, idx)):
            raise DataError("the sibling features need every gold head; a sentence has a hidden (-1) head")
        dS = self._sibling_rows(prepared, idx, gold) - self._sibling_rows(prepared, idx, lab)
        dF = (dA + dS).tocsr()
        dF.eliminate_zeros()
        return dF, dl

    # ------------------------------------------------------------------ names
    def feature_names(self) -> list[str]:
        """The arc features' names, then ``sib:SPEC=v1/v2/...|R`` (R: m right of its head)."""
        self._check_fitted()
        names = list(self.arcs.feature_names())
        for t, keys in zip(self._sib, self._keys_of):
            for key in keys.tolist():
                key, d = divmod(key, 2)
                vals = []
                for who, f in reversed(t.atoms):
                    r = self._radix(f) + 1
                    key, a = divmod(key, r)
                    vals.append("<first>" if who == "s" and a == r - 1 else self.arcs.value_name(f, a))
                names.append(f"sib:{t.spec}={'/'.join(reversed(vals))}|{'R' if d else 'L'}")
        return names

    def describe(self) -> dict:
        """JSON-able description: the arc map's, the sibling templates, sizes."""
        d = {"kind": "siblings", "arcs": self.arcs.describe(), "sibling_templates": list(self.sibling_templates),
             "min_count": self.min_count, "projective": True}
        if self._fitted:
            d.update(dim=self.dim, group_names=self.group_names)
        return d

    # ------------------------------------------------------------------ persistence and dev selection
    def to_state(self):
        """(json_dict, arrays_dict) for :meth:`from_state`: the arc map's state (arrays ``arc_*``) and the sorted
        sibling keys and counts."""
        self._check_fitted()
        arc_desc, arc_arrays = self.arcs.to_state()
        js = self.describe()
        js["arcs"] = arc_desc
        arrays = {f"arc_{k}": v for k, v in arc_arrays.items()}
        for j, (k, c) in enumerate(zip(self._keys_of, self._counts_of)):
            arrays[f"sib_keys_{j}"] = k
            arrays[f"sib_counts_{j}"] = c
        return js, arrays

    @classmethod
    def from_state(cls, desc, arrays):
        """Rebuild a fitted map from :meth:`to_state` output."""
        try:
            arc_arrays = {k[4:]: v for k, v in arrays.items() if k.startswith("arc_")}
            fm = cls(desc["arcs"]["templates"], desc["sibling_templates"], min_count=desc["min_count"])
            fm.arcs = ArcFeatureMap.from_state(desc["arcs"], arc_arrays)
            state = [(np.asarray(arrays[f"sib_keys_{j}"]), np.asarray(arrays[f"sib_counts_{j}"]))
                     for j in range(len(fm._sib))]
        except KeyError as e:
            raise ModelFileError(f"sibling feature map state lacks field {e.args[0]!r}; save it with to_state()") \
                from None
        for j, (t, (keys, counts)) in enumerate(zip(fm._sib, state)):
            bound = fm._bound(t)
            if keys.dtype.kind not in "iu" or keys.ndim != 1 or counts.shape != keys.shape or (keys.size and (
                    keys.min() < 0 or keys.max() >= bound or (np.diff(keys) <= 0).any())):
                raise ModelFileError(f"array 'fmap__sib_keys_{j}' (template {t.spec!r}) must be strictly increasing "
                                     f"integer keys in [0, {bound}) with counts of its shape")
        fm._keys_of = [k.astype(np.int64) for k, _ in state]
        fm._counts_of = [c.astype(np.int64) for _, c in state]
        fm._finish()
        if "dim" in desc and fm.dim != desc["dim"]:
            raise ModelFileError(f"sibling feature map state: {fm.dim} features but 'dim' says {desc['dim']}")
        return fm

    def hold(self, dataset):
        """Keep ``dataset``'s arc matrix until :meth:`release` (:meth:`ArcFeatureMap.hold`)."""
        self.arcs.hold(dataset)

    def release(self):
        self.arcs.release()
