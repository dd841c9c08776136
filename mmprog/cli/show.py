"""``mmprog show``: train a program and print its master's structure (variable and constraint families, objective,
newest cuts), its explicit dual, or both as LaTeX."""
from __future__ import annotations

from .common import (DEFAULT_DATA, check_outputs, load_data, print_result, program_params, refuse_clobbering,
                     spec_paths)

NAME = "show"
HELP = ("train a program and print its master's structure (variable and constraint families, objective, newest "
        "cuts); --dual also the explicit dual; --latex as LaTeX")
ORDER = 90


def add_arguments(p):
    p.add_argument("--program", default="l1m3n")
    p.add_argument("--data", default=DEFAULT_DATA, help=f"data spec (default {DEFAULT_DATA})")
    p.add_argument("--C", type=float, default=1.0)
    p.add_argument("--solver", default=None)
    p.add_argument("--slack", default="n", choices=["n", "one"])
    p.add_argument("--eps", type=float, default=None, help="the epsilon rule (an option; default: the certified gap "
                   "1e-2 stops the fit)")
    p.add_argument("--max-iter", type=int, default=None, help="stop after this many rounds (watch it grow)")
    p.add_argument("--param", action="append", metavar="NAME=VALUE")
    p.add_argument("--cuts", type=int, default=3, help="how many of the newest cuts to print")
    p.add_argument("--dual", action="store_true", help="also build the explicit dual model and print it")
    p.add_argument("--export-dual", default=None, metavar="PATH",
                   help="write the explicit dual model (.lp, .mps, .nl, .gms)")
    p.add_argument("--latex", action="store_true",
                   help="print the master (and with --dual its explicit dual) as LaTeX in the papers' notation")
    p.add_argument("--expand", action="store_true", help="with --latex: also the numbers of the instance")
    p.add_argument("--json", action="store_true")


def run(args):
    import mmprog
    from .. import duality
    from ..catalogue import write_quietly
    from ..datasets.registry import load_spec
    from ..inspect import families, show_model
    from ..programs import get_program
    if args.export_dual:
        outputs = [("--export-dual", args.export_dual)]
        refuse_clobbering(outputs, [("--data", p) for p in spec_paths(args.data)])
        check_outputs(outputs)
    hook = duality.hook_for(args.program)
    if hook.own_fit:
        # grown outside mmprog.fit (linf: constraint generation over samples): the hook is handed the engine
        from ..engine.routes import ENGINE
        res = hook.fit(load_spec(args.data), ENGINE, solver=args.solver, **program_params(args))
        res.n_iter, res.n_cuts = res.run.rounds, len(res.run.working_set)
        res.termination = res.run.termination
    else:
        res = mmprog.fit(load_data(args.data), program=args.program, C=args.C, solver=args.solver,
                         slack=args.slack, eps=args.eps, max_iter=args.max_iter, **program_params(args))
        get_program(res.program, **res.params).materialise(res.model)
    dm = duality.dual_model(res) if (args.dual or args.export_dual) else None
    if args.export_dual:
        write_quietly(dm, args.export_dual)
    if args.latex:
        from ..inspect import to_latex
        print(to_latex(res, expand=args.expand))
        if args.dual:
            print(to_latex(res, dual=True, expand=args.expand))
        return 0
    if args.json:
        out = {"program": res.program, "n_iter": res.n_iter, "n_cuts": res.n_cuts,
               "primal_objective": res.primal_objective, "master": families(res.model)}
        if dm is not None:
            out["dual"] = families(dm)
        print_result(out, True)
        return 0
    gap = getattr(res, "gap", None)
    print(f"{res.program}: {res.n_iter} rounds, {res.n_cuts} cuts, {res.termination}"
          + (f" (gap {gap:.2e})" if gap is not None else "") + f", objective {res.primal_objective:.8g}")
    print(show_model(res.model, n_cuts=args.cuts))
    if dm is not None:
        print("\nexplicit dual:")
        print(show_model(dm, n_cuts=args.cuts))
    if args.export_dual:
        print(f"\nwrote {args.export_dual}")
    return 0
