"""The ``mmprog`` command line: train, predict, evaluate, export, solvers, data, demo (and more as programs land).

Data are given as a loader name and a path or generator parameters, e.g. ``--data ocr:../shared/data/ocr_letters/letters.npz``,
``--data tsv:my.tsv``, ``--data synthetic:seed=0,n_instances=200`` (``mmprog data`` lists them).
Every command takes ``--json`` for machine-readable output. Errors are one line on stderr with exit code 2.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys

from . import __version__
from .commands import (_EXTRA_COMMANDS, EXIT_INTERRUPTED, _parse_value, _print, command, load_data,  # noqa: F401
                       long_run_options, save_first, table)
from .exceptions import MMProgError
from .engine.memory import keep_freed_memory

# ----------------------------------------------------------------------------------------------- commands
def cmd_train(args):
    import mmprog
    if args.templates:
        from .tagging_cli import train_text
        return train_text(args)
    if args.tag_scheme != "asis":
        from .exceptions import ParameterError
        raise ParameterError(f"--tag-scheme {args.tag_scheme} converts the labels of token text and needs "
                             f"--templates (conll:FILE data); give --templates or leave --tag-scheme at asis")
    ds = load_data(args.data, args.train_fold, "train")
    extra = dict(kv.split("=", 1) for kv in args.param or [])
    extra = {k: _parse_value(v) for k, v in extra.items()}
    show = None
    if args.show_every or args.at_iter:
        from .inspect import show_model
        from .programs import get_program
        prog = get_program(args.program or "m3n", C=1.0 if args.C is None else args.C, **extra)

        def show(model, rec):
            if args.show_every and rec.iteration % args.show_every == 0:
                prog.materialise(model)       # rows kept as arrays for the native HiGHS route are written first
                print(show_model(model), file=sys.stderr)
    long_run = long_run_options(args)
    kw = dict(program=args.program, C=args.C, solver=args.solver, slack=args.slack, eps=args.eps,
              max_iter=args.max_iter, time_limit=args.time_limit, oracle=args.oracle, n_jobs=args.n_jobs,
              client=args.client, show=show, show_every=args.show_every, progress=not args.json,
              drop_after=args.drop_after, max_cuts=args.max_cuts, order=args.order, transitions=args.transitions,
              **long_run, **extra)
    trees = getattr(ds, "heads", None) is not None
    if trees:       # dependency data: parser chosen on --dev, then the labeller (mmprog.parsing)
        from . import parsing
        res, labeller, info = parsing.train_treebank(
            ds, kw, dev=args.dev, load=load_data, templates=args.arc_templates, C_grid=args.C_grid,
            report=lambda row: print(json.dumps(row), file=sys.stderr))
    elif args.dev or args.arc_templates or args.C_grid:
        raise MMProgError("--dev, --arc-templates and --C-grid are for dependency data (conllu:/conllx:)")
    else:
        res = mmprog.fit(ds, **kw)
    out = res.summary()
    rc = save_first(res, args, out, long_run["checkpoint"])
    if rc is not None:
        return rc
    evaluate = res.evaluate
    if trees:
        out.update(info)
        if labeller is not None and args.out:
            out["saved_labeller"] = labeller.save(parsing.labeller_base(args.out))

        def evaluate(data):
            return parsing.evaluate_parser(res, labeller, data)
    out["train"] = evaluate(ds)
    if args.test:
        out["test"] = evaluate(load_data(args.test))
    elif args.train_fold is not None:
        out["test"] = evaluate(load_data(args.data, args.train_fold, "test"))
    if args.export:
        out["exported"] = res.export(args.export)
    _print(out, args.json)


def cmd_predict(args):
    import mmprog
    pred = mmprog.load(args.model)
    if pred.extractor is not None:       # a model trained on text reads the text itself
        from .datasets.registry import load_spec
        from .tagging import predict_tags
        rows = predict_tags(pred, load_spec(args.data))       # in the training file's label encoding
    else:
        ds = load_data(args.data, args.train_fold, "test" if args.train_fold is not None else "train")
        labels = pred.predict(ds)
        names = pred.label_names
        rows = [[names[int(v)] if names and v >= 0 else int(v) for v in y] for y in labels]
    if args.json:
        _print(rows, True)
    else:
        for r in rows:
            print(" ".join(map(str, r)))


def cmd_evaluate(args):
    import mmprog
    pred = mmprog.load(args.model)
    if pred.extractor is not None:
        from .tagging_cli import evaluate_text
        return evaluate_text(pred, args)
    ds = load_data(args.data, args.train_fold, "test" if args.train_fold is not None else "train")
    if getattr(pred.fmap, "kind", None) == "arcs":      # UAS and, with the saved labeller, LAS
        from .parsing import evaluate_parser, load_labeller
        return _print(evaluate_parser(pred, load_labeller(args.model), ds), args.json)
    _print(pred.evaluate(ds), args.json)


def cmd_export(args):
    import mmprog
    ds = load_data(args.data, args.train_fold, "train")
    extra = {k: _parse_value(v) for k, v in (kv.split("=", 1) for kv in args.param or [])}
    if args.at_iter:
        res = mmprog.fit(ds, program=args.program, C=args.C, solver=args.solver, slack=args.slack, eps=args.eps,
                         max_iter=args.at_iter, **extra)
    else:
        res = mmprog.fit(ds, program=args.program, C=args.C, solver=args.solver, slack=args.slack, eps=args.eps,
                         max_iter=args.max_iter, **extra)
    path = res.export(args.out)
    _print({"written": path, "n_iter": res.n_iter, "n_cuts": res.n_cuts,
            "primal_objective": res.primal_objective}, args.json)


def cmd_solvers(args):
    from .solvers import table as solver_table
    from .solvers import format_table
    rows = solver_table()
    if args.json:
        _print(rows, True)
    else:
        print(format_table(rows))


def cmd_data(args):
    from .datasets.registry import describe_loaders
    rows = describe_loaders()
    for r in rows:
        if isinstance(r.get("options"), list):
            r["options"] = ",".join(r["options"])
    if args.json:
        _print(rows, True)
    else:
        print(table(rows, list(rows[0].keys())))


def cmd_demo(args):
    from .demo import main as demo_main
    return demo_main(json_out=args.json, data_root=args.data_root, quick=args.quick)


def _train_args(p, with_out=True):
    p.add_argument("--data", required=True, help="data spec, e.g. synthetic:seed=0 or ocr:PATH (see `mmprog data`)")
    p.add_argument("--train-fold", type=int, default=None, help="train on this fold of the source, test on the rest")
    p.add_argument("--program", default=None, help="registered program (m3n, l1m3n, ...; default m3n)")
    p.add_argument("--C", type=float, default=None, help="slack weight, n-slack scale (default 1.0)")
    p.add_argument("--solver", default=None, help="solver name (see `mmprog solvers`)")
    p.add_argument("--slack", default=None, choices=["n", "one"], help="default: the program's own (n, or one "
                   "for mtl/pblock)")
    p.add_argument("--eps", type=float, default=1e-3)
    p.add_argument("--max-iter", type=int, default=500)
    p.add_argument("--param", action="append", metavar="NAME=VALUE", help="program parameter (repeatable)")


def build_parser():
    ap = argparse.ArgumentParser(prog="mmprog", description=__doc__.splitlines()[0])
    ap.add_argument("--version", action="version", version=f"mmprog {__version__}")
    ap.add_argument("-v", "--verbose", action="store_true", help="log the cutting-plane progress table")
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("train", help="train a program on data; prints the run summary")
    _train_args(p)
    p.add_argument("--test", default=None, help="data spec of a test set")
    p.add_argument("--dev", default=None, metavar="SPEC|FRACTION", help="dependency data: choose C (--C-grid) and "
                   "--arc-templates by UAS on this data spec or held-out fraction of --data")
    p.add_argument("--C-grid", default=None, type=lambda v: [float(c) for c in v.split(",")], metavar="C1,C2,...",
                   help="with --dev: the C to try (default 0.1,0.3,1)")
    p.add_argument("--arc-templates", default=None, metavar="PRESET[,PRESET]",
                   help="dependency data: arc template preset (mcdonald05, mcdonald05+cpos, mst-ud); several "
                   "are chosen among on --dev")
    p.add_argument("--templates", default=None, metavar="PRESET|FILE", help="train on token text (conll:FILE): "
                   "features from a CRF++ template file or a preset (ner, tp1, tp2, rich, chunk); see mmprog.tagging")
    p.add_argument("--min-count", type=int, default=1, help="with --templates: keep features seen this often")
    p.add_argument("--lexicon", action="append", default=None, metavar="NAME=FILE",
                   help="with --templates: a gazetteer / word-cluster file ('word value' per line), addressed in "
                        "templates as the derived column NAME, e.g. %%x[0,0:NAME]; repeatable")
    p.add_argument("--tag-scheme", default="asis", choices=["asis", "iobes"],
                   help="with --templates: label encoding the chain is trained on. asis (default): the file's "
                        "labels as they are; iobes: BIO/IOB1 chunk labels converted to IOBES (S- single-token "
                        "chunk, E- last token), decoded in IOBES and written back in the file's encoding by tag, "
                        "evaluate and predict (the model records it); tag --marginals then gives the marginal of "
                        "the decoded IOBES label")
    p.add_argument("--order", type=int, default=1, choices=[1, 2],
                   help="Markov order of the chain's labels: 2 adds label-trigram features, decoded exactly by "
                        "Viterbi over label pairs (no marginals or top-k)")
    p.add_argument("--transitions", default="all", choices=["all", "seen"],
                   help="with --order 2: seen confines the labelings to the label bigrams seen in the training "
                        "labels (kept in the model), which makes the pair Viterbi cheaper, e.g. with IOBES labels")
    p.add_argument("--drop-after", type=int, default=None, help="drop cuts inactive for this many rounds")
    p.add_argument("--max-cuts", type=int, default=None,
                   help="at most this many active cuts a slack: older ones are aggregated (bounds memory)")
    p.add_argument("--time-limit", type=float, default=None, help="wall-clock seconds for the whole fit")
    p.add_argument("--solve-time-limit", type=float, default=None,
                   help="cap in seconds on one master solve, passed to the solver (default 600)")
    p.add_argument("--checkpoint", default=None, metavar="PATH",
                   help="keep the working set and iterate in PATH.npz (atomic writes); written every "
                        "--checkpoint-every rounds and when the fit is interrupted or stopped by a limit")
    p.add_argument("--checkpoint-every", type=int, default=None, metavar="N")
    p.add_argument("--stabilise", default=None, choices=["in-out"],
                   help="separate at a point between the best point so far and the master's (in-out); the master "
                        "and its optimum are unchanged")
    p.add_argument("--inout-weight", type=float, default=0.8, metavar="LAMBDA",
                   help="weight of the best point in the in-out separation point, in [0, 1) (default 0.8)")
    p.add_argument("--line-search", type=int, default=0, metavar="M",
                   help="with --stabilise in-out: also evaluate the full objective at M points between the master's "
                        "point and the best point, which may move the best point (default 0)")
    p.add_argument("--gap-tol", type=float, default=None,
                   help="also stop once (upper - lower) / max(1, |upper|) <= GAP_TOL")
    p.add_argument("--resume", default=None, metavar="CHECKPOINT",
                   help="continue the fit saved in CHECKPOINT (same --data; program and parameters from it)")
    p.add_argument("--oracle", default="serial", choices=["serial", "thread", "process", "dask"])
    p.add_argument("--n-jobs", type=int, default=None)
    p.add_argument("--client", default=None, help="dask scheduler address for --oracle dask")
    p.add_argument("--show-every", type=int, default=None, help="print the master's structure every N rounds")
    p.add_argument("--at-iter", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--out", default=None, help="save the model as OUT.json + OUT.npz")
    p.add_argument("--export", default=None, help="write the final master (.lp, .mps, .nl, .gms)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_train)

    for name, fn, help_ in (("predict", cmd_predict, "predict with a saved model"),
                            ("evaluate", cmd_evaluate, "evaluate a saved model")):
        p = sub.add_parser(name, help=help_)
        p.add_argument("--model", required=True, help="saved model (PATH.json with PATH.npz beside it)")
        p.add_argument("--data", required=True)
        p.add_argument("--train-fold", type=int, default=None, help="use the other folds of the source as test data")
        p.add_argument("--json", action="store_true")
        p.set_defaults(fn=fn)

    p = sub.add_parser("export", help="train and write the master program (.lp, .mps, .nl, .gms)")
    _train_args(p)
    p.add_argument("--out", required=True, help="file to write; the extension picks the format")
    p.add_argument("--at-iter", type=int, default=None, help="stop after this many rounds and write the master then")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_export)

    p = sub.add_parser("solvers", help="list the solver registry: classes, duals, persistence, availability")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_solvers)

    p = sub.add_parser("data", help="list the data loaders and generators")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_data)

    p = sub.add_parser("demo", help="the main job: P0 and P1, n-slack and 1-slack, on synthetic data and OCR")
    p.add_argument("--data-root", default=None, help="folder with the real datasets (default ../shared/data)")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_demo)

    _load_extra_commands()
    for name, (help_, fn) in _EXTRA_COMMANDS.items():
        p = sub.add_parser(name, help=help_)
        p.set_defaults(fn=fn(p))
    return ap


def _load_extra_commands():
    """Sub-commands that live beside their subject (verify, show, reproduce): imported if present."""
    import importlib
    for mod in ("mmprog.duality_cli", "mmprog.reproduce", "mmprog.tagging_cli"):
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name != mod:
                raise


def main(argv=None):
    ap = build_parser()
    args = ap.parse_args(argv)
    # before any large array exists: large rounds otherwise pay the kernel to zero fresh pages (see mmprog.engine.memory)
    keep_freed_memory()
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(message)s")
    try:
        rc = args.fn(args)
    except MMProgError as e:
        print(f"mmprog: error: {e}", file=sys.stderr)
        return 2
    except (FileNotFoundError, IsADirectoryError, PermissionError) as e:
        print(f"mmprog: error: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # outside a fit (loading data, evaluating): nothing to keep
        print("mmprog: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return int(rc or 0)


if __name__ == "__main__":
    # run as `python -m mmprog.cli` this file is __main__, while the sub-command modules register into the imported
    # mmprog.cli: use that one's main so they are found
    from mmprog.cli import main as _main
    sys.exit(_main())
