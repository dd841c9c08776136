"""The one result object of a training run, and the predictor it shares with saved models.

:class:`Result` is like scipy's ``OptimizeResult`` with Pyomo's split of *termination* (why the loop stopped:
``converged`` — the certificate holds —, ``eps``, ``max_iter``, ``time_limit``, ``interrupted``) from the per-solve solver status (kept in ``solver_status``, with the
solver's own words). Saved models are JSON + ``.npz`` — never pickle.
"""
from __future__ import annotations

import json
import os

import numpy as np

from .version import __version__
from .datasets.reading import jsonable
from .exceptions import ModelFileError

FORMAT = "mmprog-model"
FORMAT_VERSION = 1


class Predictor:
    """A trained linear structured predictor: a joint feature map and its weights.

    Parameters
    ----------
    fmap : JointFeatureMap
    w : ndarray, shape (dim,)
    program : str
    params : dict
        The program's hyper-parameters.
    label_names : list of str, optional
    """

    def __init__(self, fmap, w, program, params=None, label_names=None, meta=None):
        self.fmap = fmap
        self.w = np.asarray(w, dtype=np.float64)
        self.program = program
        self.params = dict(params or {})
        self.label_names = label_names
        self.meta = dict(meta or {})
        # a model trained on text carries its template extractor (feature dictionary), saved beside w
        self.extractor = None

    def weights(self):
        """Named blocks of w (for the default chain map ``{"state": (d, K), "transition": (K, K)}``)."""
        return self.fmap.weights(self.w)

    def _as_dataset(self, dataset):
        """Token text becomes features through the model's own template dictionary (a model trained on text)."""
        if self.extractor is not None and hasattr(dataset, "sentences") and not hasattr(dataset, "heads"):
            from .tagging import corpus_dataset
            dataset = corpus_dataset(self, dataset)
        return dataset

    def _prepare(self, dataset):
        return self.fmap.prepare(self._as_dataset(dataset))

    def predict(self, dataset):
        """Highest-scoring structure of every example: a list of int arrays (labels, or heads for trees with
        index 0 the root)."""
        from .features.base import predict
        return predict(self.fmap, self.w, self._as_dataset(dataset))

    def predict_marginals(self, dataset, kind="sum"):
        """Per-position marginals (forward-backward, ``kind="sum"``) or max-marginals (``kind="max"``) of the
        scores wᵀf; a list of (Tᵢ, K) arrays (chains only)."""
        if not hasattr(self.fmap, "marginals"):
            raise TypeError(f"{type(self.fmap).__name__} has no marginals")
        prep = self._prepare(dataset)
        M = self.fmap.marginals(self.w, prep, kind=kind)
        return [M[i, : prep.lengths[i]] for i in range(prep.n)]

    def predict_topk(self, dataset, k):
        """The k best labelings per example: list of ((k, Tᵢ) labels, (k,) scores) (chains only)."""
        prep = self._prepare(dataset)
        labels, scores = self.fmap.topk(self.w, prep, k)
        return [(labels[i, :, : prep.lengths[i]], scores[i]) for i in range(prep.n)]

    def evaluate(self, dataset):
        """The core metrics of the predictions against the gold labels of ``dataset``."""
        from . import metrics
        pred = self.predict(dataset)
        if getattr(self.fmap, "kind", "chain") == "chain":
            gold = list(dataset.Y)
            out = {"token_error": float(metrics.token_error(gold, pred)),
                   "sequence_error": float(metrics.sequence_error(gold, pred))}
            return out
        gold = [np.asarray(h) for h in dataset.heads]
        pos = [s.get("pos") for s in dataset.sentences]
        scores = metrics.attachment_scores(gold, [p[1:] for p in pred], pos=pos)
        return {k: float(v) for k, v in scores.items()}

    # ------------------------------------------------------------------ persistence
    def save(self, path):
        """Write ``<path>.json`` (program, hyper-parameters, feature map, labels, version) and ``<path>.npz``
        (w and the feature map's arrays). Both are written to temporary files first and moved into place, so a
        failure leaves nothing half-written."""
        base = _base(path)
        desc = self.fmap.describe()
        arrays = {"w": self.w}
        state = self.fmap.state_arrays() if hasattr(self.fmap, "state_arrays") else {}
        if hasattr(self.fmap, "to_state"):
            desc, state = self.fmap.to_state()
        arrays.update({f"fmap__{k}": np.asarray(v) for k, v in state.items()})
        if self.extractor is not None:
            ex_desc, ex_state = self.extractor.to_state()
            arrays.update({f"extractor__{k}": np.asarray(v) for k, v in ex_state.items()})
        doc = {"format": FORMAT, "format_version": FORMAT_VERSION, "mmprog_version": __version__,
               "program": self.program, "params": jsonable(self.params), "feature_map": desc,
               "label_names": self.label_names, "meta": jsonable(self.meta)}
        if self.extractor is not None:
            doc["extractor"] = jsonable(ex_desc)
        from .datasets.reading import publish, remove_quietly, temporary_beside
        os.makedirs(os.path.dirname(os.path.abspath(base)), exist_ok=True)
        tmps = []
        try:
            fd, tmp_n = temporary_beside(base + ".npz")
            tmps.append(tmp_n)
            with os.fdopen(fd, "wb") as fh:
                np.savez_compressed(fh, **arrays)
            # the .json names its .npz by checksum: an array file from another model beside it is refused on load
            doc["npz_sha256"] = sha256_of(tmp_n)
            fd, tmp_j = temporary_beside(base + ".json")
            tmps.append(tmp_j)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(doc, fh, indent=1)
            publish(tmp_n, base + ".npz")
            publish(tmp_j, base + ".json")
        finally:
            for t in tmps:
                remove_quietly(t)
        return base + ".json"


