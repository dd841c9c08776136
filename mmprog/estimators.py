"""scikit-learn–compatible estimators over lists of per-sequence feature arrays and label arrays.

Hyper-parameters are stored untouched in ``__init__`` and validated in ``fit`` (messages name the parameter, its
allowed range and the value got); learned state has a trailing underscore.
"""
from __future__ import annotations

import contextlib
import copy
import logging
import os
import sys
import tempfile
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning

from .exceptions import ParameterError, check_param


class M3N(BaseEstimator):
    """Max-margin Markov network for linear chains, P0 (``norm="l2"``) or the ℓ1 LP P1 (``norm="l1"``).

    Parameters
    ----------
    norm : {"l2", "l1"}
    C : float
        Slack weight, n-slack scale (objective Ω(w) + C Σᵢ ξᵢ).
    solver : str or None
        Registered solver name; None picks the default for the program's class.
    slack : {"n", "one"}
    eps : float or None
        The ε rule, an option of the cutting plane (default None: the certified gap alone stops the fit).
    max_iter : int or None
        Rounds of the cutting plane or passes of bcfw (default: :func:`mmprog.fit`'s for the route).
    n_labels : int or None
        Number of labels; None takes 1 + the largest label seen in ``fit``.
    gap_tol : float or None
        The certified relative gap the fit stops at (default 1e-2).
    route : {"auto", "cutting-plane", "bcfw"}
        :func:`mmprog.fit`'s route (default "auto": bcfw for P0 n-slack where it covers the fit).

    Attributes
    ----------
    result_ : mmprog.result.Result
    coef_ : ndarray, shape (dim,)
    n_labels_ : int
    n_features_in_ : int
    """

    def __init__(self, norm="l2", C=1.0, solver=None, slack="n", eps=None, max_iter=None, n_labels=None,
                 gap_tol=None, route="auto"):
        self.gap_tol = gap_tol
        self.route = route
        self.norm = norm
        self.C = C
        self.solver = solver
        self.slack = slack
        self.eps = eps
        self.max_iter = max_iter
        self.n_labels = n_labels

    def _validate(self):
        check_param("norm", self.norm, self.norm in ("l2", "l1"), '"l2" or "l1"')
        check_param("C", self.C, isinstance(self.C, (int, float)) and np.isfinite(self.C) and self.C > 0,
                    "a finite float > 0")
        check_param("slack", self.slack, self.slack in ("n", "one"), '"n" or "one"')
        check_param("eps", self.eps, self.eps is None or (isinstance(self.eps, (int, float)) and self.eps > 0),
                    "None or a float > 0")
        check_param("max_iter", self.max_iter, self.max_iter is None
                    or (isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 1), "None or an int >= 1")
        check_param("gap_tol", self.gap_tol, self.gap_tol is None
                    or (isinstance(self.gap_tol, (int, float)) and self.gap_tol > 0), "None or a float > 0")
        check_param("route", self.route, self.route in ("auto", "cutting-plane", "bcfw"),
                    '"auto", "cutting-plane" or "bcfw"')

    def _dataset(self, X, y=None):
        from .datasets.base import SequenceDataset
        X = list(X)
        if y is None:
            y = [np.zeros(np.shape(x)[0], dtype=np.int64) for x in X]
        return SequenceDataset(X, [np.asarray(v) for v in y], self.n_labels_)

    def fit(self, X, y):
        """X: list of (Tᵢ, d) arrays (dense or CSR); y: list of (Tᵢ,) int label arrays."""
        import mmprog
        self._validate()
        y = [np.asarray(v) for v in y]
        seen = int(max((v.max() for v in y if len(v)), default=0)) + 1
        self.n_labels_ = int(self.n_labels) if self.n_labels is not None else seen
        ds = self._dataset(X, y)
        self.n_features_in_ = ds.n_features
        self.result_ = mmprog.fit(ds, program="m3n" if self.norm == "l2" else "l1m3n", C=float(self.C),
                                  solver=self.solver, slack=self.slack,
                                  eps=None if self.eps is None else float(self.eps),
                                  max_iter=None if self.max_iter is None else int(self.max_iter),
                                  gap_tol=self.gap_tol, route=self.route)
        self.coef_ = self.result_.w
        return self

    def _check_fitted(self):
        if not hasattr(self, "result_"):
            from sklearn.exceptions import NotFittedError
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit(X, y) first")

    def predict(self, X):
        """List of (Tᵢ,) label arrays."""
        self._check_fitted()
        return self.result_.predict(self._dataset(X))

    def score(self, X, y):
        """Token (per-position) accuracy, 1 − Hamming error rate."""
        pred = self.predict(X)
        y = [np.asarray(v) for v in y]
        total = sum(len(v) for v in y)
        right = sum(int(np.sum(p == t)) for p, t in zip(pred, y))
        return right / max(total, 1)


