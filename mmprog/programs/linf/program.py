"""The master (10) as an explicit Pyomo model (:class:`LInf`, registered as ``"linf"``)."""
from __future__ import annotations

import numpy as np
import pyomo.core as pyo
import scipy.sparse as sp
from pyomo.core.expr.numeric_expr import LinearExpression

from ...cuts import Cuts
from ...exceptions import ParameterError, SolverError, check_param
from ...solvers import ProblemClass
from ..base import Dims, MasterState, Program, Solution, register
from ...solvers import values_of
from ...cuts import WorkingSet


# ------------------------------------------------------------------------------------------------------------
# The master (10) as an explicit Pyomo model
# ------------------------------------------------------------------------------------------------------------

@register("linf")
class LInf(Program):
    """(10): min ‖w‖∞ s.t. zᵢᵀw ≥ b, as the LP min t s.t. zᵢᵀw ≥ b, −t ≤ w_j ≤ t (module docstring).

    Parameters
    ----------
    b : float > 0
        The margin. The optimum scales linearly with it (Proposition 2: b / minᵢ‖zᵢ‖₁).
    C : None
        Not a parameter of this program (hard margins, no slack); accepted only to say so.

    Notes
    -----
    Rows are *samples*, not loss-augmented labelings: the program is grown by the engine's constraint generation
    over samples (:mod:`mmprog.engine.sample_generation`; :func:`mmprog.linf.solve_linf` or
    :class:`mmprog.linf.LInfMaxMargin`), not by :func:`mmprog.fit`; the methods under "grown over samples" below
    are what that loop asks of it. A batch of rows is given to :meth:`record`
    (arrays only) or :meth:`add_cuts` (arrays and Pyomo components) as :class:`mmprog.cuts.Cuts` with ``dF`` = the
    rows zᵢ over column keys, ``example`` = the sample ids and ``dl`` = b, so the model's working set
    (``model.ws``) is readable by the generic tools; :meth:`materialise` writes the Pyomo components of whatever
    was only recorded.
    """

    checkpointable = False   # constraint generation over sample sets, not the structured engine

    problem_class = ProblemClass.LP
    paper = "Szedmak, Ni, Saunders & Rousu, Max-margin structured output learning in L1 norm space"
    equations = "(10); (3) and (6); (16)-(18)"
    params_doc = {"b": "a float > 0 (the margin of z_i'w >= b)"}

    def __init__(self, b=1.0, C=None):
        if C is not None:
            raise ParameterError("program 'linf' has no slack weight C (the hard-margin LP (10)); its parameter is "
                                 "b, the margin")
        check_param("b", b, isinstance(b, (int, float, np.floating)) and np.isfinite(b) and b > 0, "a float > 0")
        self.b = float(b)

    def params(self):
        return {"b": self.b}

    def regulariser(self, w):
        return float(np.max(np.abs(w), initial=0.0))

    def objective_at(self, w, hinge=None):
        return self.regulariser(w)

    def fit(self, oracle, engine, **engine_kw):
        raise ParameterError("program 'linf' learns from non-negative sparse (Phi, Psi) sets, not from a "
                             "structured data set: use mmprog.linf.LInfMaxMargin().fit(Phi, Psi) or "
                             "mmprog.linf.solve_linf")

    # --- grown over samples (what mmprog.engine.sample_generation asks) -------------------------------------
    def master_form(self, model):
        """``"lp_columns"``: an LP grown by columns as well as rows (:mod:`mmprog.engine.masters`)."""
        return "lp_columns"

    def sample_master(self, samples, aggregate=True):
        """The empty master for ``samples``; ``aggregate`` gives the joint indices private to one sample one
        shared column per sample (exact; package docstring), for :class:`TensorSamples` only."""
        aggregate = bool(aggregate) and getattr(samples, "kind", "") == "tensor"
        key_dim = samples.dim + (samples.n if aggregate else 0)
        model = self.build(Dims(n=samples.n, dim=key_dim, n_slacks=0), joint_dim=samples.dim)
        model.aggregate = aggregate
        return model

    def sample_cuts(self, samples, model, ids):
        """The rows zᵢᵀw ≥ b of samples ``ids`` as :class:`~mmprog.cuts.Cuts` over the master's column keys
        (sparse Kronecker rows, the private indices aggregated when the master does)."""
        Z = samples.rows(ids, aggregate=True) if model.aggregate else samples.rows(ids)
        return Cuts(ids, Z, np.full(len(ids), self.b))

    def first_samples(self, samples, n):
        """The ``n`` samples of smallest ‖zᵢ‖₁: the ranking of :meth:`ranking` at w = 0, where Proposition 2
        locates the binding constraint."""
        return np.argsort(samples.norms(), kind="stable")[:min(n, samples.n)]

    def violations(self, samples, model):
        """b − zᵢᵀw for all m samples at the master's point (w zero off its columns), shape (m,)."""
        return self.b - sample_margins(samples, model, self.columns(model), model.col_values, model.aggregate)

    def violated(self, viol, tol):
        """Samples violated beyond the relative tolerance: b − zᵢᵀw > tol · b."""
        return viol > tol * self.b

    def ranking(self, samples, viol, ids):
        """``ids`` ranked by violation per unit of ‖zᵢ‖₁, (b − zᵢᵀw)/‖zᵢ‖₁, largest first: the least increase of
        ‖w‖∞ that sample i alone would force (zᵢᵀΔw ≤ ‖zᵢ‖₁‖Δw‖∞)."""
        score = viol[ids] / samples.norms()[ids]
        return ids[np.argsort(-score, kind="stable")]

    def solution(self, samples, model):
        """w over joint indices at the master's point: (sorted joint indices J, w on J)."""
        if model.aggregate:
            return joint_solution(samples, model)
        J, w = self.columns(model), np.asarray(model.col_values)
        order = np.argsort(J)
        return J[order], w[order]

    def lp_size(self, model):
        """``n_vars`` (columns + t), ``n_cons`` (2 bound rows a column + the margins), ``n_private`` (aggregated
        columns)."""
        n_cols = len(model.keys)
        return {"n_vars": n_cols + 1, "n_cons": 2 * n_cols + model.ws.size,
                "n_private": int(np.count_nonzero(self.columns(model) >= model.joint_dim))}

    def grown_lp(self, model):
        """(10)'s first column as arrays: t, cost 1, t ≥ 0 (column 0; column p + 1 is the master's p-th)."""
        return {"cost": [1.0], "lower": [0.0], "upper": [np.inf]}

    def grown_rows(self, model, n_new, Zr):
        """A round of (10) as arrays: the ``n_new`` new columns (free) with their rows w_c − t ≤ 0 (group
        ``"upper"``) and w_c + t ≥ 0 (``"lower"``), and the margin rows ``Zr`` (CSR over column positions) ≥ b
        (``"margin"``); every block over the columns (t, w…) so far.

        Returns
        -------
        ((lower, upper), list of (group, lower, upper, CSR))
        """
        n_cols = len(model.keys)
        rows = []
        if n_new:
            cols = 1 + (n_cols - n_new) + np.arange(n_new)
            idx = np.stack([np.zeros(n_new, dtype=np.int64), cols], axis=1).ravel()
            ptr = np.arange(0, 2 * n_new + 1, 2)
            up = sp.csr_matrix((np.tile([-1.0, 1.0], n_new), idx, ptr), shape=(n_new, 1 + n_cols))
            lo = sp.csr_matrix((np.tile([1.0, 1.0], n_new), idx, ptr), shape=up.shape)
            rows += [("upper", np.full(n_new, -np.inf), np.zeros(n_new), up),
                     ("lower", np.zeros(n_new), np.full(n_new, np.inf), lo)]
        if Zr.shape[0]:
            Zr = sp.csr_matrix(Zr)
            A = sp.csr_matrix((Zr.data, Zr.indices + 1, Zr.indptr), shape=(Zr.shape[0], 1 + n_cols))
            rows.append(("margin", np.full(Zr.shape[0], self.b), np.full(Zr.shape[0], np.inf), A))
        return (np.full(n_new, -np.inf), np.full(n_new, np.inf)), rows

    def grown_variables(self, model):
        """The Pyomo variables in the order of :meth:`grown_lp`'s columns: t, then the columns."""
        self.materialise(model)
        return [model.t] + model.w_list

    def load_point(self, model, x):
        """Keep the solution x = (t, w on the columns) in the master's arrays; returns the objective t."""
        model.col_values, model.t_value = x[1:], float(x[0])
        return model.t_value

    def load_duals(self, model, groups):
        """Keep the row multipliers of a native solve by group (``margin``, ``upper``, ``lower``); None: the Pyomo
        route, whose duals the model's suffix holds."""
        if groups is not None:
            model.native_duals = {k: groups.get(k, np.zeros(0)) for k in ("margin", "upper", "lower")}

    def margin_multipliers(self, model):
        """The multipliers α ≥ 0 of the margin rows in working-set order (raises SolverError without duals)."""
        if model.native_duals is not None:
            return model.native_duals["margin"]
        return model.ws.duals(model)

    # --- the model ----------------------------------------------------------------------------------------
    def build(self, dims: Dims, joint_dim=None):
        """The empty master.

        Parameters
        ----------
        dims : Dims
            ``n`` samples; ``dim`` the column key space: the joint dimension, plus n when rows carry aggregated
            private columns (keys ``joint_dim + i``).
        joint_dim : int, optional
            n_outputs · n_inputs (default ``dims.dim``): keys below it are joint indices, keys from it up are the
            private columns of samples.
        """
        m = pyo.ConcreteModel(name="linf")
        m.dims = dims
        m.joint_dim = int(dims.dim if joint_dim is None else joint_dim)
        m.ws = WorkingSet(dims.dim)
        m.master_state = MasterState()
        m.b = float(self.b)
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        # t >= 0 is implied by -t <= w_j <= t once a column exists; stated so the empty master is bounded
        m.t = pyo.Var(domain=pyo.NonNegativeReals, initialize=0.0)
        m.J = pyo.Set(initialize=[], ordered=True, doc="joint indices j = o * n_inputs + k of the columns")
        m.w = pyo.Var(m.J, dense=False, initialize=0.0)
        m.w_upper = pyo.Constraint(m.J, doc="w_j - t <= 0")
        m.w_lower = pyo.Constraint(m.J, doc="w_j + t >= 0")
        m.P = pyo.Set(initialize=[], ordered=True, doc="samples whose private joint indices share one column")
        m.w_private = pyo.Var(m.P, dense=False, initialize=0.0)
        m.private_upper = pyo.Constraint(m.P, doc="w_private_i - t <= 0")
        m.private_lower = pyo.Constraint(m.P, doc="w_private_i + t >= 0")
        m.I = pyo.Set(initialize=[], ordered=True, doc="samples in the working set")
        m.margin = pyo.Constraint(m.I, doc="z_i'w >= b")
        m.objective = pyo.Objective(expr=m.t, sense=pyo.minimize)
        # the master's columns and rows as arrays; the Pyomo components above follow them (materialise)
        m.keys = []                       # column keys in column order: joint index j, or joint_dim + i
        m.col_keys = np.zeros(0, dtype=np.int64)    # the keys sorted ...
        m.col_pos = np.zeros(0, dtype=np.int64)     # ... and their column positions
        m.in_master = np.zeros(dims.n, dtype=bool)   # samples with a row
        m.w_list = []                     # the Pyomo variable of every materialised column, in column order
        m.col_values = None               # the last solution on the columns (ndarray) and t
        m.t_value = 0.0
        m.native_duals = None             # multipliers of the native HiGHS route (margin, upper, lower rows)
        return m

    def record(self, model, cuts):
        """Enter the rows zᵢᵀw ≥ b of ``cuts`` (``dF`` rows zᵢ over column keys, ``example`` the sample ids) and
        their new columns into the master's arrays, without writing Pyomo components (:meth:`materialise` does).
        Samples already in the master are skipped.

        Returns
        -------
        (int, scipy.sparse.csr_matrix)
            How many columns are new (they are the last ones), and the new rows over column positions
            (rows, n_columns).
        """
        Z = sp.csr_matrix(cuts.dF)
        ids = np.asarray(cuts.example, dtype=np.int64)
        # a sample enters once (also when listed twice in one batch)
        _, first = np.unique(ids, return_index=True)
        keep = np.zeros(len(ids), dtype=bool)
        keep[first] = True
        keep &= ~model.in_master[ids]
        if not keep.all():
            Z, ids = Z[keep], ids[keep]
        if len(ids) == 0:
            return 0, sp.csr_matrix((0, len(model.keys)))
        cols = np.unique(Z.indices.astype(np.int64))
        fresh = cols[~np.isin(cols, model.col_keys, assume_unique=True)]
        base = len(model.keys)
        if fresh.size:
            model.keys.extend(fresh.tolist())
            keys = np.concatenate([model.col_keys, fresh])
            pos = np.concatenate([model.col_pos, base + np.arange(fresh.size)])
            order = np.argsort(keys, kind="stable")
            model.col_keys, model.col_pos = keys[order], pos[order]
        model.in_master[ids] = True
        model.ws.add(Cuts(ids, Z, np.full(len(ids), model.b)))
        return int(fresh.size), restrict_to_columns(model, Z)

    def _add_column(self, model, key):
        t = model.t
        if key < model.joint_dim:
            model.J.add(key)
            v = model.w[key]
            up, lo = model.w_upper, model.w_lower
        else:
            key = key - model.joint_dim
            model.P.add(key)
            v = model.w_private[key]
            up, lo = model.private_upper, model.private_lower
        up[key] = LinearExpression(constant=0.0, linear_coefs=[1.0, -1.0], linear_vars=[v, t]) <= 0.0
        lo[key] = LinearExpression(constant=0.0, linear_coefs=[1.0, 1.0], linear_vars=[v, t]) >= 0.0
        return v, up[key], lo[key]

    def materialise(self, model):
        """Write the Pyomo variables, bound rows and margin rows of the columns and rows recorded since the last
        call, and load the last solution (when there is one) into every variable.

        Returns
        -------
        (list, list)
            The new variables and the new constraints (bound rows first), for a persistent solver handle.
        """
        new_vars, new_cons = [], []
        for key in model.keys[len(model.w_list):]:
            v, up, lo = self._add_column(model, key)
            model.w_list.append(v)
            new_vars.append(v)
            new_cons.append(up)
            new_cons.append(lo)
        ws = model.ws
        done = len(ws.components)
        if ws.size > done:
            rows = np.arange(done, ws.size)
            Zr = restrict_to_columns(model, ws.dF()[rows])
            ids = ws.example_array()[rows]
            w_list, b = model.w_list, model.b
            for r, i in enumerate(ids.tolist()):
                lo, hi = Zr.indptr[r], Zr.indptr[r + 1]
                body = LinearExpression(constant=0.0, linear_coefs=Zr.data[lo:hi].tolist(),
                                        linear_vars=[w_list[p] for p in Zr.indices[lo:hi].tolist()])
                model.I.add(i)
                model.margin[i] = body >= b
                con = model.margin[i]
                if not ws.active[done + r]:
                    con.deactivate()
                ws.components.append(con)
                new_cons.append(con)
        if model.col_values is not None and len(model.col_values) == len(model.w_list):
            for v, x in zip(model.w_list, model.col_values.tolist()):
                v.set_value(x, skip_validation=True)
            model.t.set_value(model.t_value, skip_validation=True)
        return new_vars, new_cons

    def add_cuts(self, model, cuts):
        """:meth:`record` the rows of ``cuts`` and :meth:`materialise` them at once (the Pyomo route)."""
        self.record(model, cuts)
        return self.materialise(model)

    def drop_cuts(self, model, positions):
        self.materialise(model)
        for pos in positions:
            model.ws.components[pos].deactivate()
            model.ws.active[pos] = False

    def columns(self, model):
        """The keys of the master's columns in column order, int64: joint index j for w[j], joint_dim + i for
        w_private[i]."""
        return np.asarray(model.keys, dtype=np.int64)

    def bound_rows(self, model):
        """The rows (w_j ≤ t, −t ≤ w_j) of every column, in column order: two lists of constraints."""
        self.materialise(model)
        jd = model.joint_dim
        up = [model.w_upper[k] if k < jd else model.private_upper[k - jd] for k in model.keys]
        lo = [model.w_lower[k] if k < jd else model.private_lower[k - jd] for k in model.keys]
        return up, lo

    def read_solution(self, model):
        """The master's point: ``w`` on the columns (``extra["keys"]`` their keys; 0 elsewhere), the margins'
        multipliers ``alpha`` (≥ 0) when the last solve gave them, ``objective`` t and ``dual_objective`` b·Σα."""
        if model.col_values is not None and len(model.col_values) == len(model.keys):
            w, t = np.asarray(model.col_values, dtype=np.float64), float(model.t_value)
        else:
            w, t = values_of(model.w_list), float(model.t.value or 0.0)
        try:
            alpha = self.margin_multipliers(model)
        except SolverError:
            alpha = None
        dual = None if alpha is None else float(model.b * alpha.sum())
        return Solution(w=w, xi=np.zeros(0), alpha=alpha if alpha is not None else np.zeros(0), objective=t,
                        dual_objective=dual, extra={"keys": self.columns(model), "t": t})

    def dual_model(self, model):
        """The LP dual of the master on its working set, as its own Pyomo model (not in the paper)::

            max_{α, s}  b Σᵢ αᵢ
            s.t.        Σᵢ αᵢ z_ij − s_j ≤ 0,  Σᵢ αᵢ z_ij + s_j ≥ 0   (stat_upper[j], stat_lower[j]),  j ∈ J
                        Σ_j s_j ≤ 1                                  (budget)
                        α ≥ 0

        i.e. max b·1ᵀα s.t. ‖Σᵢ αᵢ zᵢ‖₁ ≤ 1: with multipliers β⁺, β⁻ ≥ 0 of w_j ≤ t and −t ≤ w_j, stationarity in w
        gives Zᵀα = β⁺ − β⁻ and in t gives Σ(β⁺ + β⁻) = 1. Columns outside J have (Zᵀα)_j = 0. The index set J is
        the master's column keys, aggregated private columns included (for them (Zᵀα)_j = sᵢαᵢ, which equals the
        sum of |(Zᵀα)_j| over the joint indices they stand for, since z, α ≥ 0: the same dual value).
        """
        ws = model.ws
        ids = ws.example_array()
        J = self.columns(model)
        Zc = restrict_to_columns(model, ws.dF()).tocsc()
        D = pyo.ConcreteModel(name="linf_dual")
        D.I = pyo.Set(initialize=ids.tolist(), ordered=True)
        D.J = pyo.Set(initialize=J.tolist(), ordered=True)
        D.alpha = pyo.Var(D.I, domain=pyo.NonNegativeReals)
        D.s = pyo.Var(D.J, domain=pyo.NonNegativeReals)
        D.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        alpha_list = [D.alpha[int(i)] for i in ids]
        D.stat_upper = pyo.Constraint(D.J)
        D.stat_lower = pyo.Constraint(D.J)
        for p, j in enumerate(J.tolist()):
            lo, hi = Zc.indptr[p], Zc.indptr[p + 1]
            coefs = Zc.data[lo:hi].tolist()
            vars_ = [alpha_list[r] for r in Zc.indices[lo:hi].tolist()]
            D.stat_upper[j] = LinearExpression(constant=0.0, linear_coefs=coefs + [-1.0],
                                               linear_vars=vars_ + [D.s[j]]) <= 0.0
            D.stat_lower[j] = LinearExpression(constant=0.0, linear_coefs=coefs + [1.0],
                                               linear_vars=vars_ + [D.s[j]]) >= 0.0
        D.budget = pyo.Constraint(expr=pyo.quicksum(D.s[j] for j in D.J) <= 1.0)
        D.objective = pyo.Objective(expr=model.b * pyo.quicksum(alpha_list), sense=pyo.maximize)
        return D


