"""The layout of issue 12, checked by parsing every module's imports (``ast``; nothing is imported).

Import rule (``shared/DESIGN.md``): ``cli`` -> ``studies`` -> ``scenarios`` / ``envs`` -> ``run`` ->
``vehicles`` / ``drivers`` -> ``roads`` -> ``jaxtire``; ``drivers`` may use ``vehicles`` (not the reverse);
``jaxtire`` never imports ``sims``.
No import cycles between modules; a project import inside a function body only with a comment saying why
(an optional dependency or import cost).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SIMS = REPO / "sims"
JAXTIRE = REPO / "jaxtire"

#: Top-level part of sims -> the top-level parts of sims it may import (besides itself).
ALLOWED = {
    "roads": set(),
    "vehicles": {"roads"},
    "drivers": {"vehicles", "roads"},
    "run": {"vehicles", "drivers", "roads"},
    "scenarios": {"run", "vehicles", "drivers", "roads"},
    "envs": {"run", "vehicles", "drivers", "roads"},
    "studies": {"scenarios", "envs", "run", "vehicles", "drivers", "roads"},
    "cli": {"scenarios", "studies", "envs", "run", "vehicles", "drivers", "roads"},
    "__main__": {"cli"},
    # the package root imports only sims.envs, whose __init__ registers the Gymnasium ids on `import sims`
    # (it loads gymnasium, not the tasks: they load lazily); nothing else
    "__init__": {"envs"},
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules(root: Path) -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(root.rglob("*.py")) if "__pycache__" not in p.parts}


ALL = {**_modules(SIMS), **_modules(JAXTIRE)}


def _resolve(name: str) -> str | None:
    """The project module ``name`` refers to (a submodule if one exists, else its package), or None."""
    while name and name not in ALL:
        name = name.rpartition(".")[0]
    return name or None


def _imports(path: Path):
    """``(target module, lineno, in_function_body)`` for every project import of the file."""
    return _imports_of(path.read_text(), _module_name(path), path.name == "__init__.py")


def _imports_of(source: str, me: str, is_package: bool = False):
    tree = ast.parse(source)
    package = me if is_package else me.rpartition(".")[0]
    out = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for a in child.names:
                    out.append((a.name, child.lineno, in_function))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    pkg = package.split(".")
                    base = ".".join(pkg[:len(pkg) - child.level + 1] + ([base] if base else []))
                for a in child.names:
                    out.append((f"{base}.{a.name}", child.lineno, in_function))
            visit(child, inside)

    visit(tree, False)
    return [(t, line, f) for name, line, f in out if (t := _resolve(name)) is not None and t != me]


GRAPH = {m: _imports(p) for m, p in ALL.items()}


def _part(module: str) -> str:
    """The top-level part of sims a module belongs to (``run``, ``drivers``, ``__init__`` for sims itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_sims_has_at_most_9_top_level_parts():
    """DESIGN.md's eight parts (roads, vehicles, drivers, run, scenarios, studies, envs, cli) and __main__."""
    parts = sorted(p.stem for p in SIMS.iterdir()
                   if p.name not in ("__init__.py", "__pycache__") and (p.suffix == ".py" or p.is_dir()))
    assert len(parts) <= 9, parts
    assert set(parts) <= set(ALLOWED), parts
    # folders under a "data" folder hold package data (pyproject's package-data), not code
    packages = [p for p in SIMS.rglob("*") if p.is_dir() and p.name != "__pycache__"
                and "data" not in p.relative_to(SIMS).parts]
    assert all((p / "__init__.py").exists() for p in packages), "every package needs an __init__.py (packaging)"


def test_jaxtire_never_imports_sims():
    bad = [(m, t, line) for m, edges in GRAPH.items() if m.startswith("jaxtire")
           for t, line, _ in edges if t.startswith("sims")]
    assert not bad, bad


def test_import_rule_between_the_parts_of_sims():
    bad = []
    for m, edges in GRAPH.items():
        if not m.startswith("sims"):
            continue
        src = _part(m)
        for t, line, _ in edges:
            if t.startswith("sims") and _part(t) != src and _part(t) not in ALLOWED[src]:
                bad.append(f"{ALL[m].relative_to(REPO)}:{line} {m} -> {t}")
    assert not bad, "\n".join(bad)


def test_run_never_imports_studies_envs_or_cli():
    bad = [(m, t) for m, edges in GRAPH.items() if m.startswith("sims.run")
           for t, _, _ in edges if _part(t) in ("studies", "envs", "cli", "scenarios")]
    assert not bad, bad


def test_no_import_cycles():
    """Depth-first search for a back edge in the module graph (sims and jaxtire)."""
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def dfs(m):
        state[m] = 1
        stack.append(m)
        for t, _, _ in GRAPH.get(m, []):
            if state.get(t) == 1:
                cycles.append(stack[stack.index(t):] + [t])
            elif t not in state:
                dfs(t)
        stack.pop()
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state:
            dfs(m)
    assert not cycles, cycles


def test_function_body_imports_of_the_project_are_explained():
    """A project import inside a function body must carry a comment (on its line or the line above)."""
    bad = []
    for m, edges in GRAPH.items():
        if not m.startswith(("sims", "jaxtire")):
            continue
        lines = ALL[m].read_text().splitlines()
        for t, line, in_function in edges:
            if in_function and "#" not in lines[line - 1] and not lines[line - 2].strip().startswith("#"):
                bad.append(f"{ALL[m].relative_to(REPO)}:{line} imports {t} in a function body without a comment")
    assert not bad, "\n".join(bad)


#: The 0.2 module aliases removed in this release (issue 35 item 4): old name -> new module.
REMOVED_ALIASES = {
    "sims.rollout": "sims.run.rollout",
    "sims.fleet": "sims.run.fleet",
    "sims.chunked": "sims.run.chunked",
    "sims.longrun": "sims.run.longrun",
    "sims.sharding": "sims.run.sharding",
    "sims.distributed": "sims.run.distributed",
    "sims.integrators": "sims.vehicles.integrators",
    "sims.identify": "sims.studies.identify",
    "sims.tuning": "sims.studies.tuning",
    "sims.studies.laptime": "sims.vehicles.qss",
}


@pytest.mark.parametrize("old, new", sorted(REMOVED_ALIASES.items()))
def test_removed_aliases_fail_and_the_changelog_names_their_new_module(old, new):
    """No alias machinery (the finder was an import side effect): the old name does not import, the new one
    does, and CHANGELOG.md's migration table maps one to the other."""
    import importlib
    import sys

    sys.modules.pop(old, None)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)
    importlib.import_module(new)
    changelog = (REPO / "CHANGELOG.md").read_text()
    table = changelog[changelog.index("### Removed: the 0.2 module aliases") :]
    assert f"| `{old}` | `{new}`" in table
    import sims

    assert not hasattr(sims, "MOVED")


