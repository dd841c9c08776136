"""The data model: validation errors (one per case, one line naming the example and field), conversions, indexing,
subsets and folds. Tree validity and projectivity are refereed by networkx / a brute-force definition."""
import itertools

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from mmprog.datasets import HierarchicalDataset, SequenceDataset, TokenCorpus, TreeDataset
from mmprog.exceptions import DataError, ParameterError


def raises_one_line(exc_type, fn, *must_contain):
    with pytest.raises(exc_type) as info:
        fn()
    msg = str(info.value)
    assert "\n" not in msg, msg
    for s in must_contain:
        assert s in msg, (s, msg)
    return msg


def make_seq(n=5, d=3, K=3, seed=0, sparse=False):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 6, size=n)
    X = [rng.standard_normal((t, d)) for t in lengths]
    if sparse:
        X = [sp.csr_matrix(x) for x in X]
    Y = [rng.integers(0, K, size=t) for t in lengths]
    return X, Y


# ---------------------------------------------------------------------------------------------- SequenceDataset
class TestSequenceValidation:
    def test_valid_dense_and_attributes(self):
        X, Y = make_seq()
        ds = SequenceDataset(X, Y, 3, name="toy")
        assert len(ds) == 5 and ds.n_features == 3 and ds.n_labels == 3
        assert ds.lengths.dtype == np.int64 and list(ds.lengths) == [len(y) for y in Y]
        assert ds.groups.dtype == np.int64 and (ds.groups == 0).all() and ds.group_names == ["x"]
        assert not ds.is_sparse and ds.fold_ids is None and ds.label_names is None
        assert ds.X[0] is X[0]  # dense float arrays are kept, not copied

    def test_count_mismatch(self):
        X, Y = make_seq()
        raises_one_line(DataError, lambda: SequenceDataset(X, Y[:-1], 3), "X has 5 sequences but Y has 4")

    def test_no_sequences(self):
        raises_one_line(DataError, lambda: SequenceDataset([], [], 3), "no sequences")

    @pytest.mark.parametrize("bad", [0, -1, 2.0, True])
    def test_n_labels(self, bad):
        X, Y = make_seq()
        raises_one_line(DataError, lambda: SequenceDataset(X, Y, bad), "n_labels")

    def test_length_mismatch(self):
        X, Y = make_seq()
        Y[2] = np.append(Y[2], 0)
        raises_one_line(DataError, lambda: SequenceDataset(X, Y, 3), "sequence 2", f"{len(X[2])} rows",
                        f"{len(Y[2])} labels")

    @pytest.mark.parametrize("value", [3, -2])
    def test_label_out_of_range(self, value):
        X, Y = make_seq()
        Y[1] = Y[1].copy()
        Y[1][-1] = value
        raises_one_line(DataError, lambda: SequenceDataset(X, Y, 3), "sequence 1", f"label {value}",
                        f"position {len(Y[1]) - 1}", "[-1, 3)")

    def test_hidden_label_allowed(self):
        X, Y = make_seq()
        Y[0] = np.full(len(Y[0]), -1)
        ds = SequenceDataset(X, Y, 3)
        assert not ds.observed(0).any() and ds.n_observed == sum(len(y) for y in Y[1:])

    def test_nan_dense(self):
        X, Y = make_seq()
        X[3] = X[3].copy()
        X[3][0, 1] = np.nan
        raises_one_line(DataError, lambda: SequenceDataset(X, Y, 3), "sequence 3", "NaN or inf")

    def test_inf_sparse(self):
        X, Y = make_seq(sparse=True)
        X[4] = X[4].copy()
        X[4].data[0] = np.inf
        raises_one_line(DataError, lambda: SequenceDataset(X, Y, 3), "sequence 4", "NaN or inf")

    def test_empty_sequence(self):
        X, Y = make_seq()
        X[1], Y[1] = np.zeros((0, 3)), np.zeros(0, dtype=int)
        raises_one_line(DataError, lambda: SequenceDataset(X, Y, 3), "sequence 1", "empty")

    def test_mixed_widths(self):
        X, Y = make_seq()
        X[2] = np.zeros((len(Y[2]), 4))
        raises_one_line(DataError, lambda: SequenceDataset(X, Y, 3), "sequence 2", "4 features", "3")

    def test_fractional_float_labels(self):
        X, Y = make_seq()
        Y[0] = Y[0].astype(float)
        Y[0][0] = 0.5
        raises_one_line(DataError, lambda: SequenceDataset(X, Y, 3), "sequence 0", "not an integer")

    def test_integral_float_labels_converted(self):
        X, Y = make_seq()
        ds = SequenceDataset(X, [y.astype(float) for y in Y], 3)
        assert all(y.dtype == np.int64 for y in ds.Y) and all((a == b).all() for a, b in zip(ds.Y, Y))

    def test_string_labels(self):
        X, Y = make_seq()
        Y[1] = np.array(["a"] * len(Y[1]))
        raises_one_line(DataError, lambda: SequenceDataset(X, Y, 3), "sequence 1", "dtype", "to_sequence_dataset")

    def test_object_features(self):
        X, Y = make_seq()
        X[0] = np.array([[object()] * 3] * len(Y[0]))
        raises_one_line(DataError, lambda: SequenceDataset(X, Y, 3), "sequence 0", "dtype object")

    def test_one_dimensional_features(self):
        X, Y = make_seq()
        X[0] = np.zeros(len(Y[0]))
        raises_one_line(DataError, lambda: SequenceDataset(X, Y, 3), "sequence 0", "2-D")

    def test_single_matrix_instead_of_list(self):
        raises_one_line(DataError, lambda: SequenceDataset(np.zeros((4, 3)), [np.zeros(4, int)], 2), "list")

    def test_groups_wrong_length(self):
        X, Y = make_seq()
        raises_one_line(DataError, lambda: SequenceDataset(X, Y, 3, groups=[0, 1]), "groups", "(3,)")

    def test_groups_negative(self):
        X, Y = make_seq()
        raises_one_line(DataError, lambda: SequenceDataset(X, Y, 3, groups=[0, -1, 1]), "groups",
                        "feature 1")

    def test_group_names_too_few(self):
        X, Y = make_seq()
        raises_one_line(DataError, lambda: SequenceDataset(X, Y, 3, groups=[0, 1, 2], group_names=["a", "b"]),
                        "group_names has 2 names")

    def test_label_names_wrong_length(self):
        X, Y = make_seq()
        raises_one_line(DataError, lambda: SequenceDataset(X, Y, 3, label_names=["a", "b"]), "label_names")

    def test_feature_names_wrong_length(self):
        X, Y = make_seq()
        raises_one_line(DataError, lambda: SequenceDataset(X, Y, 3, feature_names=["a"]), "feature_names")

    def test_fold_ids_wrong_shape(self):
        X, Y = make_seq()
        raises_one_line(DataError, lambda: SequenceDataset(X, Y, 3, fold_ids=[0, 1]), "fold_ids", "(5,)")

    def test_name_in_message(self):
        X, Y = make_seq()
        Y[0] = Y[0][:-1]
        raises_one_line(DataError, lambda: SequenceDataset(X, Y, 3, name="mine"), "'mine'", "sequence 0")

    def test_conversions(self):
        X, Y = make_seq()
        Xi = [np.round(x).astype(np.int32) for x in X]
        ds = SequenceDataset(Xi, Y, 3)
        assert all(x.dtype == np.float64 for x in ds.X)
        ds = SequenceDataset([x > 0 for x in X], Y, 3)
        assert all(x.dtype == np.float64 and set(np.unique(x)) <= {0.0, 1.0} for x in ds.X)
        ds = SequenceDataset([x.astype(np.float32) for x in X], Y, 3)
        assert all(x.dtype == np.float32 for x in ds.X)  # floats are kept as given
        ds = SequenceDataset([sp.coo_matrix(x) for x in X], Y, 3)
        assert ds.is_sparse and all(x.format == "csr" for x in ds.X)
        assert all(np.allclose(a.toarray(), b) for a, b in zip(ds.X, X))
        ds = SequenceDataset([sp.csr_matrix(x, dtype=np.int64) for x in Xi], Y, 3)
        assert all(x.dtype == np.float64 for x in ds.X)
        ds = SequenceDataset([sp.csr_array(x) for x in X], Y, 3)
        assert all(isinstance(x, sp.csr_matrix) for x in ds.X)
        csr = [sp.csr_matrix(x) for x in X]
        assert all(a is b for a, b in zip(SequenceDataset(csr, Y, 3).X, csr))  # CSR kept as given

    @pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
    def test_np_matrix_becomes_ndarray(self):
        X, Y = make_seq()
        ds = SequenceDataset([np.asmatrix(x) for x in X], Y, 3)
        assert all(type(x) is np.ndarray for x in ds.X)

    def test_groups_and_names_kept(self):
        X, Y = make_seq()
        ds = SequenceDataset(X, Y, 3, groups=[0, 2, 2], label_names="abc", feature_names=["f0", "f1", "f2"])
        assert ds.group_names == ["g0", "g1", "g2"] and ds.label_names == ["a", "b", "c"]
        assert list(ds.groups) == [0, 2, 2]


