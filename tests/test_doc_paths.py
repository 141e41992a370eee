"""What the docs name exists: files and folders of the repository, Python modules and their
attributes (``nasviz.components.DEFAULT_STRATEGY``), and the command line's subcommands and options
(``python -m nasviz bench search --tables``). Checked in README.md and docs/*.md (the record of past
decisions in docs/history/ names the code of its time and is not checked)."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import re
import shlex
from functools import lru_cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

#: Top-level entries of the repository a path in the docs may start with.
ROOTS = ("nasviz/", "tests/", "docs/", "data/", "pages/", ".ci/", ".streamlit/")
ROOT_FILES = ("app.py", "Makefile", "Dockerfile", "requirements.txt", "pyproject.toml", "README.md")

#: File stems in capitals that are real names, not placeholders such as ``docs/results/NAME.json``.
KNOWN_CAPS = {"README", "LICENSE", "ARCHITECTURE", "REFERENCES", "DESIGN"}

_PATH = re.compile(r"(?<![\w./<~-])((?:%s)[\w./-]*[\w/]|%s)(?![\w/-])" % (
    "|".join(re.escape(r) for r in ROOTS), "|".join(re.escape(f) for f in ROOT_FILES)))
_BARE_PY = re.compile(r"`([\w/]+\.py)`")
_MODULE = re.compile(r"(?<![\w./-])(nasviz(?:\.[A-Za-z_]\w*)+)")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def text_of(doc: Path) -> str:
    return doc.read_text(encoding="utf-8")


def ids(docs):
    return [str(d.relative_to(REPO)) for d in docs]


@lru_cache(maxsize=None)
def repo_file_names() -> frozenset[str]:
    """Names of the repository's files (for a bare ``bo.py``: some module of that name exists)."""
    skip = {".venv", ".git", "node_modules", "test-artifacts", "runs"}
    return frozenset(p.name for p in REPO.rglob("*.py") if not skip & set(p.relative_to(REPO).parts))


def missing_paths(text: str) -> list[str]:
    found = []
    for match in _PATH.finditer(text):
        path = match.group(1).rstrip(".")
        placeholder = any(re.fullmatch(r"[A-Z][A-Z_]*", Path(part).stem) and Path(part).stem not in KNOWN_CAPS
                          for part in path.split("/"))
        if not placeholder and not (REPO / path).exists():
            found.append(path)
    for match in _BARE_PY.finditer(text):
        path = match.group(1)
        if "/" not in path and path not in repo_file_names():
            found.append(path)
        elif "/" in path and not path.startswith(ROOTS) and not any(
                (REPO / root / path).exists() for root in ("", "nasviz", "nasviz/bench", "tests")) \
                and not in_installed_package(path):
            found.append(path)
    return sorted(set(found))


def in_installed_package(path: str) -> bool:
    """``optuna/_gp/prior.py``: a file of another installed package."""
    top = path.split("/")[0]
    spec = importlib.util.find_spec(top) if top.isidentifier() and top != "nasviz" else None
    if spec is None or not spec.submodule_search_locations:
        return False
    return any((Path(loc).parent / path).exists() for loc in spec.submodule_search_locations)


