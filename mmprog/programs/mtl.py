"""MTL — multiple template learning: the structural SVM with the squared ℓ1-of-ℓ2 (multiple kernel) regulariser
over template groups, learned by the 1-slack cutting-plane Algorithm 1 with its master solved through the QCQP dual.

Mao & Tsang, "Efficient multi-template learning for structured prediction" (IEEE TNNLS 2013), section 1. The joint
features are grouped by template, w = [w₁; …; w_m] (for the chain map: one group per input template, then the
transition template last). After s cutting-plane rounds the master problem is (5),

    min_{w, ξ ≥ 0}  ½ (Σⱼ ‖wⱼ‖)² + C ξ    s.t.  ξ ≥ qʳ + Σⱼ wⱼᵀpⱼʳ,   r = 1..s,

with pⱼʳ = −(1/n) Σᵢ δΦⱼⁱ(Ŷᵢʳ) and qʳ = (1/n) Σᵢ Δ(Yᵢ, Ŷᵢʳ). In mmprog's notation a 1-slack cut r is
wᵀΔF̄_r ≥ Δℓ̄_r − ξ with ΔF̄_r = (1/n) Σᵢ Δfᵢ(Ŷᵢʳ), so pʳ = −ΔF̄_r and qʳ = Δℓ̄_r. Its conic dual is the QCQP (6),

    max_{α ∈ 𝒜, θ}  −θ + Σᵣ αᵣ qʳ    s.t.  ½ αᵀQʲα ≤ θ,   j = 1..m,
    𝒜 = {Σᵣ αᵣ ≤ C, α ≥ 0},   Qʲ_{r,r′} = ⟨pⱼʳ, pⱼʳ′⟩ = ⟨ΔF̄_{r,j}, ΔF̄_{r′,j}⟩,

whose size depends on the number of cuts s and templates m only, never on the number of features. The template
weights μⱼ are the multipliers of the m quadratic constraints (Σⱼ μⱼ = 1, μ ≥ 0: stationarity in θ) and the primal
solution is (7), wⱼ = −μⱼ Σᵣ αᵣ pⱼʳ = μⱼ Σᵣ αᵣ ΔF̄_{r,j}. Templates whose μⱼ vanishes are switched off as a whole.

Scales. mmprog keeps every objective on the n-slack scale Ω(w) + C Σᵢ ξᵢ (C as for ``m3n``): the 1-slack ξ stands for
Σᵢ ξᵢ / n, so the master weighs it by C·n and the budget of 𝒜 is C·n (the paper's C is mmprog's C·n; its grid
n × {10⁻², …, 10²} is mmprog's C ∈ {10⁻², …, 10²}). The n-slack form (``slack="n"``, a working set per example, a
budget C per example) is the same derivation with one budget per slack and is accepted too.

Forms and routes
----------------
* ``form="dual"`` (default): the QCQP (6) as a Pyomo model — variables ``alpha`` (one per cut, ``model.ws``
  components), ``theta``; constraints ``budget[i]`` and ``quad[j]``: ½αᵀQʲα − θ ≤ 0, one per template; objective
  ``linear − theta``. Qʲ is grown by one row and column per cut from the working set's blocks (:class:`TemplateGram`):
  against explicit rows by a merge with each product added to its column's template, against 1-slack cuts held as
  labelings (0/1 token features) through X in one pass over their wrong tokens. With
  ``solver="ipopt"`` the QCQP is handed to Ipopt (cyipopt) from these arrays — the quad constraints, their Jacobian
  Qʲα and the Hessian Σⱼ λⱼQʲ as numpy callbacks — because Pyomo's expression route re-walks m·s²/2 quadratic terms
  per solve (measured here for m = 134 templates: 10.6 s per solve at s = 30 cuts, 99 s at s = 100, against well under
  a second from the arrays). The α, θ values and the multipliers are loaded back into the Pyomo model, which stays the
  statement of the program: the quadratic expressions are written into it on demand (:meth:`MTL.materialise`, called
  before exports and before solves through any other solver, e.g. MOSEK or Gurobi, or with ``native=False``).
* ``form="primal"``: the second-order-cone program (5) as a Pyomo model — ``w``, ``xi``, ``u``, ``rho``; cuts,
  ``norm_sum``: Σⱼ ρⱼ ≤ u, ``cone[j]``: ‖wⱼ‖² ≤ ρⱼ² (ρ ≥ 0), objective ½u² + C·scale·Σξ (Appendix A of the paper).
  For conic solvers (MOSEK, Gurobi); Ipopt takes it in this smooth QCQP form. The template weights of the primal are
  μⱼ = ‖wⱼ‖ / Σₗ‖wₗ‖ (from (7): ‖wⱼ‖ = μⱼγ for every template with μⱼ > 0, γ = Σₗ‖wₗ‖).

:meth:`MTL.dual_model` builds the other form on the same working set, so (5) and (6) can be compared directly.
"""
from __future__ import annotations


