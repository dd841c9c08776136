"""PoMEN — partially observed maximum entropy discrimination Markov networks (Zhu, Xing & Zhang, NIPS 2008).

A structured label has an observed part y and a hidden part z (labels −1 in the data); features are linear,
F(x, y, z; w) = wᵀf(x, y, z). With a standard normal prior on w and p(w, {z}) = p(w) Πᵢ p(zᵢ), problem P2 (7),

    min  KL(p(w) ‖ N(0, I)) + Σᵢ KL(p(zᵢ) ‖ p₀(zᵢ)) + C Σᵢ ξᵢ
    s.t. μ_wᵀ E_{p(zᵢ)}[Δfᵢ(y, z)] ≥ Δℓᵢ(y) − ξᵢ   ∀i, y,                with Δfᵢ(y, z) = f(xᵢ, yᵢ, z) − f(xᵢ, y, z),

is solved by the EM-style alternation of section 3.1 (p(w) = N(μ_w, I), so the first KL is ½‖μ_w‖²):

* **Step 1** (the M³N problem (10)): with every p(zᵢ) fixed, the master ½‖w‖² + C Σ ξᵢ over the cuts
  wᵀE_{p(zᵢ)}[Δfᵢ(y, z)] ≥ Δℓᵢ(y) − ξᵢ is grown by the cutting-plane engine (this class is P0's master,
  :class:`~mmprog.programs.m3n.M3N`); separation is loss-augmented decoding of the *expected* scores
  E_{p(z)}[wᵀf(x, y, z)] over the observed labels (:class:`ExpectedFeatureMap`). Its solution is μ_w.
* **Step 2** (the β-dual (12)): for every example, max over β ∈ Pᵢ(C) of
  −log Σ_z p₀(z) exp{Σ_y β(y)[μ_wᵀΔfᵢ(y, z) − Δℓᵢ(y)]}, as an explicit Pyomo NLP solved by Ipopt
  (:func:`beta_dual_model`) in marginal variables: node marginals ``mu[a, k]`` = Σ_y β(y) 1[y_a = k] of every
  observed node and edge marginals ``mu_edge[c, k, l]`` of every edge between two observed nodes, scaled to C
  (``normalised``: Σ_k mu[a, k] = C at the top node of every observed tree), non-negative and locally consistent
  (``consistent_parent``, ``consistent_child``) — the marginal polytope of the observed forest, so the program is
  polynomial in size and exact. The log-normaliser over z (``log_partition``, a PyNumero ExternalGreyBoxBlock) and its exact gradient
  ∂log Z/∂β(y) = μ_wᵀE_{p(z)}[Δfᵢ(y, z)] − Δℓᵢ(y), in marginal form ∂log Z/∂mu[a, k] = −Σ_b E_{q_b}[τ(k, z_b)]
  over the hidden neighbours b of a, come from sum-product (forward-backward on chains, belief propagation on trees);
  the exact Hessian too when p(z) factorises. Then p(zᵢ) ∝ p₀(zᵢ) exp φᵢ(zᵢ).

Why only a few things enter: in Δfᵢ(y, z) every feature that involves hidden nodes only (their state features, the
edges between two hidden nodes) cancels, so p(z) reaches the margins only through the edges between an observed
and a hidden node, and φᵢ(z) = Σ_y β(y)[…] is a sum of unary terms φ_b(z_b) on those hidden nodes
(``mixed_unary`` of :mod:`mmprog.features.hierarchy`): p(zᵢ) is p₀ tilted node by node, a tree model whenever p₀ is.

Priors p₀(z) of form (13), on the hidden forest (hidden nodes, edges between two hidden nodes): ``"uniform"``
(default; the paper's choice), ``{"kind": "independent", "p": (K,)}``, ``{"kind": "markov", "initial": (K,),
"transition": (K, K)}`` (``"markov"`` estimates both from the observed label pairs of the training data),
``{"kind": "loglinear", "node": (K,), "edge": (K, K)}``.

Prediction h₂ (6) averages over w (its posterior mean μ_w) and sums out z: on chains the test words have no hidden
letters, so h₂ is Viterbi on μ_w; on hierarchies the inner nodes are the hidden part and are summed out under p₀(z)
(``predict="h2-prior"``, what the minimum-relative-entropy principle gives an unseen example), or under the model's
posterior marginals (``"h2-posterior"``), or decoded jointly (``"joint"``, h₀).

Starting point: p(z) = p₀(z) (``init="prior"``, the paper). With the uniform p₀ on hierarchies this start is a fixed
point: the hidden labels are exchangeable, Step 1's ℓ2 solution spreads the transition weights evenly over them
(τ[l, k] does not depend on the hidden label l) and Step 2 then finds no reason to tilt p(z) — PoMEN stays the
leaf-only model plus a label bias. ``init="posterior"`` (tilt each hidden node by its own score and its observed
neighbours' gold labels under the first μ_w) and ``init="random"`` break the symmetry. Under the factorisation
p(w)Πᵢp(zᵢ) the problem is no longer jointly convex, so different starts may end at different J.

EM rounds: the run alternates Step 1, Step 2, …, Step 1 (``n_em`` Step-2 updates). The
P2 objective J = ½‖μ_w‖² + Σᵢ KL(p(zᵢ)‖p₀) + C Σᵢ Hᵢ, with Hᵢ = max_y Δℓᵢ(y) − μ_wᵀE_{p(zᵢ)}[Δfᵢ(y, z)] computed by
exact separation, is recorded after every step (``em_history``); each step minimises J over its block, so J must not
increase beyond the Step-1 tolerance C·n·eps and Ipopt's tolerance. After Step 2 the β-dual value
½‖μ_w‖² + Σᵢ (dual optimum)ᵢ is recorded beside J: strong duality of (11)–(12) makes them equal.
"""
from __future__ import annotations

import logging
import time

import numpy as np
import scipy.sparse as sp

from ..cuts import Cuts
from .statements import Duality, scale_of, duality_for, working_set_arrays
from ..exceptions import DataError, ParameterError, SolverError, check_param
from ..features.hierarchy import PREDICT_RULES, expected_map_forest, hidden_forest, mixed_unary
from .base import Dims, register
from .m3n import M3N, p0_checks, p0_dual_model

log = logging.getLogger("mmprog.pomen")

__all__ = ["PoMEN", "HiddenPrior", "make_prior", "HiddenStructure", "ExpectedFeatureMap", "HiddenSumProduct",
           "log_partition_model", "beta_dual_model", "solve_beta_dual", "hidden_distribution", "p2_objective"]


# ================================================================================================ priors p₀(z) (13)
class HiddenPrior:
    """A prior p₀(z) of the exponential form (13) on the hidden forest, as log-potentials.

    log p₀(z) = Σ_b [node(z_b) + 1[b tops the hidden forest] root(z_b)] + Σ_{hidden b → hidden c} edge(z_b, z_c) − A₀

    Attributes
    ----------
    kind : str
    node, root : ndarray, shape (K,)
    edge : ndarray, shape (K, K)
    """

    def __init__(self, kind, node, root, edge):
        self.kind = kind
        self.node = np.asarray(node, dtype=np.float64)
        self.root = np.asarray(root, dtype=np.float64)
        self.edge = np.asarray(edge, dtype=np.float64)

    @property
    def coupled(self):
        """Whether p₀ couples hidden nodes (then p(z) is a tree model, not a product of node marginals)."""
        return bool(np.any(self.edge != 0.0))

    def spec(self):
        """JSON-able description."""
        return {"kind": self.kind, "node": self.node.tolist(), "root": self.root.tolist(), "edge": self.edge.tolist()}