def test_the_checker_sees_violations():
    """The parser finds an upward, a relative and a function-body import (so the tests above can fail)."""
    src = "import jax\nfrom . import fleet\n\ndef f():\n    from sims.studies import tuning\n"
    edges = _imports_of(src, "sims.run.rollout")
    assert edges == [("sims.run.fleet", 2, False), ("sims.studies.tuning", 5, True)]
    assert _part("sims.run.rollout") == "run" and "studies" not in ALLOWED["run"]
    assert "sims.vehicles.integrators" in {t for t, _, _ in GRAPH["sims.run.spec"]}


def test_importing_any_module_changes_no_environment_variable():
    """Issue 35: no import-time side effects: importing every module of jaxtire and sims (not the ``__main__``
    entry points) leaves ``os.environ`` as it was (XLA and device setup belong to the CLI or an explicit call,
    :func:`sims.run.use_host_devices`)."""
    import subprocess
    import sys

    code = (
        "import os, sys, pkgutil, importlib, warnings\n"
        "warnings.simplefilter('ignore')\n"
        "before = dict(os.environ)\n"
        "changed = []\n"
        "for pkg in ('jaxtire', 'sims'):\n"
        "    root = importlib.import_module(pkg)\n"
        "    for m in pkgutil.walk_packages(root.__path__, pkg + '.'):\n"
        "        if m.name.endswith('__main__'):\n"
        "            continue\n"
        "        importlib.import_module(m.name)\n"
        "        if dict(os.environ) != before:\n"
        "            changed.append((m.name, sorted(set(os.environ.items()) ^ set(before.items()))))\n"
        "            os.environ.clear(); os.environ.update(before)\n"
        "print(changed)\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("JAXTIRE_HOST_DEVICES", "XLA_FLAGS")}
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "[]", out.stdout


def test_every_package_declares_its_public_names():
    """Issue 35: every package of jaxtire and sims has ``__all__`` in its ``__init__`` (a small, stated public
    surface), and every name it lists exists (an attribute or a sub-module)."""
    import importlib
    import importlib.util

    missing, unknown = [], []
    for root in ("jaxtire", "sims"):
        for init in sorted((REPO / root).rglob("__init__.py")):
            if "data" in init.parts:
                continue
            name = ".".join(init.relative_to(REPO).parent.parts)
            tree = ast.parse(init.read_text())
            names = [
                n
                for node in tree.body
                if isinstance(node, (ast.Assign, ast.AnnAssign))
                for n in ([node.target] if isinstance(node, ast.AnnAssign) else node.targets)
                if isinstance(n, ast.Name) and n.id == "__all__"
            ]
            if not names:
                missing.append(name)
                continue
            mod = importlib.import_module(name)
            for item in mod.__all__:
                if not hasattr(mod, item) and importlib.util.find_spec(f"{name}.{item}") is None:
                    unknown.append(f"{name}.{item}")
    assert not missing, f"packages without __all__: {missing}"
    assert not unknown, f"__all__ names that do not exist: {unknown}"


def _private_imports(source: str, me: str, is_package: bool = False) -> list[str]:
    """Imports of ``me`` that reach into another package's private parts: a module whose name starts with
    ``_`` outside the package that holds it, or a ``_name`` from a module of another package."""
    package = me if is_package else me.rpartition(".")[0]
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = package.split(".")
                base = ".".join(pkg[: len(pkg) - node.level + 1] + ([base] if base else []))
            targets = [(base, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [(a.name, "") for a in node.names]
        else:
            continue
        for mod, name in targets:
            if not mod.startswith(("jaxtire", "sims")):
                continue
            parts = mod.split(".")
            for i, p in enumerate(parts):
                if p.startswith("_") and not p.startswith("__"):
                    owner = ".".join(parts[:i])
                    if not (package == owner or package.startswith(owner + ".")):
                        bad.append(f"{me}: {mod} (private to {owner})")
                    break
            else:
                if name.startswith("_") and not name.startswith("__") and mod.rpartition(".")[0] != package:
                    if mod not in ALL or ALL[mod].name != "__init__.py" or mod != package:
                        bad.append(f"{me}: {mod}.{name} (private to {mod})")
    return bad


def test_no_cross_package_private_imports():
    """Issue 35: sims uses jaxtire's published numerics (:mod:`jaxtire.numerics`) and each package's public
    modules; a private module (``_name``) or a private name is imported only inside the package that holds it."""
    bad = []
    for m, p in ALL.items():
        bad += _private_imports(p.read_text(), m, p.name == "__init__.py")
    assert not bad, "\n".join(bad)
    # the checker sees a violation and allows the package's own private parts
    assert _private_imports("from jaxtire._math import atan\n", "sims.vehicles.core")
    assert _private_imports("from jaxtire.mf61 import _fx0\n", "sims.vehicles.core")
    assert not _private_imports("from sims.run._scan import run_steps\n", "sims.run.rollout")


def test_importing_the_cli_starts_no_jax_backend():
    """Issue 35: importing ``sims.cli`` (every scenario, study, env) does no JAX work, so the CLI can still
    give XLA its device count and vector width (the catalogue's lap built its oval at import: the fleet
    CLI's one host device per core and 512-bit vectors were silently lost)."""
    import subprocess
    import sys

    code = "import sims.cli; from sims.run import backend_started; print(backend_started())"
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("JAXTIRE_HOST_DEVICES", "XLA_FLAGS")}
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "False"


def _scenario_classes() -> set[str]:
    """The scenario classes of ``sims.scenarios``: every class deriving, directly or through another, from
    ``ScenarioBase`` (the protocol ``Scenario`` and the base itself are the generic API, not a scenario)."""
    bases: dict[str, set[str]] = {}
    for m, p in ALL.items():
        if m.startswith("sims.scenarios."):
            for node in ast.walk(ast.parse(p.read_text())):
                if isinstance(node, ast.ClassDef):
                    bases[node.name] = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
    found = {"ScenarioBase"}
    while True:
        more = {c for c, b in bases.items() if b & found} - found
        if not more:
            return found - {"ScenarioBase"}
        found |= more


def _named_scenarios(source: str, classes: set[str]) -> list[str]:
    """The scenario classes ``source`` imports or refers to by name (an import, a name, an attribute)."""
    hits = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sims.scenarios"):
            hits += [a.name for a in node.names if a.name in classes]
        elif isinstance(node, ast.Name) and node.id in classes:
            hits.append(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in classes:
            hits.append(node.attr)
    return hits


def test_studies_and_run_name_no_scenario_class():
    """Issue 35: a study or a runner works with any scenario through its protocol (``setup``, ``evaluate``,
    ``metrics``, ``settings``): no module of ``sims.studies`` or ``sims.run`` names a specific scenario class
    (the QSS lap profile lives in :class:`sims.scenarios.lap.TransientLap`'s own set-up, so a study has no lap
    special case)."""
    classes = _scenario_classes()
    assert {"Braking", "TransientLap", "SineDwell", "ConeTrack"} <= classes  # the finder sees them
    bad = []
    for m, p in ALL.items():
        if m.startswith(("sims.studies", "sims.run")):
            bad += [f"{m}: {c}" for c in _named_scenarios(p.read_text(), classes)]
    assert not bad, "\n".join(bad)
    assert _named_scenarios("from sims.scenarios.lap import TransientLap\n", classes) == ["TransientLap"]
    assert _named_scenarios("x = isinstance(s, lap.TransientLap)\n", classes) == ["TransientLap"]
    assert not _named_scenarios("from sims.scenarios.base import Scenario, run_scenario\n", classes)
