"""``mmprog verify``, ``mmprog show`` and ``mmprog catalogue``: the duality checks, the structure of a master, and
the formulation catalogue, as sub-commands (registered with :func:`mmprog.commands.command`)."""
from __future__ import annotations

from .commands import _parse_value, _print, command, load_data, table
from .exceptions import MMProgError

DEFAULT_DATA = "tiny:seed=0"


def _program_params(args):
    return {k: _parse_value(v) for k, v in (kv.split("=", 1) for kv in args.param or [])}


def _training_solvers(program_name, solvers):
    """Solvers to train with, in order: the user's that take the program's class, else the program's default and
    then every other registered solver that is usable for the class (a fallback when one fails numerically)."""
    from .programs import get_program
    from .solvers import default_solver, get_solver, registered
    from .solvers.base import REGISTRY
    try:
        pc = get_program(program_name).problem_class
    except MMProgError:
        return list(solvers or [None])
    names = list(solvers) if solvers else [default_solver(pc)] + [n for n in registered() if pc in
                                                                   REGISTRY[n].capabilities]
    usable = []
    for n in names:
        if n not in usable and get_solver(n).availability(pc):
            usable.append(n)
    return usable or [names[0] if names else None]      # none usable: let fit() raise its one-line reason


def verify_program(name, dataset, solvers=None, C=1.0, slack="n", eps=1e-4, params=None):
    """Train program ``name`` on ``dataset`` and run :func:`mmprog.duality.check`.

    A program that cannot be trained here (data of another kind, no usable solver) gives one skipped row saying
    why. When a solver fails numerically the next usable one is tried, and a ``training`` row says so."""
    import mmprog
    from . import duality
    from .exceptions import SolverError, SolverUnavailable
    hook = duality.hook_for(name)
    why = hook.accepts(dataset)
    if why is not None:
        return [duality.skipped(name, "training", f"cannot train: {why}")]
    failures = []
    res = None
    for solver in _training_solvers(name, solvers):
        try:
            res = hook.fit(dataset, mmprog.fit, solver=solver, C=C, slack=slack, eps=eps, **(params or {}))
            break
        except SolverError as e:
            failures.append(f"{solver}: {e}")
        except (MMProgError, NotImplementedError) as e:
            kind = "no usable solver" if isinstance(e, SolverUnavailable) else "cannot train"
            return [duality.skipped(name, "training", f"{kind}: {e}")]
    if res is None:
        return [duality.skipped(name, "training", "every usable solver failed: " + "; ".join(failures))]
    rows = []
    if failures:
        rows.append(duality.Check(name, f"training (fell back to {res.solver})", None, None, None, None, "pass",
                                  "; ".join(failures)))
    rows += duality.check(res, solvers=solvers, dataset=getattr(res, "verify_dataset", dataset))
    return rows


def _rows_for_table(checks):
    """Table rows; the status column comes last and carries the note (``pass (…)``, ``skipped: <reason>``) so
    long reasons do not widen the other columns."""
    out = []
    for c in checks:
        if c.status == "skipped":
            status = f"skipped: {c.reason}"
        else:
            status = c.status + (f" ({c.reason})" if c.reason else "")
        out.append({"program": c.program, "statement": c.statement, "lhs": c.lhs, "rhs": c.rhs, "gap": c.gap,
                    "tol": c.tolerance, "status": status})
    return out


@command("verify", "check the dualities of programs on data: strong duality, feasibility, complementary slackness, "
                   "stationarity, the papers' statements, cross-solver agreement")
