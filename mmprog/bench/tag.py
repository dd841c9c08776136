"""``python -m mmprog.bench tag [--record PATH]``: tagging throughput of mmprog and CRFsuite on one CoNLL file, in one run.

mmprog is timed end to end, as ``mmprog tag`` runs: reading the file, features from the model's templates, Viterbi,
writing the labelled lines (to memory); the first pass, which also loads the compiled kernels and builds the
per-word score sums (:mod:`mmprog.features.template_scores`), is printed apart from the best of the others.
CRFsuite (python-crfsuite, the ``bench`` extra) is timed twice: its tagger alone on features built beforehand (the
sklearn-crfsuite tutorial's token dicts), and end to end (reading with :func:`mmprog.datasets.load_conll`, building
the dicts, tagging). The CRFsuite model is trained here on the training file (c1 = c2 = 0.1, 100 iterations) unless
``--crfsuite-model`` names one. Best of ``--repeat`` runs (mmprog: of those after the first), one core; both the
wall-clock and the process CPU time (``time.process_time``) are printed, since on a shared machine the wall clock
mostly measures the other jobs.

Example::

    mmprog train --data conll:conll2002/esp.train.gz,columns=form/pos/ne --templates rich ... --out esp-rich
    python -m mmprog.bench tag --model esp-rich
"""
from __future__ import annotations

import argparse
import io
import os
import tempfile
import time


def main(argv=None):
    from ..datasets import load_conll
    from ..datasets.reading import open_binary
    from ..datasets.registry import resolve_path
    from ..result import load
    from ..tagging import tag_stream
    from .crf import sent2features
    ap = argparse.ArgumentParser(prog="python -m mmprog.bench tag", description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="mmprog text model (from `mmprog train --templates ...`)")
    ap.add_argument("--file", default="conll2002/esp.testb.gz", help="CoNLL file to tag (default: Spanish testb)")
    ap.add_argument("--columns", default="form/pos/ne")
    ap.add_argument("--train", default="conll2002/esp.train.gz", help="training file of the CRFsuite model")
    ap.add_argument("--crfsuite-model", default=None, help="a trained CRFsuite model (default: train one here)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--record", metavar="PATH", help="also write the run's rows as a JSON record (mmprog.bench.record)")
    args = ap.parse_args(argv)
    cols = tuple(args.columns.split("/"))
    path = resolve_path(args.file)
    pred = load(args.model)
    rows = []

    best = cpu = float("inf")
    for r in range(max(args.repeat, 2)):
        c0 = time.process_time()
        with open_binary(path) as fh:
            info = tag_stream(pred, fh, str(path), io.StringIO())
        if r == 0:
            # the first pass also loads the compiled kernels and builds the per-word score sums and key hashes
            # that later passes (and later pieces of a long stream) reuse
            first = (info["seconds"], time.process_time() - c0)
        else:
            best, cpu = min(best, info["seconds"]), min(cpu, time.process_time() - c0)
    n_tok = info["tokens"]
    rows.append(("mmprog tag, first pass (kernels loaded, word tables built)", n_tok) + first)
    rows.append(("mmprog tag (end to end: read, templates, Viterbi, write)", n_tok, best, cpu))

    try:
        import pycrfsuite
    except ImportError:
        print("python-crfsuite is not installed (pip install '.[bench]'); CRFsuite rows skipped")
        pycrfsuite = None
    if pycrfsuite is not None:
        with tempfile.TemporaryDirectory() as d:
            model = args.crfsuite_model
            if model is None:
                tr = load_conll(resolve_path(args.train), columns=cols)
                trainer = pycrfsuite.Trainer(verbose=False)
                for k in range(len(tr)):
                    trainer.append(sent2features(tr, k), tr.labels[k])
                trainer.set_params({"c1": 0.1, "c2": 0.1, "max_iterations": 100,
                                    "feature.possible_transitions": True})
                model = os.path.join(d, "m.crfsuite")
                trainer.train(model)
            tagger = pycrfsuite.Tagger()
            tagger.open(model)
            te = load_conll(path, columns=cols)
            feats = [pycrfsuite.ItemSequence(sent2features(te, k)) for k in range(len(te))]
            t_tag = t_e2e = c_tag = c_e2e = float("inf")
            for _ in range(args.repeat):
                t0, c0 = time.perf_counter(), time.process_time()
                for x in feats:
                    tagger.tag(x)
                t_tag, c_tag = min(t_tag, time.perf_counter() - t0), min(c_tag, time.process_time() - c0)
                t0, c0 = time.perf_counter(), time.process_time()
                te2 = load_conll(path, columns=cols)
                out = io.StringIO()
                for k in range(len(te2)):
                    y = tagger.tag(sent2features(te2, k))
                    out.write("".join(f"{w} {t}\n" for w, t in zip(te2.sentences[k][cols[0]], y)) + "\n")
                t_e2e, c_e2e = min(t_e2e, time.perf_counter() - t0), min(c_e2e, time.process_time() - c0)
            rows.append(("CRFsuite tagger alone (features built beforehand)", te.n_tokens, t_tag, c_tag))
            rows.append(("CRFsuite end to end (read, tutorial features, tag, write)", te.n_tokens, t_e2e, c_e2e))
    print(f"{'system':<60} {'tokens':>8} {'wall s':>8} {'tokens/s':>10} {'CPU s':>8} {'tokens/CPU s':>12}")
    for name, n, secs, c in rows:
        print(f"{name:<60} {n:>8} {secs:>8.3f} {n / secs:>10,.0f} {c:>8.3f} {n / c:>12,.0f}")
    if args.record:
        from . import record
        record.write(args.record, "tag",
                     [{"system": name.split(" ")[0], "setting": name, "tokens": n, "wall_s": secs,
                       "tokens_per_s": n / secs, "cpu_s": c, "tokens_per_cpu_s": n / c} for name, n, secs, c in rows],
                     packages=("python-crfsuite",), argv=argv,
                     notes=[f"file {args.file}, model {args.model}; best of {args.repeat} runs, one core",
                            "the CRFsuite model: trained here (c1 = c2 = 0.1, 100 iterations) unless --crfsuite-model"])
        print(f"record written to {args.record}")
    return 0
