"""Batched exact inference kernels: the separation oracles of mmprog's cutting-plane programs.

Chains (:mod:`mmprog.inference.chain`): :func:`viterbi`, :func:`loss_augment`, :func:`forward_backward`,
:func:`max_marginals`, :func:`viterbi_topk` on padded batches (B, T, K); Viterbi and max-marginals are compiled
(:mod:`mmprog.inference._compiled`), forward-backward and k-best are vectorised numpy.

Dependency trees (:mod:`mmprog.inference.trees`): :func:`chu_liu_edmonds` (maximum spanning arborescence),
:func:`eisner` (best projective tree), their ``_batch`` forms, :func:`loss_augment_arcs`, :func:`tree_score`;
second order (adjacent siblings, projective only, compiled in :mod:`mmprog.inference._eisner2`): :func:`eisner2`,
:func:`sibling_tree_score`.

Forests of pairwise models (:mod:`mmprog.inference.tree_bp`): :func:`tree_sum_product`, :func:`tree_max_product`.
"""
from mmprog.inference.chain import forward_backward, loss_augment, max_marginals, viterbi, viterbi_topk
from mmprog.inference.tree_bp import tree_max_product, tree_sum_product
from mmprog.inference.trees import (chu_liu_edmonds, chu_liu_edmonds_batch, eisner, eisner2, eisner_batch,
                                    loss_augment_arcs, sibling_tree_score, tree_score)

__all__ = ["viterbi", "loss_augment", "forward_backward", "max_marginals", "viterbi_topk",
           "chu_liu_edmonds", "chu_liu_edmonds_batch", "eisner", "eisner_batch", "loss_augment_arcs", "tree_score",
           "eisner2", "sibling_tree_score",
           "tree_sum_product", "tree_max_product"]
