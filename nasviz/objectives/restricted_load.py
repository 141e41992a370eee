"""Read a torch file, or a plain pickle, without running anything from it.

A torch file is a pickle, and unpickling calls whatever functions the file names: a crafted file
runs arbitrary code. :func:`restricted_torch_load` uses ``torch.load(..., weights_only=True)``,
torch's own restricted unpickler (tensors, containers and plain Python values only), widened by
exactly the classes the caller lists (:data:`ALLOWED` of
:mod:`nasviz.objectives.nb201_official`, for instance). A file that names anything else is
refused with :class:`~nasviz.errors.UnsafeFileError` naming that class, before the class is
looked up or called.

:func:`restricted_pickle_load` does the same for plain pickles (CIFAR-10's batches): an unpickler
whose ``find_class`` hands out only the objects of an allow-list.

torch names the refused class in its message for torch's own formats; for other pickles (which
torch's loader gives up on earlier, at an opcode) :func:`first_refused_global` finds it by reading
the pickle's opcodes with :mod:`pickletools`, which parses and never executes.
"""

from __future__ import annotations

import io
import os
import pickle
import pickletools
import re
import warnings
import zipfile
from typing import Any, Iterable, Mapping, Sequence

from nasviz.errors import InputError, UnsafeFileError
from nasviz.csvfile import check_regular_file

#: How torch's restricted unpickler names a class it refuses ("... unsupported GLOBAL posix.system ...").
_TORCH_REFUSAL = re.compile(r"GLOBAL ([\w.]+)")


def _torch_defaults() -> set[str]:
    """The names torch's restricted unpickler admits by itself (tensor rebuilders, storages,
    ``OrderedDict``, ``set``...), so that :func:`first_refused_global` names only what torch
    refused. Read from torch; its own list is private, so fall back to ``torch.*`` names."""
    try:
        from torch._weights_only_unpickler import _get_allowed_globals

        return set(_get_allowed_globals())
    except Exception:  # noqa: BLE001 - a torch without the private helper
        return set()

#: Opcodes read at most by :func:`first_refused_global` (a benchmark's first pickle is far shorter
#: than its data; a refused class comes before the value that uses it).
_MAX_OPCODES = 5_000_000


def allowed_names(allowed: Sequence[tuple[object, str]]) -> set[str]:
    """The dotted names of ``(object, name)`` pairs."""
    return {name for _, name in allowed}


def restricted_torch_load(path: str | os.PathLike, allowed: Sequence[tuple[object, str]], *,
                          what: str = "this file") -> Any:
    """``torch.load(path, weights_only=True)`` admitting also the ``allowed`` objects.

    Parameters
    ----------
    path : path
        The torch file (zip or legacy format).
    allowed : sequence of (object, dotted name)
        Extra classes and functions the file may name, each under the name it is pickled as
        (numpy 1 pickles ``numpy.core.multiarray.scalar``, numpy 2 ``numpy._core...``).
    what : str
        What the file should be, for messages ("a NAS-Bench-201 file").

    Raises
    ------
    UnsafeFileError
        The file names a class or function outside torch's defaults and ``allowed``: named in
        the message; nothing from the file was run.
    InputError
        The file is missing, not a regular file (a :class:`~nasviz.errors.TableError`), or not
        a torch file at all.
    """
    import torch
    from torch.serialization import safe_globals

    label = str(path)
    check_regular_file(path, label=label)  # missing, a folder, a FIFO (torch.load would block on it)
    try:
        with safe_globals([(obj, name) for obj, name in allowed]), warnings.catch_warnings():
            # torch warns about any pickle protocol but 2 before refusing or loading: noise here
            warnings.filterwarnings("ignore", message="Detected pickle protocol", category=UserWarning)
            return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises UnpicklingError, RuntimeError, EOFError, zip errors...
        refused = _refused_in_message(str(err))
        if refused is None:
            refused = first_refused_global(_pickles(path), allowed_names(allowed))
        if refused is not None:
            raise UnsafeFileError(
                f"refused: the file asks for {refused}, which is not one of the classes {what} holds; "
                "nothing from the file was run", source=label, field=refused) from None
        raise InputError(f"could not be read as a torch file ({type(err).__name__})", source=label,
                         detail=_first_line(str(err))) from None


def _refused_in_message(message: str) -> str | None:
    match = _TORCH_REFUSAL.search(message)
    return match.group(1) if match else None


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:200]