def resolves(dotted: str) -> bool:
    """``nasviz.a.b.C.attr``: the longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        try:
            for name in parts[cut:]:
                obj = getattr(obj, name)
        except AttributeError:
            return False
        return True
    return False


# ------------------------------------------------------------------------------ commands

@lru_cache(maxsize=None)
def parser() -> argparse.ArgumentParser:
    from nasviz.cli import build_parser

    return build_parser(load_benchmarks=True)


def subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def commands(text: str) -> list[str]:
    """The nasviz command lines of ``text``: fenced blocks' lines (continuations joined) and inline
    code that starts with ``python -m nasviz``, ``nasviz`` or a subcommand name (``bench top-cells``)."""
    out = []
    for block in _FENCE.findall(text):
        joined = re.sub(r"\\\n\s*", " ", block)
        out += [line for line in joined.splitlines() if re.search(r"-m nasviz(\s|$)", line)]
    indented = re.findall(r"^(?: {4}|\t)(.*-m nasviz\s.*)$", re.sub(r"\\\n\s*", " ", text), re.MULTILINE)
    out += indented
    top = set(subparsers(parser()))
    for span in _CODE_SPAN.findall(text):
        words = span.split()
        if re.search(r"-m nasviz(\s|$)", span) or (len(words) > 1 and words[0] in top and words[0] != "run"):
            out.append(span)
    return out


def command_problems(line: str) -> list[str]:
    """Unknown subcommands or options of one command line (``[]`` when it names none)."""
    line = line.split(" # ")[0].split(" > ")[0].split(" | ")[0].split(" 2>")[0]
    try:
        words = shlex.split(line, posix=True)
    except ValueError:
        words = line.split()
    if "nasviz" in words:
        words = words[words.index("nasviz") + 1:]
    p, problems, path = parser(), [], []
    while words and subparsers(p):
        choice = words.pop(0)
        subs = subparsers(p)
        if choice.startswith("-"):
            break
        if choice not in subs:
            if not re.fullmatch(r"[a-z][a-z0-9-]*", choice):
                return []  # a placeholder (<...>, NAME|NAME)
            return [f"`{' '.join(path + [choice])}`: no such command (choices: {', '.join(subs)})"]
        path.append(choice)
        p = subs[choice]
    known = {s for action in p._actions for s in action.option_strings}
    for word in words:
        option = word.split("=")[0]
        if option.startswith("--") and re.fullmatch(r"--[a-z][a-z0-9-]*", option) and option not in known:
            problems.append(f"`{' '.join(path)}` has no option {option}")
    return problems


@pytest.mark.parametrize("doc", DOCUMENTS, ids=ids(DOCUMENTS))
def test_paths_named_in_the_docs_exist(doc):
    assert missing_paths(text_of(doc)) == []


@pytest.mark.slow
@pytest.mark.parametrize("doc", DOCUMENTS, ids=ids(DOCUMENTS))
def test_python_names_in_the_docs_resolve(doc):
    names = sorted({m.group(1).rstrip(".") for m in _MODULE.finditer(text_of(doc))})
    assert [n for n in names if not resolves(n)] == []


@pytest.mark.slow
@pytest.mark.parametrize("doc", DOCUMENTS, ids=ids(DOCUMENTS))
def test_commands_in_the_docs_exist_with_their_options(doc):
    problems = sorted({p for line in commands(text_of(doc)) for p in command_problems(line)})
    assert problems == []


@pytest.mark.slow
def test_the_checks_catch_what_they_are_for():
    assert missing_paths("see `nasviz/store.py` and nasviz/store/ and `candidates.py` and `bo.py`") == [
        "candidates.py", "nasviz/store.py"]
    assert missing_paths("`optuna/_gp/prior.py` `optuna/_gp/no_such.py`") == ["optuna/_gp/no_such.py"]
    assert missing_paths("`data/nb201_digits.csv`, (`nasviz/bench/tables/`), docs/results/NAME.json.") == []
    assert resolves("nasviz.components.DEFAULT_STRATEGY") and not resolves("nasviz.optuna.NASVizSampler")
    assert command_problems("python -m nasviz bench search --tables all --seeds 20") == []
    assert command_problems(".venv/bin/python -m nasviz bench serch --x") == [
        "`bench serch`: no such command (choices: " + ", ".join(subparsers(subparsers(parser())["bench"])) + ")"]
    assert command_problems("python -m nasviz bench search --tablez all") == ["`bench search` has no option --tablez"]
    assert commands("run `bench top-cells --tables all` and\n```sh\npython -m nasviz table \\\n  info --table t.csv\n```\n") \
        == ["python -m nasviz table  info --table t.csv", "bench top-cells --tables all"]
