"""Names for every loader and generator, and a one-string data specification for the command line.

A spec is ``NAME:PATH[,key=value,...]`` for file loaders and ``NAME[:key=value,...]`` for generators, e.g.
``ocr:../shared/data/ocr_letters/letters.npz``, ``conll:conll2002/esp.train.gz,columns=form/pos/ne``,
``synthetic:seed=0,n_instances=200``, ``sparse:m=1000``. Values are read as int, float, ``true``/``false``,
``none``, or text; a value with ``/`` is a tuple (``n_inner=2/4``, ``columns=form/pos/ne``). A relative PATH that
does not exist is looked up under the data root (:func:`default_data_root`: ``$MMPROG_DATA``, else
``../shared/data`` beside the checkout). Paths containing commas cannot be written in a spec.
"""
from __future__ import annotations

import inspect
import os
from pathlib import Path

from ..exceptions import DataError, MMProgError, ParameterError
from .conll import load_conll
from .ocr import load_ocr
from .sighan import load_sighan, load_sighan_raw
from .synthetic import sparse_sets, synthetic_chain, synthetic_hierarchy, tiny_chain, tiny_trees
from .treebank import load_conllu, load_conllx, load_malt_tab
from .tsv import load_tsv

__all__ = ["LOADERS", "DATA_FOLDERS", "load_spec", "parse_spec", "describe_loaders", "default_data_root",
           "resolve_path"]

#: name -> (callable, one-line description, whether it takes a path)
LOADERS = {
    "ocr": (load_ocr, "OCR handwritten letters (letters.npz or letter.data-style TSV) -> SequenceDataset, 10 folds",
            True),
    "conll": (load_conll, "CoNLL-2000 chunking / CoNLL-2002 NER columns -> TokenCorpus "
                          "(columns=form/pos/ne for NER)", True),
    "conllu": (load_conllu, "CoNLL-U treebank (UD) -> TreeDataset; multiword tokens and empty nodes skipped", True),
    "conllx": (load_conllx, "CoNLL-X 10-column treebank (also UD v1.0-pre .conll) -> TreeDataset", True),
    "malt": (load_malt_tab, "Malt-TAB word/tag/head (NLTK .dp) -> TreeDataset", True),
    "sighan": (load_sighan, "SIGHAN 2005 segmented gold text -> character TokenCorpus with B/I/E(/S) tags "
                            "(tagset=BIES|BIE)", True),
    "sighan-raw": (load_sighan_raw, "SIGHAN 2005 unsegmented test text -> unlabelled character TokenCorpus", True),
    "tsv": (load_tsv, "user sequences: LABEL<TAB>features per line, blank line between sequences -> "
                      "SequenceDataset", True),
    "synthetic": (synthetic_chain, "random linear-chain CRF, 30 relevant of 100 features, Gibbs-sampled labels "
                                   "(KDD 2009 sec. 5.1) -> SequenceDataset", False),
    "hierarchy": (synthetic_hierarchy, "two-level hierarchies from a random tree CRF, inner nodes hidden (NIPS 2008 "
                                       "sec. 4.2) -> HierarchicalDataset", False),
    "sparse": (sparse_sets, "non-negative sparse inputs and 0/1 output sets tied by a hidden rule (L-inf program) "
                            "-> (Phi, Psi)", False),
    "tiny": (tiny_chain, "tiny enumerable chain instance (20 x 4 positions, 2 labels, 3 features) -> "
                         "SequenceDataset", False),
    "tinytrees": (tiny_trees, "tiny enumerable dependency trees (10 sentences of 4 words) -> TreeDataset", False),
}

#: folder of the shared data root -> (spec names, what to read there)
DATA_FOLDERS = {
    "ocr_letters": ("ocr", "letters.npz (or letter.tsv.gz): 6,877 words, 52,152 letters, folds 0-9"),
    "conll2000": ("conll", "train.txt.gz / test.txt.gz: word POS chunk"),
    "conll2002": ("conll", "esp.train.gz / esp.testa.gz / esp.testb.gz with columns=form/pos/ne"),
    "ud_swedish_talbanken": ("conllx, conllu", "v1.0-pre_2015-01-05/sv-ud-*.conll.gz (conllx), "
                                               "master_2025-12-10/*.conllu.gz (conllu)"),
    "ptb_dependency_sample_nltk": ("malt", "wsj_0001-0199.dp.gz: 3,914 projective trees"),
    "sighan2005_icwb2": ("sighan, sighan-raw", "gold/*_test_gold.utf8.gz (sighan), testing/*_test.utf8.gz "
                                               "(sighan-raw), gold/*_training_words.utf8.gz (load_word_list)"),
}


