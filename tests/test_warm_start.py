"""Warm starts of the cutting plane along a C path: a fit at C₂ seeded with the active cuts of a fit at C₁.

Truth: the full program with every labeling as an explicit constraint, solved by highspy directly at C₂
(tests/_enumerated.py), independent of mmprog's feature maps, programs and solvers. A seeded master at C₂ holds
cuts found at C₁; they are valid at every C (wᵀΔF ≥ Δℓ − ξ has no C), so the warm fit must reach the optimum at C₂
within its certificate, as the cold one does.
"""
import random

import numpy as np
import pytest

import mmprog
from mmprog.engine.checkpoint import active_cuts
from mmprog.exceptions import ParameterError

from _enumerated import solve_full, tiny


CASES = [("m3n", {"master": "primal"}), ("m3n", {"master": "dual"}), ("l1m3n", {})]


@pytest.mark.parametrize("slack", ["n", "one"])
@pytest.mark.parametrize("program,kw", CASES)
def test_warm_fit_at_the_next_C_reaches_the_enumerated_optimum(program, kw, slack):
    ds = tiny(seed=3)
    C1, C2, eps = 0.2, 0.7, 1e-4
    norm = "l2" if program == "m3n" else "l1"
    opt, _ = solve_full(ds, C2, norm)
    first = mmprog.fit(ds, program=program, C=C1, slack=slack, eps=eps, drop_after=3, **kw)
    cuts, labelings = active_cuts(first.model.ws)
    n_seed = len(cuts) + len(labelings)
    assert n_seed == int(first.model.ws.active_mask().sum()) > 0
    warm = mmprog.fit(ds, program=program, C=C2, slack=slack, eps=eps, warm_start=first, **kw)
    cold = mmprog.fit(ds, program=program, C=C2, slack=slack, eps=eps, **kw)
    assert warm.route == cold.route == "cutting-plane"
    # the seeded master starts with exactly the earlier fit's active cuts, then grows
    assert warm.warm_start_cuts == n_seed
    assert not hasattr(cold, "warm_start_cuts")
    ws, ws1 = warm.model.ws, first.model.ws
    keep = np.flatnonzero(ws1.active_mask())
    assert np.allclose(ws.dl_array()[:n_seed], ws1.dl_array()[keep])
    assert np.allclose(ws.dF()[:n_seed].toarray(), ws1.dF()[keep].toarray())
    tol = 1e-5 * max(1.0, abs(opt))
    for res in (warm, cold):
        assert res.termination == "converged"
        assert res.params["C"] == C2
        # the master's optimum is a lower bound on the optimum at C₂; an ε-feasible w costs at most C·n·ε more
        assert res.primal_objective <= opt + tol
        assert opt <= res.primal_objective + C2 * len(ds) * eps + tol
        assert res.upper_bound >= opt - tol
        # the round history is this fit's own (the first fit's rounds belong to C₁)
        assert len(res.history) == res.n_iter


def test_seed_holds_labeling_cuts_made_on_the_new_fits_tokens():
    """1-slack m3n with the Gram dual on sparse 0/1 token features holds its cuts as labelings: the seed carries them
    as labelings too (made on the new fit's token matrix), and the warm fit still reaches the optimum at C₂."""
    import scipy.sparse as sp
    from mmprog.cuts import LabelingBlock
    from mmprog.datasets.base import SequenceDataset
    rng = np.random.default_rng(2)
    X = [sp.csr_matrix((rng.random((3, 5)) < 0.5).astype(np.float64)) for _ in range(5)]
    Y = [rng.integers(0, 2, size=3) for _ in range(5)]
    ds = SequenceDataset(X, Y, n_labels=2)
    C1, C2, eps = 0.3, 1.0, 1e-4
    opt, _ = solve_full(ds, C2, "l2")
    first = mmprog.fit(ds, program="m3n", master="dual", C=C1, slack="one", eps=eps, max_iter=2000)
    cuts, labelings = active_cuts(first.model.ws)
    assert labelings and not len(cuts)
    warm = mmprog.fit(ds, program="m3n", master="dual", C=C2, slack="one", eps=eps, max_iter=2000, warm_start=first)
    assert warm.warm_start_cuts == len(labelings)
    ws = warm.model.ws
    assert all(ws.labeling_of(p) is not None for p in range(len(labelings)))
    assert any(isinstance(B, LabelingBlock) for _, B, _ in ws._segments)
    assert warm.termination == "converged"
    tol = 1e-6 * max(1.0, abs(opt))
    assert opt - tol <= warm.primal_objective <= opt + C2 * len(ds) * eps + tol
    assert warm.upper_bound >= opt - tol


