"""Pictures of a training run that people look at: the cutting-plane loop's bounds, gap and cuts per round; OCR
weights as images (pixels × letters); template weights as bars. Every function returns a
:class:`matplotlib.figure.Figure` (built without pyplot's global state, so it works under the Agg backend and in
notebooks alike) and never shows or saves it.
"""
from __future__ import annotations

import numpy as np

__all__ = ["plot_convergence", "plot_ocr_weights", "plot_template_weights"]


def _figure(**kw):
    from matplotlib.figure import Figure
    return Figure(**kw)


def plot_convergence(result, ax=None):
    """The lower bound (master optimum) and upper bound (best full objective) against rounds, their relative gap
    on a log scale, and the cuts added per round with the working-set size.

    Parameters
    ----------
    result : Result
        Anything with ``history``, a list of :class:`mmprog.engine.records.IterationRecord`.

    Returns
    -------
    Figure
        Three axes: bounds, gap, cuts.
    """
    hist = list(result.history)
    if not hist:
        raise ValueError("plot_convergence: the result has no history (no round was run)")
    it = np.array([h.iteration for h in hist])
    lower = np.array([h.lower_bound for h in hist], dtype=float)
    upper = np.array([h.upper_bound for h in hist], dtype=float)
    gap = np.array([h.gap for h in hist], dtype=float)
    new = np.array([h.new_cuts for h in hist])
    total = np.array([h.n_cuts for h in hist])
    fig = _figure(figsize=(11, 3.2), layout="constrained")
    a1, a2, a3 = fig.subplots(1, 3)
    a1.plot(it, lower, "o-", ms=3, label="lower bound (master optimum)")
    finite = np.isfinite(upper)
    a1.plot(it[finite], upper[finite], "s-", ms=3, label="upper bound (full objective)")
    a1.set_xlabel("round")
    a1.set_ylabel("objective")
    a1.legend(fontsize=8)
    a1.set_title("bounds")
    pos = np.where(np.isfinite(gap) & (gap > 0), gap, np.nan)
    a2.semilogy(it, pos, "o-", ms=3, color="C2")
    a2.set_xlabel("round")
    a2.set_ylabel("(upper − lower) / max(1, |upper|)")
    a2.set_title("relative gap")
    a3.bar(it, new, color="C3", alpha=0.7, label="new cuts")
    a3.plot(it, total, "k.-", ms=3, label="working set")
    a3.set_xlabel("round")
    a3.set_ylabel("cuts")
    a3.legend(fontsize=8)
    a3.set_title("cuts per round")
    return fig


def plot_ocr_weights(weights, letters=None, image_shape=(16, 8), cmap="RdBu_r"):
    """The state weights of an OCR chain model as one image per letter (the 16 × 8 pixel grid), on one colour
    scale symmetric about 0.

    Parameters
    ----------
    weights : Result, Predictor or ndarray, shape (n_pixels, n_letters)
        A trained chain predictor (its ``weights()["state"]`` block is used) or the block itself.
    letters : list of str, optional
        Letter names (default: the predictor's ``label_names``, else 0, 1, ...).
    image_shape : tuple of int
        Rows × columns of one letter's image; their product must be n_pixels (OCR: 16 × 8 = 128).

    Returns
    -------
    Figure
    """
    W = weights.weights()["state"] if hasattr(weights, "weights") else np.asarray(weights, dtype=float)
    if letters is None:
        letters = getattr(weights, "label_names", None)
    if W.ndim != 2:
        raise ValueError(f"plot_ocr_weights: weights must be (n_pixels, n_letters); got shape {W.shape}")
    d, K = W.shape
    if int(np.prod(image_shape)) != d:
        raise ValueError(f"plot_ocr_weights: image_shape {image_shape} has {int(np.prod(image_shape))} pixels, "
                         f"the weights {d}")
    letters = list(letters) if letters is not None else [str(k) for k in range(K)]
    cols = min(K, 13)
    rows = int(np.ceil(K / cols))
    fig = _figure(figsize=(1.0 * cols + 1.0, 1.9 * rows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols)).ravel()
    vmax = float(np.abs(W).max()) or 1.0
    im = None
    for k, ax in enumerate(axes):
        ax.set_xticks([])
        ax.set_yticks([])
        if k >= K:
            ax.set_axis_off()
            continue
        im = ax.imshow(W[:, k].reshape(image_shape), cmap=cmap, vmin=-vmax, vmax=vmax)
        ax.set_title(letters[k], fontsize=9)
    fig.colorbar(im, ax=axes.tolist(), shrink=0.8, label="weight")
    return fig


def plot_template_weights(weights, names=None, ax=None, title="template weights"):
    """Template weights (MTL's μⱼ, p-block's) as bars, one per template.

    Parameters
    ----------
    weights : Result or ndarray, shape (m,)
        A result with ``template_weights`` (and ``template_names``) or the weights themselves.
    names : list of str, optional

    Returns
    -------
    Figure
    """
    if hasattr(weights, "template_weights"):
        names = names if names is not None else getattr(weights, "template_names", None)
        mu = np.asarray(weights.template_weights, dtype=float)
    else:
        mu = np.asarray(weights, dtype=float)
    if mu.ndim != 1:
        raise ValueError(f"plot_template_weights: weights must be one per template (1-D); got shape {mu.shape}")
    names = list(names) if names is not None else [str(j) for j in range(len(mu))]
    fig = _figure(figsize=(max(4.0, 0.5 * len(mu) + 2), 3.2), layout="constrained")
    a = fig.subplots()
    a.bar(range(len(mu)), mu, color="C0")
    a.set_xticks(range(len(mu)))
    a.set_xticklabels(names, rotation=45 if max(map(len, names), default=0) > 4 else 0, ha="right", fontsize=8)
    a.set_ylabel("weight")
    a.set_title(title)
    return fig
