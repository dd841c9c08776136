"""The separation oracle: loss-augmented inference for a batch of examples → cuts.

For every example i the oracle finds ŷᵢ = argmax_y wᵀf(xᵢ, y) + Δℓᵢ(y) with one batched kernel call (Viterbi for
chains, Chu-Liu-Edmonds or Eisner for trees) and returns the cut rows Δfᵢ(ŷᵢ), Δℓᵢ(ŷᵢ) and the hinge losses
Hᵢ(w) = Δℓᵢ(ŷᵢ) − wᵀΔfᵢ(ŷᵢ) = max_y [Δℓᵢ(y) − wᵀΔfᵢ(y)] ≥ 0.

Backends differ only in where the batches run:

* ``"serial"``: in-process, one batched call;
* ``"thread"``: in-process, the examples cut into ``n_jobs`` contiguous chunks run on a thread pool — for feature
  maps whose kernels release the GIL (the chain map: one BLAS product and one compiled ``nogil`` call a chunk);
* ``"process"``: a process pool across cores, the feature map and data sent once per worker;
* ``"dask"``: a ``dask.distributed`` Client (or scheduler address), or without one a ``LocalCluster`` of
  ``n_jobs`` single-threaded worker processes started here (and closed with the oracle); the data are scattered once
  to every worker and each round sends only w, in chunks of many examples.

In the 1-slack form a worker returns only what the round needs: the sum of its examples' ΔF (sparse), of their Δℓ,
and their hinge losses — not one ΔF row and labeling per example, whose transfer and merge made the process pool
5× slower than the serial oracle on OCR (33.0 against 6.2 s). Workers run their BLAS single-threaded: the pool is
the parallelism, and nested BLAS threads on the same cores only contend. The serial oracle runs its kernels with
BLAS single-threaded too: its products are small (OCR: 4,500 tokens × 128 pixels × 26 labels a round), and
OpenBLAS's second thread doubled the oracle's CPU time on OCR fold 0 for no gain in wall time (100 rounds: 3.5 s CPU
against 1.2–1.6 s single-threaded, on the shared 2-core machine).
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from ..cuts import Cuts, CountCut, LabelingCut
from ..exceptions import ParameterError

BACKENDS = ("serial", "thread", "process", "dask")

_CONTROLLER = []


def blas_single():
    """A context in which BLAS runs on one thread (threadpoolctl, cached controller: 27 µs a call); a no-op
    context without threadpoolctl."""
    import contextlib
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return contextlib.nullcontext()
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1, user_api="blas")


def separate_chunk(fmap, prepared, w, idx):
    """Loss-augmented decoding and cut rows for the examples ``idx`` (the unit of work of every backend).

    Returns
    -------
    Cuts
        One cut per example in ``idx`` (``example`` = the example index).
    hinge : ndarray, shape (len(idx),)
    """
    idx = np.asarray(idx, dtype=np.int64)
    labelings = fmap.decode(w, prepared, idx, loss_augmented=True)
    dF, dl = fmap.delta(prepared, idx, labelings)
    hinge = dl - dF @ w
    return Cuts(idx, dF, dl, labelings), hinge


# process-pool workers keep the feature map and data they were started with
_WORKER = {}


def sum_chunk(fmap, prepared, w, idx, labeling=False):
    """The 1-slack contribution of the examples ``idx``: Σ ΔFᵢ(ŷᵢ) as a sparse (1, dim) row, Σ Δℓᵢ(ŷᵢ) and the hinge
    losses, shape (len(idx),) — through the feature map's ``separate_sum`` where it has one.

    Where the map can, the row comes as integer counts (0/1 features) and, with ``labeling``, as the labeling's
    arrays (``tok``, ``gold``, ``pred``, ``trans``, ``K``; the token matrix is left out, the parent has it), so
    :func:`merge_one_slack` makes the very cut the serial oracle makes: a float row summed in parts and divided by
    n would differ from it in the last bits (scipy divides by multiplying with 1/n), enough to send the cutting
    plane down another path after a few rounds."""
    import scipy.sparse as sp
    idx = np.asarray(idx, dtype=np.int64)
    if hasattr(fmap, "separate_sum"):
        try:
            dF_sum, dl_sum, hinge = fmap.separate_sum(w, prepared, idx, sparse=True, counts=True, labeling=labeling)
        except NotImplementedError:
            pass
        else:
            if isinstance(dF_sum, dict):
                dF_sum = {k: v for k, v in dF_sum.items() if k != "X"}
            return dF_sum, dl_sum, hinge
    cuts, hinge = separate_chunk(fmap, prepared, w, idx)
    return sp.csr_matrix(cuts.dF.sum(axis=0)), float(cuts.dl.sum()), hinge


def merge_one_slack(parts, X, n):
    """The 1-slack cut from the parts :func:`sum_chunk` (or the serial ``separate_sum``, one part) returned for
    contiguous example ranges, in order; a single part is kept as it is (no copy of a full-NER cut).

    Labelings are concatenated (their tokens then ascend as in the serial pass) into a
    :class:`~mmprog.cuts.LabelingCut` on ``X``; integer counts are added exactly into a
    :class:`~mmprog.cuts.CountCut` (int16 when every count fits, as :func:`~mmprog.features._binary.binary_state_cut`
    stores them); float rows are added and divided by n in place (correctly rounded, as the serial path does).

    Parameters
    ----------
    parts : list of (dF_sum, dl_sum, hinge)
    X : scipy.sparse.csr_matrix, shape (N, d)
        The prepared token rows (read only for labelings).
    n : int
        The number of examples.

    Returns
    -------
    cut : Cuts, CountCut or LabelingCut
    hinge : ndarray, shape (n,)
    """
    import scipy.sparse as sp
    hinge = np.concatenate([p[2] for p in parts])
    dl = float(sum(p[1] for p in parts)) / n
    rows = [p[0] for p in parts]
    if len(rows) == 1:
        row = rows[0]
        if isinstance(row, dict):
            return LabelingCut(X, row["tok"], row["gold"], row["pred"], row["trans"], row["K"], n, dl), hinge
        if row.data.dtype.kind == "i":
            # integer counts (0/1 features): kept as they are, divided by n where read (6–8 bytes an entry)
            return CountCut(row, n, dl), hinge
        row.data /= n        # in place: the map's fresh row (a copy per round was 12 bytes an entry more)
        return Cuts(np.zeros(1, dtype=np.int64), row, np.array([dl])), hinge
    if all(isinstance(r, dict) for r in rows):
        trans = rows[0]["trans"].copy()
        for r in rows[1:]:
            trans += r["trans"]
        return LabelingCut(X, *(np.concatenate([r[k] for r in rows]) for k in ("tok", "gold", "pred")), trans,
                           rows[0]["K"], n, dl), hinge
    if all(r.data.dtype.kind == "i" for r in rows):
        total = rows[0].astype(np.int64)
        for r in rows[1:]:
            total = total + r.astype(np.int64)       # scipy's sum keeps sorted indices and drops the zeros it makes
        largest = int(np.abs(total.data).max()) if total.nnz else 0
        vtype = np.int16 if largest <= np.iinfo(np.int16).max else np.int32
        itype = rows[0].indices.dtype
        counts = sp.csr_matrix((total.data.astype(vtype), total.indices.astype(itype),
                                total.indptr.astype(itype)), shape=total.shape)
        return CountCut(counts, n, dl), hinge
    total = rows[0].astype(np.float64)
    for r in rows[1:]:
        total = total + r
    total.data /= n
    return Cuts(np.zeros(1, dtype=np.int64), total, np.array([dl])), hinge


def _init_worker(fmap, prepared, w_name=None, dim=0):
    # Ctrl-C reaches the whole process group: the parent decides (mmprog.engine.interrupts), workers finish their chunk
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:          # scikit-learn brings it; without it the workers keep their BLAS threads
        pass
    from ..features import _binary
    _binary.MAX_THREADS = 1      # nor do the compiled passes over X start threads of their own here
    _WORKER["fmap"] = fmap
    _WORKER["prepared"] = prepared
    if w_name is not None:
        _WORKER["w"] = np.memmap(w_name, dtype=np.float64, mode="r", shape=(dim,))


def _worker_w(w):
    """The round's w: the argument, or (None) the parent's shared-memory copy, read-only for the round."""
    return _WORKER["w"] if w is None else w


def _worker_chunk(w, idx):
    return separate_chunk(_WORKER["fmap"], _WORKER["prepared"], _worker_w(w), idx)


def _worker_sum(w, idx, labeling=False):
    return sum_chunk(_WORKER["fmap"], _WORKER["prepared"], _worker_w(w), idx, labeling)


def _dask_chunk(fmap, prepared, w, idx):
    return separate_chunk(fmap, prepared, w, idx)


def _dask_sum(fmap, prepared, w, idx, labeling=False):
    return sum_chunk(fmap, prepared, w, idx, labeling)


def _merge(parts):
    import scipy.sparse as sp
    cuts = [p[0] for p in parts]
    labs = [c.labelings for c in cuts]
    T = max(l.shape[1] for l in labs)
    labs = np.concatenate([np.pad(l, ((0, 0), (0, T - l.shape[1])), constant_values=-1) for l in labs])
    return (Cuts(np.concatenate([c.example for c in cuts]), sp.vstack([c.dF for c in cuts], format="csr"),
                 np.concatenate([c.dl for c in cuts]), labs),
            np.concatenate([p[1] for p in parts]))


class Oracle:
    """Separation oracle over a prepared dataset.

    Parameters
    ----------
    fmap : JointFeatureMap
    prepared : Prepared
    backend : {"serial", "thread", "process", "dask"}
    n_jobs : int, optional
        Threads or worker processes (default: the machine's cores).
    client : dask.distributed.Client or str, optional
        For ``backend="dask"``: a client or a scheduler address; None starts a ``LocalCluster`` of ``n_jobs``
        single-threaded worker processes, closed by :meth:`close`.
    chunk_size : int, optional
        Examples per task (default: n / (4 · workers), at least 50) — many examples per task, since one task per
        example costs more in scheduling than the decoding itself.

    Attributes
    ----------
    labeling_cuts : bool
        Return the 1-slack cut of a first-order chain with 0/1 token features as its labeling
        (:class:`~mmprog.cuts.LabelingCut`) where the map allows it, on every backend (workers return their
        examples' wrong tokens, the parent concatenates them). Set by the engine for the programs that read
        such cuts (:meth:`~mmprog.programs.base.Program.reads_labeling_cuts`); False by default.
    """

    labeling_cuts = False

    def like(self, fmap, prepared, backend=None):
        """An oracle over another feature map (and its prepared data) with this one's back end and settings, the
        same Dask client included: what a program that separates over a map of its own (PoMEN's expected
        features) asks for. ``backend`` overrides the back end (e.g. ``"serial"`` for one call)."""
        return Oracle(fmap, prepared, backend=backend or self.backend, n_jobs=self.n_jobs, client=self._client,
                      chunk_size=self.chunk_size)

    def __init__(self, fmap, prepared, backend="serial", n_jobs=None, client=None, chunk_size=None):
        if backend not in BACKENDS:
            raise ParameterError(f"oracle must be one of {', '.join(BACKENDS)}; got {backend!r}")
        self.fmap, self.prepared, self.backend = fmap, prepared, backend
        self.n_jobs = n_jobs or os.cpu_count() or 1
        self.chunk_size = chunk_size
        self._pool = None
        self._threads = None
        self._w_shm = self._w_shared = None
        self._client = None
        self._scattered = None
        self._cluster = None
        self._own_client = False
        if backend == "dask":
            from dask.distributed import Client, LocalCluster
            if client is None:
                # what Dask users expect of a bare Client(): a local cluster, here one process per core
                self._cluster = LocalCluster(n_workers=self.n_jobs, threads_per_worker=1, processes=True,
                                             host="127.0.0.1", dashboard_address=None)
                client = self._cluster
            self._own_client = not isinstance(client, Client)
            self._client = client if isinstance(client, Client) else Client(client)
            self.n_jobs = max(1, len(self._client.scheduler_info().get("workers", {})) or 1)

    def _chunks(self, idx):
        size = self.chunk_size or max(50, int(np.ceil(len(idx) / (4 * self.n_jobs))))
        return [idx[s:s + size] for s in range(0, len(idx), size)]

    def separate(self, w, idx=None):
        """Most violated labeling of every example in ``idx`` (default: all).

        Returns
        -------
        cuts : Cuts
            One per example, ``example`` = example index.
        hinge : ndarray, shape (len(idx),)
        """
        idx = np.arange(self.prepared.n) if idx is None else np.asarray(idx, dtype=np.int64)
        w = np.asarray(w, dtype=np.float64)
        if self.backend == "serial" or len(idx) < 2:
            with blas_single():
                return separate_chunk(self.fmap, self.prepared, w, idx)
        return _merge(self._run(_worker_chunk, _dask_chunk, w, self._chunks(idx)))

    def _run(self, worker_fn, dask_fn, w, chunks, *extra):
        """``worker_fn(w, chunk, *extra)`` on the pool (``dask_fn(fmap, prepared, w, chunk, *extra)`` on Dask) for
        every chunk, in order."""
        if self.backend == "thread":
            from concurrent.futures import ThreadPoolExecutor
            if self._threads is None:
                self._threads = ThreadPoolExecutor(self.n_jobs, thread_name_prefix="mmprog-oracle")
            worker = sum_chunk if worker_fn is _worker_sum else separate_chunk
            with blas_single():      # the threads are the parallelism; BLAS threads on the same cores only contend
                return list(self._threads.map(lambda c: worker(self.fmap, self.prepared, w, c, *extra), chunks))
        if self.backend == "process":
            if self._pool is None:
                self._start_pool(len(w))
            if self._w_shared is not None:
                # rounds are sequential: the workers read this copy of w until their results are back
                self._w_shared[:] = w
                w = None
            return list(self._pool.map(worker_fn, [w] * len(chunks), chunks, *([e] * len(chunks) for e in extra)))
        if self._scattered is None:
            # scatter once: the data stay on the workers between rounds; only w travels
            self._scattered = self._client.scatter([self.fmap, self.prepared], broadcast=True)
        fm, pr = self._scattered
        # a small w goes inside the tasks: scattering it first is one more scheduler round trip a round (OCR: 40 →
        # 31 s for 297 rounds); a large one (NER: 53 million floats) is scattered once instead of sent per task
        w_arg = self._client.scatter(w, broadcast=True) if w.nbytes > (1 << 20) else w
        futures = self._client.map(dask_fn, [fm] * len(chunks), [pr] * len(chunks), [w_arg] * len(chunks), chunks,
                                   *([e] * len(chunks) for e in extra),
                                   pure=False)
        return self._client.gather(futures)

    #: above this size w is handed to the pool's workers through shared memory instead of pickled into every task:
    #: on CoNLL-2002 NER w is 53 million floats (424 MB), and pickling it to two workers each round made the pool
    #: slower than the serial oracle
    SHARED_W_BYTES = 1 << 20

    def _start_pool(self, dim):
        self._w_shm = self._w_shared = None
        if dim * 8 > self.SHARED_W_BYTES:
            import tempfile
            # a file in RAM (/dev/shm) mapped by the parent and every worker; multiprocessing's SharedMemory would
            # have each worker's resource tracker claim the block on Python < 3.13
            folder = "/dev/shm" if os.path.isdir("/dev/shm") else None
            fd, self._w_shm = tempfile.mkstemp(prefix="mmprog_w_", suffix=".f64", dir=folder)
            os.close(fd)
            self._w_shared = np.memmap(self._w_shm, dtype=np.float64, mode="w+", shape=(dim,))
        self._pool = ProcessPoolExecutor(self.n_jobs, initializer=_init_worker,
                                         initargs=(self.fmap, self.prepared, self._w_shm, dim))

    def separate_one_slack(self, w):
        """The single 1-slack cut (1/n)Σᵢ Δfᵢ(ŷᵢ), (1/n)Σᵢ Δℓᵢ(ŷᵢ) and the hinge losses of every example.

        In-process with a feature map that sums directly (``separate_sum``), no per-example rows are built; on a
        pool or Dask every worker returns the sums over its examples (:func:`sum_chunk`), one chunk per worker
        unless ``chunk_size`` says otherwise; otherwise the per-example cuts are averaged."""
        import scipy.sparse as sp
        n = self.prepared.n
        w = np.asarray(w, dtype=np.float64)
        if self.backend != "serial" and n >= 2:
            idx = np.arange(n)
            size = self.chunk_size or int(np.ceil(n / self.n_jobs))
            parts = self._run(_worker_sum, _dask_sum, w, [idx[s:s + size] for s in range(0, n, size)],
                              self.labeling_cuts)
            return merge_one_slack(parts, self.prepared.data.get("X"), n)
        if self.backend == "serial" and hasattr(self.fmap, "separate_sum"):
            try:
                with blas_single():
                    part = self.fmap.separate_sum(w, self.prepared, sparse=True, counts=True,
                                                  labeling=self.labeling_cuts)
            except NotImplementedError:
                pass
            else:
                return merge_one_slack([part], self.prepared.data.get("X"), n)
        cuts, hinge = self.separate(w)
        return Cuts.one_slack(cuts, n), hinge

    def close(self):
        if getattr(self, "_threads", None) is not None:
            self._threads.shutdown()
            self._threads = None
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        if getattr(self, "_w_shm", None) is not None:
            self._w_shared = None
            try:
                os.unlink(self._w_shm)
            except OSError:
                pass
            self._w_shm = None
        if self._own_client and self._client is not None:
            self._client.close()
            self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
