"""Result.plot_convergence, OCR weights as images, template weights as bars: Figures whose drawn data are the
result's numbers (Agg backend)."""
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import mmprog  # noqa: E402
from mmprog.datasets import tiny_chain  # noqa: E402
from mmprog.plots import plot_ocr_weights, plot_template_weights  # noqa: E402


@pytest.fixture(scope="module")
def res():
    return mmprog.fit(tiny_chain(n_sequences=12, length=4, n_labels=3, n_features=8, seed=0), program="m3n",
                      C=1.0, eps=1e-3)


def test_convergence_draws_the_history(res):
    fig = res.plot_convergence()
    assert isinstance(fig, Figure) and len(fig.axes) == 3
    bounds = fig.axes[0].lines
    np.testing.assert_allclose(bounds[0].get_ydata(), [h.lower_bound for h in res.history])
    up = np.array([h.upper_bound for h in res.history])
    np.testing.assert_allclose(bounds[1].get_ydata(), up[np.isfinite(up)])
    heights = [p.get_height() for p in fig.axes[2].patches]
    assert heights == [h.new_cuts for h in res.history]
    assert sum(heights) == res.n_cuts
    fig.savefig(__import__("io").BytesIO(), format="png")     # renders under Agg


def test_ocr_weights_are_the_state_block():
    rng = np.random.default_rng(0)
    W = rng.normal(size=(128, 3))
    fig = plot_ocr_weights(W, letters=["a", "b", "c"])
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == 3
    for k, im in enumerate(images):
        np.testing.assert_array_equal(im.get_array(), W[:, k].reshape(16, 8))
    assert [ax.get_title() for ax in fig.axes if ax.images] == ["a", "b", "c"]
    with pytest.raises(ValueError, match="image_shape"):
        plot_ocr_weights(W[:100])


def test_ocr_weights_of_a_predictor(res):
    fig = plot_ocr_weights(res, image_shape=(2, 4))
    images = [ax.images[0] for ax in fig.axes if ax.images]
    state = res.weights()["state"]
    assert len(images) == state.shape[1]
    np.testing.assert_array_equal(images[1].get_array(), state[:, 1].reshape(2, 4))


def test_template_weights_bars():
    fig = plot_template_weights(np.array([0.2, 0.0, 0.8]), names=["unigram", "bigram", "shape"])
    assert [p.get_height() for p in fig.axes[0].patches] == [0.2, 0.0, 0.8]
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["unigram", "bigram", "shape"]
    with pytest.raises(ValueError, match="1-D"):
        plot_template_weights(np.ones((2, 2)))
