"""A Pyomo model written as compact LaTeX in the papers' notation (``mmprog show --latex``,
:func:`mmprog.inspect.to_latex`, the statements on the catalogue cards).

Everything is read from the model's own components: the variable families with their bounds and index sets, the
objective with its sense, every constraint family row by row, the named expressions. Each row is taken apart by
Pyomo's standard representation into groups of terms, one per variable family; rows of a family that give the same
template are written once as an indexed line (``∀ r``), with sums over the index of the variable family instead of
expanded terms. Coefficients are written by what they are, checked against the numbers:

* a coefficient that is the same in every row is written as its value (mutable Params by their symbol, e.g. ``C``);
* a coefficient that varies is compared with the cuts' ΔF_rk (``model.ws`` of a master, ``model.ws_arrays`` of an
  explicit dual) and written ``ΔF_rk`` (or ``d_k ΔF_rk`` when it is ΔF_rk times a per-feature factor) only when
  every number matches; a right-hand side likewise ``Δℓ_r``; a quadratic form ``⟨ΔF_r, ΔF_r'⟩``;
* anything else gets a generic symbol named after its family (``a^{cuts}_{rk}``), never a guessed paper symbol.

So a renamed component shows up under its new name and an added one as a new line.

Index letters follow the papers: cuts r, examples (slacks) i, features k, templates j; they come from the name of the
Pyomo Set indexing a component (``CUTS``, ``SLACKS``, ``K``, ``templates``, ...) or, for ``VarList``/``range``
indexed components, from the component's name (:data:`NAME_LETTERS`).

The output uses only LaTeX that amsmath with amssymb (for ``\\mathbb``), MathJax and matplotlib's mathtext all read
(``align*`` with one row per line), so the test suite compiles every line with mathtext.
"""
from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr import numeric_expr as ne
from pyomo.repn import generate_standard_repn

__all__ = ["model_latex", "math_lines", "SET_LETTERS", "NAME_LETTERS", "SYMBOLS"]

#: index letter of a component indexed by a named Pyomo Set
SET_LETTERS = {"CUTS": "r", "SLACKS": "i", "K": "k", "J": "j", "I": "i", "P": "p", "templates": "j", "U": "u"}
#: index letter of a component indexed by an anonymous set (VarList, ConstraintList, range(n)), by its name
NAME_LETTERS = {"alpha": "r", "cuts": "r", "margin": "i", "xi": "i", "budget": "i", "budget_eq": "i",
                "alpha_truth": "i", "w": "k", "mu": "k", "nu": "k", "gamma": "k", "inv_sigma": "k", "beta": "k",
                "stationarity": "k", "mu_bound": "k", "nu_bound": "k", "eta_upper": "k", "eta_lower": "k",
                "rho": "j", "cone": "j", "quad": "j", "half_quad": "j", "sq_norm": "j"}
#: the papers' symbols of component names (any other name is written \mathrm{name})
SYMBOLS = {"w": "w", "xi": r"\xi", "alpha": r"\alpha", "mu": r"\mu", "nu": r"\nu", "gamma": r"\gamma",
           "rho": r"\rho", "theta": r"\theta", "beta": r"\beta", "inv_sigma": r"\sigma^{-1}", "C": "C",
           "C_budget": r"\bar{C}", "alpha_truth": r"\alpha^{\star}", "w_private": r"\tilde{w}", "t": "t",
           "u": "u", "s": "s", "b": "b"}
#: the symbol of the cut rows by the cut index letter (the L∞ program's samples zᵢ are indexed by i)
CUT_SYMBOLS = {"r": r"\Delta F", "i": "z"}
_REL_TOL = 1e-9
#: rows of one family that take different templates are written as up to this many lines (most common first)
MAX_FORMS = 3


def _escape(name):
    return name.replace("_", r"\_")


def symbol(comp):
    """The LaTeX symbol of a component (its paper symbol, else its name in roman)."""
    name = comp.local_name
    return SYMBOLS.get(name, r"\mathrm{" + _escape(name) + "}")


def label(comp):
    return r"\text{" + _escape(comp.local_name) + "}"


def letter(comp):
    """Index letter of an indexed component (None for a scalar one)."""
    if not comp.is_indexed():
        return None
    idx = comp.index_set()
    if idx.parent_block() is not None and idx.local_name in SET_LETTERS:
        return SET_LETTERS[idx.local_name]
    return NAME_LETTERS.get(comp.local_name, "n")


def num(x):
    """A number as LaTeX (halves as fractions, integers without a point)."""
    x = float(x)
    if x == int(x) and abs(x) < 1e12:
        return str(int(x))
    from fractions import Fraction
    f = Fraction(x).limit_denominator(12)
    if abs(float(f) - x) < 1e-12 * max(1.0, abs(x)):
        return ("-" if f < 0 else "") + r"\frac{" + str(abs(f.numerator)) + "}{" + str(f.denominator) + "}"
    return f"{x:.4g}"


