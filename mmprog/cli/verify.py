"""``mmprog verify``: train programs on data and check their dualities (strong duality, feasibility, complementary
slackness, stationarity, the papers' statements, cross-solver agreement)."""
from __future__ import annotations

from ..exceptions import MMProgError
from .common import DEFAULT_DATA, print_result, program_params, table

NAME = "verify"
HELP = ("check the dualities of programs on data: strong duality, feasibility, complementary slackness, "
        "stationarity, the papers' statements, cross-solver agreement")
ORDER = 80


def _training_solvers(program_name, solvers):
    """Solvers to train with, in order: the user's that take the program's class, else the program's default and
    then every other registered solver that is usable for the class (a fallback when one fails numerically)."""
    from ..programs import get_program
    from ..solvers import default_solver, get_solver, registered
    try:
        pc = get_program(program_name).problem_class
    except MMProgError:
        return list(solvers or [None])
    names = list(solvers) if solvers else [default_solver(pc)] + [n for n in registered() if pc in
                                                                   get_solver(n).capabilities]
    usable = []
    for n in names:
        if n not in usable and get_solver(n).availability(pc):
            usable.append(n)
    return usable or [names[0] if names else None]      # none usable: let fit() raise its one-line reason


def verify_program(name, dataset, solvers=None, C=1.0, slack="n", eps=1e-4, params=None):
    """Train program ``name`` on ``dataset`` and run :func:`mmprog.duality.check`.

    A program that cannot be trained here (data of another kind, no usable solver) gives one skipped row saying
    why. When a solver fails numerically the next usable one is tried, and a ``training`` row says so."""
    from .. import duality
    from ..api import fit
    from ..engine.routes import ENGINE
    from ..exceptions import SolverError, SolverUnavailable
    hook = duality.hook_for(name)
    why = hook.accepts(dataset)
    if why is not None:
        return [duality.skipped(name, "training", f"cannot train: {why}")]
    failures = []
    res = None
    # a program grown outside mmprog.fit (linf: constraint generation over samples) is handed the engine
    trainer = ENGINE if hook.own_fit else fit
    for solver in _training_solvers(name, solvers):
        try:
            res = hook.fit(dataset, trainer, solver=solver, C=C, slack=slack, eps=eps, **(params or {}))
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


def add_arguments(p):
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
    from ..programs import registered
    names = registered() if args.program == "all" else [args.program]
    if args.program != "all" and args.program not in registered():
        raise MMProgError(f"--program must be all or one of {', '.join(registered())}; got {args.program!r}")
    if args.param and args.program == "all":
        raise MMProgError("--param needs one --program NAME (parameters differ between programs)")
    from ..datasets.registry import load_spec
    dataset = load_spec(args.data)          # any kind: each program says whether it can train on it
    checks = []
    for name in names:
        checks.extend(verify_program(name, dataset, args.solver, args.C, args.slack, args.eps,
                                     program_params(args)))
    failed = [c for c in checks if c.failed]
    if args.json:
        print_result([c.as_dict() for c in checks], True)
    else:
        print(table(_rows_for_table(checks), ["program", "statement", "lhs", "rhs", "gap", "tol", "status"]))
        n_pass = sum(c.status == "pass" for c in checks)
        n_skip = sum(c.status == "skipped" for c in checks)
        print(f"\n{n_pass} passed, {len(failed)} failed, {n_skip} skipped")
    return 1 if failed else 0
