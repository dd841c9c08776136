"""``mmprog train``: train a program on data (or, with ``--templates``, on token text) and print the run summary."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

from .common import (check_outputs, load_data, long_run_options, model_files, print_result, program_params,
                     refuse_clobbering, save_first, spec_paths, training_arguments)

NAME = "train"
HELP = "train a program on data; prints the run summary"
ORDER = 10


def add_arguments(p):
    training_arguments(p)
    p.add_argument("--test", default=None, help="data spec of a test set")
    p.add_argument("--dev", default=None, metavar="SPEC|FRACTION", help="choose C (--C-grid) on this data spec or "
                   "held-out fraction of --data (its last sentences): by UAS for dependency data (and "
                   "--arc-templates), by the task's F1 (chunks, entities) or token accuracy for token text "
                   "(--templates); with a fraction, the chosen C is then trained on all of --data (see --no-refit)")
    p.add_argument("--no-refit", dest="refit", action="store_false", help="with --dev FRACTION: keep the fit of "
                   "the chosen C made without the held-out sentences, instead of training it again on all of --data")
    p.add_argument("--C-grid", default=None, type=lambda v: [float(c) for c in v.split(",")], metavar="C1,C2,...",
                   help="with --dev: the C to try (default 0.1,0.3,1); every C's dev score is printed")
    p.add_argument("--route", default="auto", choices=["auto", "cutting-plane", "bcfw"],
                   help="how the program is solved: bcfw (block-coordinate Frank-Wolfe on P0's dual: m3n, n-slack, "
                        "the chain maps it covers), cutting-plane (every program), auto (default): bcfw where it "
                        "covers the fit and no cutting-plane option (--eps, --drop-after, --stabilise, --checkpoint, "
                        "...) is given; --solver is not one: on bcfw it solves the master on the route's working set)")
    p.add_argument("--arc-templates", default=None, metavar="PRESET[,PRESET]",
                   help="dependency data: arc template preset (mcdonald05, mcdonald05+cpos, mst-ud); several are "
                        "chosen among on --dev")
    p.add_argument("--projective", action="store_true", help="dependency data: projective trees (Eisner) in "
                   "training and parsing, instead of Chu-Liu-Edmonds' non-projective ones")
    p.add_argument("--second-order", action="store_true", help="dependency data: adjacent-sibling factors beside "
                   "the arcs (McDonald & Pereira 2006), projective trees by the exact second-order Eisner algorithm")
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
                   help="the stopping rule: stop ('converged') once the certified relative gap (upper - lower) / "
                        "max(1, |upper|) is <= GAP_TOL (default 1e-2; with --eps and no --gap-tol the epsilon rule "
                        "alone stops the fit)")
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


def check_before_fit(args, checkpoint):
    """Before the data are read: parameters in range, no output that is an input (or another output), and every
    output writable — so that a finished fit is never lost to a bad path."""
    from ..exceptions import check_n_jobs
    from ..engine.checkpoint import path_of
    from ..exceptions import ParameterError
    check_n_jobs(args.n_jobs, "--n-jobs")
    for opt, value in (("--checkpoint-every", args.checkpoint_every), ("--show-every", args.show_every)):
        if value is not None and value < 1:
            raise ParameterError(f"{opt} must be an int >= 1; got {value}")
    outputs = []
    if args.out:
        outputs += [("--out", p) for p in model_files(args.out)]
    if checkpoint:
        outputs.append(("--checkpoint", path_of(checkpoint)))
    if args.export:
        outputs.append(("--export", args.export))
    inputs = [("--data", p) for p in spec_paths(args.data)]
    inputs += [("--test", p) for p in spec_paths(args.test)]
    inputs += [("--templates", args.templates)] if args.templates and os.path.isfile(args.templates) else []
    inputs += [("--lexicon", spec.partition("=")[2]) for spec in args.lexicon or []]
    resume = [("--resume", path_of(args.resume))] if args.resume else []
    # --resume C --checkpoint C continues the fit in the same file: the one output allowed to be an input
    refuse_clobbering([o for o in outputs if o[0] != "--checkpoint"], inputs + resume)
    refuse_clobbering([o for o in outputs if o[0] == "--checkpoint"], inputs)
    for i, (opt, path) in enumerate(outputs):
        refuse_clobbering([(opt, path)], [o for o in outputs[:i] if o[0] != opt])
    check_outputs(outputs)


def run(args):
    import mmprog
    check_before_fit(args, long_run_options(args)["checkpoint"])
    if args.templates:
        return train_text(args)
    if args.tag_scheme != "asis":
        from ..exceptions import ParameterError
        raise ParameterError(f"--tag-scheme {args.tag_scheme} converts the labels of token text and needs "
                             f"--templates (conll:FILE data); give --templates or leave --tag-scheme at asis")
    ds = load_data(args.data, args.train_fold, "train")
    extra = program_params(args)
    show = None
    if args.show_every or args.at_iter:
        from ..inspect import show_model
        from ..programs import get_program
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
              route=args.route, **long_run, **extra)
    trees = getattr(ds, "heads", None) is not None
    if trees:       # dependency data: the parser chosen on --dev, then the labeller (mmprog.parsing)
        from .. import parsing
        res, labeller, info = parsing.train_treebank(
            ds, kw, dev=args.dev, load=load_data, templates=args.arc_templates, C_grid=args.C_grid,
            projective=args.projective, second_order=args.second_order, refit=args.refit,
            report=lambda row: print(json.dumps(row), file=sys.stderr))
    elif args.dev or args.arc_templates or args.C_grid or args.projective or args.second_order:
        from ..exceptions import ParameterError
        raise ParameterError("--dev and --C-grid choose C for dependency data (conllu:/conllx:) and token text "
                             "(--templates); --arc-templates, --projective and --second-order are for dependency "
                             "data")
    else:
        res = mmprog.fit(ds, **kw)
    out = res.summary()
    if trees:
        out.update(info)                # the candidates are printed also when a signal stops the C path
    rc = save_first(res, args, out, long_run["checkpoint"])
    if rc is not None:
        return rc
    evaluate = res.evaluate
    if trees:
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
        out["exported"] = export_master(res, args.export)
    print_result(out, args.json)


def export_master(res, path):
    """``--export``: the final master written (a failed write names --export; the model is already saved)."""
    from ..exceptions import EnvironmentFailure
    try:
        return res.export(path)
    except OSError as e:
        raise EnvironmentFailure(f"--export {path}: cannot write the master ({e.strerror or e}); the model was "
                                 f"saved first") from None


# ----------------------------------------------------------------------------------------------------------------------
# the text route (--templates)
# ----------------------------------------------------------------------------------------------------------------------

def lexicons(specs):
    """``--lexicon NAME=FILE`` options as {NAME: {word: value}} (each file read with one-line errors)."""
    from ..exceptions import ParameterError
    from ..features.templates import read_lexicon
    out = {}
    for spec in specs or []:
        name, eq, path = spec.partition("=")
        if not eq or not name or not path:
            raise ParameterError(f"--lexicon takes NAME=FILE (e.g. brown=clusters.txt); got {spec!r}")
        if name in out:
            raise ParameterError(f"--lexicon {name!r} given twice")
        out[name] = read_lexicon(path)
    return out


def train_text(args):
    """``mmprog train --templates ...``: features from templates on a CoNLL file, then the chosen program."""
    from ..datasets.registry import load_spec
    from ..exceptions import ParameterError
    from ..tagging import fit_text, read_templates, score_text
    from .common import format_scores
    corpus = load_spec(args.data)
    if not hasattr(corpus, "sentences") or hasattr(corpus, "heads") or not hasattr(corpus, "labels"):
        raise ParameterError(f"--templates needs token text (a conll or sighan spec); {args.data!r} loads a "
                             f"{type(corpus).__name__}")
    if args.arc_templates:
        raise ParameterError("--arc-templates is for dependency data (conllu:/conllx:); drop it")
    extra = program_params(args)
    long_run = long_run_options(args)
    t0 = time.perf_counter()
    kw = dict(templates=read_templates(args.templates), min_count=args.min_count, lexicons=lexicons(args.lexicon),
              tag_scheme=args.tag_scheme, program=args.program, solver=args.solver, slack=args.slack, eps=args.eps,
              max_iter=args.max_iter, time_limit=args.time_limit, oracle=args.oracle, n_jobs=args.n_jobs,
              client=args.client, drop_after=args.drop_after, max_cuts=args.max_cuts, progress=not args.json,
              order=args.order, transitions=args.transitions, route=args.route, **long_run, **extra)
    info = {}
    if args.dev or args.C_grid:
        res, info = select_C_text(corpus, args, kw)
    else:
        res = fit_text(corpus, C=args.C, **kw)
    out = res.summary()
    out.update(info)
    out["train_seconds"] = round(time.perf_counter() - t0, 2)
    out["n_input_features"] = res.meta["n_input_features"]
    out["task"] = res.meta["task"]
    out["tag_scheme"] = res.meta["tag_scheme"]
    if "file_scheme" in res.meta:
        out["file_scheme"] = res.meta["file_scheme"]
    rc = save_first(res, args, out, long_run["checkpoint"])
    if rc is not None:
        return rc
    if args.test:
        out["test"] = score_text(res, load_spec(args.test))
    if args.export:
        out["exported"] = export_master(res, args.export)
    if args.json:
        print_result(out, True)
    else:
        test = out.pop("test", None)
        print_result(out, False)
        if test is not None:
            print(format_scores(test))


def split_text(corpus, dev):
    """(train, dev) token corpora from ``--dev``: a fraction in (0, 1) holds out the last sentences of ``corpus`` (in
    file order, as for dependency data: :func:`mmprog.parsing.split_dev`), else a data spec of labelled token text."""
    from ..datasets.registry import load_spec
    from ..parsing import split_dev

    def labelled_text(held):
        return hasattr(held, "sentences") and not hasattr(held, "heads") and getattr(held, "labels", None) is not None
    return split_dev(corpus, dev, load_spec, accepts=labelled_text,
                     what="labelled token text; give a conll:FILE spec")


def select_C_text(corpus, args, fit_kw):
    """``--dev``/``--C-grid`` on token text: one fit per C (increasing, each warm-started from the previous one:
    bcfw's α scaled to the next C, or the cutting plane's master seeded with the previous master's active cuts),
    scored on the held-out sentences by the task's F1; the best is returned, trained again on the whole corpus when
    ``--dev`` is a fraction (unless ``--no-refit``: :func:`mmprog.parsing.refit_parser` says why). Every C's row
    goes to stderr as it finishes and into ``candidates`` (the refit into ``refit``)."""
    from ..exceptions import ParameterError
    from ..engine import interrupts
    from ..parsing import DEFAULT_C_GRID, dev_fraction, refit_kwargs
    from ..tagging import fit_text, score_text
    train, held = (corpus, None) if args.dev is None else split_text(corpus, args.dev)
    Cs = sorted(args.C_grid or DEFAULT_C_GRID)
    if held is None and len(Cs) > 1:
        raise ParameterError("--C-grid lists several C; choosing among them needs --dev")
    if args.C is not None and args.dev is not None:
        raise ParameterError("--C fixes C; with --dev the C is chosen among --C-grid: drop --C")
    rows, best, best_score, prev = [], None, -1.0, None
    for C in Cs:
        t0 = time.perf_counter()
        # a resumed fit takes its first cuts from the checkpoint (at its own C) instead
        res = fit_text(train, C=C, warm_start=prev if fit_kw.get("resume") is None else None, **fit_kw)
        row = {"C": C, "route": res.route, "termination": res.termination, "gap": res.gap, "n_iter": res.n_iter,
               "warm_start": prev is not None and (res.route == "bcfw" or getattr(res, "warm_start_cuts", 0) > 0),
               "seconds": round(time.perf_counter() - t0, 1)}
        if held is not None:
            sc = score_text(res, held)
            row["dev_f1"] = sc["f1"]
            if sc["f1"] > best_score:
                best, best_score = res, sc["f1"]
        else:
            best = res
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
        if res.termination == "interrupted":
            return res, {"candidates": rows}
        if interrupts.pending():        # the signal came in the round that finished this fit: no further C
            break
        prev = res
    info = {"candidates": rows, "chosen_C": best.params["C"]}
    if held is not None:
        info["dev_sentences"] = len(held)
    if held is not None and args.refit and dev_fraction(args.dev) is not None and not interrupts.pending():
        # the held-out sentences are part of the training file: the chosen C is trained on all of it (cold: the
        # candidates' working sets belong to the other sentences)
        t0 = time.perf_counter()
        with interrupts.catch_interrupts():     # a signal while the features are built only stops the refit
            whole = fit_text(corpus, C=info["chosen_C"], **refit_kwargs(fit_kw))
        info["refit"] = {"refit_sentences": len(corpus), "C": info["chosen_C"], "route": whole.route,
                         "termination": whole.termination, "gap": whole.gap, "n_iter": whole.n_iter,
                         "seconds": round(time.perf_counter() - t0, 1)}
        print(json.dumps(info["refit"]), file=sys.stderr, flush=True)
        if whole.termination != "interrupted":      # else the chosen candidate, a finished fit, is kept
            best = whole
    return best, info
