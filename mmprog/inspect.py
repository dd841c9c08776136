"""Reading a master program back as a student would write it down: component families with their sizes, the
objective, and the newest cuts with their coefficients (``mmprog show``, ``mmprog train --show-every N``).

Everything is read from the Pyomo model itself (component by component), except the cut data of a grown model,
which comes from its working set ``model.ws`` (ΔF_r, Δℓ_r, the slack, the round it was added).
"""
from __future__ import annotations

import pyomo.environ as pyo
from pyomo.repn import generate_standard_repn

__all__ = ["show_model", "families", "render_constraint", "expression_preview", "to_latex"]

#: above this many constraints the program class is not computed (it walks every expression)
CLASSIFY_LIMIT = 5000


def _domain(var_data):
    lb, ub = var_data.lb, var_data.ub
    if lb is None and ub is None:
        return "free"
    if ub is None:
        return f"≥ {lb:g}"
    if lb is None:
        return f"≤ {ub:g}"
    return f"in [{lb:g}, {ub:g}]"


def families(model):
    """Variable, constraint and expression families of ``model``.

    Returns
    -------
    dict
        ``{"variables": [...], "constraints": [...], "expressions": [...]}``, each a list of dicts with ``name``,
        ``size`` and (variables) ``domain``, ``fixed``; (constraints) ``active``, ``sense``.
    """
    out = {"variables": [], "constraints": [], "expressions": []}
    for v in model.component_objects(pyo.Var, descend_into=True):
        datas = list(v.values())
        doms = sorted({_domain(d) for d in datas}) if datas else ["—"]
        out["variables"].append({"name": v.name, "size": len(datas), "domain": ", ".join(doms),
                                 "fixed": sum(1 for d in datas if d.fixed)})
    for c in model.component_objects(pyo.Constraint, descend_into=True):
        datas = list(c.values())
        senses = set()
        for d in datas:
            if d.equality:
                senses.add("=")
            else:
                if d.has_lb():
                    senses.add("≥")
                if d.has_ub():
                    senses.add("≤")
        out["constraints"].append({"name": c.name, "size": len(datas),
                                   "active": sum(1 for d in datas if d.active) if c.active else 0,
                                   "sense": "".join(sorted(senses)) or "—"})
    for e in model.component_objects(pyo.Expression, descend_into=True):
        out["expressions"].append({"name": e.name, "size": len(e)})
    return out


def _term(coef, name, first):
    if coef == 1.0:
        s = name
    elif coef == -1.0:
        s = f"−{name}"
    else:
        s = f"{coef:.6g}·{name}"
    if first:
        return s
    return f" − {s[1:]}" if s.startswith("−") else (f" − {s[1:]}" if s.startswith("-") else f" + {s}")


def _linear_text(repn, max_terms):
    pieces = []
    n = len(repn.linear_vars)
    for j, (c, v) in enumerate(zip(repn.linear_coefs, repn.linear_vars)):
        if j >= max_terms:
            pieces.append(f" + … ({n - max_terms} more terms)")
            break
        pieces.append(_term(float(c), v.name, j == 0))
    const = float(repn.constant) if repn.constant is not None else 0.0
    if const:
        pieces.append(f" + {const:.6g}" if const > 0 else f" − {-const:.6g}")
    return "".join(pieces) or "0"


def render_constraint(con, max_terms=8):
    """One constraint as text, ``lower ≤ Σ coef·var ≤ upper`` with at most ``max_terms`` terms shown."""
    body = con.body
    repn = generate_standard_repn(body, compute_values=True, quadratic=False)
    if repn.nonlinear_expr is not None or not repn.is_linear():
        text = str(body)
        text = text if len(text) <= 200 else text[:197] + "…"
    else:
        text = _linear_text(repn, max_terms)
    lo, up = con.lower, con.upper
    lo = None if lo is None else float(pyo.value(lo))
    up = None if up is None else float(pyo.value(up))
    if con.equality:
        return f"{text} = {up:.6g}"
    if lo is not None and up is not None:
        return f"{lo:.6g} ≤ {text} ≤ {up:.6g}"
    if lo is not None:
        return f"{text} ≥ {lo:.6g}"
    return f"{text} ≤ {up:.6g}"


