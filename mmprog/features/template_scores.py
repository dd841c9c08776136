"""Token scores X·W of CRF++-style template features, summed without building X: the tagger's hot path.

Tagging needs X only through X·W (the state scores the chain's Viterbi reads). Most templates of a rich set read
one column at one row offset (``%x[0,0:suf3]``, ``%x[-1,0:lower]``, ``%x[1,1]``: in the ``rich`` preset 32 of 41):
their contribution at token t is a function of a single value, the one at t + r. So for each such *group* — the
templates reading base column b at offset r — :class:`StateScorer` keeps one K-vector per distinct value (the sum of
the group's weight rows at that value), computed the first time the value is met, and a token's score gathers one
vector per group instead of one weight row per template; the keys, feature look-ups and CSR rows of those
templates are never built. The other templates (several offsets or columns, such as ``%x[-1,0]/%x[0,0]``) go the
ordinary way, keys → feature indices → weight rows, without the CSR matrix.

Exactness: the sums are those of X·W, added in another order (by group, then the other templates), so the scores
equal :meth:`TemplateExtractor.transform` followed by the product up to rounding (a few ulps); labels differ only
where two labelings tie within that rounding.
"""
from __future__ import annotations

import numpy as np

from mmprog.exceptions import DataError, ParameterError
from mmprog.features.template_kernels import add_group_scores, add_template_rows
from mmprog.features.templates import column_index

__all__ = ["StateScorer"]


