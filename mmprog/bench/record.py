"""Machine-readable records of benchmark runs: what the docs' benchmarks page is rendered from.

Every ``python -m mmprog.bench NAME`` run that takes ``--record PATH`` writes one JSON file::

    {
      "bench": "crf",                       # the bench module's name
      "command": "python -m mmprog.bench crf --task esp",
      "started": "2026-11-27T17:10:00+00:00",
      "machine": {"cpus": 2, "memory_gb": 23.4, "python": "3.11.9", "platform": "..."},
      "versions": {"mmprog": "0.1.0", "python-crfsuite": "0.9.12", ...},
      "rows": [ {"system": "mmprog", "setting": "...", "f1": 93.8, "train_seconds": 120.0, ...}, ... ],
      "notes": ["..."]
    }

Rows are flat dicts of JSON scalars; ``system`` names who produced the row (``mmprog`` or the peer), so a record
always holds the peer beside mmprog from the same run. Numbers are written as measured, never rounded here.
The file is written to a temporary name beside ``PATH`` and renamed, so a record is whole or absent.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import shlex
import sys
import tempfile
from importlib import metadata

#: where the committed records live (the docs' benchmarks page reads every ``*.json`` here)
RECORDS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                           "docs", "records")


def machine():
    """The facts of this machine a reader needs to weigh a timing: cores, memory, Python, platform."""
    mem_gb = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem_gb = round(int(line.split()[1]) / 2**20, 1)
                    break
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "memory_gb": mem_gb, "python": platform.python_version(),
            "platform": platform.platform()}


def versions(*packages):
    """Installed versions of mmprog and of the named peer packages (None where a package is absent)."""
    out = {}
    for name in ("mmprog",) + packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def write(path, bench, rows, *, packages=(), notes=(), started=None, argv=None):
    """Write a record of one bench run to ``path`` (temporary file, then renamed).

    Parameters
    ----------
    path : str
        The record's file (``.json``).
    bench : str
        The bench module's name (``crf``, ``parse``, ``ocr``, ...).
    rows : list of dict
        One dict per measured (system, setting); each has at least ``system`` and ``setting``.
    packages : iterable of str
        Peer distributions whose versions go into ``versions``.
    notes : iterable of str
        Short facts a reader needs (data slice, settings that differ between the systems).
    started : datetime, optional
        When the run began (default: now).
    argv : list of str, optional
        The bench's own arguments after its name (default ``sys.argv[2:]``), written as the command that reproduces
        the record.

    Returns
    -------
    dict
        The record as written.
    """
    for i, row in enumerate(rows):
        for key in ("system", "setting"):
            if key not in row:
                raise ValueError(f"record row {i} has no {key!r}; got keys {sorted(row)}")
    argv = sys.argv[2:] if argv is None else list(argv)
    started = started or _dt.datetime.now(_dt.timezone.utc)
    rec = {"bench": bench, "command": " ".join(["python -m mmprog.bench", bench] + [shlex.quote(a) for a in argv]),
           "started": started.isoformat(timespec="seconds"), "machine": machine(),
           "versions": versions(*packages), "rows": list(rows), "notes": list(notes)}
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".record-", suffix=".json", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(rec, f, indent=1, default=_scalar)
            f.write("\n")
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return rec


def read(path):
    """A record written by :func:`write`."""
    with open(path) as f:
        return json.load(f)


def _scalar(o):
    try:
        return o.item()          # numpy scalars
    except AttributeError:
        return str(o)


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