def _sub(sym, idx):
    return sym if idx is None else f"{sym}_{{{idx}}}"


def _prime(a):
    return a + r"^{\prime}"


# ------------------------------------------------------------------------------------------------------------------
# Coefficients: number × mutable Params
# ------------------------------------------------------------------------------------------------------------------

def _split(c):
    """``(number, [ParamData])`` of a coefficient expression (products of numbers and mutable Params)."""
    if c is None:
        return 0.0, []
    if isinstance(c, (int, float, np.floating, np.integer)):
        return float(c), []
    if getattr(c, "is_parameter_type", lambda: False)() and not getattr(c, "is_constant", lambda: True)():
        return 1.0, [c]
    if isinstance(c, ne.NegationExpression):
        v, ps = _split(c.args[0])
        return -v, ps
    if isinstance(c, (ne.ProductExpression, ne.MonomialTermExpression)):
        v1, p1 = _split(c.args[0])
        v2, p2 = _split(c.args[1])
        return v1 * v2, p1 + p2
    if isinstance(c, ne.DivisionExpression) and not getattr(c.args[1], "is_potentially_variable", lambda: 0)():
        v, ps = _split(c.args[0])
        d = pyo.value(c.args[1])
        return v / d, ps
    return float(pyo.value(c)), []


def _param_tex(params, where):
    """Symbols of the Params of a coefficient; ``where(component, index)`` names an index (a letter or the
    number)."""
    out = []
    for p in params:
        comp = p.parent_component()
        if comp.is_indexed():
            out.append(_sub(symbol(comp), where(comp, p.index())))
        else:
            out.append(symbol(comp))
    return "\\,".join(out)


# ------------------------------------------------------------------------------------------------------------------
# Cut data, to check ΔF_rk and Δℓ_r against the numbers
# ------------------------------------------------------------------------------------------------------------------

class _Cuts:
    """Rows ΔF_r and Δℓ_r of the cuts by the id of the Pyomo component standing for cut r (a primal row of
    ``model.cuts`` or a dual's α_r)."""

    def __init__(self, model):
        self.rows, self.dl = {}, {}
        #: per-feature factors d_k found in coefficients d_k ΔF_rk (a diagonal metric)
        self.d = {}
        try:
            ws = getattr(model, "ws", None)
            if ws is not None and getattr(ws, "size", 0):
                F, dl = ws.dF().tocsr(), ws.dl_array()
                for pos, comp in enumerate(ws.components[: ws.size]):
                    if comp is not None:
                        self._put(comp, F, dl, pos)
            arrays = getattr(model, "ws_arrays", None)
            alpha = getattr(model, "alpha_list", None)
            if arrays is not None and alpha is not None:
                F = arrays.F.tocsr()
                for j, a in enumerate(alpha):
                    self._put(a, F, arrays.dl, j)
        except Exception:    # a model without readable cut data: coefficients get generic symbols
            self.rows, self.dl = {}, {}

    def _put(self, comp, F, dl, j):
        lo, hi = F.indptr[j], F.indptr[j + 1]
        self.rows[id(comp)] = dict(zip(F.indices[lo:hi].tolist(), F.data[lo:hi].tolist()))
        self.dl[id(comp)] = float(dl[j])

    def gram(self, a, b):
        ra, rb = self.rows.get(id(a)), self.rows.get(id(b))
        if ra is None or rb is None:
            return None
        return sum(v * rb.get(k, 0.0) for k, v in ra.items())


def _close(a, b):
    return abs(a - b) <= _REL_TOL * max(1.0, abs(a), abs(b))


def _feature(index):
    return index if isinstance(index, (int, np.integer)) else None


