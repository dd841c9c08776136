"""The Program interface and the registry of programs.

A program is one mathematical program of a paper, written as an explicit Pyomo model that the cutting-plane engine
grows cut by cut. A new program is added by writing one module in ``mmprog/programs/`` whose class derives from
:class:`Program` and is decorated with ``@register("name")``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..exceptions import ParameterError

_REGISTRY: dict[str, type] = {}


def register(name):
    """Class decorator registering a program by name (like Pyomo's ``@SolverFactory.register``)."""
    def deco(cls):
        cls.name = name
        _REGISTRY[name] = cls
        return cls
    return deco


def unregister(name):
    """Remove the program ``name`` from the registry (a program registered for a while, e.g. by a test)."""
    _REGISTRY.pop(name, None)


def registered():
    """Names of the registered programs: mmprog's in the order of :data:`mmprog.programs.MODULES` (every program
    module is imported here, so the list does not depend on which a process imported first), then any registered
    from elsewhere, in registration order."""
    from . import MODULES, load
    load()
    rank = {m: i for i, m in enumerate(MODULES)}

    def key(item):
        mod = item[1][1].__module__
        own = mod.split(".")[2] if mod.startswith(__package__ + ".") else None
        return (rank.get(own, len(MODULES)), item[0])
    return [name for _, (name, _) in sorted(enumerate(_REGISTRY.items()), key=key)]


def get_program(name, **params):
    """Instantiate the program ``name`` with its hyper-parameters (its module is imported on first use)."""
    if name not in _REGISTRY:
        from . import MODULES, load
        if isinstance(name, str) and name in MODULES:
            load(name)
        if name not in _REGISTRY:
            raise ParameterError(f"program must be one of {', '.join(registered())}; got {name!r}")
    return _REGISTRY[name](**params)


@dataclass
class Dims:
    """Sizes a program is built for.

    Attributes
    ----------
    n : int
        Number of training examples.
    dim : int
        Length of w (joint feature dimension).
    n_slacks : int
        n for the n-slack form, 1 for the 1-slack form.
    groups : ndarray of int, shape (dim,), or a callable returning it
        Template group of every joint feature (read through :meth:`group_ids`). The engine passes the feature
        map's as a callable, so that a program that never reads it (m3n) never builds a vector as long as w.
    group_names : list of str
    """

    n: int
    dim: int
    n_slacks: int
    groups: object = None
    group_names: list | None = None

    def group_ids(self):
        """The template group of every joint feature, shape (dim,), or None."""
        return self.groups() if callable(self.groups) else self.groups


@dataclass
class MasterState:
    """What a master keeps beside its Pyomo statement between solves: typed and in one place
    (``model.master_state``, made by every program's ``build``), never private attributes on the Pyomo model.

    The engine's back ends (:mod:`mmprog.engine.masters`) keep their objects and read-outs here; the Pyomo route
    keeps its persistent solver copy; a program whose statement is written on demand keeps how far it got.

    Attributes
    ----------
    handle : PersistentHandle or None
        The persistent solver's copy of an LP master (Pyomo route).
    unsynced : list
        Cut rows added since the last solve through ``handle``.
    gram_daqp, gram_qp, native_lp : object or None
        The native back ends' objects: DAQP's Gram dual (:class:`mmprog.engine.daqp_native.GramDualDAQP`), HiGHS's
        Gram dual (:class:`mmprog.engine.highs_native.GramDualQP`), HiGHS's LP from CSR rows
        (:class:`mmprog.engine.highs_native.NativeLP`).
    grown_lp : object or None
        HiGHS's LP grown by columns and rows (:class:`mmprog.engine.highs_native.GrownLP`, form ``"lp_columns"``).
    gram_stale : bool
        The Gram matrix of every cut changed (a new metric): native objects recompute it whole.
    alpha_loaded : ndarray or None
        The α DAQP last loaded into the Pyomo variables (None: another route wrote them, load every α).
    alpha_native : ndarray or None
        The cut multipliers the native LP route read at its last solve.
    native_mu : ndarray or None
        The template multipliers μ of MTL's dual read by its native Ipopt route.
    native_label : str or None
        What a native back end writes into ``model.solved_with`` when it solves the master (set by the engine's
        route): :meth:`native_solution` compares the two, so a program reads its native multipliers without naming
        a back end.
    quad_done : int
        Cuts whose quadratic terms the Pyomo statement holds so far (terms written on demand, ``materialise``).
    quad_live : ndarray of bool or None
        p-block: templates whose quadratic term is written.
    labelings : list
        PoMEN: the labelings of the cuts, per call of ``add_cuts``.
    labelings_complete : bool
        PoMEN: whether every cut came with its labeling.
    w_spare : ndarray or None
        The engine's previous w once it is done with it: a program may write the next w into it instead of
        allocating a second w-sized vector (424 MB on full CoNLL-2002 NER).
    """

    handle: object = None
    unsynced: list = field(default_factory=list)
    gram_daqp: object = None
    gram_qp: object = None
    native_lp: object = None
    grown_lp: object = None
    gram_stale: bool = False
    alpha_loaded: np.ndarray | None = None
    alpha_native: np.ndarray | None = None
    native_mu: np.ndarray | None = None
    native_label: str | None = None
    quad_done: int = 0
    quad_live: np.ndarray | None = None
    labelings: list = field(default_factory=list)
    labelings_complete: bool = True
    w_spare: np.ndarray | None = None

    def native_solution(self, model):
        """Whether the solution loaded in ``model`` is the one the native back end wrote at its last solve (the
        model's ``solved_with`` is still its :attr:`native_label`), so its own multipliers may be read."""
        return self.native_label is not None and getattr(model, "solved_with", None) == self.native_label


@dataclass
class Solution:
    """What a master solve gives back.

    Attributes
    ----------
    w : ndarray, shape (dim,)
    xi : ndarray, shape (n_slacks,)
    alpha : ndarray, shape (n_cuts,)
        Multipliers of the cuts, sign-normalised to α ≥ 0.
    objective : float
        Master objective on the n-slack scale (a lower bound on the full program's optimum).
    dual_objective : float or None
        Dual value recomputed from α (strong duality makes it equal ``objective``).
    extra : dict
        Program-specific read-outs (template weights, β, ...).
    """

    w: np.ndarray
    xi: np.ndarray
    alpha: np.ndarray
    objective: float
    dual_objective: float | None = None
    extra: dict = field(default_factory=dict)


class Program:
    """Base class: one explicit Pyomo program grown by cuts.

    Subclasses set ``problem_class`` (a :class:`mmprog.solvers.ProblemClass`), ``paper`` and ``equations`` and
    implement :meth:`build`, :meth:`add_cuts`, :meth:`read_solution` and :meth:`regulariser`.
    """

    name = "?"
    problem_class = None
    paper = ""
    equations = ""
    #: hyper-parameters accepted by ``__init__`` with a description of their range
    params_doc: dict = {}
    #: whether the engine's checkpoint (working set and iterate, :mod:`mmprog.engine.checkpoint`) is the whole state of a
    #: fit; False for programs whose outer loop (EM, variational updates) keeps more
    checkpointable = True

    def reads_labeling_cuts(self, model):
        """Whether this program's master takes 1-slack cuts held as labelings (:class:`mmprog.cuts.LabelingCut`)
        without making their rows every round: only those whose products go through the working set's Gram rows
        (per template too), ΔFᵀα and ΔF·w — m3n's Gram dual, mtl's QCQP dual, the p-block dual. Others get explicit
        rows."""
        return False

    def __init__(self, C=1.0, **params):
        if not (isinstance(C, (int, float, np.floating)) and np.isfinite(C) and C > 0):
            raise ParameterError(f"C must be a finite float > 0; got {C!r}")
        self.C = float(C)
        if params:
            raise ParameterError(f"unknown parameter(s) for program {self.name!r}: {', '.join(params)}; "
                                 f"accepted: C{''.join(', ' + p for p in self.params_doc)}")

    def params(self):
        """The hyper-parameters, JSON-able."""
        return {"C": self.C}

    # --- the mathematics ----------------------------------------------------------------------
    def regulariser(self, w):
        """The regulariser value Ω(w) of the program's objective Ω(w) + C Σᵢ ξᵢ."""
        raise NotImplementedError

    def objective_at(self, w, hinge):
        """Full (not working-set) objective at w: Ω(w) + C Σᵢ Hᵢ(w), with Hᵢ(w) = max_y Δℓᵢ(y) − wᵀΔfᵢ(y) ≥ 0.

        An upper bound on the optimum, since ξᵢ = Hᵢ(w) is feasible for every constraint."""
        return float(self.regulariser(w) + self.C * np.sum(hinge))

    # --- the model ----------------------------------------------------------------------------
    def build(self, dims):
        raise NotImplementedError

    def add_cuts(self, model, cuts):
        raise NotImplementedError

    def drop_cuts(self, model, positions):
        """Deactivate the cuts at working-set ``positions`` (they stay in the model, inactive)."""
        raise NotImplementedError

    def read_solution(self, model):
        raise NotImplementedError

    # --- how the master may be handed to a back end (the engine chooses: mmprog.engine.masters) ------------
    def master_form(self, model):
        """The form of ``model`` a native back end may take (``"gram_dual"``, ``"lp_rows"``, ``"qp_rows"``,
        ``"qcqp_dual"``; see :mod:`mmprog.engine.masters`), or None: the Pyomo model through :meth:`solve`."""
        return None

    def native_ok(self, model, solver):
        """Whether the native back end for ``solver`` may solve ``model`` (False: the Pyomo model, e.g. with
        ``model.native = False`` set by a test comparing both routes)."""
        return getattr(model, "native", True)

    def gram_rows(self, model, rows):
        """Form ``"gram_dual"``: rows ``rows`` of the Gram matrix G of the dual's quadratic term against every cut
        so far, shape (len(rows), r)."""
        raise NotImplementedError(f"program {self.name!r} has no Gram dual master")

    def gram_dual_options(self):
        """Form ``"gram_dual"``: options of the native HiGHS route (``rescale``, ``time_limit``; see
        :class:`mmprog.engine.highs_native.GramDualQP`)."""
        return {}

    def native_lp(self, model):
        """Form ``"lp_rows"``: the LP's columns and row map as keyword arguments of
        :class:`mmprog.engine.highs_native.NativeLP` (``cost``, ``lower``, ``upper``, ``variables``,
        ``row_block``)."""
        raise NotImplementedError(f"program {self.name!r} has no native LP form")

    def native_qp(self, model):
        """Form ``"qp_rows"``: as :meth:`native_lp`, plus ``hessian``, the diagonal of the objective's Hessian."""
        raise NotImplementedError(f"program {self.name!r} has no native QP form")

    def qcqp_dual(self, model):
        """Form ``"qcqp_dual"``: the dual QCQP on the active cuts as arrays (``Q``, ``q``, ``slack_idx``,
        ``n_budgets``, ``budget``, ``beta0``, ``active``, ``options``) for a back end that solves it from them."""
        raise NotImplementedError(f"program {self.name!r} has no native QCQP form")

    def load_qcqp_dual(self, model, active, alpha, theta, mu):
        """Form ``"qcqp_dual"``: load a back end's solution of :meth:`qcqp_dual` into the master."""
        raise NotImplementedError(f"program {self.name!r} has no native QCQP form")

    def solve(self, model, solver, options=None, time_limit=None):
        """Solve the Pyomo model as it stands through ``solver`` (a :class:`mmprog.solvers.Solver`); raises
        :class:`mmprog.exceptions.SolverError` unless the solver reports an optimum. The engine calls it when no
        native back end takes (form, solver) (:func:`mmprog.engine.masters.solve_master`).

        LPs go through the solver's persistent interface where it has one: the rows added since the last solve
        (``model.master_state.unsynced``) are appended to the solver's copy and re-solved warm; the model is never rebuilt."""
        from ..solvers import ProblemClass
        self.materialise(model)
        model.solved_with = solver.name
        state = model.master_state
        pending, state.unsynced = state.unsynced, []
        if solver.persistent and self.problem_class is ProblemClass.LP:
            handle = state.handle
            if handle is None:
                handle = state.handle = solver.persistent_handle(model)
                if handle is not None:
                    return handle.solve(time_limit=time_limit)
            else:
                handle.add_constraints(pending)
                return handle.solve(time_limit=time_limit)
        return solver.solve(model, options=options, time_limit=time_limit)

    @staticmethod
    def deactivate_rows(model, constraints):
        """Deactivate cut constraints, taking them out of a persistent solver's copy first."""
        handle = model.master_state.handle
        cons = [c for c in constraints if c is not None]
        if handle is not None and cons:
            handle.remove_constraints(cons)
        for c in cons:
            c.deactivate()

    def materialise(self, model):
        """Bring any lazily kept part of the Pyomo model up to date (before export, inspection, Pyomo solves)."""

    @staticmethod
    def add_alpha_columns(model, cuts):
        """The part every Gram/QCQP dual master shares: one α_r ≥ 0 per new cut (``model.alpha``, appended to the
        working set's components), the budget Σ_{r ∈ Sᵢ} α_r ≤ C·scale of the slack it belongs to
        (``model.budget[i]``, rewritten with the new term) and Δℓ_r α_r added to ``model.linear``.

        Returns
        -------
        list
            The new α variables, in the order of ``cuts``.
        """
        from pyomo.core.expr.numeric_expr import LinearExpression
        alphas = []
        for r in range(len(cuts)):
            a = model.alpha.add()
            alphas.append(a)
            model.ws.components.append(a)
            terms = model.alpha_of_slack.setdefault(int(cuts.example[r]), [])
            terms.append(a)
            model.budget[int(cuts.example[r])] = LinearExpression(
                constant=0.0, linear_coefs=[1.0] * len(terms), linear_vars=list(terms)) <= model.C * model.slack_scale
        model.linear.expr = model.linear.expr + LinearExpression(
            constant=0.0, linear_coefs=[float(v) for v in cuts.dl], linear_vars=alphas)
        return alphas

    @staticmethod
    def add_cut_rows(model, cuts, w_list=None, body=None):
        """The primal masters' cut rows wᵀΔF_r + ξ_{e(r)} ≥ Δℓ_r into ``model.cuts``, appended to the working set's
        components. Returns the new constraints.

        Parameters
        ----------
        w_list : list, optional
            The Pyomo variables of w, indexed by joint feature (the row is then Σₖ ΔF_rk wₖ + ξ).
        body : callable(ks, cs, xi) -> expression, optional
            The row's left-hand side from the cut's feature indices ``ks``, values ``cs`` and its slack variable,
            for masters whose variables are not w itself (adaptive M³N's γ with w = β ∘ γ).
        """
        from pyomo.core.expr.numeric_expr import LinearExpression
        if body is None:
            def body(ks, cs, xi):
                return LinearExpression(constant=0.0, linear_coefs=list(cs) + [1.0],
                                        linear_vars=[w_list[k] for k in ks] + [xi])
        added = []
        dF = cuts.dF
        for r in range(len(cuts)):
            lo, hi = dF.indptr[r], dF.indptr[r + 1]
            row = body(dF.indices[lo:hi], dF.data[lo:hi], model.xi[int(cuts.example[r])])
            added.append(model.cuts.add(row >= float(cuts.dl[r])))
        model.ws.components.extend(added)
        return added

    @staticmethod
    def split_row_block(model):
        """The row map of the masters with w = μ − ν whose rows a native back end takes as CSR blocks (``l1m3n``'s
        form ``"lp_rows"``, ``enm3n``'s ``"qp_rows"``): (ΔF CSR (m, dim), example (m,)) → the rows
        (μ − ν)ᵀΔF_r + ξ_{e(r)} over the columns μ (dim), ν (dim), ξ (n_slacks)."""
        import scipy.sparse as sp
        n_slacks = model.dims.n_slacks

        def rows(dF, example):
            S = sp.csr_matrix((np.ones(len(example)), (np.arange(len(example)), example)),
                              shape=(len(example), n_slacks))
            return sp.hstack([dF, -dF, S], format="csr")
        return rows

    @staticmethod
    def write_split_rows(model):
        """Write the Pyomo rows (μ − ν)ᵀΔF_r + ξ_{e(r)} ≥ Δℓ_r of the cuts recorded since the last call into
        ``model.cuts`` (``model.mu_list``, ``model.nu_list``, ``model.xi``), appended to the working set's components
        (a cut dropped meanwhile gets its row deactivated). Returns the new rows."""
        from pyomo.core.expr.numeric_expr import LinearExpression
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
                constant=0.0, linear_coefs=cs + [-c for c in cs] + [1.0],
                linear_vars=[model.mu_list[k] for k in ks] + [model.nu_list[k] for k in ks]
                + [model.xi[int(ex[r])]])
            con = model.cuts.add(body >= float(dl[r]))
            if not ws.active[new[r]]:
                con.deactivate()
            added.append(con)
        ws.components.extend(added)
        model.master_state.unsynced += [c for c in added if c.active]
        return added

    def drop_written_rows(self, model, positions):
        """``drop_cuts`` of a master whose rows are written on demand: the rows written so far are deactivated,
        the others are written inactive (:meth:`write_split_rows`)."""
        comps = model.ws.components
        self.deactivate_rows(model, [comps[p] for p in positions if p < len(comps)])
        for pos in positions:
            model.ws.active[pos] = False

    @staticmethod
    def split_solution(model):
        """(w = μ − ν, ξ, α) of a solved master with w = μ − ν: α from the native back end that solved it (its own
        multipliers, clipped at 0), else the solver's duals of the Pyomo rows."""
        from ..solvers import values_of
        w = values_of(model.mu_list) - values_of(model.nu_list)
        xi = values_of([model.xi[i] for i in range(model.dims.n_slacks)])
        native = model.master_state.alpha_native
        if native is not None and model.master_state.native_solution(model):
            alpha = np.maximum(native, 0.0)
        else:
            alpha = model.ws.duals(model)
        return w, xi, alpha

    def drop_alpha_or_rows(self, model, positions):
        """``drop_cuts`` of a master that is a dual (α_r fixed at 0) or a primal (row deactivated) by
        ``model.master`` / ``model.form``."""
        form = getattr(model, "master", None) or getattr(model, "form", None)
        if form == "primal":
            self.deactivate_rows(model, [model.ws.components[p] for p in positions])
        else:
            for pos in positions:
                model.ws.components[pos].fix(0.0)
        for pos in positions:
            model.ws.active[pos] = False

    def dual_model(self, model):
        """The explicit dual of the master on its working set, as its own Pyomo model."""
        raise NotImplementedError(f"program {self.name!r} has no explicit dual model yet")
