"""Dependency parsing of CoNLL-U / CoNLL-X text: heads by a trained arc model, relations by its labeller.

A dependency model is two max-margin models trained one after the other on the same treebank:

* the **parser**, an :class:`~mmprog.features.arcs.ArcFeatureMap` model (first-order arcs, Chu-Liu-Edmonds or
  Eisner) saved as ``P.json`` + ``P.npz``;
* the **labeller**, an :class:`~mmprog.features.arc_labels.ArcLabelFeatureMap` model (the relations of a given
  tree's arcs as a label chain, trained by ``m3n`` on the gold trees) saved beside it as ``P.labels.json`` +
  ``P.labels.npz`` (:func:`labeller_base`). A model without the labeller parses heads only and writes DEPREL ``_``.

:func:`parse_stream` reads a file line by line and writes it back with HEAD and DEPREL predicted — the HEAD column of
the input may be ``_`` (text to parse) — and every other byte as it came: comment lines, multiword-token lines
(``1-2``), empty nodes (``8.1``), blank lines and line ends. DEPS, when a token has one (not ``_``), becomes
``HEAD:DEPREL`` of the predicted basic tree, so that the basic and the enhanced layer do not contradict each other;
the enhanced arcs of the input are not kept (mmprog predicts no enhanced graph). Sentences are parsed in batches of
about :data:`BATCH_TOKENS` tokens, so memory does not grow with the file.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .exceptions import DataError, ParameterError

__all__ = ["BATCH_TOKENS", "labeller_base", "train_labeller", "load_labeller", "predict_relations",
           "labelled_scores", "evaluate_parser", "parse_stream"]

#: sentences are parsed in batches of about this many tokens: the batched decoders stay efficient and memory stays
#: bounded whatever the size of the input
BATCH_TOKENS = 20_000
_BOM = "\ufeff"


def labeller_base(model_path) -> str:
    """``P.labels`` for a parser saved as ``P`` (``P.json``/``P.npz``): where its labeller is kept."""
    base = str(model_path)
    for ext in (".json", ".npz"):
        if base.endswith(ext):
            base = base[:-len(ext)]
    return base + ".labels"


def train_labeller(dataset, C=0.1, gap_tol=1e-2, templates="labels", min_count=1, context=True, **fit_kwargs):
    """Train the arc labeller on the gold trees of ``dataset``: P0 over the label chain of a given tree
    (:class:`~mmprog.features.arc_labels.ArcLabelFeatureMap`), certified by route ``bcfw`` where it covers the data.

    Parameters
    ----------
    dataset : TreeDataset
        Trees with a ``deprel`` column.
    C : float
        Slack weight (n-slack scale). On the gold trees of the Talbanken dev file the label accuracy is flat from
        C = 0.1 to 1 and lower at 0.03, and a fit at 0.1 takes about half the time of one at 1
        (``docs/records/labeller.json``, ``python -m mmprog.bench labeller``).
    gap_tol : float
        Certified relative duality gap at which the fit stops (:func:`mmprog.fit`).
    templates : str or list of str
        Templates of the arc view: a key of :data:`~mmprog.features.arc_labels.LABEL_PRESETS` or arc template specs.
    min_count : int
        Keep view features seen at least this often.
    context : bool
        Add the grandparent and dependent views (:data:`~mmprog.features.arc_labels.CONTEXT_VIEWS`).
    **fit_kwargs
        Passed to :func:`mmprog.fit` (``time_limit``, ``max_iter``, ``route`` ...).

    Returns
    -------
    Result
    """
    import mmprog
    from .features.arc_labels import ArcLabelFeatureMap
    fmap = ArcLabelFeatureMap(templates, min_count=min_count, context=context).fit(dataset)
    return mmprog.fit(dataset, program="m3n", feature_map=fmap, C=C, gap_tol=gap_tol, **fit_kwargs)


def load_labeller(model_path):
    """The labeller saved beside a parser (a Predictor), or None when there is none."""
    import mmprog
    base = labeller_base(model_path)
    if not os.path.exists(base + ".json"):
        return None
    lab = mmprog.load(base + ".json")
    if getattr(lab.fmap, "kind", None) != "arclabels":
        raise DataError(f"{base}.json: not an arc labeller (feature map {lab.fmap.kind!r})")
    return lab


def predict_relations(labeller, dataset, heads):
    """Relation names of the arcs of the given trees.

    Parameters
    ----------
    labeller : Predictor or Result
        An arc labeller (:func:`train_labeller`, :func:`load_labeller`).
    dataset : TreeDataset
    heads : list of int arrays, each (n_i,)
        Heads of tokens 1..n_i (0 = root).

    Returns
    -------
    list of list of str
    """
    fm = labeller.fmap
    P = fm.prepare(dataset, heads=heads)
    y = fm.decode(labeller.w, P)
    return [[fm.label_names[k] for k in y[i, :n]] for i, n in enumerate(P.lengths)]


def labelled_scores(gold_heads, gold_rels, pred_heads, pred_rels, pos=None):
    """UAS, LAS and label accuracy, with and without punctuation (:func:`mmprog.metrics.is_punct` on ``pos``).

    Parameters
    ----------
    gold_heads, pred_heads : list of int arrays, each (n_i,)
    gold_rels, pred_rels : list of list of str
        ``pred_rels`` may be None (no labeller): the labelled scores are then left out.
    pos : list of list of str, optional

    Returns
    -------
    dict
        ``uas``, ``las``, ``label_accuracy`` over all tokens, the same with ``_no_punct``, and ``n_tokens``.
    """
    from .metrics import is_punct
    gh = np.concatenate([np.asarray(h).ravel() for h in gold_heads])
    ph = np.concatenate([np.asarray(h).ravel() for h in pred_heads])
    if gh.shape != ph.shape:
        raise DataError(f"{ph.shape[0]} predicted heads for {gh.shape[0]} gold ones; pass one per token")
    head_ok = gh == ph
    out = {"uas": float(head_ok.mean()), "n_tokens": int(gh.size)}
    keep = None
    if pos is not None:
        keep = ~is_punct([t for s in pos for t in s])
        out["uas_no_punct"] = float(head_ok[keep].mean())
    if pred_rels is not None:
        gr = np.array([r for rs in gold_rels for r in rs], dtype=object)
        pr = np.array([r for rs in pred_rels for r in rs], dtype=object)
        rel_ok = gr == pr
        out["las"] = float((head_ok & rel_ok).mean())
        out["label_accuracy"] = float(rel_ok.mean())
        if keep is not None:
            out["las_no_punct"] = float((head_ok & rel_ok)[keep].mean())
            out["label_accuracy_no_punct"] = float(rel_ok[keep].mean())
    return out


def evaluate_parser(parser, labeller, dataset):
    """:func:`labelled_scores` of a parser (and labeller, or None) on a treebank with gold heads and relations."""
    heads = [h[1:] for h in parser.predict(dataset)]
    rels = predict_relations(labeller, dataset, heads) if labeller is not None else None
    gold_rels = [s.get("deprel", ["_"] * len(s["form"])) for s in dataset.sentences]
    return labelled_scores(dataset.heads, gold_rels, heads, rels, pos=[s["pos"] for s in dataset.sentences])


# ----------------------------------------------------------------------------------------------------------------
# text in, text out
# ----------------------------------------------------------------------------------------------------------------

def _numbered_lines(stream, source):
    """(line number, text without its end, the end) of a binary stream, one line at a time (UTF-8)."""
    import zlib
    lines = iter(stream)
    k = 0
    while True:
        try:
            raw = next(lines)
        except StopIteration:
            return
        except (OSError, EOFError, zlib.error) as exc:     # a gzip stream cut short (EOFError) or damaged
            from .datasets.reading import one_line
            raise DataError(f"{source}:{k + 1}: cannot read the file ({one_line(exc)}); is the gzip file "
                            f"complete?") from None
        k += 1
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise DataError(f"{source}:{k}: byte {e.start} is not UTF-8 ({e.reason}); CoNLL-U files are UTF-8") \
                from None
        body = text.rstrip("\r\n")
        yield k, body, text[len(body):]


def _render(lines, heads, rels, dialect):
    """The block's lines with HEAD/DEPREL (and a given DEPS) replaced on its basic tokens."""
    out, m = [], 0
    for k, body, end in lines:
        f = body.split("\t")
        if body.lstrip(_BOM).startswith("#") or not f[0].lstrip(_BOM).isdigit():
            out.append(body + end)
            continue
        h = int(heads[m])
        rel = rels[m] if rels is not None else "_"
        f[6], f[7] = str(h), rel
        if dialect == "conllu" and f[8] != "_":
            f[8] = f"{h}:{rel}" if rels is not None else "_"
        m += 1
        out.append("\t".join(f) + end)
    return "".join(out)