def _df_symbol(triples, cuts, a, b, family):
    """How varying coefficients ``(row_comp, var_comp, number)`` are written: ``(sign, factor, symbol)`` with symbol
    ``\\Delta F_{..}`` when every number is ±ΔF_rk (or ΔF_rk times a factor of k), else a generic symbol."""
    if all(id(var) in cuts.dl and _close(cuts.dl[id(var)], c) for _, var, c in triples):
        return 1.0, "", r"\Delta\ell_{" + b + "}"
    cut_letter, feat_letter = None, None
    ratios = []
    for row, var, c in triples:
        if id(row) in cuts.rows and _feature(var.index()) is not None:
            F, k = cuts.rows[id(row)], var.index()
            cut_letter, feat_letter = a, b
        elif id(var) in cuts.rows and _feature(row.index()) is not None:
            F, k = cuts.rows[id(var)], row.index()
            cut_letter, feat_letter = b, a
        else:
            ratios = None
            break
        f = F.get(int(k), 0.0)
        if f == 0.0:
            ratios = None
            break
        ratios.append((int(k), c / f))
    if ratios:
        sym = CUT_SYMBOLS.get(cut_letter, r"\Delta F") + "_{" + cut_letter + feat_letter + "}"
        vals = [r for _, r in ratios]
        if all(_close(v, vals[0]) for v in vals):
            return (1.0 if vals[0] > 0 else -1.0), ("" if _close(abs(vals[0]), 1.0) else num(abs(vals[0]))), sym
        by_k = {}
        seen = Counter(k for k, _ in ratios)
        # a factor per feature only when every feature's factor is confirmed by at least two rows
        if min(seen.values()) >= 2 and all(_close(by_k.setdefault(k, v), v) for k, v in ratios):
            signs = {np.sign(v) for v in by_k.values()}
            if len(signs) == 1:
                cuts.d.update({k: abs(v) for k, v in by_k.items()})
                return float(signs.pop()), _sub("d", feat_letter), sym
    return 1.0, "", f"a^{{{_escape(family)}}}_{{{a or ''}{b}}}"


# ------------------------------------------------------------------------------------------------------------------
# One family of rows → one template
# ------------------------------------------------------------------------------------------------------------------

