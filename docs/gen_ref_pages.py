"""Generate the API reference, the example pages and the benchmark page at ``mkdocs build`` time.

Run by the ``gen-files`` plugin (mkdocs.yml); writes only into mkdocs' virtual docs folder:

* ``reference/<package>/<module>.md`` with one ``::: dotted.name`` mkdocstrings block per public
  module of ``jaxtire/`` and ``sims/`` (a package's page is its ``index.md``), and
  ``reference/SUMMARY.md`` for the literate-nav plugin.  Private modules (``_*.py``, any path part
  starting with ``_``) and ``__main__`` are skipped, so a new or moved module appears by itself.
* ``examples/<notebook>.ipynb`` for every ``notebooks/*.ipynb`` (rendered and executed by
  mkdocs-jupyter) and ``examples/SUMMARY.md``.
* ``benchmarks/RESULTS.md`` and the pictures beside it, copied from ``benchmarks/`` (the one
  source of the measured numbers), so its relative links work as in the repository.
* ``contributing.md`` and ``changelog.md`` from ``CONTRIBUTING.md`` and ``CHANGELOG.md``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import mkdocs_gen_files

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("jaxtire", "sims")
#: files copied from the repository into the site as they are (source -> page)
COPIED = {"CONTRIBUTING.md": "contributing.md", "CHANGELOG.md": "changelog.md"}
PICTURES = (".png", ".svg", ".jpg")


def public_modules(package: str) -> list[tuple[tuple[str, ...], Path]]:
    """(dotted parts, source file) of every public module and package under ``ROOT/package``, sorted."""
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        elif parts[-1] == "__main__":
            continue
        if any(p.startswith("_") for p in parts):
            continue
        if not (path.parent / "__init__.py").exists():
            continue  # a stray script in a data folder, not importable
        found.append((parts, path))
    return found


def defined_names(path: Path) -> list[str]:
    """Public functions and classes defined (not imported) at the top level of a module file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return [n.name for n in tree.body if isinstance(n, kinds) and not n.name.startswith("_")]


def write_reference() -> None:
    nav = mkdocs_gen_files.Nav()
    for package in PACKAGES:
        for parts, path in public_modules(package):
            is_package = path.name == "__init__.py"
            doc = Path("reference", *parts, "index.md") if is_package else Path("reference", *parts).with_suffix(".md")
            nav[parts] = doc.relative_to("reference").as_posix()
            with mkdocs_gen_files.open(doc, "w") as fd:
                fd.write(f"::: {'.'.join(parts)}\n")
                if is_package:
                    # a package page documents what the package itself defines; what it re-exports
                    # is documented (once) on the page of the module that defines it
                    own = defined_names(path)
                    members = "[" + ", ".join(own) + "]" if own else "false"
                    fd.write(f"    options:\n      members: {members}\n      summary:\n        modules: true\n")
            mkdocs_gen_files.set_edit_path(doc, path.relative_to(ROOT))
    with mkdocs_gen_files.open("reference/SUMMARY.md", "w") as fd:
        fd.writelines(nav.build_literate_nav())


def write_examples() -> None:
    lines = []
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        with mkdocs_gen_files.open(f"examples/{nb.name}", "wb") as fd:
            fd.write(nb.read_bytes())
        mkdocs_gen_files.set_edit_path(f"examples/{nb.name}", nb.relative_to(ROOT))
        title = nb.stem.split("_", 1)[-1].replace("_", " ").capitalize()
        lines.append(f"* [{title}]({nb.name})\n")
    with mkdocs_gen_files.open("examples/SUMMARY.md", "w") as fd:
        fd.writelines(lines)


def write_copies() -> None:
    for src, page in {**COPIED, "benchmarks/RESULTS.md": "benchmarks/RESULTS.md"}.items():
        with mkdocs_gen_files.open(page, "w") as fd:
            fd.write((ROOT / src).read_text(encoding="utf-8"))
        mkdocs_gen_files.set_edit_path(page, src)
    for pic in sorted((ROOT / "benchmarks").iterdir()):
        if pic.suffix in PICTURES:
            with mkdocs_gen_files.open(f"benchmarks/{pic.name}", "wb") as fd:
                fd.write(pic.read_bytes())


write_reference()
write_examples()
write_copies()