class TestSequenceIndexing:
    def setup_method(self):
        X, Y = make_seq(n=10)
        self.ds = SequenceDataset(X, Y, 3, groups=[0, 1, 1], group_names=["a", "b"], label_names=["p", "q", "r"],
                                  feature_names=["u", "v", "w"], fold_ids=np.arange(10) % 3, name="toy")
        self.ds.info["note"] = "kept"

    def test_int_returns_tuple(self):
        x, y = self.ds[3]
        assert x is self.ds.X[3] and y is self.ds.Y[3]
        x, y = self.ds[-1]
        assert x is self.ds.X[9]
        x, _ = self.ds[np.int64(2)]
        assert x is self.ds.X[2]

    @pytest.mark.parametrize("bad", [10, -11])
    def test_int_out_of_range(self, bad):
        with pytest.raises(IndexError):
            self.ds[bad]

    def check_subset(self, sub, idx):
        assert isinstance(sub, SequenceDataset) and len(sub) == len(idx)
        for j, i in enumerate(idx):
            assert sub.X[j] is self.ds.X[i] and sub.Y[j] is self.ds.Y[i]
        assert list(sub.lengths) == [self.ds.lengths[i] for i in idx]
        assert list(sub.fold_ids) == [self.ds.fold_ids[i] for i in idx]
        assert sub.group_names == ["a", "b"] and list(sub.groups) == [0, 1, 1]
        assert sub.label_names == ["p", "q", "r"] and sub.feature_names == ["u", "v", "w"]
        assert sub.name == "toy" and sub.info["note"] == "kept" and sub.n_features == 3 and sub.n_labels == 3

    def test_slice(self):
        self.check_subset(self.ds[2:8:2], [2, 4, 6])

    def test_int_array_keeps_order_and_duplicates(self):
        self.check_subset(self.ds[np.array([7, 1, 1, -1])], [7, 1, 1, 9])
        self.check_subset(self.ds[[0, 5]], [0, 5])

    def test_bool_mask(self):
        mask = np.zeros(10, dtype=bool)
        mask[[1, 4]] = True
        self.check_subset(self.ds[mask], [1, 4])

    def test_bool_mask_wrong_length(self):
        with pytest.raises(IndexError):
            self.ds[np.ones(3, dtype=bool)]

    def test_array_out_of_range(self):
        with pytest.raises(IndexError):
            self.ds[np.array([0, 10])]

    def test_float_array_rejected(self):
        with pytest.raises(IndexError):
            self.ds[np.array([0.0, 1.0])]

    def test_subset(self):
        self.check_subset(self.ds.subset([3, 2]), [3, 2])
        self.check_subset(self.ds.subset(slice(None, 2)), [0, 1])
        self.check_subset(self.ds.subset(4), [4])

    def test_empty_subset(self):
        sub = self.ds[np.zeros(10, dtype=bool)]
        assert len(sub) == 0 and sub.n_features == 3 and not sub.is_sparse

    def test_iteration(self):
        assert [y is self.ds.Y[i] for i, (_, y) in enumerate(self.ds)] == [True] * 10

    @pytest.mark.parametrize("k", [2, 3, 10])
    def test_kfold_partition(self, k):
        folds = self.ds.folds(k, seed=1)
        assert len(folds) == k
        tests = np.concatenate([te for _, te in folds])
        assert sorted(tests) == list(range(10))
        for tr, te in folds:
            assert tr.dtype == np.int64 and te.dtype == np.int64
            assert sorted(np.concatenate([tr, te])) == list(range(10)) and not set(tr) & set(te)
            assert abs(len(te) - 10 / k) < 1
        again = self.ds.folds(k, seed=1)
        assert all((a[1] == b[1]).all() for a, b in zip(folds, again))

    def test_kfold_seed_changes_split(self):
        a = [tuple(te) for _, te in self.ds.folds(5, seed=0)]
        b = [tuple(te) for _, te in self.ds.folds(5, seed=1)]
        assert a != b

    def test_source_folds(self):
        folds = self.ds.folds()
        assert len(folds) == 3
        for f, (tr, te) in enumerate(folds):
            assert (self.ds.fold_ids[te] == f).all() and (self.ds.fold_ids[tr] != f).all()
            assert len(tr) + len(te) == 10

    @pytest.mark.parametrize("k", [1, 11, 2.5])
    def test_bad_k(self, k):
        raises_one_line(ParameterError, lambda: self.ds.folds(k), "k must be")

    def test_no_source_folds(self):
        X, Y = make_seq()
        raises_one_line(ParameterError, lambda: SequenceDataset(X, Y, 3).folds(), "fold_ids")

    def test_hide_labels(self):
        hidden = self.ds.hide_labels(0.5, seed=3)
        for y0, y1 in zip(self.ds.Y, hidden.Y):
            assert (y1 == -1).sum() == round(0.5 * len(y0))
            assert ((y1 == y0) | (y1 == -1)).all()
        assert all((a >= 0).all() for a in self.ds.Y)  # the original is untouched
        with pytest.raises(ParameterError):
            self.ds.hide_labels(1.5)