class _Family:
    """Rows (expressions) of one component family, rendered as one indexed template."""

    def __init__(self, comp, rows, cuts):
        self.comp = comp
        self.a = letter(comp)
        self.rows = rows          # list of (row component data, expression)
        self.cuts = cuts
        self.legend = set()

    def where(self, row_index):
        """Name a Param's index: the row's letter when it is the row's own element (same index set letter and
        index), else the number."""
        def name(comp, idx):
            if self.a is not None and letter(comp) == self.a and idx == row_index:
                return self.a
            return str(idx) if not isinstance(idx, tuple) else ",".join(map(str, idx))
        return name

    def forms(self):
        """The distinct templates of the rows, most common first: ``[(tex, [row components])]``."""
        repns = []
        for row, e in self.rows:
            r = generate_standard_repn(e, compute_values=False, quadratic=True)
            repns.append((row, e, r))
        if any(r.nonlinear_expr is not None or _refers_to_named(e) for _, e, r in repns):
            texts = [_Nonlinear(self, row).tex(e) for row, e, _ in repns]
        else:
            texts = self._polynomial(repns)
        by_text = defaultdict(list)
        for (row, _), tex in zip(self.rows, texts):
            by_text[tex].append(row)
        return sorted(by_text.items(), key=lambda kv: -len(kv[1]))

    # --- polynomial rows: groups of terms per variable family ----------------------------------------------------
    def _polynomial(self, repns):
        lin = defaultdict(list)     # id(family) → [(row, var, number, params)]
        quad = defaultdict(list)    # (id(family), id(family)) → [(row, x, y, number, params)]
        comps = {}                  # Pyomo's scalar components define == as a relation, so they key by id
        keys_per_row = []
        for row, _, r in repns:
            keys = []
            for c, (v1, v2) in zip(r.quadratic_coefs, r.quadratic_vars):
                x, ps = _split(c)
                if x == 0.0:
                    continue
                key = (id(v1.parent_component()), id(v2.parent_component()))
                comps[key] = (v1.parent_component(), v2.parent_component())
                quad[key].append((row, v1, v2, x, ps))
                keys.append(("q", key))
            for c, v in zip(r.linear_coefs, r.linear_vars):
                x, ps = _split(c)
                if x == 0.0:
                    continue
                key = id(v.parent_component())
                comps[key] = v.parent_component()
                lin[key].append((row, v, x, ps))
                keys.append(("l", key))
            keys_per_row.append(list(dict.fromkeys(keys)))
        pieces = {}
        for key, terms in lin.items():
            pieces.update(self._linear_group(comps[key], terms))
        for key, terms in quad.items():
            pieces.update(self._quad_group(comps[key], terms))
        texts = []
        for (row, _, r), keys in zip(repns, keys_per_row):
            parts = [pieces[(id(row), k)] for k in keys]
            const, ps = _split(r.constant)
            if const:
                parts.append(self._coef_tex(const, ps, row, "", standalone=True))
            texts.append(_join(parts))
        return texts

    def _coef_tex(self, x, ps, row, sym, standalone=False, where=None):
        """``x·params·sym`` with its sign first (``-`` or ``+`` is added by :func:`_join`)."""
        sign = "-" if x < 0 else ""
        x = abs(x)
        p = _param_tex(ps, where or self.where(row.index() if row is not None else None))
        lead = "" if (_close(x, 1.0) and (sym or p)) else num(x)
        body = "\\,".join(s for s in (lead, p, sym) if s)
        return sign + (body if body else num(x) if standalone else "")

    def _by_row(self, terms):
        rows = defaultdict(list)
        for t in terms:
            rows[id(t[0])].append(t)
        return rows

    def _linear_group(self, fam, terms):
        rows = self._by_row(terms)
        b = letter(fam)
        sym = symbol(fam)
        nums = [t[2] for t in terms]
        same = all(_close(v, nums[0]) for v in nums)
        out = {}
        varying = None if same else _df_symbol([(t[0], t[1], t[2]) for t in terms], self.cuts, self.a, b,
                                               self.comp.local_name)
        if varying is not None and varying[1].startswith("d"):
            self.legend.add(varying[1] + r"\colon\ \text{a per-feature factor: the coefficient divided by }"
                            + varying[2])
        generic = varying is not None and varying[2].startswith("a^")
        if generic and (self.a is not None or len(terms) > 4):
            self.legend.add(varying[2] + r"\colon\ \text{the coefficients of " + _escape(fam.local_name)
                            + " in " + _escape(self.comp.local_name) + r" as the model holds them}")
        multi = any(len(ts) > 1 for ts in rows.values())
        for rid, ts in rows.items():
            row = ts[0][0]
            ridx = row.index() if self.comp.is_indexed() else None
            bb = _prime(b) if (b is not None and b == self.a) else b
            where = self._where_var(ridx, ts[0][1], bb)
            if len(ts) == 1 and multi and not self._same_index(fam, ts[0][1], ridx):
                ts = ts + [None]        # a one-member (subset) sum is written like the others
            if len(ts) == 1 and (len(fam) == 1 or not fam.is_indexed()):
                tex = self._coef_tex(ts[0][2], ts[0][3], row, sym, where=where) if same or varying is None \
                    else _signed(varying, sym)
            elif len(ts) == 1 and self.a is not None and len(rows) > 1:
                v = ts[0][1]
                vs = self.a if self._same_index(fam, v, ridx) else f"{b}({self.a})"
                if same:
                    tex = self._coef_tex(ts[0][2], ts[0][3], row, _sub(sym, vs), where=where)
                else:
                    tex = _signed(varying, _sub(sym, vs))
            elif len(ts) == 1 and not same:
                v = ts[0][1]
                tex = _signed(varying, _sub(sym, self.a if self._same_index(fam, v, ridx) else bb))
            elif len(ts) == 1:
                v = ts[0][1]
                tex = self._coef_tex(ts[0][2], ts[0][3], row, _sub(sym, str(v.index())), where=where)
            else:
                ts = [t for t in ts if t is not None]
                if generic and self.a is None and len(terms) <= 4:
                    # a single row with a few terms (a side constraint): the terms themselves
                    out[(rid, ("l", id(fam)))] = _join([self._coef_tex(
                        t[2], t[3], row, _sub(sym, str(t[1].index())), where=where) for t in ts])
                    continue
                full = len(ts) == len(fam)
                rng = bb if full else f"{bb} \\in S_{{{self.a}}}" if self.a else f"{bb} \\in S"
                if same:
                    params = {tuple(id(p.parent_component()) for p in t[3]) for t in ts}
                    ps = ts[0][3] if len(params) == 1 else []
                    outer = [p for p in ps if not p.parent_component().is_indexed()]
                    inner = self._coef_tex(1.0, [p for p in ps if p.parent_component().is_indexed()], row,
                                           _sub(sym, bb), where=where)
                    lead = _lead(nums[0]) + (_param_tex(outer, where) + r"\," if outer else "")
                    tex = f"{lead}\\sum_{{{rng}}} {inner}"
                else:
                    s, factor, csym = varying
                    rng = bb
                    pstr = _param_tex(ts[0][3], where)
                    body = "\\,".join(x for x in (factor, csym, pstr, _sub(sym, bb)) if x)
                    tex = ("-" if s < 0 else "") + f"\\sum_{{{rng}}} {body}"
            out[(rid, ("l", id(fam)))] = tex
        return out

    def _same_index(self, fam, var, ridx):
        """Whether a variable is the row's own element (``stationarity[k]`` ∋ ``w[k]``): same index letter and
        index."""
        return self.a is not None and letter(fam) == self.a and var.index() == ridx

    def _where_var(self, ridx, var, bb):
        """Name a Param's index inside a group over the variable family of ``var`` (summed over ``bb``): the row's
        letter for the row's own element, the sum's letter for a Param indexed like the variables."""
        a, vletter = self.a, letter(var.parent_component())

        def name(comp, idx):
            pl = letter(comp)
            if a is not None and pl == a and idx == ridx:
                return a
            if pl is not None and pl == vletter and bb is not None:
                return bb
            return str(idx) if not isinstance(idx, tuple) else ",".join(map(str, idx))
        return name

    def _quad_group(self, key, terms):
        f1, f2 = key
        rows = self._by_row(terms)
        out = {}
        b = letter(f1)
        bb = _prime(b) if (b is not None and b == self.a) else b
        sym = symbol(f1)
        for rid, ts in rows.items():
            row = ts[0][0]
            ridx = row.index() if self.comp.is_indexed() else None
            diag = all(t[1] is t[2] for t in ts)
            nums = [t[3] for t in ts]
            same = all(_close(v, nums[0]) for v in nums)
            where = self._where_var(ridx, ts[0][1], bb)
            if diag and len(ts) == 1:
                v = ts[0][1]
                vs = None if (len(f1) == 1 or not f1.is_indexed()) else (
                    self.a if self._same_index(f1, v, ridx) else bb if len(rows) > 1 else str(v.index()))
                s = _sub(sym, vs) + "^{2}"
                tex = self._coef_tex(ts[0][3], ts[0][4], row, s, where=where)
            elif diag and not same:
                d = self.cuts.d
                if all(t[1].index() in d and _close(t[3], 0.5 / d[t[1].index()]) for t in ts):
                    coef = r"\frac{1}{2}\," + _sub("d", bb) + "^{-1}"
                else:
                    coef = _sub(f"q^{{{_escape(self.comp.local_name)}}}", bb)
                    self.legend.add(coef + r"\colon\ \text{the coefficients of " + _escape(self.comp.local_name)
                                    + r" as the model holds them}")
                tex = r"\sum_{" + bb + "} " + coef + r"\, " + _sub(sym, bb) + "^{2}"
            elif diag and same:
                full = len(ts) == len(f1)
                rng = bb if full else (f"{bb} \\in S_{{{self.a}}}" if self.a else f"{bb} \\in S")
                inner = self._coef_tex(1.0, ts[0][4], row, _sub(sym, bb) + "^{2}", where=where)
                tex = f"{_lead(nums[0])}\\sum_{{{rng}}} {inner}"
            else:
                # a quadratic form ½ Σ_{b,b'} Q_bb' x_b x_b': Q from the coefficients (off-diagonal: Q, diagonal: ½Q)
                q2 = _prime(bb)
                ok = True
                for t in ts:
                    g = self.cuts.gram(t[1], t[2])
                    want = t[3] if t[1] is not t[2] else 2.0 * t[3]
                    if g is None or t[4] or not _close(g, want):
                        ok = False
                        break
                if ok:
                    Q = r"\langle \Delta F_{" + bb + r"}, \Delta F_{" + q2 + r"} \rangle"
                    half = r"\frac{1}{2}"
                else:
                    Q = f"Q^{{{self.a}}}_{{{bb}{q2}}}" if self.a else f"Q_{{{bb}{q2}}}"
                    half = ""
                    self.legend.add(Q + r"\colon\ \text{the symmetric matrix of " + _escape(self.comp.local_name)
                                    + r" as the model holds it}")
                tex = (half + r"\sum_{" + f"{bb}, {q2}" + "} " + Q + r"\, " + _sub(sym, bb) + r"\, "
                       + _sub(symbol(f2), q2))
            out[(rid, ("q", (id(f1), id(f2))))] = tex
        return out