import numpy as np
import pyomo.core as pyo
import scipy.sparse as sp
from numba import njit

from .statements import (Check, Duality, objective_of, result_numbers, scale_of, cross_solver_checks, duality_for,
                       feasibility_checks, rebuild_master, slackness_checks, sparsity_check, working_set_arrays)
from ..exceptions import ParameterError, SolverError, SolverUnavailable
from ..solvers import ProblemClass
from .base import Dims, MasterState, Program, Solution, register
from ..solvers import values_of
from ..cuts import WorkingSet

#: A template weight below this is reported as "removed" (the threshold of the paper's section 3.3).
REMOVED_BELOW = 1e-5


# ----------------------------------------------------------------------------------------------------------------
# The per-template Gram matrices Qʲ
# ----------------------------------------------------------------------------------------------------------------

def template_groups(dims):
    """Group ids (dim,) and names (m,) of the templates of a feature map's ``Dims`` (one group when none given).

    The ids are held in the narrowest of int16 (fewer than 32,769 templates) and int32: a vector as long as w, which
    the template programs keep for the whole fit (an int64 one was 424 MB on full CoNLL-2002 NER, 53 million joint
    features, and the kernels over it read a quarter of the bytes). The map's array is converted only when its
    dtype differs.

    Returns
    -------
    groups : ndarray of int16 or int32, shape (dim,)
    names : list of str, length ≥ max(groups) + 1
    """
    groups = dims.group_ids()
    if groups is None:
        groups = np.zeros(dims.dim, dtype=np.int16)
    groups = np.asarray(groups)
    if groups.shape != (dims.dim,):
        raise ParameterError(f"feature groups must have one entry per joint feature ({dims.dim}); "
                             f"got shape {groups.shape}")
    top = int(groups.max()) if groups.size else 0
    if groups.size and int(groups.min()) < 0:
        raise ParameterError(f"feature groups must be ids ≥ 0; got {int(groups.min())}")
    m = top + 1
    groups = groups.astype(group_dtype(m), copy=False)
    names = list(dims.group_names) if dims.group_names is not None else [f"g{j}" for j in range(m)]
    if len(names) < m:
        raise ParameterError(f"group_names has {len(names)} names but the feature groups use {m} ids")
    # a template may have instantiated no feature (no joint feature in its group): it stays, with Qʲ = 0
    return groups, names


def group_dtype(m):
    """int16 for ids below 32,768 (m ≤ 32,768 groups), else int32."""
    return np.int16 if m - 1 <= np.iinfo(np.int16).max else np.int32


@njit(cache=True, nogil=True, fastmath=False)
def _add_group_sq(w, groups, out):
    # out[groups[k]] += w[k]², k ascending: np.bincount's order, so its floats; ids outside out are skipped (as
    # bincount(...)[:m] dropped them) instead of writing past the end
    m = out.shape[0]
    for k in range(w.shape[0]):
        g = groups[k]
        if 0 <= g < m:
            out[g] += w[k] * w[k]


@njit(cache=True, nogil=True, fastmath=False)
def _scale_by_group(w, groups, mu):
    for k in range(w.shape[0]):
        w[k] *= mu[groups[k]]


def group_sq_norms(w, groups, m):
    """‖wⱼ‖² of every template group, shape (m,), in one pass over w (no w-sized temporaries: w*w and bincount's
    cast of the ids were 424 MB each on full NER).

    Parameters
    ----------
    w : ndarray, shape (dim,)
    groups : ndarray of int, shape (dim,)
    m : int
    """
    out = np.zeros(m)
    _add_group_sq(np.asarray(w, dtype=np.float64), np.asarray(groups), out)
    return out


def template_combination(ws, alpha, mu, groups, out=None):
    """w = μ[groups] ⊙ ΔFᵀα, the primal point (7) of MTL (and (13) of the p-block dual): wⱼ = μⱼ Σᵣ αᵣ ΔF̄_{r,j}.

    From the working set's blocks (:meth:`WorkingSet.tdot`, no stacked copy of the cuts), scaled per template in
    place (no μ[groups] vector as long as w). The floats of ``mu[groups] * (F.T @ alpha)`` on the stacked rows.

    Parameters
    ----------
    ws : WorkingSet
        r cuts.
    alpha : ndarray, shape (r,)
        ≥ 0.
    mu : ndarray, shape (m,)
    groups : ndarray of int, shape (dim,)
    out : ndarray of float64, shape (dim,), optional
        Written over (the engine's previous w, ``model.master_state.w_spare``), so the round holds one w, not two.

    Returns
    -------
    ndarray of float64, shape (dim,)
    """
    if ws.size:
        w = ws.tdot(alpha, out=out, dense=False)
    elif out is not None:
        out[:] = 0.0
        w = out
    else:
        w = np.zeros(ws.dim)
    _scale_by_group(w, groups, np.asarray(mu, dtype=np.float64))
    return w


