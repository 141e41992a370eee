"""Server-side paths typed in the dashboard: off unless the operator names a data folder, and then
confined to it.

A path is resolved first (``..`` removed, every symlink followed) and only then compared with the
folder, so neither ``../../etc/passwd`` nor a symlink inside the folder that points out of it gets
through. Relative paths are relative to the data folder. Refusals never say whether the file
exists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from nasviz.errors import PathNotAllowedError
from nasviz.settings import DATA_DIR_ENV


def resolve_server_path(text: str, data_dir: Path | None, *, forbidden: Sequence[Path] = ()) -> Path:
    """The resolved path of ``text`` inside ``data_dir``, or :class:`PathNotAllowedError`.

    Parameters
    ----------
    text : str
        What the visitor typed: a path relative to ``data_dir`` or an absolute one inside it.
    data_dir : Path or None
        The operator's data folder; ``None`` means server-side paths are off.
    forbidden : sequence of Path
        Folders refused even inside ``data_dir`` (the run folder: uploads, logs, the store).
    """
    if data_dir is None:
        raise PathNotAllowedError(f"server-side files are off: the operator has not named a data folder "
                                  f"({DATA_DIR_ENV})")
    text = str(text).strip()
    if not text:
        raise PathNotAllowedError("no path given")
    if "\x00" in text:
        raise PathNotAllowedError("a path cannot contain a NUL character")
    root = Path(data_dir).resolve()
    resolved = (root / text).resolve()  # an absolute text replaces root; symlinks and '..' resolved
    if not resolved.is_relative_to(root):
        raise PathNotAllowedError("is outside the data folder: only files in it can be read", source=text)
    if any(part.startswith(".") for part in resolved.relative_to(root).parts):
        raise PathNotAllowedError("hidden files and folders (names starting with '.') are not served", source=text)
    for folder in forbidden:
        if resolved.is_relative_to(Path(folder).resolve()):
            raise PathNotAllowedError("is in the run folder (uploads, logs, the run store), which is not data",
                                      source=text)
    return resolved


def resolve_server_folder(text: str, data_dir: Path | None, *, forbidden: Sequence[Path] = ()) -> Path:
    """A dataset folder a visitor typed (MNIST, Fashion-MNIST or CIFAR-10 in torchvision's layout):
    :func:`resolve_server_path`, and it must be a folder. The search config then stores the
    resolved path (``data_folder``), never what was typed."""
    resolved = resolve_server_path(text, data_dir, forbidden=forbidden)
    if not resolved.is_dir():
        raise PathNotAllowedError("is not a folder in the data folder", source=text)
    return resolved