def _lead(x):
    """A constant factor in front of a sum: nothing for 1, a sign for −1."""
    if _close(x, 1.0):
        return ""
    if _close(x, -1.0):
        return "-"
    return ("-" if x < 0 else "") + num(abs(x)) + r"\,"


def _signed(varying, body):
    s, factor, csym = varying
    return ("-" if s < 0 else "") + "\\,".join(x for x in (factor, csym, body) if x)


def _join(parts):
    out = ""
    for p in parts:
        if not p:
            continue
        if not out:
            out = p
        elif p.startswith("-"):
            out += " - " + p[1:]
        else:
            out += " + " + p
    return out or "0"


class _Nonlinear:
    """A general expression by walking its tree; sums of like terms over one indexed family become Σ."""

    def __init__(self, family, row):
        self.f = family
        self.ridx = row.index() if (row is not None and family.comp.is_indexed()) else None

    def tex(self, e, symbolic=None):
        if isinstance(e, (int, float, np.floating, np.integer)):
            return num(e)
        if getattr(e, "is_named_expression_type", lambda: False)():
            return self._indexed(e, symbolic)
        if getattr(e, "is_variable_type", lambda: False)() or (
                getattr(e, "is_parameter_type", lambda: False)() and not e.is_constant()):
            return self._indexed(e, symbolic)
        if not getattr(e, "is_expression_type", lambda: False)():
            return num(pyo.value(e))
        if isinstance(e, (ne.SumExpression, ne.LinearExpression)):
            args = list(e.args)
            sym_args = [self.tex(a, symbolic=True) for a in args]
            fams = {id(c) for a in args for c in _families(a)}
            if len(args) > 1 and len(set(sym_args)) == 1 and len(fams) == 1:
                fam = next(c for a in args for c in _families(a))
                return r"\sum_{" + letter(fam) + "} " + sym_args[0]
            return _join([self.tex(a, symbolic) for a in args])
        if isinstance(e, ne.NegationExpression):
            return "-" + self._paren(e.args[0], symbolic)
        if isinstance(e, (ne.ProductExpression, ne.MonomialTermExpression)):
            c = e.args[0]
            if isinstance(c, (int, float, np.floating, np.integer)):
                return _lead(float(c)) + self._paren(e.args[1], symbolic)
            return self._paren(c, symbolic) + r"\, " + self._paren(e.args[1], symbolic)
        if isinstance(e, ne.DivisionExpression):
            return r"\frac{" + self.tex(e.args[0], symbolic) + "}{" + self.tex(e.args[1], symbolic) + "}"
        if isinstance(e, ne.PowExpression):
            base = self.tex(e.args[0], symbolic)
            if getattr(e.args[0], "is_expression_type", lambda: False)() and not \
                    getattr(e.args[0], "is_named_expression_type", lambda: False)():
                base = r"\left(" + base + r"\right)"
            else:
                base = "{" + base + "}"
            return base + "^{" + self.tex(e.args[1], symbolic) + "}"
        if isinstance(e, ne.UnaryFunctionExpression):
            return "\\" + e.getname() + r"\left(" + self.tex(e.args[0], symbolic) + r"\right)"
        return r"\mathrm{" + _escape(type(e).__name__) + "}"

    def _paren(self, e, symbolic):
        t = self.tex(e, symbolic)
        if isinstance(e, (ne.SumExpression, ne.LinearExpression)) and not t.startswith(r"\sum"):
            return r"\left(" + t + r"\right)"
        return t

    def _indexed(self, e, symbolic):
        comp = e.parent_component()
        if not comp.is_indexed():
            return label(comp) if comp.ctype is pyo.Expression else symbol(comp)
        idx = e.index()
        sym = label(comp) if comp.ctype is pyo.Expression else symbol(comp)
        if self.ridx is not None and idx == self.ridx and letter(comp) == self.f.a:
            return _sub(sym, self.f.a)
        return _sub(sym, letter(comp) if symbolic else str(idx))


