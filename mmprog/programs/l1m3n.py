"""P1 — the ℓ1-norm M³N as a linear program (cutting-plane Algorithm 1).

Zhu, Xing & Zhang, "Primal sparse max-margin Markov networks" (KDD 2009), problem P1 and Algorithm 1:

    min_{μ, ν, ξ}  ½ Σₖ (μₖ + νₖ) + C Σᵢ ξᵢ
    s.t.           (μ − ν)ᵀΔfᵢ(y) ≥ Δℓᵢ(y) − ξᵢ,   μ, ν, ξ ≥ 0,   ∀i, ∀y ∈ Sᵢ

with w = μ − ν (so ½Σ(μ+ν) = ½‖w‖₁ at the optimum). The factor ½ follows the paper's statement of P1 (the
regulariser ½‖w‖₁ keeps C on the same scale as P0). Its LP dual (issue 8) is
max Σ α_r Δℓ_r s.t. −½ ≤ Σ_r α_r ΔF_rk ≤ ½ ∀k, Σ_{r∈Sᵢ} α_r ≤ C, α ≥ 0.
"""
from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp
from pyomo.core.expr.numeric_expr import LinearExpression

from ..solvers import ProblemClass
from .base import Dims, Program, Solution, register
from .working_set import WorkingSet, values_of


