"""Line-preserving document model of a ``.tir`` property file.

A :class:`TirDocument` holds every line of a file as it was read (text, line ending,
byte-order mark, encoding), classified as

* ``blank`` / ``comment`` -- empty lines, lines starting with ``$``, ``!`` or ``#``;
* ``section`` -- ``[NAME]`` (optionally followed by a ``$`` comment);
* ``entry`` -- ``KEY = value  $ comment``; the value text's span is kept so a changed
  value is written in place, keeping the key's padding and the inline comment;
* ``table`` -- a ``{header}`` line or a row of numbers inside a section (``[SHAPE]``).

Anything else is an error (:class:`TirError` naming file, line and text), in particular a
header in the wrong brackets (``{DIMENSION}`` alone on a line outside a table section,
``[DIMENSION``, ``DIMENSION]``) is never swallowed into the previous section.

:meth:`TirDocument.render` writes the lines back; with no changes it reproduces the
file byte for byte.  Everything here is immutable and hashable, so it can live in the
static metadata of a params pytree.
"""

from __future__ import annotations

import dataclasses
import re

_SECTION = re.compile(r"^\[\s*([A-Za-z][A-Za-z0-9_]*)\s*\]\s*(?:\$.*)?$")
_ENTRY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*=")
# unambiguous (no nested optional digit runs): linear time even on a million-digit token
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eEdD][+-]?\d+)?$")
#: Most lines a .tir file may have (real files have 150-400).
MAX_LINES = 20000
#: Sections whose body is a table (``{header}`` then rows of numbers) in files we know.
TABLE_SECTIONS = frozenset({"SHAPE", "FZ_LOAD_CURVE", "DEFLECTION_LOAD_CURVE", "LOAD_CURVE"})


class TirError(ValueError):
    """A ``.tir`` file could not be read or is not a plausible tire: names the file, line and key."""


@dataclasses.dataclass(frozen=True, slots=True)
class TirLine:
    """One physical line: ``kind`` in blank/comment/section/entry/table; ``text`` without its ending."""

    kind: str
    text: str
    eol: str
    lineno: int
    section: str | None = None
    key: str | None = None
    vstart: int = 0
    vend: int = 0

    @property
    def value_text(self) -> str:
        """The raw value text of an entry (``''`` for a blank value, quotes kept for strings)."""
        return self.text[self.vstart : self.vend]


@dataclasses.dataclass(frozen=True)
class TirDocument:
    """Every line of a ``.tir`` file, in order, plus its encoding details."""

    lines: tuple[TirLine, ...]
    bom: bool = False
    encoding: str = "utf-8"
    source: str = ""

    def entries(self):
        """The ``entry`` lines in file order."""
        return tuple(ln for ln in self.lines if ln.kind == "entry")

    def render(self, changes: dict[int, str] | None = None, inserts: dict[str, list[str]] | None = None) -> bytes:
        """The file as bytes; ``changes`` maps line index -> new value text, ``inserts`` section -> new lines."""
        changes = changes or {}
        inserts = dict(inserts or {})
        eol = next((ln.eol for ln in self.lines if ln.eol), "\n")
        out: list[str] = []
        last_in_section: dict[str, int] = {}
        for i, ln in enumerate(self.lines):
            if ln.section is not None and ln.kind in ("entry", "table", "section"):
                last_in_section[ln.section] = i
        after: dict[int, list[str]] = {}
        for sec, new in list(inserts.items()):
            if sec in last_in_section:
                after.setdefault(last_in_section[sec], []).extend(new)
                del inserts[sec]
        for i, ln in enumerate(self.lines):
            text = ln.text
            if i in changes:
                text = replace_value(ln, changes[i])
            line_eol = ln.eol
            if i in after and not line_eol:
                line_eol = eol
            out.append(text + line_eol)
            for added in after.get(i, ()):
                out.append(added + eol)
        if inserts:
            if out and not out[-1].endswith(("\n", "\r")):
                out[-1] += eol
            for sec, new in inserts.items():
                out.append(f"[{sec}]" + eol)
                out.extend(n + eol for n in new)
        data = "".join(out).encode(self.encoding)
        return (b"\xef\xbb\xbf" if self.bom else b"") + data


def replace_value(ln: TirLine, new: str) -> str:
    """The entry line with its value text replaced, keeping a trailing ``$`` comment's column if it can."""
    head, tail = ln.text[: ln.vstart], ln.text[ln.vend :]
    if not ln.value_text:  # a blank value ("KEY =   "): write it one space after "="
        pad = len(head) - len(head.rstrip())
        head = head.rstrip() + " "
        if tail.strip():
            tail = " " * max(1, pad - 1 - len(new)) + tail.lstrip()
        return head + new + tail
    diff = len(new) - (ln.vend - ln.vstart)
    m = re.match(r"^([ \t]*)(\$.*)?$", tail)
    if m and m.group(2) and " " in m.group(1):
        ws = m.group(1)
        if diff > 0:
            ws = ws[: max(1, len(ws) - diff)]
        elif diff < 0:
            ws = ws + " " * (-diff)
        tail = ws + m.group(2)
    return head + new + tail