def parse_stream(parser, labeller, stream, source, out, dialect="conllu", score=False, batch_tokens=None):
    """Parse a CoNLL-U/CoNLL-X byte stream and write it with HEAD and DEPREL predicted (see the module docstring).

    Parameters
    ----------
    parser : Predictor or Result
        An arc model (``fmap.kind == "arcs"``).
    labeller : Predictor or Result or None
    stream : binary file object
        Read line by line.
    source : str
        Name of the input in messages.
    out : text file object
    dialect : {"conllu", "conllx"}
    score : bool
        Also score the predictions against the heads (and relations) of the input; sentences without heads are
        left out of the scores.
    batch_tokens : int, optional
        Default :data:`BATCH_TOKENS`.

    Returns
    -------
    dict
        ``n_sentences``, ``n_tokens`` and, with ``score``, :func:`labelled_scores` of the annotated sentences.

    Raises
    ------
    DataError
        ``source:line`` of the first malformed line, or a file without sentences.
    """
    from .datasets.base import TreeDataset
    from .datasets.treebank import sentence_10col
    if getattr(parser.fmap, "kind", None) != "arcs":
        raise ParameterError(f"not a dependency model (feature map {parser.fmap.kind!r}); train one on "
                             f"conllu:/conllx: data")
    if dialect not in ("conllu", "conllx"):
        raise ParameterError(f'dialect must be "conllu" or "conllx"; got {dialect!r}')
    src = Path(source)
    batch_tokens = BATCH_TOKENS if batch_tokens is None else batch_tokens
    pending = []          # items to write in order: str (blank lines, comment-only blocks) or a sentence record
    batch = []            # sentence records of the pending items: [lines, sent, gold heads, pred heads, pred rels]
    totals = {"n_sentences": 0, "n_tokens": 0}
    gold_h, gold_r, pred_h, pred_r, tags = [], [], [], [], []

    def flush():
        if batch:
            ds = TreeDataset([b[1] for b in batch], [np.zeros(len(b[1]["form"]), dtype=np.int64) for b in batch],
                             name=src.name)
            heads = [h[1:] for h in parser.predict(ds)]
            rels = predict_relations(labeller, ds, heads) if labeller is not None else [None] * len(heads)
            for b, h, r in zip(batch, heads, rels):
                b[3], b[4] = h, r
                if score and b[2][0] >= 0:
                    gold_h.append(b[2])
                    gold_r.append(b[1]["deprel"])
                    pred_h.append(h)
                    pred_r.append(r)
                    tags.append(b[1]["pos"])
        out.write("".join(p if isinstance(p, str) else _render(p[0], p[3], p[4], dialect) for p in pending))
        pending.clear()
        batch.clear()

    def end_block(block):
        clean = [(k, body.lstrip(_BOM) if k == 1 else body) for k, body, _ in block]
        toks = [(k, body) for k, body in clean if not body.startswith("#")]
        if not toks:
            pending.append("".join(body + end for _, body, end in block))
            return 0
        got = sentence_10col(src, toks, dialect, totals["n_sentences"], unannotated=True)
        if got is None:
            pending.append("".join(body + end for _, body, end in block))
            return 0
        rec = [block, got[0], got[1], None, None]
        pending.append(rec)
        batch.append(rec)
        totals["n_sentences"] += 1
        totals["n_tokens"] += len(got[1])
        return len(got[1])

    block, n_tok = [], 0
    for k, body, end in _numbered_lines(stream, source):
        if (body.lstrip(_BOM) if k == 1 else body).strip() == "":
            if block:
                n_tok += end_block(block)
                block = []
            pending.append(body + end)
            if n_tok >= batch_tokens:
                flush()
                n_tok = 0
            continue
        block.append((k, body, end))
    if block:
        end_block(block)
    flush()
    if not totals["n_sentences"]:
        raise DataError(f"{source}: no sentences found")
    if score and gold_h:
        totals.update(labelled_scores(gold_h, gold_r, pred_h, pred_r if labeller is not None else None, pos=tags))
    return totals