# ---------------------------------------------------------------------------------------------- TreeDataset
def is_tree_networkx(heads):
    """Referee: heads (1-based, 0 = root) form an arborescence rooted at 0 over 0..n."""
    n = len(heads)
    if any(h < 0 or h > n for h in heads):
        return False
    g = nx.DiGraph()
    g.add_nodes_from(range(n + 1))
    g.add_edges_from((int(h), m + 1) for m, h in enumerate(heads))
    return nx.is_arborescence(g) and g.in_degree(0) == 0


def is_projective_bruteforce(heads):
    """Referee: every token strictly between a head and its modifier is a descendant of that head."""
    n = len(heads)
    full = [0] + list(heads)

    def dominated(h, t):
        while t != 0:
            if t == h:
                return True
            t = full[t]
        return h == 0

    for m in range(1, n + 1):
        h = full[m]
        for t in range(min(h, m) + 1, max(h, m)):
            if not dominated(h, t):
                return False
    return True


def sent(n):
    return {"form": [f"w{i}" for i in range(n)], "pos": [f"T{i}" for i in range(n)]}


class TestTreeValidation:
    def test_defaults_and_order(self):
        s = {"pos": ["A", "B"], "extra": ["x", "y"], "form": ["a", "b"]}
        ds = TreeDataset([s], [np.array([2, 0])], name="t")
        assert list(ds.sentences[0]) == ["form", "lemma", "cpos", "pos", "extra"]
        assert ds.sentences[0]["lemma"] == ["_", "_"] and ds.sentences[0]["cpos"] == ["A", "B"]
        assert s == {"pos": ["A", "B"], "extra": ["x", "y"], "form": ["a", "b"]}  # input untouched
        assert ds.heads[0].dtype == np.int64 and list(ds.lengths) == [2] and ds.n_tokens == 2

    def test_all_small_head_vectors_against_networkx(self):
        # every head vector over [0, n] for n <= 4 (plus out-of-range values): accepted iff networkx says tree
        for n in range(1, 5):
            for heads in itertools.product(range(-1, n + 2), repeat=n):
                ok = is_tree_networkx(heads)
                try:
                    TreeDataset([sent(n)], [np.array(heads)])
                    accepted = True
                except DataError as exc:
                    assert "\n" not in str(exc) and "sentence 0" in str(exc)
                    accepted = False
                assert accepted == ok, heads

    def test_projective_against_bruteforce(self):
        heads_all = [h for n in range(1, 6) for h in itertools.product(range(n + 1), repeat=n)
                     if is_tree_networkx(h)]
        ds = TreeDataset([sent(len(h)) for h in heads_all], [np.array(h) for h in heads_all])
        expected = np.array([is_projective_bruteforce(h) for h in heads_all])
        assert (ds.projective() == expected).all()
        assert expected.any() and not expected.all()

    def test_head_out_of_range(self):
        raises_one_line(DataError, lambda: TreeDataset([sent(3), sent(3)], [np.array([0, 1, 1]), np.array([0, 4, 1])]),
                        "sentence 1", "token 2", "head 4", "[0, 3]")

    def test_self_loop(self):
        raises_one_line(DataError, lambda: TreeDataset([sent(3)], [np.array([0, 2, 1])]), "sentence 0", "token 2",
                        "own head")

    def test_no_root(self):
        raises_one_line(DataError, lambda: TreeDataset([sent(2)], [np.array([2, 1])]), "sentence 0", "head 0")

    def test_cycle_names_tokens(self):
        msg = raises_one_line(DataError, lambda: TreeDataset([sent(4)], [np.array([0, 3, 4, 2])]), "sentence 0",
                              "cycle")
        assert "2 -> 3 -> 4 -> 2" in msg  # token 2 heads 3, 3 heads 4, 4 heads 2

    def test_several_root_children_allowed(self):
        ds = TreeDataset([sent(3)], [np.array([0, 0, 2])])
        assert (ds.heads[0] == 0).sum() == 2

    def test_missing_pos(self):
        raises_one_line(DataError, lambda: TreeDataset([{"form": ["a"]}], [np.array([0])]), "sentence 0", "'pos'")

    def test_columns_unequal(self):
        s = sent(3)
        s["lemma"] = ["a", "b"]
        raises_one_line(DataError, lambda: TreeDataset([sent(1), s], [np.array([0]), np.array([0, 1, 1])]),
                        "sentence 1", "'lemma'", "2 entries")

    def test_non_string_column(self):
        s = sent(2)
        s["form"] = ["a", 3]
        raises_one_line(DataError, lambda: TreeDataset([s], [np.array([0, 1])]), "sentence 0", "'form'")

    def test_heads_wrong_length(self):
        raises_one_line(DataError, lambda: TreeDataset([sent(3)], [np.array([0, 1])]), "sentence 0", "3 tokens")

    def test_fractional_heads(self):
        raises_one_line(DataError, lambda: TreeDataset([sent(2)], [np.array([0, 1.5])]), "sentence 0",
                        "integers")

    def test_empty_sentence(self):
        raises_one_line(DataError, lambda: TreeDataset([sent(0)], [np.array([], dtype=int)]), "sentence 0",
                        "empty")

    def test_count_mismatch(self):
        raises_one_line(DataError, lambda: TreeDataset([sent(1)], []), "1 sentences but 0")

    def test_indexing_and_folds(self):
        ds = TreeDataset([sent(k) for k in (1, 2, 3, 4)], [np.zeros(k, dtype=int) for k in (1, 2, 3, 4)],
                         fold_ids=[0, 0, 1, 1], name="t")
        s, h = ds[2]
        assert s is ds.sentences[2] and h is ds.heads[2]
        sub = ds[np.array([True, False, True, False])]
        assert isinstance(sub, TreeDataset) and list(sub.lengths) == [1, 3] and list(sub.fold_ids) == [0, 1]
        assert sub.name == "t"
        assert [list(te) for _, te in ds.folds()] == [[0, 1], [2, 3]]
        assert sorted(np.concatenate([te for _, te in ds.folds(2, seed=5)])) == [0, 1, 2, 3]