def expression_preview(expr, max_terms=8, max_chars=160):
    """An expression as text: Pyomo's own rendering when short (named expressions stay by name, e.g.
    ``linear - quadratic``), else its standard form ``Σ q·x·y + Σ c·x + const`` cut after ``max_terms`` terms of
    each kind, so a huge objective is never printed whole."""
    e = expr.expr if hasattr(expr, "expr") else expr
    named = _named_sum(e)
    if named is not None:
        return named
    if getattr(e, "nargs", lambda: 1)() <= 2 * max_terms:
        text = str(e)
        if len(text) <= max_chars:
            return text
    repn = generate_standard_repn(e, compute_values=True, quadratic=True)
    if repn.nonlinear_expr is not None:
        return _short(str(e), max_chars)
    pieces = []
    quad = list(zip(repn.quadratic_coefs, repn.quadratic_vars))
    for j, (c, (x, y)) in enumerate(quad[:max_terms]):
        name = f"{x.name}²" if x is y else f"{x.name}·{y.name}"
        pieces.append(_term(float(c), name, not pieces))
    if len(quad) > max_terms:
        pieces.append(f" + … ({len(quad) - max_terms} more quadratic terms)")
    lin = list(zip(repn.linear_coefs, repn.linear_vars))
    for j, (c, v) in enumerate(lin[:max_terms]):
        pieces.append(_term(float(c), v.name, not pieces))
    if len(lin) > max_terms:
        pieces.append(f" + … ({len(lin) - max_terms} more linear terms)")
    const = float(repn.constant or 0.0)
    if const:
        pieces.append(f" + {const:.6g}" if const > 0 else f" − {-const:.6g}")
    return "".join(pieces) or "0"


def _named_sum(e):
    """``linear − quadratic`` for a sum of (negated) named expressions, else None (Pyomo prints their bodies)."""
    if type(e).__name__ != "SumExpression":
        return None
    out = []
    for a in e.args:
        neg = type(a).__name__ == "NegationExpression"
        inner = a.args[0] if neg else a
        if not getattr(inner, "is_named_expression_type", lambda: False)():
            return None
        out.append(("− " if neg else ("+ " if out else "")) + inner.name)
    return " ".join(out)


def _short(text, n):
    return text if len(text) <= n else text[: n - 1] + "…"


def _cut_lines(model, n_cuts, max_terms):
    ws = getattr(model, "ws", None)
    if ws is None:
        return []
    if not ws.size:
        return ["working set: empty"]
    act = ws.active_mask()
    rounds = ws.added_round
    lines = [f"working set: {ws.size} cuts ({int(act.sum())} active) added over {max(rounds) if rounds else 0} "
             f"rounds; the newest {min(n_cuts, ws.size)}:"]
    if len(ws.components) < ws.size:
        # programs fed to a solver from arrays write their Pyomo rows on demand (materialise: export, show)
        lines.insert(0, f"({len(ws.components)} of the {ws.size} cuts are written into the Pyomo model so far; the "
                        f"rest are solved from the working set's arrays and written on export)")
    F = ws.dF()
    dl = ws.dl_array()
    ex = ws.example_array()
    for pos in range(max(0, ws.size - n_cuts), ws.size):
        # programs that write their Pyomo rows lazily (materialise) may not have this cut's component yet
        comp = ws.components[pos] if pos < len(ws.components) else None
        label = comp.name if comp is not None else "(Pyomo row not written yet)"
        head = (f"  #{pos} {label}  round {rounds[pos]}, slack {int(ex[pos])}, Δℓ = {dl[pos]:.6g}"
                f"{'' if act[pos] else ', dropped'}{' (ΔF row released)' if pos in ws.released else ''}")
        if comp is None:
            lines.append(head)
        elif hasattr(comp, "body"):
            lines.append(head)
            lines.append("      " + render_constraint(comp, max_terms))
        else:
            value = comp.value
            lines.append(head + (f", {comp.name} = {value:.6g}" if value is not None else ""))
        row = F[pos]
        coefs = ", ".join(f"{int(k)}: {c:.4g}" for k, c in list(zip(row.indices, row.data))[:max_terms])
        more = f", … ({row.nnz - max_terms} more)" if row.nnz > max_terms else ""
        lines.append(f"      ΔF = {{{coefs}{more}}}")
    return lines


