"""Text in, labels out: train a chain on a CoNLL token file with CRF++ templates, tag files, score with the task's
metric.

A model trained here is an ordinary :class:`mmprog.result.Predictor` whose ``extractor`` is the fitted
:class:`~mmprog.features.templates.TemplateExtractor` (its template list and feature dictionary are saved inside the
model's .json/.npz), so a saved model tags raw text with nothing else. ``meta`` records the training file's token
columns, its label column and the task, which picks the metric:

* ``"chunk"`` — BIO/IOB1/IOBES tags (NER, chunking): conlleval's precision, recall and F1 overall and per type
  (:func:`mmprog.metrics.chunk_prf`);
* ``"segmentation"`` — B/I/E(/S) tags over characters (word segmentation): the SIGHAN scorer's word precision, recall,
  F1 and the recall of in- and out-of-vocabulary words against the training words (:func:`mmprog.metrics
  .segmentation_prf`).

``meta["tag_scheme"]`` records the label encoding the chain was trained on: ``"asis"`` (the file's labels as they
are; also what a model without the field means) or ``"iobes"`` (BIO/IOB1 chunk labels converted to IOBES for
training, :mod:`mmprog.tag_schemes`), with ``meta["file_scheme"]`` (``"bio"`` or ``"iob1"``) the training file's
encoding. The model's ``label_names`` and :meth:`~mmprog.result.Predictor.predict` are then IOBES, while
:func:`predict_tags`, :func:`score_text` and :func:`tag_stream` (``mmprog tag``, ``evaluate``, ``predict``) write
and score the file's encoding.

Dependency trees are not text chains: ``mmprog train --data conllu:...`` trains the arc map directly and
``mmprog parse`` writes its heads (:mod:`mmprog.cli.parse`).
"""
from __future__ import annotations

import time

import numpy as np

from .exceptions import DataError, ParameterError

__all__ = ["fit_text", "corpus_dataset", "score_text", "predict_tags", "task_of", "tag_stream", "text_chunks", "read_templates"]

_SEGMENTATION_TAGS = {"B", "I", "E", "S", "M"}


def task_of(label_names) -> str:
    """``"segmentation"`` when every label is one of B/I/E/S/M (character tags), else ``"chunk"``."""
    return "segmentation" if set(label_names) <= _SEGMENTATION_TAGS else "chunk"