# ---------------------------------------------------------------------------------------------- HierarchicalDataset
class TestHierarchical:
    def make(self):
        X = [np.ones((4, 2)), np.ones((3, 2))]
        parents = [np.array([-1, 0, 1, 1]), np.array([-1, 0, -1])]
        Y = [np.array([-1, -1, 0, 1]), np.array([1, 0, 2])]
        return X, parents, Y

    def test_valid(self):
        X, P, Y = self.make()
        ds = HierarchicalDataset(X, P, Y, 3)
        assert list(ds.sizes) == [4, 3] and ds.n_observed == 5
        assert list(ds.observed(0)) == [False, False, True, True]
        assert list(ds.leaf_mask(0)) == [False, False, True, True]
        assert list(ds.leaf_mask(1)) == [False, True, True]
        assert list(ds.depth(0)) == [0, 1, 2, 2] and list(ds.depth(1)) == [0, 1, 0]
        x, p, y = ds[1]
        assert p is ds.parents[1]
        sub = ds[[1]]
        assert isinstance(sub, HierarchicalDataset) and sub.parents[0] is ds.parents[1]

    def test_leaf_and_depth_against_networkx(self):
        rng = np.random.default_rng(0)
        for _ in range(50):
            N = int(rng.integers(1, 9))
            p = np.array([-1] + [int(rng.integers(-1, j)) for j in range(1, N)])
            ds = HierarchicalDataset([np.zeros((N, 1))], [p], [np.zeros(N, int)], 1)
            g = nx.DiGraph()
            g.add_nodes_from(range(N))
            g.add_edges_from((int(p[j]), j) for j in range(N) if p[j] >= 0)
            assert list(ds.leaf_mask(0)) == [g.out_degree(j) == 0 for j in range(N)]
            roots = [j for j in range(N) if p[j] < 0]
            depth = [min(nx.shortest_path_length(g, r, j) for r in roots if nx.has_path(g, r, j)) for j in range(N)]
            assert list(ds.depth(0)) == depth

    def test_parent_after_child(self):
        X, P, Y = self.make()
        P[0] = np.array([-1, 2, 0, 1])
        raises_one_line(DataError, lambda: HierarchicalDataset(X, P, Y, 3), "example 0", "node 1", "parent 2")

    def test_parent_below_minus_one(self):
        X, P, Y = self.make()
        P[1] = np.array([-2, 0, 0])
        raises_one_line(DataError, lambda: HierarchicalDataset(X, P, Y, 3), "example 1", "node 0")

    def test_parents_wrong_length(self):
        X, P, Y = self.make()
        P[1] = np.array([-1, 0])
        raises_one_line(DataError, lambda: HierarchicalDataset(X, P, Y, 3), "example 1", "3 nodes")

    def test_label_out_of_range(self):
        X, P, Y = self.make()
        raises_one_line(DataError, lambda: HierarchicalDataset(X, P, Y, 2), "example 1", "node 2", "label 2")


