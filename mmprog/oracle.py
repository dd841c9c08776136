"""The separation oracle: loss-augmented inference for a batch of examples → cuts.

For every example i the oracle finds ŷᵢ = argmax_y wᵀf(xᵢ, y) + Δℓᵢ(y) with one batched kernel call (Viterbi for
chains, Chu-Liu-Edmonds or Eisner for trees) and returns the cut rows Δfᵢ(ŷᵢ), Δℓᵢ(ŷᵢ) and the hinge losses
Hᵢ(w) = Δℓᵢ(ŷᵢ) − wᵀΔfᵢ(ŷᵢ) = max_y [Δℓᵢ(y) − wᵀΔfᵢ(y)] ≥ 0.

Backends differ only in where the batches run:

* ``"serial"``: in-process, one batched call;
* ``"process"``: a process pool across cores, the feature map and data sent once per worker;
* ``"dask"``: a ``dask.distributed`` Client (or scheduler address); the data are scattered once to every worker
  and each round sends only w, in chunks of many examples.
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from .cuts import Cuts
from .exceptions import ParameterError

BACKENDS = ("serial", "process", "dask")


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


def _init_worker(fmap, prepared):
    # Ctrl-C reaches the whole process group: the parent decides (mmprog.interrupts), workers finish their chunk
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER["fmap"] = fmap
    _WORKER["prepared"] = prepared


def _worker_chunk(w, idx):
    return separate_chunk(_WORKER["fmap"], _WORKER["prepared"], w, idx)


def _dask_chunk(fmap, prepared, w, idx):
    return separate_chunk(fmap, prepared, w, idx)


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
    backend : {"serial", "process", "dask"}
    n_jobs : int, optional
        Workers of the process pool (default: the machine's cores).
    client : dask.distributed.Client or str, optional
        For ``backend="dask"``: a client or a scheduler address.
    chunk_size : int, optional
        Examples per task (default: n / (4 · workers), at least 50) — many examples per task, since one task per
        example costs more in scheduling than the decoding itself.
    """

    def __init__(self, fmap, prepared, backend="serial", n_jobs=None, client=None, chunk_size=None):
        if backend not in BACKENDS:
            raise ParameterError(f"oracle must be one of {', '.join(BACKENDS)}; got {backend!r}")
        self.fmap, self.prepared, self.backend = fmap, prepared, backend
        self.n_jobs = n_jobs or os.cpu_count() or 1
        self.chunk_size = chunk_size
        self._pool = None
        self._client = None
        self._scattered = None
        if backend == "dask":
            from dask.distributed import Client
            self._client = client if isinstance(client, Client) else Client(client) if client else None
            if self._client is None:
                raise ParameterError('oracle="dask" needs client= (a dask.distributed Client or a scheduler '
                                     'address such as "tcp://127.0.0.1:8786"); got None')
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
            return separate_chunk(self.fmap, self.prepared, w, idx)
        chunks = self._chunks(idx)
        if self.backend == "process":
            if self._pool is None:
                self._pool = ProcessPoolExecutor(self.n_jobs, initializer=_init_worker,
                                                 initargs=(self.fmap, self.prepared))
            parts = list(self._pool.map(_worker_chunk, [w] * len(chunks), chunks))
        else:
            if self._scattered is None:
                # scatter once: the data stay on the workers between rounds; only w travels
                self._scattered = self._client.scatter([self.fmap, self.prepared], broadcast=True)
            fm, pr = self._scattered
            w_f = self._client.scatter(w, broadcast=True)
            futures = self._client.map(_dask_chunk, [fm] * len(chunks), [pr] * len(chunks),
                                       [w_f] * len(chunks), chunks, pure=False)
            parts = self._client.gather(futures)
        return _merge(parts)

    def separate_one_slack(self, w):
        """The single 1-slack cut (1/n)Σᵢ Δfᵢ(ŷᵢ), (1/n)Σᵢ Δℓᵢ(ŷᵢ) and the hinge losses of every example.

        In-process with a feature map that sums directly (``separate_sum``), no per-example rows are built;
        otherwise the per-example cuts are averaged."""
        import scipy.sparse as sp
        n = self.prepared.n
        if self.backend == "serial" and hasattr(self.fmap, "separate_sum"):
            try:
                dF_sum, dl_sum, hinge = self.fmap.separate_sum(np.asarray(w, dtype=np.float64), self.prepared)
            except NotImplementedError:
                pass
            else:
                return (Cuts(np.zeros(1, dtype=np.int64), sp.csr_matrix(dF_sum[None, :] / n),
                             np.array([dl_sum / n])), hinge)
        cuts, hinge = self.separate(w)
        return Cuts.one_slack(cuts, n), hinge

    def close(self):
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