def read_templates(spec):
    """A preset name (``ner``, ``tp1``, ``tp2``, ``rich``, ``chunk``) or the path of a CRF++ template file, taken as
    it is.

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


def fit_text(corpus, templates="rich", min_count=1, lexicons=None, tag_scheme="asis", **fit_kwargs):
    """Fit the templates on a labelled corpus and train a chain on the features (:func:`mmprog.fit`).

    Parameters
    ----------
    corpus : TokenCorpus
        Labelled training text (e.g. from :func:`mmprog.datasets.load_conll`).
    templates : str or list of str
        A preset name or template lines (see :class:`~mmprog.features.templates.TemplateExtractor`).
    min_count : int
        Keep features seen at least this often (CRF++'s ``-f``).
    lexicons : dict str -> dict str -> str, optional
        Gazetteers / word clusters addressed by the templates as derived columns (see
        :class:`~mmprog.features.templates.TemplateExtractor`); saved with the model.
    tag_scheme : {"asis", "iobes"}
        ``"asis"``: train on the labels as the file has them. ``"iobes"``: convert BIO (IOB2) or IOB1 chunk labels
        to IOBES (S- single-token chunk, B-, I-, E- last token, O; :func:`mmprog.tag_schemes.to_iobes`), train and
        decode in IOBES, and write predictions back in the file's encoding (detected by
        :func:`mmprog.tag_schemes.detect_file_scheme`, recorded as ``meta["file_scheme"]``): :func:`predict_tags`,
        :func:`score_text` and :func:`tag_stream` return BIO for a BIO file and IOB1 for an IOB1 file; ill-formed
        decoded sequences become the chunks conlleval reads in them. ``label_names``, ``predict``,
        ``predict_marginals`` and ``predict_topk`` stay in IOBES. Segmentation tags (B/I/E/S) and labels that are
        not O/B-X/I-X are refused.
    **fit_kwargs
        :func:`mmprog.fit`'s parameters (program, C, slack, eps, drop_after, program parameters, ...).

    Returns
    -------
    Result
        With ``extractor`` set and ``meta`` holding ``columns``, ``label_column``, ``task``, ``tag_scheme``
        (and ``file_scheme`` with ``"iobes"``), ``feature_seconds`` and, for segmentation, ``train_vocab`` (the
        training words, for R_oov).

    Raises
    ------
    ParameterError
        ``tag_scheme`` not one of the two, or ``"iobes"`` on labels that are not BIO/IOB1 chunk labels.
    """
    import mmprog
    from .features.templates import TemplateExtractor
    from .tag_schemes import check_chunk_labels, check_tag_scheme, detect_file_scheme, to_iobes
    check_tag_scheme(tag_scheme)
    if corpus.labels is None:
        raise DataError(f"{corpus.name}: the training text has no label column; give columns=... naming it")
    scheme_meta = {"tag_scheme": tag_scheme}
    if tag_scheme == "iobes":
        check_chunk_labels(corpus.label_set())
        scheme_meta["file_scheme"] = detect_file_scheme(corpus.labels)
        corpus = _relabelled(corpus, to_iobes(corpus.labels))
    t0 = time.perf_counter()
    ex = TemplateExtractor(templates, min_count=min_count, lexicons=lexicons)
    ds = ex.to_dataset(corpus)
    feature_seconds = time.perf_counter() - t0
    res = mmprog.fit(ds, **fit_kwargs)
    res.extractor = ex
    task = task_of(ds.label_names)
    res.meta.update(columns=list(corpus.columns), label_column=corpus.label_column, task=task, **scheme_meta,
                    feature_seconds=round(feature_seconds, 3), n_input_features=int(ex.n_features_))
    if task == "segmentation":
        res.meta["train_vocab"] = sorted(_vocabulary(corpus, corpus.labels))
    return res


def _relabelled(corpus, labels):
    """A shallow copy of a token corpus with other labels (the same sentences)."""
    import copy
    new = copy.copy(corpus)
    new.labels = labels
    return new


def _iobes_model(predictor):
    """The file encoding to write an IOBES-trained model's labels in, or None for a model trained on the labels
    as they are (also every model saved before ``tag_scheme`` existed)."""
    meta = getattr(predictor, "meta", None) or {}
    return meta.get("file_scheme", "bio") if meta.get("tag_scheme") == "iobes" else None


def corpus_dataset(predictor, corpus):
    """The :class:`SequenceDataset` of a token corpus under a text model's extractor and label names (labels unseen
    in training, or no labels at all, become −1; gold chunk labels are converted to IOBES for an IOBES model)."""
    X = predictor.extractor.transform(corpus)
    if corpus.labels is not None and _iobes_model(predictor):
        from .tag_schemes import check_chunk_labels, to_iobes
        try:
            check_chunk_labels(corpus.label_set())
        except ParameterError:
            pass                 # not chunk labels: left as they are (unknown to the model, so hidden)
        else:
            corpus = _relabelled(corpus, to_iobes(corpus.labels))
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
    """Predicted label strings of every sentence: list of list of str, in the training file's encoding (an IOBES
    model's output converted back, :func:`mmprog.tag_schemes.from_iobes`)."""
    names = np.asarray(predictor.label_names, dtype=object)
    tags = [names[y].tolist() for y in predictor.predict(corpus)]
    scheme = _iobes_model(predictor)
    if scheme:
        from .tag_schemes import from_iobes
        tags = from_iobes(tags, scheme)
    return tags


# ----------------------------------------------------------------------------------------------------------------------
# tagging a stream
# ----------------------------------------------------------------------------------------------------------------------

