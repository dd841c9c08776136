"""The LP duality of the master (10) and the paper's statements, recomputed from the numbers."""
from __future__ import annotations

import numpy as np
import pyomo.core as pyo

from ...solvers import ProblemClass, get_solver
from .program import LInf, restrict_to_columns
from .propositions import distance_dual_model, distance_model, min_support_solution, proposition2


def duality_report(model):
    """LP duality of the master (10) recomputed from the numbers, after a solve that gave duals (the native HiGHS
    route's row multipliers, or the Pyomo route's ``model.dual`` read through :func:`mmprog.solvers.duals`).

    Returns
    -------
    dict
        ``primal`` t; ``dual`` b·Σα from the solver's multipliers α of the margins; ``alpha_min`` (≥ 0 for dual
        feasibility); ``l1_of_Zt_alpha`` ‖Σᵢ αᵢzᵢ‖₁ (≤ 1); ``beta_sum`` Σ(β⁺ + β⁻) from the bound rows' multipliers
        (= 1, stationarity in t); ``beta_min`` (≥ 0); ``stationarity`` ‖Zᵀα − (β⁺ − β⁻)‖∞ (= 0, stationarity in
        w); ``complementarity`` maxᵢ |αᵢ·(zᵢᵀw − b)| (= 0); ``primal_violation`` maxᵢ (b − zᵢᵀw)⁺ on the working set;
        ``bound_violation`` ‖w‖∞ − t (≤ 0).
    """
    from ...solvers import duals
    ws = model.ws
    prog = LInf(b=model.b)
    sol = prog.read_solution(model)
    if model.native_duals is not None:
        alpha, up, lo = (model.native_duals[k] for k in ("margin", "upper", "lower"))
    else:
        solver_name = getattr(model, "solved_with", None)
        alpha = ws.duals(model)
        up_rows, lo_rows = prog.bound_rows(model)
        up = duals(model, up_rows, solver_name)      # ≤ 0 for a ≤ row of a min
        lo = duals(model, lo_rows, solver_name)      # ≥ 0 for a ≥ row of a min
    beta_plus, beta_minus = -np.asarray(up), np.asarray(lo)
    Zj = restrict_to_columns(model, ws.dF())
    Zt_alpha = np.asarray(Zj.T @ alpha).ravel()
    margins = np.asarray(Zj @ sol.w).ravel()
    return {
        "primal": sol.objective,
        "dual": float(model.b * alpha.sum()),
        "alpha_min": float(alpha.min(initial=0.0)),
        "l1_of_Zt_alpha": float(np.abs(Zt_alpha).sum()),
        "beta_sum": float(beta_plus.sum() + beta_minus.sum()),
        "beta_min": float(min(beta_plus.min(initial=0.0), beta_minus.min(initial=0.0))),
        "stationarity": float(np.max(np.abs(Zt_alpha - (beta_plus - beta_minus)), initial=0.0)),
        "complementarity": float(np.max(np.abs(alpha * (margins - model.b)), initial=0.0)),
        "primal_violation": float(np.max(np.maximum(model.b - margins, 0.0), initial=0.0)),
        "bound_violation": float(np.max(np.abs(sol.w), initial=0.0) - sol.objective),
    }


# ------------------------------------------------------------------------------------------------------------
# The paper's statements and the LP dualities, as rows for ``mmprog verify``
# ------------------------------------------------------------------------------------------------------------

def linf_checks(run, samples, solvers=("highs",), tol=1e-7):
    """Propositions 1 and 2, (17) and the LP duality of (10) at a solved master, recomputed from the numbers.

    Parameters
    ----------
    run : mmprog.linf.LInfRun
    samples : TensorSamples or KernelSamples
        The samples ``run`` was solved on.
    solvers : sequence of str
        Solvers for the explicit dual model and for (3)/(6); one row each, ``skipped`` when unusable here.
    tol : float
        Relative tolerance (scaled by max(1, |number|)).

    Returns
    -------
    list of dict
        Rows with the fields of :class:`mmprog.duality.Check` (``statement``, ``lhs``, ``rhs``, ``gap``,
        ``tolerance``, ``status`` ∈ pass/fail/skipped, ``reason``, ``relation``).
    """
    rows = []

    def add(statement, lhs, rhs, relation="=", reason=""):
        lhs, rhs = float(lhs), float(rhs)
        gap = abs(lhs - rhs) if relation == "=" else lhs - rhs
        tolerance = tol * max(1.0, abs(lhs), abs(rhs))
        ok = bool(np.isfinite(gap) and gap <= tolerance)
        rows.append({"statement": statement, "lhs": lhs, "rhs": rhs, "gap": gap, "tolerance": tolerance,
                     "status": "pass" if ok else "fail", "reason": reason, "relation": relation})

    def skip(statement, reason):
        rows.append({"statement": statement, "lhs": None, "rhs": None, "gap": None, "tolerance": None,
                     "status": "skipped", "reason": reason, "relation": "="})

    model = run.master
    b = model.b
    d, i_star = proposition2(samples, b)
    add("Proposition 2: optimum t of (10) = b / min_i ||z_i||_1", run.objective, d, reason=f"i* = {i_star}")
    margins = samples.margins(run.J, run.w)
    add("primal feasibility over all m samples: b <= min_i z_i'w", b, margins.min(), "≤",
        f"{len(run.working_set)} of {samples.n} samples in the master")
    add("||w||_inf <= t", np.max(np.abs(run.w), initial=0.0), run.objective, "≤")
    rep = duality_report(model)
    add("strong duality with the solver's duals: t = b * sum(alpha)", rep["primal"], rep["dual"],
        reason=f"route {run.route}")
    add("dual feasibility: alpha >= 0", 0.0, rep["alpha_min"], "≤")
    add("dual feasibility: ||sum_i alpha_i z_i||_1 <= 1", rep["l1_of_Zt_alpha"], 1.0, "≤")
    add("stationarity in t: sum(beta+ + beta-) = 1", rep["beta_sum"], 1.0)
    add("stationarity in w: Z'alpha = beta+ - beta-", rep["stationarity"], 0.0)
    add("complementary slackness: alpha_i (z_i'w - b) = 0", rep["complementarity"], 0.0)
    U, w17 = min_support_solution(samples, run.objective)
    add("(17) is optimal for (10): b <= min_i z_i'w17 (||w17||_inf = t)", b, samples.margins(U, w17).min(), "≤",
        f"|U| = {U.size}")
    for name in solvers:
        slv = get_solver(name)
        why = slv.availability(ProblemClass.LP)
        if not why:
            skip(f"explicit dual of (10) ({name}) = t", why.reason)
            skip(f"Proposition 1 ({name}): (3) = (6) = b/||w||_inf", why.reason)
            continue
        D = LInf(b=b).dual_model(model)
        slv.solve(D, load_duals=False)
        add(f"explicit dual of (10) ({name}) = t", pyo.value(D.objective), run.objective)
        if np.any(run.w != 0):
            P3, P6 = distance_model(run.w, b), distance_dual_model(run.w, b)
            slv.solve(P3, load_duals=False)
            slv.solve(P6, load_duals=False)
            expected = b / np.max(np.abs(run.w))
            add(f"Proposition 1 ({name}): value of (3) = b/||w||_inf", pyo.value(P3.objective), expected)
            add(f"Proposition 1 ({name}): value of (6) = value of (3)", pyo.value(P6.objective),
                pyo.value(P3.objective))
    return rows