def show_model(model, n_cuts=3, max_terms=8):
    """The structure of a Pyomo (master) model as text.

    Parameters
    ----------
    model : ConcreteModel
        Any Pyomo model; a grown master also shows its newest cuts from ``model.ws``.
    n_cuts : int
        How many of the newest cuts to show with their coefficients.
    max_terms : int
        Terms shown per constraint / objective before eliding.

    Returns
    -------
    str
    """
    from .solvers import classify
    fam = families(model)
    n_cons = sum(c["active"] for c in fam["constraints"])
    head = f"model {model.name}"
    if n_cons <= CLASSIFY_LIMIT:
        try:
            head += f"  ({classify(model).value})"
        except Exception:   # no single active objective: a bare model is still shown
            pass
    lines = [head, "variables:"]
    w1 = max([len(v["name"]) for v in fam["variables"] + fam["constraints"]] + [4])
    for v in fam["variables"]:
        fixed = f", {v['fixed']} fixed" if v["fixed"] else ""
        lines.append(f"  {v['name']:<{w1}}  {v['size']:>7d}  {v['domain']}{fixed}")
    lines.append("constraints:")
    for c in fam["constraints"]:
        lines.append(f"  {c['name']:<{w1}}  {c['size']:>7d}  ({c['active']} active)  {c['sense']}")
    if fam["expressions"]:
        lines.append("expressions: " + ", ".join(e["name"] for e in fam["expressions"]))
    for obj in model.component_data_objects(pyo.Objective, active=True):
        sense = "minimise" if obj.sense == pyo.minimize else "maximise"
        label = "objective" if obj.name == "objective" else f"objective {obj.name}"
        lines.append(f"{label}: {sense} {expression_preview(obj.expr, max_terms)}")
        for e in model.component_data_objects(pyo.Expression, descend_into=True):
            lines.append(f"  where {e.name} = {expression_preview(e.expr, max_terms)}")
    # a Gram dual master (m3n's) writes ½αᵀGα into its statement on demand (MasterState.quad_done cuts so far)
    lazy = getattr(model, "master", None) == "dual" and model.master_state.quad_done < model.ws.size
    if lazy:
        lines.append(f"  (½αᵀGα is kept as the Gram matrix G ({model.ws.size}×{model.ws.size}) and written into "
                     f"'quadratic' on export; {model.master_state.quad_done} cuts written so far)")
    lines.extend(_cut_lines(model, n_cuts, max_terms))
    return "\n".join(lines)


def to_latex(result, dual=False, expand=False):
    """A trained program's master — or, with ``dual=True``, its explicit dual (:func:`mmprog.duality.dual_model`) —
    as compact LaTeX in the papers' notation, generated from the Pyomo model's components
    (:func:`mmprog.latex.model_latex`).

    Parameters
    ----------
    result : Result or ConcreteModel
        A trained program (``mmprog.fit``), anything with ``.model`` and ``.program``, or a bare Pyomo model.
    dual : bool
        Write the explicit dual instead of the master.
    expand : bool
        Add a second block with the numbers of the instance (use on tiny instances).

    Returns
    -------
    str
        ``align*`` blocks (LaTeX with amsmath and amssymb, or MathJax); every line also parses with matplotlib's
        mathtext.
    """
    from .latex import model_latex
    if not hasattr(result, "program") and hasattr(result, "component_objects"):
        if dual:
            raise TypeError("to_latex(model, dual=True): the explicit dual is built from a trained result; pass it")
        return model_latex(result, expand=expand)        # any Pyomo model
    if dual:
        from .duality import dual_model
        model = dual_model(result)
        what = f"explicit dual of {result.program} (mmprog.duality.dual_model)"
    else:
        from .programs import get_program
        model = result.model
        try:
            get_program(result.program, **result.params).materialise(model)
        except Exception:       # linf's run is not trained by mmprog.fit: its model is complete already
            pass
        what = f"master of {result.program}"
    return model_latex(model, expand=expand, title=f"{what}: model {model.name.strip(chr(39))}")
