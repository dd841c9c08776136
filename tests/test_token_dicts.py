"""TokenDictExtractor's one-pass fit/transform against a straightforward reference: the per-item walk it replaced
(attribute by attribute through generators, a dict count, one ``csr_matrix((vals, (rows, cols)))`` per sentence).
Same names, groups, columns, matrices to the byte and dtype, and the same error for bad input."""
import collections
import random

import numpy as np
import pytest
import scipy.sparse as sp

from mmprog.exceptions import DataError, ParameterError
from mmprog.features.dicts import TokenDictExtractor


# ------------------------------------------------------------------------------------------------ the reference
def _ref_value_items(name, v, where):
    if isinstance(v, str):
        yield f"{name}:{v}", 1.0
    elif isinstance(v, (bool, np.bool_, int, float, np.integer, np.floating)):
        yield name, float(v)
    elif isinstance(v, dict):
        for k2, v2 in v.items():
            yield from _ref_value_items(f"{name}:{k2}", v2, where)
    elif isinstance(v, (list, tuple)) and all(isinstance(s, str) for s in v):
        for s in v:
            yield f"{name}:{s}", 1.0
    else:
        raise DataError(f"{where}: feature {name!r} has a {type(v).__name__} value; use str, int, float, bool, a "
                        f"dict of those or a list of str")


def _ref_items(tok, i, t):
    where = f"sentence {i}, token {t}"
    if isinstance(tok, dict):
        for k, v in tok.items():
            for f, x in _ref_value_items(str(k), v, where):
                yield f, str(k), x
    elif isinstance(tok, (list, tuple)):
        for f in tok:
            f = str(f)
            cut = [p for p in (f.find(":"), f.find("=")) if p >= 0]
            yield f, f[:min(cut)] if cut else f, 1.0
    else:
        raise DataError(f"{where} is a {type(tok).__name__}; give a dict of features or a list of feature strings")


def ref_fit(X, min_count=1):
    count, group_of, groups = {}, {}, {}
    for i, sent in enumerate(X):
        for t, tok in enumerate(sent):
            for f, g, _ in _ref_items(tok, i, t):
                count[f] = count.get(f, 0) + 1
                if f not in group_of:
                    group_of[f] = groups.setdefault(g, len(groups))
    kept = sorted((f for f in count if count[f] >= min_count), key=lambda f: group_of[f])
    return kept, list(groups), [group_of[f] for f in kept]


def ref_transform(names, X):
    voc = {f: j for j, f in enumerate(names)}
    out = []
    for i, sent in enumerate(X):
        if len(sent) == 0:
            raise DataError(f"sentence {i} is empty; drop empty sentences")
        rows, cols, vals = [], [], []
        for t, tok in enumerate(sent):
            for f, _, v in _ref_items(tok, i, t):
                if f in voc and v != 0.0:
                    rows.append(t)
                    cols.append(voc[f])
                    vals.append(v)
        out.append(sp.csr_matrix((np.asarray(vals, dtype=np.float64), (rows, cols)), shape=(len(sent), len(names))))
    return out


def assert_same_matrices(got, want):
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert type(a) is type(b) and a.shape == b.shape and a.has_canonical_format and b.has_canonical_format
        for f in ("data", "indices", "indptr"):
            u, v = getattr(a, f), getattr(b, f)
            assert u.dtype == v.dtype and u.tobytes() == v.tobytes(), f


