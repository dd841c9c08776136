"""Text in, labels out: train a chain on a CoNLL token file with CRF++ templates, tag files, score with the task's metric.

A model trained here is an ordinary :class:`mmprog.result.Predictor` whose ``extractor`` is the fitted
:class:`~mmprog.features.templates.TemplateExtractor` (its template list and feature dictionary are saved inside the
model's .json/.npz), so a saved model tags raw text with nothing else. ``meta`` records the training file's token
columns, its label column and the task, which picks the metric:

* ``"chunk"`` — BIO/IOB1/IOBES tags (NER, chunking): conlleval's precision, recall and F1 overall and per type
  (:func:`mmprog.metrics.chunk_prf`);
* ``"segmentation"`` — B/I/E(/S) tags over characters (word segmentation): the SIGHAN scorer's word precision, recall,
  F1 and the recall of in- and out-of-vocabulary words against the training words (:func:`mmprog.metrics
  .segmentation_prf`).

Dependency trees are not text chains: ``mmprog train --data conllu:...`` trains the arc map directly and
``mmprog parse`` writes its heads (:mod:`mmprog.tagging_cli`).
"""
from __future__ import annotations

import time

import numpy as np

from .exceptions import DataError, ParameterError

__all__ = ["fit_text", "corpus_dataset", "score_text", "task_of", "tag_lines", "read_templates"]

_SEGMENTATION_TAGS = {"B", "I", "E", "S", "M"}


def task_of(label_names) -> str:
    """``"segmentation"`` when every label is one of B/I/E/S/M (character tags), else ``"chunk"``."""
    return "segmentation" if set(label_names) <= _SEGMENTATION_TAGS else "chunk"


def read_templates(spec):
    """A preset name (``ner``, ``tp1``, ``tp2``, ``rich``) or the path of a CRF++ template file, taken as it is.

    Returns
    -------
    str or list of str
        What :class:`~mmprog.features.templates.TemplateExtractor` takes.
    """
    import os

    from .features.templates import PRESETS
    if spec in PRESETS:
        return spec
    if os.path.isfile(spec):
        with open(spec, encoding="utf-8") as fh:
            return fh.read().splitlines()
    raise ParameterError(f"templates must be a preset ({', '.join(sorted(PRESETS))}) or a CRF++ template file; "
                         f"{spec!r} is neither")


def fit_text(corpus, templates="rich", min_count=1, **fit_kwargs):
    """Fit the templates on a labelled corpus and train a chain on the features (:func:`mmprog.fit`).

    Parameters
    ----------
    corpus : TokenCorpus
        Labelled training text (e.g. from :func:`mmprog.datasets.load_conll`).
    templates : str or list of str
        A preset name or template lines (see :class:`~mmprog.features.templates.TemplateExtractor`).
    min_count : int
        Keep features seen at least this often (CRF++'s ``-f``).
    **fit_kwargs
        :func:`mmprog.fit`'s parameters (program, C, slack, eps, drop_after, program parameters, ...).

    Returns
    -------
    Result
        With ``extractor`` set and ``meta`` holding ``columns``, ``label_column``, ``task``, ``feature_seconds``
        and, for segmentation, ``train_vocab`` (the training words, for R_oov).
    """
    import mmprog
    from .features.templates import TemplateExtractor
    if corpus.labels is None:
        raise DataError(f"{corpus.name}: the training text has no label column; give columns=... naming it")
    t0 = time.perf_counter()
    ex = TemplateExtractor(templates, min_count=min_count)
    ds = ex.to_dataset(corpus)
    feature_seconds = time.perf_counter() - t0
    res = mmprog.fit(ds, **fit_kwargs)
    res.extractor = ex
    task = task_of(ds.label_names)
    res.meta.update(columns=list(corpus.columns), label_column=corpus.label_column, task=task,
                    feature_seconds=round(feature_seconds, 3), n_input_features=int(ex.n_features_))
    if task == "segmentation":
        res.meta["train_vocab"] = sorted(_vocabulary(corpus, corpus.labels))
    return res