def _leaves(e):
    """Leaves of an expression tree — variables, Params, numbers and named expressions (not entered)."""
    stack = [e]
    while stack:
        x = stack.pop()
        if getattr(x, "is_named_expression_type", lambda: False)() or not getattr(
                x, "is_expression_type", lambda: False)():
            yield x
        else:
            stack.extend(x.args)


def _is_named(x):
    return getattr(x, "is_named_expression_type", lambda: False)()


def _refers_to_named(e):
    """Whether an expression uses named expressions (kept by name rather than expanded)."""
    return any(_is_named(x) for x in _leaves(e))


def _named_in(e):
    """The named-expression components an expression uses."""
    out = {}
    for x in _leaves(e):
        if _is_named(x):
            out[id(x.parent_component())] = x.parent_component()
    return list(out.values())


def _families(e):
    """Indexed components (variables, named expressions, Params) an expression refers to, by its leaves."""
    out = {}
    for x in _leaves(e):
        comp = getattr(x, "parent_component", None)
        if comp is not None:
            c = comp()
            if c.is_indexed():
                out[id(c)] = c
    return list(out.values())


# ------------------------------------------------------------------------------------------------------------------
# The whole model
# ------------------------------------------------------------------------------------------------------------------

def _domain_lines(model):
    lines = []
    for v in model.component_objects(pyo.Var, descend_into=True):
        datas = list(v.values())
        if not datas:
            continue
        b = letter(v)
        bounds = Counter((d.lb, d.ub) for d in datas)
        (lb, ub), n = bounds.most_common(1)[0]
        s = _sub(symbol(v), b)
        if lb is None and ub is None:
            tex = s + r" \in \mathbb{R}"
        elif ub is None:
            tex = s + r" \geq " + num(lb)
        elif lb is None:
            tex = s + r" \leq " + num(ub)
        else:
            tex = num(lb) + r" \leq " + s + r" \leq " + num(ub)
        fixed = sum(1 for d in datas if d.fixed)
        note = f"{v.local_name}: {len(datas)}" + (f", {fixed} fixed" if fixed else "") + \
               (f", {len(datas) - n} with other bounds" if n < len(datas) else "")
        lines.append((tex + (r" \quad \forall " + b if b else ""), note))
    return lines


def _relation(con):
    if con.equality:
        return "="
    if con.has_lb() and con.has_ub():
        return "range"
    return r"\geq" if con.has_lb() else r"\leq"


