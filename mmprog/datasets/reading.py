"""Reading text and binary data files for the loaders: gzip detected by its magic bytes, one decoded line at a time
with its 1-based line number, UTF-8 byte-order mark and CRLF line ends removed, ``.npz`` archives read without
pickle, and one-line errors that name the file and the line (or array).

Every way a file can be damaged — a gzip stream cut short or corrupted, bytes that are not in the encoding, a zip
archive without its directory, an array that needs pickle — is turned into one :class:`DataError` here, once, so
that the loaders (and :func:`mmprog.load`, which reads its ``.npz`` with :func:`read_npz`) never let a ``zlib`` or
``zipfile`` exception through as a traceback.

Loaders only read; nothing here writes. :func:`atomic_write_text` is the one writer (used by
:func:`mmprog.datasets.tsv.write_tsv`): it writes a temporary file beside the target and renames it into place, so
a failure never leaves a half-written file.
"""
from __future__ import annotations

import codecs
import gzip
import io
import os
import tempfile
import zipfile
import zlib
from pathlib import Path

import numpy as np

from ..exceptions import DataError

GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"


def as_path(path) -> Path:
    """Return ``path`` as a :class:`~pathlib.Path`, raising :class:`DataError` if it is not an existing file."""
    p = Path(path)
    if not p.exists():
        raise DataError(f"{p}: no such file; give the path of a data file (real datasets live in ../shared/data)")
    if p.is_dir():
        raise DataError(f"{p}: is a directory; give the path of one data file inside it")
    return p


def magic(path) -> bytes:
    """First four bytes of ``path`` (to tell gzip, zip/npz and plain text apart without trusting the extension)."""
    with open(as_path(path), "rb") as fh:
        return fh.read(4)


def open_binary(path):
    """Open ``path`` for binary reading, decompressing transparently when it starts with the gzip magic bytes."""
    p = as_path(path)
    if magic(p)[:2] == GZIP_MAGIC:
        return gzip.open(p, "rb")
    return open(p, "rb")


def read_bytes(path) -> bytes:
    """The whole (decompressed) content of ``path``."""
    try:
        with open_binary(path) as fh:
            return fh.read()
    except (OSError, EOFError, zlib.error) as exc:  # gzip stream cut short (EOFError) or damaged (zlib, BadGzip)
        raise DataError(f"{path}: cannot read the file ({one_line(exc)}); is the gzip file complete?") from None