def corpus_dataset(predictor, corpus):
    """The :class:`SequenceDataset` of a token corpus under a text model's extractor and label names (labels unseen
    in training, or no labels at all, become −1)."""
    X = predictor.extractor.transform(corpus)
    return corpus.to_sequence_dataset(X, label_names=predictor.label_names, unknown="hide")


def _words(corpus, tags):
    from .metrics import tags_to_words
    first = corpus.columns[0]
    return [tags_to_words(s[first], t) for s, t in zip(corpus.sentences, tags)]


def _vocabulary(corpus, tags):
    return {w for ws in _words(corpus, tags) for w in ws}


def score_text(predictor, corpus, pred_tags=None) -> dict:
    """The task's scores (in %) of a text model on a labelled corpus.

    Parameters
    ----------
    predictor : Predictor
        A model from :func:`fit_text` (or :func:`mmprog.load` of one).
    corpus : TokenCorpus
        Labelled text with the training columns.
    pred_tags : list of list of str, optional
        Predictions already made (default: predicted here).

    Returns
    -------
    dict
        chunk: ``precision``, ``recall``, ``f1``, ``per_type`` {type: {precision, recall, f1, support}},
        ``n_true``, ``n_pred``, ``n_correct``; segmentation: ``precision``, ``recall``, ``f1``, ``r_iv``, ``r_oov``,
        ``oov_rate`` and the word counts.
    """
    from .metrics import chunk_prf, segmentation_prf
    if corpus.labels is None:
        raise DataError(f"{corpus.name}: no gold labels to score against; give the label column in columns=...")
    if pred_tags is None:
        pred_tags = predict_tags(predictor, corpus)
    task = predictor.meta.get("task") or task_of(predictor.label_names)
    if task == "segmentation":
        vocab = predictor.meta.get("train_vocab")
        sc = segmentation_prf(_words(corpus, corpus.labels), _words(corpus, pred_tags),
                              train_vocab=set(vocab) if vocab else None)
        out = {k: (100 * v if k in ("precision", "recall", "f1", "r_iv", "r_oov", "oov_rate") else v)
               for k, v in sc.items()}
        return {"task": task, **out}
    sc = chunk_prf(list(corpus.labels), pred_tags)
    per = {t: {"precision": 100 * s.precision, "recall": 100 * s.recall, "f1": 100 * s.f1, "support": s.support}
           for t, s in sc.per_type.items()}
    return {"task": task, "precision": 100 * sc.precision, "recall": 100 * sc.recall, "f1": 100 * sc.f1,
            "per_type": per, "n_true": sc.n_true, "n_pred": sc.n_pred, "n_correct": sc.n_correct}


def predict_tags(predictor, corpus):
    """Predicted label strings of every sentence: list of list of str."""
    names = np.asarray(predictor.label_names, dtype=object)
    return [names[y].tolist() for y in predictor.predict(corpus)]


# ----------------------------------------------------------------------------------------------------------------------
# tagging a stream
# ----------------------------------------------------------------------------------------------------------------------

def _input_columns(predictor, n_fields, source, line, columns, label_column):
    """Column names and label column of the text to tag: as given, else from the number of fields of its first
    token line (the training token columns, with or without the label column after them)."""
    if columns is not None:
        return tuple(columns), label_column
    tok = list(predictor.meta.get("columns") or predictor.extractor.columns_)
    lab = predictor.meta.get("label_column") or "label"
    if n_fields == len(tok):
        return tuple(tok), None
    if n_fields == len(tok) + 1:
        return tuple(tok) + (lab,), -1
    raise DataError(f"{source}:{line}: {n_fields} fields, expected {len(tok)} ({' '.join(tok)}) or {len(tok) + 1} "
                    f"(with the gold {lab}); give columns=... in the data spec")