# ---------------------------------------------------------------------------------------------- TokenCorpus
class TestTokenCorpus:
    def make(self):
        sents = [{"form": ["a", "b"], "pos": ["X", "Y"]}, {"form": ["c"], "pos": ["Z"]}]
        return TokenCorpus(sents, [["O", "B-NP"], ["I-NP"]], name="c", source_lines=[1, 4])

    def test_label_set_and_dataset(self):
        c = self.make()
        assert c.columns == ("form", "pos") and c.label_set() == ["B-NP", "I-NP", "O"] and c.n_tokens == 3
        X = [np.ones((2, 2)), np.ones((1, 2))]
        ds = c.to_sequence_dataset(X, groups=[0, 1], group_names=["u", "v"])
        assert ds.label_names == ["B-NP", "I-NP", "O"] and [list(y) for y in ds.Y] == [[2, 0], [1]]
        assert ds.group_names == ["u", "v"] and ds.name == "c"

    def test_unknown_label(self):
        c = self.make()
        X = [np.ones((2, 2)), np.ones((1, 2))]
        raises_one_line(DataError, lambda: c.to_sequence_dataset(X, label_names=["O", "B-NP"]), "sentence 1",
                        "token 0", "'I-NP'", "line 4")
        ds = c.to_sequence_dataset(X, label_names=["O", "B-NP"], unknown="hide")
        assert list(ds.Y[1]) == [-1]
        ds = c.to_sequence_dataset(X, label_names=["O", "B-NP"], unknown="O")
        assert list(ds.Y[1]) == [0]
        with pytest.raises(ParameterError):
            c.to_sequence_dataset(X, label_names=["O"], unknown="nope")

    def test_unlabelled(self):
        c = TokenCorpus([{"char": ["a", "b"]}], None)
        assert c.label_set() == []
        with pytest.raises(DataError):
            c.to_sequence_dataset([np.ones((2, 1))])
        ds = c.to_sequence_dataset([np.ones((2, 1))], label_names=["B", "E"])
        assert list(ds.Y[0]) == [-1, -1]

    def test_columns_must_agree(self):
        raises_one_line(DataError, lambda: TokenCorpus([{"form": ["a"]}, {"word": ["b"]}], [["O"], ["O"]]),
                        "sentence 1", "columns")

    def test_label_length(self):
        raises_one_line(DataError, lambda: TokenCorpus([{"form": ["a", "b"]}], [["O"]]), "sentence 0", "2 strings")

    def test_column_length(self):
        raises_one_line(DataError, lambda: TokenCorpus([{"form": ["a", "b"], "pos": ["X"]}], [["O", "O"]]),
                        "sentence 0", "'pos'")

    def test_indexing(self):
        c = self.make()
        s, lab = c[1]
        assert s["form"] == ["c"] and lab == ["I-NP"]
        sub = c[[1, 0]]
        assert isinstance(sub, TokenCorpus) and sub.labels == [["I-NP"], ["O", "B-NP"]]
        assert list(sub.source_lines) == [4, 1] and sub.columns == ("form", "pos")