def _input_columns(predictor, n_fields, source, line, columns, label_column):
    """Column names of the text to tag: as given, else from the number of fields of its first token line (the
    training token columns, with or without the label column after them)."""
    if columns is not None:
        return tuple(columns)
    tok = list(predictor.meta.get("columns") or predictor.extractor.columns_)
    lab = predictor.meta.get("label_column") or "label"
    if n_fields == len(tok):
        return tuple(tok)
    if n_fields == len(tok) + 1:
        return tuple(tok) + (lab,)
    raise DataError(f"{source}:{line}: {n_fields} fields, expected {len(tok)} ({' '.join(tok)}) or {len(tok) + 1} "
                    f"(with the gold {lab}); give columns=... in the data spec")


def text_chunks(stream, chunk_bytes=1 << 22, source="-"):
    """Cut a binary stream of CoNLL text into pieces that end at a sentence boundary (a blank line).

    Yields
    ------
    first_line : int
        1-based line number of the piece's first line.
    text : str
        Whole lines, decoded as UTF-8, ``\r\n`` read as ``\n``.
    """
    rest, line = b"", 1
    while True:
        block = stream.read(chunk_bytes)
        data = rest + block
        if not block:
            if data.strip():
                yield line, _decode(data, line, source)
            return
        cut = data.rfind(b"\n\n")
        cut2 = data.rfind(b"\n\r\n")
        if cut2 > cut:
            cut = cut2 + 1
        if cut < 0:
            rest = data          # a sentence longer than the piece: read on
            continue
        head, rest = data[: cut + 2], data[cut + 2:]
        if line == 1 and head.startswith(b"\xef\xbb\xbf"):
            head = head[3:]
        yield line, _decode(head, line, source)
        line += head.count(b"\n")