class TemplateGram:
    """The Gram matrices Qʲ_{r,r′} = ⟨ΔF̄_{r,j}, ΔF̄_{r′,j}⟩ of a working set's live cuts, one per template, grown by
    one row and column per cut.

    The rows of the new cuts against every cut come from the working set's blocks
    (:meth:`WorkingSet.template_gram_rows`): one merge of sorted rows per explicit row, with each product added to
    the template of its column, and one pass over the wrong tokens of all the cuts held as labelings; no stacked
    copy of the cuts is made.

    Only the cuts still active are held, densely, (m, k, k) for k live cuts in a buffer that doubles: a dropped or
    aggregated cut's α is fixed at 0, so its rows and columns are never read again and are compacted away at the next
    :meth:`grow`. (Held for every position ever added, the buffer grew with the rounds: on full CoNLL-2002 NER with
    ``max_cuts`` each round adds a cut and an aggregate, ~1,200 positions after 600 rounds, 134 × 2,048² doubles =
    4.5 GB, for about 12 live cuts.) Positions not held read as 0 in :meth:`block`.

    Parameters
    ----------
    groups : ndarray of int, shape (dim,)
        Template of every joint feature (kept as given: int16 or int32 from :func:`template_groups`).
    n_templates : int
    """

    def __init__(self, groups, n_templates):
        self.groups = np.asarray(groups)
        self.m = int(n_templates)
        self.size = 0                                   # working-set positions seen
        self.held = np.zeros(0, dtype=np.int64)          # positions held, ascending; slot k holds held[k]
        self._buf = np.zeros((self.m, 0, 0))

    def _slots(self, positions):
        """Slot of every position, −1 where it is not held."""
        positions = np.asarray(positions, dtype=np.int64)
        if not len(self.held):
            return np.full(len(positions), -1)
        k = np.minimum(np.searchsorted(self.held, positions), len(self.held) - 1)
        return np.where(self.held[k] == positions, k, -1)

    def block(self, rows, cols=None):
        """Qʲ restricted to working-set positions, shape (m, len(rows), len(cols)) (``cols`` defaults to ``rows``);
        0 where a position is not held (dropped: its α is 0)."""
        cols = rows if cols is None else cols
        sr, sc = self._slots(rows), self._slots(cols)
        out = np.zeros((self.m, len(sr), len(sc)))
        ir, ic = np.nonzero(sr >= 0)[0], np.nonzero(sc >= 0)[0]
        if len(ir) and len(ic):
            out[np.ix_(np.arange(self.m), ir, ic)] = self._buf[np.ix_(np.arange(self.m), sr[ir], sc[ic])]
        return out

    @property
    def Q(self):
        """The Gram matrices over every position seen, shape (m, s, s): a copy, zero for dropped cuts (exports,
        inspection; the fit reads :meth:`block` of the live cuts)."""
        return self.block(np.arange(self.size))

    def grow(self, ws):
        """Forget the cuts ``ws`` (a :class:`WorkingSet`) no longer holds active, and add the rows and columns of
        the cuts not seen yet."""
        active = ws.active_mask()
        k = len(self.held)
        keep = active[self.held] if k else np.zeros(0, bool)
        if k and not keep.all():
            idx = np.nonzero(keep)[0]
            kept = self._buf[np.ix_(np.arange(self.m), idx, idx)]
            self.held = self.held[idx]
            k = len(idx)
            self._buf[:, :k, :k] = kept
        s = ws.size
        if s <= self.size:
            return
        new = np.arange(self.size, s)
        new = new[active[new]]
        self.size = s
        if not len(new):
            return
        held = np.concatenate([self.held, new])
        if len(held) > self._buf.shape[1]:
            cap = max(len(held), 2 * self._buf.shape[1], 8)
            buf = np.zeros((self.m, cap, cap))
            buf[:, :k, :k] = self._buf[:, :k, :k]
            self._buf = buf
        rows = ws.template_gram_rows(new, self.groups, self.m)[:, :, held]           # (m, new, k + new)
        at = np.arange(k, len(held))
        self._buf[:, at, : len(held)] = rows
        self._buf[:, : len(held), at] = rows.transpose(0, 2, 1)
        self.held = held

    def quad(self, alpha):
        """αᵀQʲα for every template, shape (m,), α over all positions (those not held have α = 0)."""
        a = np.asarray(alpha, dtype=np.float64)[self.held]
        k = len(self.held)
        return np.einsum("jrs,r,s->j", self._buf[:, :k, :k], a, a, optimize=True)

    def products(self, alpha):
        """(Qʲα)_r for every template and position, shape (m, s), α over all positions; 0 at positions not held."""
        out = np.zeros((self.m, self.size))
        k = len(self.held)
        if k:
            out[:, self.held] = self._buf[:, :k, :k] @ np.asarray(alpha, dtype=np.float64)[self.held]
        return out