def _prob_vector(name, p, K, axis_sum=True):
    p = np.asarray(p, dtype=np.float64)
    ok = p.shape[-1:] == (K,) and np.all(np.isfinite(p)) and np.all(p > 0) and (
        not axis_sum or np.allclose(p.sum(axis=-1), 1.0, atol=1e-8))
    check_param(name, p.tolist() if p.size < 50 else f"array of shape {p.shape}", ok,
                f"strictly positive probabilities over the {K} labels (rows summing to 1)")
    return p


def make_prior(prior, n_labels, structure=None):
    """Turn the ``prior`` hyper-parameter into a :class:`HiddenPrior`.

    Parameters
    ----------
    prior : str or dict or HiddenPrior
        ``"uniform"``; ``"markov"`` (estimated from the observed parent→child label pairs of ``structure``, add-one
        smoothed); or a dict with ``kind`` in ``independent`` (``p``), ``markov`` (``initial``, ``transition``),
        ``loglinear`` (``node``, ``edge``), ``uniform``.
    n_labels : int
    structure : HiddenStructure, optional
        Needed for the estimated ``"markov"`` prior.
    """
    K = int(n_labels)
    zeros, zz = np.zeros(K), np.zeros((K, K))
    if isinstance(prior, HiddenPrior):
        return prior
    if prior == "uniform":
        return HiddenPrior("uniform", zeros, zeros, zz)
    if prior == "markov":
        if structure is None:
            raise ParameterError('prior="markov" needs the training data to estimate p0; pass a dict instead')
        c = np.flatnonzero(structure.parent >= 0)
        p = structure.parent[c]
        both = ~structure.hidden[c] & ~structure.hidden[p]
        if not both.any():
            raise ParameterError('prior="markov" is estimated from observed parent->child label pairs and this '
                                 'training set has none; pass {"kind": "markov", "initial": ..., "transition": ...}')
        A = np.ones((K, K))
        np.add.at(A, (structure.gold[p[both]], structure.gold[c[both]]), 1.0)
        A /= A.sum(axis=1, keepdims=True)
        pi = np.bincount(structure.gold[~structure.hidden], minlength=K)[:K] + 1.0
        pi /= pi.sum()
        return HiddenPrior("markov", zeros, np.log(pi), np.log(A))
    if isinstance(prior, dict):
        kind = prior.get("kind")
        if kind == "uniform":
            return HiddenPrior("uniform", zeros, zeros, zz)
        if kind == "independent":
            return HiddenPrior("independent", np.log(_prob_vector("prior['p']", prior.get("p"), K)), zeros, zz)
        if kind == "markov":
            pi = _prob_vector("prior['initial']", prior.get("initial"), K)
            A = _prob_vector("prior['transition']", prior.get("transition"), K)
            if A.shape != (K, K):
                raise ParameterError(f"prior['transition'] must have shape ({K}, {K}); got {A.shape}")
            return HiddenPrior("markov", zeros, np.log(pi), np.log(A))
        if kind == "loglinear":
            node = np.asarray(prior.get("node", zeros), dtype=np.float64)
            edge = np.asarray(prior.get("edge", zz), dtype=np.float64)
            if node.shape != (K,) or edge.shape != (K, K) or not (np.all(np.isfinite(node))
                                                                   and np.all(np.isfinite(edge))):
                raise ParameterError(f"prior loglinear needs finite 'node' ({K},) and 'edge' ({K}, {K}); got shapes "
                                     f"{node.shape}, {edge.shape}")
            return HiddenPrior("loglinear", node, zeros, edge)
        if kind is None and "node" in prior:
            return HiddenPrior(prior.get("kind", "loglinear"), prior["node"], prior.get("root", zeros),
                               prior.get("edge", zz))
    raise ParameterError('prior must be "uniform", "markov" or a dict with kind independent|markov|loglinear; '
                         f'got {prior!r}')


# ================================================================================================ the structure
def _selection(base, prepared, idx):
    """Nodes of the examples ``idx`` in order: global node row, batch row, position, parent within the selection."""
    if getattr(base, "kind", None) == "hierarchy":
        return base.nodes(prepared, idx)
    tok, row, pos = base._tokens(prepared, idx)
    parent = np.where(pos > 0, np.arange(len(tok)) - 1, -1)
    return tok, row, pos, parent


def _node_scores(base, w, prepared, idx):
    """Node scores (M, K) of the selection's nodes (all observed-only score terms: state, start/stop, bias) and τ."""
    if getattr(base, "kind", None) == "hierarchy":
        node, trans, _, _, _ = base.scores(w, prepared, idx)
        return node, trans
    node, trans, _ = base.scores(w, prepared, idx)
    _, row, pos = base._tokens(prepared, idx)
    return node[row, pos], trans


class HiddenStructure:
    """The training set as one flat forest of nodes with the hidden / observed split.

    Chains are paths (parent of position t is t − 1); hierarchies come with their parents.

    Attributes
    ----------
    kind : {"chain", "hierarchy"}
    n, N, K : int
        Examples, nodes, labels.
    offsets : ndarray, shape (n+1,)
    example, pos : ndarray of int, shape (N,)
    parent : ndarray of int, shape (N,)
        Global parent, −1 for roots.
    gold : ndarray of int, shape (N,)
        −1 for hidden nodes.
    hidden : ndarray of bool, shape (N,)
    hparent : ndarray of int, shape (N,)
        Parents of the hidden forest.
    mixed_child : ndarray of int
        Children c of the edges (parent[c], c) with exactly one hidden end.
    n_mixed : ndarray of int, shape (n,)
        Number of observed–hidden edges per example (examples with none need no Step 2).
    """

    def __init__(self, base, prepared):
        kind = getattr(base, "kind", "chain")
        if kind not in ("chain", "hierarchy"):
            raise DataError(f"PoMEN needs a chain or hierarchy feature map; got kind {kind!r}")
        if getattr(base, "n_edge_features", 0):
            # the expectation over hidden labels is written for one shared transition matrix
            raise DataError("PoMEN covers chains with a shared transition; this map has edge features (B templates "
                            "with macros): use plain B")
        if getattr(base, "order", 1) != 1:
            # its expectations over hidden labels are first-order forward-backward sums
            raise DataError(f"PoMEN covers first-order chains; this map has order={base.order} (label trigrams): "
                            f"train with order=1 (drop --order {base.order})")
        self.kind = kind
        self.n = prepared.n
        self.K = base.n_labels
        idx = np.arange(prepared.n)
        tok, row, pos, parent = _selection(base, prepared, idx)
        self.N = len(tok)
        self.example, self.pos, self.parent = row, pos, parent
        self.offsets = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(prepared.lengths, out=self.offsets[1:])
        self.gold = prepared.gold[row, pos]
        self.hidden = self.gold < 0
        self.hparent = hidden_forest(parent, self.hidden)
        c = np.flatnonzero(parent >= 0)
        mixed = self.hidden[c] != self.hidden[parent[c]]
        self.mixed_child = c[mixed]
        self.n_mixed = np.bincount(self.example[self.mixed_child], minlength=self.n)

    def nodes_of(self, examples):
        """Global node indices of ``examples`` (sorted ascending when ``examples`` is)."""
        examples = np.asarray(examples, dtype=np.int64)
        lengths = self.offsets[examples + 1] - self.offsets[examples]
        first = np.repeat(np.cumsum(lengths) - lengths, lengths)
        return np.repeat(self.offsets[examples], lengths) + np.arange(int(lengths.sum())) - first


