"""Griffe extension: render the Sphinx roles of the docstrings as Markdown for mkdocstrings.

The code's docstrings use Sphinx roles (``:func:`tire_forces```, ``:class:`~sims.envs.tracks.Track```,
``:mod:`jaxtire.slip```) and reST literal markers (``Text::``).  Markdown shows roles as raw text, so
before rendering each role becomes

* a cross-reference ``[`name`][full.path]`` when ``name`` resolves, from the docstring's scope, to an
  object of ``jaxtire`` or ``sims`` that the API reference renders (public path, defined where it
  is documented), so the link cannot dangle;
* inline code ``name`` otherwise (external objects such as ``jax.vmap``, private helpers), so the
  strict build does not fail on a target the site cannot have.

``Text::`` before an indented block becomes ``Text:`` (the block is already Markdown code).
Configured in mkdocs.yml (``extensions``); the code itself is not changed.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|obj|exc|const|type):`(~?)([^`<>]+?)`")
LITERAL = re.compile(r"::$", re.MULTILINE)
PACKAGES = ("jaxtire", "sims")
LINKABLE = (griffe.Kind.MODULE, griffe.Kind.CLASS, griffe.Kind.FUNCTION, griffe.Kind.ATTRIBUTE)


class SphinxRoles(griffe.Extension):
    """Rewrite Sphinx roles into Markdown cross-references or inline code (see the module docstring)."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        for obj in _walk(pkg):
            if obj.docstring is not None:
                obj.docstring.value = _rewrite(obj, obj.docstring.value, loader)


def _walk(obj: griffe.Object):
    yield obj
    for member in obj.members.values():
        if not isinstance(member, griffe.Alias):  # imported names are documented where they are defined
            yield from _walk(member)


def _rewrite(obj: griffe.Object, text: str, loader: griffe.GriffeLoader) -> str:
    def repl(match: re.Match) -> str:
        short, name = match.group(1) == "~", match.group(2).strip().lstrip(".")
        shown = name.rsplit(".", 1)[-1] if short else name
        path = _target(obj, name, loader)
        return f"[`{shown}`][{path}]" if path else f"`{shown}`"

    return LITERAL.sub(":", ROLE.sub(repl, text))


def _target(obj: griffe.Object, name: str, loader: griffe.GriffeLoader) -> str | None:
    """Full path of the rendered object ``name`` refers to, or ``None``."""
    found = None
    scope: griffe.Object | None = obj if obj.is_module or obj.is_class else obj.parent
    while scope is not None and found is None:  # the name relative to each enclosing scope
        try:
            found = scope.resolve(name.split(".", 1)[0])
            if "." in name:
                found = f"{found}.{name.split('.', 1)[1]}"
        except griffe.NameResolutionError:
            scope = scope.parent
    for path in (found, name):  # resolved, then as an absolute path
        if not path:
            continue
        try:
            target = loader.modules_collection.get_member(path)
        except (KeyError, ValueError, AttributeError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            continue
        try:
            target = target.final_target if target.is_alias else target
        except (griffe.AliasResolutionError, griffe.CyclicAliasError):
            continue
        if _rendered(target):
            return target.path
    return None


def _rendered(target: griffe.Object) -> bool:
    """Whether docs/gen_ref_pages.py and the mkdocstrings options give ``target`` its own anchor."""
    parts = target.path.split(".")
    if parts[0] not in PACKAGES or target.kind not in LINKABLE:
        return False
    if any(p.startswith("_") for p in parts):
        return False
    module = target.module
    if module.is_init_module and target is not module and target.parent is module:
        # package pages list only the functions and classes the package defines itself
        return target.kind in (griffe.Kind.CLASS, griffe.Kind.FUNCTION)
    return True
