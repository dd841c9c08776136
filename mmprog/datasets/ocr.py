"""The handwritten-word OCR data of Taskar, Guestrin & Koller (NIPS 2003), used by every M³N paper mmprog follows.

Each word is a sequence of letters; each letter a 16×8 binary image (128 pixel features, row-major) labelled a–z
(the capitalised first letter of every word was dropped at the source). Words carry a fold id 0–9: the papers train
on one fold and test on the other nine (Taskar et al. 2003; Zhu, Xing & Zhang, KDD 2009, section 5.2).
"""
from __future__ import annotations

import io
import string

import numpy as np

from ..exceptions import DataError
from .base import SequenceDataset
from .reading import (GZIP_MAGIC, ZIP_MAGIC, as_path, check_int_field, fail, integer_array, iter_lines, magic,
                      read_bytes, read_npz)

__all__ = ["load_ocr", "OCR_LABELS", "OCR_PIXEL_NAMES"]

OCR_LABELS = list(string.ascii_lowercase)
#: pixel feature names, row-major over the 16 × 8 image
OCR_PIXEL_NAMES = [f"p_{r}_{c}" for r in range(16) for c in range(8)]
_N_COLS = 6 + 128


def load_ocr(path, name="ocr") -> SequenceDataset:
    """Load the OCR letters as one :class:`SequenceDataset` of words.

    Parameters
    ----------
    path : str or Path
        Either ``letters.npz`` (arrays ``pixels`` (N, 128) uint8, ``labels`` (N,) 0–25, ``word_start`` (W+1,)
        offsets, ``word_fold`` (W,); read with ``allow_pickle=False``) or a file in the column layout of the
        original ``letter.data`` — tab-separated ``id, letter, next_id, word_id, position, fold, p_0_0 … p_15_7``,
        a word ending where ``next_id`` is −1 — plain or gzipped (``letter.tsv.gz``). The format is recognised from
        the file's first bytes, not its name.
    name : str
        Dataset name.

    Returns
    -------
    SequenceDataset
        One sequence per word: X_i (T_i, 128) float64 pixels in {0, 1}, labels 0–25 with ``label_names`` 'a'..'z',
        ``feature_names`` ``p_r_c``, ``fold_ids`` (W,) the fold of each word. For the shared copy: 6,877 words,
        52,152 letters, 10 folds.

    Raises
    ------
    DataError
        Naming the file and the line (TSV) or array (npz) that does not fit.
    """
    p = as_path(path)
    head = magic(p)
    if head[:2] == GZIP_MAGIC:
        data = read_bytes(p)
        if data[:4] == ZIP_MAGIC:
            return _from_npz(io.BytesIO(data), p, name)
        return _from_tsv(p, name)
    if head == ZIP_MAGIC:
        return _from_npz(p, p, name)
    return _from_tsv(p, name)


def _from_npz(source, path, name):
    arrays = read_npz(source, path)
    for key in ("pixels", "labels", "word_start", "word_fold"):
        if key not in arrays:
            raise DataError(f"{path}: array {key!r} missing (has {sorted(arrays)}); expected pixels, labels, "
                            f"word_start, word_fold")
    pixels = arrays["pixels"]
    if pixels.dtype.kind not in "iubf":
        raise DataError(f"{path}: array 'pixels' has dtype {pixels.dtype}; expected numbers 0/1")
    labels = integer_array(arrays["labels"], path, "labels")
    starts = integer_array(arrays["word_start"], path, "word_start")
    folds = integer_array(arrays["word_fold"], path, "word_fold")
    if pixels.ndim != 2 or pixels.shape[1] != 128:
        raise DataError(f"{path}: array 'pixels' has shape {pixels.shape}; expected (letters, 128)")
    N = pixels.shape[0]
    if labels.shape != (N,):
        raise DataError(f"{path}: array 'labels' has shape {labels.shape}; expected ({N},) like 'pixels'")
    bad = (labels < 0) | (labels >= 26)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise DataError(f"{path}: array 'labels' entry {k} is {labels[k]}; letters are 0-25 (a-z)")
    if starts.ndim != 1 or starts.size < 2 or starts[0] != 0 or starts[-1] != N or (np.diff(starts) <= 0).any():
        raise DataError(f"{path}: array 'word_start' must be strictly increasing offsets from 0 to {N} (letters)")
    W = starts.size - 1
    if folds.shape != (W,):
        raise DataError(f"{path}: array 'word_fold' has shape {folds.shape}; expected ({W},), one fold per word")
    bad = (pixels != 0) & (pixels != 1)
    if bad.any():
        k = int(np.argwhere(bad)[0][0])
        raise DataError(f"{path}: array 'pixels' row {k} holds a value other than 0/1")
    X_all = pixels.astype(np.float64)
    Y_all = labels.astype(np.int64)
    cut = starts[1:-1]
    ds = SequenceDataset(np.split(X_all, cut), np.split(Y_all, cut), 26, label_names=OCR_LABELS,
                         feature_names=OCR_PIXEL_NAMES, fold_ids=folds.astype(np.int64), name=name)
    ds.info["source"] = str(path)
    return ds