# ================================================================================================ sum-product over z
class HiddenSumProduct:
    """log Σ_z exp{Σ_b node_pot[b, z_b] + Σ edge_pot} over a hidden forest and its node marginals.

    Forward-backward on the runs of hidden positions of chains, belief propagation on trees, a closed form when the
    forest has no edges (p₀ factorises).

    Parameters
    ----------
    hparent : ndarray of int, shape (h,)
        Parents within the h hidden nodes (−1 for tops).
    prior : HiddenPrior
    chain : bool
        Whether the hidden forest is a set of paths in chain order (consecutive nodes of a run are consecutive).
    """

    def __init__(self, hparent, prior, chain):
        self.hparent = np.asarray(hparent, dtype=np.int64)
        h = len(self.hparent)
        K = len(prior.node)
        self.h, self.K = h, K
        self.factorised = not prior.coupled
        self.prior_pot = np.tile(prior.node, (h, 1))
        self.prior_pot[self.hparent < 0] += prior.root
        self.edge = prior.edge
        self.chain = chain
        if chain and not self.factorised and h:
            tops = self.hparent < 0
            self.run = np.cumsum(tops) - 1
            start = np.flatnonzero(tops)
            self.run_pos = np.arange(h) - start[self.run]
            self.run_len = np.bincount(self.run)
        # A₀ = log Σ_z exp(prior potentials): p₀ is normalised by it (0 for Markov priors, h·log K for uniform)
        self.log_z0 = self._sum_product(np.zeros((h, K)))[1] if h else 0.0

    def _sum_product(self, phi):
        from ..inference import forward_backward, tree_sum_product
        pot = self.prior_pot + phi
        h, K = pot.shape
        if self.factorised:
            m = pot.max(axis=1, keepdims=True)
            e = np.exp(pot - m)
            s = e.sum(axis=1, keepdims=True)
            return e / s, float(np.sum(np.log(s) + m))
        if self.chain:
            R, L = len(self.run_len), int(self.run_len.max())
            node = np.zeros((R, L, K))
            node[self.run, self.run_pos] = pot
            nm, _, logz = forward_backward(node, self.edge, self.run_len)
            return nm[self.run, self.run_pos], float(logz.sum())
        epot = np.zeros((h, K, K))
        epot[self.hparent >= 0] = self.edge
        nm, _, logz = tree_sum_product(self.hparent, pot, epot)
        return nm, float(logz)

    def __call__(self, phi):
        """Marginals q (h, K) of p(z) ∝ p₀(z) exp Σ_b φ_b(z_b) and log Σ_z p₀(z) exp φ(z) (p₀ normalised)."""
        if self.h == 0:
            return np.zeros((0, self.K)), 0.0
        q, logz = self._sum_product(phi)
        return q, logz - self.log_z0

    def covariance(self, q):
        """Block-diagonal covariance of the one-hot node indicators when p(z) factorises, sparse (hK, hK)."""
        h, K = q.shape
        blocks = np.einsum("bk,kl->bkl", q, np.eye(K)) - q[:, :, None] * q[:, None, :]
        r = np.repeat(np.arange(h) * K, K * K) + np.tile(np.repeat(np.arange(K), K), h)
        c = np.repeat(np.arange(h) * K, K * K) + np.tile(np.tile(np.arange(K), K), h)
        return sp.csr_matrix((blocks.ravel(), (r, c)), shape=(h * K, h * K))


def hidden_distribution(structure, prior, phi):
    """p(z) ∝ p₀(z) exp φ(z) for the whole training set.

    Parameters
    ----------
    structure : HiddenStructure
    prior : HiddenPrior
    phi : ndarray, shape (N, K)
        Unary tilts φ_b on the hidden nodes (rows of observed nodes ignored).

    Returns
    -------
    q : ndarray, shape (N, K)
        Node marginals on hidden rows, one-hot of the observed label on observed rows.
    kl : float
        Σᵢ KL(p(zᵢ) ‖ p₀(zᵢ)) = Σ_b E_q[φ_b] − log Σ_z p₀(z) exp φ(z).
    """
    hid = np.flatnonzero(structure.hidden)
    pos_of = np.full(structure.N, -1)
    pos_of[hid] = np.arange(len(hid))
    hp = structure.hparent[hid]
    hp_local = np.where(hp >= 0, pos_of[np.maximum(hp, 0)], -1)
    sp_ = HiddenSumProduct(hp_local, prior, structure.kind == "chain")
    qh, logz = sp_(phi[hid])
    q = np.zeros((structure.N, structure.K))
    obs = ~structure.hidden
    q[np.flatnonzero(obs), structure.gold[obs]] = 1.0
    q[hid] = qh
    kl = float(np.sum(qh * phi[hid]) - logz)
    return q, kl


# ================================================================================================ Step 1: E_p(z)[Δf]
class ExpectedFeatureMap:
    """The joint feature map of the M³N step (10): E_{p(z)}[f(x, y, z)] over the observed labels y.

    Wraps a chain or hierarchy map; ``q`` (N, K) holds the marginals of p(z) on the hidden nodes of the training set
    the map was prepared for (only the marginals enter: the expectation is linear and only the observed–hidden edges
    carry z into Δf). The oracle sees it as any feature map.

    Parameters
    ----------
    base : ChainFeatureMap or HierarchyFeatureMap
    structure : HiddenStructure
    q : ndarray, shape (N, K)
    """

    def __init__(self, base, structure, q):
        self.base = base
        self.structure = structure
        self.q = np.asarray(q, dtype=np.float64)
        self.dim, self.groups, self.group_names = base.dim, base.groups, base.group_names
        self.n_labels = base.n_labels
        self.kind = getattr(base, "kind", "chain")
        self.offsets = base.offsets

    def describe(self):
        return self.base.describe()

    def weights(self, w):
        return self.base.weights(w)

    def prepare(self, dataset):
        return self.base.prepare(dataset)

    def decode(self, w, prepared, idx=None, loss_augmented=False, loss_weight=1.0):
        """argmax over observed labels of E_{p(z)}[wᵀf(x, y, z)] (+ Δℓ), hidden positions −1, shape (B, T)."""
        from ..inference import loss_augment, viterbi
        idx = np.arange(prepared.n) if idx is None else np.asarray(idx, dtype=np.int64)
        tok, row, pos, parent = _selection(self.base, prepared, idx)
        hid = self.structure.hidden[tok]
        gold = prepared.gold[idx]
        T = int(prepared.lengths[idx].max())
        out = np.full((len(idx), T), -1, dtype=np.int64)
        if self.kind == "hierarchy":
            node, trans = _node_scores(self.base, w, prepared, idx)
            g = gold[row, pos] if loss_augmented else None
            out[row, pos] = expected_map_forest(node, parent, trans, hid, self.q[tok], g, loss_weight)
            return out
        node, trans, lengths = self.base.scores(w, prepared, idx)
        node[row, pos] += mixed_unary(parent, hid, self.q[tok], trans)
        node[row[hid], pos[hid]] = 0.0
        if loss_augmented:
            node = loss_augment(node, gold[:, :node.shape[1]], weight=loss_weight)
        obs = np.zeros((len(idx), T), dtype=bool)
        obs[row[~hid], pos[~hid]] = True
        K = self.n_labels
        # an edge couples two positions only when both are observed; at a hidden position the chain is cut
        edge = np.zeros((len(idx), max(T - 1, 0), K, K))
        edge[obs[:, :-1] & obs[:, 1:]] = trans
        labels, _ = viterbi(node, edge, lengths)
        labels[~obs] = -1
        return labels

    def loss(self, prepared, idx, labelings):
        return self.base.loss(prepared, idx, labelings)

    def delta(self, prepared, idx, labelings):
        """Rows E_{p(z)}[Δfᵢ(y, z)] = Δf over observed nodes + Σ_{observed a – hidden b} E_{q_b}[e(yᵢ_a)⊗e(z_b) −
        e(y_a)⊗e(z_b)] (oriented parent ⊗ child), and Δℓᵢ(y).

        Returns
        -------
        dF : scipy.sparse.csr_matrix, shape (m, dim)
        dl : ndarray, shape (m,)
        """
        idx = np.asarray(idx, dtype=np.int64)
        labelings = np.asarray(labelings, dtype=np.int64)
        dF, dl = self.base.delta(prepared, idx, labelings)
        tok, row, pos, parent = _selection(self.base, prepared, idx)
        hid = self.structure.hidden[tok]
        c = np.flatnonzero(parent >= 0)
        p = parent[c]
        mixed = hid[c] != hid[p]
        c, p = c[mixed], p[mixed]
        if not len(c):
            return dF, dl
        a_is_parent = hid[c]                    # the hidden end is the child
        a = np.where(a_is_parent, p, c)
        b = np.where(a_is_parent, c, p)
        K = self.n_labels
        g = self.structure.gold[tok[a]]
        yhat = labelings[row[a], pos[a]]
        qb = self.q[tok[b]]                      # (e, K)
        toff = self.base.offsets["transition"]
        L = np.arange(K)[None, :]
        ap = a_is_parent[:, None]
        col_g = toff + np.where(ap, g[:, None] * K + L, L * K + g[:, None])
        col_y = toff + np.where(ap, yhat[:, None] * K + L, L * K + yhat[:, None])
        rows = np.repeat(row[a], K)
        extra = sp.csr_matrix((np.concatenate([qb.ravel(), -qb.ravel()]),
                               (np.concatenate([rows, rows]), np.concatenate([col_g.ravel(), col_y.ravel()]))),
                              shape=dF.shape)
        out = (dF + extra).tocsr()
        out.sum_duplicates()
        out.eliminate_zeros()
        return out, dl


