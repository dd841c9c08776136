"""The linear-chain joint feature map of the M³N papers.

f(x, y) = [ Σ_t x_t ⊗ e(y_t) ,  Σ_t e(y_t) ⊗ e(y_{t+1}) ]  — state features (d·K) followed by K×K transition
features, exactly as in Taskar et al. (2003) and Zhu, Xing & Zhang (KDD 2009, section 5). Start/stop features
(label of the first / last position) and per-label bias features are opt-in.

Edge features (opt-in, ``n_edge_features`` = d_e > 0): the last d_e input columns are not state features but are
conjoined with the label pair, Σ_{t≥1} z_t ⊗ e(y_{t-1}) ⊗ e(y_t) with z_t those columns of token t — what CRF++'s
bigram templates with macros (``B01:%x[0,1]``) give: a transition score that depends on the input, added to the
shared one. The first d_s = d − d_e columns stay state features.

Second-order label states (opt-in, ``order=2``): the score gains Σ_{t≥2} T[y_{t-2}, y_{t-1}, y_t], K³ label-trigram
features on top of everything above (Sha & Pereira 2003's second-order CRF for chunking). Decoding is exact Viterbi
over label-pair states (:func:`mmprog.inference._compiled.viterbi2_one`, O(T·K³) a sequence), loss-augmented with
the Hamming loss on the current label; marginals and top-k are not implemented for it and are refused. Its
search can be confined to allowed label bigrams (``allowed``, e.g. those seen in the training labels: IOBES chunk
labels forbid ``B-X O``), which scores the disallowed ones −∞ and makes the pair Viterbi cheaper
(:func:`~mmprog.inference._compiled.viterbi2_allowed_one`: Σ_a |succ(a)|·|pred(a)| terms a position instead of K³).

Layout of w (row-major blocks, in this order): ``state`` (d_s, K) with index j·K + k, ``transition`` (K, K) with
index a·K + b (label a at t followed by b at t+1), ``edge`` (d_e, K, K) with index f·K² + a·K + b when d_e > 0,
``trigram`` (K, K, K) with index c·K² + a·K + b (c at t-2, a at t-1, b at t) when order = 2, then ``start`` (K,),
``stop`` (K,), ``bias`` (K,) when enabled.
Scores are computed from w without materialising f(x, y); ΔF for a batch of labelings is built as one sparse
product.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..exceptions import DataError, ParameterError, check_param
from .base import Prepared, csr_rows, csr_view, stacked_view


def _sequence_offsets(lengths):
    """Row offsets of sequences stacked back to back, shape (n + 1,): sequence i is rows offsets[i]:offsets[i+1]."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def _binary_matrix(X):
    """Whether X is sparse with every stored value 1 (template indicators, read from their indices alone)."""
    return bool(sp.issparse(X) and X.nnz and np.all(X.data == 1))


def _gold_minus_decoded(gold, decoded, width):
    """E_gold − E_decoded: one row per token (or step), +1 in column ``gold[i]`` and −1 in ``decoded[i]``.

    Parameters
    ----------
    gold, decoded : ndarray of int, shape (m,)
        Label (or label-pair) ids, different in every row.
    width : int
        K for labels, K² for label pairs.

    Returns
    -------
    scipy.sparse.csr_matrix, shape (m, width)
    """
    m = len(gold)
    return sp.csr_matrix((np.tile([1.0, -1.0], m), np.stack([gold, decoded], axis=1).ravel(),
                          np.arange(0, 2 * m + 1, 2)), shape=(m, width))


