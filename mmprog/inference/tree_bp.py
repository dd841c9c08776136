"""Exact belief propagation on forests of pairwise models (sum-product and max-product), level by level.

A forest of N nodes is given by ``parent`` (N,), -1 for roots. Each node c takes a label in 0..K-1 and a labeling y
scores

    s(y) = Σ_c node_pot[c, y_c] + Σ_{c : parent[c] >= 0} edge_pot[c, y_{parent[c]}, y_c]

(log-potentials). This is the model of the partially observed max-margin networks (PoMEN; Zhu, Xing & Zhang, NIPS
2008) on their two-level hierarchies (inner hidden nodes over observed leaves): their EM steps need the marginals of
the hidden labels (sum-product) and loss-augmented MAP labelings (max-product, eqs. (8)-(12)).

Messages are passed for all nodes of one depth at once (numpy over the nodes of a level and over labels), so a
forest of many small trees — a whole batch of examples joined into one forest — costs O(depth) vectorised steps.
"""
from __future__ import annotations

import numpy as np

from mmprog.exceptions import DataError

__all__ = ["tree_sum_product", "tree_max_product"]


def _check_forest(parent, node_pot, edge_pot):
    """Validate a forest and its potentials; return (parent, node_pot, edge_pot, levels, root_of)."""
    p = np.asarray(parent)
    if p.ndim != 1 or p.size == 0 or not np.issubdtype(p.dtype, np.integer):
        raise DataError(f"parent must be a non-empty 1-d integer array (N,); got shape {p.shape}, dtype {p.dtype}")
    N = p.size
    npot = np.asarray(node_pot, dtype=np.float64)
    if npot.ndim != 2 or npot.shape[0] != N or npot.shape[1] < 1:
        raise DataError(f"node_pot must have shape (N, K) with N = {N}; got shape {npot.shape}")
    K = npot.shape[1]
    epot = np.asarray(edge_pot, dtype=np.float64)
    if epot.shape != (N, K, K):
        raise DataError(f"edge_pot must have shape (N, K, K) = {(N, K, K)}; got shape {epot.shape}")
    if p.min() < -1 or p.max() >= N:
        c = int(np.flatnonzero((p < -1) | (p >= N))[0])
        raise DataError(f"parent[{c}] = {int(p[c])} is outside [-1, N = {N}); use -1 for a root")
    for name, arr in (("node_pot", npot), ("edge_pot", epot)):
        bad = np.isnan(arr) | (arr == np.inf)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            raise DataError(f"{name}{list(idx)} = {arr[idx]}; log-potentials must be finite or -inf")
    p = p.astype(np.intp)
    depth = np.full(N, -1, dtype=np.intp)
    depth[p == -1] = 0
    levels = [np.flatnonzero(depth == 0)]
    root_of = np.arange(N)
    while True:  # one iteration per depth; depth[-1] of a root's parent is never read because p >= 0 is tested
        cur = len(levels)
        new = np.flatnonzero((depth == -1) & (p >= 0) & (depth[np.maximum(p, 0)] == cur - 1))
        if new.size == 0:
            break
        depth[new] = cur
        root_of[new] = root_of[p[new]]
        levels.append(new)
    if (depth == -1).any():
        c = int(np.flatnonzero(depth == -1)[0])
        raise DataError(f"parent is not a forest: node {c} lies on a cycle or below one (parent[{c}] = {int(p[c])})")
    return p, npot, epot, levels, root_of


def _lse(x, axis):
    """log Σ exp along ``axis``, max-shifted; -inf when every term is -inf."""
    m = x.max(axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(x - m).sum(axis=axis)) + np.squeeze(m, axis=axis)


