"""Dependency labels of a given tree: the labeller's structure, a label chain over the tree's tokens.

Given the heads h of a tree (gold when training, the parser's when parsing), the relation y_m of the arc into every
token m is chosen among the K relations seen in training, jointly for the sentence: the labels form a linear chain
in word order, so the joint feature map is the chain map's (:class:`~mmprog.features.chain.ChainFeatureMap`)

    f(x, h, y) = [ Σ_m φ(x, h, m) ⊗ e(y_m) ,  Σ_m e(y_m) ⊗ e(y_{m+1}) ],

with token inputs φ(x, h, m) read from the tree, each block the features of
:class:`~mmprog.features.arcs.ArcFeatureMap` on one pair of tokens (a *view*, its template atoms ``h`` naming the
view's token):

* ``arc``: the arc h_m → m itself (:data:`LABEL_PRESETS`);
* ``grand``: the head's head g_m → m (the root's children pair with the root);
* ``lchild``, ``rchild``: the leftmost and the rightmost dependent of m paired with m (the root symbol when m has
  none) — what tells an object from a nominal modifier is often the adposition or determiner below it.

Decoding is Viterbi, the loss the Hamming loss Δℓ(y) = #{m : y_m ≠ y*_m}, so P0 (program ``m3n``) on this map is
the chain M³N of Taskar et al. (2003) over the labels of a fixed tree, and route ``bcfw`` certifies it in seconds
on a treebank (:mod:`mmprog.engine.bcfw`). The dictionaries of the views are built from the pairs of the gold
trees of the training data (MSTParser's choice); the state block is dense over (input feature, label).

Why a chain with context views: it replaced McDonald, Lerman & Pereira's (CoNLL-X 2006) per-arc multiclass
program over the arc features, which the 1-slack cutting plane could not certify on Talbanken within its round
limit, while the chain is certified in seconds by ``bcfw`` and, on the arc view alone, labelled more tokens of the
dev file's gold trees right. ``python -m mmprog.bench labeller`` records what the context views add and how the
label accuracy moves with C (the default C of :func:`mmprog.parsing.train_labeller` is chosen there).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..exceptions import DataError, ModelFileError, ParameterError
from .arcs import ArcFeatureMap, resolve_templates
from .chain import ChainFeatureMap

__all__ = ["ArcLabelFeatureMap", "LABEL_PRESETS", "CONTEXT_VIEWS", "view_heads"]

#: Arc templates for labelling (the label is conjoined with each): the modifier's and the head's own fields, their
#: pairs with direction and distance, the modifier's POS context; lemma templates are dropped on files without one.
LABEL_PRESETS: dict[str, list[str]] = {
    "labels": ["mw", "mx", "mc", "ms", "mp", "mf", "ml", "hw", "hx", "hc", "hs", "hp", "hl",
               "mc|dd", "ms|dd", "hc/mc", "hs/ms", "hc/mc|dd", "hs/ms|dd", "hp/mp|dd", "hw/mc|dd", "hc/mw|dd",
               "hw/mw", "hl/ml", "mf/mc|dd", "hc/mc/mf|dd", "mc-1/mc/mc+1", "hc/hc+1/mc-1/mc|dd",
               "hc/mc+1|dd", "hc/mc-1|dd"],
}

#: The context views of the labeller (see the module docstring): in each template ``h`` is the view's token (the
#: grandparent, the leftmost or the rightmost dependent) and ``m`` the token whose label is chosen.
CONTEXT_VIEWS: dict[str, list[str]] = {
    "grand": ["hc/mc", "hs/ms", "hw/mc", "hc/mc|dd", "hs/ms/mf"],
    "lchild": ["hc/mc", "hw/mc", "hs/ms", "hc/mc|dd", "hw/mw"],
    "rchild": ["hc/mc", "hw/mc", "hs/ms", "hc/mc|dd", "hw/mw"],
}


def view_heads(view, heads):
    """The token paired with every token m in ``view``, given the tree's heads.

    Parameters
    ----------
    view : {"arc", "grand", "lchild", "rchild"}
    heads : int array, shape (n,)
        Head of tokens 1..n (0 = root).

    Returns
    -------
    ndarray of int64, shape (n,)
        ``arc``: h_m; ``grand``: h_{h_m} (0 when h_m is the root); ``lchild``/``rchild``: the leftmost/rightmost
        token whose head is m, 0 when there is none.
    """
    h = np.asarray(heads, dtype=np.int64)
    if view == "arc":
        return h
    if view == "grand":
        return np.concatenate([[0], h])[h]
    if view not in ("lchild", "rchild"):
        raise ParameterError(f"view {view!r} is not one of 'arc', 'grand', 'lchild', 'rchild'")
    n = h.shape[0]
    out = np.zeros(n, dtype=np.int64)
    dep = np.flatnonzero(h > 0)              # tokens (0-based) with a real head, in word order
    # fancy assignment keeps the last write per head: the rightmost dependent, or the leftmost in reverse order
    order = dep if view == "rchild" else dep[::-1]
    out[h[order] - 1] = order + 1
    return out


class ArcLabelFeatureMap(ChainFeatureMap):
    """The relations of a tree's arcs as a label chain over its tokens (see the module docstring).

    Parameters
    ----------
    templates : str or list of str, optional
        Templates of the ``arc`` view: a key of :data:`LABEL_PRESETS` (default ``"labels"``) or arc template specs
        (:mod:`mmprog.features.arcs`).
    min_count : int
        Keep the view features seen at least this often on the pairs of the gold trees.
    context : bool
        Add the grandparent and dependent views of :data:`CONTEXT_VIEWS` (default True).

    Attributes (after :meth:`fit`)
    ------------------------------
    label_names : list of str
        The K relations (sorted); label id k is ``label_names[k]``.
    n_labels : int
    n_features : int
        Width of the token inputs φ (the views' dictionaries side by side).
    dim : int
        Length of w: n_features·K state features and K² transitions.
    views : dict of str -> ArcFeatureMap
        The fitted views, in the order of their columns.
    """

    kind = "arclabels"

    def __init__(self, templates=None, min_count=1, context=True):
        self.preset, templates = resolve_templates(templates, LABEL_PRESETS, "labels")
        self.templates = list(templates)
        self.min_count = min_count
        self.context = bool(context)
        self._fitted = False

    def _new_views(self):
        names = {"arc": self.templates}
        if self.context:
            names.update(CONTEXT_VIEWS)
        return {v: ArcFeatureMap(t, min_count=self.min_count) for v, t in names.items()}

    # ------------------------------------------------------------------ fitting
    @staticmethod
    def _relations(dataset):
        for i, s in enumerate(dataset.sentences):
            if "deprel" not in s:
                raise DataError(f"sentence {i} has no 'deprel' column; the labeller is trained on labelled trees "
                                f"(CoNLL-U/CoNLL-X DEPREL)")
        return [s["deprel"] for s in dataset.sentences]

    def fit(self, dataset):
        """Relations and the views' feature dictionaries from the gold trees of ``dataset``.

        Returns
        -------
        self
        """
        rels = self._relations(dataset)
        names = sorted({r for rs in rels for r in rs if r != "_"})
        if not names:
            raise DataError("no token of the training data has a DEPREL (every value is '_'); the labeller needs "
                            "labelled trees")
        self.label_names = names
        self.views = self._new_views()
        for v, fm in self.views.items():
            fm.fit(dataset, heads=[view_heads(v, h) for h in dataset.heads])
        self.templates = list(self.views["arc"].templates)
        self._finish()
        return self

    def _finish(self):
        """The chain map over the views' columns side by side (groups: one per view template)."""
        groups, group_names = [], []
        for v, fm in self.views.items():
            groups.append(np.asarray(fm.groups, dtype=np.int64) + len(group_names))
            group_names += [g if v == "arc" else f"{v}:{g}" for g in fm.group_names]
        ChainFeatureMap.__init__(self, sum(fm.dim for fm in self.views.values()), len(self.label_names),
                                 groups=np.concatenate(groups), group_names=group_names)
        self._index = {r: k for k, r in enumerate(self.label_names)}
        self._fitted = True

    def _label_ids(self, rels):
        """Label id of every token (concatenated), -1 for '_' or a relation unseen in training."""
        return np.fromiter((self._index.get(r, -1) for rs in rels for r in rs), dtype=np.int64,
                           count=sum(len(rs) for rs in rels))

    def _check_fitted(self):
        if not self._fitted:
            raise ParameterError("this ArcLabelFeatureMap is not fitted; call fit(labelled_treebank) first")

    # ------------------------------------------------------------------ prepare
    def prepare(self, dataset, heads=None):
        """Token inputs φ(x, h, m) of the trees to label, stacked as the chain map's batch.

        Parameters
        ----------
        dataset : TreeDataset
        heads : list of int arrays, optional
            The trees whose arcs are labelled (default the dataset's heads; at parse time the parser's).

        Returns
        -------
        Prepared
            The chain map's batch (:meth:`ChainFeatureMap.prepare_stacked`): ``data["X"]`` CSR (Σ n_i,
            n_features), row ``offsets[i] + m − 1`` = φ(x_i, h, m); ``gold`` (S, T_max) label ids, -1 where the
            relation is '_' or unseen in training, and padding.
        """
        self._check_fitted()
        if len(dataset) == 0:
            raise DataError("the dataset is empty; pass at least one sentence")
        heads = dataset.heads if heads is None else heads
        if len(heads) != len(dataset):
            raise DataError(f"{len(heads)} head vectors for {len(dataset)} sentences; pass one per sentence")
        X = sp.hstack([fm.tree_arc_matrix(dataset, [view_heads(v, h) for h in heads])
                       for v, fm in self.views.items()], format="csr", dtype=np.float64)
        lengths = np.asarray([len(s["form"]) for s in dataset.sentences], dtype=np.int64)
        ids = self._label_ids([s.get("deprel", ["_"] * len(s["form"])) for s in dataset.sentences])
        Y = np.split(ids, np.cumsum(lengths)[:-1])
        return self.prepare_stacked(X, lengths, Y)

    # ------------------------------------------------------------------ persistence
    def describe(self) -> dict:
        """JSON-able description (templates, relations, sizes)."""
        d = {"kind": self.kind, "templates": list(self.templates), "preset": self.preset,
             "min_count": self.min_count, "context": self.context, "structure": "chain"}
        if self._fitted:
            d.update(dim=self.dim, n_features=self.n_features, n_labels=self.n_labels,
                     label_names=list(self.label_names), views=list(self.views), group_names=self.group_names)
        return d

    def to_state(self):
        """(json_dict, arrays_dict) for :meth:`from_state` (JSON + .npz, no pickle)."""
        self._check_fitted()
        js = self.describe()
        arrays, js["view_states"] = {}, {}
        for v, fm in self.views.items():
            v_js, v_arr = fm.to_state()
            js["view_states"][v] = v_js
            arrays.update({f"{v}_{k}": a for k, a in v_arr.items()})
        return js, arrays

    @classmethod
    def from_state(cls, desc, arrays):
        """Rebuild a fitted map from :meth:`to_state` output."""
        if desc.get("structure") != "chain":
            raise ModelFileError("this labeller was saved by an earlier mmprog (per-arc multiclass, no 'structure' "
                                 "field); retrain it with `mmprog train` (the chain labeller replaced it)")
        try:
            fm = cls(desc["templates"], min_count=desc["min_count"], context=desc["context"])
            fm.preset = desc.get("preset")
            fm.label_names = [str(r) for r in desc["label_names"]]
            fm.views = {}
            for v in desc["views"]:
                pre = f"{v}_"
                fm.views[v] = ArcFeatureMap.from_state(desc["view_states"][v], {
                    k[len(pre):]: a for k, a in arrays.items() if k.startswith(pre)})
        except KeyError as e:
            raise ModelFileError(f"arc label map state lacks field {e.args[0]!r}; save it with to_state()") from None
        if list(fm.views) != list(fm._new_views()):
            raise ModelFileError(f"arc label map views {list(fm.views)} do not match context={fm.context}")
        fm._finish()
        if fm.dim != desc.get("dim"):
            raise ModelFileError(f"arc label map field 'dim' is {desc.get('dim')!r} but its views give {fm.dim}")
        return fm