def _rhs(fam, cons, which):
    """The right-hand side ``which`` (``"lower"``/``"upper"``) over rows of a family: the cuts' Δℓ_r, a common value
    (mutable Params by symbol) or a generic symbol."""
    vals = [getattr(c, which) for c in cons]
    split = [_split(v) for v in vals]
    nums = [s[0] for s in split]
    params = {tuple(id(p) for p in s[1]) for s in split}
    dl = [fam.cuts.dl.get(id(c)) for c in cons]
    if all(d is not None and _close(d, x) for d, x in zip(dl, nums)) and not any(s[1] for s in split):
        return r"\Delta\ell_{" + (fam.a or "r") + "}"
    if all(_close(x, nums[0]) for x in nums) and len(params) == 1:
        return fam._coef_tex(nums[0], split[0][1], cons[0], "", standalone=True) or "0"
    sym = f"b^{{{_escape(fam.comp.local_name)}}}_{{{fam.a}}}"
    fam.legend.add(sym + r"\colon\ \text{the right-hand sides of " + _escape(fam.comp.local_name)
                   + r" as the model holds them}")
    return sym


def math_lines(model, active_only=True):
    """The compact statement of ``model`` as ``[(tex, comment)]`` rows of an ``align*`` block (no environment).

    Parameters
    ----------
    model : ConcreteModel
    active_only : bool
        Only the active rows of each constraint family (dropped cuts are left out).

    Returns
    -------
    rows : list of (str, str)
        LaTeX of one line (with one ``&`` alignment point) and a plain-text comment (family, rows).
    legend : list of str
        LaTeX lines naming generic coefficient symbols.
    """
    cuts = _Cuts(model)
    legend = []
    # the constraints first: the factors they find (d_k) name the quadratic terms of the expressions
    con_rows = []
    for comp in model.component_objects(pyo.Constraint, descend_into=True):
        cons = [c for c in comp.values() if c.active or not active_only] if comp.active or not active_only else []
        if not cons:
            continue
        by_rel = defaultdict(list)
        for c in cons:
            by_rel[_relation(c)].append(c)
        for rel, group in by_rel.items():
            fam = _Family(comp, [(c, c.body) for c in group], cuts)
            forms = fam.forms()
            for f, (tex, members) in enumerate(forms[:MAX_FORMS]):
                if rel == "range":
                    line = (_rhs(fam, members, "lower") + r" \leq " + tex + r" \leq "
                            + _rhs(fam, members, "upper"))
                elif rel == r"\geq":
                    line = tex + r" \geq " + _rhs(fam, members, "lower")
                elif rel == "=":
                    line = tex + " = " + _rhs(fam, members, "upper")
                else:
                    line = tex + r" \leq " + _rhs(fam, members, "upper")
                head = _sub(label(comp), fam.a) + r"\colon\ "
                note = f"{comp.local_name}: {len(members)} rows" + (
                    f" of {len(group)} (form {f + 1} of {len(forms)})" if len(forms) > 1 else "")
                con_rows.append((("& " if con_rows else r"\text{s.t.} \quad & ") + head + line
                                 + (r" \quad \forall " + fam.a if fam.a else ""), note))
            if len(forms) > MAX_FORMS:
                rest = sum(len(m) for _, m in forms[MAX_FORMS:])
                con_rows.append((r"& \dots", f"{comp.local_name}: {rest} rows of {len(forms) - MAX_FORMS} other forms"))
            legend += sorted(fam.legend)
    rows = []
    objs = list(model.component_data_objects(pyo.Objective, active=True))
    vars_ = [symbol(v) for v in model.component_objects(pyo.Var, descend_into=True) if len(v)]
    named = []
    for obj in objs:
        sense = r"\min" if obj.sense == pyo.minimize else r"\max"
        fam = _Family(obj.parent_component(), [(obj, obj.expr)], cuts)
        body = fam.forms()[0][0]
        legend += sorted(fam.legend)
        named += [c for c in _named_in(obj.expr)]
        rows.append((sense + "_{" + r",\, ".join(vars_) + r"} \quad & " + body,
                     f"objective {obj.name} ({'minimise' if obj.sense == pyo.minimize else 'maximise'})"))
    # every named expression, those of the objective first (the where-lines)
    exprs = list(model.component_objects(pyo.Expression, descend_into=True))
    order = {id(c): j for j, c in enumerate(exprs)}
    exprs.sort(key=lambda c: (all(c is not x for x in named), order[id(c)]))
    for comp in exprs:
        datas = [(d, d.expr) for d in comp.values()]
        if not datas:
            continue
        fam = _Family(comp, datas, cuts)
        forms = fam.forms()
        head = _sub(label(comp), fam.a)
        for f, (tex, members) in enumerate(forms[:MAX_FORMS]):
            rows.append((r"\text{where} \quad & " + head + " = " + tex
                         + (r" \quad \forall " + fam.a if fam.a else ""),
                         f"expression {comp.local_name}: {len(members)}" + (
                             f" of {len(datas)} (form {f + 1} of {len(forms)})" if len(forms) > 1 else "")))
        if len(forms) > MAX_FORMS:
            rows.append((r"& \dots", f"expression {comp.local_name}: {len(forms) - MAX_FORMS} other forms"))
        legend += sorted(fam.legend)
    rows += con_rows
    for tex, note in _domain_lines(model):
        rows.append(("& " + tex, note))
    for p in model.component_objects(pyo.Param, descend_into=True):
        if not len(p):
            continue
        if p.is_indexed():
            legend.append(_sub(symbol(p), letter(p)) + r"\colon\ \text{Param " + _escape(p.local_name)
                          + f" ({len(p)} values)}}")
        else:
            legend.append(symbol(p) + " = " + num(pyo.value(p)) + r"\quad \text{(Param " + _escape(p.local_name)
                          + ")}")
    return rows, list(dict.fromkeys(legend))


