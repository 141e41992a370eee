"""The launcher ``make run`` uses (``python -m nasviz.dashboard.serve``): it does the first page's
imports and the embedded table's parse before the server listens, then runs ``streamlit run``."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from nasviz import defaults
from nasviz.dashboard import serve, sources

REPO = Path(__file__).resolve().parents[2]


def test_page_imports_are_read_from_the_scripts_own_top_level_import_statements(tmp_path):
    (tmp_path / "pages").mkdir()
    (tmp_path / "app.py").write_text("from __future__ import annotations\nimport streamlit as st\n"
                                     "from nasviz.dashboard.sidebar import data_source_sidebar\n")
    (tmp_path / "pages" / "a.py").write_text("from nasviz import viz\nimport numpy as np, json\nfrom . import near\n"
                                             "def later():\n    import csv\n")
    assert serve.page_imports(tmp_path / "app.py") == ("json", "nasviz", "nasviz.dashboard.sidebar", "numpy",
                                                       "streamlit")


def test_the_real_pages_imports_include_the_sidebar_and_the_engine_facade():
    found = serve.page_imports(REPO / "app.py")
    assert {"nasviz.dashboard.sidebar", "nasviz.dashboard.engine", "streamlit"} <= set(found)


@pytest.mark.slow  # imports every page's modules: about 1.5 s
def test_warm_up_parses_the_embedded_table_into_the_cache_the_sidebar_reads(monkeypatch):
    cache = sources._TableCache()
    monkeypatch.setattr(sources, "_TABLES", cache)
    table = next(t.path for t in defaults.EMBEDDED_TABLES if t.path.is_file())
    key = cache.key(table.resolve(), "nb201")
    assert cache.get(key) is None
    done = serve.warm_up(REPO / "app.py")
    assert done.table == table.name
    assert cache.get(key) is sources.table_from_path(table, "nb201")  # the sidebar's call parses nothing


def test_a_broken_embedded_table_is_left_for_the_page_to_report(monkeypatch, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("arch,valid_accuracy\nnot-a-cell,1\n")
    monkeypatch.setattr(sources, "_TABLES", sources._TableCache())
    monkeypatch.setattr(defaults, "EMBEDDED_TABLES", (defaults.EmbeddedTable("bad", bad, ""),))
    assert serve.warm_up(REPO / "app.py").table is None


def test_outside_a_checkout_it_says_where_to_run_it(tmp_path):
    out = subprocess.run([sys.executable, "-m", "nasviz.dashboard.serve"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.returncode != 0 and "app.py not found" in out.stderr


@pytest.mark.slow
def test_the_launcher_warms_up_then_serves_the_app(tmp_path):
    from nasviz.bench.dashboard import _free_port

    port = _free_port()
    log = tmp_path / "server.log"
    with open(log, "wb") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "nasviz.dashboard.serve", "--server.port", str(port),
                                 "--server.headless", "true"], cwd=REPO, stdout=sink, stderr=subprocess.STDOUT,
                                env={**os.environ, "PYTHONPATH": str(REPO), "NASVIZ_STORE": str(tmp_path / "runs.sqlite")})
        try:
            start = time.perf_counter()
            while True:
                try:
                    if urllib.request.urlopen(f"http://localhost:{port}/_stcore/health", timeout=2).status == 200:
                        break
                except OSError:
                    pass
                assert proc.poll() is None and time.perf_counter() - start < 120, log.read_text()
                time.sleep(0.1)
            assert urllib.request.urlopen(f"http://localhost:{port}/", timeout=10).status == 200
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    text = log.read_text()
    assert "nasviz: warmed up in" in text and "table nb201_cifar.csv" in text
    assert text.index("warmed up") < text.index(f"localhost:{port}")  # before it listened
