"""``mmprog reproduce sparsity --quick``: the outputs exist and the KDD 2009 findings that hold in our reproduction
hold in the quick run too (the others are discussed in README; e.g. the batch sub-gradient Algorithm 2 is as sparse
as the LP at the small radii — only the per-example online variant keeps the paper's tail of small weights).

Every count is recomputed here from the average weights written to weights.npz, and M³N's weights serve as the
negative control: an ℓ2 model has no zero weight, so a counting that always says "sparse" fails.
"""
import json

import numpy as np
import pytest

from mmprog.reproduce import sparsity


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("sparsity")
    assert sparsity.main(["--quick", "--out", str(out)]) == 0
    with open(out / "results.json") as f:
        doc = json.load(f)
    weights = dict(np.load(out / "weights.npz"))
    return out, doc, weights


def _rows(doc, algo):
    return {r["const"]: r for r in doc["table"][algo]}


def _nnz(w):
    return int(np.count_nonzero(np.abs(w) > sparsity.NONZERO_TOL))


def test_outputs_are_written(quick):
    out, doc, weights = quick
    for name in ("fig2.png", "fig3.png", "fig5.png"):
        with open(out / name, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    text = (out / "tables.txt").read_text()
    assert "Table 1" in text and "Figure 5" in text and "Figure 2" in text
    assert "(138)" in text and "(189)" in text          # the paper's numbers are printed beside ours
    assert weights["true_CRF"].shape == (100, 2)
    # the true CRF is zero on the irrelevant inputs by construction
    assert _nnz(weights["true_CRF"][30:]) == 0 and _nnz(weights["true_CRF"][:30]) == 60


def test_counts_match_the_average_weights(quick):
    _, doc, weights = quick
    cp = doc["table"]["cutting_plane"]
    best = doc["chosen"]["l1m3n"]
    key = next(k for k in weights if k.startswith("Cutting-plane"))
    row = next(r for r in cp if np.isclose(r["const"] ** 2 / 100, best))
    assert row["nonzero_total"] == _nnz(weights[key])
    assert row["nonzero_irrelevant"] == _nnz(weights[key][30:])


def test_l2_models_keep_every_weight(quick):
    # Figure 3: M³N and LapM³N have no zero weights — and this makes the sparsity assertions below falsifiable
    _, doc, weights = quick
    for name in ("M3N", "LapM3N"):
        assert _nnz(weights[name]) == 200 and _nnz(weights[name][30:]) == 140
    for r in doc["table"]["m3n"]:
        assert r["nonzero_irrelevant"] == 140


def test_cutting_plane_recovers_the_relevant_features_at_the_sparse_end(quick):
    _, doc, _ = quick
    rows = _rows(doc, "cutting_plane")
    lo, hi = rows[min(rows)], rows[max(rows)]
    # Table 1: at √C = 0.5 the LP keeps almost nothing of the 140 irrelevant state features (paper: 0 of 13)
    assert lo["nonzero_irrelevant"] <= 2
    assert lo["nonzero_total"] <= 20
    m3n = min(doc["table"]["m3n"], key=lambda r: r["nonzero_irrelevant"])
    assert lo["nonzero_irrelevant"] <= m3n["nonzero_irrelevant"] - 130
    # ... and the support grows with C
    assert hi["nonzero_total"] >= 3 * lo["nonzero_total"]


def test_em_support_shrinks_as_lambda_grows(quick):
    _, doc, _ = quick
    rows = _rows(doc, "em")
    lo, hi = rows[min(rows)], rows[max(rows)]
    # Table 1, EM row: λ/14000 = 0.036 keeps (nearly) everything, larger λ removes features (β < 1e-4)
    assert lo["nonzero_irrelevant"] >= 120
    assert hi["nonzero_total"] < lo["nonzero_total"]
    assert hi["nonzero_irrelevant"] < lo["nonzero_irrelevant"]


def test_cutting_plane_is_far_sparser_than_the_online_subgradient_at_the_sparse_end(quick):
    # Table 1 / section 5.3.1: the sub-gradient method keeps many small non-zero weights where the LP keeps none
    _, doc, _ = quick
    cp, sg = _rows(doc, "cutting_plane"), _rows(doc, "subgradient_online")
    assert cp[min(cp)]["nonzero_irrelevant"] + 20 <= sg[min(sg)]["nonzero_irrelevant"]


def test_subgradient_support_grows_with_the_radius(quick):
    _, doc, _ = quick
    rows = _rows(doc, "subgradient")
    lo, hi = rows[min(rows)], rows[max(rows)]
    assert hi["nonzero_total"] >= 100 > lo["nonzero_total"]