def test_a_mismatching_warm_start_is_refused_in_one_line():
    ds = tiny(seed=3)
    first = mmprog.fit(ds, program="m3n", C=0.2, slack="n", eps=1e-3, route="cutting-plane")
    other = tiny(seed=3, irrelevant=2)                          # other input features: another feature map
    cases = [dict(dataset=ds, program="l1m3n", slack="n"),      # another program
             dict(dataset=ds, program="m3n", slack="one"),      # another slack form
             dict(dataset=other, program="m3n", slack="n"),     # another feature map
             dict(dataset=tiny(seed=3, n=7), program="m3n", slack="n")]   # other data: another number of slacks
    for case in cases:
        with pytest.raises(ParameterError) as e:
            mmprog.fit(case.pop("dataset"), C=0.7, eps=1e-3, route="cutting-plane", warm_start=first, **case)
        msg = str(e.value)
        assert "\n" not in msg and msg.startswith("warm_start ")
    with pytest.raises(ParameterError, match="warm_start"):
        mmprog.fit(ds, C=0.7, eps=1e-3, route="cutting-plane", warm_start=object())


def _random_treebank(path, n_sent, seed):
    """Random projective trees (each token's head a neighbour's subtree root) whose arcs the tags half explain."""
    rng = random.Random(seed)
    with open(path, "w") as fh:
        for s in range(n_sent):
            n = rng.randint(3, 7)
            tags = [rng.choice(["NOUN", "VERB", "ADJ", "ADP"]) for _ in range(n)]
            # a random projective tree: a random binary bracketing, each span's head its leftmost VERB or first token
            heads = [0] * n

            def build(lo, hi):
                if lo == hi:
                    return lo
                k = rng.randint(lo, hi - 1)
                a, b = build(lo, k), build(k + 1, hi)
                if tags[b] == "VERB" and tags[a] != "VERB" or rng.random() < 0.3:
                    heads[a] = b + 1
                    return b
                heads[b] = a + 1
                return a
            root = build(0, n - 1)
            heads[root] = 0
            fh.write(f"# sent_id = {s}\n")
            for i in range(n):
                fh.write(f"{i + 1}\tw{rng.randint(0, 5)}\t_\t{tags[i]}\t{tags[i][:2]}\t_\t{heads[i]}\t"
                         f"{'root' if heads[i] == 0 else 'dep'}\t_\t_\n")
            fh.write("\n")


def test_select_parser_warm_starts_the_next_C(tmp_path):
    from mmprog.datasets import load_conllu
    from mmprog.parsing import select_parser
    _random_treebank(tmp_path / "t.conllu", 30, 1)
    _random_treebank(tmp_path / "d.conllu", 10, 2)
    train, dev = load_conllu(tmp_path / "t.conllu"), load_conllu(tmp_path / "d.conllu")
    kw = dict(slack="one", eps=0.05, drop_after=5)
    best, rows = select_parser(train, dev, ["mcdonald05"], [0.1, 0.3], kw, projective=True)
    assert [r["C"] for r in rows] == [0.1, 0.3]
    assert rows[0]["warm_start_cuts"] == 0 and rows[1]["warm_start_cuts"] > 0
    for r in rows:
        assert set(r) >= {"templates", "C", "termination", "n_iter", "gap", "seconds", "dev_uas", "dev_uas_no_punct"}
        assert r["termination"] in ("converged", "eps") and 0.0 <= r["dev_uas"] <= 1.0
    # the cold fit at the second C, for comparison: the warm one needs no more rounds
    from mmprog.features.arcs import ArcFeatureMap
    cold = mmprog.fit(train, feature_map=ArcFeatureMap("mcdonald05", projective=True).fit(train), C=0.3, **kw)
    assert rows[1]["n_iter"] <= cold.n_iter
    assert best.params["C"] in (0.1, 0.3)


def test_token_text_C_path_on_the_cutting_plane_is_warm(tmp_path, capsys):
    """``mmprog train --templates ... --dev --C-grid`` with a cutting-plane setting (``--eps``): every C after the
    first starts from the previous C's cuts (the text features are fitted again for each C, to the same fingerprint)."""
    import json
    from mmprog.cli import main
    from test_tagging import _sentences, _write
    train = tmp_path / "train.txt"
    _write(train, _sentences(40, 0))
    rc = main(["train", "--data", f"conll:{train},columns=form/pos/ne", "--templates", "ner", "--dev", "0.25",
               "--C-grid", "0.1,0.3", "--eps", "0.01", "--json"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    rows = json.loads(out.out)["candidates"]
    assert [r["route"] for r in rows] == ["cutting-plane"] * 2
    assert [r["warm_start"] for r in rows] == [False, True]
    assert all(r["termination"] in ("converged", "eps") for r in rows)