def load(path):
    """Read a model written by :meth:`Predictor.save` (``path`` with or without ``.json``).

    Nothing in the two files is trusted: every field and array is checked for type, shape and range before it is
    used (the .npz is read without pickle), so a damaged or mismatched pair gives one :class:`ModelFileError`.

    Raises
    ------
    ModelFileError
        One line naming the file (``.json`` or ``.npz``) and the field or array at fault.
    """
    from .datasets.reading import read_npz
    base = _base(path)
    jpath, npath = base + ".json", base + ".npz"
    for p in (jpath, npath):
        if not os.path.isfile(p):
            raise ModelFileError(f"{p}: no such file; a saved model is a .json and a .npz with the same stem")
    doc = _read_model_json(jpath)
    recorded = doc.get("npz_sha256")          # absent in models saved before checksums were recorded
    if recorded is not None and sha256_of(npath) != recorded:
        raise ModelFileError(f"{npath}: its sha256 is not the {str(recorded)[:16]}... that the model's .json "
                             f"records: the array file belongs to another model or was changed; keep a model's two "
                             f"files together")
    arrays = read_npz(npath, npath, ModelFileError)
    if "w" not in arrays:
        raise ModelFileError(f"{npath}: missing array 'w' (has {sorted(arrays)})")
    w = arrays["w"]
    if w.ndim != 1 or w.dtype.kind not in "iuf":
        raise ModelFileError(f"{npath}: array 'w' has dtype {w.dtype} and shape {w.shape}; expected a 1-d array of "
                             f"real numbers")
    w = w.astype(np.float64)
    if not np.isfinite(w).all():
        raise ModelFileError(f"{npath}: array 'w' holds {int((~np.isfinite(w)).sum())} non-finite values (NaN or "
                             f"inf); a trained model's weights are finite")
    fmap = _rebuild_feature_map(doc["feature_map"], arrays, w.size, jpath, npath)
    if w.shape != (fmap.dim,):
        raise ModelFileError(f"{npath}: array 'w' has shape {w.shape}, the feature map needs ({fmap.dim},)")
    names = doc.get("label_names")
    n_labels = getattr(fmap, "n_labels", None)
    if names is not None and n_labels is None:   # trees predict heads; a name list would be read as labels
        raise ModelFileError(f"{jpath}: field 'label_names' is given but a {fmap.kind!r} model predicts heads, not "
                             f"labels; it must be null")
    if names is not None and len(names) != n_labels:
        raise ModelFileError(f"{jpath}: field 'label_names' has {len(names)} names but the feature map has "
                             f"{n_labels} labels")
    pred = Predictor(fmap, w, doc["program"], doc.get("params"), names, doc.get("meta"))
    if "extractor" in doc:
        pred.extractor = _rebuild_extractor(doc["extractor"], arrays, jpath, npath)
    return pred


#: top-level fields of a model's JSON: name -> (accepted types, description, required)
_MODEL_FIELDS = {
    "format": (str, "a string", True),
    "format_version": (int, "an integer", True),
    "program": (str, "a program name", True),
    "feature_map": (dict, "an object", True),
    "params": ((dict, type(None)), "an object", False),
    "label_names": ((list, type(None)), "a list of strings", False),
    "meta": ((dict, type(None)), "an object", False),
    "npz_sha256": (str, "a hex SHA-256 string", False),
}


