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
* ``parameters.md``: every field of the chassis, suspension and drivers with its unit, default and allowed range,
  rendered from the field tables the code validates with (:mod:`jaxtire.fields`), so the page cannot drift.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import mkdocs_gen_files

from jaxtire.fields import markdown

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


#: (title, module, table name, what it is) of the parameters page, in its order
PARAMETER_TABLES = (
    ("Chassis", "sims.vehicles.params", "CHASSIS_FIELDS", "`make_chassis(**values)`, `replace_chassis(ch, **changes)`"),
    (
        "Road under the car (`VehicleParams.contact`)",
        "sims.roads.contact",
        "CONTACT_FIELDS",
        "`make_contact(grade, bank, surface_ids)`, `replace_contact(c, **changes)`",
    ),
    ("Suspension (full vehicle)", "sims.vehicles.suspension", "SUSPENSION_FIELDS", "`make_suspension(**values)`"),
    ("Drivers", "sims.drivers", "DRIVER_FIELDS", "every driver field of this name, in every driver"),
)


def write_parameters() -> None:
    parts = [
        "# Parameters\n\nEvery scalar field of the parameter pytrees, with its SI unit, default and allowed range: the",
        " tables construction, validation and the study tables read (`jaxtire.fields`), rendered at build time. A",
        " value outside its range is refused at the boundary with an error naming the field, the value and the",
        " range.\n",
    ]
    for title, module, name, how in PARAMETER_TABLES:
        table = getattr(importlib.import_module(module), name)
        parts.append(f"\n## {title}\n\n`{module}.{name}`; {how}.\n\n{markdown(table)}\n")
    with mkdocs_gen_files.open("parameters.md", "w") as fd:
        fd.write("".join(parts))


write_reference()
write_examples()
write_copies()
write_parameters()
