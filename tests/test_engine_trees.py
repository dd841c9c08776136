"""Dependency trees through the same engine: the cutting-plane optimum equals the program with every tree of every
4-word sentence as an explicit constraint (solved by highspy directly, outside mmprog's programs and solvers:
tests/_enumerated.py)."""
import itertools

import numpy as np
import pytest

import mmprog

from _enumerated import solve_enumerated

arcs = pytest.importorskip("mmprog.features.arcs")


def all_trees(n):
    """Every head vector (heads[0] = -1) of n tokens that is a tree rooted at 0 (Cayley: (n+1)^(n-1) of them)."""
    out = []
    for h in itertools.product(range(n + 1), repeat=n):
        heads = (-1,) + h
        ok = True
        for m in range(1, n + 1):
            seen, v = set(), m
            while v != 0:
                if v in seen or heads[v] == v:
                    ok = False
                    break
                seen.add(v)
                v = heads[v]
            if not ok:
                break
        if ok:
            out.append(np.array(heads))
    return out


def full_optimum(fmap, prep, C):
    n = prep.n
    rows, losses, ex = [], [], []
    for i in range(n):
        trees = all_trees(int(prep.lengths[i]))
        labs = np.array(trees)
        dF, dl = fmap.delta(prep, np.full(len(trees), i), labs)
        rows.append(dF.toarray())
        losses.append(dl)
        ex.append(np.full(len(trees), i))
    A, l, ex = np.vstack(rows), np.concatenate(losses), np.concatenate(ex)
    return solve_enumerated(A, l, ex, n, C)[0]


@pytest.mark.parametrize("slack", ["n", "one"])
def test_tree_cutting_plane_matches_enumeration(slack):
    from mmprog.datasets.synthetic import tiny_trees
    ds = tiny_trees(n_sentences=6, n_words=4, seed=1)
    fmap = arcs.ArcFeatureMap().fit(ds)
    prep = fmap.prepare(ds)
    C, eps = 0.5, 1e-4
    opt = full_optimum(fmap, prep, C)
    res = mmprog.fit(ds, program="m3n", C=C, slack=slack, eps=eps, feature_map=fmap, master="dual")
    assert res.termination == "converged"
    assert res.primal_objective <= opt + 1e-5 * max(1, opt)
    assert opt <= res.primal_objective + C * len(ds) * eps + 1e-5 * max(1, opt)
    pred = res.predict(ds)
    assert all(p[0] == -1 and len(p) == len(h) + 1 for p, h in zip(pred, ds.heads))
    ev = res.evaluate(ds)
    assert 0.0 <= ev["uas"] <= 1.0 and ev["n_sentences"] == len(ds)