def _verify(p):
    p.add_argument("--program", default="all", help="registered program name, or all (default)")
    p.add_argument("--data", default=DEFAULT_DATA, help=f"data spec (default {DEFAULT_DATA})")
    p.add_argument("--solver", action="append", default=None,
                   help="solver to use (repeat for a second one: the cross-solver statement compares them)")
    p.add_argument("--C", type=float, default=1.0)
    p.add_argument("--slack", default="n", choices=["n", "one"])
    p.add_argument("--eps", type=float, default=1e-4)
    p.add_argument("--param", action="append", metavar="NAME=VALUE", help="program parameter (one program only)")
    p.add_argument("--json", action="store_true", help="a list of {program, statement, lhs, rhs, gap, tolerance, "
                                                        "status, reason}")

    def run(args):
        from .programs import registered
        names = registered() if args.program == "all" else [args.program]
        if args.program != "all" and args.program not in registered():
            raise MMProgError(f"--program must be all or one of {', '.join(registered())}; got {args.program!r}")
        if args.param and args.program == "all":
            raise MMProgError("--param needs one --program NAME (parameters differ between programs)")
        from .datasets.registry import load_spec
        dataset = load_spec(args.data)          # any kind: each program says whether it can train on it
        checks = []
        for name in names:
            checks.extend(verify_program(name, dataset, args.solver, args.C, args.slack, args.eps,
                                         _program_params(args)))
        failed = [c for c in checks if c.failed]
        if args.json:
            _print([c.as_dict() for c in checks], True)
        else:
            print(table(_rows_for_table(checks), ["program", "statement", "lhs", "rhs", "gap", "tol", "status"]))
            n_pass = sum(c.status == "pass" for c in checks)
            n_skip = sum(c.status == "skipped" for c in checks)
            print(f"\n{n_pass} passed, {len(failed)} failed, {n_skip} skipped")
        return 1 if failed else 0
    return run


@command("show", "train a program and print its master's structure (variable and constraint families, objective, "
                 "newest cuts); --dual also the explicit dual; --latex as LaTeX")
def _show(p):
    p.add_argument("--program", default="l1m3n")
    p.add_argument("--data", default=DEFAULT_DATA, help=f"data spec (default {DEFAULT_DATA})")
    p.add_argument("--C", type=float, default=1.0)
    p.add_argument("--solver", default=None)
    p.add_argument("--slack", default="n", choices=["n", "one"])
    p.add_argument("--eps", type=float, default=1e-3)
    p.add_argument("--max-iter", type=int, default=500, help="stop after this many rounds (watch it grow)")
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
        from . import duality
        from .catalogue import write_quietly
        from .inspect import families, show_model
        from .programs import get_program
        from .datasets.registry import load_spec
        hook = duality.hook_for(args.program)
        if hook.own_fit:
            # trained outside mmprog.fit (linf: constraint generation over samples)
            res = hook.fit(load_spec(args.data), mmprog.fit, solver=args.solver, **_program_params(args))
            res.n_iter, res.n_cuts = res.run.rounds, len(res.run.working_set)
            res.termination = res.run.termination
        else:
            res = mmprog.fit(load_data(args.data), program=args.program, C=args.C, solver=args.solver,
                             slack=args.slack, eps=args.eps, max_iter=args.max_iter, **_program_params(args))
            get_program(res.program, **res.params).materialise(res.model)
        dm = duality.dual_model(res) if (args.dual or args.export_dual) else None
        if args.export_dual:
            write_quietly(dm, args.export_dual)
        if args.latex:
            from .inspect import to_latex
            print(to_latex(res, expand=args.expand))
            if args.dual:
                print(to_latex(res, dual=True, expand=args.expand))
            return 0
        if args.json:
            out = {"program": res.program, "n_iter": res.n_iter, "n_cuts": res.n_cuts,
                   "primal_objective": res.primal_objective, "master": families(res.model)}
            if dm is not None:
                out["dual"] = families(dm)
            _print(out, True)
            return 0
        print(f"{res.program}: {res.n_iter} rounds, {res.n_cuts} cuts, {res.termination}, objective "
              f"{res.primal_objective:.8g}")
        print(show_model(res.model, n_cuts=args.cuts))
        if dm is not None:
            print("\nexplicit dual:")
            print(show_model(dm, n_cuts=args.cuts))
        if args.export_dual:
            print(f"\nwrote {args.export_dual}")
        return 0
    return run


@command("catalogue", "regenerate the formulation catalogue (models/*.md generated blocks and exported instances) "
                      "from data/tiny_chain.tsv, or --check it")
def _catalogue(p):
    p.add_argument("--out", default=None, help="catalogue folder (default: models/ of the checkout)")
    p.add_argument("--data", default=None, help="the fixed tiny data file (default: data/tiny_chain.tsv)")
    p.add_argument("--check", action="store_true", help="regenerate into a temporary folder and report drift")
    p.add_argument("--json", action="store_true")

    def run(args):
        from . import catalogue
        if args.check:
            drift = catalogue.check(args.out, data=args.data)
            if args.json:
                _print(drift, True)
            elif drift:
                print("\n".join(drift))
            else:
                print("catalogue is up to date")
            return 1 if drift else 0
        written = catalogue.regenerate(args.out, data=args.data)
        _print(written if args.json else "\n".join(written), args.json)
        return 0
    return run