def _decode(data, line, source):
    try:
        return data.decode("utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError as exc:
        bad = line + data[: exc.start].count(b"\n")
        raise DataError(f"{source}:{bad}: cannot decode the line as UTF-8 ({exc.reason})") from None


def tag_stream(predictor, stream, source, out, columns=None, sep=None, marginals=False, topk=None,
               chunk_bytes=1 << 22):
    """Tag CoNLL text and write every token line followed by its predicted label, as crf_test does.

    The input is read, tagged and written in pieces of about ``chunk_bytes`` that end at sentence boundaries, so
    input of any size streams; blank lines and ``-DOCSTART-`` lines are copied as they are.

    Parameters
    ----------
    predictor : Predictor
        A text model (with ``extractor``).
    stream : binary file object
        The input (a file opened with :func:`mmprog.datasets.reading.open_binary`, or standard input's buffer).
    source : str
        Name of the input in messages.
    out : text stream
    columns : sequence of str, optional
        Column names of the input; default from the model and the first token line (the training token columns,
        plus the gold label if the lines have one more field).
    sep : str, optional
        Field separator of the input (default whitespace). The label is appended after a tab if the line has one,
        else a space.
    marginals : bool
        Append the marginal probability of the predicted label (forward-backward on the scores wᵀf). For a model
        trained with ``tag_scheme="iobes"`` it is the marginal of the IOBES label the chain decoded (e.g. of
        ``E-NP`` where ``I-NP`` is written).
    topk : int, optional
        Write the K best labelings of each sentence instead, each preceded by ``# k score`` (an IOBES model's
        labelings converted back one by one, so two of them may read the same in the file's encoding).

    Returns
    -------
    dict
        ``sentences``, ``tokens``, ``seconds``.
    """
    if predictor.extractor is None:
        raise ParameterError("this model was not trained on text (it has no templates); train it with "
                             "`mmprog train --templates ...`")
    if topk is not None and (not isinstance(topk, (int, np.integer)) or topk < 1):
        raise ParameterError(f"topk must be an int >= 1; got {topk!r}")
    t0 = time.perf_counter()
    n_sent = n_tok = 0
    cols = None if columns is None else tuple(columns)
    scheme = _iobes_model(predictor)
    for first, text in text_chunks(stream, chunk_bytes, source):
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        n_fields, flat, line_start = _fields(text, lines, sep)
        is_tok = n_fields > 0
        if "-DOCSTART-" in text:
            _mark_docstart(text, lines, line_start, is_tok)
        tok_at = np.flatnonzero(is_tok)
        if not tok_at.size:
            out.write("\n".join(lines) + "\n")
            continue
        if cols is None:
            cols = _input_columns(predictor, int(n_fields[tok_at[0]]), source, first + int(tok_at[0]), None, None)
        width = len(cols)
        bad = np.flatnonzero(n_fields[tok_at] != width)
        if bad.size:
            k = int(tok_at[bad[0]])
            raise DataError(f"{source}:{first + k}: {int(n_fields[k])} fields, expected {width} "
                            f"({' '.join(cols)}); a blank line ends a sentence")
        if flat is None or len(tok_at) * width != len(flat):
            # separators given, or -DOCSTART- lines among the fields: the token lines' fields, line by line
            flat = [f for i in tok_at.tolist() for f in lines[i].split(sep)]
        # sentence of every token line: a new one starts after every non-token line
        sent = np.cumsum(~is_tok)[tok_at]
        starts = np.flatnonzero(np.r_[True, sent[1:] != sent[:-1]])
        lengths = np.diff(np.r_[starts, len(tok_at)])
        ex = predictor.extractor
        where = {c: cols.index(c) if c in cols else None for c in ex.columns_}
        values = {}
        for b in ex.base_columns():
            name = ex.columns_[b]
            if where[name] is None:
                raise DataError(f"{source}: the model reads column {name!r}, not among the input's columns {cols}")
            values[b] = flat[where[name]::width]
        names = np.asarray(predictor.label_names, dtype=object)
        n_sent, n_tok = n_sent + len(lengths), n_tok + len(tok_at)
        scorer = None if (topk or marginals) else _state_scorer(predictor)
        if scorer is not None:
            # labels only: the state scores straight from the templates, X never built (features.template_scores)
            flat = predictor.fmap.decode_state_scores(predictor.w, scorer(values, lengths), lengths)
            first_tok = np.zeros(len(flat), dtype=bool)
            first_tok[np.cumsum(lengths) - lengths] = True
        else:
            X = ex.transform_columns(values, lengths)
            prep = predictor.fmap.prepare_stacked(X, lengths)
            if topk:
                _write_topk(lines, tok_at, starts, lengths, predictor.fmap.topk(predictor.w, prep, topk), names,
                            out, scheme)
                continue
            lab = predictor.fmap.decode(predictor.w, prep, np.arange(prep.n))
            flat = lab[prep.data["tok_example"], prep.data["tok_pos"]]
            first_tok = prep.data["tok_pos"] == 0
        if scheme:
            # IOBES decoded: the labels written are the file's encoding of the same chunks
            from .tag_schemes import from_iobes_ids
            tok_names = from_iobes_ids(names, flat, first_tok, scheme)
        if marginals:
            M = predictor.fmap.marginals(predictor.w, prep)
            prob = M[prep.data["tok_example"], prep.data["tok_pos"], flat]
            shown = tok_names if scheme else names[flat]
            text_labels = [f"{a}\t{p:.4f}" for a, p in zip(shown.tolist(), prob.tolist())]
        glue = "\t" if "\t" in lines[tok_at[0]] else " "
        # every line is followed by its suffix (the label and the newline; the newline alone for blank and
        # -DOCSTART- lines), lines and suffixes interleaved in one list and joined once: no string per line is
        # built beyond the suffixes, which are shared per label
        suffix = np.full(len(lines), "\n", dtype=object)
        if marginals:
            suffix[tok_at] = [glue + a + "\n" for a in text_labels]
        elif scheme:
            # one suffix string per label name, shared (the look-ups run in C through map)
            tok_names = tok_names.tolist()
            shared = {a: glue + a + "\n" for a in set(tok_names)}
            suffix[tok_at] = list(map(shared.__getitem__, tok_names))
        else:
            suffix[tok_at] = np.asarray([glue + a + "\n" for a in names.tolist()], dtype=object)[flat]
        parts = [None] * (2 * len(lines))
        parts[0::2] = lines
        parts[1::2] = suffix.tolist()
        out.write("".join(parts))
    return {"sentences": n_sent, "tokens": n_tok, "seconds": time.perf_counter() - t0}


def _state_scorer(predictor):
    """The predictor's :class:`~mmprog.features.template_scores.StateScorer` (kept on it, so the per-value sums
    of a stream's words are computed once), or None where it does not apply: a map other than the chain's, or one
    with edge features. Rebuilt when ``predictor.w`` is replaced."""
    from .features.chain import ChainFeatureMap
    fmap, ex = predictor.fmap, predictor.extractor
    if type(fmap) is not ChainFeatureMap or fmap.n_edge_features or ex.n_edge_features_ or \
            fmap.n_features != ex.n_features_:
        return None
    held = predictor.__dict__.get("_state_scorer")
    if held is None or held[0] is not predictor.w:
        from .features.template_scores import StateScorer
        held = predictor._state_scorer = (predictor.w, StateScorer(ex, fmap.weights(predictor.w)["state"]))
    return held[1]


# the characters str.split() splits on (all below U+3001), as a lookup table over code points
_IS_SPACE = np.array([chr(c).isspace() for c in range(0x3001)] + [False], dtype=bool)


def _fields(text, lines, sep):
    """Number of fields of every line (n_lines,), all fields in order, and the offset of every line in ``text``
    (n_lines,) — the last two None when ``sep`` is given.

    Without a separator the fields are ``text.split()`` (one C call) and each line's count comes from one compiled
    pass over the code points (:func:`~mmprog.features.template_kernels.line_fields`): a field starts at a non-space
    after a space or a line start.
    """
    if sep is not None:
        return np.fromiter((len(ln.split(sep)) if ln.strip() else 0 for ln in lines), dtype=np.int64,
                           count=len(lines)), None, None
    from .features.template_kernels import line_fields
    counts, starts = line_fields(np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32), _IS_SPACE)
    return counts[: len(lines)], text.split(), starts[: len(lines)]