# ================================================================================================ Step 2: β-dual (12)
def _greybox_base():
    from pyomo.contrib.pynumero.interfaces.external_grey_box import ExternalGreyBoxModel
    return ExternalGreyBoxModel


def _make_log_partition_classes():
    EGBM = _greybox_base()

    class LogPartition(EGBM):
        """log Z(β) of the β-dual (12) in marginal variables, summed over a batch of examples, for PyNumero.

        Inputs u: the node marginals mu[a, k] of the observed nodes a with a hidden neighbour. The tilt of the
        hidden labels is φ = φ₀ − J u with φ_b(l) = Σ_{a ~ b} Σ_k (C·1[k = yᵢ_a] − mu[a, k]) τ_ab(k, l) (τ oriented
        parent→child), and the output is log Σ_z p₀(z) exp φ(z) = Σᵢ log Zᵢ (p₀ normalised); its gradient is
        −Jᵀ q with q the marginals of p(z) ∝ p₀(z) exp φ(z) (sum-product).

        Parameters
        ----------
        names : list of str
            Input names.
        phi0 : ndarray, shape (h, K)
        J : scipy.sparse.csr_matrix, shape (h·K, n_inputs)
        sum_product : HiddenSumProduct
        """

        def __init__(self, names, phi0, J, sum_product):
            self._names = list(names)
            self.phi0 = phi0
            self.J = sp.csr_matrix(J)
            self.JT = self.J.T.tocsr()
            self.sum_product = sum_product
            self._u = np.zeros(len(names))
            self._cache = None
            self._lam = np.ones(1)

        def input_names(self):
            return self._names

        def output_names(self):
            return ["log_Z"]

        def equality_constraint_names(self):
            return []

        def set_input_values(self, input_values):
            self._u = np.asarray(input_values, dtype=np.float64).copy()
            self._cache = None

        def phi(self, u=None):
            """The tilts φ (h, K) at inputs u (default: the current inputs)."""
            u = self._u if u is None else np.asarray(u, dtype=np.float64)
            return self.phi0 - (self.J @ u).reshape(self.phi0.shape)

        def _eval(self):
            if self._cache is None:
                self._cache = self.sum_product(self.phi())
            return self._cache

        def evaluate_outputs(self):
            return np.array([self._eval()[1]])

        def gradient(self):
            """∂ log Z / ∂u = −Jᵀ q, shape (n_inputs,)."""
            q, _ = self._eval()
            return -(self.JT @ q.ravel())

        def evaluate_jacobian_outputs(self):
            g = self.gradient()
            n = len(g)
            return sp.coo_matrix((g, (np.zeros(n, dtype=np.int64), np.arange(n))), shape=(1, n))

        def finalize_block_construction(self, block):
            block.outputs["log_Z"].value = float(self.evaluate_outputs()[0])

    class LogPartitionHessian(LogPartition):
        """:class:`LogPartition` with the exact Hessian Jᵀ Cov(q) J, for priors under which p(z) factorises."""

        def set_output_constraint_multipliers(self, output_con_multiplier_values):
            self._lam = np.asarray(output_con_multiplier_values, dtype=np.float64).copy()

        def hessian(self):
            """∂² log Z / ∂u², sparse (n_inputs, n_inputs)."""
            q, _ = self._eval()
            cov = self.sum_product.covariance(q)
            return (self.JT @ cov @ self.J).tocsr()

        def hessian_structure(self):
            """Fixed (rows, cols) of the lower triangle: the pattern of |J|ᵀ B |J| with B every K × K block of
            the covariance. PyNumero maps the Hessian entries once, at its first evaluation; scipy's sparse
            products drop entries that sum to exactly 0 (as at the uniform start, where Cov·1 = 0), so the pattern
            of Jᵀ Cov J itself changes with the values and emptied out entirely on one hierarchy batch."""
            if getattr(self, "_hess_rc", None) is None:
                h, K = self.phi0.shape
                r = np.repeat(np.arange(h) * K, K * K) + np.tile(np.repeat(np.arange(K), K), h)
                c = np.repeat(np.arange(h) * K, K * K) + np.tile(np.tile(np.arange(K), K), h)
                B = sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(h * K, h * K))
                Ja = self.J.copy()
                Ja.data[:] = 1.0               # the structural pattern, whatever the values (τ may be 0)
                P = sp.tril(Ja.T @ B @ Ja).tocoo()
                self._hess_rc = (P.row.astype(np.int64), P.col.astype(np.int64))
            return self._hess_rc

        def evaluate_hessian_outputs(self):
            rows, cols = self.hessian_structure()
            H = self.hessian()
            vals = np.asarray(H[rows, cols]).ravel() * float(self._lam[0])
            return sp.coo_matrix((vals, (rows, cols)), shape=H.shape)

    return LogPartition, LogPartitionHessian


_CLASSES = {}


def _log_partition_class(hessian):
    if not _CLASSES:
        _CLASSES["plain"], _CLASSES["hessian"] = _make_log_partition_classes()
    return _CLASSES["hessian" if hessian else "plain"]


def log_partition_model(names, phi0, J, sum_product, hessian=True):
    """The grey-box model of log Z(β) (a PyNumero ExternalGreyBoxModel; with the exact Hessian when ``hessian``).

    Parameters
    ----------
    names : list of str
        One name per input (node marginal mu[a, k]).
    phi0 : ndarray, shape (h, K)
    J : scipy.sparse matrix, shape (h·K, n_inputs)
        φ = φ₀ − J u.
    sum_product : HiddenSumProduct
    """
    return _log_partition_class(hessian)(names, phi0, J, sum_product)