def _pickles(path: str | os.PathLike, limit: int = 256 * 2 ** 20) -> bytes:
    """The first ``limit`` bytes of pickle in a torch file: its ``*.pkl`` members if it is a zip
    file, else the file itself (only read when torch refused the file without naming a class)."""
    if zipfile.is_zipfile(path):
        chunks: list[bytes] = []
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                if name.endswith(".pkl"):
                    with archive.open(name) as member:
                        chunks.append(member.read(limit - sum(map(len, chunks))))
        return b"".join(chunks)
    with open(path, "rb") as handle:
        return handle.read(limit)


def first_refused_global(data: bytes, allowed: Iterable[str]) -> str | None:
    """The first class or function a pickle stream names that is neither in ``allowed`` nor
    admitted by torch (:func:`_torch_defaults`), as ``module.name``; ``None`` if there is none
    (or the stream is not a pickle).

    Reads the opcodes of the pickles in ``data`` one after another (a legacy torch file is
    several) without executing any: ``GLOBAL`` carries its name, ``STACK_GLOBAL`` takes the two
    strings pushed before it (directly or from the memo).
    """
    allowed = set(allowed) | _torch_defaults()
    stream = io.BytesIO(data)
    count = 0
    while stream.tell() < len(data) and count < _MAX_OPCODES:
        strings: list[str] = []
        memo: dict[Any, str] = {}
        try:
            for op, arg, _ in pickletools.genops(stream):
                count += 1
                if op.name == "GLOBAL":
                    name = str(arg).replace(" ", ".")
                elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
                    name = f"{strings[-2]}.{strings[-1]}"
                else:
                    if isinstance(arg, str) and "UNICODE" in op.name:
                        strings.append(arg)
                    elif op.name in ("BINPUT", "LONG_BINPUT", "PUT") and strings:
                        memo[arg] = strings[-1]
                    elif op.name == "MEMOIZE" and strings:
                        memo[len(memo)] = strings[-1]
                    elif op.name in ("BINGET", "LONG_BINGET", "GET") and arg in memo:
                        strings.append(memo[arg])
                    continue
                if name not in allowed and not name.startswith("torch."):
                    return name
        except Exception:  # not (or no longer) a pickle: raw storage bytes follow in legacy files
            return None
    return None


class _AllowListUnpickler(pickle.Unpickler):
    """An unpickler whose :meth:`find_class` (the only way a pickle reaches a class or function)
    returns only the objects of an allow-list; persistent ids are refused."""

    def __init__(self, handle, allowed: Mapping[str, object], label: str, what: str, **kwargs: Any) -> None:
        super().__init__(handle, **kwargs)
        self._allowed, self._label, self._what = allowed, label, what

    def find_class(self, module: str, name: str) -> object:
        dotted = f"{module}.{name}"
        if dotted not in self._allowed:
            raise UnsafeFileError(f"refused: the file asks for {dotted}, which is not one of the classes {self._what} "
                                  "holds; nothing from the file was run", source=self._label, field=dotted)
        return self._allowed[dotted]

    def persistent_load(self, pid: Any) -> Any:
        raise UnsafeFileError("refused: the file uses persistent ids", source=self._label)


def restricted_pickle_load(path: str | os.PathLike, allowed: Mapping[str, object], *, what: str = "this file",
                           encoding: str = "ASCII", max_bytes: int = 512 * 2 ** 20) -> Any:
    """A plain pickle file read with an allow-list of classes (no torch involved).

    Parameters
    ----------
    path : the pickle (a CIFAR-10 batch, for instance)
    allowed : dotted name -> the object it stands for (``{"numpy.ndarray": numpy.ndarray, ...}``);
        every other class or function the file names is refused before it is looked up
    what : what the file should be, for messages
    encoding : how Python 2 ``str`` objects are decoded (``"latin1"`` for CIFAR's batches)
    max_bytes : larger files are refused unread

    Raises
    ------
    UnsafeFileError
        The file names something outside ``allowed`` (named in the message); nothing was run.
    InputError
        Missing, not a regular file, too large, or not a pickle.
    """
    label = str(path)
    check_regular_file(path, label=label)
    size = os.path.getsize(path)
    if size > max_bytes:
        raise InputError(f"is {size} bytes, more than the {max_bytes} {what} may have", source=label)
    try:
        with open(path, "rb") as handle:
            return _AllowListUnpickler(handle, allowed, label, what, encoding=encoding).load()
    except UnsafeFileError:
        raise
    except Exception as err:  # noqa: BLE001 - truncated or not a pickle at all
        raise InputError(f"could not be read as a pickle ({type(err).__name__})", source=label,
                         detail=_first_line(str(err))) from None