# ----------------------------------------------------------------------------------------------------------------
# The program
# ----------------------------------------------------------------------------------------------------------------

class TemplateNormsOfLastSolution:
    """Template norms ‖wⱼ‖ of the w that :meth:`read_solution` returned, from the Gram matrices — for w of (7) or
    (13), wⱼ = μⱼ Σᵣ αᵣ ΔF̄_{r,j}, so ‖wⱼ‖² = μⱼ² αᵀQʲα — and reused when the engine asks for Ω at that same w
    (``objective_at``): on full NER each pass over the 53-million-long w cost about 5 % of a round."""

    def _keep_norms(self, w, norms):
        self._norms_of = (w, norms)
        return norms

    def group_norms(self, w):
        kept = getattr(self, "_norms_of", None)
        if kept is not None and kept[0] is w:
            return kept[1]
        return np.sqrt(group_sq_norms(w, self._groups, self._m))


@register("mtl")
class MTL(Program, TemplateNormsOfLastSolution):
    """Multiple template learning (Mao & Tsang, Algorithm 1; master (5) through its dual (6)); see the module
    docstring.

    Parameters
    ----------
    C : float
        Slack weight on the n-slack scale (the paper's C is C·n).
    form : {"dual", "primal"}
        The QCQP (6) (default) or the SOCP (5) as the master.
    native : bool
        With ``solver="ipopt"`` and the dual form: hand the QCQP to Ipopt from its arrays (default) instead of
        through Pyomo's expression writer (same program, same solver; a test checks both agree).
    ipopt_options : dict, optional
        Extra Ipopt options for the native route.
    """

    problem_class = ProblemClass.QCQP
    paper = "Mao & Tsang, Efficient multi-template learning for structured prediction (TNNLS 2013)"
    equations = "(5), (6), (7); Algorithm 1"
    params_doc = {"form": '"dual" (QCQP (6)) or "primal" (SOCP (5))',
                  "native": "True: Ipopt from the arrays of (6); False: through Pyomo's writer",
                  "ipopt_options": "dict of extra Ipopt options (native route)"}
    #: Algorithm 1 is the 1-slack cutting-plane method: mmprog.fit uses it unless slack= says otherwise
    default_slack = "one"

    def __init__(self, C=1.0, form="dual", native=True, ipopt_options=None):
        super().__init__(C)
        if form not in ("dual", "primal"):
            raise ParameterError(f'form must be "dual" (the QCQP (6)) or "primal" (the SOCP (5)); got {form!r}')
        if not isinstance(native, (bool, np.bool_)):
            raise ParameterError(f"native must be True or False; got {native!r}")
        if ipopt_options is not None and not isinstance(ipopt_options, dict):
            raise ParameterError(f"ipopt_options must be a dict of Ipopt options or None; got {ipopt_options!r}")
        self.form = form
        self.native = bool(native)
        self.ipopt_options = dict(ipopt_options or {})
        self.problem_class = ProblemClass.QCQP if form == "dual" else ProblemClass.SOCP

    def params(self):
        return {"C": self.C, "form": self.form, "native": self.native, "ipopt_options": dict(self.ipopt_options)}

    def regulariser(self, w):
        """Ω(w) = ½ (Σⱼ ‖wⱼ‖)² (needs the groups: set by :meth:`build`; one group before that)."""
        groups = getattr(self, "_groups", None)
        if groups is None or len(groups) != len(w):
            return 0.5 * float(np.dot(w, w))
        return 0.5 * float(self.group_norms(w).sum()) ** 2

    # ------------------------------------------------------------------------------------------
    def build(self, dims: Dims):
        groups, names = template_groups(dims)
        self._groups, self._m = groups, len(names)
        m = pyo.ConcreteModel(name=f"mtl_{self.form}")
        m.dims = dims
        m.ws = WorkingSet(dims.dim)
        m.master_state = MasterState()
        m.form = self.form
        m.template_names = names
        m.groups = groups
        m.gram = TemplateGram(groups, len(names))
        m.slack_scale = float(dims.n) / dims.n_slacks
        m.C = pyo.Param(initialize=self.C, mutable=True)
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        m.templates = pyo.RangeSet(0, len(names) - 1)
        if self.form == "dual":
            m.alpha = pyo.VarList(domain=pyo.NonNegativeReals)
            m.theta = pyo.Var(initialize=0.0)
            m.budget = pyo.Constraint(pyo.Any)
            m.linear = pyo.Expression(expr=0.0)
            m.half_quad = pyo.Expression(m.templates, initialize=0.0)
            m.quad = pyo.Constraint(m.templates, rule=lambda mm, j: mm.half_quad[j] - mm.theta <= 0)
            m.objective = pyo.Objective(expr=m.linear - m.theta, sense=pyo.maximize)
            m.alpha_of_slack = {}
            m.master_state.quad_done = 0
        else:
            _build_primal_socp(m, dims, groups, len(names))
        return m

    def reads_labeling_cuts(self, model):
        # the QCQP (6) reads the cuts through the working set only (per-template Gram rows, ΔFᵀα); the SOCP (5)
        # writes explicit rows into its constraints
        return getattr(model, "form", None) == "dual"

    def add_cuts(self, model, cuts):
        model.ws.add(cuts)
        if model.form == "primal":
            added = self.add_cut_rows(model, cuts, model.w_list)
        else:
            added = self.add_alpha_columns(model, cuts)
        model.gram.grow(model.ws)
        return added

    def materialise(self, model):
        """Write the pending quadratic terms ½αᵀQʲα into ``model.half_quad[j]`` so the Pyomo model states the whole
        QCQP (before exports, inspection, and solves through Pyomo's interfaces)."""
        if getattr(model, "form", None) != "dual":
            return
        ws, gram = model.ws, model.gram
        done = model.master_state.quad_done
        if done >= ws.size:
            return
        gram.grow(ws)
        R = gram.block(np.arange(done, ws.size), np.arange(ws.size))          # (m, new, s): the pending rows
        alphas = ws.components
        for j in range(gram.m):
            terms = []
            for pos in range(done, ws.size):
                a = alphas[pos]
                row = R[j, pos - done]
                if row[pos] != 0.0:
                    terms.append(0.5 * float(row[pos]) * a * a)
                nz = np.nonzero(row[:pos])[0]
                terms.extend(float(row[t]) * alphas[t] * a for t in nz)
            if terms:
                model.half_quad[j].set_value(model.half_quad[j].expr + pyo.quicksum(terms))
        model.master_state.quad_done = ws.size

    def master_form(self, model):
        """The dual form (6) is ``"qcqp_dual"``: with Ipopt (and ``native``) it is solved from its arrays (see the
        module docstring, :meth:`qcqp_dual`); otherwise the Pyomo model, materialised, through the solver."""
        return "qcqp_dual" if model.form == "dual" else None

    def native_ok(self, model, solver):
        return self.native

    def solve(self, model, solver, **kw):
        self.materialise(model)
        status = solver.solve(model, **{k: v for k, v in kw.items() if k in ("options", "time_limit")})
        model.master_state.native_mu = None
        return status

    def qcqp_dual(self, model):
        """Form ``"qcqp_dual"``: problem (6) on the active cuts as arrays, for a back end that solves it from them
        (:class:`mmprog.engine.masters.QCQPDualIpoptRoute`).

        Returns
        -------
        dict
            ``Q`` (m, s, s) the templates' Gram blocks of the active cuts, ``q`` (s,) their losses, ``slack_idx``
            (s,) each cut's budget id in 0..``n_budgets``−1, ``budget`` B = C·scale (Σ_{r∈Sᵢ} αᵣ ≤ B), ``beta0``
            (s,) the current α/B (a warm start), ``active`` (s,) the cuts' working-set positions.
        """
        ws, gram = model.ws, model.gram
        gram.grow(ws)
        act = np.nonzero(ws.active_mask())[0]
        slacks, slack_idx = np.unique(ws.example_array()[act], return_inverse=True)
        budget = self.C * model.slack_scale
        return {"Q": gram.block(act), "q": ws.dl_array()[act], "slack_idx": slack_idx, "n_budgets": len(slacks),
                "budget": budget, "beta0": values_of([ws.components[p] for p in act]) / budget, "active": act,
                "options": dict(self.ipopt_options)}

    def load_qcqp_dual(self, model, active, alpha, theta, mu):
        """Load a solution of (6) found from :meth:`qcqp_dual`'s arrays: α of the ``active`` cuts, θ, and the
        multipliers μ of the templates' quadratic constraints (the template weights)."""
        ws = model.ws
        for p, a in zip(active, alpha):
            ws.components[p].set_value(float(a), skip_validation=True)
        model.theta.set_value(theta)
        model.master_state.native_mu = mu

    def drop_cuts(self, model, positions):
        self.drop_alpha_or_rows(model, positions)

    # ------------------------------------------------------------------------------------------
    def template_weights_of(self, model):
        """μ of the last solve: the multipliers of ``quad[j]`` (dual form, sign-normalised and divided by their sum,
        which is 1 at a KKT point), or ‖wⱼ‖/Σ‖wₗ‖ (primal form). Returns (μ (m,), raw sum of the multipliers)."""
        if model.form == "primal":
            norms = np.sqrt(group_sq_norms(values_of(model.w_list), model.groups, model.gram.m))
            tot = norms.sum()
            return (norms / tot if tot > 0 else np.full(model.gram.m, 1.0 / model.gram.m)), 1.0
        mu = model.master_state.native_mu
        if mu is None:
            from ..solvers import duals
            mu = duals(model, [model.quad[j] for j in model.templates], getattr(model, "solved_with", None))
        mu = np.maximum(np.asarray(mu, dtype=np.float64), 0.0)
        tot = float(mu.sum())
        return (mu / tot if tot > 0 else mu), tot

    def read_solution(self, model):
        ws, gram = model.ws, model.gram
        gram.grow(ws)
        n_slacks = model.dims.n_slacks
        groups, m_t = model.groups, gram.m
        budget = self.C * model.slack_scale
        dl = ws.dl_array()
        act = ws.active_mask()
        mu, mu_sum = self.template_weights_of(model)
        if model.form == "dual":
            alpha = feasible_alpha(values_of(ws.components), ws, budget) if ws.size else np.zeros(0)
            # the engine's previous w when it is done with it (model.master_state.w_spare): written over instead of allocating
            spare, model.master_state.w_spare = model.master_state.w_spare, None
            w = template_combination(ws, alpha, mu, groups, out=spare)      # (7): wⱼ = μⱼ Σᵣ αᵣ ΔF̄_{r,j}
            # wᵀΔF̄_r = Σⱼ μⱼ (Qʲα)_r: the margins from the Gram matrices, without another pass over the cut rows
            margins = mu @ gram.products(alpha) if ws.size else np.zeros(0)
        else:
            w = values_of(model.w_list)
            alpha = np.maximum(ws.duals(model), 0.0) if ws.size else np.zeros(0)
            # the primal SOCP holds a Pyomo variable per feature: small problems only, the stacked rows are fine
            margins = ws.dF() @ w if ws.size else np.zeros(0)
        xi = np.zeros(n_slacks)
        if ws.size:
            np.maximum.at(xi, ws.example_array()[act], (dl - margins)[act])
        quad = gram.quad(alpha) if ws.size else np.zeros(m_t)
        if model.form == "dual":
            norms = self._keep_norms(w, mu * np.sqrt(np.maximum(quad, 0.0)))
        else:
            norms = np.sqrt(group_sq_norms(w, groups, m_t))
        primal = 0.5 * float(norms.sum()) ** 2 + budget * float(xi.sum())
        # θ recomputed from the numbers: the largest ½αᵀQʲα (the tight quadratic constraints)
        theta = 0.5 * float(quad.max()) if ws.size and m_t else 0.0
        dual = float(alpha @ dl) - theta if ws.size else 0.0
        extra = {"template_weights": mu, "template_names": list(model.template_names),
                 "template_norms": norms, "templates_removed": int(np.sum(mu < REMOVED_BELOW)),
                 "multiplier_sum": mu_sum, "theta": theta, "form": model.form,
                 "cut_q": dl, "cut_p": NegatedRows(ws.rows()), "gram": gram.block(np.nonzero(act)[0]),
                 "gram_positions": np.nonzero(act)[0]}
        return Solution(w=np.asarray(w, dtype=np.float64), xi=xi, alpha=alpha, objective=primal,
                        dual_objective=dual, extra=extra)

    # ------------------------------------------------------------------------------------------
    def dual_model(self, model):
        """The other form of the master on the same working set (active cuts): the SOCP (5) for a dual-form model,
        the QCQP (6) (materialised) for a primal-form one. A fresh Pyomo model, ready for any capable solver."""
        other = MTL(C=self.C, form="primal" if model.form == "dual" else "dual", native=False)
        twin = other.build(model.dims)
        ws = model.ws
        act = np.nonzero(ws.active_mask())[0]
        if len(act):
            from ..cuts import Cuts
            cuts = Cuts(ws.example_array()[act], ws.dF()[act], ws.dl_array()[act])
            other.add_cuts(twin, cuts)
        other.materialise(twin)
        return twin


