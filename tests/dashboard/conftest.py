"""The dashboard tests share tests/app's fixtures (a synthetic NB201 table, a private run store
with synchronous searches) and helpers (the app's path, errors on a page)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

APP_TESTS = Path(__file__).resolve().parents[1] / "app"
sys.path.insert(0, str(APP_TESTS))  # tests_app_helpers

_spec = importlib.util.spec_from_file_location("nasviz_app_test_fixtures", APP_TESTS / "conftest.py")
_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixtures)

synthetic_table = _fixtures.synthetic_table
store_path = _fixtures.store_path