def tag_lines(predictor, lines, source, out, columns=None, label_column=-1, sep=None, marginals=False, topk=None,
              batch_tokens=100_000):
    """Tag numbered lines of CoNLL text and write each token line followed by its predicted label, as crf_test does.

    Sentences are read and tagged in batches of about ``batch_tokens`` tokens, so input of any size streams.

    Parameters
    ----------
    predictor : Predictor
        A text model (with ``extractor``).
    lines : iterable of (int, str)
        1-based line numbers and lines without their line end.
    source : str
        Name of the input in messages.
    out : text stream
    columns, label_column : optional
        Column names of the input and its gold label column (None: unlabelled); default from the model and the
        first token line.
    sep : str, optional
        Field separator of the input (default whitespace); the output uses a tab if the input line has one, else a
        space.
    marginals : bool
        Append the marginal probability of the predicted label (forward-backward on the scores wᵀf).
    topk : int, optional
        Write the K best labelings of each sentence, each preceded by ``# k score``.

    Returns
    -------
    dict
        ``sentences``, ``tokens``, ``seconds``.
    """
    from .datasets.reading import blocks
    if predictor.extractor is None:
        raise ParameterError("this model was not trained on text (it has no templates); train it with "
                             "`mmprog train --templates ...`")
    if topk is not None and (not isinstance(topk, int) or topk < 1):
        raise ParameterError(f"topk must be an int >= 1; got {topk!r}")
    t0 = time.perf_counter()
    state = {"cols": None}
    n_sent = n_tok = 0
    batch, size = [], 0
    for block in blocks(source, lines=lines):
        if state["cols"] is None:
            first = next(((k, t) for k, t in block if not t.startswith("-DOCSTART-")), None)
            if first is not None:
                state["cols"] = _input_columns(predictor, len(first[1].split(sep)), source, first[0], columns,
                                               label_column)
        batch.append(block)
        size += len(block)
        if size >= batch_tokens:
            s, t = _tag_batch(predictor, batch, source, out, state["cols"], sep, marginals, topk)
            n_sent, n_tok = n_sent + s, n_tok + t
            batch, size = [], 0
    if batch:
        s, t = _tag_batch(predictor, batch, source, out, state["cols"], sep, marginals, topk)
        n_sent, n_tok = n_sent + s, n_tok + t
    return {"sentences": n_sent, "tokens": n_tok, "seconds": time.perf_counter() - t0}


def _tag_batch(predictor, batch, source, out, cols, sep, marginals, topk):
    from .datasets import load_conll
    token_lines = [(k, t) for b in batch for k, t in b if not t.startswith("-DOCSTART-")]
    if not token_lines:
        for b in batch:
            out.write("\n".join(t for _, t in b) + "\n\n")
        return 0, 0
    columns, label_column = cols
    numbered = [kt for b in batch for kt in b + [(b[-1][0] + 1, "")]]
    corpus = load_conll(source, columns=columns, label_column=label_column, sep=sep, lines=iter(numbered))
    names = np.asarray(predictor.label_names, dtype=object)
    if topk:
        tops = predictor.predict_topk(corpus, topk)
        _write_topk(batch, tops, names, out)
        return len(corpus), corpus.n_tokens
    pred = predictor.predict(corpus)
    flat = names[np.concatenate(pred)] if pred else names[:0]
    if marginals:
        M = predictor.predict_marginals(corpus)
        prob = np.concatenate([m[np.arange(len(y)), y] for m, y in zip(M, pred)])
        flat = np.array([f"{a}\t{p:.4f}" for a, p in zip(flat, prob)], dtype=object)
    it = iter(flat.tolist())
    parts = []
    for b in batch:
        for _, t in b:
            if t.startswith("-DOCSTART-"):
                parts.append(t + "\n")
            else:
                parts.append(t + ("\t" if "\t" in t else " ") + next(it) + "\n")
        parts.append("\n")
    out.write("".join(parts))
    return len(corpus), corpus.n_tokens


def _write_topk(batch, tops, names, out):
    parts = []
    s = 0
    for b in batch:
        toks = [t for _, t in b if not t.startswith("-DOCSTART-")]
        if not toks:
            parts.append("\n".join(t for _, t in b) + "\n\n")
            continue
        labels, scores = tops[s]
        s += 1
        for r in range(labels.shape[0]):
            if not np.isfinite(scores[r]):
                break        # fewer than K labelings exist
            parts.append(f"# {r} {scores[r]:.6f}\n")
            parts.extend(t + ("\t" if "\t" in t else " ") + names[y] + "\n" for t, y in zip(toks, labels[r]))
            parts.append("\n")
    out.write("".join(parts))