def _from_tsv(path, name):
    pix_ok = frozenset("01")
    letters, folds, pix = [], [], []
    ends = []  # index of the last letter of each word
    lines = []
    n = 0
    open_word = None  # (word_id, fold, first line) of the word being read
    for k, text in iter_lines(path, "ascii"):
        if not text.strip():
            continue
        parts = text.split("\t")
        if parts[-1] == "":  # the original letter.data ends every line with a tab
            parts.pop()
        if len(parts) != _N_COLS:
            raise fail(path, k, f"{len(parts)} tab-separated columns, expected {_N_COLS} (id, letter, next_id, "
                                f"word_id, position, fold, 128 pixels)")
        letter = parts[1]
        if len(letter) != 1 or letter not in OCR_LABELS:
            raise fail(path, k, f"letter column is {letter!r}; expected one lowercase letter a-z")
        try:
            next_id, word_id, fold = int(parts[2]), int(parts[3]), int(parts[5])
        except ValueError:
            raise fail(path, k, f"next_id/word_id/fold must be integers; got {parts[2]!r}, {parts[3]!r}, "
                                f"{parts[5]!r}") from None
        for what, v in (("next_id", next_id), ("word_id", word_id), ("fold", fold)):
            check_int_field(path, k, v, what)
        px = parts[6:]
        if not pix_ok.issuperset(px):
            bad = next(j for j, v in enumerate(px) if v not in pix_ok)
            raise fail(path, k, f"pixel p_{bad // 8}_{bad % 8} (column {7 + bad}) is {px[bad]!r}; pixels must be 0 "
                                f"or 1")
        if open_word is not None:
            if word_id != open_word[0]:
                raise fail(path, k, f"word_id {word_id} starts before word {open_word[0]} (line {open_word[2]}) "
                                    f"ended with next_id -1")
            if fold != open_word[1]:
                raise fail(path, k, f"fold {fold} differs from fold {open_word[1]} of the same word (line "
                                    f"{open_word[2]}); a word has one fold")
        else:
            open_word = (word_id, fold, k)
            folds.append(fold)
        letters.append(OCR_LABELS.index(letter))
        pix.append("".join(px))
        lines.append(k)
        if next_id == -1:
            ends.append(n)
            open_word = None
        n += 1
    if n == 0:
        raise fail(path, None, "no letters found; expected the letter.data column layout")
    if open_word is not None:
        raise fail(path, lines[-1], f"the file ends inside word {open_word[0]} (its last letter has next_id != -1)")
    X_all = (np.frombuffer("".join(pix).encode("ascii"), dtype=np.uint8) - ord("0")).reshape(n, 128)
    X_all = X_all.astype(np.float64)
    Y_all = np.asarray(letters, dtype=np.int64)
    cut = np.asarray(ends[:-1], dtype=np.int64) + 1
    ds = SequenceDataset(np.split(X_all, cut), np.split(Y_all, cut), 26, label_names=OCR_LABELS,
                         feature_names=OCR_PIXEL_NAMES, fold_ids=np.asarray(folds, dtype=np.int64), name=name)
    ds.info["source"] = str(path)
    return ds
