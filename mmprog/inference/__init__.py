"""Batched exact inference kernels (pure numpy): the separation oracles of mmprog's cutting-plane programs.

Chains (:mod:`mmprog.inference.chain`): :func:`viterbi`, :func:`loss_augment`, :func:`forward_backward`,
:func:`max_marginals`, :func:`viterbi_topk` on padded batches (B, T, K), vectorised over examples and labels.
"""
from mmprog.inference.chain import forward_backward, loss_augment, max_marginals, viterbi, viterbi_topk

__all__ = ["viterbi", "loss_augment", "forward_backward", "max_marginals", "viterbi_topk"]