def _expanded(model, max_rows=4, max_terms=8):
    """The numbers: the objective and the first ``max_rows`` rows of every constraint family with their first
    ``max_terms`` terms (``\\dots`` for the rest)."""
    rows = []

    def var_tex(v):
        comp = v.parent_component()
        return _sub(symbol(comp), str(v.index()) if comp.is_indexed() else None)

    def expr_tex(e):
        r = generate_standard_repn(e, compute_values=True, quadratic=True)
        if r.nonlinear_expr is not None:
            return r"\mathrm{(nonlinear)}"
        parts = []
        quad = list(zip(r.quadratic_coefs, r.quadratic_vars))
        lin = list(zip(r.linear_coefs, r.linear_vars))
        for c, (x, y) in quad[:max_terms]:
            s = var_tex(x) + "^{2}" if x is y else var_tex(x) + r"\, " + var_tex(y)
            parts.append(("-" if c < 0 else "") + ("" if _close(abs(c), 1) else f"{abs(c):.4g}\\,") + s)
        for c, v in lin[:max_terms]:
            parts.append(("-" if c < 0 else "") + ("" if _close(abs(c), 1) else f"{abs(c):.4g}\\,") + var_tex(v))
        if len(quad) > max_terms or len(lin) > max_terms:
            parts.append(r"\dots")
        if r.constant:
            parts.append(f"{float(r.constant):.4g}")
        return _join(parts)
    for obj in model.component_data_objects(pyo.Objective, active=True):
        sense = r"\min" if obj.sense == pyo.minimize else r"\max"
        rows.append((sense + r" \quad & " + expr_tex(obj.expr), f"objective {obj.name}"))
    for comp in model.component_objects(pyo.Constraint, descend_into=True):
        cons = [c for c in comp.values() if c.active] if comp.active else []
        for c in cons[:max_rows]:
            body = expr_tex(c.body)
            lo = None if c.lower is None else float(pyo.value(c.lower))
            up = None if c.upper is None else float(pyo.value(c.upper))
            if c.equality:
                line = f"{body} = {up:.4g}"
            elif lo is not None and up is not None:
                line = rf"{lo:.4g} \leq {body} \leq {up:.4g}"
            elif lo is not None:
                line = rf"{body} \geq {lo:.4g}"
            else:
                line = rf"{body} \leq {up:.4g}"
            idx = c.index() if comp.is_indexed() else None
            rows.append(("& " + _sub(label(comp), None if idx is None else str(idx)) + r"\colon\ " + line,
                         f"{comp.local_name}[{idx}]"))
        if len(cons) > max_rows:
            rows.append((r"& \dots", f"{comp.local_name}: {len(cons) - max_rows} more rows"))
    return rows


def _block(rows, title):
    out = [f"% {title}", r"\begin{align*}"]
    for j, (tex, note) in enumerate(rows):
        end = r" \\" if j < len(rows) - 1 else ""
        out.append(f"{tex}{end}  % {note}")
    out.append(r"\end{align*}")
    return out


def model_latex(model, expand=False, title=None):
    """The statement of ``model`` as LaTeX (``align*`` blocks; amsmath and amssymb).

    Parameters
    ----------
    model : ConcreteModel
    expand : bool
        Add a second block with the numbers of the instance (first rows of every family).
    title : str, optional
        A comment line at the top (default: the model's name).

    Returns
    -------
    str
    """
    rows, legend = math_lines(model)
    name = model.name.strip("'")
    out = _block(rows, title or f"model {name}")
    if legend:
        out += ["% symbols and Params read from the model", r"\begin{align*}"]
        out += [("& " + line + (r" \\" if j < len(legend) - 1 else "")) for j, line in enumerate(legend)]
        out.append(r"\end{align*}")
    if expand:
        out += _block(_expanded(model), f"the numbers of this instance (model {name})")
    return "\n".join(out)
