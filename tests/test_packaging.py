"""Packaging and documentation habits that no other test protects.

* the version lives in one place (``jaxtire.__version__``, read by setuptools), and the installed
  metadata agrees with it;
* the licence file exists and ``pyproject.toml`` names it with an SPDX expression;
* every file under ``jaxtire/data/`` is package data (else the wheel silently drops it);
* the Python snippets and ``python -m`` commands of the README and the docs name modules and
  objects that exist, so the documentation cannot drift from a restructured package unnoticed.

The built wheel itself is checked outside the checkout by ``.ci/wheel_check.sh``.
"""

from __future__ import annotations

import ast
import fnmatch
import importlib
import importlib.metadata
import importlib.util
import re
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT_PACKAGES = ("jaxtire", "sims", "benchmarks")
DOC_FILES = sorted([REPO / "README.md", REPO / "CONTRIBUTING.md", *(REPO / "docs").rglob("*.md")])
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
PYTHON_M = re.compile(r"python -m ((?:jaxtire|sims|benchmarks)(?:\.\w+)*)")


def test_version_in_one_place():
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "jaxtire.__version__"}
    import jaxtire

    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+|rc\d+)?", jaxtire.__version__), jaxtire.__version__
    try:
        installed = importlib.metadata.version("jaxtire")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("jaxtire is not installed (pip install -e .): no metadata to compare")
    assert installed == jaxtire.__version__, "reinstall (pip install -e .) after changing __version__"


def test_licence_file_and_field():
    project = PYPROJECT["project"]
    assert project["license"] == "Apache-2.0"
    for name in project["license-files"]:
        assert (REPO / name).is_file(), name
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert not any(c.startswith("License ::") for c in project["classifiers"]), "SPDX field replaces the classifier"


def test_every_data_file_is_package_data():
    globs = PYPROJECT["tool"]["setuptools"]["package-data"]["jaxtire"]
    data = REPO / "jaxtire" / "data"
    files = [p.relative_to(REPO / "jaxtire").as_posix() for p in data.rglob("*") if p.is_file()]
    assert files, "no bundled data found"
    missing = [f for f in files if not any(fnmatch.fnmatch(f, g) for g in globs)]
    assert not missing, f"not in [tool.setuptools.package-data] jaxtire = {globs}: {missing}"


def _snippet_imports():
    """(doc file, module, imported name or None) for every import in the docs' python blocks."""
    found: list[tuple[Path, str, str | None]] = []
    for doc in DOC_FILES:
        for block in FENCE.findall(doc.read_text(encoding="utf-8")):
            try:
                tree = ast.parse(block)
            except SyntaxError as e:  # a snippet must at least be Python
                raise AssertionError(f"{doc.relative_to(REPO)}: python block does not parse: {e}") from e
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    found += [(doc, a.name, None) for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    found += [(doc, node.module, a.name) for a in node.names]
    return [f for f in found if f[1].split(".")[0] in PROJECT_PACKAGES]


def test_docs_snippets_import_what_exists():
    imports = _snippet_imports()
    assert imports, "no project imports found in the docs' python blocks"
    broken = []
    for doc, module, name in imports:
        where = f"{doc.relative_to(REPO)}: {'from ' + module + ' import ' + name if name else 'import ' + module}"
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name and e.name.split(".")[0] not in PROJECT_PACKAGES:
                continue  # an optional dependency (e.g. gymnasium without the rl extra)
            broken.append(f"{where} ({e})")
            continue
        is_package = hasattr(mod, "__path__")
        if name and not hasattr(mod, name) and not (is_package and importlib.util.find_spec(f"{module}.{name}")):
            broken.append(f"{where} (no {name!r} in {module})")
    assert not broken, "docs name what the package no longer has:\n" + "\n".join(broken)


def test_docs_python_m_commands_exist():
    texts = [d.read_text(encoding="utf-8") for d in DOC_FILES]
    texts += [(REPO / ".ci" / f).read_text(encoding="utf-8") for f in ("run", "wheel_check.sh")]
    modules = sorted({m for t in texts for m in PYTHON_M.findall(t)})
    assert "sims" in modules and "jaxtire.fit" in modules
    broken = []
    for module in modules:
        spec = importlib.util.find_spec(module)
        if spec is None:
            broken.append(module)
        elif spec.submodule_search_locations is not None and importlib.util.find_spec(module + ".__main__") is None:
            broken.append(module + " (a package without __main__)")
    assert not broken, f"`python -m` targets in the docs that do not exist: {broken}"