class ChainFeatureMap:
    """Joint feature map for linear chains.

    Parameters
    ----------
    n_features : int
        Input feature width d.
    n_labels : int
        Number of labels K.
    groups : ndarray of int, shape (d,), optional
        Template group of each input feature (state features inherit it). Default: one group.
    group_names : list of str, optional
        One name per input group id.
    start_stop : bool
        Add start and stop features (K each).
    bias : bool
        Add per-label bias features (K).
    n_edge_features : int
        d_e: the last d_e of the d input features are edge features (conjoined with the label pair of the token and
        its predecessor), not state features.
    order : {1, 2}
        Markov order of the labels: 2 adds the label-trigram block T (K, K, K).
    allowed : ndarray of bool, shape (K, K), optional
        With ``order=2``: ``allowed[a, b]`` says whether label a may be followed by b; decoding and the oracle
        search only labelings whose every bigram is allowed (the model's output space; the trigram weights of
        disallowed bigrams stay 0). Every label needs an allowed successor and predecessor
        (:func:`allowed_bigrams` builds such a mask from training labels). None: all bigrams (the default).
    """

    kind = "chain"

    def __init__(self, n_features, n_labels, groups=None, group_names=None, start_stop=False, bias=False,
                 n_edge_features=0, order=1, allowed=None):
        self.n_features = int(n_features)
        self.n_labels = int(n_labels)
        self.start_stop = bool(start_stop)
        self.bias = bool(bias)
        d, K = self.n_features, self.n_labels
        d_e = self.n_edge_features = int(n_edge_features)
        check_param("n_edge_features", n_edge_features, 0 <= d_e <= d, f"an int in [0, n_features = {d}]")
        d_s = d - d_e
        check_param("order", order, isinstance(order, (int, np.integer)) and not isinstance(order, bool)
                    and order in (1, 2), "1 or 2 (the Markov order of the labels)")
        self.order = int(order)
        self.allowed = None if allowed is None else self._check_allowed(allowed, K)
        in_groups = np.zeros(d, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
        if in_groups.shape != (d,):
            raise DataError(f"groups must have one entry per input feature ({d}); got shape {in_groups.shape}")
        n_in = int(in_groups.max()) + 1 if d else 0
        names = list(group_names) if group_names is not None else (["x"] if n_in == 1 else [f"g{g}" for g in range(n_in)])
        if len(names) < n_in:
            raise DataError(f"group_names has {len(names)} names but groups uses {n_in} ids")
        names = names[:n_in]
        self.input_groups = in_groups
        self.blocks = [("state", (d_s, K)), ("transition", (K, K))]
        if d_e:
            self.blocks += [("edge", (d_e, K, K))]
        if self.order == 2:
            self.blocks += [("trigram", (K, K, K))]
        if self.start_stop:
            self.blocks += [("start", (K,)), ("stop", (K,))]
        if self.bias:
            self.blocks += [("bias", (K,))]
        self.offsets = {}
        off = 0
        for name, shape in self.blocks:
            self.offsets[name] = off
            off += int(np.prod(shape))
        self.dim = off
        self._groups_set = None
        self.group_names = names + ["transition"]

    @property
    def groups(self):
        """Template group of every joint feature, shape (dim,): state and edge features inherit the group of their
        input feature; transitions (and the label trigrams and opt-in extras, which are also label-structure features) form the last
        group, "transition".

        Built on each access and not kept, in the narrowest integer type that holds the ids: a vector as long as w
        (an int64 one was 424 MB on full CoNLL-2002 NER), which the programs without template groups (m3n) never
        read.
        """
        if self._groups_set is not None:
            return self._groups_set
        n_in = len(self.group_names) - 1
        K, d_e = self.n_labels, self.n_edge_features
        d_s = self.n_features - d_e
        gtype = np.int16 if n_in < np.iinfo(np.int16).max else np.int64
        g = self.input_groups.astype(gtype)
        return np.concatenate([np.repeat(g[:d_s], K), np.full(K * K, n_in, dtype=gtype), np.repeat(g[d_s:], K * K),
                               np.full(self.dim - d_s * K - K * K - d_e * K * K, n_in, dtype=gtype)])

    @groups.setter
    def groups(self, value):
        """Any grouping of the joint features, shape (dim,), kept as given (e.g. one template for all)."""
        value = np.asarray(value)
        if value.shape != (self.dim,):
            raise DataError(f"groups must have one entry per joint feature ({self.dim}); got shape {value.shape}")
        self._groups_set = value

    # ------------------------------------------------------------------ construction helpers
    @classmethod
    def from_dataset(cls, dataset, **kwargs):
        """Build the default chain map for a :class:`~mmprog.datasets.SequenceDataset`."""
        kwargs.setdefault("n_edge_features", (getattr(dataset, "info", None) or {}).get("n_edge_features", 0))
        return cls(dataset.n_features, dataset.n_labels, groups=getattr(dataset, "groups", None),
                   group_names=getattr(dataset, "group_names", None), **kwargs)

    def describe(self):
        """JSON-able description from which :meth:`from_description` rebuilds the map."""
        n_in = len(self.group_names) - 1
        desc = {"kind": self.kind, "n_features": self.n_features, "n_labels": self.n_labels,
                "start_stop": self.start_stop, "bias": self.bias, "n_edge_features": self.n_edge_features,
                "group_names": self.group_names[:n_in],
                "blocks": [[name, list(shape)] for name, shape in self.blocks]}
        if self.order != 1:
            # written only when not 1: first-order models and checkpoint fingerprints stay what they were
            desc["order"] = self.order
        if self.allowed is not None:
            desc["allowed_bigrams"] = int(self.allowed.sum())
        return desc

    def state_arrays(self):
        """Arrays needed beside :meth:`describe` to rebuild the map (the input groups, the allowed bigrams)."""
        out = {"input_groups": self.input_groups}
        if self.allowed is not None:
            out["allowed"] = self.allowed
        return out

    @classmethod
    def from_description(cls, desc, arrays):
        return cls(desc["n_features"], desc["n_labels"], groups=arrays.get("input_groups"),
                   group_names=desc.get("group_names"), start_stop=desc.get("start_stop", False),
                   bias=desc.get("bias", False), n_edge_features=desc.get("n_edge_features", 0),
                   order=desc.get("order", 1), allowed=arrays.get("allowed"))

    def _check_allowed(self, allowed, K):
        """The mask as a (K, K) bool array; refused unless the map is second-order and every label has an allowed
        successor and predecessor (otherwise some lengths would have no allowed labeling)."""
        if self.order != 2:
            raise ParameterError("allowed (a label-bigram mask) is for the second-order chain map (order=2), whose "
                                 "pair Viterbi it makes cheaper; a first-order chain learns its transition scores: "
                                 "drop allowed or set order=2")
        a = np.asarray(allowed)
        if a.shape != (K, K) or a.dtype != bool:
            raise ParameterError(f"allowed must be a ({K}, {K}) bool array (label a followed by b); got dtype "
                                 f"{a.dtype}, shape {a.shape}")
        dead = np.flatnonzero(~a.any(axis=1) | ~a.any(axis=0))
        if len(dead):
            raise ParameterError(f"allowed gives labels {dead.tolist()[:10]} no successor or no predecessor; every "
                                 f"label needs both (allowed_bigrams() adds them)")
        return np.ascontiguousarray(a)

    def _bigram_lists(self):
        """The allowed bigrams as CSR lists for the compiled pair Viterbi: (succ_ptr, succ, pred_ptr, pred), empty
        arrays when all are allowed."""
        if self.allowed is None:
            e = np.zeros(0, np.int64)
            return e, e, e, e
        lists = []
        for m in (self.allowed, self.allowed.T):
            a, b = np.nonzero(m)                  # row-major: b ascending within each a
            lists += [np.concatenate([[0], np.cumsum(np.bincount(a, minlength=self.n_labels))]).astype(np.int64),
                      b.astype(np.int64)]
        return tuple(lists)

    def weights(self, w):
        """Split w into its named blocks (views), e.g. ``{"state": (d_s, K), "transition": (K, K)}``."""
        w = np.asarray(w)
        return {name: w[self.offsets[name]: self.offsets[name] + int(np.prod(shape))].reshape(shape)
                for name, shape in self.blocks}

    def _first_order_only(self, what):
        """Refuse ``what`` on a second-order map, naming the change that makes it available."""
        if self.order != 1:
            raise ParameterError(f"{what} is not implemented for the second-order chain map (order={self.order}): "
                                 f"only Viterbi decoding and the max-margin oracle are; train with order=1 "
                                 f"(drop --order {self.order}) to use it")

    # ------------------------------------------------------------------ batches
    def prepare(self, dataset):
        """Stack a :class:`SequenceDataset` into one token matrix with offsets, once. Sentences that are consecutive
        row views of one matrix (a template extractor's) are stacked as a view of it, without copying the rows.

        Returns
        -------
        Prepared
            ``data["X"]`` (N_tokens, d_s) CSR or dense, the state features; ``data["Xe"]`` (N_tokens, d_e) CSR, the
            edge features (only with d_e > 0); ``data["offsets"]`` (n+1,); ``gold`` (n, T_max) padded -1.
        """
        if dataset.n_features != self.n_features:
            raise DataError(f"dataset has {dataset.n_features} input features but the feature map expects "
                            f"{self.n_features}; build the map from the training data's feature extractor")
        lengths = np.asarray(dataset.lengths, dtype=np.int64)
        # the sentences of one stacked matrix (a template extractor's) are that matrix again, not a second copy
        X = stacked_view(dataset.X)
        if X is not None and X.dtype != np.float64 and not _binary_matrix(X):
            # scipy's products would upcast other values every round: one float64 copy here instead. Binary rows
            # (float32 ones from a template extractor) stay as they are: the fit reads their indices alone
            # (features._binary)
            X = None
        if X is None:
            if any(sp.issparse(x) for x in dataset.X):
                X = sp.vstack([sp.csr_matrix(x) for x in dataset.X], format="csr", dtype=np.float64)
            else:
                # the rows are 2-D (checked by the dataset): np.vstack would add a Python call per block (29 against
                # 9 ms for OCR's 6,251 test words)
                X = np.ascontiguousarray(np.concatenate(dataset.X), dtype=np.float64)
        return self.prepare_stacked(X, lengths, dataset.Y)

    def prepare_stacked(self, X, lengths, Y=None):
        """:meth:`prepare` from the token rows of all examples already stacked (what a template extractor builds in
        one piece, so tagging need not split and re-stack it).

        Parameters
        ----------
        X : scipy.sparse.csr_matrix or ndarray, shape (N_tokens, d)
        lengths : ndarray of int, shape (n,)
        Y : list of int arrays, optional
            Gold labels (−1 = unobserved); default none observed.
        """
        if X.shape[1] != self.n_features:
            raise DataError(f"the token rows have {X.shape[1]} input features but the feature map expects "
                            f"{self.n_features}")
        lengths = np.asarray(lengths, dtype=np.int64)
        n = len(lengths)
        offsets = _sequence_offsets(lengths)
        T = int(lengths.max()) if n else 0
        gold = np.full((n, T), -1, dtype=np.int64)
        pos = np.arange(offsets[-1]) - np.repeat(offsets[:-1], lengths)
        ex = np.repeat(np.arange(n), lengths)
        if Y is None:
            y_all = np.full(int(offsets[-1]), -1, dtype=np.int64)
        else:
            y_all = np.concatenate([np.asarray(y, dtype=np.int64) for y in Y]) if n else np.zeros(0, np.int64)
        if np.any(y_all >= self.n_labels):
            raise DataError(f"dataset has labels ≥ {self.n_labels}, more than the feature map's n_labels")
        gold[ex, pos] = y_all
        data = {"X": X, "offsets": offsets, "tok_example": ex, "tok_pos": pos}
        if self.n_edge_features:
            # split once here so that every round's products read the two blocks as they are
            d_s = self.n_features - self.n_edge_features
            X = sp.csr_matrix(X)
            Xe = sp.csr_matrix(X[:, d_s:], dtype=np.float64)
            Xe.sort_indices()
            Xe.indptr, Xe.indices = Xe.indptr.astype(np.int64), Xe.indices.astype(np.int64)
            data.update(X=X[:, :d_s], Xe=Xe)
        return Prepared(n=n, lengths=lengths, gold=gold, data=data)

    @staticmethod
    def _tokens(prepared, idx):
        """Global token rows of the examples ``idx`` (in order) with their batch row and position."""
        off = prepared.data["offsets"]
        lengths = prepared.lengths[idx]
        starts = off[idx]
        total = int(lengths.sum())
        row = np.repeat(np.arange(len(idx)), lengths)
        first = np.repeat(np.cumsum(lengths) - lengths, lengths)
        pos = np.arange(total) - first
        return starts[row] + pos, row, pos

    @staticmethod
    def _token_rows(prepared, idx, tok, key="X"):
        """Rows of ``data[key]`` (X or Xe) of the stacked tokens: a view when ``idx`` is a run of consecutive examples
        (the whole training set every oracle round, or a thread's chunk of it), else the gathered rows ``X[tok]``."""
        X = prepared.data[key]
        if len(idx) and idx[-1] - idx[0] == len(idx) - 1 and np.all(np.diff(idx) == 1):
            off = prepared.data["offsets"]
            a, b = int(off[idx[0]]), int(off[idx[-1] + 1])
            if a == 0 and b == X.shape[0]:
                return X
            if not sp.issparse(X):
                return X[a:b]
            # scipy's X[a:b] copies the rows (on full CoNLL-2002 NER all 35 million entries, 425 MB, every round)
            return csr_rows(X, a, b)
        return X[tok]

    def _token_scores(self, w, prepared, idx):
        """wᵀ(state, bias, start and stop features) of every token of the examples ``idx``, stacked (no padding).

        Returns
        -------
        node_tok : ndarray, shape (N, K)
            One product of the token rows with the state block (binary rows: summed from their indices).
        edge : ndarray, shape (K, K)
        tok, row, pos : ndarray of int, shape (N,)
            Global token row, batch row and position of every stacked token.
        edge_args : tuple
            The compiled kernels' edge-feature arguments (``e_indptr``, ``e_indices``, ``e_data``, ``we_t``; see
            :func:`mmprog.inference._compiled.sequence_edges`) for these tokens: the stacked rows of Xe and the edge
            block transposed per feature, or empty arrays without edge features.
        """
        blocks = self.weights(np.asarray(w, dtype=np.float64))
        tok, row, pos = self._tokens(prepared, idx)
        Xt = self._token_rows(prepared, idx, tok)
        if sp.issparse(Xt) and self._binary_tokens(prepared):
            # 0/1 features: X's indices alone, the same floats as scipy's product (which would upcast-copy a
            # float32 value array every round)
            from ._binary import binary_row_scores, in_threads
            node_tok = np.zeros((Xt.shape[0], self.n_labels))
            W = np.ascontiguousarray(blocks["state"])
            in_threads(lambda a, b: binary_row_scores(Xt.indptr, Xt.indices, W, node_tok, a, b), Xt.shape[0])
        elif not sp.issparse(Xt) and (nz := self._dense_nonzeros(prepared)) is not None:
            # small, mostly-zero dense rows (OCR pixels) scored again and again: their non-zeros alone, on one
            # thread (BLAS multiplies the zeros too)
            from ._binary import in_threads, nonzero_row_scores
            node_tok = np.zeros((len(tok), self.n_labels))
            W = np.ascontiguousarray(blocks["state"])
            in_threads(lambda a, b: nonzero_row_scores(nz.indptr, nz.indices, nz.data, W, tok, node_tok, a, b),
                       len(tok))
        else:
            node_tok = np.asarray(Xt @ blocks["state"])
        del Xt
        node_tok = self._add_token_terms(node_tok, blocks, prepared.lengths[idx])
        K = self.n_labels
        if self.n_edge_features:
            Xe = self._token_rows(prepared, idx, tok, "Xe")
            lo = Xe.indptr[0]   # a view of consecutive rows keeps the parent's offsets
            hi = Xe.indptr[-1]
            edge_args = ((Xe.indptr - lo).astype(np.int64), Xe.indices[lo:hi].astype(np.int64),
                         np.asarray(Xe.data[lo:hi], dtype=np.float64),
                         np.ascontiguousarray(blocks["edge"].transpose(0, 2, 1)))
        else:
            edge_args = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros((0, K, K)))
        return (np.ascontiguousarray(node_tok), np.ascontiguousarray(blocks["transition"]), tok, row, pos,
                edge_args)

    def _add_token_terms(self, node_tok, blocks, lengths):
        """The bias and the start/stop weights added to the stacked state scores (N, K) of sentences of
        ``lengths``."""
        if self.bias:
            node_tok = node_tok + blocks["bias"]
        if self.start_stop:
            ends = np.cumsum(lengths)
            node_tok[(ends - lengths)[lengths > 0]] += blocks["start"]
            node_tok[(ends - 1)[lengths > 0]] += blocks["stop"]
        return node_tok

    def scores(self, w, prepared, idx=None):
        """Node and edge scores of wᵀf for the examples ``idx``.

        Returns
        -------
        node_scores : ndarray, shape (B, T, K)
            Padded with zeros past each length.
        edge_scores : ndarray, shape (K, K), or (B, T-1, K, K) with edge features
            Shared, or per position: ``edge_scores[b, t]`` between positions t and t+1 (zeros past each length).
        lengths : ndarray, shape (B,)
        """
        # first-order factors only: with a trigram block they would not score wᵀf
        self._first_order_only("scores() (node and edge factors)")
        idx = np.arange(prepared.n) if idx is None else np.asarray(idx, dtype=np.int64)
        node_tok, edge, tok, row, pos, _ = self._token_scores(w, prepared, idx)
        lengths = prepared.lengths[idx]
        T = int(lengths.max()) if len(idx) else 0
        K = self.n_labels
        node = np.zeros((len(idx), T, K))
        node[row, pos] = node_tok
        if self.n_edge_features:
            # token t's edge features score the step from t-1 to t
            right = pos > 0
            We = self.weights(np.asarray(w, dtype=np.float64))["edge"].reshape(self.n_edge_features, K * K)
            Xe = self._token_rows(prepared, idx, tok, "Xe")[np.flatnonzero(right)]
            edges = np.zeros((len(idx), max(T - 1, 0), K, K))
            edges[row[right], pos[right] - 1] = edge + np.asarray(Xe @ We).reshape(-1, K, K)
            return node, edges, lengths
        return node, edge, lengths

    def decode(self, w, prepared, idx=None, loss_augmented=False, loss_weight=1.0):
        """Most likely (or most violating) labeling per example: argmax_y wᵀf(xᵢ, y) [+ loss_weight·Δℓᵢ(y)].

        The compiled Viterbi runs on the stacked token scores (sequences back to back, no padding, so one very long
        sequence costs its own length only) with the Hamming loss added on the fly; with ``order=2`` over label-pair
        states (:func:`mmprog.inference._compiled.viterbi2_one`).

        Returns
        -------
        ndarray, shape (B, T)
            Labels padded with -1.
        """
        check_param("loss_weight", loss_weight, np.isfinite(float(loss_weight)), "a finite float")
        idx = np.arange(prepared.n) if idx is None else np.asarray(idx, dtype=np.int64)
        node_tok, edge, _, row, pos, edge_args = self._token_scores(w, prepared, idx)
        lengths = prepared.lengths[idx]
        gold = prepared.gold[idx][row, pos] if loss_augmented else np.zeros(0, np.int64)
        lab_tok = self._viterbi_tokens(w, node_tok, edge, lengths, gold, loss_weight, edge_args)
        labels = np.full((len(idx), int(lengths.max()) if len(idx) else 0), -1, dtype=np.int64)
        labels[row, pos] = lab_tok
        return labels

    def _viterbi_tokens(self, w, node_tok, edge, lengths, gold, loss_weight, edge_args):
        """Labels (N,) of sentences stacked back to back, from their token scores (N, K) and the transition block:
        the first- or second-order compiled Viterbi."""
        from ..inference import _compiled
        offsets = _sequence_offsets(lengths)
        lab_tok = np.empty(node_tok.shape[0], dtype=np.int64)
        if self.order == 2:
            trigram = np.ascontiguousarray(self.weights(np.asarray(w, dtype=np.float64))["trigram"])
            _compiled.viterbi2_stacked(node_tok, edge, trigram, offsets, gold, np.float64(loss_weight), lab_tok,
                                       *edge_args, *self._bigram_lists())
        else:
            _compiled.viterbi_stacked(node_tok, edge, offsets, gold, np.float64(loss_weight), lab_tok, *edge_args)
        return lab_tok

    def decode_state_scores(self, w, state_scores, lengths):
        """:meth:`decode` of sentences given by their state scores X·W_state instead of X (what
        :class:`~mmprog.features.template_scores.StateScorer` computes without building X).

        Parameters
        ----------
        w : ndarray, shape (dim,)
        state_scores : ndarray of float64, shape (sum(lengths), K)
            Token rows times the ``state`` block, sentences back to back.
        lengths : ndarray of int, shape (n,)

        Returns
        -------
        ndarray of int64, shape (sum(lengths),)
            The labels, stacked like the scores.
        """
        if self.n_edge_features:
            raise ParameterError("decode_state_scores needs a map without edge features (their scores depend on "
                                 "each token's edge rows); use decode()")
        lengths = np.asarray(lengths, dtype=np.int64)
        if state_scores.shape != (int(lengths.sum()), self.n_labels):
            raise DataError(f"state_scores must have shape (sum(lengths), n_labels) = ({int(lengths.sum())}, "
                            f"{self.n_labels}); got {state_scores.shape}")
        blocks = self.weights(np.asarray(w, dtype=np.float64))
        # start/stop weights are added in place: on a copy, not on the caller's array
        node_tok = np.array(state_scores, dtype=np.float64, order="C") if self.start_stop else \
            np.ascontiguousarray(state_scores, dtype=np.float64)
        node_tok = self._add_token_terms(node_tok, blocks, lengths)
        K = self.n_labels
        no_edges = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros((0, K, K)))
        return self._viterbi_tokens(w, node_tok, np.ascontiguousarray(blocks["transition"]), lengths,
                                    np.zeros(0, np.int64), 0.0, no_edges)

    # ------------------------------------------------------------------ features, ΔF and loss
    def joint_features(self, prepared, idx, labelings):
        """f(xᵢ, y) for one labeling per row.

        Parameters
        ----------
        prepared : Prepared
        idx : ndarray of int, shape (m,)
            Example of each row (repeats allowed).
        labelings : ndarray of int, shape (m, T)
            Labels padded with -1; positions with label -1 contribute nothing (hidden or padding).

        Returns
        -------
        scipy.sparse.csr_matrix, shape (m, dim)
        """
        idx = np.asarray(idx, dtype=np.int64)
        labelings = np.asarray(labelings, dtype=np.int64)
        m, K = len(idx), self.n_labels
        tok, row, pos = self._tokens(prepared, idx)
        lab = labelings[row, pos] if labelings.size else np.zeros(0, np.int64)
        keep = lab >= 0
        tok, row, pos, lab = tok[keep], row[keep], pos[keep], lab[keep]
        # one sparse product gives Σ_t x_t for every (row, label) pair at once: D[(r·K + k), token] = 1
        D = sp.csr_matrix((np.ones(len(tok)), (row * K + lab, tok)), shape=(m * K, prepared.data["X"].shape[0]))
        S = sp.coo_matrix(D @ prepared.data["X"])
        rows = [S.row // K]
        cols = [S.col * K + S.row % K]
        vals = [S.data]
        # transitions between consecutive observed positions
        lengths = prepared.lengths[idx]
        T = labelings.shape[1]
        if T > 1:
            a, b = labelings[:, :-1], labelings[:, 1:]
            valid = (a >= 0) & (b >= 0) & (np.arange(1, T)[None, :] < lengths[:, None])
            r, t = np.nonzero(valid)
            rows.append(r)
            cols.append(self.offsets["transition"] + a[valid] * K + b[valid])
            vals.append(np.ones(len(r)))
            if self.n_edge_features:
                # the same transitions conjoined with the edge features of their right-hand token
                Xe = prepared.data["Xe"]
                pair = a[valid] * K + b[valid]
                tok_right = prepared.data["offsets"][idx[r]] + t + 1
                De = sp.csr_matrix((np.ones(len(r)), (r * K * K + pair, tok_right)), shape=(m * K * K, Xe.shape[0]))
                Se = sp.coo_matrix(De @ Xe)
                rows.append(Se.row // (K * K))
                cols.append(self.offsets["edge"] + Se.col.astype(np.int64) * K * K + Se.row % (K * K))
                vals.append(Se.data)
        if self.order == 2 and T > 2:
            # label trigrams over three consecutive observed positions
            a, b, c = labelings[:, :-2], labelings[:, 1:-1], labelings[:, 2:]
            valid = (a >= 0) & (b >= 0) & (c >= 0) & (np.arange(2, T)[None, :] < lengths[:, None])
            r, _ = np.nonzero(valid)
            rows.append(r)
            cols.append(self.offsets["trigram"] + (a[valid] * K + b[valid]) * K + c[valid])
            vals.append(np.ones(len(r)))
        if self.start_stop:
            first = labelings[:, 0]
            last = labelings[np.arange(m), lengths - 1]
            for name, lab_ in (("start", first), ("stop", last)):
                ok = lab_ >= 0
                rows.append(np.nonzero(ok)[0])
                cols.append(self.offsets[name] + lab_[ok])
                vals.append(np.ones(int(ok.sum())))
        if self.bias:
            rows.append(row)
            cols.append(self.offsets["bias"] + lab)
            vals.append(np.ones(len(lab)))
        F = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(m, self.dim))
        F.sum_duplicates()
        return F

    def loss(self, prepared, idx, labelings):
        """Hamming loss Δℓᵢ(y) = Σ_t 1[y_t ≠ yᵢ_t] over observed positions, shape (m,)."""
        idx = np.asarray(idx, dtype=np.int64)
        labelings = np.asarray(labelings, dtype=np.int64)
        T = labelings.shape[1]
        gold = prepared.gold[idx]
        if gold.shape[1] < T:
            gold = np.pad(gold, ((0, 0), (0, T - gold.shape[1])), constant_values=-1)
        gold = gold[:, :T]
        return ((gold >= 0) & (labelings != gold)).sum(axis=1).astype(np.float64)

    def delta(self, prepared, idx, labelings):
        """ΔF rows Δfᵢ(y) = f(xᵢ, yᵢ) − f(xᵢ, y) and the losses Δℓᵢ(y).

        Only positions where y differs from the gold labels contribute to the state block, so the rows are built
        from those tokens alone (one sparse or dense product over the distinct (row, label) pairs).

        Returns
        -------
        dF : scipy.sparse.csr_matrix, shape (m, dim)
        dl : ndarray, shape (m,)
        """
        idx = np.asarray(idx, dtype=np.int64)
        labelings = np.asarray(labelings, dtype=np.int64)
        m, K = len(idx), self.n_labels
        T = labelings.shape[1]
        gold = prepared.gold[idx]
        gold = np.pad(gold, ((0, 0), (0, max(0, T - gold.shape[1]))), constant_values=-1)[:, :T]
        # hidden gold positions carry no label: leave them out of both sides so Δf stays a difference of
        # comparable feature counts (PoMEN handles hidden labels by expectation instead)
        lab = np.where(gold >= 0, labelings, -1)
        if self.start_stop or self.bias or self.n_edge_features or self.order == 2:
            dF = self.joint_features(prepared, idx, gold) - self.joint_features(prepared, idx, lab)
            dF.eliminate_zeros()
            return dF.tocsr(), self.loss(prepared, idx, labelings)
        tok, row, pos = self._tokens(prepared, idx)
        g, y = gold[row, pos], lab[row, pos]
        diff = (g >= 0) & (y != g)
        tok, row, g, y = tok[diff], row[diff], g[diff], y[diff]
        keys = np.concatenate([row * K + g, row * K + y])
        uniq, inv = np.unique(keys, return_inverse=True)
        D = sp.csr_matrix((np.r_[np.ones(len(tok)), -np.ones(len(tok))], (inv, np.r_[tok, tok])),
                          shape=(len(uniq), prepared.data["X"].shape[0]))
        X = prepared.data["X"]
        S = D @ X
        ur, uk = uniq // K, uniq % K
        if sp.issparse(S):
            S = S.tocsr()
            counts = np.bincount(ur, weights=np.diff(S.indptr), minlength=m).astype(np.int64)
            cols_state = S.indices.astype(np.int64) * K + np.repeat(uk, np.diff(S.indptr))
            vals_state = S.data
        else:
            # dense inputs (OCR pixels): every (row, label) pair gives a full block of d entries; lay them out as
            # CSR directly (each (row, column) appears once, so no sorting or duplicate summing is needed)
            d = S.shape[1]
            counts = np.bincount(ur, minlength=m).astype(np.int64) * d
            cols_state = (np.arange(d)[None, :] * K + uk[:, None]).ravel()
            vals_state = np.asarray(S).ravel()
        indptr = np.zeros(m + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        state = sp.csr_matrix((vals_state, cols_state, indptr), shape=(m, self.offsets["transition"]))
        trans = np.zeros((m, K * K))
        if T > 1:
            lengths = prepared.lengths[idx]
            inside = np.arange(1, T)[None, :] < lengths[:, None]
            for sign, L in ((1.0, gold), (-1.0, lab)):
                a, b = L[:, :-1], L[:, 1:]
                valid = (a >= 0) & (b >= 0) & inside
                r, _ = np.nonzero(valid)
                np.add.at(trans, (r, a[valid] * K + b[valid]), sign)
        dF = sp.hstack([state, sp.csr_matrix(trans)], format="csr")
        return dF, self.loss(prepared, idx, labelings)

    def separate_sum(self, w, prepared, idx=None, sparse=False, counts=False, labeling=False):
        """The 1-slack separation in one pass: Σᵢ Δfᵢ(ŷᵢ) and Σᵢ Δℓᵢ(ŷᵢ) of the most violated labelings, with the
        per-example hinge losses, without building per-example ΔF rows.

        A round is one BLAS product (the token scores wᵀx_t, (N, K)) and one compiled call
        (:func:`mmprog.inference._compiled.chain_separate_sum`): loss-augmented Viterbi on the stacked tokens, then
        Δℓᵢ, the transition block of Σᵢ Δfᵢ and the hinge from path scores, Hᵢ = Δℓᵢ(ŷᵢ) − [wᵀf(xᵢ, yᵢ) −
        wᵀf(xᵢ, ŷᵢ)], of which only the differing tokens and the transitions are needed. With dense inputs (OCR
        pixels) the kernel also accumulates the state block Xᵀ(E_gold − E_ŷ) over the differing tokens.

        With sparse inputs the state block is the product Xᵀ(E_gold − E_ŷ) over the differing tokens: with
        ``sparse=True`` with E sparse (two entries a token), merged per coordinate, so no dense (d·K) array is made
        (on full CoNLL-2002 NER that block is 53 million floats, 424 MB, of which a cut keeps 6–12 million).

        With edge features the kernel scores each step with its token's edge features (never holding all steps'
        K×K scores at once), and their block is the product Zᵀ(E_gold pair − E_ŷ pair) over the steps whose label
        pair changed (:meth:`_edge_delta`). With ``order=2`` the compiled call is
        :func:`mmprog.inference._compiled.chain2_separate_sum` (Viterbi over label pairs), which also gives the
        trigram block.

        Parameters
        ----------
        counts : bool
            With ``sparse=True`` and the first-order map without edge features: the cut's values as integers when
            they all are (0/1 template features: Σᵢ Δfᵢ counts tokens), int32 or int16 (when every count fits), 4
            or 2 bytes an entry instead of 8 (the caller keeps them, see :class:`mmprog.cuts.CountCut`); float64
            otherwise, as without it.
        labeling : bool
            With ``sparse=True``, the first-order map without edge features and 0/1 token features: the cut as the
            labeling that makes it (a dict of X, the wrong tokens' rows ``tok``, ``gold`` and ``pred`` labels, the
            transition counts ``trans`` (K, K) and K; see :class:`mmprog.cuts.LabelingCut`) instead of its row;
            otherwise as without it.

        Returns
        -------
        dF_sum : ndarray, shape (dim,), or scipy.sparse.csr_matrix, shape (1, dim) with ``sparse=True``
            (explicit zeros removed, indices sorted; integer values only with ``counts=True``)
        dl_sum : float
        hinge : ndarray, shape (B,)
        """
        from ..inference import _compiled
        idx = np.arange(prepared.n) if idx is None else np.asarray(idx, dtype=np.int64)
        if self.start_stop or self.bias or np.any(prepared.gold[idx] < -1):
            raise NotImplementedError("separate_sum covers the default chain map")
        K, d_s = self.n_labels, self.n_features - self.n_edge_features
        node_tok, edge, tok, row, pos, edge_args = self._token_scores(w, prepared, idx)
        lengths = prepared.lengths[idx]
        offsets = _sequence_offsets(lengths)
        g = np.ascontiguousarray(prepared.gold[idx][row, pos])
        X = prepared.data["X"]
        dense = not sp.issparse(X)
        Xd = np.ascontiguousarray(self._token_rows(prepared, idx, tok)) if dense else np.zeros((0, 0))
        lab = np.empty(len(tok), dtype=np.int64)
        state_t = np.zeros((K, d_s) if dense else (0, 0))
        trans = np.zeros((K, K))
        dl = np.zeros(len(idx))
        path = np.zeros(len(idx))
        if self.order == 2:
            trigram = np.ascontiguousarray(self.weights(np.asarray(w, dtype=np.float64))["trigram"])
            tri = np.zeros((K, K, K))
            _compiled.chain2_separate_sum(node_tok, edge, trigram, offsets, g, Xd, lab, state_t, trans, tri, dl, path,
                                          *edge_args, *self._bigram_lists())
        else:
            _compiled.chain_separate_sum(node_tok, edge, offsets, g, Xd, lab, state_t, trans, dl, path, *edge_args)
        # the first-order map without edge features returns its cut directly; otherwise the blocks are appended as
        # coordinates and values: state, transition, edge (which needs the labels), trigram
        first_order = not self.n_edge_features and self.order == 1
        if dense:
            flat = np.concatenate([state_t.T.ravel(), trans.ravel()])
            if first_order:
                if sparse:
                    nz = np.flatnonzero(flat)   # CSR built directly: csr_matrix(dense) goes through COO, ~1 ms a round
                    return (sp.csr_matrix((flat[nz], nz, [0, len(nz)]), shape=(1, self.dim)), float(dl.sum()),
                            dl - path)
                return flat, float(dl.sum()), dl - path
            cols, vals = [np.arange(d_s * K + K * K)], [flat]
        else:
            sel = np.nonzero((g >= 0) & (lab != g))[0]
            if first_order and sparse and labeling and self._binary_tokens(prepared) \
                    and self.dim == X.shape[1] * K + K * K:
                return (dict(X=X, tok=tok[sel], gold=g[sel], pred=lab[sel], trans=trans, K=K), float(dl.sum()),
                        dl - path)
            if first_order and sparse and self._binary_tokens(prepared):
                # 0/1 template features: counted by feature straight into the cut's arrays (_binary), not
                # summed as scipy products (three (d, K) matrices at once, the fit's peak memory on full NER)
                from ._binary import binary_state_cut
                flat, vals = binary_state_cut(X, tok[sel], g[sel], lab[sel], K, trans, self.dim, counts)
                cut = csr_view(vals, flat, np.array([0, len(flat)], dtype=flat.dtype), (1, self.dim))
                return cut, float(dl.sum()), dl - path
            state = self._state_sum(X, tok[sel], g[sel], lab[sel])
            if first_order:
                if not sparse:
                    return np.concatenate([state.toarray().ravel(), trans.ravel()]), float(dl.sum()), dl - path
                return self._sum_cut(state, trans, counts), float(dl.sum()), dl - path
            state.sum_duplicates()
            coo = state.tocoo()
            cols = [coo.row.astype(np.int64) * K + coo.col, d_s * K + np.arange(K * K)]
            vals = [coo.data, trans.ravel()]
        if self.n_edge_features:
            c, v = self._edge_delta(prepared, idx, tok, pos, g, lab)
            cols.append(c)
            vals.append(v)
        if self.order == 2:
            cols.append(self.offsets["trigram"] + np.arange(K ** 3))
            vals.append(tri.ravel())
        flat, v = np.concatenate(cols), np.concatenate(vals)
        if not sparse:
            out = np.zeros(self.dim)
            np.add.at(out, flat, v)
            return out, float(dl.sum()), dl - path
        dF = sp.csr_matrix((v, flat, [0, len(flat)]), shape=(1, self.dim))
        dF.sum_duplicates()
        dF.eliminate_zeros()
        return dF, float(dl.sum()), dl - path

    def _sum_cut(self, state, trans, counts=False):
        """Σᵢ Δfᵢ of a map without edge features as one CSR row, from its state block (d, K) and transitions (K, K).

        Canonical CSR (rows in order, sorted columns) makes the flat index j·K + k ascend; it is written straight
        into the cut's arrays (int32 where dim allows), not through COO and concatenations (each a copy of the cut,
        10–40 million entries on full CoNLL-2002 NER).

        Parameters
        ----------
        counts : bool
            Values as int32 when all are integers of int32's range (checked entry by entry, so exact), else float64.

        Returns
        -------
        scipy.sparse.csr_matrix, shape (1, dim)
        """
        K, d = self.n_labels, self.n_features
        state.sum_duplicates()
        state.eliminate_zeros()
        t_flat = trans.ravel()
        t_nz = np.flatnonzero(t_flat)
        s_nnz = state.nnz
        itype = np.int32 if self.dim < np.iinfo(np.int32).max else np.int64
        flat = np.empty(s_nnz + len(t_nz), dtype=itype)
        flat[:s_nnz] = np.repeat(np.arange(d, dtype=itype) * itype(K), np.diff(state.indptr))
        flat[:s_nnz] += state.indices
        flat[s_nnz:] = d * K + t_nz
        vals = None
        if counts:
            from ._binary import integer_counts
            vals = np.empty(len(flat), dtype=np.int32)
            if not (integer_counts(state.data, vals[:s_nnz]) and integer_counts(t_flat[t_nz], vals[s_nnz:])):
                vals = None           # real-valued features: the float row
        if vals is None:
            vals = np.empty(len(flat))
            vals[:s_nnz] = state.data
            vals[s_nnz:] = t_flat[t_nz]
        del state
        return csr_view(vals, flat, np.array([0, len(flat)], dtype=itype), (1, self.dim))

    @staticmethod
    def _binary_tokens(prepared):
        """Whether every stored value of the stacked token matrix is 1 (template indicators); checked once per
        matrix and kept in ``prepared.data`` beside the matrix it was checked on."""
        X = prepared.data["X"]
        seen = prepared.data.get("X_binary")
        if seen is None or seen[0] is not X:
            seen = prepared.data["X_binary"] = (X, _binary_matrix(X))
        return seen[1]

    #: a dense token matrix is scored from its non-zeros (:meth:`_dense_nonzeros`) when at most this fraction of
    #: its entries are non-zero and it has at most :attr:`NONZERO_MAX_ENTRIES` entries; otherwise by BLAS
    NONZERO_MAX_DENSITY = 0.5
    NONZERO_MAX_ENTRIES = 1 << 24

    @classmethod
    def _dense_nonzeros(cls, prepared):
        """The non-zeros of a small, mostly-zero dense token matrix as CSR (int64 indices, float64 values), or None
        (sparse, large or dense-valued X, or X scored for the first time: BLAS's product is used). Made on the
        second scoring of a matrix (an oracle's second round; a one-off prediction would pay more for the copy than
        it saves) and kept in ``prepared.data`` beside the matrix it was made from. 16 bytes a non-zero: 2.1 MB for
        OCR's training words."""
        X = prepared.data["X"]
        seen = prepared.data.get("X_nonzeros")
        if seen is None or seen[0] is not X:
            seen = prepared.data["X_nonzeros"] = (X, 0, None)
        if seen[1] == 1:
            nz = None
            if not sp.issparse(X) and X.ndim == 2 and 0 < X.size <= cls.NONZERO_MAX_ENTRIES:
                count = int(np.count_nonzero(X))
                if count <= cls.NONZERO_MAX_DENSITY * X.size:
                    nz = sp.csr_matrix(X)
                    nz.indptr, nz.indices = nz.indptr.astype(np.int64), nz.indices.astype(np.int64)
                    nz.data = np.asarray(nz.data, dtype=np.float64)
            seen = prepared.data["X_nonzeros"] = (X, 2, nz)
        elif seen[1] == 0:
            prepared.data["X_nonzeros"] = (X, 1, None)
        return seen[2]

    #: gathered entries of X per piece of :meth:`_state_sum` (~48 MB at 12 bytes an entry)
    STATE_CHUNK_NNZ = 1 << 22

    def _state_sum(self, X, tok, g, y):
        """The state block Xᵀ(E_g − E_y) over the tokens ``tok`` (gold label g, predicted y), summed over pieces of
        about :attr:`STATE_CHUNK_NNZ` gathered entries of X.

        Why pieces: the rows of all wrong tokens gathered at once are a second copy of X in the first rounds, when
        most tokens are wrong (425 MB on full CoNLL-2002 NER, with the product's temporaries 675 MB). With 0/1
        template features every entry is an integer count, so the sum is the same in any grouping.

        Parameters
        ----------
        X : scipy.sparse.csr_matrix, shape (N_tokens, d)
        tok, g, y : ndarray of int, shape (m,)

        Returns
        -------
        scipy.sparse.csr_matrix, shape (d, K)
        """
        K = self.n_labels
        ends = np.cumsum(np.diff(X.indptr)[tok])
        cuts = np.searchsorted(ends, np.arange(self.STATE_CHUNK_NNZ, ends[-1] if len(ends) else 0,
                                               self.STATE_CHUNK_NNZ), side="right")
        bounds = np.unique(np.r_[0, cuts, len(tok)])
        state = sp.csr_matrix((X.shape[1], K))
        for a, b in zip(bounds[:-1], bounds[1:]):
            part = sp.csr_matrix(X[tok[a:b]].T @ _gold_minus_decoded(g[a:b], y[a:b], K))
            state = part if state.nnz == 0 else state + part
        return state

    def _edge_delta(self, prepared, idx, tok, pos, g, lab):
        """The edge block of Σᵢ Δfᵢ: Σ_t z_t ⊗ (e(y_{t-1}, y_t) − e(ŷ_{t-1}, ŷ_t)) over the steps whose two gold labels
        are observed and whose label pair the labeling changed.

        Parameters
        ----------
        tok, pos : ndarray of int, shape (N,)
            Global token row and position of the stacked tokens of the examples ``idx`` (as ``_tokens`` gives).
        g, lab : ndarray of int, shape (N,)
            Gold (−1 hidden) and decoded labels of those tokens.

        Returns
        -------
        cols : ndarray of int, shape (nnz,)
            Coordinates in w (the ``edge`` block).
        vals : ndarray, shape (nnz,)
        """
        K = self.n_labels
        j = np.flatnonzero(pos > 0)   # the right-hand token of each step
        pg, py = g[j - 1] * K + g[j], lab[j - 1] * K + lab[j]
        keep = (g[j - 1] >= 0) & (g[j] >= 0) & (pg != py)
        j, pg, py = j[keep], pg[keep], py[keep]
        S = sp.csr_matrix(prepared.data["Xe"][tok[j]].T @ _gold_minus_decoded(pg, py, K * K))
        S.sum_duplicates()
        coo = S.tocoo()
        return self.offsets["edge"] + coo.row.astype(np.int64) * K * K + coo.col, coo.data

    # ------------------------------------------------------------------ prediction helpers
    def marginals(self, w, prepared, idx=None, kind="sum"):
        """Per-position marginals: forward-backward (``kind="sum"``, probabilities of the CRF with scores wᵀf) or
        max-marginals (``kind="max"``). Shape (B, T, K), zero past each length."""
        self._first_order_only("marginals")
        from ..inference import forward_backward, max_marginals
        idx = np.arange(prepared.n) if idx is None else np.asarray(idx, dtype=np.int64)
        node, edge, lengths = self.scores(w, prepared, idx)
        if kind == "max":
            return max_marginals(node, edge, lengths)
        nm, _, _ = forward_backward(node, edge, lengths)
        return nm

    def topk(self, w, prepared, k, idx=None):
        """The k best labelings per example, shapes (B, k, T) and (B, k)."""
        self._first_order_only("top-k decoding")
        from ..inference import viterbi_topk
        idx = np.arange(prepared.n) if idx is None else np.asarray(idx, dtype=np.int64)
        node, edge, lengths = self.scores(w, prepared, idx)
        return viterbi_topk(node, edge, lengths, k)


def allowed_bigrams(gold, n_labels):
    """The label bigrams seen in training labels, as an ``allowed`` mask for :class:`ChainFeatureMap` (order 2).

    A label never seen followed by anything may be followed by every label, and one never seen preceded by anything
    may follow every label, so that every length has an allowed labeling.

    Parameters
    ----------
    gold : sequence of ndarray of int
        Label sequences (−1: unobserved; bigrams with an unobserved side are not counted).
    n_labels : int

    Returns
    -------
    ndarray of bool, shape (n_labels, n_labels)
        ``[a, b]``: a followed by b was seen.
    """
    K = int(n_labels)
    seen = np.zeros((K, K), dtype=bool)
    for y in gold:
        y = np.asarray(y)
        if len(y) > 1:
            a, b = y[:-1], y[1:]
            ok = (a >= 0) & (b >= 0)
            seen[a[ok], b[ok]] = True
    seen[~seen.any(axis=1)] = True
    seen[:, ~seen.any(axis=0)] = True
    return seen