def _split_value(rest: str, offset: int):
    """``(start, end)`` of the value text in ``rest`` (after ``=``), or ``None`` if malformed."""
    i = 0
    n = len(rest)
    while i < n and rest[i] in " \t":
        i += 1
    if i == n or rest[i] == "$":
        return offset + i, offset + i  # blank value: "not set"
    if rest[i] in "'\"":
        q = rest[i]
        end = rest.find(q, i + 1)
        if end < 0:
            return None
        tail = rest[end + 1 :].strip()
        if tail and not tail.startswith("$"):
            return None
        return offset + i, offset + end + 1
    j = i
    while j < n and rest[j] not in " \t$":
        j += 1
    tail = rest[j:].strip()
    if tail and not tail.startswith("$"):
        return None
    return offset + i, offset + j


def parse_number(text: str) -> float | None:
    """A Fortran/C style number (``1.5``, ``-2e+06``, ``1.0D-3``) as float, or ``None``."""
    if not _NUMBER.match(text):
        return None
    return float(text.replace("d", "e").replace("D", "e"))


def parse_document(text: str, source: str = "", bom: bool = False, encoding: str = "utf-8") -> TirDocument:
    """Classify every line of ``text``; raise :class:`TirError` on the first malformed one."""
    section = None
    lines = []
    seen_sections: dict[str, int] = {}
    raw_lines = text.splitlines(keepends=True)
    if len(raw_lines) > MAX_LINES:
        raise TirError(f"{source}: {len(raw_lines)} lines; a .tir file has at most {MAX_LINES}")
    for lineno, raw in enumerate(raw_lines, start=1):
        body = raw.rstrip("\r\n")
        eol = raw[len(body) :]
        s = body.strip()
        if not s or s[0] in "$!#":
            lines.append(TirLine("blank" if not s else "comment", body, eol, lineno, section))
            continue
        if s.startswith("["):
            m = _SECTION.match(s)
            if not m:
                raise TirError(
                    f"{source}, line {lineno}: malformed section header {s!r} (expected [NAME] with a letter first)"
                )
            section = m.group(1).upper()
            if section in seen_sections:
                raise TirError(
                    f"{source}, line {lineno}: section [{section}] appears twice "
                    f"(first on line {seen_sections[section]})"
                )
            seen_sections[section] = lineno
            lines.append(TirLine("section", body, eol, lineno, section))
            continue
        m = _ENTRY.match(s)
        if m:
            if section is None:
                raise TirError(f"{source}, line {lineno}: entry {m.group(1)} before any [SECTION]")
            lead = len(body) - len(body.lstrip())
            eq = body.index("=", lead)
            span = _split_value(body[eq + 1 :], eq + 1)
            if span is None:
                raise TirError(
                    f"{source}, line {lineno}: malformed value of {m.group(1).upper()} in [{section}]: "
                    f"{s!r} (one number or one quoted string, then an optional $ comment)"
                )
            lines.append(TirLine("entry", body, eol, lineno, section, m.group(1).upper(), span[0], span[1]))
            continue
        if section is None:
            raise TirError(f"{source}, line {lineno}: cannot parse line before any [SECTION]: {s!r}")
        core = s.split("$", 1)[0].strip()
        if core.startswith("{") and core.endswith("}"):
            if section not in TABLE_SECTIONS:
                raise TirError(
                    f"{source}, line {lineno}: table header {core!r} in [{section}], which is not a "
                    f"table section ({', '.join(sorted(TABLE_SECTIONS))}); a section header "
                    f"must be written [NAME]"
                )
            lines.append(TirLine("table", body, eol, lineno, section))
            continue
        if core and all(_NUMBER.match(t) for t in core.split()):
            prev = next((ln for ln in reversed(lines) if ln.kind not in ("blank", "comment")), None)
            if prev is None or prev.kind != "table":
                raise TirError(
                    f"{source}, line {lineno}: row of numbers {core!r} in [{section}] outside a {{header}} table"
                )
            lines.append(TirLine("table", body, eol, lineno, section))
            continue
        raise TirError(f"{source}, line {lineno}: cannot parse line in [{section}]: {s!r}")
    return TirDocument(tuple(lines), bom=bom, encoding=encoding, source=source)
