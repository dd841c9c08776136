"""Datasets of mmprog: the validated data model, the loaders (read a path, never download, ``.gz`` transparent),
the synthetic generators of the papers' experiments, and a registry of names for data specs.

See :mod:`mmprog.datasets.base` for the containers and :mod:`mmprog.datasets.registry` for ``load_spec``.
"""
from .base import HierarchicalDataset, SequenceDataset, TokenCorpus, TreeDataset
from .conll import load_conll
from .ocr import OCR_LABELS, load_ocr
from .registry import DATA_FOLDERS, LOADERS, default_data_root, describe_loaders, load_spec, resolve_path
from .sighan import TAGSETS, load_sighan, load_sighan_raw, load_word_list, tags_to_words, words_to_tags
from .synthetic import (gibbs_chain, sample_forest, sparse_sets, synthetic_chain, synthetic_hierarchy, tiny_chain,
                        tiny_trees)
from .treebank import load_conllu, load_conllx, load_malt_tab
from .tsv import load_tsv, write_tsv

__all__ = [
    "SequenceDataset", "TreeDataset", "HierarchicalDataset", "TokenCorpus",
    "load_ocr", "OCR_LABELS", "load_conll", "load_conllu", "load_conllx", "load_malt_tab",
    "load_sighan", "load_sighan_raw", "load_word_list", "words_to_tags", "tags_to_words", "TAGSETS",
    "load_tsv", "write_tsv",
    "synthetic_chain", "synthetic_hierarchy", "sparse_sets", "tiny_chain", "tiny_trees", "gibbs_chain",
    "sample_forest",
    "LOADERS", "DATA_FOLDERS", "load_spec", "describe_loaders", "default_data_root", "resolve_path",
]
