"""Helpers shared by the AppTest files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from nasviz.spaces import nb201

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def use_server_csv(at: AppTest, table: Path) -> AppTest:
    """Run the app and pick ``table`` as a CSV on the server."""
    at.run()
    at.sidebar.radio(key="source_kind").set_value("CSV on the server").run()
    at.sidebar.text_input(key="server_csv").input(str(table)).run()
    return at


def errors(at: AppTest) -> list:
    """Exceptions and error boxes on the page."""
    return list(at.exception) + list(at.error)


def shown_text(markdown: str) -> str:
    """What a Markdown element's source shows: outside text reaches the page with every ASCII
    punctuation character backslash-escaped (``nasviz.dashboard.text.plain``); this undoes that,
    so tests compare with the text a visitor reads."""
    import re

    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


def write_synthetic_table(path: Path, n: int = 300, seed: int = 0) -> Path:
    """``n`` distinct NB201 cells whose value grows with their convolutions (a test table)."""
    rng = np.random.default_rng(seed)
    seen, lines = set(), ["arch,acc,other"]
    while len(seen) < n:
        arch = nb201.sample(rng, 1)[0]
        s = nb201.format(arch)
        if s in seen:
            continue
        seen.add(s)
        ops = nb201.operations(arch)
        value = 50 + 5 * sum(op.startswith("nor_conv") for op in ops) + rng.normal()
        lines.append(f"{s},{value:.3f},{rng.uniform():.3f}")
    path.write_text("\n".join(lines) + "\n")
    return path
