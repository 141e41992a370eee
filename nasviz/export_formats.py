"""The formats ``python -m nasviz export`` writes, and the file each writes.

Apart from :mod:`nasviz.export` because the command line lists them when it builds its parser, for
every command: importing :mod:`nasviz.export` there imported torch (about a second) before
``nasviz run`` on a table, which never needs it, could start.
"""

from __future__ import annotations

#: format name -> the network file it writes (TorchScript ``network.pt``, ``torch.export`` ``network.pt2``).
FORMATS: dict[str, str] = {"torchscript": "network.pt", "export": "network.pt2"}

__all__ = ["FORMATS"]