@register("l1m3n")
class L1M3N(Program):
    """P1, the ℓ1-regularised M³N LP (KDD 2009, Algorithm 1); see the module docstring."""

    problem_class = ProblemClass.LP
    paper = "Zhu, Xing & Zhang, KDD 2009"
    equations = "P1, Algorithm 1"
    params_doc = {"algorithm": '"cutting_plane" (default, the LP) or "subgradient" (P1′, Algorithm 2)',
                  "lam": "ℓ1-ball radius λ > 0 of P1′ (subgradient only)",
                  "eta0, schedule, variant, batch_size, seed, output, projection":
                  "sub-gradient settings (see mmprog.subgradient)"}

    def __init__(self, C=1.0, algorithm="cutting_plane", lam=None, **subgradient):
        super().__init__(C)
        from ..exceptions import ParameterError
        if algorithm not in ("cutting_plane", "subgradient"):
            raise ParameterError(f'algorithm must be "cutting_plane" or "subgradient"; got {algorithm!r}')
        self.algorithm = algorithm
        if algorithm == "cutting_plane":
            if lam is not None or subgradient:
                extra = ", ".join((["lam"] if lam is not None else []) + list(subgradient))
                raise ParameterError(f'{extra} apply only with algorithm="subgradient" (P1′); drop them or set '
                                     f'algorithm="subgradient"')
        else:
            from ..subgradient import SETTINGS, check_settings
            unknown = [k for k in subgradient if k not in SETTINGS]
            if unknown:
                raise ParameterError(f"unknown sub-gradient setting(s) {', '.join(unknown)}; accepted: "
                                     f"lam, {', '.join(SETTINGS)}")
            if lam is None or isinstance(lam, bool) or not isinstance(lam, (int, float, np.number)) \
                    or not np.isfinite(lam) or lam <= 0:
                raise ParameterError(f'lam (the ℓ1-ball radius of P1′) must be a finite float > 0 with '
                                     f'algorithm="subgradient"; got {lam!r}')
            self.lam = float(lam)
            self.subgradient = check_settings(**subgradient)

    def params(self):
        if self.algorithm == "cutting_plane":
            return {"C": self.C}
        return {"C": self.C, "algorithm": self.algorithm, "lam": self.lam, **self.subgradient}

    @property
    def checkpointable(self):
        # the sub-gradient route keeps no working set
        return self.algorithm != "subgradient"

    def fit(self, oracle, **engine_kw):
        """Algorithm 1 (the cutting-plane LP, default) or, with ``algorithm="subgradient"``, the projected
        sub-gradient Algorithm 2 for P1′ (:func:`mmprog.subgradient.fit_l1m3n`)."""
        if self.algorithm == "subgradient":
            from ..subgradient import fit_l1m3n
            return fit_l1m3n(self, oracle, **engine_kw)
        from ..cutting_plane import run
        return run(self, oracle, **engine_kw)

    def regulariser(self, w):
        return 0.5 * float(np.abs(w).sum())

    def build(self, dims: Dims):
        m = pyo.ConcreteModel(name="l1m3n")
        m.dims = dims
        m.ws = WorkingSet(dims.dim)
        m.slack_scale = float(dims.n) / dims.n_slacks
        m.C = pyo.Param(initialize=self.C, mutable=True)
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        m.mu = pyo.Var(range(dims.dim), domain=pyo.NonNegativeReals, initialize=0.0)
        m.nu = pyo.Var(range(dims.dim), domain=pyo.NonNegativeReals, initialize=0.0)
        m.xi = pyo.Var(range(dims.n_slacks), domain=pyo.NonNegativeReals, initialize=0.0)
        m.cuts = pyo.ConstraintList()
        m.mu_list = [m.mu[k] for k in range(dims.dim)]
        m.nu_list = [m.nu[k] for k in range(dims.dim)]
        m.objective = pyo.Objective(
            expr=LinearExpression(constant=0.0,
                                  linear_coefs=[0.5] * (2 * dims.dim) + [self.C * m.slack_scale] * dims.n_slacks,
                                  linear_vars=m.mu_list + m.nu_list + [m.xi[i] for i in range(dims.n_slacks)]),
            sense=pyo.minimize)
        return m

    def add_cuts(self, model, cuts):
        """Record the cuts; their Pyomo rows are written by :meth:`materialise` (see programs/_highs_native.py)."""
        return model.ws.add(cuts)

    def _row_block(self, model):
        n_slacks = model.dims.n_slacks

        def rows(dF, example):
            # (μ − ν)ᵀΔF_r + ξ_{e(r)}: columns μ (dim), ν (dim), ξ (n_slacks)
            S = sp.csr_matrix((np.ones(len(example)), (np.arange(len(example)), example)),
                              shape=(len(example), n_slacks))
            return sp.hstack([dF, -dF, S], format="csr")
        return rows

    def materialise(self, model):
        """Write the Pyomo rows of the cuts added since the last call: (μ − ν)ᵀΔF_r + ξ_{e(r)} ≥ Δℓ_r."""
        ws = model.ws
        done = len(ws.components)
        if done >= ws.size:
            return []
        new = np.arange(done, ws.size)
        dF, ex, dl = ws.dF()[new], ws.example_array()[new], ws.dl_array()[new]
        added = []
        for r in range(len(new)):
            lo, hi = dF.indptr[r], dF.indptr[r + 1]
            ks, cs = dF.indices[lo:hi], list(dF.data[lo:hi])
            body = LinearExpression(
                constant=0.0,
                linear_coefs=cs + [-c for c in cs] + [1.0],
                linear_vars=[model.mu_list[k] for k in ks] + [model.nu_list[k] for k in ks]
                + [model.xi[int(ex[r])]])
            con = model.cuts.add(body >= float(dl[r]))
            if not ws.active[new[r]]:
                con.deactivate()
            added.append(con)
        ws.components.extend(added)
        model._unsynced = getattr(model, "_unsynced", []) + [c for c in added if c.active]
        return added

    def solve(self, model, solver, **kw):
        """With HiGHS, one persistent highspy object takes each round's rows as one CSR block (Pyomo's row
        building cost 30 s per OCR round); with any other solver the Pyomo model is completed and solved."""
        if solver.name == "highs" and getattr(model, "native", True):
            from ._highs_native import NativeLP
            lp = getattr(model, "_native", None)
            if lp is None:
                d, s_ = model.dims.dim, model.dims.n_slacks
                lp = model._native = NativeLP(
                    cost=np.r_[np.full(2 * d, 0.5), np.full(s_, self.C * model.slack_scale)],
                    lower=np.zeros(2 * d + s_), upper=np.full(2 * d + s_, np.inf),
                    variables=model.mu_list + model.nu_list + [model.xi[i] for i in range(s_)],
                    row_block=self._row_block(model))
            status, model._alpha_native = lp.solve(model.ws, time_limit=kw.get("time_limit"))
            model.solved_with = "highs-native"
            return status
        model._alpha_native = None
        return super().solve(model, solver, **{k: v for k, v in kw.items() if k in ("options", "time_limit")})

    def drop_cuts(self, model, positions):
        comps = model.ws.components
        self.deactivate_rows(model, [comps[p] for p in positions if p < len(comps)])
        for pos in positions:
            model.ws.active[pos] = False

    def read_solution(self, model):
        ws = model.ws
        w = values_of(model.mu_list) - values_of(model.nu_list)
        xi = values_of([model.xi[i] for i in range(model.dims.n_slacks)])
        native = getattr(model, "_alpha_native", None)
        if native is not None and getattr(model, "solved_with", None) == "highs-native":
            alpha = np.maximum(native, 0.0)
        else:
            alpha = ws.duals(model)
        primal = self.regulariser(w) + self.C * model.slack_scale * float(xi.sum())
        dual = float(alpha @ ws.dl_array()) if ws.size else 0.0
        return Solution(w=w, xi=xi, alpha=alpha, objective=primal, dual_objective=dual)