def one_line(exc) -> str:
    """``exc`` as one line of text (some library messages span lines)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def iter_lines(path, encoding="utf-8"):
    """Yield ``(line_number, text)`` for every line of a (possibly gzipped) text file.

    Parameters
    ----------
    path : str or Path
        The file.
    encoding : str
        Text encoding; a UTF-8 byte-order mark at the start of the file is dropped whatever the encoding name.

    Yields
    ------
    line_number : int
        1-based line number in the decompressed file.
    text : str
        The line without its line end (``\\n``, ``\\r\\n`` or a lone trailing ``\\r``).

    Raises
    ------
    DataError
        If a line cannot be decoded; the message names the file and the line.
    """
    try:
        codecs.lookup(encoding)
    except (LookupError, TypeError):
        from ..exceptions import ParameterError
        raise ParameterError(f"encoding must be a codec name Python knows (utf-8, latin-1, ...); got {encoding!r}"
                             ) from None
    data = read_bytes(path)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for k, raw in enumerate(lines, start=1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            yield k, raw.decode(encoding)
        except UnicodeDecodeError as exc:
            raise DataError(f"{path}:{k}: cannot decode the line as {encoding} ({exc.reason} at byte {exc.start}); "
                            f"is the file in another encoding (the loader's encoding= parameter, where it has one)?"
                            ) from None


def blocks(path, encoding="utf-8", comment=None, lines=None):
    """Yield blank-line separated blocks of a text file as lists of ``(line_number, text)``.

    Parameters
    ----------
    path : str or Path
        The file.
    encoding : str
        Text encoding.
    comment : str, optional
        Lines starting with this prefix are dropped (they neither start nor end a block).
    lines : iterable of (int, str), optional
        Numbered lines to read instead of the file (a stream, e.g. standard input read piece by piece); ``path``
        then only names the source in messages.

    Yields
    ------
    list of (int, str)
        The non-empty lines of one block, in order, with their 1-based line numbers. Whitespace-only lines count
        as blank.
    """
    current = []
    for k, text in (iter_lines(path, encoding) if lines is None else lines):
        if comment is not None and text.startswith(comment):
            continue
        if text.strip() == "":
            if current:
                yield current
                current = []
            continue
        current.append((k, text))
    if current:
        yield current


def read_npz(source, path, error=DataError) -> dict:
    """Every array of an ``.npz`` archive, read with ``allow_pickle=False``.

    Parameters
    ----------
    source : str, Path or file-like
        The archive (a file-like object for the content of a gzipped file).
    path : str or Path
        The file named in errors.
    error : type
        Exception class raised (:class:`DataError` for data, :class:`~mmprog.exceptions.ModelFileError` for
        models).

    Returns
    -------
    dict of str -> ndarray

    Raises
    ------
    error
        One line naming ``path`` (and the array, when one member is bad): not a zip archive, cut short, a member
        that is not a ``.npy`` array, or an object array (which only pickle could read; never unpickled).
    """
    arrays = {}
    try:
        z = np.load(source, allow_pickle=False)
        if not isinstance(z, np.lib.npyio.NpzFile):   # np.load also reads a lone .npy array
            raise error(f"{path}: a single .npy array, not an .npz archive of named arrays")
        with z:
            for key in z.files:
                try:
                    arrays[key] = z[key]
                except ValueError as exc:
                    if "pickle" in str(exc):
                        raise error(f"{path}: array {key!r} holds Python objects, which only pickle could read; "
                                    f"mmprog never unpickles") from None
                    raise error(f"{path}: array {key!r} is not a readable .npy array ({one_line(exc)})") from None
    except error:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, zlib.error, ValueError, KeyError,
            NotImplementedError) as exc:
        # np.load of a damaged archive: BadZipFile (no central directory), EOFError/zlib.error (member cut or
        # corrupt), ValueError (a member's .npy header), NotImplementedError (a compression zipfile lacks)
        raise error(f"{path}: not a readable .npz archive ({type(exc).__name__}: {one_line(exc)}); is the file "
                    f"complete?") from None
    return arrays


def integer_array(a, path, name, error=DataError) -> np.ndarray:
    """``a`` as int64 if it holds integers (signed, unsigned or bool dtype, every value within int64).

    Float arrays are refused even when whole, so that a NaN, an infinity or 1.5 never turns silently into some
    integer.
    """
    if a.dtype.kind not in "iub":
        raise error(f"{path}: array {name!r} has dtype {a.dtype}; expected integers")
    if a.dtype.kind == "u" and a.size and a.max() > np.iinfo(np.int64).max:
        raise error(f"{path}: array {name!r} holds {a.max()}, beyond the int64 range")
    return a.astype(np.int64)


#: bound on the integers a text loader accepts in id, head and fold fields: far beyond any real file, and well inside
#: int64 so that the arrays they go into cannot overflow
INT_FIELD_BOUND = 2 ** 31


def check_int_field(path, line, value, what) -> int:
    """``value`` if ``|value| < INT_FIELD_BOUND``, else a :class:`DataError` at ``path:line`` naming ``what``."""
    if abs(value) >= INT_FIELD_BOUND:
        raise fail(path, line, f"{what} {value} is out of range (|{what}| < 2**31)")
    return value


def fail(path, line, problem) -> DataError:
    """A :class:`DataError` whose one-line message starts with ``path:line:``."""
    where = f"{path}:{line}" if line is not None else f"{path}"
    return DataError(f"{where}: {problem}")


def atomic_write_text(path, text, encoding="utf-8"):
    """Write ``text`` to ``path`` all at once: into a temporary file in the same folder, then renamed into place.

    If anything fails, the temporary file is removed and ``path`` is left as it was.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with io.open(fd, "w", encoding=encoding, newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def jsonable(obj):
    """``obj`` with numpy arrays and scalars turned into lists and Python numbers, dict keys into strings, tuples
    into lists: what ``json.dumps`` takes (saved models, checkpoints, reports)."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    return obj