#: The default route of :class:`SequenceTagger`: ``route="auto"`` of :func:`mmprog.fit`, stopped at a certified
#: relative gap (upper − lower) / max(1, |upper|) ≤ 1e-2. For P0 (``m3n``) that is block-coordinate Frank–Wolfe on its
#: n-slack dual (:mod:`mmprog.engine.bcfw`), which covers the estimator's first-order chains (the route says so itself,
#: :meth:`mmprog.engine.routes.Engine.covers`); ``max_iterations`` then counts passes over the sentences. It is the
#: fastest certified route measured (``python -m mmprog.bench crf --routes``, record docs/records/crf-routes.json; bench
#: ``certify``, record docs/records/certify.json). Programs the route does not cover, and P0 when a cutting-plane
#: setting is given (``slack``, ``eps``, ``stabilise``, ``inout_weight``, ``drop_after`` or ``route="cutting-plane"``;
#: ``solver`` is not one: on bcfw it solves the master on the route's working set), take :data:`CUTTING_PLANE_ROUTE`
#: for the settings not given.
DEFAULT_ROUTE = {"route": "auto", "gap_tol": 1e-2}

#: The cutting plane's settings for P0 and P1 in :class:`SequenceTagger`, chosen by measurement on the first 2,000
#: sentences of esp.train with the sklearn-crfsuite tutorial's features at C = 5 (``python -m mmprog.bench crf
#: --routes``, record docs/records/crf-routes.json): the 1-slack master with in-out stabilisation (centre weight 0.9),
#: cuts inactive for 50 rounds dropped, stopped by the certificate. In that record the n-slack master did not finish
#: its second round's DAQP solve within the 200 s limit, plain 1-slack Kelley rounds stopped there at gap 0.09, in-out
#: reached the certificate, dropping inactive cuts cut its solver time to a third, centre weight 0.9 took 12 % fewer
#: rounds than 0.8, and a line search cost more oracle time than it saved.
CUTTING_PLANE_ROUTE = {"slack": "one", "stabilise": "in-out", "inout_weight": 0.9, "drop_after": 50}

#: Round budget when neither ``max_iter`` nor ``max_iterations`` is given: the certificate ends the fit.
DEFAULT_MAX_ITER = 10_000

#: sklearn-crfsuite's ``algorithm`` values. The batch ones (L-BFGS, SGD with ℓ2) map to the default route; the online
#: ones have no max-margin counterpart and get a warning.
CRFSUITE_ALGORITHMS = {"lbfgs": None, "l2sgd": None, "ap": "averaged perceptron", "pa": "passive-aggressive",
                       "arow": "AROW"}

#: sklearn-crfsuite's arguments that tune CRFsuite's own optimisers; none has a meaning for a max-margin fit, which
#: stops at a certified gap (``gap_tol``).
CRFSUITE_OPTIMISER_ARGS = ("num_memories", "epsilon", "period", "delta", "linesearch", "max_linesearch",
                           "calibration_eta", "calibration_rate", "calibration_samples", "calibration_candidates",
                           "calibration_max_trials", "pa_type", "c", "error_sensitive", "averaging", "variance",
                           "gamma", "trainer_cls")


def C_from_crfsuite(c):
    """mmprog's slack weight C for CRFsuite's regularisation coefficient ``c`` (``c2``, or ``c1`` alone).

    CRFsuite minimises Σᵢ NLLᵢ(w) + c1‖w‖₁ + c2‖w‖² (summed, not averaged, over the sentences). Divided by 2·c2 it is
    ½‖w‖² + (1/(2·c2)) Σᵢ NLLᵢ(w); P0 is ½‖w‖² + C Σᵢ ξᵢ with ξᵢ the structured hinge in place of NLLᵢ, so
    C = 1/(2·c2). The same division of c1‖w‖₁ + Σᵢ NLLᵢ by 2·c1 gives P1's ½‖w‖₁ + C Σᵢ ξᵢ with C = 1/(2·c1); with
    both, the division by 2·c2 gives the elastic net ½‖w‖² + λ‖w‖₁ + C Σᵢ ξᵢ with λ = c1/(2·c2)
    (:func:`lam_from_crfsuite`).
    """
    return 1.0 / (2.0 * float(c))


