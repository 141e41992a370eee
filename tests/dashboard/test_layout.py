"""The dashboard's boundaries: what may import Streamlit, benchmark code, kernels and GPs."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: The dashboard modules that draw widgets; every other one is plain Python.
STREAMLIT_MODULES = {"nasviz.dashboard.ui", "nasviz.dashboard.forms", "nasviz.dashboard.sidebar",
                     "nasviz.dashboard.sidebyside", "nasviz.dashboard.computing"}


def dashboard_modules() -> list[str]:
    root = REPO / "nasviz" / "dashboard"
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


@pytest.mark.slow
def test_only_the_widget_modules_import_streamlit_and_none_imports_benchmarks():
    plain = [m for m in dashboard_modules() if m not in STREAMLIT_MODULES]
    script = ("import importlib, sys\n"
              f"for name in {plain!r}: importlib.import_module(name)\n"
              "from nasviz.dashboard.views import views; views()\n"
              "print(sorted({m.split('.')[0] for m in sys.modules if m.startswith(('streamlit', 'nasviz.bench'))}))")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]" and "nasviz.bench" not in proc.stdout


def test_pages_compute_no_kernel_and_fit_no_gp():
    """Pages call nasviz.dashboard; kernels and GPs are reached only through it."""
    for page in sorted((REPO / "pages").glob("*.py")):
        tree = ast.parse(page.read_text())
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
        assert not {m for m in imported if m and m.startswith(("nasviz.kernels", "nasviz.gp", "nasviz.bench",
                                                                "nasviz.strategies"))}, page.name