def tree_sum_product(parent, node_pot, edge_pot):
    """Marginals and log-partition of p(y) ∝ exp s(y) on a forest (exact: upward then downward pass).

    Parameters
    ----------
    parent : array_like of int, shape (N,)
        ``parent[c]`` is c's parent, -1 for a root; must describe a forest (no cycles).
    node_pot : array_like, shape (N, K)
        Log-potentials of node labels.
    edge_pot : array_like, shape (N, K, K)
        ``edge_pot[c, a, b]`` is the log-potential of parent label a with child c's label b (row c of a root unused).
        Log-potentials may be ``-inf`` (forbidden); NaN and +inf are errors.

    Returns
    -------
    node_marginals : ndarray, shape (N, K)
        p(y_c = k).
    edge_marginals : ndarray, shape (N, K, K)
        ``[c, a, b]`` = p(y_{parent[c]} = a, y_c = b); zero rows for roots.
    log_partition : float
        log Σ_y exp s(y) of the whole forest (the sum of its trees' log-partitions).
    """
    p, npot, epot, levels, root_of = _check_forest(parent, node_pot, edge_pot)
    N, K = npot.shape
    inc = np.zeros((N, K))  # Σ of log-messages from the children, per node and label
    up = np.zeros((N, K))  # up[c, a]: message from child c to its parent about the parent's label a
    for nodes in reversed(levels[1:]):
        below = npot[nodes] + inc[nodes]  # (n, K) over the child's label b
        up[nodes] = _lse(epot[nodes] + below[:, None, :], axis=2)
        np.add.at(inc, p[nodes], up[nodes])
    roots = levels[0]
    log_z_tree = np.zeros(N)
    log_z_tree[roots] = _lse(npot[roots] + inc[roots], axis=1)
    log_z_tree = log_z_tree[root_of]
    log_partition = float(log_z_tree[roots].sum())

    down = np.zeros((N, K))  # down[c, b]: message into c from the rest of its tree above it
    edge_marg = np.zeros((N, K, K))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        z = np.where(np.isfinite(log_z_tree), log_z_tree, np.inf)  # a tree with no finite labeling: marginals 0
        for nodes in levels[1:]:
            par = p[nodes]
            # cavity of the parent without this child's own message; where that message is -inf every joint term
            # through this parent label is -inf anyway, so the cavity there can be -inf as well (avoids -inf - -inf)
            cav = npot[par] + down[par] + inc[par] - up[nodes]
            cav[np.isneginf(up[nodes])] = -np.inf
            down[nodes] = _lse(cav[:, :, None] + epot[nodes], axis=1)
            joint = cav[:, :, None] + epot[nodes] + (npot[nodes] + inc[nodes])[:, None, :]
            edge_marg[nodes] = np.exp(joint - z[nodes][:, None, None])
        node_marg = np.exp(npot + inc + down - z[:, None])
    return node_marg, edge_marg, log_partition


def tree_max_product(parent, node_pot, edge_pot):
    """Highest-scoring labeling of a forest (max-product upward pass, back-pointers followed downward).

    Parameters
    ----------
    parent, node_pot, edge_pot
        As for :func:`tree_sum_product`.

    Returns
    -------
    labels : ndarray of int64, shape (N,)
        An optimal labeling (ties broken towards smaller labels).
    score : float
        Its score max_y s(y).
    """
    p, npot, epot, levels, _ = _check_forest(parent, node_pot, edge_pot)
    N, K = npot.shape
    inc = np.zeros((N, K))
    best_child = np.zeros((N, K), dtype=np.intp)  # best_child[c, a]: c's best label when its parent has label a
    for nodes in reversed(levels[1:]):
        cand = epot[nodes] + (npot[nodes] + inc[nodes])[:, None, :]  # (n, K_parent, K_child)
        best_child[nodes] = cand.argmax(axis=2)
        np.add.at(inc, p[nodes], np.take_along_axis(cand, best_child[nodes][:, :, None], axis=2)[:, :, 0])
    roots = levels[0]
    labels = np.zeros(N, dtype=np.int64)
    root_scores = npot[roots] + inc[roots]
    labels[roots] = root_scores.argmax(axis=1)
    score = float(root_scores.max(axis=1).sum())
    for nodes in levels[1:]:
        labels[nodes] = best_child[nodes, labels[p[nodes]]]
    return labels, score