class NegatedRows:
    """The cut vectors pʳ = −ΔF̄_r of the paper, as a read-only view of the working set's ΔF̄ rows (no copy of the
    cut data, which the results would otherwise duplicate every round).

    Built on a :class:`~mmprog.cuts.working_set.RowsSnapshot` (the rows of the solution's round, stacked on the
    first use: a fit reads them only for checks and exports; an error if ``drop_after`` / ``max_cuts`` released some
    of them since) or on a matrix.

    Supports ``shape``, ``toarray()``, ``tocsr()``, ``P @ x``, ``P.T @ y`` and ``P[r]``.
    """

    def __init__(self, F):
        self._src = F
        self._stacked = F if sp.issparse(F) else None
        self.shape = F.shape

    @property
    def _F(self):
        if self._stacked is None:
            self._stacked = self._src.tocsr()
        return self._stacked

    def toarray(self):
        return -self._F.toarray()

    def tocsr(self):
        return -self._F.tocsr()

    def __matmul__(self, x):
        return -(self._F @ x)

    def __getitem__(self, key):
        return -self._F[key]

    @property
    def T(self):
        return _NegatedTranspose(self._F)

    def __repr__(self):
        # the nnz only once stacked: a repr must neither stack nor fail on rows released since
        return f"NegatedRows(shape={self.shape}" + (f", nnz={self._stacked.nnz})" if self._stacked is not None else ")")


