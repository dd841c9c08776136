"""Cuts and the working set: the vocabulary the engine and the programs share.

A cut is one constraint wᵀΔF_r + ξ_{e(r)} ≥ Δℓ_r of a program's master (Zhu, Xing & Zhang, KDD 2009, Algorithm 1;
Joachims, Finley & Yu 2009 for the 1-slack form), held as an explicit ΔF row (:class:`Cuts`), as integer counts
(:class:`CountCut`) or as the labeling it came from (:class:`LabelingCut`); the :class:`WorkingSet` keeps a
master's cuts in insertion order with their products (Gram rows, ΔF·w, ΔFᵀα). The engine makes cuts (its oracle),
adds, drops, aggregates and saves them; a program reads them in ``add_cuts`` and states them in its Pyomo master.
This room sits below both, so that every import points down.
"""
from .base import CountCut, Cuts, LabelingCut, labeling_counts, labeling_dot
from .working_set import LabelingBlock, RowsSnapshot, WorkingSet

__all__ = ["Cuts", "CountCut", "LabelingCut", "labeling_counts", "labeling_dot", "WorkingSet", "RowsSnapshot",
           "LabelingBlock"]
