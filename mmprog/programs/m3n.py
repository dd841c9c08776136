"""P0 — the max-margin Markov network (M³N) as an explicit quadratic program.

Zhu, Xing & Zhang, "Primal sparse max-margin Markov networks" (KDD 2009), problem P0 (eq. 1); Taskar, Guestrin &
Koller (2003):

    min_{w, ξ}  ½‖w‖² + C Σᵢ ξᵢ
    s.t.        wᵀΔfᵢ(y) ≥ Δℓᵢ(y) − ξᵢ,  ξᵢ ≥ 0,   ∀i, ∀y ∈ Sᵢ           (the working sets Sᵢ grow cut by cut)

Two masters hold the same working set:

* ``master="primal"``: variables ``w`` (dim), ``xi`` (n or 1), constraint list ``cuts``;
* ``master="dual"``: the QP over the cut multipliers (Theorem 3 of the ICML 2008 Laplace M³N paper; what
  SVM^struct solves), variables ``alpha`` ≥ 0 (one per cut), ``budget[i]``: Σ_{r∈Sᵢ} α_r ≤ C,
  objective max Σ_r α_r Δℓ_r − ½ Σ_{r,s} α_r α_s G_{rs} with the Gram matrix G_{rs} = ⟨ΔF_r, ΔF_s⟩ grown by one row
  and column per cut; w = Σ_r α_r ΔF_r.  Its size does not depend on dim, so it is the master of choice when w is
  long (10⁵–10⁶ template features) and the cuts number in the hundreds.

In the 1-slack form there is one ξ and the objective weighs it by C·n (resp. the single budget is C·n), so the
objective stays on the n-slack scale ½‖w‖² + C Σᵢ ξᵢ and both forms reach the same optimum.
"""
from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from ..exceptions import ParameterError
from ..solvers import ProblemClass
from ._daqp_native import GramDualDAQP
from ._highs_native import GramDualQP
from .base import Dims, Program, Solution, register
from .working_set import WorkingSet, values_of

def _gram_rows(model, rows):
    """Rows ⟨ΔF_p, ΔF_q⟩ of P0's Gram matrix, p in ``rows``, against every cut so far (:class:`GramDualQP`)."""
    return model.ws.gram_rows(rows)


#: above this many joint features ``master="auto"`` takes the Gram dual (its size depends on the cuts only)
AUTO_DUAL_DIM = 100