def _mark_docstart(text, lines, line_start, is_tok):
    """Set ``is_tok`` False on the lines whose first field starts with ``-DOCSTART-`` (copied, never tagged)."""
    if line_start is None:
        is_tok &= np.fromiter((not ln.lstrip().startswith("-DOCSTART-") for ln in lines), dtype=bool,
                              count=len(lines))
        return
    # a handful per file: find them in the text instead of testing every line in Python
    at = text.find("-DOCSTART-")
    while at >= 0:
        i = int(np.searchsorted(line_start, at, side="right")) - 1
        if not text[line_start[i]:at].strip():
            is_tok[i] = False
        at = text.find("-DOCSTART-", at + 1)


def _write_topk(lines, tok_at, starts, lengths, top, names, out, scheme=None):
    labels, scores = top
    if scheme:
        from .tag_schemes import from_iobes
    parts = []
    glue = "\t" if "\t" in lines[tok_at[0]] else " "
    for s, (a, n) in enumerate(zip(starts.tolist(), lengths.tolist())):
        toks = [lines[i] for i in tok_at[a: a + n]]
        for r in range(labels.shape[1]):
            if not np.isfinite(scores[s, r]):
                break        # fewer than K labelings exist
            parts.append(f"# {r} {scores[s, r]:.6f}\n")
            tags = names[labels[s, r, :n]].tolist()
            if scheme:
                tags = from_iobes(tags, scheme)
            parts.extend(t + glue + y + "\n" for t, y in zip(toks, tags))
            parts.append("\n")
    out.write("".join(parts))