def beta_dual_model(structure, prior, theta, transition, C, examples):
    """The β-dual (12) of ``examples`` in marginal variables, as one Pyomo NLP (a sum of independent problems).

    Parameters
    ----------
    structure : HiddenStructure
    prior : HiddenPrior
    theta : ndarray, shape (N, K)
        Node scores μ_wᵀf at every node (state, start/stop, bias terms).
    transition : ndarray, shape (K, K)
        τ, the transition block of μ_w.
    C : float
    examples : array of int
        Examples of this program (each should have an observed–hidden edge).

    Returns
    -------
    pyomo.core.ConcreteModel
        Variables ``mu[a, k]`` (observed node a, global index) and ``mu_edge[c, k, l]`` (edge parent[c] → c, both
        observed); constraints ``normalised`` (Σ_k mu[a, k] = C at the top node a of every observed tree — the
        other nodes inherit it through consistency), ``consistent_parent``, ``consistent_child``; the grey-box block
        ``log_partition`` with output ``log_Z``; ``objective`` maximised. ``model.hidden_nodes`` are the global
        indices of the hidden nodes whose tilts ``model.log_partition.get_external_model().phi()`` gives.
    """
    import pyomo.environ as pyo
    from pyomo.contrib.pynumero.interfaces.external_grey_box import ExternalGreyBoxBlock
    from pyomo.core.expr.numeric_expr import LinearExpression

    K = structure.K
    examples = np.sort(np.asarray(examples, dtype=np.int64))
    nodes = structure.nodes_of(examples)
    hid_mask = structure.hidden[nodes]
    obs, hid = nodes[~hid_mask], nodes[hid_mask]
    par = structure.parent[nodes]
    child_e = nodes[par >= 0]
    par_e = structure.parent[child_e]
    hc, hp = structure.hidden[child_e], structure.hidden[par_e]
    oo = child_e[~hc & ~hp]
    mixed = ~hc != ~hp
    mc, mp = child_e[mixed], par_e[mixed]
    a_is_parent = hc[mixed]
    a = np.where(a_is_parent, mp, mc)
    b = np.where(a_is_parent, mc, mp)
    A = np.unique(a)
    inp = np.searchsorted(A, a)
    loc_b = np.searchsorted(hid, b)
    g = structure.gold

    # φ = φ₀ − J u over (hidden node, label) rows and (input node, label) columns
    kk, ll = np.meshgrid(np.arange(K), np.arange(K), indexing="ij")
    tau_or = np.where(a_is_parent[:, None, None], transition[None, :, :], transition.T[None, :, :])  # (e, k, l)
    rows = (loc_b[:, None, None] * K + ll[None]).ravel()
    cols = (inp[:, None, None] * K + kk[None]).ravel()
    J = sp.csr_matrix((tau_or.ravel(), (rows, cols)), shape=(len(hid) * K, len(A) * K))
    phi0 = np.zeros((len(hid), K))
    np.add.at(phi0, loc_b, C * tau_or[np.arange(len(a)), g[a], :])

    pos_of = np.full(structure.N, -1)
    pos_of[hid] = np.arange(len(hid))
    hpar = structure.hparent[hid]
    hpar_local = np.where(hpar >= 0, pos_of[np.maximum(hpar, 0)], -1)
    sum_product = HiddenSumProduct(hpar_local, prior, structure.kind == "chain")

    m = pyo.ConcreteModel(name="pomen_beta_dual")
    m.C = pyo.Param(initialize=float(C))
    m.examples = examples
    m.hidden_nodes = hid
    m.observed = pyo.Set(initialize=obs.tolist(), ordered=True)
    m.labels = pyo.RangeSet(0, K - 1)
    m.obs_edges = pyo.Set(initialize=oo.tolist(), ordered=True)
    m.mu = pyo.Var(m.observed, m.labels, domain=pyo.NonNegativeReals, initialize=float(C) / K)
    m.mu_edge = pyo.Var(m.obs_edges, m.labels, m.labels, domain=pyo.NonNegativeReals,
                        initialize=float(C) / K ** 2)
    parent = structure.parent
    # Σ_k mu[a, k] = C is stated at the top node of every observed tree only: local consistency carries it down
    # the edges, and stating it again at every node would make the equality constraints linearly dependent
    # (which interior-point solvers take badly)
    tops = obs[~np.isin(obs, oo)]
    m.tops = pyo.Set(initialize=tops.tolist(), ordered=True)
    m.normalised = pyo.Constraint(m.tops, rule=lambda m, a: sum(m.mu[a, k] for k in m.labels) == m.C)
    m.consistent_parent = pyo.Constraint(
        m.obs_edges, m.labels, rule=lambda m, c, k: sum(m.mu_edge[c, k, l] for l in m.labels)
        == m.mu[int(parent[c]), k])
    m.consistent_child = pyo.Constraint(
        m.obs_edges, m.labels, rule=lambda m, c, l: sum(m.mu_edge[c, k, l] for k in m.labels) == m.mu[c, l])

    names = [f"mu[{int(x)},{k}]" for x in A for k in range(K)]
    ex_model = log_partition_model(names, phi0, J, sum_product, hessian=sum_product.factorised)
    m.log_partition = ExternalGreyBoxBlock()
    m.log_partition.set_external_model(ex_model, inputs=[m.mu[int(x), k] for x in A for k in range(K)])

    # −log Z(β) = Σ_{a,k} mu[a,k](θ_a(k) + 1[k ≠ yᵢ_a]) + Σ_{c,k,l} mu_edge[c,k,l] τ(k,l) − C·s_obs(yᵢ) − log_Z
    coef_node = theta[obs] + (np.arange(K)[None, :] != g[obs][:, None])
    gold_score = float(theta[obs, g[obs]].sum() + transition[g[parent[oo]], g[oo]].sum())
    vars_, coefs = [], []
    for r, x in enumerate(obs.tolist()):
        for k in range(K):
            vars_.append(m.mu[x, k])
            coefs.append(float(coef_node[r, k]))
    tflat = transition.ravel().tolist()
    for c in oo.tolist():
        for k in range(K):
            for l in range(K):
                vars_.append(m.mu_edge[c, k, l])
                coefs.append(tflat[k * K + l])
    m.linear_part = pyo.Expression(expr=LinearExpression(constant=-float(C) * gold_score, linear_coefs=coefs,
                                                         linear_vars=vars_))
    m.objective = pyo.Objective(expr=m.linear_part - m.log_partition.outputs["log_Z"], sense=pyo.maximize)
    return m


def solve_beta_dual(structure, prior, theta, transition, C, examples, solver, options=None, time_limit=None):
    """Solve (12) for ``examples`` with ``solver`` (an Ipopt :class:`~mmprog.solvers.Solver`), capped at
    ``time_limit`` seconds (default :data:`mmprog.solvers.SOLVE_TIME_LIMIT`).

    Returns
    -------
    phi : ndarray, shape (h, K)
        The optimal tilts of the hidden nodes ``hidden_nodes``; p(z) ∝ p₀(z) exp φ(z).
    hidden_nodes : ndarray of int, shape (h,)
    dual_value : float
        Σᵢ max_β −log Zᵢ(β) over the examples.
    model : ConcreteModel
    status : SolveStatus
    """
    import warnings

    m = beta_dual_model(structure, prior, theta, transition, C, examples)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        from ..solvers.base import SOLVE_TIME_LIMIT
        status = solver.solve(m, options=dict(options or {}), load_duals=False, raise_on_failure=False,
                              time_limit=time_limit or SOLVE_TIME_LIMIT)
    if not status.ok:
        # Ipopt's "acceptable" point (converged to its looser acceptable tolerances) is kept and counted by the
        # caller; anything else has no trustworthy optimum
        if "Acceptable" not in status.solver_message:
            raise SolverError(f"the beta-dual (12) of examples {examples[:5].tolist()}... ended with "
                              f"{status.termination} ({status.solver_message})", termination=status.termination,
                              solver_message=status.solver_message)
        log.warning("beta-dual (12): %s", status.solver_message)
    ex = m.log_partition.get_external_model()
    u = np.array([v.value for v in m.log_partition.inputs.values()], dtype=np.float64)
    phi = ex.phi(u)
    import pyomo.environ as pyo
    return phi, m.hidden_nodes, float(pyo.value(m.objective)), m, status