def default_data_root() -> Path:
    """Where real datasets are read from: ``$MMPROG_DATA`` if set, else ``../shared/data`` beside the checkout."""
    env = os.environ.get("MMPROG_DATA")
    if env:
        return Path(env)
    checkout = Path(__file__).resolve().parents[2]
    return checkout.parent / "shared" / "data"


def resolve_path(path, data_root=None) -> Path:
    """``path`` if it exists; else, when relative, the same path under ``data_root`` (default
    :func:`default_data_root`).

    Raises
    ------
    DataError
        Naming every place tried.
    """
    p = Path(path)
    if p.exists():
        return p
    if not p.is_absolute():
        q = Path(data_root if data_root is not None else default_data_root()) / p
        if q.exists():
            return q
        raise DataError(f"{p}: no such file (also tried {q}); give a path to the data file or set MMPROG_DATA")
    raise DataError(f"{p}: no such file")


def _value(text: str):
    if "/" in text:
        return tuple(_value(t) for t in text.split("/"))
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def load_spec(spec: str, data_root=None):
    """Load data from a one-string specification (module docstring).

    Parameters
    ----------
    spec : str
        ``NAME:PATH[,key=value,...]`` or ``NAME[:key=value,...]``; NAME one of :data:`LOADERS`.
    data_root : str or Path, optional
        Where a relative PATH that does not exist as given is looked up (default :func:`default_data_root`).

    Returns
    -------
    SequenceDataset, TreeDataset, HierarchicalDataset, TokenCorpus or (Phi, Psi)
        Whatever the named loader returns.

    Raises
    ------
    ParameterError
        Unknown name (listing the valid ones), a missing path, a malformed ``key=value`` or a key the loader does
        not take (listing the keys it does).
    DataError
        From the loader (file and line).
    """
    func, args, kwargs = parse_spec(spec, data_root)
    try:
        return func(*args, **kwargs)
    except MMProgError:
        raise
    except (TypeError, ValueError, OverflowError) as e:
        # a key=value of the spec the loader cannot take (seed=x, n_sequences=-1, columns=1): the user's input
        from .reading import one_line
        raise ParameterError(f"data spec {spec!r}: a parameter value the loader cannot take ({type(e).__name__}: "
                             f"{one_line(e)[:200]})") from None


def parse_spec(spec: str, data_root=None, path_ok=None):
    """The loader, positional arguments (the resolved path) and keyword arguments of a data spec, unread.

    ``path_ok(path)`` may accept a path that is not a file (the command line's ``-`` for standard input).
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ParameterError(f"data spec must be a non-empty string like 'ocr:PATH' or 'synthetic:seed=0'; "
                             f"got {spec!r}")
    name, _, rest = spec.strip().partition(":")
    name = name.strip().lower()
    if name not in LOADERS:
        raise ParameterError(f"unknown data name {name!r} in spec {spec!r}; valid names: {', '.join(LOADERS)}")
    func, _, takes_path = LOADERS[name]
    parts = [t for t in rest.split(",")] if rest else []
    args = []
    if takes_path:
        if not parts or not parts[0].strip() or "=" in parts[0]:
            raise ParameterError(f"{name} reads a file: write the spec as '{name}:PATH[,key=value,...]'; got {spec!r}")
        raw = parts.pop(0).strip()
        args.append(raw if path_ok is not None and path_ok(raw) else resolve_path(raw, data_root))
    params = inspect.signature(func).parameters
    # return_truth would change the return type; a spec always yields the data alone
    allowed = [k for k in params if not (takes_path and k == "path") and k not in ("return_truth", "lines")]
    kwargs = {}
    for part in parts:
        key, eq, val = part.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ParameterError(f"{part!r} in spec {spec!r} is not key=value; {name} takes: {', '.join(allowed)}")
        if key not in allowed:
            raise ParameterError(f"{name} has no parameter {key!r} (in spec {spec!r}); it takes: {', '.join(allowed)}")
        kwargs[key] = _value(val.strip())
    return func, args, kwargs


def describe_loaders() -> list[dict]:
    """Rows for the ``mmprog data`` listing: one dict per name with ``name``, ``kind`` (``"file"`` or
    ``"generator"``), ``usage`` (the spec syntax), ``description`` and ``options`` (the keyword parameters)."""
    rows = []
    for name, (func, desc, takes_path) in LOADERS.items():
        opts = [k for k in inspect.signature(func).parameters if k not in ("path", "return_truth", "lines")]
        usage = f"{name}:PATH[,key=value,...]" if takes_path else f"{name}[:key=value,...]"
        rows.append({"name": name, "kind": "file" if takes_path else "generator", "usage": usage,
                     "description": desc, "options": opts})
    return rows