def restrict_to_columns(model, Z):
    """Rows Z (CSR over column keys) re-indexed by the master's column positions: CSR (rows, n_columns), column p
    is the p-th column (``model.keys[p]``). Every row of the master has its support among the columns."""
    Z = sp.csr_matrix(Z)
    where = model.col_pos[np.searchsorted(model.col_keys, Z.indices.astype(np.int64))]
    return sp.csr_matrix((Z.data, where, Z.indptr), shape=(Z.shape[0], len(model.keys)))


def joint_solution(samples, model):
    """w of the master over joint indices: its joint columns as they are and each aggregated column w_private[i]
    copied to every joint index private to sample i.

    Returns
    -------
    (ndarray of int64, ndarray)
        Sorted joint indices and the values there.
    """
    keys = np.asarray(model.keys, dtype=np.int64)
    vals = LInf(b=model.b).read_solution(model).w
    jd = model.joint_dim
    joint = keys < jd
    J, w = [keys[joint]], [vals[joint]]
    if (~joint).any():
        ids = keys[~joint] - jd
        Z = samples.rows(ids)
        cols = Z.indices.astype(np.int64)
        private = samples.private_mask(cols)
        row = np.repeat(np.arange(len(ids)), np.diff(Z.indptr))
        J.append(cols[private])
        w.append(vals[~joint][row[private]])
    J, w = np.concatenate(J), np.concatenate(w)
    order = np.argsort(J)
    return J[order], w[order]


def sample_margins(samples, model, keys, vals, aggregate):
    """zᵢᵀw for all samples at the master's point (its columns ``keys`` with values ``vals``): one sparse product
    over the union of supports when it fits the samples' cache, else from w over joint indices."""
    if hasattr(samples, "margins_of_columns") and int(samples.support_sizes().sum()) <= samples.cache_limit:
        return samples.margins_of_columns(keys, vals, aggregate=aggregate)
    if aggregate:
        return samples.margins(*joint_solution(samples, model))
    return samples.margins(keys, vals)
