"""The docs' result tables are printed from committed raw results files, and stay so
(``python -m nasviz tables --check``; ``nasviz/bench/tables/``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nasviz.bench.provenance import KEY, portable
from nasviz.bench.tables import REPO, load_results, tables
from nasviz.bench.tables.inventory import NOT_KEPT, markdown_tables, problems, unmarked_tables
from nasviz.bench.tables.markdown import begin_marker, check, end_marker, md_table, regions, rewrite, used_names

#: Raw results files measured before benchmarks recorded their provenance, and why they are kept.
WITHOUT_PROVENANCE = {
    "docs/results/cnn-mnist1d.jsonl": "the 7.5-hour CNN comparison ran before provenance existed (issue 49); "
                                      "docs/benchmarks.md says so beside its table",
}

#: Raw results files whose provenance names a commit that is not in main's history, and why: the
#: branch they were measured on was rebased when it landed, and those commits were not kept.
COMMIT_NOT_IN_HISTORY = {
    "docs/results/bo-wl-ei-rms-nb201-cifar100.json": "measured at c5f0bea on a branch that was rebased when it "
                                                     "landed (issue 48); the commit was not kept",
    "docs/results/fidelity-selection.json": "measured at 169d80f on a branch that was rebased when it landed "
                                            "(issue 50); the commit was not kept",
}



def test_every_document_table_is_printed_from_its_raw_files():
    problems = check()
    assert not problems, "run `python -m nasviz tables --write` (or fix the raw file):\n" + "\n".join(
        f"{p.document}, line {p.line}: {p.name} {p.message}" for p in problems)


def test_every_registered_table_is_in_a_document_and_every_raw_file_in_a_table():
    registry = tables()
    assert set(registry) == used_names(), "a registered table no document prints, or the reverse"
    sources = {s for t in registry.values() for s in t.sources}
    committed = {str(p.relative_to(REPO)) for p in (REPO / "docs" / "results").iterdir() if p.is_file()}
    assert committed <= sources, f"raw results files no table reads: {sorted(committed - sources)}"


def test_raw_results_files_carry_their_provenance():
    for path in sorted((REPO / "docs" / "results").iterdir()):
        name = str(path.relative_to(REPO))
        data = load_results(path)
        records = data if isinstance(data, list) else [data]
        if name in WITHOUT_PROVENANCE:
            assert not any(KEY in r for r in records), f"{name} has provenance now: take it off the exceptions"
            continue
        for record in records:
            p = record.get(KEY)
            assert p, f"{name}: no provenance"
            assert p["commit"] and p["dirty"] is False, f"{name}: made from {p['commit']} with a dirty tree"
            text = json.dumps(record)
            for folder in machine_folders():
                assert folder not in text, f"{name} names a path of the machine that made it ({folder})"
            # the machine that made it may keep its files elsewhere (a temporary folder, say):
            # a recorded command is already portable, wherever it was made
            for argument in p["command"]:
                assert portable(argument) == argument, f"{name}: its command names a folder of a machine: {argument}"


def test_raw_results_name_a_commit_of_mains_history():
    """A raw file's provenance names the commit that made it; a branch rebased when it lands
    rewrites its commits, so landing one with benchmark results keeps the originals reachable
    (a merge) or measures again after landing. Skipped where the checkout has no history."""
    if not _git("rev-parse", "--git-dir") or _git("rev-parse", "--is-shallow-repository") == "true":
        pytest.skip("no full git history here (not a git checkout, or a shallow clone)")
    for path in sorted((REPO / "docs" / "results").iterdir()):
        name = str(path.relative_to(REPO))
        if name in WITHOUT_PROVENANCE:
            continue
        data = load_results(path)
        commits = {r[KEY]["commit"] for r in (data if isinstance(data, list) else [data])}
        missing = sorted(c for c in commits if _git("merge-base", "--is-ancestor", c, "HEAD", ok_codes=(0,)) is None)
        if name in COMMIT_NOT_IN_HISTORY:
            assert missing, f"{name}: its commit is in the history now: take it off COMMIT_NOT_IN_HISTORY"
            continue
        assert not missing, f"{name}: made at {missing}, which is not in this checkout's history"


def _git(*args: str, ok_codes: tuple[int, ...] = (0,)) -> str | None:
    """``git ARGS`` in the checkout: its output, or ``None`` when it exits with another code."""
    done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode in ok_codes else None


def machine_folders() -> list[str]:
    """Absolute paths a raw results file must not name, worked out where the tests run: the folder
    that holds the checkout (and so every sibling checkout and shared data beside it) and the home
    folder."""
    return [f"{folder}/" for folder in {str(REPO.parent), str(Path.home())} if folder not in ("", "/")]


def test_machine_folders_are_absolute_paths_around_the_checkout():
    folders = machine_folders()
    assert f"{REPO.parent}/" in folders or str(REPO.parent) == "/"
    assert all(f.startswith("/") and f.endswith("/") and f != "/" for f in folders)
    assert any(str(REPO).startswith(f) for f in folders)


@pytest.fixture
def small_repo(tmp_path):
    """A checkout with one raw results file and a document that prints its table."""
    (tmp_path / "docs" / "results").mkdir(parents=True)
    shutil.copy(REPO / "docs" / "results" / "cnn-mnist1d.jsonl", tmp_path / "docs" / "results")
    table = tables()["cnn-mnist1d"]
    printed = table.print(REPO)
    (tmp_path / "README.md").write_text(f"intro\n\n{begin_marker(table)}\n{printed}\n{end_marker(table.name)}\n\nend\n")
    return tmp_path


def test_check_finds_an_edited_figure_a_missing_file_and_an_unknown_table(small_repo):
    readme = small_repo / "README.md"
    assert check(small_repo) == []
    readme.write_text(readme.read_text().replace("98.92 ± 0.07", "98.99 ± 0.07"))
    (problem,) = check(small_repo)
    assert problem.name == "cnn-mnist1d" and "-| AK (BO + morphism) | 98.99" in problem.message
    fixed = rewrite(readme.read_text(), root=small_repo)
    assert "98.92 ± 0.07" in fixed and fixed.startswith("intro\n") and fixed.endswith("\nend\n")
    (small_repo / "docs" / "results" / "cnn-mnist1d.jsonl").unlink()
    (problem,) = check(small_repo)
    assert "cannot be printed" in problem.message and "missing" in problem.message
    readme.write_text(readme.read_text().replace("table cnn-mnist1d", "table no-such-table"))
    (problem,) = check(small_repo)
    assert problem.message == "no such table is registered"


def test_a_begin_marker_without_its_end_is_an_error():
    table = tables()["cnn-mnist1d"]
    with pytest.raises(ValueError, match="line 2: table 'cnn-mnist1d' has no line"):
        regions(f"a\n{begin_marker(table)}\n| x |\n", "README.md")


def test_md_table():
    assert md_table(["a", "b"], [[1, None]]) == "| a | b |\n|---|---|\n| 1 |  |"


@pytest.mark.slow
def test_the_tables_command_checks_and_prints():
    done = subprocess.run([sys.executable, "-m", "nasviz", "tables", "--check"], capture_output=True, text=True,
                          cwd=REPO)
    assert done.returncode == 0 and "every table is current" in done.stdout, done.stderr
    done = subprocess.run([sys.executable, "-m", "nasviz", "tables", "cnn-mnist1d"], capture_output=True, text=True,
                          cwd=REPO, check=True)
    assert done.stdout.startswith("| method | test accuracy of the best network (%)")


# ------------------------------------------------------------------ every table printed or marked

def test_every_document_table_is_printed_generated_or_marked():
    found = unmarked_tables()
    assert not found, "mark each table (docs/benchmarks.md says how):\n" + "\n".join(found)


def test_an_unmarked_table_is_named_by_file_and_line(tmp_path):
    (tmp_path / "docs").mkdir()
    for doc in ["README.md", *(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md"))]:
        shutil.copy(REPO / doc, tmp_path / doc)
    assert unmarked_tables(tmp_path) == []
    bench = tmp_path / "docs" / "benchmarks.md"
    lines = bench.read_text(encoding="utf-8").splitlines(True)
    at = next(i for i, line in enumerate(lines) if line.startswith("<!-- table hand-copied:"))
    del lines[at]
    bench.write_text("".join(lines), encoding="utf-8")
    (problem,) = unmarked_tables(tmp_path)
    assert problem.startswith(f"docs/benchmarks.md, line {at + 1}: no marker")


def test_markdown_tables_kinds():
    text = "\n".join([
        "| a |", "|---|", "| 1 |",                                     # 1: unmarked
        "```", "| not | a table |", "|---|---|", "```",               # in a fence: not a table
        "<!-- table not-results: the protocol of the runs -->", "| a |", "|---|",          # 9
        f"<!-- table hand-copied: `bench x`, commit not recorded; {NOT_KEPT} -->", "| a |", "|:--|",  # 12
        "<!-- table hand-copied: `bench x` -->", "| a |", "|---|",      # 15: no 'not kept'
        "<!-- table not-results: -->", "| a |", "|---|",                # 18: no reason
        "<!-- listing: generated by `python -m nasviz components`; do not edit -->",
        "| a |", "|---|", "<!-- listing: end -->",                      # 21: generated
        "", "| a |", "|---|",                                           # 25: a blank line between
    ])
    found = [(t.line, t.kind, bool(problems(t))) for t in markdown_tables(text)]
    assert found == [(1, "unmarked", True), (9, "not-results", False), (12, "hand-copied", False),
                     (15, "hand-copied", True), (18, "not-results", True), (21, "generated", False),
                     (25, "unmarked", True)]
