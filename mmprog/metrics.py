"""Evaluation measures of the papers' experiments: token and sequence error (OCR, Zhu et al. 2009 Table 1), chunk
precision/recall/F1 (CoNLL NER and chunking, Mao & Tsang Tables 5-6), word-segmentation P/R/F1 with in- and
out-of-vocabulary recall (SIGHAN 2005, Mao & Tsang Tables 3-4) and attachment scores with and without punctuation
plus complete-sentence accuracy (dependency parsing, Mao & Tsang Table 7).

All scores are fractions in [0, 1] (multiply by 100 for the papers' percentages). Every function works on whole
corpora at once: sequences are concatenated and compared as integer arrays, so scoring ~50k tokens takes milliseconds.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
import numpy as np

from mmprog.exceptions import DataError

__all__ = [
    "token_error", "sequence_error",
    "PRF", "ChunkScores", "chunk_prf", "chunks",
    "SegmentationScores", "segmentation_prf", "tags_to_words",
    "PUNCT_TAGS", "DEFAULT_PUNCT_TAGS", "AttachmentScores", "attachment_scores", "is_punct",
    "flatten_tags", "flat_accuracy_score", "flat_precision_score", "flat_recall_score", "flat_f1_score",
    "flat_fbeta_score", "flat_classification_report", "sequence_accuracy_score",
]


# ----------------------------------------------------------------------------------------------------------------------
# token and sequence error
# ----------------------------------------------------------------------------------------------------------------------

def _paired_labels(Y_true, Y_pred):
    """Concatenate two lists of label arrays after checking they pair up; returns (true, pred, seq_id) flat arrays."""
    if len(Y_true) != len(Y_pred):
        raise DataError(f"Y_pred has {len(Y_pred)} sequences but Y_true has {len(Y_true)}; pass one prediction per "
                        f"sequence")
    if len(Y_true) == 0:
        raise DataError("Y_true is empty; pass at least one sequence")
    # whole-corpus array operations, not ~4 NumPy calls per sequence (50 of the 120 ms of scoring OCR's 6,251 test
    # words went to building the sequence ids one np.full at a time)
    yt = [np.asarray(t).ravel() for t in Y_true]
    yp = [np.asarray(p).ravel() for p in Y_pred]
    lt = np.fromiter((t.shape[0] for t in yt), dtype=np.int64, count=len(yt))
    lp = np.fromiter((p.shape[0] for p in yp), dtype=np.int64, count=len(yp))
    short = np.flatnonzero(lp < lt)
    if len(short):
        i = int(short[0])
        raise DataError(f"sequence {i}: prediction has {lp[i]} labels but the truth has {lt[i]}; "
                        f"predict every position")
    # padded predictions (decoders return (B, T_max) with -1 padding) are cut to the true length
    longer = np.flatnonzero(lp > lt)
    for i in longer.tolist():
        yp[i] = yp[i][: lt[i]]
    return np.concatenate(yt), np.concatenate(yp), np.repeat(np.arange(len(yt), dtype=np.int64), lt)


def token_error(Y_true, Y_pred) -> float:
    """Fraction of observed positions whose predicted label differs from the true one.

    Parameters
    ----------
    Y_true : list of int arrays, each (T_i,)
        True labels; -1 marks an unobserved position, which is ignored.
    Y_pred : list of int arrays, each (T_i,) or longer (padding past T_i is ignored)
        Predicted labels.

    Returns
    -------
    float
        Σ_i Σ_t 1[y_it ≠ ŷ_it] / (number of observed positions); nan when nothing is observed.
    """
    yt, yp, _ = _paired_labels(Y_true, Y_pred)
    obs = yt >= 0
    if not obs.any():
        return float("nan")
    return float(np.mean(yt[obs] != yp[obs]))


def sequence_error(Y_true, Y_pred) -> float:
    """Fraction of sequences with at least one wrong observed label.

    Parameters
    ----------
    Y_true, Y_pred : list of int arrays
        As in :func:`token_error`; positions with true label -1 are ignored. A sequence without observed positions
        counts as correct.

    Returns
    -------
    float
    """
    yt, yp, sid = _paired_labels(Y_true, Y_pred)
    wrong = (yt >= 0) & (yt != yp)
    n_wrong_seq = np.count_nonzero(np.bincount(sid, weights=wrong, minlength=len(Y_true)))
    return n_wrong_seq / len(Y_true)


# ----------------------------------------------------------------------------------------------------------------------
# chunks (CoNLL)
# ----------------------------------------------------------------------------------------------------------------------

class _Scores:
    """Dict-like access to a score record: ``as_dict()`` and ``items()`` (JSON-able, for reports)."""

    def as_dict(self) -> dict:
        return asdict(self)

    def items(self):
        return self.as_dict().items()


@dataclass(frozen=True)
class PRF(_Scores):
    """Precision, recall, F1 and support (number of true items)."""
    precision: float
    recall: float
    f1: float
    support: int


def _prf(n_correct, n_pred, n_true) -> PRF:
    # zero denominators give 0, as conlleval and seqeval (zero_division=0) do
    p = n_correct / n_pred if n_pred else 0.0
    r = n_correct / n_true if n_true else 0.0
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return PRF(float(p), float(r), float(f), int(n_true))


@dataclass(frozen=True)
class ChunkScores(_Scores):
    """Chunk-level scores.

    Attributes
    ----------
    precision, recall, f1 : float
        Micro-averaged over all chunk types (conlleval's overall line).
    per_type : dict[str, PRF]
        The same per chunk type (types that occur in the truth or the prediction), sorted by name.
    n_true, n_pred, n_correct : int
        Chunk counts.
    """
    precision: float
    recall: float
    f1: float
    per_type: dict = field(default_factory=dict)
    n_true: int = 0
    n_pred: int = 0
    n_correct: int = 0


# prefix codes of chunk tags
_O, _B, _I, _E, _S, _DOT, _OTHER = range(7)
_PREFIX_CODE = {"O": _O, "B": _B, "I": _I, "E": _E, "S": _S, ".": _DOT}


def _as_tag_lists(tags, label_names, what):
    """Accept list of list[str] (or one flat list of str, or int arrays with label_names); return list of lists."""
    if isinstance(tags, np.ndarray) and tags.ndim == 1 and tags.dtype.kind in "UO":
        tags = [list(tags)]
    elif len(tags) and isinstance(tags[0], str):
        tags = [list(tags)]
    if label_names is None:
        return [list(s) for s in tags]
    names = np.asarray(list(label_names), dtype=object)
    out = []
    for i, s in enumerate(tags):
        s = np.asarray(s)
        if s.dtype.kind not in "iu":
            raise DataError(f"{what} sequence {i}: label_names given, so tags must be int arrays; got dtype {s.dtype}")
        if s.size and (s.min() < 0 or s.max() >= len(names)):
            raise DataError(f"{what} sequence {i}: label {int(s.min() if s.min() < 0 else s.max())} outside "
                            f"[0, {len(names)}) of label_names; cut padding (-1) before scoring chunks")
        out.append(list(names[s]))
    return out


def chunks(tags, label_names=None) -> set[tuple[str, int, int, int]]:
    """Chunks of tagged sequences as conlleval reads them.

    Parameters
    ----------
    tags : list of list[str]
        One tag sequence per sentence (or one flat list for a single sentence). Tags are ``PREFIX-TYPE`` or ``O``
        with prefixes B, I, E, S (IOB1, IOB2/BIO, IOE and IOBES all read by the same rules).
    label_names : sequence of str, optional
        If given, ``tags`` are int arrays indexing it.

    Returns
    -------
    set of (type, sentence, start, end)
        ``end`` inclusive, token indices within the sentence.

    Notes
    -----
    A chunk starts at a B or S tag, at an I or E tag that follows O, E or S, and wherever the type changes; it ends
    before a B, S or O that follows B or I, after every E or S, and wherever the type changes (conlleval's
    ``startOfChunk``/``endOfChunk``; seqeval's default mode uses the same rules). So an IOB1 ``I-PER`` after ``O``
    opens a chunk, and so does an ill-formed BIO ``I-PER`` after ``O``.
    """
    seqs = _as_tag_lists(tags, label_names, "tags")
    return _chunk_set(seqs)[0]


def _encode_tags(seqs):
    """Flatten sentences, with an 'O' sentinel after each, into prefix codes, type ids, sentence ids, positions."""
    lens = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
    flat = [t for s in seqs for t in (*s, "O")]
    uniq = {}
    ids = np.fromiter((uniq.setdefault(t, len(uniq)) for t in flat), dtype=np.int64, count=len(flat))
    tag_list = list(uniq)
    pref = np.empty(len(tag_list), dtype=np.int64)
    types = []
    for k, t in enumerate(tag_list):
        if not isinstance(t, str):
            raise DataError(f"tag {t!r} is not a string; pass label_names to score integer labels")
        head, sep, typ = t.partition("-")
        pref[k] = _PREFIX_CODE.get(head, _OTHER)
        types.append(typ if typ else "_")
    type_names = sorted(set(types))
    type_id = np.array([type_names.index(t) for t in types], dtype=np.int64)
    sent = np.repeat(np.arange(len(seqs)), lens + 1)
    starts = np.concatenate([[0], np.cumsum(lens + 1)[:-1]])
    pos = np.arange(len(flat)) - np.repeat(starts, lens + 1)
    return pref[ids], type_id[ids], type_names, sent, pos


def _chunk_set(seqs):
    """Chunks of many sentences at once: returns (python set, int64 keys, type ids of keys, type names)."""
    p, ty, type_names, sent, pos = _encode_tags(seqs)
    n = p.shape[0]
    prev_p = np.concatenate([[_O], p[:-1]])
    prev_ty = np.concatenate([[-1], ty[:-1]])
    type_change = prev_ty != ty
    # end of a chunk between t-1 and t (conlleval endOfChunk)
    end = ((prev_p == _E) | (prev_p == _S)
           | (((prev_p == _B) | (prev_p == _I)) & ((p == _B) | (p == _S) | (p == _O)))
           | ((prev_p != _O) & (prev_p != _DOT) & type_change))
    # start of a chunk at t (conlleval startOfChunk)
    start = ((p == _B) | (p == _S)
             | (((prev_p == _E) | (prev_p == _S) | (prev_p == _O)) & ((p == _E) | (p == _I)))
             | ((p != _O) & (p != _DOT) & type_change))
    start_idx = np.flatnonzero(start)
    end_idx = np.flatnonzero(end)
    # a chunk closed at t began at the last start before t (begin 0 if none, as in conlleval's initial state)
    k = np.searchsorted(start_idx, end_idx, side="left") - 1
    begin = np.where(k >= 0, start_idx[np.maximum(k, 0)], 0)
    last = end_idx - 1
    ctype = ty[last]
    keys = np.unique((begin * (n + 1) + last) * max(len(type_names), 1) + ctype)
    ctype = keys % max(len(type_names), 1)
    rest = keys // max(len(type_names), 1)
    b, e = rest // (n + 1), rest % (n + 1)
    as_set = {(type_names[c], int(sent[bb]), int(pos[bb]), int(pos[ee])) for c, bb, ee in zip(ctype, b, e)}
    return as_set, keys, ctype, type_names


def chunk_prf(true_tags, pred_tags, label_names=None) -> ChunkScores:
    """Chunk precision, recall and F1 as conlleval computes them (and seqeval in its default mode).

    Parameters
    ----------
    true_tags, pred_tags : list of list[str]
        Tag sequences, one per sentence, same lengths (BIO/IOB2, IOB1 as in CoNLL-2000/2002, IOE, IOBES). A chunk is
        correct when its type, start and end all match a true chunk (see :func:`chunks` for how chunks are read).
    label_names : sequence of str, optional
        If given, both arguments are int arrays indexing it (e.g. decoder output with the dataset's label names).

    Returns
    -------
    ChunkScores
        Overall (micro) and per-type precision, recall, F1.
    """
    ts = _as_tag_lists(true_tags, label_names, "true_tags")
    ps = _as_tag_lists(pred_tags, label_names, "pred_tags")
    if len(ts) != len(ps):
        raise DataError(f"pred_tags has {len(ps)} sentences but true_tags has {len(ts)}; pass one per sentence")
    for i, (a, b) in enumerate(zip(ts, ps)):
        if len(a) != len(b):
            raise DataError(f"sentence {i}: {len(b)} predicted tags for {len(a)} true tags; lengths must match")
    true_set = _chunk_set(ts)[0]
    pred_set = _chunk_set(ps)[0]
    correct = true_set & pred_set
    types = sorted({c[0] for c in true_set} | {c[0] for c in pred_set})

    def count(s):
        out = dict.fromkeys(types, 0)
        for c in s:
            out[c[0]] += 1
        return out

    ct, cp, cc = count(true_set), count(pred_set), count(correct)
    per_type = {t: _prf(cc[t], cp[t], ct[t]) for t in types}
    overall = _prf(len(correct), len(pred_set), len(true_set))
    return ChunkScores(overall.precision, overall.recall, overall.f1, per_type,
                       len(true_set), len(pred_set), len(correct))


# ----------------------------------------------------------------------------------------------------------------------
# Chinese word segmentation (SIGHAN bakeoff scorer)
# ----------------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SegmentationScores(_Scores):
    """Word-segmentation scores as printed by the SIGHAN 2005 ``score`` script.

    Attributes
    ----------
    precision, recall, f1 : float
        Word precision (correct / predicted words), recall (correct / gold words) and their harmonic mean.
    r_iv, r_oov : float
        Recall on gold words that are in / not in the training vocabulary (nan without ``train_vocab`` or when the
        class is empty).
    oov_rate : float
        Fraction of gold words not in the training vocabulary (nan without ``train_vocab``).
    n_gold, n_pred, n_correct : int
        Word counts.
    """
    precision: float
    recall: float
    f1: float
    r_iv: float
    r_oov: float
    oov_rate: float
    n_gold: int
    n_pred: int
    n_correct: int


def _as_word_lists(sents):
    return [s.split() if isinstance(s, str) else list(s) for s in sents]


def _word_spans(sents):
    """Global character offsets: returns (starts, ends) of every word, int64 (n_words,), and the sentence lengths."""
    words = [w for s in sents for w in s]
    lens = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
    ends = np.cumsum(lens)
    return ends - lens, ends, words


def segmentation_prf(gold_words, pred_words, train_vocab=None) -> SegmentationScores:
    """Word precision, recall, F1 and IV/OOV recall of a segmentation, as the SIGHAN bakeoff scorer counts them.

    Parameters
    ----------
    gold_words, pred_words : list of sentences
        Each sentence a list of words (str) or one whitespace-separated string (a line of a SIGHAN gold file). Gold and
        predicted sentences must spell the same characters.
    train_vocab : set of str or iterable, optional
        Words of the training data (e.g. ``gold/pku_training_words.utf8``); a gold word is in-vocabulary (IV) when it
        is in this set, else out-of-vocabulary (OOV).

    Returns
    -------
    SegmentationScores

    Notes
    -----
    A predicted word is correct when a gold word covers exactly the same characters (same start and end offset);
    this is what the scorer's ``diff`` of one-word-per-line files counts. R_iv = correct IV gold words / IV gold
    words (Mao & Tsang report it in Tables 3-4).
    """
    g = _as_word_lists(gold_words)
    p = _as_word_lists(pred_words)
    if len(g) != len(p):
        raise DataError(f"pred_words has {len(p)} sentences but gold_words has {len(g)}; pass one per sentence")
    for i, (a, b) in enumerate(zip(g, p)):
        if "".join(a) != "".join(b):
            raise DataError(f"sentence {i}: predicted words spell {''.join(b)[:30]!r}... but gold words spell "
                            f"{''.join(a)[:30]!r}...; segment the same characters")
    gs, ge, gw = _word_spans(g)
    ps, pe, _ = _word_spans(p)
    n_chars = int(ge[-1]) + 1 if ge.size else 1
    gold_keys = gs * n_chars + ge
    pred_keys = ps * n_chars + pe
    hit = np.isin(gold_keys, pred_keys)
    n_correct = int(hit.sum())
    prf = _prf(n_correct, pred_keys.size, gold_keys.size)
    r_iv = r_oov = oov_rate = float("nan")
    if train_vocab is not None:
        vocab = train_vocab if isinstance(train_vocab, (set, frozenset, dict)) else set(train_vocab)
        iv = np.fromiter((w in vocab for w in gw), dtype=bool, count=len(gw))
        if iv.any():
            r_iv = float(hit[iv].mean())
        if (~iv).any():
            r_oov = float(hit[~iv].mean())
        oov_rate = float((~iv).mean()) if iv.size else float("nan")
    return SegmentationScores(prf.precision, prf.recall, prf.f1, r_iv, r_oov, oov_rate,
                              int(gold_keys.size), int(pred_keys.size), n_correct)


_SEG_TAGS = {"B", "I", "M", "E", "S"}


def tags_to_words(chars, tags) -> list[str]:
    """Cut a character sequence into words from per-character B/I/E(/S) tags.

    Parameters
    ----------
    chars : str or sequence of str
        The characters (or tokens) of one sentence.
    tags : sequence of str
        One of B (first character of a word), I or M (inside), E (last character), S (single-character word) per
        character. A word boundary lies before every B or S and after every E or S, so both the four-tag BIES
        scheme and the three-tag B/I/E scheme of Mao & Tsang (single-character words tagged B) are read, and ill-formed
        sequences still give a segmentation.

    Returns
    -------
    list of str
        The words, concatenating to ``chars``.
    """
    chars = list(chars)
    tags = list(tags)
    if len(chars) != len(tags):
        raise DataError(f"tags_to_words: {len(tags)} tags for {len(chars)} characters; pass one tag per character")
    bad = [t for t in tags if t not in _SEG_TAGS]
    if bad:
        raise DataError(f"tags_to_words: tag {bad[0]!r} is not one of B, I, M, E, S")
    if not chars:
        return []
    t = np.array(tags)
    begins = np.isin(t, ["B", "S"])
    after_end = np.concatenate([[True], np.isin(t[:-1], ["E", "S"])])
    cut = np.flatnonzero(begins | after_end)
    bounds = np.append(cut, len(chars))
    return ["".join(chars[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


# ----------------------------------------------------------------------------------------------------------------------
# dependency attachment
# ----------------------------------------------------------------------------------------------------------------------

#: Punctuation POS tags of the tag sets mmprog's treebanks use. A token counts as punctuation when its gold POS tag
#: (or the part before the first ``|`` of a SUC-style tag such as ``MAD``) is in the chosen set.
PUNCT_TAGS = {
    # Penn Treebank: the five tags the usual "without punctuation" evaluation drops (Yamada & Matsumoto 2003;
    # Chen & Manning 2014). -LRB-, -RRB-, # and $ are kept as words.
    "ptb": frozenset({"``", "''", ",", ".", ":"}),
    # Universal Dependencies UPOS
    "ud": frozenset({"PUNCT"}),
    # Stockholm-Umeå Corpus tags, the XPOS of UD Swedish-Talbanken: MAD sentence-final, MID sentence-internal,
    # PAD paired punctuation
    "suc": frozenset({"MAD", "MID", "PAD"}),
    # Talbanken05 / MAMBA tags of the CoNLL-X Swedish data (Table 7 of Mao & Tsang): I? question mark, IC quotation
    # mark, IG other, IK comma, IP period, IQ colon, IR parenthesis, IS semicolon, IT dash, IU exclamation mark
    # (ID, part of idiom, and IM, infinitive marker, are words)
    "talbanken05": frozenset({"I?", "IC", "IG", "IK", "IP", "IQ", "IR", "IS", "IT", "IU"}),
    # Danish Dependency Treebank (CoNLL-X Danish)
    "ddt": frozenset({"XP"}),
}
#: The union of all sets above; none of these tags means anything else in another of the tag sets.
DEFAULT_PUNCT_TAGS = frozenset().union(*PUNCT_TAGS.values())


def is_punct(pos, punct_tags=DEFAULT_PUNCT_TAGS) -> np.ndarray:
    """Boolean mask (n,) of punctuation tokens from their POS tags (see :data:`PUNCT_TAGS`).

    Parameters
    ----------
    pos : sequence of str, shape (n,)
    punct_tags : str or iterable of str
        A key of :data:`PUNCT_TAGS` or a set of tags.
    """
    if isinstance(punct_tags, str):
        if punct_tags not in PUNCT_TAGS:
            raise DataError(f"punct_tags {punct_tags!r} is not one of {sorted(PUNCT_TAGS)}; or pass a set of tags")
        punct_tags = PUNCT_TAGS[punct_tags]
    punct_tags = frozenset(punct_tags)
    uniq = {}
    ids = np.fromiter((uniq.setdefault(t, len(uniq)) for t in pos), dtype=np.int64)
    # SUC-style tags carry morphology after '|' (``MAD`` is bare, but ``PM|NOM`` is not): test the full tag and the
    # part before the first '|'
    hit = np.array([t in punct_tags or str(t).split("|", 1)[0] in punct_tags for t in uniq], dtype=bool)
    return hit[ids] if ids.size else np.zeros(0, dtype=bool)


@dataclass(frozen=True)
class AttachmentScores(_Scores):
    """Unlabelled attachment scores.

    Attributes
    ----------
    uas : float
        Fraction of tokens with the correct head, punctuation included (Mao & Tsang's UASP).
    uas_no_punct : float
        The same over non-punctuation tokens (their UAS); nan when no POS tags were given.
    complete : float
        Fraction of sentences whose every token has the correct head (their ACC).
    complete_no_punct : float
        Fraction of sentences whose every non-punctuation token has the correct head (nan without POS tags).
    n_tokens, n_tokens_no_punct, n_sentences : int
    """
    uas: float
    uas_no_punct: float
    complete: float
    complete_no_punct: float
    n_tokens: int
    n_tokens_no_punct: int
    n_sentences: int


def _pred_heads_row(p, n, i):
    """Heads of tokens 1..n from a prediction row that is either (n,) or the decoder layout (≥ n+1,) with p[0] = -1."""
    p = np.asarray(p).ravel()
    if p.shape[0] == n:
        return p
    if p.shape[0] >= n + 1 and p[0] == -1:
        if np.any(p[n + 1:] != -1):
            raise DataError(f"sentence {i}: prediction row in decoder layout has heads past the {n} tokens; "
                            f"predictions do not match the gold sentence")
        return p[1:n + 1]
    raise DataError(f"sentence {i}: {p.shape[0]} predicted heads for {n} tokens; pass heads of tokens 1..n, or the "
                    f"decoder row with -1 at the root slot")


def attachment_scores(gold_heads, pred_heads, pos=None, punct_tags=DEFAULT_PUNCT_TAGS) -> AttachmentScores:
    """Unlabelled attachment score with and without punctuation, and complete-sentence accuracy.

    Parameters
    ----------
    gold_heads : list of int arrays, each (n_i,)
        Gold head of tokens 1..n_i (0 = root), as ``TreeDataset.heads``.
    pred_heads : list of int arrays
        Predicted heads, each (n_i,) in the same layout, or a decoder row (≥ n_i+1,) with -1 at index 0 and -1
        padding (the output of ``ArcFeatureMap.decode``); a 2-D padded array is read row by row.
    pos : list of sequences of str, optional
        Gold POS tags per token (e.g. ``[s["pos"] for s in dataset.sentences]``); needed for the scores without
        punctuation.
    punct_tags : str or iterable of str
        Which tags are punctuation: a key of :data:`PUNCT_TAGS` (``"ptb"``, ``"ud"``, ``"suc"``, ``"talbanken05"``,
        ``"ddt"``) or a set; default the union of all of them.

    Returns
    -------
    AttachmentScores
    """
    if len(gold_heads) != len(pred_heads):
        raise DataError(f"pred_heads has {len(pred_heads)} sentences but gold_heads has {len(gold_heads)}; pass one "
                        f"per sentence")
    if pos is not None and len(pos) != len(gold_heads):
        raise DataError(f"pos has {len(pos)} sentences but gold_heads has {len(gold_heads)}; pass one per sentence")
    g = [np.asarray(h).ravel() for h in gold_heads]
    lens = np.fromiter((h.shape[0] for h in g), dtype=np.int64, count=len(g))
    p = [_pred_heads_row(pr, n, i) for i, (pr, n) in enumerate(zip(pred_heads, lens))]
    gold = np.concatenate(g) if g else np.zeros(0, dtype=np.int64)
    pred = np.concatenate(p) if p else np.zeros(0, dtype=np.int64)
    sent = np.repeat(np.arange(len(g)), lens)
    wrong = gold != pred
    n_sent = len(g)
    uas = float(1.0 - wrong.mean()) if gold.size else float("nan")
    complete = float(np.mean(np.bincount(sent, weights=wrong, minlength=n_sent) == 0)) if n_sent else float("nan")
    uas_np = complete_np = float("nan")
    n_np = 0
    if pos is not None:
        for i, (t, n) in enumerate(zip(pos, lens)):
            if len(t) != n:
                raise DataError(f"sentence {i}: {len(t)} POS tags for {n} tokens; pass one tag per token")
        punct = is_punct([t for s in pos for t in s], punct_tags) if gold.size else np.zeros(0, dtype=bool)
        keep = ~punct
        n_np = int(keep.sum())
        uas_np = float(1.0 - wrong[keep].mean()) if n_np else float("nan")
        complete_np = float(np.mean(np.bincount(sent, weights=wrong & keep, minlength=n_sent) == 0)) \
            if n_sent else float("nan")
    return AttachmentScores(uas, uas_np, complete, complete_np, int(gold.size), n_np, n_sent)


# ----------------------------------------------------------------------------------------------------------------------
# sklearn-crfsuite's sequence metrics (``mmprog.crfsuite.metrics``)
# ----------------------------------------------------------------------------------------------------------------------

def flatten_tags(y):
    """The tokens' labels of a list of label sequences, concatenated into one list (sklearn-crfsuite's flattening:
    every token counts once, whatever its sentence)."""
    return [t for seq in y for t in seq]


def _flat_pair(y_true, y_pred):
    """Both sides flattened, after checking that they pair up sentence by sentence (naming the first that does
    not); a silently shifted token would move every score."""
    y_true, y_pred = list(y_true), list(y_pred)
    if len(y_true) != len(y_pred):
        raise DataError(f"y_true has {len(y_true)} sequences, y_pred has {len(y_pred)}")
    for i, (a, b) in enumerate(zip(y_true, y_pred)):
        if len(a) != len(b):
            raise DataError(f"sequence {i}: y_true has {len(a)} labels, y_pred has {len(b)}")
    return flatten_tags(y_true), flatten_tags(y_pred)


def flat_accuracy_score(y_true, y_pred):
    """Token accuracy over all sequences (``sklearn.metrics.accuracy_score`` of the flattened labels)."""
    from sklearn import metrics
    return metrics.accuracy_score(*_flat_pair(y_true, y_pred))


def flat_precision_score(y_true, y_pred, **kwargs):
    """``sklearn.metrics.precision_score`` of the flattened labels (same keyword arguments: labels, average, ...)."""
    from sklearn import metrics
    return metrics.precision_score(*_flat_pair(y_true, y_pred), **kwargs)


def flat_recall_score(y_true, y_pred, **kwargs):
    """``sklearn.metrics.recall_score`` of the flattened labels."""
    from sklearn import metrics
    return metrics.recall_score(*_flat_pair(y_true, y_pred), **kwargs)


def flat_f1_score(y_true, y_pred, **kwargs):
    """``sklearn.metrics.f1_score`` of the flattened labels (the tutorial's ``average='weighted', labels=...``).

    Note these are token scores (each token's label a class), not CoNLL entity scores: :func:`chunk_prf` scores
    whole chunks."""
    from sklearn import metrics
    return metrics.f1_score(*_flat_pair(y_true, y_pred), **kwargs)


def flat_fbeta_score(y_true, y_pred, beta, **kwargs):
    """``sklearn.metrics.fbeta_score`` of the flattened labels."""
    from sklearn import metrics
    return metrics.fbeta_score(*_flat_pair(y_true, y_pred), beta=beta, **kwargs)


def flat_classification_report(y_true, y_pred, labels=None, **kwargs):
    """``sklearn.metrics.classification_report`` of the flattened labels (the tutorial passes sorted ``labels``)."""
    from sklearn import metrics
    return metrics.classification_report(*_flat_pair(y_true, y_pred), labels=labels, **kwargs)


def sequence_accuracy_score(y_true, y_pred):
    """Fraction of sequences whose every label is right (1 − sequence error on label strings)."""
    y_true, y_pred = list(y_true), list(y_pred)
    _flat_pair(y_true, y_pred)
    if not y_true:
        return float("nan")
    return sum(list(a) == list(b) for a, b in zip(y_true, y_pred)) / len(y_true)