# ----------------------------------------------------------------------------------------------------------------
# training with model selection (mmprog train on dependency data)
# ----------------------------------------------------------------------------------------------------------------

#: C tried on the dev data when ``--dev`` is given without ``--C-grid`` (n-slack scale)
DEFAULT_C_GRID = (0.1, 0.3, 1.0)


def dev_fraction(dev):
    """``--dev`` as a held-out fraction (a float), or None when it names a data spec (or is None)."""
    try:
        return None if dev is None else float(dev)
    except (TypeError, ValueError):
        return None


def split_dev(dataset, dev, load=None, accepts=None, what="dependency data; give a conllu:/conllx: file"):
    """(train, dev) from ``dev``: None (no dev), a fraction in (0, 1) (the last sentences of ``dataset``, taken
    in file order) or a data spec loaded by ``load``, which ``accepts(held)`` must take (default: a
    :class:`~mmprog.datasets.base.TreeDataset`; ``what`` names the data expected in the error)."""
    from .datasets.base import TreeDataset
    if dev is None:
        return dataset, None
    frac = dev_fraction(dev)
    if frac is None:
        held = load(dev)
        if not (accepts or (lambda d: isinstance(d, TreeDataset)))(held):
            raise ParameterError(f"--dev {dev!r} is not {what} or a fraction")
        return dataset, held
    n = len(dataset)
    k = int(round(frac * n))
    if not 0.0 < frac < 1.0 or k < 1 or k >= n:
        raise ParameterError(f"--dev as a fraction must be in (0, 1) and leave at least one sentence on each side "
                             f"of the {n}; got {dev!r}")
    return dataset[np.arange(n - k)], dataset[np.arange(n - k, n)]