# ================================================================================================ the P2 objective
def p2_objective(w, C, kl, hinge):
    """J = ½‖μ_w‖² + Σᵢ KL(p(zᵢ)‖p₀) + C Σᵢ Hᵢ — problem P2 (7) at p(w) = N(μ_w, I) and the given p(z)."""
    return 0.5 * float(np.dot(w, w)) + float(kl) + float(C) * float(np.sum(np.maximum(hinge, 0.0)))


# ================================================================================================ the program
@register("pomen")
class PoMEN(M3N):
    """PoMEN (NIPS 2008): EM over the M³N master (10) and the β-dual NLP (12); see the module docstring.

    Parameters
    ----------
    C : float
    n_em : int
        Number of Step-2 updates of p(z) (the run is Step 1, then n_em × (Step 2, Step 1)).
    prior : str or dict
        p₀(z), see :func:`make_prior`.
    predict : {"h2-prior", "h2-posterior", "joint"}
        Prediction rule on hierarchies (chains: Viterbi on μ_w).
    nlp_solver : str
        Registered NLP solver for Step 2 (default ``"ipopt"``, Pyomo's cyipopt).
    nlp_options : dict, optional
        Options passed to it.
    batch : int
        Examples per Step-2 NLP (a block-separable sum of their β-duals; 1 = one NLP per example).
    master : {"dual", "primal", "auto"}
        The M³N master form of Step 1 (default the Gram dual: HiGHS's QP solver returned "Not Set" on primal
        masters of hierarchical data here).
    init : {"prior", "posterior", "random"}
        Starting p(z). ``"prior"``: p₀ (the paper). Under a uniform p₀ on hierarchies whose hidden nodes touch no
        observed–observed edge this start is a fixed point of the alternation (every hidden label is exchangeable,
        the ℓ2 master spreads τ evenly over them, and Step 2 gives back the uniform tilt), so two starts that break
        the symmetry are offered: ``"posterior"`` runs Step 1 at p₀ and tilts every hidden node by its own score
        and its observed neighbours' gold labels, φ_b(z) = μ_wᵀ(state and bias features of b at z) +
        Σ_{a ~ b} τ(yᵢ_a, z) (oriented); ``"random"`` draws φ_b(z) ~ N(0, 1) (``seed``). Only the steps after the
        start decrease J.
    seed : int
        Seed of ``init="random"``.
    """

    checkpointable = False   # the outer loop's state (β, Σ, q(z)) is not in the working set

    paper = "Zhu, Xing & Zhang, Partially observed maximum entropy discrimination Markov networks, NIPS 2008"
    equations = "P2 (7); Step 1 (10); Step 2 (11)-(12); priors (13); prediction h2 (6)"
    params_doc = {"n_em": "an int >= 0", "prior": '"uniform", "markov" or a dict', "predict": "h2-prior|h2-posterior|joint",
                  "nlp_solver": 'a registered NLP solver ("ipopt")', "nlp_options": "a dict", "batch": "an int >= 1",
                  "master": '"primal", "dual" or "auto"', "init": "prior|posterior|random", "seed": "an int"}

    def __init__(self, C=1.0, n_em=3, prior="uniform", predict="h2-prior", nlp_solver="ipopt", nlp_options=None,
                 batch=32, master="dual", init="prior", seed=0):
        super().__init__(C, master=master)
        check_param("n_em", n_em, isinstance(n_em, (int, np.integer)) and not isinstance(n_em, bool) and n_em >= 0,
                    "an int >= 0")
        check_param("predict", predict, predict in PREDICT_RULES, " or ".join(PREDICT_RULES))
        check_param("batch", batch, isinstance(batch, (int, np.integer)) and batch >= 1, "an int >= 1")
        if not (prior in ("uniform", "markov") or isinstance(prior, (dict, HiddenPrior))):
            raise ParameterError(f'prior must be "uniform", "markov" or a dict; got {prior!r}')
        self.n_em = int(n_em)
        self.prior = prior
        self.predict = predict
        self.nlp_solver = nlp_solver
        self.nlp_options = dict(nlp_options or {})
        self.batch = int(batch)
        check_param("init", init, init in ("prior", "posterior", "random"), '"prior", "posterior" or "random"')
        self.init = init
        self.seed = int(seed)
        self._seed = None

    def params(self):
        prior = self.prior.spec() if isinstance(self.prior, HiddenPrior) else self.prior
        return {"C": self.C, "n_em": self.n_em, "prior": prior, "predict": self.predict,
                "nlp_solver": self.nlp_solver, "nlp_options": self.nlp_options, "batch": self.batch,
                "master": self.master, "init": self.init, "seed": self.seed}

    def add_cuts(self, model, cuts):
        # remember the labeling behind every cut, in working-set order: the next EM round seeds its master with
        # the support of this one re-evaluated under the new p(z) (old rows are constraints of the old problem)
        if cuts.labelings is not None and len(cuts):
            model.master_state.labelings.append((np.asarray(cuts.example).copy(),
                                                 np.asarray(cuts.labelings).copy()))
        else:
            model.master_state.labelings_complete = False
        return super().add_cuts(model, cuts)

    @staticmethod
    def support_of(model, alpha, tol=1e-9):
        """(examples, labelings) of the cuts with a positive multiplier, or None."""
        parts = model.master_state.labelings
        if not parts or not model.master_state.labelings_complete:
            return None
        T = max(l.shape[1] for _, l in parts)
        ex = np.concatenate([e for e, _ in parts])
        lab = np.concatenate([np.pad(l, ((0, 0), (0, T - l.shape[1])), constant_values=-1) for _, l in parts])
        if len(ex) != len(alpha):
            return None
        keep = np.asarray(alpha) > tol
        return ex[keep], lab[keep]

    def _seed_cuts(self, emap, prepared):
        if self._seed is None or not len(self._seed[0]):
            return None
        ex, lab = self._seed
        dF, dl = emap.delta(prepared, ex, lab)
        return Cuts(ex, dF, dl, lab)

    def step2(self, w, structure, prior, base, prepared, solver, hinge0):
        """Solve the β-duals (12) of every example with an observed–hidden edge.

        Returns
        -------
        phi : ndarray, shape (N, K)
        dual_total : float
            Σᵢ of the β-dual optima (examples without observed–hidden edges contribute C·Hᵢ at q = p₀).
        seconds : float
        """
        t0 = time.perf_counter()
        theta, trans = _node_scores(base, w, prepared, np.arange(prepared.n))
        phi = np.zeros((structure.N, structure.K))
        todo = np.flatnonzero(structure.n_mixed > 0)
        dual_total = float(self.C * np.sum(np.maximum(hinge0[structure.n_mixed == 0], 0.0)))
        self._step2_acceptable = 0
        self._step2_split = 0
        for s in range(0, len(todo), self.batch):
            ex = todo[s:s + self.batch]
            try:
                parts = [solve_beta_dual(structure, prior, theta, trans, self.C, ex, solver, self.nlp_options)]
            except SolverError as exc:
                if len(ex) == 1:
                    raise
                # (12) is a sum of independent per-example problems: a batch Ipopt could not solve (seen:
                # Error_In_Step_Computation on a 5-example hierarchy batch) is solved again one example at a
                # time, whose smaller KKT systems are better conditioned; a single example that fails still raises
                log.warning("beta-dual (12): %s; solving its %d examples one by one", exc, len(ex))
                self._step2_split += 1
                parts = [solve_beta_dual(structure, prior, theta, trans, self.C, ex[k:k + 1], solver,
                                         self.nlp_options) for k in range(len(ex))]
            for ph, hid, val, _, status in parts:
                self._step2_acceptable += not status.ok
                phi[hid] = ph
                dual_total += val
        return phi, dual_total, time.perf_counter() - t0

    def init_tilt(self, w, structure, base, prepared):
        """The starting tilts φ (N, K) of ``init="posterior"``: every hidden node's own score at z plus the
        transition scores to its observed neighbours' gold labels, under μ_w."""
        theta, trans = _node_scores(base, w, prepared, np.arange(prepared.n))
        phi = np.where(structure.hidden[:, None], theta, 0.0)
        c = structure.mixed_child
        p = structure.parent[c]
        down = structure.hidden[c]                     # observed parent, hidden child
        g = structure.gold
        np.add.at(phi, c[down], trans[g[p[down]], :])
        np.add.at(phi, p[~down], trans[:, g[c[~down]]].T)
        return phi

    def _step1(self, base, structure, prepared, q, oracle, engine_kw):
        """The M³N step (10) at p(z) with marginals q: a fresh master seeded with the support of the previous one
        (re-evaluated under q), grown by the engine. Returns (run, hinge at its w)."""
        emap = ExpectedFeatureMap(base, structure, q)
        orc = oracle.like(emap, prepared)
        try:
            model = self.build(self._dims)
            seed = self._seed_cuts(emap, prepared)
            if seed is not None:
                self.add_cuts(model, seed)
            kw = dict(engine_kw)
            if kw.get("time_limit") is not None:
                kw["time_limit"] = max(1e-3, kw["time_limit"] - (time.perf_counter() - self._t_start))
            run = self._engine.cutting_plane(self, orc, model=model, **kw)
            self._seed = self.support_of(model, run.solution.alpha)
            _, hinge = orc.separate(run.solution.w)
        finally:
            orc.close()
        return run, np.maximum(hinge, 0.0)

    def fit(self, oracle, engine, *, solver, slack="n", eps=None, max_iter=500, time_limit=None, drop_after=None,
            progress=False, show=None, show_every=None, snapshot_iters=(), solve_options=None,
            solve_time_limit=None, gap_tol=None):
        """Run the EM alternation; returns the :class:`~mmprog.engine.records.EngineRun` of the last Step 1 with the
        EM read-outs in ``solution.extra`` (``em_history``, ``em_objective``, ``hidden_marginals``) and the h₂
        predictor map in ``feature_map``."""
        from .. import solvers as solver_registry
        from ..solvers import ProblemClass

        base, prepared = oracle.fmap, oracle.prepared
        structure = HiddenStructure(base, prepared)
        prior = make_prior(self.prior, structure.K, structure)
        needs_step2 = self.n_em > 0 and len(structure.mixed_child) > 0
        nlp = None
        if needs_step2:
            nlp = solver_registry.get_solver(self.nlp_solver)
            nlp.require(ProblemClass.NLP)
        solver.require(self.problem_class)
        engine_kw = dict(solver=solver, slack=slack, eps=eps, max_iter=max_iter, time_limit=time_limit,
                         drop_after=drop_after, progress=progress, show=show, show_every=show_every,
                         snapshot_iters=snapshot_iters, solve_options=solve_options)
        if solve_time_limit is not None:
            engine_kw["solve_time_limit"] = solve_time_limit
        if gap_tol is not None:
            engine_kw["gap_tol"] = gap_tol
        self._dims = Dims(n=prepared.n, dim=base.dim, n_slacks=prepared.n if slack == "n" else 1,
                          groups=base.groups, group_names=base.group_names)
        self._seed = None
        self._engine = engine
        self._t_start = time.perf_counter()
        em, history, n_iter = [], [], 0
        timings = {"oracle": 0.0, "pyomo": 0.0, "solver": 0.0, "step2": 0.0}

        def record(step, r, w, kl, hinge, **more):
            J = p2_objective(w, self.C, kl, hinge)
            em.append({"round": r, "step": step, "objective": J, "kl": float(kl), "hinge": float(np.sum(hinge)),
                       "regulariser": 0.5 * float(w @ w), **more})
            log.info("PoMEN round %d step %s: J = %.8g", r, step, J)

        def step1(q, r, step):
            nonlocal n_iter
            run, hinge = self._step1(base, structure, prepared, q, oracle, engine_kw)
            history.extend(run.history)
            n_iter += run.n_iter
            for k in ("oracle", "pyomo", "solver"):
                timings[k] += run.timings.get(k, 0.0)
            record(step, r, run.solution.w, kl, hinge, master_objective=float(run.solution.objective),
                   n_iter=run.n_iter, termination=run.termination)
            return run

        phi = np.zeros((structure.N, structure.K))
        q, kl = hidden_distribution(structure, prior, phi)
        rounds = self.n_em if needs_step2 else 0
        if rounds and self.init != "prior":
            if self.init == "posterior":
                run = step1(q, -1, "w")
                phi = self.init_tilt(run.solution.w, structure, base, prepared)
            else:
                phi = np.random.default_rng(self.seed).normal(size=phi.shape)
            phi[~structure.hidden] = 0.0
            q, kl = hidden_distribution(structure, prior, phi)
        for r in range(rounds + 1):
            run = step1(q, r, "w")
            if r == rounds or run.termination in ("time_limit", "interrupted"):
                break
            w = run.solution.w
            _, hinge = oracle.like(ExpectedFeatureMap(base, structure, q), prepared, backend="serial").separate(w)
            phi, dual_total, t2 = self.step2(w, structure, prior, base, prepared, nlp, np.maximum(hinge, 0.0))
            timings["step2"] += t2
            q, kl = hidden_distribution(structure, prior, phi)
            _, hinge = oracle.like(ExpectedFeatureMap(base, structure, q), prepared, backend="serial").separate(w)
            record("z", r, w, kl, np.maximum(hinge, 0.0), dual_objective=0.5 * float(w @ w) + dual_total,
                   seconds=t2, nlp_solves=int(-(-len(np.flatnonzero(structure.n_mixed > 0)) // self.batch)),
                   nlp_acceptable=self._step2_acceptable, nlp_batches_split=self._step2_split)
        self._seed = None
        timings["total"] = time.perf_counter() - self._t_start
        hidden_marginals = [q[structure.offsets[i]:structure.offsets[i + 1]] for i in range(structure.n)]
        run.solution.extra.update({
            "certifies": "the last Step 1, the M³N (10) on the expected features of the last p(z) (NIPS 2008); the "
                         "EM alternation has no lower bound on P2 itself (em_objective holds its values)",
            "hidden_marginals": hidden_marginals, "em_history": em,
            "em_objective": [e["objective"] for e in em if e["round"] >= 0], "prior": prior.spec(),
            "n_em": rounds})
        run.history, run.n_iter, run.timings = history, n_iter, timings
        if getattr(base, "kind", None) == "hierarchy":
            run.feature_map = base.with_prediction(self.predict, prior.node, prior.root, prior.edge)
        else:
            run.feature_map = base
        return run


# ----------------------------------------------------------------------------------------------------------------
# Duality: PoMEN's statements (Step 1 as P0, the EM descent, (11)–(12), the β-dual (12) against enumeration), for ``mmprog verify``
# ----------------------------------------------------------------------------------------------------------------

@duality_for("pomen")
class PoMENDuality(Duality):
    """PoMEN: the last Step 1 master (the M³N (10) on expected features) with P0's statements; the EM descent of
    the P2 objective; strong duality of (11)–(12) after every Step 2; and the β-dual (12) of one example solved by
    PoMEN's marginal NLP against the same program over every labeling (enumerated), with its gradient
    ∂log Z/∂β(y) = μ_wᵀE_{p(z)}[Δf(y, z)] − Δℓ(y)."""

    fit_params = {"n_em": 2}
    data_note = "a quarter of the labels hidden when the data hide none"

    def fit(self, dataset, trainer, solver=None, C=1.0, slack="n", eps=1e-4, **kw):
        Y = getattr(dataset, "Y", None)
        if Y is not None and not any((np.asarray(y) < 0).any() for y in Y) and hasattr(dataset, "hide_labels"):
            dataset = dataset.hide_labels(0.25, seed=0)
        res = trainer(dataset, program="pomen", C=C, solver=solver, slack=slack, eps=eps,
                      **{**self.fit_params, **kw})
        res.verify_dataset = dataset
        return res

    def dual_model(self, result):
        return p0_dual_model(working_set_arrays(result), name="pomen_step1_dual")

    def checks(self, ctx):
        yield from p0_checks(ctx, theorem3=False)
        yield from pomen_em_checks(ctx)
        yield from pomen_beta_dual_checks(ctx)


def pomen_em_checks(ctx):
    res = ctx.result
    em = [e for e in res.extra.get("em_history", []) if e["round"] >= 0]
    stmt = "EM (NIPS 2008, section 3.1): the P2 objective J never increases along the steps"
    if len(em) < 2:
        yield ctx.skip(stmt, "no EM steps (no hidden labels next to observed ones, or n_em = 0)")
    else:
        J = np.array([e["objective"] for e in em])
        n = len(res.xi) if res.slack == "n" else int(res.model.dims.n)
        eps = 1e-4
        # each step minimises J over its block up to Step 1's ε (C·n·ε in J) and Ipopt's tolerance
        yield ctx.check(stmt + " (largest increase)", float(np.max(np.diff(J), initial=0.0)), 0.0,
                        res.params["C"] * n * eps + 1e-6 * scale_of(J), "≤",
                        reason=f"{len(J)} steps, J from {J[0]:.8g} to {J[-1]:.8g}")
    z = [e for e in em if e["step"] == "z" and "dual_objective" in e]
    stmt = "strong duality of (11)–(12) after Step 2: J = ½‖μ_w‖² + Σᵢ (β-dual optimum)ᵢ"
    if not z:
        yield ctx.skip(stmt, "no Step 2 was run")
        return
    gaps = [abs(e["objective"] - e["dual_objective"]) for e in z]
    worst = z[int(np.argmax(gaps))]
    yield ctx.check(stmt, worst["objective"], worst["dual_objective"], 1e-5 * scale_of(worst["objective"]),
                    reason=f"worst of {len(z)} Step-2 solves (Ipopt)")


def _enumerated_beta_dual(fmap, prepared, i, w, K):
    """The β-dual (12) of example ``i`` over every labeling y of its observed positions and z of its hidden ones,
    under a uniform p₀(z): returns (M (ny, nz), labelings y) with M[y, z] = μ_wᵀΔf(y, z) − Δℓ(y)."""
    import itertools
    T = int(prepared.lengths[i])
    gold = np.asarray(prepared.gold[i, :T])
    obs, hid = np.flatnonzero(gold >= 0), np.flatnonzero(gold < 0)
    ys = np.array(list(itertools.product(range(K), repeat=len(obs))), dtype=np.int64).reshape(-1, len(obs))
    zs = np.array(list(itertools.product(range(K), repeat=len(hid))), dtype=np.int64).reshape(-1, len(hid))
    M = np.zeros((len(ys), len(zs)))
    for b, z in enumerate(zs):
        truth = gold.copy()
        truth[hid] = z
        labs = np.tile(truth, (len(ys), 1))
        labs[:, obs] = ys
        idx = np.full(len(ys), i)
        f_truth = fmap.joint_features(prepared, idx[:1], truth[None, :]) @ w
        f_y = fmap.joint_features(prepared, idx, labs) @ w
        M[:, b] = np.asarray(f_truth).ravel()[0] - np.asarray(f_y).ravel() - (ys != gold[obs]).sum(axis=1)
    return M, ys


def _solve_beta_dual_enumerated(M, C):
    """max_{β ≥ 0, Σβ = C} −log mean_z exp(βᵀM[:, z]) (uniform p₀) by SLSQP on the simplex; returns (value, β)."""
    from scipy.optimize import minimize
    from scipy.special import logsumexp
    ny, nz = M.shape

    def f(b):
        return logsumexp(b @ M) - np.log(nz)

    def g(b):
        s = b @ M
        p = np.exp(s - logsumexp(s))
        return M @ p
    best = None
    for start in (np.full(ny, C / ny), C * np.eye(ny)[int(np.argmin(M.mean(axis=1)))] * 0.9 + 0.1 * C / ny):
        r = minimize(f, start, jac=g, method="SLSQP", bounds=[(0, None)] * ny,
                     constraints=[{"type": "eq", "fun": lambda b: b.sum() - C, "jac": lambda b: np.ones(ny)}],
                     options={"ftol": 1e-14, "maxiter": 1000})
        if best is None or r.fun < best.fun:
            best = r
    return -float(best.fun), np.maximum(best.x, 0.0)


def pomen_beta_dual_checks(ctx):
    """(12) of one example by PoMEN's marginal NLP (Ipopt) = (12) over all labelings (SLSQP), and the gradient
    condition at its optimum: the labelings carrying β > 0 are those of smallest expected margin
    E_{p(z)}[μ_wᵀΔf(y, z)] − Δℓ(y) = ∂log Z/∂β(y)."""
    stmt_v = "β-dual (12), one example: PoMEN's marginal NLP optimum = the optimum over all labelings (enumerated)"
    stmt_g = ("β-dual gradient (NIPS 2008): labelings with β(y) > 0 have the smallest ∂log Z/∂β(y) = "
              "E_p(z)[μ_wᵀΔf(y,z)] − Δℓ(y) (spread among them)")
    res = ctx.result
    if ctx.dataset is None or res.params.get("prior") != "uniform":
        yield ctx.skip(stmt_v, "needs the training data and the uniform prior p₀(z)")
        return
    from ..solvers import get_solver
    fmap = res.fmap
    if getattr(fmap, "kind", "chain") != "chain":
        yield ctx.skip(stmt_v, "the enumeration is written for chains")
        return
    prepared = fmap.prepare(ctx.dataset)
    st = HiddenStructure(fmap, prepared)
    K = st.K
    cand = [i for i in np.flatnonzero(st.n_mixed > 0) if K ** int(prepared.lengths[i]) <= 4096]
    if not cand:
        yield ctx.skip(stmt_v, "no example with an observed–hidden edge small enough to enumerate")
        return
    i = int(cand[0])
    w = np.asarray(res.w, dtype=np.float64)
    C = float(res.params["C"])
    prior = make_prior("uniform", K, st)
    theta, trans = _node_scores(fmap, w, prepared, np.arange(prepared.n))
    nlp, why = ctx.solver_for("NLP") if res.params.get("nlp_solver") is None else (res.params["nlp_solver"], None)
    if nlp is None:
        yield ctx.skip(stmt_v, why)
        return
    _, _, v_nlp, _, _ = solve_beta_dual(st, prior, theta, trans, C, np.array([i]), get_solver(nlp))
    M, ys = _enumerated_beta_dual(fmap, prepared, i, w, K)
    v_enum, beta = _solve_beta_dual_enumerated(M, C)
    yield ctx.check(stmt_v, v_nlp, v_enum, 1e-5 * scale_of(v_enum),
                    reason=f"example {i}: {M.shape[0]} labelings y × {M.shape[1]} hidden z, NLP by {nlp}")
    from scipy.special import logsumexp
    s = beta @ M
    pz = np.exp(s - logsumexp(s))
    grad = M @ pz                                      # ∂log Z/∂β(y)
    on = beta > 1e-6 * C
    yield ctx.check(stmt_g, float(grad[on].max() - grad.min()), 0.0, 1e-5 * scale_of(grad),
                    reason=f"{int(on.sum())} of {len(beta)} labelings carry β")