class StateScorer:
    """X·W for a fitted :class:`~mmprog.features.templates.TemplateExtractor` and a state weight block W.

    Parameters
    ----------
    extractor : TemplateExtractor
        Fitted, without bigram templates with macros (edge features are not state scores).
    W : ndarray, shape (n_features_, K)
        Weights of the input features per label (the chain map's ``state`` block). Held by reference: build a new
        scorer after changing it.
    memo_limit : int
        Distinct values remembered per base column before the per-value tables are emptied and rebuilt, which
        bounds memory on an endless stream (about 8·K·groups bytes a value: 360 bytes for the ``rich`` preset's
        five groups of the word column with K = 9).

    Attributes
    ----------
    groups : dict int -> list of (int, list of int)
        Per base column, (row offset, template indices) of each group.
    rest : list of int
        Indices of the templates scored one by one.
    """

    def __init__(self, extractor, W, memo_limit=500_000):
        extractor._check_fitted()
        if extractor.n_edge_features_:
            raise ParameterError("the extractor has bigram templates with macros (edge features); their scores "
                                 "depend on the label pair, so StateScorer does not apply: use transform()")
        W = np.asarray(W, dtype=np.float64)
        if W.ndim != 2 or W.shape[0] != extractor.n_features_:
            raise ParameterError(f"W must have shape (n_features_, K) = ({extractor.n_features_}, K); got "
                                 f"{W.shape}")
        self.extractor = extractor
        self.W = np.ascontiguousarray(W)
        self.memo_limit = int(memo_limit)
        by_group = {}
        self.rest = []
        for j, t in enumerate(extractor._feature_templates):
            offsets = {r for r, _ in t.macros}
            bases = {column_index(c) for _, c in t.macros}
            if len(offsets) == 1 and len(bases) == 1:
                by_group.setdefault((bases.pop(), offsets.pop()), []).append(j)
            else:
                self.rest.append(j)
        # the column keys the one-by-one templates read (their ids are gathered per token)
        self._rest_keys = {c for j in self.rest for _, c in extractor._feature_templates[j].macros}
        self.groups = {}
        for (b, r), js in sorted(by_group.items()):
            self.groups.setdefault(b, []).append((r, js))
        self._reach = extractor._K
        self._memos, self._tables = {}, {}
        self._S = {}           # per base column: (capacity, G, K) per-value group sums, the first _done[b] rows valid
        self._done = {}
        self._memo_of = {}     # per base column, the memo dict the valid rows of _S belong to
        self._bnd = {b: self._group_sums(b, None) for b in self.groups}
        self._shift = {b: np.array([r for r, _ in gs], dtype=np.int64) for b, gs in self.groups.items()}

    def _group_sums(self, b, L):
        """Per value and group of base column ``b``: the sum of the group's weight rows.

        ``L`` (rows, keys) holds the values' ids in the column keys (memo table rows); None gives the boundary
        symbols instead, ``_B-k`` at row k − 1 and ``_B+k`` at row reach + k − 1. Returns (rows, G, K); for the
        boundary (G, 2·reach, K).
        """
        ex, K = self.extractor, self.W.shape[1]
        keys = ex.column_keys(b)
        n = 2 * self._reach if L is None else L.shape[0]
        sym = np.arange(n, dtype=np.int64)
        out = np.zeros((n, len(self.groups[b]), K))
        for g, (_, js) in enumerate(self.groups[b]):
            tkeys = []
            for j in js:
                t = ex._feature_templates[j]
                if L is None:
                    atoms = [ex._vocab_size[c] + sym for _, c in t.macros]
                else:
                    atoms = [L[:, keys.index(c)] for _, c in t.macros]
                tkeys.append(t.compute_keys(atoms, [ex._vocab_size[c] + 2 * self._reach for _, c in t.macros],
                                            False, n))
            add_template_rows(ex.feature_columns(tkeys, js, n), self.W, out[:, g])
        return out.transpose(1, 0, 2).copy() if L is None else out

    def _rows(self, b, vals):
        """Memo rows of the tokens' values of base column ``b`` (N,), with the group sums of new values computed."""
        row, _ = self.extractor.memo_rows(b, vals, self._memos, self._tables, self.memo_limit)
        L = self._tables[b]
        if b not in self.groups:
            return row
        done = self._done.get(b, 0)
        S = self._S.get(b)
        if self._memo_of.get(b) is not self._memos[b]:
            done, S = 0, None              # the memo was emptied (a new dict): its rows start again
            self._memo_of[b] = self._memos[b]
        if L.shape[0] > done:
            if S is None or S.shape[0] < L.shape[0]:
                # grow by doubling: each chunk of a stream adds a few new values
                grown = np.empty((max(2 * L.shape[0], 1024),) + self._bnd[b].shape[::2])
                if S is not None:
                    grown[:done] = S[:done]
                S = grown
            S[done: L.shape[0]] = self._group_sums(b, L[done:])
            self._S[b], self._done[b] = S, L.shape[0]
        return row

    def __call__(self, values, lengths):
        """Scores X·W of the tokens, sentences back to back.

        Parameters
        ----------
        values : dict int -> list of str
            For every base column the templates read (:meth:`TemplateExtractor.base_columns`), all tokens' values.
        lengths : ndarray of int, shape (n_sent,)

        Returns
        -------
        ndarray of float64, shape (sum(lengths), K)
        """
        ex = self.extractor
        lens = np.asarray(lengths, dtype=np.int64)
        if lens.size and lens.min() < 1:
            raise DataError("empty sentence in the batch; every sentence needs at least one token")
        N = int(lens.sum())
        out = np.zeros((N, self.W.shape[1]))
        pos = np.arange(N) - np.repeat(np.cumsum(lens) - lens, lens)
        length = np.repeat(lens, lens)
        ids = {}
        for b in ex.base_columns():
            row = self._rows(b, values[b])
            if b in self.groups:
                add_group_scores(row, pos, length, self._shift[b], self._S[b], self._bnd[b], self._reach, out)
            L = self._tables[b]
            for i, c in enumerate(ex.column_keys(b)):
                if c in self._rest_keys:
                    ids[c] = L[row, i]
        if self.rest:
            keys = ex._atoms(lens, ids, fitting=False, which=self.rest)
            add_template_rows(ex.feature_columns(keys, self.rest, N, hashed=True), self.W, out)
        return out