def select_parser(train, dev, presets, Cs, fit_kwargs, report=None, projective=False, second_order=False):
    """Train one parser per (preset, C) and keep the best by dev UAS without punctuation.

    The candidates are trained one after another, C increasing, each warm-started from the previous C's fit of the
    same preset (``warm_start``: its master's active cuts, valid at every C, seed the next master; see
    :func:`mmprog.fit`); the training set's arc matrix is built once for all of them
    (:meth:`~mmprog.features.arcs.ArcFeatureMap.hold`).

    Parameters
    ----------
    train, dev : TreeDataset
        ``dev`` None: the single candidate is trained and returned.
    presets : list of str
        Arc template presets (:data:`~mmprog.features.arcs.ARC_PRESETS`).
    Cs : list of float
    fit_kwargs : dict
        For :func:`mmprog.fit` (everything but ``C`` and ``feature_map``).
    report : callable, optional
        Called with one dict per candidate (preset, C, dev scores, seconds).
    projective : bool
        Train and decode with Eisner's algorithm (projective trees) instead of Chu-Liu-Edmonds.
    second_order : bool
        Add adjacent-sibling factors (:class:`~mmprog.features.siblings.SiblingFeatureMap`, projective, decoded by
        the second-order Eisner algorithm).

    Returns
    -------
    (Result, list of dict)
        The chosen parser and every candidate's row.
    """
    from .engine import interrupts
    rows, best, best_score = [], None, -1.0
    interrupts.forget()                 # only a signal during these fits stops them
    for preset in presets:
        fmap = parser_features(preset, train, projective, second_order)
        if len(Cs) > 1:
            fmap.hold(train)          # the arc matrix of the training set is built once for every C
        try:
            res, best, best_score = _candidates(train, dev, preset, fmap, Cs, fit_kwargs, rows, best, best_score,
                                                report)
        finally:
            fmap.release()
        if res.termination == "interrupted":
            return res, rows
        if interrupts.pending():        # the signal came as a fit finished: the candidates so far stand
            break
    return best, rows