def _read_model_json(jpath):
    """The JSON document of a saved model, its top-level fields checked (:data:`_MODEL_FIELDS`)."""
    from .datasets.reading import one_line
    try:
        with open(jpath, "rb") as f:
            text = f.read().decode("utf-8")
        doc = json.loads(text)
    except UnicodeDecodeError as e:
        raise ModelFileError(f"{jpath}: not UTF-8 text (byte {e.start}: {e.reason}); a saved model is JSON") from None
    except json.JSONDecodeError as e:
        raise ModelFileError(f"{jpath}: line {e.lineno}: not valid JSON ({e.msg}, column {e.colno})") from None
    except (ValueError, RecursionError) as e:  # a number of > 4,300 digits; nesting deeper than Python recurses
        raise ModelFileError(f"{jpath}: not readable JSON ({type(e).__name__}: {one_line(e)[:200]})") from None
    if not isinstance(doc, dict):
        raise ModelFileError(f"{jpath}: the document is a JSON {type(doc).__name__}, expected an object with "
                             f"fields format, format_version, program, feature_map, ...")
    if doc.get("format") != FORMAT:
        raise ModelFileError(f"{jpath}: field 'format' is {_short(doc.get('format'))}, expected {FORMAT!r}")
    for key, (types, what, required) in _MODEL_FIELDS.items():
        if key not in doc:
            if required:
                raise ModelFileError(f"{jpath}: missing field {key!r}")
            continue
        v = doc[key]
        if not isinstance(v, types) or isinstance(v, bool):
            raise ModelFileError(f"{jpath}: field {key!r} is {_short(v)}, expected {what}")
    version = doc["format_version"]
    if not 1 <= version <= FORMAT_VERSION:
        hint = "upgrade mmprog" if version > FORMAT_VERSION else "versions start at 1"
        raise ModelFileError(f"{jpath}: field 'format_version' is {_short(version)}, this mmprog reads 1 to "
                             f"{FORMAT_VERSION}; {hint}")
    names = doc.get("label_names")
    if names is not None and not all(isinstance(s, str) for s in names):
        raise ModelFileError(f"{jpath}: field 'label_names' must be a list of strings; got {_short(names)}")
    return doc


def _rebuild_feature_map(desc, arrays, n_weights, jpath, npath):
    """:func:`mmprog.features.rebuild` of the saved description and ``fmap__`` arrays; any refusal becomes a
    ModelFileError naming both files."""
    from .datasets.reading import one_line
    from .exceptions import MMProgError
    from .features import rebuild
    where = f"{jpath}: field 'feature_map' (with the arrays of {os.path.basename(npath)})"
    state = {k[6:]: v for k, v in arrays.items() if k.startswith("fmap__")}
    try:
        return rebuild(desc, state, n_weights=n_weights)
    except MMProgError as e:
        raise ModelFileError(f"{where}: {one_line(e)}") from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError) as e:
        # the feature maps' constructors meeting a value of the wrong kind that the checks above let through
        raise ModelFileError(f"{where}: cannot be rebuilt ({type(e).__name__}: {one_line(e)[:200]})") from None


def _rebuild_extractor(desc, arrays, jpath, npath):
    """The template extractor of a text model (its feature dictionary), from the ``extractor`` field and the
    ``extractor__`` arrays; any refusal becomes a ModelFileError naming both files."""
    from .datasets.reading import one_line
    from .exceptions import MMProgError
    from .features.templates import TemplateExtractor
    where = f"{jpath}: field 'extractor' (with the arrays of {os.path.basename(npath)})"
    state = {k[11:]: v for k, v in arrays.items() if k.startswith("extractor__")}
    try:
        if desc.get("kind") == "token_dicts":        # SequenceTagger's attribute dictionary (token feature dicts)
            from .features.dicts import TokenDictExtractor
            return TokenDictExtractor.from_state(desc, state)
        return TemplateExtractor.from_state(desc, state)
    except MMProgError as e:
        raise ModelFileError(f"{where}: {one_line(e)}") from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError) as e:
        raise ModelFileError(f"{where}: cannot be rebuilt ({type(e).__name__}: {one_line(e)[:200]})") from None


def _short(value, limit=60):
    """``repr(value)`` cut to ``limit`` characters (error messages quote what the file holds)."""
    r = repr(value)
    return r if len(r) <= limit else r[: limit - 3] + "..."