class _NegatedTranspose:
    def __init__(self, F):
        self._F = F
        self.shape = (F.shape[1], F.shape[0])

    def __matmul__(self, y):
        return -(self._F.T @ y)

    def toarray(self):
        return -self._F.T.toarray()


def feasible_alpha(alpha, ws, budget):
    """α clipped into 𝒜: ≥ 0 and each slack's sum ≤ B. An interior-point solver returns α within its constraint
    tolerance (≈1e-8 relative); scaling the few over-budget slacks back makes the dual value a valid lower bound."""
    alpha = np.maximum(np.asarray(alpha, dtype=np.float64), 0.0)
    ex = ws.example_array()
    sums = np.bincount(ex, weights=alpha)
    scale = np.where(sums > budget, budget / np.maximum(sums, 1e-300), 1.0)
    return alpha * scale[ex]


# ----------------------------------------------------------------------------------------------------------------
# The primal SOCP (5)
# ----------------------------------------------------------------------------------------------------------------

def _build_primal_socp(m, dims, groups, n_templates):
    """Variables ``w``, ``xi``, ``u``, ``rho``; ``norm_sum``: Σⱼ ρⱼ ≤ u; ``cone[j]``: Σ_{k∈j} w_k² ≤ ρⱼ²;
    objective ½u² + C·scale·Σξ; the cuts go to ``cuts`` (Appendix A of Mao & Tsang)."""
    m.w = pyo.Var(range(dims.dim), initialize=0.0)
    m.xi = pyo.Var(range(dims.n_slacks), domain=pyo.NonNegativeReals, initialize=0.0)
    m.u = pyo.Var(domain=pyo.NonNegativeReals, initialize=0.0)
    m.rho = pyo.Var(m.templates, domain=pyo.NonNegativeReals, initialize=0.0)
    m.w_list = [m.w[k] for k in range(dims.dim)]
    members = [[] for _ in range(n_templates)]
    for k, g in enumerate(groups):
        members[int(g)].append(m.w_list[k])
    m.norm_sum = pyo.Constraint(expr=pyo.quicksum(m.rho[j] for j in m.templates) <= m.u)
    m.cone = pyo.Constraint(m.templates, rule=lambda mm, j: pyo.quicksum(v * v for v in members[j])
                            <= mm.rho[j] ** 2 if members[j] else pyo.Constraint.Skip)
    m.cuts = pyo.ConstraintList()
    m.objective = pyo.Objective(expr=0.5 * m.u ** 2 + m.C * m.slack_scale
                                * pyo.quicksum(m.xi[i] for i in range(dims.n_slacks)), sense=pyo.minimize)