@register("m3n")
class M3N(Program):
    """P0, the ℓ2-regularised M³N (KDD 2009 eq. P0); see the module docstring."""

    problem_class = ProblemClass.QP
    paper = "Taskar et al. 2003; Zhu, Xing & Zhang, KDD 2009"
    equations = "P0"
    params_doc = {"master": '"primal", "dual" or "auto"'}

    def __init__(self, C=1.0, master="auto"):
        super().__init__(C)
        if master not in ("primal", "dual", "auto"):
            raise ParameterError(f'master must be "primal", "dual" or "auto"; got {master!r}')
        self.master = master

    def params(self):
        return {"C": self.C, "master": self.master}

    def regulariser(self, w):
        return 0.5 * float(np.dot(w, w))

    def resolved_master(self, dims):
        """``auto`` takes the Gram dual unless w is tiny: its size depends on the cuts only, and HiGHS's active-set
        QP solver stalled for minutes on primal masters with a few hundred free w (synthetic chains, 204 features)
        that the dual solves in a second."""
        return self._master_for(dims.dim)

    def _master_for(self, dim):
        if self.master != "auto":
            return self.master
        return "dual" if dim > AUTO_DUAL_DIM else "primal"

    def preferred_solver(self, dim):
        """``daqp`` for the Gram dual master when it is usable here: on its working set of the previous support it
        solved the 498 OCR fold-0 masters in 0.4 s against HiGHS's 12.3 s (:mod:`mmprog.programs._daqp_native`);
        else None (the registry's default for QPs)."""
        from ..solvers import get_solver
        if self._master_for(dim) != "dual":
            return None
        return "daqp" if get_solver("daqp").availability(ProblemClass.QP) else None

    # ------------------------------------------------------------------------------------------
    def build(self, dims: Dims):
        m = pyo.ConcreteModel(name=f"m3n_{self.resolved_master(dims)}")
        m.dims = dims
        m.ws = WorkingSet(dims.dim)
        m.master = self.resolved_master(dims)
        # objective weight of ξ: the 1-slack ξ stands for the sum of n per-example slacks
        m.slack_scale = float(dims.n) / dims.n_slacks
        m.C = pyo.Param(initialize=self.C, mutable=True)
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        if m.master == "primal":
            m.w = pyo.Var(range(dims.dim), initialize=0.0)
            m.xi = pyo.Var(range(dims.n_slacks), domain=pyo.NonNegativeReals, initialize=0.0)
            m.cuts = pyo.ConstraintList()
            m.w_list = [m.w[k] for k in range(dims.dim)]
            m.objective = pyo.Objective(
                expr=0.5 * pyo.quicksum([v * v for v in m.w_list])
                + m.C * m.slack_scale * pyo.quicksum(m.xi[i] for i in range(dims.n_slacks)),
                sense=pyo.minimize)
        else:
            m.alpha = pyo.VarList(domain=pyo.NonNegativeReals)
            m.budget = pyo.Constraint(pyo.Any)
            m.linear = pyo.Expression(expr=0.0)
            m.quadratic = pyo.Expression(expr=0.0)
            m.objective = pyo.Objective(expr=m.linear - m.quadratic, sense=pyo.maximize)
            m.alpha_of_slack = {}
        return m

    def add_cuts(self, model, cuts):
        positions = model.ws.add(cuts)
        if model.master == "primal":
            return self._add_primal(model, cuts)
        return self._add_dual(model, cuts, positions)

    def _add_primal(self, m, cuts):
        added = self.add_cut_rows(m, cuts, m.w_list)
        m._unsynced = getattr(m, "_unsynced", []) + added
        return added

    def _add_dual(self, m, cuts, positions):
        # ½αᵀGα is written into the Pyomo objective on demand (materialise): its r² terms cost Pyomo seconds per
        # round once r reaches the hundreds, and the HiGHS route solves from G directly
        return self.add_alpha_columns(m, cuts)

    def materialise(self, model):
        """Write the pending Gram terms into ``model.quadratic`` so the Pyomo model states the whole program
        (called before exports, inspection and solves through Pyomo's interfaces)."""
        m = model
        if getattr(m, "master", None) != "dual":
            return
        done = getattr(m, "_quad_done", 0)
        ws = m.ws
        if done >= ws.size:
            return
        new = list(range(done, ws.size))
        G_new = ws.gram_rows(new)
        all_alpha = ws.components
        quad_terms = []
        for r, pos in enumerate(new):
            a = all_alpha[pos]
            row = G_new[r]
            # the new cut's row of ½αᵀGα: G_ss/2 α_s² + Σ_{q<s} G_qs α_q α_s (earlier cuts only, so each pair once)
            quad_terms.append(0.5 * float(row[pos]) * a * a)
            nz = np.nonzero(row[:pos])[0]
            quad_terms.extend(float(row[q]) * all_alpha[q] * a for q in nz)
        m.quadratic.expr = m.quadratic.expr + pyo.quicksum(quad_terms)
        m._quad_done = ws.size

    def solve(self, model, solver, **kw):
        """Solve the master. The Gram dual with DAQP is solved from G, Δℓ and the budgets on a shrinking working
        set (:class:`~mmprog.programs._daqp_native.GramDualDAQP`, exact by a KKT check of the whole master). The
        Gram dual with HiGHS is handed over from the same arrays the Pyomo model was
        built from (G, Δℓ, the budgets), through one persistent highspy object that gets one column and one
        Hessian row per cut (:class:`~mmprog.programs._highs_native.GramDualQP`): Pyomo's interfaces re-walk the
        whole ½αᵀGα expression (r² terms) on every solve. The Pyomo model stays the statement of the program (export,
        show, any other solver) and the α values are loaded back into it; a test checks both routes agree."""
        if model.master == "dual" and getattr(model, "native", True):
            if solver.name == "highs":
                model.solved_with = "highs"
                return GramDualQP.of(model, _gram_rows).solve(model, **kw)
            if solver.name == "daqp":
                model.solved_with = "daqp"
                return GramDualDAQP.of(model, _gram_rows).solve(model, **kw)
        return super().solve(model, solver, **{k: v for k, v in kw.items() if k in ("options", "time_limit")})

    def drop_cuts(self, model, positions):
        self.drop_alpha_or_rows(model, positions)

    # ------------------------------------------------------------------------------------------
    def read_solution(self, model):
        ws = model.ws
        n_slacks = model.dims.n_slacks
        if model.master == "primal":
            w = values_of(model.w_list)
            alpha = ws.duals(model)
            margins = ws.dF() @ w if ws.size else np.zeros(0)
            xi = values_of([model.xi[i] for i in range(n_slacks)])
        else:
            alpha = values_of(ws.components) if ws.size else np.zeros(0)
            alpha = np.maximum(alpha, 0.0)       # interior-point iterates may sit a hair below the bound
            w = ws.tdot(alpha) if ws.size else np.zeros(model.dims.dim)
            gram = getattr(getattr(model, "_gram_daqp", None), "G", None)
            if gram is not None and gram.shape[0] == ws.size:
                # ΔF w = ΔF ΔFᵀ α = G α: (r, r) instead of reading every ΔF row again (r × dim)
                margins = gram @ alpha
            else:
                margins = ws.dot(w) if ws.size else np.zeros(0)
            # ξᵢ of the working set at this w: the largest violation among example i's active cuts (≥ 0)
            xi = np.zeros(n_slacks)
            if ws.size:
                act = ws.active_mask()
                np.maximum.at(xi, ws.example_array()[act], (ws.dl_array() - margins)[act])
        scale = model.slack_scale
        primal = 0.5 * float(w @ w) + self.C * scale * float(xi.sum())
        dual = float(alpha @ ws.dl_array()) - 0.5 * float(w @ w) if ws.size else 0.0
        return Solution(w=np.asarray(w, dtype=np.float64), xi=xi, alpha=alpha, objective=primal,
                        dual_objective=dual, extra={"master": model.master})