class Result(Predictor):
    """Everything a training run produced.

    Attributes
    ----------
    w : ndarray, shape (dim,)
    model : pyomo ConcreteModel
        The master program as it stands (grown cut by cut).
    primal_objective : float
        The lower bound: the master's optimum, n-slack scale (½‖w‖² + C Σ ξᵢ for P0, ½‖w‖₁ + C Σ ξᵢ for P1), or the
        dual value D(α) on route ``bcfw``; −inf where the route has none (``certifies`` says so).
    dual_objective : float
        Dual value recomputed from the solver's multipliers.
    upper_bound : float
        Best full objective seen (ξᵢ = Hᵢ(w)).
    gap : float
        The certificate: (upper_bound − primal_objective) / max(1, |upper_bound|), the relative distance of the
        returned w's objective from the optimum of what ``certifies`` names; inf when no lower bound is known.
    gap_tol : float or None
        The gap the fit was asked to reach (None where the route takes no gap_tol).
    certifies : str
        What ``gap`` bounds: ``"program"`` (the optimum of the program fitted), else a sentence (a program with an
        outer EM or variational loop certifies its last inner program only; a route with no lower bound says so).
    route : str
        ``"cutting-plane"``, ``"bcfw"``, ``"factored"`` or ``"subgradient"``.
    n_iter, n_cuts : int
        Rounds of the cutting plane (passes of ``bcfw``) and cuts of the master.
    termination : str
        Why the fit stopped: ``converged`` (gap ≤ gap_tol: certified — the only termination that claims it),
        ``eps`` (the ε rule: no constraint violated by more than the ``eps`` the caller gave, with the gap still
        above gap_tol), ``max_iter``, ``time_limit`` or ``interrupted`` (SIGINT/SIGTERM); ``gap`` says how far from
        the optimum the result is whatever the termination.
    history : list of IterationRecord
    timings : dict
        Seconds in the oracle, Pyomo and the solver, and in total.
    alpha : ndarray, shape (n_cuts,)
        Cut multipliers (α ≥ 0).
    extra : dict
        Program-specific read-outs.
    """

    def __init__(self, fmap, run, program, params, solver, slack, label_names=None, trainer=None, gap_tol=None):
        sol = run.solution
        upper, lower = float(run.upper_bound), float(sol.objective)
        gap = (upper - lower) / max(1.0, abs(upper)) if np.isfinite(upper) and np.isfinite(lower) else np.inf
        route = sol.extra.get("route") or sol.extra.get("algorithm") or "cutting-plane"
        certifies = sol.extra.get("certifies") or "program"
        super().__init__(fmap, sol.w, program, params, label_names,
                         meta={"solver": solver, "slack": slack, "route": route, "termination": run.termination,
                               "gap": gap if np.isfinite(gap) else None, "gap_tol": gap_tol,
                               "upper_bound": upper if np.isfinite(upper) else None,
                               "lower_bound": lower if np.isfinite(lower) else None, "certifies": certifies})
        self.model = run.model      # read back through the property below, which loads Pyomo's plugins
        #: what trained this result (:func:`mmprog.fit`): a program's checks train the referee a paper compares it
        #: with through it (P4 against adaptive M³N, LapM³N's first step against M³N), so no program imports the face
        self.trainer = trainer
        #: re-solves a master of this program the way the fit did (the engine's choice of back end)
        self.solve_master = run.solve_master
        self.solution = sol
        self.xi = sol.xi
        self.alpha = sol.alpha
        self.primal_objective = lower
        self.dual_objective = None if sol.dual_objective is None else float(sol.dual_objective)
        self.upper_bound = upper
        self.gap = float(gap)
        self.gap_tol = gap_tol
        self.certifies = certifies
        self.route = route
        #: route bcfw with a solver given: that solver's solve of the master of record (:func:`mmprog.api.
        #: solve_master_of_record`), else None
        self.master_solve = None
        self.n_iter = run.n_iter
        self.n_cuts = getattr(run.model, "n_cuts", None)    # a master stated on first reading says its count
        if self.n_cuts is None:
            self.n_cuts = run.model.ws.size if hasattr(run.model, "ws") else 0
        self.termination = run.termination
        self.history = run.history
        self.timings = run.timings
        self.solver = solver
        self.slack = slack
        self.extra = dict(sol.extra)
        for k, v in self.extra.items():
            if not hasattr(self, k):
                setattr(self, k, v)

    @property
    def model(self):
        """The master (a Pyomo ConcreteModel, or None on a route without one), with Pyomo's plugins
        (``pyomo.environ``: writers, solver factories) loaded on first reading, so that ``model.write(...)`` and
        Pyomo's solvers work on it. A fit that never reads its master (predicting, scoring, saving w) does not pay
        their import, 0.1–0.2 s of CPU (issue 37, item 4): the masters are stated with ``pyomo.core`` alone. A
        route that solves no master (``bcfw``) states it here, on first reading
        (:class:`~mmprog.engine.records.DeferredMaster`)."""
        if self._stated() is not None:
            from .engine.records import load_pyomo_plugins
            load_pyomo_plugins()
        return self._master

    @model.setter
    def model(self, value):
        self._master = value

    def _stated(self):
        """The master, a deferred one stated now (without Pyomo's plugins)."""
        from .engine.records import DeferredMaster
        if isinstance(self._master, DeferredMaster):
            self._master = self._master.build()
        return self._master

    def support_vectors(self, tol=1e-8):
        """The cuts with a non-zero multiplier, per slack (example): ``{i: [(position, alpha, labeling)]}``."""
        ws = getattr(self._stated(), "ws", None)     # the working set's arrays: no Pyomo plugins needed
        if ws is None:
            from .exceptions import ParameterError
            raise ParameterError(f"this {self.program} fit ({self.params}) keeps no working set of cuts, so it has no "
                                 f"support vectors; fit with the cutting plane to get them")
        out = {}
        labs = getattr(ws, "labelings", None)
        for pos in np.nonzero(self.alpha > tol)[0]:
            ex = int(ws.example_array()[pos])
            out.setdefault(ex, []).append((int(pos), float(self.alpha[pos]),
                                           None if labs is None else labs[pos]))
        return out

    def export(self, path, fmt=None):
        """Write the master program as it stands (``.lp``, ``.mps``, ``.nl`` or ``.gms``, readable names)."""
        from .export import write_model
        from .programs import get_program
        get_program(self.program, **self.params).materialise(self.model)
        return write_model(self.model, path, fmt)

    def summary(self):
        """The run in a JSON-able dict (what ``mmprog train`` prints): ``gap`` and what it ``certifies`` beside the
        termination; a bound or gap that is not finite (none known) is None."""
        def finite(v):
            return v if v is None or np.isfinite(v) else None
        return {"program": self.program, "params": self.params, "solver": self.solver, "slack": self.slack,
                "route": self.route, "termination": self.termination, "gap": finite(self.gap),
                "gap_tol": self.gap_tol, "certifies": self.certifies, "n_iter": self.n_iter, "n_cuts": self.n_cuts,
                "primal_objective": finite(self.primal_objective), "dual_objective": self.dual_objective,
                "upper_bound": finite(self.upper_bound), "timings": self.timings,
                "nonzero_weights": int(np.count_nonzero(np.abs(self.w) > 1e-8)),
                **({"master_solve": self.master_solve} if self.master_solve else {}),
                # MTL: how many of the templates the fit switched off (Mao & Tsang's section 3.3 count)
                **({"n_templates": len(self.extra["template_weights"]),
                    "templates_removed": int(self.extra["templates_removed"])}
                   if "templates_removed" in self.extra else {})}

    def plot_convergence(self):
        """Bounds, gap and cuts per round as a matplotlib Figure (:func:`mmprog.plots.plot_convergence`)."""
        from .plots import plot_convergence
        return plot_convergence(self)

    def plot_template_weights(self):
        """Template weights as bars (MTL, p-block; :func:`mmprog.plots.plot_template_weights`)."""
        from .plots import plot_template_weights
        return plot_template_weights(self)

    def to_html(self, path=None, **kwargs):
        """The report page of this fit: master and dual typeset, convergence plot, ``verify`` table, template
        weights (:func:`mmprog.report.report_html`; written to ``path`` when given, else returned)."""
        from .report import report_html, write_report
        return write_report(self, path, **kwargs) if path else report_html(self, **kwargs)

    def __repr__(self):
        return (f"Result(program={self.program!r}, route={self.route!r}, termination={self.termination!r}, "
                f"n_iter={self.n_iter}, n_cuts={self.n_cuts}, primal_objective={self.primal_objective:.6g}, "
                f"gap={self.gap:.2e})")


def sha256_of(path):
    """Hex SHA-256 of the file at ``path`` (read in 1 MiB pieces)."""
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _base(path):
    path = os.fspath(path)
    for ext in (".json", ".npz"):
        if path.endswith(ext):
            return path[: -len(ext)]
    return path