# ------------------------------------------------------------------------------------------------ random tokens
def _random_value(rng, depth=0):
    r = rng.random()
    if r < 0.45:
        return rng.choice(["a", "b", "c:d", "e=f", "", "é"])
    if r < 0.55:
        return rng.choice([True, False, np.bool_(True), np.bool_(False)])
    if r < 0.7:
        return rng.choice([0, 1, 2, -3, 0.0, -0.0, 0.5, 2.0, np.float64(2.0), np.int32(2), np.float32(0.25)])
    if r < 0.8 and depth < 2:
        return {rng.choice(["p", "q", 1, "r:s"]): _random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    if r < 0.9:
        return rng.choice([[], ["a"], ["a", "a"], ("b", "c"), ["c:d", "a"]])
    return rng.choice(["x", "y"])


def _random_token(rng):
    r = rng.random()
    if r < 0.08:
        return rng.choice([["w:a", "w=b", "plain", "w:a"], ("t:1",), [3, "n:4"], []])
    keys = ["k0", "k1", "k2", "k2:a", "k3:c", 7, True, "k0:a"]
    tok = {k: _random_value(rng) for k in rng.sample(keys, rng.randint(0, len(keys)))}
    return collections.OrderedDict(tok) if r < 0.12 else tok


def _random_corpus(rng, n):
    return [[_random_token(rng) for _ in range(rng.randint(1, 6))] for _ in range(n)]


@pytest.mark.parametrize("seed", range(12))
def test_fit_transform_is_the_reference_to_the_byte(seed):
    """Random corpora over every value kind the module docstring names (str, bool, numpy bool, int, float, numpy
    numbers, nested dicts with non-str keys, lists with repeats, tokens as attribute lists, keys whose attributes
    collide with other keys' such as ``k2:a`` beside ``k2 = 'a'``): names, group order, groups and every matrix
    equal the reference's, for fit + transform, fit_transform and unseen data, at min_count 1 and 2."""
    rng = random.Random(seed)
    X, X_new = _random_corpus(rng, 40), _random_corpus(rng, 15)
    for min_count in (1, 2):
        names, group_names, groups = ref_fit(X, min_count)
        ex = TokenDictExtractor(min_count=min_count).fit(X)
        assert ex.feature_names_ == names and ex.group_names_ == group_names and ex.n_features_ == len(names)
        assert ex.groups_.dtype == np.int64 and ex.groups_.tolist() == groups
        assert_same_matrices(ex.transform(X), ref_transform(names, X))
        assert_same_matrices(ex.transform(X_new), ref_transform(names, X_new))
        ex2 = TokenDictExtractor(min_count=min_count)
        assert_same_matrices(ex2.fit_transform(X), ref_transform(names, X))
        assert ex2.feature_names_ == names and ex2.group_names_ == group_names and ex2.groups_.tolist() == groups


def test_repeated_attributes_of_a_token_are_summed_as_csr_sums_them():
    """An attribute given twice in a token (a list with a repeat, a key colliding with a nested key) is one entry
    holding the sum, as ``csr_matrix`` sums duplicates."""
    tok = {"l": ["p", "p", "q"], "e": {"f": 2.5}, "e:f": 1.0}
    ex = TokenDictExtractor()
    m = ex.fit_transform([[tok]])[0]
    got = dict(zip((ex.feature_names_[j] for j in m.indices), m.data))
    assert got == {"l:p": 2.0, "l:q": 1.0, "e:f": 3.5}
    assert_same_matrices([m], ref_transform(ex.feature_names_, [[tok]]))


def _error(fn):
    try:
        fn()
    except Exception as exc:          # the type and message are what is compared
        return type(exc), str(exc)
    return None


@pytest.mark.parametrize("bad", [
    [[{"a": "x"}], [{"a": None}]],                       # a None value
    [[{"a": "x"}, {"b": {"c": [1, 2]}}]],                 # a list of non-str inside a nested dict
    [[{"a": "x"}], ["t:1", 5], [{"z": object()}]],       # a non-str attribute in a list token comes through str()
    [[{"a": "x"}], [3]],                                 # a token that is neither dict nor list
    [[{"a": "x"}], [], [{"a": None}]],                   # an empty sentence before a bad value
    [[{"a": "x"}], [{"b": 1}], []],                      # an empty sentence last
    [[{"a": "x"}], [], [{"b": 1}], []],                  # two empty sentences: the first is named
    [[{"a": "x", 1: set()}]],                            # a non-str key with a bad value
])
def test_bad_input_raises_what_the_reference_raises(bad):
    """The first bad token raises the reference's error (type and message); an empty sentence is fine in fit, an
    error in transform at the point the reference reaches it, and fit_transform raises what fit then transform
    raise."""
    def ref_fit_transform():
        names = ref_fit(bad)[0]
        return ref_transform(names, bad)
    want_fit, want_ft = _error(lambda: ref_fit(bad)), _error(ref_fit_transform)
    assert want_ft is not None
    assert _error(lambda: TokenDictExtractor().fit(bad)) == want_fit
    assert _error(lambda: TokenDictExtractor().fit_transform(bad)) == want_ft
    ex = TokenDictExtractor().fit([[{"a": "x", "b": 1}]])
    assert _error(lambda: ex.transform(bad)) == _error(lambda: ref_transform(ex.feature_names_, bad))


def test_parameter_errors():
    with pytest.raises(ParameterError, match="min_count must be an int >= 1; got 0"):
        TokenDictExtractor(min_count=0).fit_transform([[{"a": "x"}]])
    with pytest.raises(ParameterError, match="not fitted"):
        TokenDictExtractor().transform([[{"a": "x"}]])


def test_sentences_are_views_the_chain_map_stacks_without_a_copy():
    """fit_transform's and transform's sentences are consecutive row views of one matrix (as a template
    extractor's), so the chain map's prepare stacks them back sharing its memory, the same matrix as the vstack it
    replaces; a sentence's matrix still reads as the reference's (above) and a subset in another order is copied."""
    from mmprog.datasets.base import SequenceDataset
    from mmprog.features import ChainFeatureMap
    rng = random.Random(5)
    X = _random_corpus(rng, 30)
    ex = TokenDictExtractor()
    for mats in (ex.fit_transform(X), ex.transform(X)):
        assert len({id(m.data.base) for m in mats}) == 1 and mats[0].data.base is not None
        assert len({id(m.indices.base) for m in mats}) == 1
        ds = SequenceDataset(mats, [np.zeros(m.shape[0], dtype=np.int64) for m in mats], n_labels=2)
        fmap = ChainFeatureMap.from_dataset(ds)
        Xs = fmap.prepare(ds).data["X"]
        assert np.shares_memory(Xs.data, mats[0].data) and np.shares_memory(Xs.indices, mats[0].indices)
        assert (Xs != sp.vstack(mats, format="csr")).nnz == 0
        sub = ds.subset(np.array([7, 2, 11]))
        Xsub = fmap.prepare(sub).data["X"]
        assert not np.shares_memory(Xsub.data, mats[0].data)
        assert (Xsub != sp.vstack([mats[7], mats[2], mats[11]], format="csr")).nnz == 0