def parser_features(preset, train, projective=False, second_order=False):
    """The parser's feature map of arc template preset ``preset`` fitted on ``train``: arcs (Chu-Liu-Edmonds, or
    Eisner with ``projective``), or arcs and adjacent siblings with ``second_order``."""
    from .features.arcs import ArcFeatureMap
    if second_order:
        from .features.siblings import SiblingFeatureMap
        return SiblingFeatureMap(preset).fit(train)
    return ArcFeatureMap(preset, projective=projective).fit(train)


def refit_kwargs(fit_kwargs):
    """The fit keywords of a refit on the whole training file (:func:`refit_parser`, and token text's): without
    ``resume`` (the checkpoint holds a candidate's fit, on the other sentences) and without checkpoints (the file
    keeps the candidates' state, which a resumed C path reads; an interrupted refit leaves the chosen candidate)."""
    return {k: v for k, v in fit_kwargs.items() if k not in ("resume", "checkpoint", "checkpoint_every")}


def refit_parser(dataset, rows, fit_kwargs, report=None, projective=False, second_order=False):
    """The candidate of best dev UAS (without punctuation; the first of equals, as :func:`select_parser` keeps it)
    trained again on the whole of ``dataset``: with ``--dev FRACTION`` the dev sentences are part of the training
    file, and the chosen parser need not do without them (scikit-learn's ``refit``). Cold-started: the
    candidates' cuts were found on the other sentences. A SIGINT/SIGTERM during it ends it ``"interrupted"``
    (:mod:`mmprog.engine.interrupts`), the caller then keeping the candidate. Returns (result, its row)."""
    import time

    import mmprog
    from .engine import interrupts
    chosen = max((r for r in rows if "dev_uas_no_punct" in r), key=lambda r: r["dev_uas_no_punct"])
    kw = refit_kwargs(fit_kwargs)
    t0 = time.perf_counter()
    # a signal while the features are built, too, only stops the refit (the fit then returns "interrupted")
    with interrupts.catch_interrupts():
        fmap = parser_features(chosen["templates"], dataset, projective, second_order)
        res = mmprog.fit(dataset, feature_map=fmap, C=chosen["C"], **kw)
    row = {"refit_sentences": len(dataset), "templates": chosen["templates"], "C": chosen["C"],
           "termination": res.termination, "n_iter": res.n_iter, "gap": res.gap,
           "seconds": round(time.perf_counter() - t0, 1)}
    if report is not None:
        report(row)
    return res, row


def _candidates(train, dev, preset, fmap, Cs, fit_kwargs, rows, best, best_score, report):
    """The fits of one preset, C increasing, each warm-started from the one before (:func:`select_parser`): (last
    result, best, best dev score)."""
    import time

    import mmprog
    from .engine import interrupts
    prev = None
    for C in sorted(Cs):
        t0 = time.perf_counter()
        # a resumed fit takes its first cuts from the checkpoint (at its own C) instead
        warm = prev if fit_kwargs.get("resume") is None else None
        res = mmprog.fit(train, feature_map=fmap, C=C, warm_start=warm, **fit_kwargs)
        row = {"templates": preset, "C": C, "termination": res.termination, "n_iter": res.n_iter,
               "gap": res.gap, "warm_start_cuts": getattr(res, "warm_start_cuts", 0),
               "seconds": round(time.perf_counter() - t0, 1)}
        if dev is not None:
            sc = evaluate_parser(res, None, dev)
            row.update(dev_uas=sc["uas"], dev_uas_no_punct=sc["uas_no_punct"])
            if sc["uas_no_punct"] > best_score:
                best, best_score = res, sc["uas_no_punct"]
        else:
            best = res
        rows.append(row)
        if report is not None:
            report(row)
        # a signal during this fit, also one that came in the round that finished it: no further C
        if interrupts.pending():
            break
        prev = res
    return res, best, best_score