def mtl_objective(w, groups, n_templates, C_scaled, xi):
    """½(Σⱼ‖wⱼ‖)² + C_scaled Σξ — the objective of (3)/(5) recomputed from numbers."""
    return 0.5 * float(np.sqrt(group_sq_norms(w, groups, n_templates)).sum()) ** 2 + C_scaled * float(np.sum(xi))


__all__ = ["MTL", "TemplateGram", "NegatedRows", "template_groups", "group_sq_norms",
           "group_dtype", "template_combination", "feasible_alpha", "mtl_objective", "REMOVED_BELOW",
           "TemplateNormsOfLastSolution"]


# ----------------------------------------------------------------------------------------------------------------
# Duality: The SOCP master (5), its QCQP dual (6) and the recovery (7), as statements for ``mmprog verify``
# ----------------------------------------------------------------------------------------------------------------

def template_grams(arrays, groups, m):
    """Qʲ = F_j F_jᵀ of the active cuts for every template j, recomputed from ΔF and the groups, shape (m, r, r)."""
    F = arrays.F.tocsc()
    out = np.zeros((m, F.shape[0], F.shape[0]))
    for j in range(m):
        cols = np.flatnonzero(groups == j)
        if len(cols):
            Fj = F[:, cols]
            out[j] = np.asarray((Fj @ Fj.T).todense())
    return out


def group_norms(w, groups, m):
    return np.sqrt(group_sq_norms(w, groups, m))


