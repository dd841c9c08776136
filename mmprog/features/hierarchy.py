"""The tree-structured joint feature map of hierarchical max-margin networks (the two-level web-extraction
hierarchies of PoMEN; Zhu, Xing & Zhang, NIPS 2008, section 4, after the hierarchical CRFs of Zhu et al. 2006).

An example is a forest of nodes (from :class:`~mmprog.datasets.HierarchicalDataset`: root → inner nodes → leaves);
every node c has input features x_c and a label y_c, and

    f(x, y) = [ Σ_c x_c ⊗ e(y_c) ,  Σ_{c : parent(c) ≥ 0} e(y_parent(c)) ⊗ e(y_c) ]

— node state features (d·K, shared by all levels) followed by K×K parent→child transition features, with opt-in
per-label bias features. Layout of w (row-major blocks, in this order): ``state`` (d, K) index j·K + k,
``transition`` (K, K) index a·K + b (parent label a, child label b), then ``bias`` (K,) when enabled.

Labels −1 mark unobserved nodes. Their features are left out of both sides of Δfᵢ(y) = f(xᵢ, yᵢ) − f(xᵢ, y), so the
plain programs (``m3n``, ``l1m3n``) train on the observed nodes only, with the edges between two observed nodes;
loss-augmented decoding then maximises over exactly that forest, so the cut it returns is the most violated one.

Prediction (``decode`` without loss) follows the map's ``predict`` rule:

* ``"joint"`` — h₀: the highest-scoring labeling of every node (tree max-product), as an M³N trained with every
  node labelled predicts;
* ``"h2-prior"`` / ``"h2-posterior"`` — PoMEN's averaging rule h₂ (NIPS 2008 eq. 6): the inner nodes (every node
  with a child) are hidden labels z that are summed out, argmax_y E_{p(z)}[wᵀf(x, y, z)], with p(z) the prior p₀(z)
  of eq. (13) (what the minimum-relative-entropy principle gives a new example, which has no margin constraints)
  or the model's posterior marginals p(z | x) ∝ p₀(z) Σ_y exp wᵀf(x, y, z); inner nodes are returned as −1.

The prior p₀(z) enters as log-potentials on the hidden forest (the hidden nodes and the edges between two hidden
nodes): ``prior_node`` (K,) at every hidden node, ``prior_root`` (K,) in addition at a hidden node whose parent is
not hidden, ``prior_edge`` (K, K) on a hidden→hidden edge (zeros: the uniform prior).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..exceptions import DataError, ParameterError
from .base import Prepared

PREDICT_RULES = ("joint", "h2-prior", "h2-posterior")


# ---------------------------------------------------------------------------------------------- forest helpers
def observed_forest(parent, observed):
    """The forest of the observed nodes: an observed node keeps its parent edge only when the parent is observed.

    Parameters
    ----------
    parent : ndarray of int, shape (M,)
        Parent of every node, −1 for roots.
    observed : ndarray of bool, shape (M,)

    Returns
    -------
    ndarray of int, shape (M,)
        Parents of the observed forest; every hidden node becomes an isolated root.
    """
    p = np.asarray(parent)
    keep = observed & (p >= 0)
    keep[keep] = observed[p[keep]]
    return np.where(keep, p, -1)


def hidden_forest(parent, hidden):
    """Parents of the hidden forest (hidden nodes, edges between two hidden nodes); observed nodes become roots."""
    return observed_forest(parent, hidden)


def mixed_unary(parent, hidden, q, transition):
    """Expected transition scores of the observed–hidden edges, moved onto the observed end.

    For an edge between observed node a and hidden node b, E_{q_b}[wᵀ e(.)⊗e(.)] is a function of y_a only:
    Σ_l τ[y_a, l] q_b(l) when a is the parent, Σ_l q_b(l) τ[l, y_a] when b is.

    Parameters
    ----------
    parent : ndarray of int, shape (M,)
    hidden : ndarray of bool, shape (M,)
    q : ndarray, shape (M, K)
        Marginals of the hidden nodes (rows of observed nodes are not read).
    transition : ndarray, shape (K, K)
        τ[a, b]: parent label a, child label b.

    Returns
    -------
    ndarray, shape (M, K)
        Zero on hidden nodes and on observed nodes without a hidden neighbour.
    """
    p = np.asarray(parent)
    M, K = len(p), transition.shape[0]
    U = np.zeros((M, K))
    child = np.flatnonzero(p >= 0)
    par = p[child]
    down = ~hidden[par] & hidden[child]        # observed parent, hidden child
    up = hidden[par] & ~hidden[child]          # hidden parent, observed child
    np.add.at(U, par[down], q[child[down]] @ transition.T)
    np.add.at(U, child[up], q[par[up]] @ transition)
    return U


def expected_map_forest(node_scores, parent, transition, hidden, q=None, gold=None, loss_weight=1.0):
    """argmax over the observed labels y of E_{q(z)}[s(y, z)] (+ Hamming loss), on a forest.

    The score s(y, z) = Σ_c node_scores[c, label_c] + Σ_edges τ[label_parent, label_c]; hidden nodes z are averaged
    under the product of their marginals q (only the marginals enter: the expectation is linear and hidden–hidden
    terms do not depend on y). With ``q=None`` the observed–hidden edges are dropped (the observed-only model).

    Parameters
    ----------
    node_scores : ndarray, shape (M, K)
    parent : ndarray of int, shape (M,)
    transition : ndarray, shape (K, K)
    hidden : ndarray of bool, shape (M,)
    q : ndarray, shape (M, K), optional
    gold : ndarray of int, shape (M,), optional
        Loss-augment with weight·1[y_c ≠ gold_c] where gold_c ≥ 0.

    Returns
    -------
    ndarray of int64, shape (M,)
        Labels of the observed nodes, −1 on hidden nodes.
    """
    from ..inference import tree_max_product
    node = np.array(node_scores, dtype=np.float64)
    M, K = node.shape
    if q is not None:
        node += mixed_unary(parent, hidden, q, transition)
    if gold is not None:
        g = np.asarray(gold)
        node += loss_weight * ((np.arange(K)[None, :] != g[:, None]) & (g[:, None] >= 0))
    node[hidden] = 0.0
    fp = observed_forest(parent, ~hidden)
    labels, _ = tree_max_product(fp, node, np.broadcast_to(transition, (M, K, K)))
    labels[hidden] = -1
    return labels


def forest_prior_potentials(parent, hidden, prior_node, prior_root, prior_edge):
    """Node and edge log-potentials of p₀(z) on the hidden forest (zero on observed nodes).

    Returns
    -------
    hparent : ndarray of int, shape (M,)
        Parents of the hidden forest.
    node_pot : ndarray, shape (M, K)
    edge_pot : ndarray, shape (M, K, K)
        ``prior_edge`` on rows of hidden nodes with a hidden parent, zero elsewhere.
    """
    hp = hidden_forest(parent, hidden)
    M, K = len(hp), len(prior_node)
    node_pot = np.zeros((M, K))
    node_pot[hidden] = prior_node
    top = hidden & (hp < 0)
    node_pot[top] += prior_root
    edge_pot = np.zeros((M, K, K))
    edge_pot[hp >= 0] = prior_edge
    return hp, node_pot, edge_pot


# ---------------------------------------------------------------------------------------------- the feature map
class HierarchyFeatureMap:
    """Joint feature map for forests of labelled nodes (see module docstring).

    Parameters
    ----------
    n_features : int
        Input feature width d.
    n_labels : int
        Number of labels K (shared by all levels).
    groups : ndarray of int, shape (d,), optional
        Template group of each input feature.
    group_names : list of str, optional
    bias : bool
        Per-label bias features (K).
    predict : {"joint", "h2-prior", "h2-posterior"}
        Prediction rule of :meth:`decode` without loss (module docstring).
    prior_node, prior_root : ndarray, shape (K,), optional
        Log-potentials of p₀(z) at hidden nodes (for the h₂ rules); default 0 (uniform).
    prior_edge : ndarray, shape (K, K), optional
    """

    kind = "hierarchy"

    def __init__(self, n_features, n_labels, groups=None, group_names=None, bias=False, predict="joint",
                 prior_node=None, prior_root=None, prior_edge=None):
        self.n_features = int(n_features)
        self.n_labels = int(n_labels)
        self.bias = bool(bias)
        if predict not in PREDICT_RULES:
            raise ParameterError(f"predict must be one of {', '.join(PREDICT_RULES)}; got {predict!r}")
        self.predict = predict
        d, K = self.n_features, self.n_labels
        self.prior_node = np.zeros(K) if prior_node is None else np.asarray(prior_node, dtype=np.float64)
        self.prior_root = np.zeros(K) if prior_root is None else np.asarray(prior_root, dtype=np.float64)
        self.prior_edge = np.zeros((K, K)) if prior_edge is None else np.asarray(prior_edge, dtype=np.float64)
        for name, arr, shape in (("prior_node", self.prior_node, (K,)), ("prior_root", self.prior_root, (K,)),
                                 ("prior_edge", self.prior_edge, (K, K))):
            if arr.shape != shape or not np.all(np.isfinite(arr)):
                raise ParameterError(f"{name} must be a finite array of shape {shape}; got shape {arr.shape}")
        in_groups = np.zeros(d, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
        if in_groups.shape != (d,):
            raise DataError(f"groups must have one entry per input feature ({d}); got shape {in_groups.shape}")
        n_in = int(in_groups.max()) + 1 if d else 0
        names = list(group_names) if group_names is not None else (
            ["x"] if n_in == 1 else [f"g{g}" for g in range(n_in)])
        if len(names) < n_in:
            raise DataError(f"group_names has {len(names)} names but groups uses {n_in} ids")
        names = names[:n_in]
        self.blocks = [("state", (d, K)), ("transition", (K, K))]
        if self.bias:
            self.blocks.append(("bias", (K,)))
        self.offsets = {}
        off = 0
        for name, shape in self.blocks:
            self.offsets[name] = off
            off += int(np.prod(shape))
        self.dim = off
        self.groups = np.concatenate([np.repeat(in_groups, K), np.full(self.dim - d * K, n_in, dtype=np.int64)])
        self.group_names = names + ["transition"]

    # ------------------------------------------------------------------ construction and persistence
    @classmethod
    def from_dataset(cls, dataset, **kwargs):
        """The map for a :class:`~mmprog.datasets.HierarchicalDataset`."""
        return cls(dataset.n_features, dataset.n_labels, groups=getattr(dataset, "groups", None),
                   group_names=getattr(dataset, "group_names", None), **kwargs)

    def with_prediction(self, predict, prior_node=None, prior_root=None, prior_edge=None):
        """A copy of this map (same w layout) with another prediction rule and prior."""
        K = self.n_labels
        n_in = len(self.group_names) - 1
        return HierarchyFeatureMap(self.n_features, K, groups=self.groups[: self.n_features * K: K] if K else None,
                                   group_names=self.group_names[:n_in], bias=self.bias, predict=predict,
                                   prior_node=prior_node, prior_root=prior_root, prior_edge=prior_edge)

    def describe(self):
        n_in = len(self.group_names) - 1
        return {"kind": self.kind, "n_features": self.n_features, "n_labels": self.n_labels, "bias": self.bias,
                "predict": self.predict, "group_names": self.group_names[:n_in],
                "blocks": [[name, list(shape)] for name, shape in self.blocks]}

    def state_arrays(self):
        K = self.n_labels
        return {"input_groups": self.groups[: self.n_features * K: K] if K else self.groups[:0],
                "prior_node": self.prior_node, "prior_root": self.prior_root, "prior_edge": self.prior_edge}

    @classmethod
    def from_description(cls, desc, arrays):
        return cls(desc["n_features"], desc["n_labels"], groups=arrays.get("input_groups"),
                   group_names=desc.get("group_names"), bias=desc.get("bias", False),
                   predict=desc.get("predict", "joint"), prior_node=arrays.get("prior_node"),
                   prior_root=arrays.get("prior_root"), prior_edge=arrays.get("prior_edge"))

    def weights(self, w):
        """Split w into its named blocks (views): ``state`` (d, K), ``transition`` (K, K), [``bias`` (K,)]."""
        w = np.asarray(w)
        return {name: w[self.offsets[name]: self.offsets[name] + int(np.prod(shape))].reshape(shape)
                for name, shape in self.blocks}

    # ------------------------------------------------------------------ batches
    def prepare(self, dataset):
        """Stack a :class:`HierarchicalDataset` once.

        Returns
        -------
        Prepared
            ``data["X"]`` (N_nodes, d); ``data["offsets"]`` (n+1,); ``data["parent"]`` (N_nodes,) global parent
            index, −1 for roots; ``data["has_child"]`` (N_nodes,) bool; ``gold`` (n, N_max) padded −1.
        """
        if dataset.n_features != self.n_features:
            raise DataError(f"dataset has {dataset.n_features} input features but the feature map expects "
                            f"{self.n_features}; build the map from the training data")
        if not hasattr(dataset, "parents"):
            raise DataError(f"HierarchyFeatureMap needs a HierarchicalDataset (with parents); got "
                            f"{type(dataset).__name__}")
        lengths = np.asarray(dataset.lengths, dtype=np.int64)
        n = len(lengths)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        if any(sp.issparse(x) for x in dataset.X):
            X = sp.vstack([sp.csr_matrix(x) for x in dataset.X], format="csr", dtype=np.float64)
        else:
            X = np.ascontiguousarray(np.vstack(dataset.X), dtype=np.float64)
        parent = np.concatenate([np.where(p >= 0, p + o, -1) for p, o in zip(dataset.parents, offsets[:-1])]) \
            if n else np.zeros(0, np.int64)
        has_child = np.zeros(len(parent), dtype=bool)
        has_child[parent[parent >= 0]] = True
        y_all = np.concatenate([np.asarray(y, dtype=np.int64) for y in dataset.Y]) if n else np.zeros(0, np.int64)
        if np.any(y_all >= self.n_labels):
            raise DataError(f"dataset has labels ≥ {self.n_labels}, more than the feature map's n_labels")
        T = int(lengths.max()) if n else 0
        ex = np.repeat(np.arange(n), lengths)
        pos = np.arange(offsets[-1]) - np.repeat(offsets[:-1], lengths)
        gold = np.full((n, T), -1, dtype=np.int64)
        gold[ex, pos] = y_all
        return Prepared(n=n, lengths=lengths, gold=gold,
                        data={"X": X, "offsets": offsets, "parent": parent.astype(np.int64), "has_child": has_child,
                              "tok_example": ex, "tok_pos": pos})

    @staticmethod
    def nodes(prepared, idx):
        """Global node rows of the examples ``idx`` (in order), their batch row and position, and the parents
        re-indexed into this selection (−1 for roots).

        Returns
        -------
        tok, row, pos, parent : ndarrays of int, shape (M,)
        """
        off = prepared.data["offsets"]
        lengths = prepared.lengths[idx]
        total = int(lengths.sum())
        row = np.repeat(np.arange(len(idx)), lengths)
        first = np.repeat(np.cumsum(lengths) - lengths, lengths)
        pos = np.arange(total) - first
        tok = off[idx][row] + pos
        gp = prepared.data["parent"][tok]
        # a parent's position in the selection: same example, so shift by the example's start in the selection
        parent = np.where(gp >= 0, gp - off[idx][row] + first, -1)
        return tok, row, pos, parent

    def scores(self, w, prepared, idx=None):
        """Node scores of wᵀf for the nodes of the examples ``idx``.

        Returns
        -------
        node_scores : ndarray, shape (M, K)
            One row per node of the selection, in example order.
        transition : ndarray, shape (K, K)
        parent : ndarray of int, shape (M,)
            Parents within the selection.
        row, pos : ndarrays of int, shape (M,)
            Batch row and position of every node.
        """
        idx = np.arange(prepared.n) if idx is None else np.asarray(idx, dtype=np.int64)
        blocks = self.weights(np.asarray(w, dtype=np.float64))
        tok, row, pos, parent = self.nodes(prepared, idx)
        node = np.asarray(prepared.data["X"][tok] @ blocks["state"])
        if self.bias:
            node = node + blocks["bias"]
        return node, np.array(blocks["transition"]), parent, row, pos

    def hidden_marginals_at_prediction(self, node, transition, parent, summed):
        """Marginals of the summed-out nodes under the prediction rule's p(z) (prior or posterior), shape (M, K)."""
        from ..inference import tree_sum_product
        M, K = node.shape
        hp, npot, epot = forest_prior_potentials(parent, summed, self.prior_node, self.prior_root, self.prior_edge)
        if self.predict == "h2-prior":
            q, _, _ = tree_sum_product(hp, npot, epot)
            return q
        # posterior: the full tree with the prior added on the hidden part, y and z both summed
        full_epot = np.broadcast_to(transition, (M, K, K)) + epot
        q, _, _ = tree_sum_product(parent, node + npot, full_epot)
        return q

    def decode(self, w, prepared, idx=None, loss_augmented=False, loss_weight=1.0):
        """Loss-augmented decoding over the observed forest, or prediction by the map's ``predict`` rule.

        Returns
        -------
        ndarray of int64, shape (B, N_max)
            Labels padded with −1 (hidden nodes in loss-augmented decoding, summed-out nodes under h₂, −1).
        """
        from ..inference import tree_max_product
        idx = np.arange(prepared.n) if idx is None else np.asarray(idx, dtype=np.int64)
        node, trans, parent, row, pos = self.scores(w, prepared, idx)
        M, K = node.shape
        out = np.full((len(idx), int(prepared.lengths[idx].max()) if len(idx) else 0), -1, dtype=np.int64)
        if M == 0:
            return out
        if loss_augmented:
            gold = prepared.gold[idx][row, pos]
            lab = expected_map_forest(node, parent, trans, gold < 0, None, gold, loss_weight)
        elif self.predict == "joint":
            lab, _ = tree_max_product(parent, node, np.broadcast_to(trans, (M, K, K)))
        else:
            summed = np.zeros(M, dtype=bool)
            summed[parent[parent >= 0]] = True
            q = self.hidden_marginals_at_prediction(node, trans, parent, summed)
            lab = expected_map_forest(node, parent, trans, summed, q)
        out[row, pos] = lab
        return out

    # ------------------------------------------------------------------ features, ΔF and loss
    def joint_features(self, prepared, idx, labelings):
        """f(xᵢ, y) for one labeling per row; nodes labelled −1 contribute nothing (nor do their edges).

        Parameters
        ----------
        idx : ndarray of int, shape (m,)
        labelings : ndarray of int, shape (m, N_max)

        Returns
        -------
        scipy.sparse.csr_matrix, shape (m, dim)
        """
        idx = np.asarray(idx, dtype=np.int64)
        labelings = np.asarray(labelings, dtype=np.int64)
        m, K = len(idx), self.n_labels
        tok, row, pos, parent = self.nodes(prepared, idx)
        lab = labelings[row, pos] if len(tok) else np.zeros(0, np.int64)
        keep = lab >= 0
        D = sp.csr_matrix((np.ones(int(keep.sum())), (row[keep] * K + lab[keep], tok[keep])),
                          shape=(m * K, prepared.data["X"].shape[0]))
        S = sp.coo_matrix(D @ prepared.data["X"])
        rows, cols, vals = [S.row // K], [S.col * K + S.row % K], [S.data]
        child = np.flatnonzero((parent >= 0) & keep)
        child = child[lab[parent[child]] >= 0]
        rows.append(row[child])
        cols.append(self.offsets["transition"] + lab[parent[child]] * K + lab[child])
        vals.append(np.ones(len(child)))
        if self.bias:
            rows.append(row[keep])
            cols.append(self.offsets["bias"] + lab[keep])
            vals.append(np.ones(int(keep.sum())))
        F = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(m, self.dim))
        F.sum_duplicates()
        return F

    def loss(self, prepared, idx, labelings):
        """Hamming loss over the observed nodes, shape (m,)."""
        idx = np.asarray(idx, dtype=np.int64)
        labelings = np.asarray(labelings, dtype=np.int64)
        T = labelings.shape[1]
        gold = prepared.gold[idx]
        gold = np.pad(gold, ((0, 0), (0, max(0, T - gold.shape[1]))), constant_values=-1)[:, :T]
        return ((gold >= 0) & (labelings != gold)).sum(axis=1).astype(np.float64)

    def delta(self, prepared, idx, labelings):
        """ΔF rows f(xᵢ, yᵢ) − f(xᵢ, y) over the observed nodes and their edges, and the losses Δℓᵢ(y).

        Returns
        -------
        dF : scipy.sparse.csr_matrix, shape (m, dim)
        dl : ndarray, shape (m,)
        """
        idx = np.asarray(idx, dtype=np.int64)
        labelings = np.asarray(labelings, dtype=np.int64)
        T = labelings.shape[1]
        gold = prepared.gold[idx]
        gold = np.pad(gold, ((0, 0), (0, max(0, T - gold.shape[1]))), constant_values=-1)[:, :T]
        lab = np.where(gold >= 0, labelings, -1)
        dF = self.joint_features(prepared, idx, gold) - self.joint_features(prepared, idx, lab)
        dF.eliminate_zeros()
        return dF.tocsr(), self.loss(prepared, idx, labelings)

    # ------------------------------------------------------------------ prediction helpers
    def marginals(self, w, prepared, idx=None, kind="sum"):
        """Node marginals of the tree CRF with scores wᵀf (sum-product), shape (B, N_max, K), zero-padded."""
        from ..inference import tree_sum_product
        if kind != "sum":
            raise ParameterError(f'kind must be "sum" for hierarchies (no max-marginals yet); got {kind!r}')
        idx = np.arange(prepared.n) if idx is None else np.asarray(idx, dtype=np.int64)
        node, trans, parent, row, pos = self.scores(w, prepared, idx)
        M, K = node.shape
        out = np.zeros((len(idx), int(prepared.lengths[idx].max()) if len(idx) else 0, K))
        if M:
            nm, _, _ = tree_sum_product(parent, node, np.broadcast_to(trans, (M, K, K)))
            out[row, pos] = nm
        return out