def train_treebank(dataset, fit_kwargs, dev=None, load=None, templates=None, C_grid=None, label_C=None,
                   labels=True, report=None, projective=False, second_order=False, refit=True):
    """What ``mmprog train`` does with dependency data: choose and train the parser, then the labeller.

    Parameters
    ----------
    dataset : TreeDataset
    fit_kwargs : dict
        :func:`mmprog.fit` keywords of the command (``C`` among them: the single C without ``dev``).
    dev : str, optional
        A data spec or a fraction of ``dataset`` held out (:func:`split_dev`); the parser (C in ``C_grid``, preset
        in ``templates``) is chosen by dev UAS among parsers trained on the rest; with a fraction and ``refit``,
        the chosen one is then trained on the whole of ``dataset`` (:func:`refit_parser`), and so is the labeller.
    load : callable
        Loads a data spec (for ``dev``).
    templates : str, optional
        Arc template preset, or several separated by commas (chosen on ``dev``); default ``"mcdonald05"``.
    C_grid : list of float, optional
        Default :data:`DEFAULT_C_GRID` with ``dev``, else ``[fit_kwargs["C"]]``.
    label_C : float, optional
        C of the labeller (default that of :func:`train_labeller`).
    labels : bool
        Train the labeller (when the data has relations).
    report : callable, optional
        Receives each parser candidate's row.
    projective : bool
        Projective parser (Eisner) instead of Chu-Liu-Edmonds (:func:`select_parser`).
    second_order : bool
        Arc and adjacent-sibling factors, projective (:func:`select_parser`).
    refit : bool
        With ``dev`` a fraction: train the chosen parser and the labeller on all of ``dataset`` (default), instead
        of keeping those trained without the dev sentences.

    Returns
    -------
    (Result, Result or None, dict)
        Parser, labeller, and ``{"candidates": rows, "dev_sentences": k, "refit": row}`` to print.
    """
    import time
    kw = dict(fit_kwargs)
    C = kw.pop("C", None)
    train, held = split_dev(dataset, dev, load)
    presets = [t.strip() for t in (templates or "mcdonald05").split(",") if t.strip()]
    if len(presets) > 1 and held is None:
        raise ParameterError(f"--arc-templates lists {len(presets)} presets; choosing among them needs --dev")
    if C_grid is None:
        C_grid = list(DEFAULT_C_GRID) if held is not None else [1.0 if C is None else C]
    elif held is None and len(C_grid) > 1:
        raise ParameterError("--C-grid lists several C; choosing among them needs --dev")
    parser, rows = select_parser(train, held, presets, C_grid, kw, report, projective=projective,
                                 second_order=second_order)
    info = {"candidates": rows}
    if held is not None:
        info["dev_sentences"] = len(held)
    from .engine import interrupts
    if (refit and held is not None and dev_fraction(dev) is not None and parser.termination != "interrupted"
            and not interrupts.pending()):
        refitted, info["refit"] = refit_parser(dataset, rows, kw, report, projective, second_order)
        if refitted.termination != "interrupted":
            parser, train = refitted, dataset
        # else: stopped by a signal: the chosen candidate, a finished fit, is kept (and the labeller skipped)
    labeller = None
    has_rels = any(r != "_" for s in train.sentences for r in s.get("deprel", ()))
    if labels and has_rels and not interrupts.pending():          # asked to stop: the parser alone is kept
        lab_kw = {k: kw[k] for k in ("time_limit", "solve_time_limit") if kw.get(k) is not None}
        t0 = time.perf_counter()
        labeller = train_labeller(train, **({} if label_C is None else {"C": label_C}), **lab_kw)
        info["labeller"] = {"C": labeller.params.get("C"), "termination": labeller.termination,
                            "n_iter": labeller.n_iter, "gap": labeller.gap,
                            "seconds": round(time.perf_counter() - t0, 1)}
    return parser, labeller, info