@duality_for("mtl")
class MTLDuality(Duality):
    """MTL: the master's own pair — the SOCP (5) and the QCQP (6), built by the program's ``dual_model`` — and the
    recovery (7) of w from the dual, the template weights, the multipliers' normalisation."""

    def dual_model(self, result):
        from .base import get_program
        return get_program(result.program, **result.params).dual_model(result.model)

    def checks(self, ctx):
        yield from mtl_checks(ctx)


def mtl_checks(ctx):
    res = ctx.result
    model = res.model
    groups = np.asarray(model.groups)
    m_t = int(len(model.template_names))
    arrays = working_set_arrays(res)
    w, xi, alpha = result_numbers(res, arrays)
    norms = group_norms(w, groups, m_t)
    P = 0.5 * float(norms.sum()) ** 2 + arrays.budget * float(xi.sum())
    Q = template_grams(arrays, groups, m_t)
    quad = 0.5 * np.einsum("jrs,r,s->j", Q, alpha, alpha) if len(alpha) else np.zeros(m_t)
    theta = float(quad.max(initial=0.0))
    D = float(alpha @ arrays.dl) - theta
    mu = np.asarray(res.extra.get("template_weights", np.full(m_t, np.nan)), dtype=np.float64)
    tol = max(ctx.rtol, 1e-5) * scale_of(P)
    yield from feasibility_checks(ctx, arrays, w, xi, alpha)
    yield ctx.check("strong duality: (5) value ½(Σⱼ‖wⱼ‖)² + C·s·Σξ = (6) value Σ α Δℓ − maxⱼ ½αᵀQʲα "
                    "(Qʲ recomputed from ΔF)", P, D, tol, reason=f"{m_t} templates, {len(alpha)} cuts")
    if "multiplier_sum" in res.extra and res.extra.get("form", model.form) == "dual":
        yield ctx.check("stationarity in θ: Σⱼ μⱼ = 1 (the quad[j] multipliers, before normalising)",
                        float(res.extra["multiplier_sum"]), 1.0, 1e-5)
    yield ctx.check("template weights: μ ≥ 0 (most negative)", float(max(-mu.min(initial=0.0), 0.0)), 0.0, 1e-9,
                    "≤")
    gamma = float(norms.sum())
    yield ctx.check("recovery (7): ‖wⱼ‖ = μⱼ Σₗ‖wₗ‖ for every template (max deviation)",
                    float(np.abs(norms - mu * gamma).max(initial=0.0)), 0.0, 1e-5 * scale_of(norms, gamma))
    yield ctx.check("complementary slackness of (6): μⱼ (θ − ½αᵀQʲα) = 0 (max)",
                    float(np.abs(mu * (theta - quad)).max(initial=0.0)), 0.0, 1e-5 * scale_of(theta))
    yield from slackness_checks(ctx, arrays, w, xi, alpha)
    yield sparsity_check(ctx, arrays, w, xi, alpha)
    # the other form, built by the program on the same working set and solved on its own
    from .base import get_program
    prog = get_program(res.program, **res.params)
    other = prog.dual_model(model)
    pc = "SOCP" if other.form == "primal" else "QCQP"
    name, why = ctx.solver_for(pc)
    stmt = f"strong duality: this master's value = optimum of the other form ({'(5)' if pc == 'SOCP' else '(6)'}) " \
           f"solved on its own"
    if name is None or not len(arrays.dl):
        yield ctx.skip(stmt, why or "the working set is empty")
    else:
        try:
            from ..solvers import get_solver
            get_solver(name).solve(other)
            v = float(pyo.value(objective_of(other)))
            yield ctx.check(stmt, P, v, 1e-5 * scale_of(P), reason=f"solved by {name}")
            if other.form == "primal":
                w5 = np.array([x.value or 0.0 for x in other.w_list])
                yield ctx.check("recovery (7): w of (6) via μⱼ Σ α ΔFⱼ = w of (5) solved directly (‖·‖∞)",
                                float(np.abs(w5 - w).max(initial=0.0)), 0.0, 1e-4 * scale_of(w),
                                reason=f"(5) by {name}; the cone's tip makes interior points less exact")
        except (SolverError, SolverUnavailable) as e:
            yield Check(ctx.name, stmt, P, None, None, None, "fail", str(e))
    if res.params.get("form", "dual") == "dual" and res.params.get("native", True):
        stmt = "(6) through Pyomo's writer (native=False) = (6) from Ipopt's arrays, same working set"
        try:
            _, sol = rebuild_master(res, "ipopt", native=False)
            yield ctx.check(stmt, sol.objective, P, 1e-5 * scale_of(P))
        except (SolverError, SolverUnavailable) as e:
            yield Check(ctx.name, stmt, P, None, None, None, "fail", str(e))
    yield from cross_solver_checks(ctx)