def lam_from_crfsuite(c1, c2):
    """The elastic-net M³N's λ (``enm3n``: ½‖w‖² + λ‖w‖₁ + C Σᵢ ξᵢ) for CRFsuite's c1‖w‖₁ + c2‖w‖²: λ = c1/(2·c2),
    beside C = 1/(2·c2) (:func:`C_from_crfsuite`)."""
    return float(c1) / (2.0 * float(c2))


def _is_number(v, low=0.0, strict=False):
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and np.isfinite(v) \
        and (v > low if strict else v >= low)


class SequenceTagger(BaseEstimator):
    """A max-margin tagger with sklearn-crfsuite's interface: ``X`` is a list of sentences, each a list of token
    feature dicts (or lists of attribute strings), ``y`` a list of lists of label strings.

    A CRFsuite user switches with one import — ``from mmprog import crfsuite as sklearn_crfsuite`` (whose ``CRF`` is
    this class) or ``from mmprog.estimators import SequenceTagger as CRF`` — and keeps the feature functions and the
    constructor call: every argument of ``sklearn_crfsuite.CRF`` is accepted and mapped to its max-margin meaning:

    ============================  =================================================================================
    sklearn-crfsuite argument     here
    ============================  =================================================================================
    ``c2``                        P0 (``m3n``, ½‖w‖² + C Σᵢ ξᵢ) with C = 1/(2·c2) (:func:`C_from_crfsuite`);
                                  default c2 = 1 (CRFsuite's), C = 0.5
    ``c1``                        alone (c2 None or 0): P1 (``l1m3n``, ½‖w‖₁ + C Σᵢ ξᵢ) with C = 1/(2·c1);
                                  with c2 > 0: the elastic-net M³N (``enm3n``, ½‖w‖² + λ‖w‖₁ + C Σᵢ ξᵢ) with
                                  C = 1/(2·c2), λ = c1/(2·c2) (:func:`lam_from_crfsuite`)
    ``max_iterations``            the budget ``max_iter``: passes of the default route for P0 (``bcfw``), rounds
                                  of the cutting plane (each one oracle pass over the data, as one L-BFGS
                                  iteration is one gradient pass); a fit it stops before the certificate warns
                                  (``ConvergenceWarning``)
    ``all_possible_transitions``  True/None: the chain's K×K transition weights (mmprog always has all of them);
                                  False warns (no seen-only transition set for first-order chains)
    ``all_possible_states``       True/None: the d×K state weights (mmprog always has all of them; the
                                  attributes are the training attributes; CRFsuite's None has the seen pairs
                                  only); False warns likewise
    ``min_freq``                  ``min_count`` = ⌊min_freq⌋ + 1 (CRFsuite keeps attributes seen more than
                                  ``min_freq`` times)
    ``algorithm``                 ``'lbfgs'``/``'l2sgd'``/None: the default route (``DEFAULT_ROUTE``), there is
                                  no likelihood to descend; ``'ap'``/``'pa'``/``'arow'``: the same, with a warning
    ``verbose``                   one log line per bcfw certificate or cutting-plane round on stderr
    ``model_filename``            mmprog's model (JSON + .npz, never pickle): ``fit`` writes it there; an
                                  unfitted estimator loads it on first use (a CRFsuite file is refused)
    ``keep_tempfiles``            mmprog writes no temporary files: True warns
    optimiser settings            given (not None) they warn and are ignored (the fit stops at its certificate)
    ============================  =================================================================================

    The optimiser settings are ``num_memories``, ``epsilon``, ``period``, ``delta``, ``linesearch``,
    ``max_linesearch``, ``calibration_eta``, ``calibration_rate``, ``calibration_samples``,
    ``calibration_candidates``, ``calibration_max_trials``, ``pa_type``, ``c``, ``error_sensitive``, ``averaging``,
    ``variance``, ``gamma`` and ``trainer_cls`` (:data:`CRFSUITE_OPTIMISER_ARGS`).

    Hyper-parameters are stored untouched; they are resolved and validated in :meth:`fit` (the resolved values are
    ``route_``), so ``get_params``/``set_params``/``clone`` and scikit-learn's searches work on both vocabularies.
    mmprog's own arguments (keyword-only) take precedence where they are given; giving both ``C`` and ``c1``/``c2``
    (or ``max_iter`` and ``max_iterations``, or ``min_count`` and ``min_freq``) is an error.

    Parameters
    ----------
    algorithm, min_freq, all_possible_states, all_possible_transitions, c1, c2, max_iterations, num_memories,
    epsilon, period, delta, linesearch, max_linesearch, calibration_eta, calibration_rate, calibration_samples,
    calibration_candidates, calibration_max_trials, pa_type, c, error_sensitive, averaging, variance, gamma,
    verbose, model_filename, keep_tempfiles, trainer_cls
        sklearn-crfsuite's, mapped as in the table above.
    program : str, optional
        A registered program: ``"m3n"`` (P0), ``"l1m3n"`` (P1), ``"mtl"``, ``"pblock"``, ...; default from c1/c2.
    C : float, optional
        Slack weight, n-slack scale (Ω(w) + C Σᵢ ξᵢ); default from c1/c2.
    slack : {"n", "one"}, optional
        A cutting-plane setting (see :data:`DEFAULT_ROUTE`); default: :data:`CUTTING_PLANE_ROUTE`'s for m3n/l1m3n on
        the cutting plane, else the program's own.
    eps : float, optional
        The ε rule, an option of the cutting plane (default None: the certified gap alone stops the fit).
    gap_tol : float, optional
        Stop once the certified relative gap is ≤ gap_tol (default 1e-2).
    stabilise : {"auto", None, "in-out"}
        In-out stabilisation of the cutting plane; "auto": the default route's.
    inout_weight : float in [0, 1), optional
        The centre's weight λ of the in-out separation point (default: the route's 0.9, else the engine's 0.8).
    max_iter : int, optional
        Round budget (default ``max_iterations``, else 10,000).
    drop_after : int, optional
        Drop cuts inactive for this many rounds (default: the route's).
    min_count : int, optional
        Keep attributes seen in at least this many training tokens (default from ``min_freq``, else 1).
    solver : str, optional
    time_limit : float, optional
        Wall-clock seconds for the fit.
    program_params : dict, optional
        The program's own hyper-parameters (e.g. ``{"master": "dual"}``, ``{"p": 4/3}``).
    route : {"auto", "bcfw", "cutting-plane"}
        :func:`mmprog.fit`'s route (default "auto": see :data:`DEFAULT_ROUTE`).

    Attributes
    ----------
    result_ : mmprog.result.Result
        The fit, with its certificate: ``termination``, ``upper_bound``, ``primal_objective`` (lower bound), ``gap``.
    route_ : dict
        The resolved program, C and engine settings the fit ran with.
    extractor_ : mmprog.features.dicts.TokenDictExtractor
    classes_ : list of str
        Label names, sorted (``result_`` predicts their indices).
    transition_features_ : dict
        ``{(label_from, label_to): weight}``, all K² pairs.
    state_features_ : dict
        ``{(attribute, label): weight}`` for every non-zero state weight; attributes named as python-crfsuite names
        them (``"word.lower():casa"``, ``"bias"``).
    attributes_ : list of str
    num_attributes_ : int
    size_ : int
        Bytes of the model as mmprog saves it (JSON + .npz).
    """

    def __init__(self, algorithm=None, min_freq=None, all_possible_states=None, all_possible_transitions=None,
                 c1=None, c2=None, max_iterations=None, num_memories=None, epsilon=None, period=None, delta=None,
                 linesearch=None, max_linesearch=None, calibration_eta=None, calibration_rate=None,
                 calibration_samples=None, calibration_candidates=None, calibration_max_trials=None, pa_type=None,
                 c=None, error_sensitive=None, averaging=None, variance=None, gamma=None, verbose=False,
                 model_filename=None, keep_tempfiles=False, trainer_cls=None, *, program=None, C=None, slack=None,
                 eps=None, gap_tol=None, stabilise="auto", inout_weight=None, max_iter=None, drop_after=None,
                 min_count=None,
                 solver=None, time_limit=None, program_params=None, route="auto"):
        self.algorithm = algorithm
        self.min_freq = min_freq
        self.all_possible_states = all_possible_states
        self.all_possible_transitions = all_possible_transitions
        self.c1 = c1
        self.c2 = c2
        self.max_iterations = max_iterations
        self.num_memories = num_memories
        self.epsilon = epsilon
        self.period = period
        self.delta = delta
        self.linesearch = linesearch
        self.max_linesearch = max_linesearch
        self.calibration_eta = calibration_eta
        self.calibration_rate = calibration_rate
        self.calibration_samples = calibration_samples
        self.calibration_candidates = calibration_candidates
        self.calibration_max_trials = calibration_max_trials
        self.pa_type = pa_type
        self.c = c
        self.error_sensitive = error_sensitive
        self.averaging = averaging
        self.variance = variance
        self.gamma = gamma
        self.verbose = verbose
        self.model_filename = model_filename
        self.keep_tempfiles = keep_tempfiles
        self.trainer_cls = trainer_cls
        self.program = program
        self.C = C
        self.slack = slack
        self.eps = eps
        self.gap_tol = gap_tol
        self.stabilise = stabilise
        self.inout_weight = inout_weight
        self.max_iter = max_iter
        self.drop_after = drop_after
        self.min_count = min_count
        self.solver = solver
        self.time_limit = time_limit
        self.program_params = program_params
        self.route = route

    # ------------------------------------------------------------------ hyper-parameters
    def _resolve(self):
        """(route dict, warnings to issue): every hyper-parameter validated and mapped (see the class table)."""
        notes = []
        for name in ("c1", "c2"):
            v = getattr(self, name)
            check_param(name, v, v is None or _is_number(v), "None or a finite float >= 0")
        c1 = float(self.c1 or 0.0)
        c2 = 1.0 if self.c2 is None else float(self.c2)        # CRFsuite's default c2 = 1
        if self.program is not None:
            check_param("program", self.program, isinstance(self.program, str), "a registered program name")
        if self.C is not None:
            check_param("C", self.C, _is_number(self.C, strict=True), "a finite float > 0")
            if self.c1 is not None or self.c2 is not None:
                raise ParameterError(f"C={self.C!r} (mmprog's scale) and c1={self.c1!r}, c2={self.c2!r} (CRFsuite's) "
                                     f"were both given; give one (C = 1/(2·c2))")
            program, C = self.program or "m3n", float(self.C)
        elif c1 > 0 and (self.c2 is None or c2 == 0):
            program, C = self.program or "l1m3n", C_from_crfsuite(c1)
        else:
            if c2 == 0:
                raise ParameterError(f"c2 must be > 0 when c1 is 0 (no regulariser: C = 1/(2·c2) is infinite); "
                                     f"got c1={self.c1!r}, c2={self.c2!r}")
            program, C = self.program or ("enm3n" if c1 > 0 else "m3n"), C_from_crfsuite(c2)
            if c1 > 0 and program != "enm3n":
                notes.append(f"c1={self.c1!r} with c2={self.c2!r} and program={program!r}: c1 is ignored (the "
                             f"elastic net c1‖w‖₁ + c2‖w‖² is program 'enm3n', the default)")
        route = {"program": program, "C": C}
        if program == "enm3n" and self.C is None and "lam" not in (self.program_params or {}):
            route["lam"] = lam_from_crfsuite(c1, c2)
        check_param("route", self.route, self.route in ("auto", "cutting-plane", "bcfw"),
                    '"auto", "cutting-plane" or "bcfw"')
        check_param("slack", self.slack, self.slack in (None, "n", "one"), 'None, "n" or "one"')
        check_param("stabilise", self.stabilise, self.stabilise in ("auto", None, "in-out"),
                    '"auto", None or "in-out"')
        if self.eps is not None:
            check_param("eps", self.eps, _is_number(self.eps, strict=True), "a float > 0")
        if self.gap_tol is not None:
            check_param("gap_tol", self.gap_tol, _is_number(self.gap_tol, strict=True), "a float > 0")
        if self.inout_weight is not None:
            check_param("inout_weight", self.inout_weight, _is_number(self.inout_weight) and self.inout_weight < 1,
                        "None or a float in [0, 1)")
        if self.drop_after is not None:
            check_param("drop_after", self.drop_after, _is_int(self.drop_after, 1), "None or an int >= 1")
        route["gap_tol"] = float(self.gap_tol) if self.gap_tol is not None else DEFAULT_ROUTE["gap_tol"]
        route["route"] = self.route
        # the cutting plane's settings, where the fit goes that way: programs bcfw does not solve, a cutting-plane
        # setting given, or route="cutting-plane" (route "auto" with none given leaves the choice to mmprog.fit)
        # (``solver`` is not one: on route bcfw it solves the master on the route's working set, as in mmprog.fit)
        given = {"slack": self.slack, "eps": self.eps, "inout_weight": self.inout_weight,
                 "drop_after": self.drop_after, "stabilise": None if self.stabilise == "auto" else self.stabilise}
        cutting = self.route == "cutting-plane" or program not in ("m3n", "enm3n") or \
            any(v is not None for v in given.values()) or self.stabilise != "auto"
        if cutting and self.route != "bcfw":
            defaults = CUTTING_PLANE_ROUTE if program in ("m3n", "l1m3n") else {}
            route["slack"] = self.slack or defaults.get("slack")
            route["eps"] = None if self.eps is None else float(self.eps)
            route["stabilise"] = defaults.get("stabilise") if self.stabilise == "auto" else self.stabilise
            route["inout_weight"] = float(self.inout_weight) if self.inout_weight is not None else \
                defaults.get("inout_weight", 0.8)
            route["drop_after"] = self.drop_after if self.drop_after is not None else defaults.get("drop_after")
            if route["route"] == "auto":
                route["route"] = "cutting-plane"
        for name in ("max_iter", "max_iterations"):
            v = getattr(self, name)
            check_param(name, v, v is None or _is_int(v, 1), "None or an int >= 1")
        if self.max_iter is not None and self.max_iterations is not None:
            raise ParameterError(f"max_iter={self.max_iter!r} and max_iterations={self.max_iterations!r} were both "
                                 f"given; give one (both are the round budget)")
        route["max_iter"] = int(next((v for v in (self.max_iter, self.max_iterations) if v is not None),
                                     DEFAULT_MAX_ITER))
        if self.min_count is not None:
            check_param("min_count", self.min_count, _is_int(self.min_count, 1), "None or an int >= 1")
        if self.min_freq is not None:
            check_param("min_freq", self.min_freq, _is_number(self.min_freq), "None or a float >= 0")
            if self.min_count is not None:
                raise ParameterError(f"min_count={self.min_count!r} and min_freq={self.min_freq!r} were both given; "
                                     f"give one (min_count = floor(min_freq) + 1)")
        route["min_count"] = int(self.min_count) if self.min_count is not None else \
            int(np.floor(self.min_freq)) + 1 if self.min_freq is not None else 1
        if self.time_limit is not None:
            check_param("time_limit", self.time_limit, _is_number(self.time_limit, strict=True),
                        "None or a number of seconds > 0")
        check_param("program_params", self.program_params,
                    self.program_params is None or isinstance(self.program_params, dict), "None or a dict")
        for name in ("all_possible_transitions", "all_possible_states"):
            v = getattr(self, name)
            check_param(name, v, v in (None, True, False), "None, True or False")
            if v is False:
                what = "K×K transition" if name.endswith("transitions") else "attribute×label state"
                notes.append(f"{name}=False: mmprog's chain always holds every {what} weight (those never seen in "
                             f"training are learned too, as with {name}=True)")
        check_param("algorithm", self.algorithm, self.algorithm is None or self.algorithm in CRFSUITE_ALGORITHMS,
                    "None or one of " + ", ".join(repr(a) for a in CRFSUITE_ALGORITHMS))
        if CRFSUITE_ALGORITHMS.get(self.algorithm):
            notes.append(f"algorithm={self.algorithm!r} ({CRFSUITE_ALGORITHMS[self.algorithm]}) is an online CRFsuite "
                         f"trainer with no max-margin counterpart; the default certified route is used")
        ignored = [n for n in CRFSUITE_OPTIMISER_ARGS if getattr(self, n) is not None]
        if ignored:
            notes.append(f"{', '.join(ignored)}: CRFsuite optimiser settings with no meaning for a max-margin fit "
                         f"(it stops at a certified gap, gap_tol={route['gap_tol']:g}); ignored")
        if self.keep_tempfiles:
            notes.append("keep_tempfiles=True: mmprog writes no temporary model files (the model stays in memory; "
                         "model_filename= saves it); ignored")
        check_param("verbose", self.verbose, isinstance(self.verbose, (bool, int, np.integer)), "a bool")
        if self.model_filename is not None:
            check_param("model_filename", self.model_filename, isinstance(self.model_filename, (str, os.PathLike)),
                        "None or a path")
        return route, notes

    # ------------------------------------------------------------------ fit
    def _dataset(self, X, y=None, Xs=None):
        """The SequenceDataset of X (and y); ``Xs``: X's matrices when the caller already has them."""
        from .datasets.base import SequenceDataset
        if Xs is None:
            Xs = self.extractor_.transform(X)
        if y is None:
            Y = [np.full(x.shape[0], -1, dtype=np.int64) for x in Xs]
        else:
            index = {c: k for k, c in enumerate(self.classes_)}
            Y = [np.fromiter((index.get(t, -1) for t in lab), dtype=np.int64, count=len(lab)) for lab in y]
        return SequenceDataset(Xs, Y, len(self.classes_), groups=self.extractor_.groups_,
                               group_names=self.extractor_.group_names_, label_names=self.classes_)

    def fit(self, X, y, X_dev=None, y_dev=None):
        """Train on X (list of sentences of token dicts) and y (list of lists of label strings, same lengths).

        ``X_dev``/``y_dev`` (sklearn-crfsuite's hold-out data) are scored after the fit: ``dev_score_`` is their token
        accuracy. Ends with a :class:`~sklearn.exceptions.ConvergenceWarning` when the fit stops before its certificate
        (``result_.gap`` > ``gap_tol``).
        """
        import mmprog
        from .features.dicts import TokenDictExtractor
        if (X_dev is None) != (y_dev is None):
            raise ParameterError("X_dev and y_dev go together: give both (hold-out data) or neither")
        route, notes = self._resolve()
        self.__dict__.pop("dev_score_", None)          # a refit without hold-out data keeps no stale score
        for note in notes:
            warnings.warn(note, UserWarning, stacklevel=2)
        X, y = list(X), [list(v) for v in y]
        check_param("y", f"{len(y)} label lists", len(y) == len(X), f"one label list per sentence ({len(X)})")
        for i, (x, v) in enumerate(zip(X, y)):
            check_param(f"y[{i}]", f"{len(v)} labels", len(v) == len(x), f"one label per token ({len(x)})")
        self.classes_ = sorted({t for v in y for t in v})
        self.extractor_ = TokenDictExtractor(min_count=route["min_count"])
        ds = self._dataset(X, y, Xs=self.extractor_.fit_transform(X))     # one pass over the dicts, not two
        self.n_features_in_ = ds.n_features
        kw = {k: route[k] for k in ("route", "max_iter", "gap_tol", "slack", "eps", "drop_after") if k in route}
        if route.get("stabilise") is not None:
            kw.update(stabilise=route["stabilise"], inout_weight=route["inout_weight"])
        with _verbose_log(self.verbose):
            self.result_ = mmprog.fit(ds, program=route["program"], C=route["C"], solver=self.solver,
                                      time_limit=self.time_limit, **kw,
                                      **{k: route[k] for k in ("lam",) if k in route}, **dict(self.program_params or {}))
        self.result_.extractor = self.extractor_
        route["route"] = self.result_.route          # the route that ran ("auto" resolved by mmprog.fit)
        self.route_ = route
        res = self.result_
        if res.gap > route["gap_tol"]:
            warnings.warn(f"the fit stopped ({res.termination}, {res.n_iter} rounds) at relative gap {res.gap:.3g} > "
                          f"gap_tol={route['gap_tol']:g}: the weights are not certified; raise max_iterations "
                          f"(max_iter) or time_limit", ConvergenceWarning, stacklevel=2)
        if self.model_filename is not None:
            self.result_.save(self.model_filename)
        if X_dev is not None:
            self.dev_score_ = self.score(X_dev, y_dev)
        return self

    # ------------------------------------------------------------------ prediction
    def _check_fitted(self):
        if hasattr(self, "result_"):
            return
        if self.model_filename is not None and os.path.exists(_model_json(self.model_filename)):
            self._load_model(self.model_filename)
            return
        from sklearn.exceptions import NotFittedError
        raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit(X, y) first")

    def _load_model(self, path):
        """Take a model saved by :meth:`fit` (``model_filename``) as this estimator's fitted state."""
        import mmprog
        from .exceptions import ModelFileError
        pred = mmprog.load(path)
        if pred.label_names is None or not hasattr(pred.extractor, "vocabulary_"):
            raise ModelFileError(f"{_model_json(path)}: not a SequenceTagger model (it has no label names or no "
                                 f"token-dict attribute dictionary)")
        self.result_, self.extractor_, self.classes_ = pred, pred.extractor, list(pred.label_names)
        self.n_features_in_ = pred.extractor.n_features_

    def predict(self, X):
        """List of lists of label strings (Viterbi: the highest-scoring labeling under wᵀf)."""
        self._check_fitted()
        names = np.asarray(self.classes_, dtype=object)
        return [names[p].tolist() for p in self.result_.predict(self._dataset(list(X)))]

    def predict_single(self, xseq):
        """Labels of one sentence (sklearn-crfsuite's ``predict_single``)."""
        return self.predict([xseq])[0]

    def predict_marginals(self, X):
        """Per-token ``{label: confidence}`` dicts, summing to 1 at each token.

        These are relative confidences, not calibrated probabilities: the sum-marginals (forward-backward) of the
        Gibbs distribution p(y | x) ∝ exp(wᵀf(x, y)) over the max-margin scores — the softmax of the scores,
        marginalised per token. A max-margin w is not fitted to make them probabilities (CRFsuite's are, of its
        likelihood); their order within a token is what they are good for.
        """
        self._check_fitted()
        M = self.result_.predict_marginals(self._dataset(list(X)))
        return [[dict(zip(self.classes_, row.tolist())) for row in m] for m in M]

    def predict_marginals_single(self, xseq):
        """:meth:`predict_marginals` of one sentence."""
        return self.predict_marginals([xseq])[0]

    def score(self, X, y):
        """Token accuracy (sklearn-crfsuite's ``score``: ``metrics.flat_accuracy_score``)."""
        pred = self.predict(X)
        total = sum(len(v) for v in y)
        right = sum(a == b for p, t in zip(pred, y) for a, b in zip(p, t))
        return right / max(total, 1)

    # ------------------------------------------------------------------ CRFsuite's read-outs of the model
    def _blocks(self):
        self._check_fitted()
        return self.result_.weights()

    @property
    def transition_features_(self):
        """``{(label_from, label_to): weight}`` for all K² label pairs."""
        T = self._blocks()["transition"]
        return {(a, b): float(T[i, j]) for i, a in enumerate(self.classes_) for j, b in enumerate(self.classes_)}

    @property
    def state_features_(self):
        """``{(attribute, label): weight}`` for every non-zero state weight."""
        S = self._blocks()["state"]
        names = self.extractor_.feature_names_
        rows, cols = np.nonzero(S)
        return {(names[r], self.classes_[k]): float(S[r, k]) for r, k in zip(rows.tolist(), cols.tolist())}

    @property
    def attributes_(self):
        """The attributes (input features) of the model, in index order."""
        self._check_fitted()
        return list(self.extractor_.feature_names_)

    @property
    def num_attributes_(self):
        self._check_fitted()
        return int(self.extractor_.n_features_)

    @property
    def size_(self):
        """Bytes of the model as mmprog saves it (the .json and the .npz; CRFsuite's ``size_`` is its model file's)."""
        self._check_fitted()
        with tempfile.TemporaryDirectory() as d:
            base = os.path.join(d, "model")
            self.result_.save(base)
            return int(os.path.getsize(base + ".json") + os.path.getsize(base + ".npz"))

    # ------------------------------------------------------------------ pickling
    def __getstate__(self):
        """scikit-learn users pickle estimators (joblib, searches): the fitted weights, bounds and history are kept;
        the Pyomo master (``result_.model``) is not — export or save the model before pickling if you need it.
        mmprog's own files (``model_filename``, ``Result.save``) are JSON + .npz, never pickle."""
        state = dict(self.__dict__)
        res = state.get("result_")
        if res is not None:
            # set, not read: reading ``model`` would state a deferred master (route bcfw) only to drop it
            res = copy.copy(res)
            res.model = None
            state["result_"] = res
        return state


def _is_int(v, low):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= low


def _model_json(path):
    path = os.fspath(path)
    return path if path.endswith(".json") else (path[:-4] if path.endswith(".npz") else path) + ".json"


@contextlib.contextmanager
def _verbose_log(verbose):
    """With ``verbose``: the cutting plane's round table (loggers under ``mmprog.engine``) on stderr."""
    if not verbose:
        yield
        return
    logger = logging.getLogger("mmprog.engine")
    handler = logging.StreamHandler(sys.stderr)
    old = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old)


def __getattr__(name):
    if name == "LInfMaxMargin":
        from .linf import LInfMaxMargin
        return LInfMaxMargin
    raise AttributeError(f"module 'mmprog.estimators' has no attribute {name!r}")
