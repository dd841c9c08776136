"""``python -m mmprog.bench parse``: mmprog's parser + labeller beside UDPipe 1's parser, same files, same run.

Both systems train on the same training file and parse the same test file with the gold POS tags and morphology
kept (UDPipe with ``tokenizer=none tagger=none``: its parser only), and are scored by one function
(:func:`mmprog.parsing.labelled_scores`): UAS and LAS over all tokens and without punctuation (the punctuation tags of
:func:`mmprog.metrics.is_punct`, as in Mao & Tsang's Table 7). Each system trains in a child process of its own, so
the peak resident memory is its own; training seconds are wall-clock seconds of the child (mmprog: parser and
labeller; UDPipe: its ``Trainer.train`` call). The children run at the same time (one per system and setting), so
their seconds are measured under the same load.

Tasks:

* ``talbanken`` — UD Swedish-Talbanken, the v1.0 pre-release split (4,287 / 497 / 1,215 sentences; train, dev,
  test as shipped);
* ``ptb`` — NLTK's 10% WSJ sample in dependency form (unlabelled, projective): files wsj_0001–0159 train,
  wsj_0160–0199 test (the README's split), converted to CoNLL-U with the one tag as UPOS and XPOS and relation
  ``dep``.

Usage::

    python -m mmprog.bench parse --task talbanken --record docs/records/parse.json   # the full split, C on dev
    python -m mmprog.bench parse --task ptb --mmprog-args "--slack one --C 0.3 --eps 0.5"
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import time

from ._child import run_child

#: task -> (train, test, dev) under the data root; ``{dev}`` in ``--mmprog-args`` becomes the dev file's spec
TASKS = {
    "talbanken": ("ud_swedish_talbanken/v1.0-pre_2015-01-05/sv-ud-train.conll.gz",
                  "ud_swedish_talbanken/v1.0-pre_2015-01-05/sv-ud-test.conll.gz",
                  "ud_swedish_talbanken/v1.0-pre_2015-01-05/sv-ud-dev.conll.gz"),
    "ptb": ("ptb_dependency_sample_nltk/wsj_0001-0199.dp.gz", None, None),
}
#: files wsj_0001..0159 train, the rest test (README of the shared copy)
PTB_TRAIN_FILES = 159
#: the setting of the full Talbanken record: C chosen on the dev file between 0.03 and 0.1 (on 1,000 training
#: sentences dev UAS-p was 71.3 / 73.7 / 73.8 / 73.8 at C = 0.003 / 0.01 / 0.03 / 0.1), projective trees (Eisner:
#: 74.3 against 73.8 for Chu-Liu-Edmonds at C = 0.03). Adding ``--second-order`` (adjacent siblings) gave 75.65 there
#: at C = 0.03, at about 2.4 times the training time
DEFAULT_MMPROG_ARGS = ("--slack one --eps 0.5 --drop-after 10 --arc-templates mst-ud --projective --dev {dev} "
                       "--C-grid 0.03,0.1")
#: UDPipe 1's parser with its documented defaults (the UD 2.0 models' settings are tuned per treebank), but
#: ``single_root=0``: the Talbanken v1.0-pre training file has a tree with two roots, which UDPipe's default
#: refuses; mmprog's decoders allow several root children as well
DEFAULT_UDPIPE_PARSER = "iterations=10;single_root=0"


def _write_conllu(ds, path, limit=None):
    """A TreeDataset as CoNLL-U (10 columns; relation ``dep`` where the data has none)."""
    with open(path, "w", encoding="utf-8") as fh:
        for k, (s, h) in enumerate(zip(ds.sentences, ds.heads)):
            if limit is not None and k >= limit:
                break
            rel = s.get("deprel", ["dep"] * len(h))
            feats = s.get("feats", ["_"] * len(h))
            for i in range(len(h)):
                fh.write("\t".join([str(i + 1), s["form"][i], s["lemma"][i], s["cpos"][i], s["pos"][i], feats[i],
                                    str(int(h[i])), rel[i] if rel[i] != "_" else "dep", "_", "_"]) + "\n")
            fh.write("\n")


def prepare_files(task, root, folder, limit=None):
    """(train, test) CoNLL-U paths for ``task`` (written to ``folder`` when converted or sliced)."""
    from ..datasets import load_conllu, load_malt_tab
    train_rel, test_rel, _ = TASKS[task]
    if task == "ptb":
        ds = load_malt_tab(os.path.join(root, train_rel))
        counts = []
        with open(os.path.join(root, "ptb_dependency_sample_nltk", "file_sentence_counts.tsv")) as fh:
            for line in fh:
                f = line.split()
                if len(f) >= 2 and f[-1].isdigit():
                    counts.append(int(f[-1]))
        cut = sum(counts[:PTB_TRAIN_FILES])
        if sum(counts) != len(ds):
            raise RuntimeError(f"file_sentence_counts.tsv sums to {sum(counts)}, the file has {len(ds)} sentences")
        from ..datasets.base import TreeDataset
        tr = TreeDataset(ds.sentences[:cut], ds.heads[:cut])
        te = TreeDataset(ds.sentences[cut:], ds.heads[cut:])
        paths = os.path.join(folder, "train.conllu"), os.path.join(folder, "test.conllu")
        _write_conllu(tr, paths[0], limit)
        _write_conllu(te, paths[1])
        return paths
    train, test = os.path.join(root, train_rel), os.path.join(root, test_rel)
    if limit:
        path = os.path.join(folder, "train.conllu")
        _write_conllu(load_conllu(train), path, limit)
        train = path
    return train, test


def run_mmprog(train, test, mmprog_args, folder):
    """Train through ``mmprog train`` in a child; score its parser + labeller on ``test`` here."""
    import mmprog
    from ..datasets import load_conllu
    from ..parsing import evaluate_parser, load_labeller
    model = os.path.join(folder, "model")
    argv = [sys.executable, "-m", "mmprog.cli", "train", "--data", f"conllu:{train}", "--out", model,
            "--json"] + shlex.split(mmprog_args)
    out, peak_mb, seconds = run_child(argv)
    summary = json.loads(out)
    parser = mmprog.load(model)
    labeller = load_labeller(model)
    sc = evaluate_parser(parser, labeller, load_conllu(test))
    row = {"system": "mmprog", "setting": mmprog_args, "train_seconds": round(seconds, 1),
           "peak_mb": round(peak_mb),
           "n_iter": summary.get("n_iter"), "termination": summary.get("termination"), "gap": summary.get("gap"),
           "n_features": parser.fmap.dim, "templates": len(parser.fmap.group_names)}
    if "templates_removed" in summary:
        # MTL: the templates whose weight the fit drove below the paper's threshold (switched off)
        row["templates_removed"] = summary["templates_removed"]
    lab = summary.get("labeller")
    if lab:
        # the labeller is a certified fit of its own: its C, how it ended and its relative gap
        row.update(labeller_C=lab["C"], labeller_termination=lab["termination"], labeller_gap=lab["gap"],
                   labeller_seconds=lab.get("seconds"))
    # seconds of the parser's candidates (every C tried on the dev data) and of the chosen one's refit on the whole
    # training file (--dev FRACTION); the rest is set-up and the labeller
    cands = summary.get("candidates") or []
    refit = summary.get("refit")
    row["parser_train_seconds"] = round(sum(c.get("seconds", 0.0) for c in cands + ([refit] if refit else [])), 1)
    if refit:
        # n_iter, termination and gap above are the refit's (the parser saved)
        row.update(refit_sentences=refit["refit_sentences"], refit_seconds=refit["seconds"])
    if len(cands) > 1:
        # model selection on the dev data: every candidate's dev UAS (no punctuation) and the chosen one
        row["dev_uas_no_punct_by_candidate"] = "; ".join(
            f"{c['templates']} C={c['C']:g}: {100 * c['dev_uas_no_punct']:.2f}" for c in cands)
        best = max(cands, key=lambda c: c["dev_uas_no_punct"])
        row["chosen"] = f"{best['templates']} C={best['C']:g}"
    row.update(_percent(sc))
    return row


def _percent(sc):
    keys = ("uas", "las", "uas_no_punct", "las_no_punct", "label_accuracy_no_punct")
    return {k: round(100 * sc[k], 2) for k in keys if k in sc}


def udpipe_child(train, test, parser_options, out_path):
    """Run in the child: train UDPipe's parser on ``train`` (gold tags kept), parse ``test``, write its CoNLL-U to
    ``out_path`` and print {"train_seconds"} as JSON."""
    from ufal.udpipe import InputFormat, Model, OutputFormat, ProcessingError, Sentence, Sentences, Trainer

    def read(path):
        from ..datasets.reading import read_bytes
        fmt = InputFormat.newConlluInputFormat()
        fmt.setText(read_bytes(path).decode("utf-8"))
        sents, err = Sentences(), ProcessingError()
        s = Sentence()
        while fmt.nextSentence(s, err):
            sents.push_back(s)
            s = Sentence()
        if err.occurred():
            raise RuntimeError(f"{path}: {err.message}")
        return sents

    tr = read(train)
    err = ProcessingError()
    t0 = time.perf_counter()
    blob = Trainer.train("morphodita_parsito", tr, Sentences(), "none", "none", parser_options, err)
    seconds = time.perf_counter() - t0
    if err.occurred():
        raise RuntimeError(f"UDPipe training failed: {err.message}")
    with tempfile.NamedTemporaryFile("wb", suffix=".udpipe", delete=False) as fh:
        fh.write(blob if isinstance(blob, bytes) else blob.encode("latin-1"))
    model = Model.load(fh.name)
    os.unlink(fh.name)
    if model is None:
        raise RuntimeError("UDPipe could not load the model it trained")
    out = OutputFormat.newConlluOutputFormat()
    with open(out_path, "w", encoding="utf-8") as fh:
        for s in read(test):
            model.parse(s, Model.DEFAULT)
            fh.write(out.writeSentence(s))
    print(json.dumps({"train_seconds": seconds}))


def run_udpipe(train, test, parser_options, folder):
    from ..datasets import load_conllu
    from ..parsing import labelled_scores
    parsed = os.path.join(folder, "udpipe.conllu")
    code = (f"from mmprog.bench.parse import udpipe_child; udpipe_child({train!r}, {test!r}, "
            f"{parser_options!r}, {parsed!r})")
    out, peak_mb, _ = run_child([sys.executable, "-c", code])
    gold, pred = load_conllu(test), load_conllu(parsed)
    sc = labelled_scores(gold.heads, [s["deprel"] for s in gold.sentences], pred.heads,
                         [s["deprel"] for s in pred.sentences], pos=[s["pos"] for s in gold.sentences])
    row = {"system": "udpipe", "setting": f"parser {parser_options}; tokenizer=none tagger=none (gold tags)",
           "train_seconds": round(json.loads(out)["train_seconds"], 1), "peak_mb": round(peak_mb)}
    row.update(_percent(sc))
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m mmprog.bench parse", description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", default="talbanken", choices=sorted(TASKS))
    ap.add_argument("--data-root", default=None, help="folder of the shared data (default $MMPROG_DATA or "
                    "../shared/data beside the checkout)")
    ap.add_argument("--limit", type=int, default=None, help="train on the first LIMIT sentences only")
    ap.add_argument("--mmprog-args", action="append", default=None,
                    help="options of `mmprog train` (repeatable: one row each; {dev} = the task's dev file, or "
                         f"give a fraction); default {DEFAULT_MMPROG_ARGS!r}")
    ap.add_argument("--udpipe-parser", default=DEFAULT_UDPIPE_PARSER, help="UDPipe parser options")
    ap.add_argument("--skip", action="append", default=[], choices=["mmprog", "udpipe"])
    ap.add_argument("--record", default=None, metavar="PATH", help="write the machine-readable record here")
    args = ap.parse_args(argv)
    from ..datasets.registry import default_data_root
    root = args.data_root or str(default_data_root())
    from concurrent.futures import ThreadPoolExecutor
    dev_rel = TASKS[args.task][2]
    settings = args.mmprog_args or [DEFAULT_MMPROG_ARGS]
    if dev_rel is None and any("{dev}" in a for a in settings):
        raise SystemExit(f"task {args.task} has no dev file; give --dev FRACTION in --mmprog-args")
    settings = [a.replace("{dev}", f"conllu:{os.path.join(root, dev_rel)}") if dev_rel else a for a in settings]
    jobs = []
    if "udpipe" not in args.skip:
        # the peer is the point of this bench: a record without it must be asked for (--skip udpipe), never quiet
        try:
            import ufal.udpipe  # noqa: F401
        except ImportError:
            print("bench parse: ufal.udpipe is not installed (make env installs it from requirements.lock, or pip "
                  "install '.[bench]'); give --skip udpipe to run mmprog alone", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory() as d, ThreadPoolExecutor(max_workers=len(settings) + 1) as pool:
        train, test = prepare_files(args.task, root, d, args.limit)

        def announce(fut):
            e = fut.exception()
            print(json.dumps(fut.result()) if e is None else f"a system failed: {e}", file=sys.stderr)
        # the systems train side by side, each in its own child process (its own peak memory)
        if "udpipe" not in args.skip:
            jobs.append(pool.submit(run_udpipe, train, test, args.udpipe_parser, d))
        if "mmprog" not in args.skip:
            for k, a in enumerate(settings):
                sub = os.path.join(d, f"mmprog{k}")
                os.makedirs(sub)
                jobs.append(pool.submit(run_mmprog, train, test, a, sub))
        for j in jobs:
            j.add_done_callback(announce)
        rows = [j.result() for j in jobs]
    for r in rows:
        r["task"] = args.task
    head = f"{'system':<8} {'train s':>8} {'peak MB':>8} {'UAS':>6} {'LAS':>6} {'UAS-p':>6} {'LAS-p':>6}  setting"
    print(head)
    for r in rows:
        print(f"{r['system']:<8} {r['train_seconds']:>8.1f} {r['peak_mb']:>8} {r.get('uas', float('nan')):>6.2f} "
              f"{r.get('las', float('nan')):>6.2f} {r.get('uas_no_punct', float('nan')):>6.2f} "
              f"{r.get('las_no_punct', float('nan')):>6.2f}  {r['setting']}")
    if args.record:
        from . import record
        notes = [f"task {args.task}: train {os.path.basename(TASKS[args.task][0])}"
                 + (f" (first {args.limit} sentences)" if args.limit else ""),
                 "gold POS/morphology kept by both systems; UAS-p/LAS-p exclude punctuation (mmprog.metrics.is_punct)",
                 "train_seconds: wall-clock of each system's training child on a shared 2-core machine; the "
                 "children run at the same time (one per system and setting), so they share the load"]
        record.write(args.record, "parse", rows, packages=("ufal.udpipe",), notes=notes,
                     argv=sys.argv[2:] if argv is None else argv)
    return 0
