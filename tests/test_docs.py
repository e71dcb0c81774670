"""Docs that run (issue 37 item 7): every code block of ``README.md`` and ``docs/**/*.md`` is executed, as a
reader would paste it, or is marked in the page as not run, with the reason.

* ``python`` blocks: each page's blocks in order, in one namespace per page (a fresh Python process per page,
  its working directory an empty temporary folder), as a reader pastes them into one session.  A block that is
  a snippet include (``--8<-- "docs/x.py"``) runs the file it includes.
* ``bash`` / ``sh`` / ``console`` blocks that hold a ``python -m sims ...`` or ``python -m jaxtire ...``
  command: each command runs (a transcript, ``console`` or plain with ``$ python -m ...`` lines: the ``$ ``
  lines) in the page's folder, in the same order as the
  page's python blocks, and must exit 0.  Such a block holds nothing else (an install line beside a command
  is marked ``skip``).  Shell blocks with no such command (``pip install``, ``python -m pytest``, ``mkdocs``,
  ``python -m benchmarks``) are listed as not run.
* ``toml`` blocks that are whole study files (they name a ``scenario``) pass the study's pre-run checks.

A page whose code needs an optional extra that is not installed (``rl``: gymnasium; ``studies``: pandas) is
skipped, saying which (CI installs every extra).

Markers: HTML comments on the lines right above a fence (mkdocs and GitHub do not show them)::

    <!-- docs-test: skip (why) -->          the block is not run; the reason is required and is reported
    <!-- docs-test: replace OLD -> NEW -->  run the block with OLD replaced by NEW (smaller sizes, so the page
                                            keeps the real ones); OLD must occur in the block
    <!-- docs-test: copy SRC -> NAME -->    put a copy of the repository file SRC into the page's folder as NAME
                                            before the block runs (a stand-in for the reader's own file)
    <!-- docs-test: file NAME -->           write the block itself to NAME in the page's folder (the study file
                                            a later command of the page runs)
    <!-- docs-test: same-as PAGE -->        not run here: every command (shell) or statement line (python) of the
                                            block occurs in a block that runs on PAGE (a repeated example)

Every skipped block is a skipped test here (``-rs`` lists the reasons); ``test_inventory`` prints the counts.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]

FENCE_OPEN = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)[^`]*$")
MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<body>.*?)\s*-->\s*$")
INCLUDE = re.compile(r'^--8<--\s+"(?P<path>[^"]+)"\s*$')
PROJECT_COMMAND = re.compile(r"python3? -m (?:sims|jaxtire)\b")
COMMAND_LINE = re.compile(r"^python3? -m (?:sims|jaxtire)\b")
PYTHON_LANGS = {"python", "py"}
SHELL_LANGS = {"bash", "sh", "shell", "console"}
#: A transcript (``console``, or plain / ``text`` with a ``$ python -m sims ...`` line): its ``$`` lines run.
PROMPT = re.compile(r"^\$ python3? -m (?:sims|jaxtire)\b", re.M)
#: Seconds one page may run (all its blocks).
PAGE_TIMEOUT = 900


@dataclass
class Block:
    page: str  # path relative to the repository
    line: int  # line of the opening fence (1-based)
    lang: str
    text: str
    markers: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    def marked(self, kind: str) -> list[str]:
        return [m[len(kind) :].strip() for m in self.markers if m.split(None, 1)[0] == kind]

    @property
    def skip_reason(self) -> str | None:
        reasons = self.marked("skip")
        if reasons:
            return reasons[0].strip("()").strip()
        same = self.marked("same-as")
        return f"the same as on {same[0]}, where it runs" if same else None

    @property
    def kind(self) -> str:
        """python, shell (holds a project command), other-shell, study (a whole study file), toml, text."""
        if self.lang in PYTHON_LANGS:
            return "python"
        if self.lang in SHELL_LANGS:
            return "shell" if PROJECT_COMMAND.search(self.text) else "other-shell"
        if self.lang in ("", "text") and PROMPT.search(self.text):
            return "shell"
        if self.lang == "toml":
            try:
                return "study" if "scenario" in tomllib.loads(self.text) else "toml"
            except tomllib.TOMLDecodeError:
                return "toml"
        return "text"

    def run_text(self) -> str:
        """The block's text with its ``replace`` markers applied."""
        text = self.text
        for rep in self.marked("replace"):
            old, sep, new = rep.partition(" -> ")
            assert sep, f"{self.where}: a replace marker is 'replace OLD -> NEW', got {rep!r}"
            assert old in text, f"{self.where}: replace marker {old!r} does not occur in the block (stale marker)"
            text = text.replace(old, new)
        return text

    def commands(self, as_written: bool = False) -> list[str]:
        """The shell commands of a ``shell`` block (``console``: the ``$`` lines; continuation lines joined), with
        the ``replace`` markers applied unless ``as_written``."""
        lines = (self.text if as_written else self.run_text()).splitlines()
        if self.lang not in ("bash", "sh", "shell"):  # a transcript: the prompt lines
            lines = [ln[2:] for ln in lines if ln.startswith("$ ")]
        joined: list[str] = []
        for ln in lines:
            if joined and joined[-1].endswith("\\"):
                joined[-1] = joined[-1][:-1] + " " + ln.strip()
            elif ln.strip() and not ln.lstrip().startswith("#"):
                joined.append(ln.strip())
        return joined


def parse(page: Path) -> list[Block]:
    """Every fenced block of a markdown page, with the docs-test markers on the lines right above it."""
    rel = page.relative_to(REPO).as_posix()
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = len(m["indent"]), m["fence"]
        j = i + 1
        while j < len(lines) and not (
            lines[j].strip().startswith(fence[0] * len(fence)) and not lines[j].strip().strip(fence[0])
        ):
            j += 1
        body = "\n".join(ln[indent:] if ln[:indent].strip() == "" else ln for ln in lines[i + 1 : j])
        markers, k = [], i - 1
        while k >= 0 and (mm := MARKER.match(lines[k])):
            markers.insert(0, mm["body"])
            k -= 1
        blocks.append(Block(rel, i + 1, m["lang"].lower(), body, markers))
        i = j + 1
    return blocks


BLOCKS = [b for page in PAGES for b in parse(page)]


def steps(blocks: list[Block]) -> list[dict]:
    """The page's run plan for the driver below."""
    plan: list[dict] = []
    for b in blocks:
        if b.skip_reason is not None:
            continue
        for rep in b.marked("copy"):
            src, sep, name = rep.partition(" -> ")
            assert sep and (REPO / src).is_file(), f"{b.where}: copy marker {rep!r}: no repository file {src!r}"
            plan.append(dict(kind="copy", where=b.where, src=str(REPO / src), name=name))
        for name in b.marked("file"):
            plan.append(dict(kind="file", where=b.where, name=name, text=b.run_text() + "\n"))
        if b.kind == "python":
            code, filename = b.run_text(), b.page
            inc = INCLUDE.match(code.strip())
            if inc:
                filename = inc["path"]
                code = (REPO / filename).read_text(encoding="utf-8")
            else:
                code = "\n" * b.line + code  # tracebacks name the page's own lines
            plan.append(dict(kind="python", where=b.where, code=code, filename=filename))
        elif b.kind == "shell":
            cmds = b.commands()
            bad = [c for c in cmds if not COMMAND_LINE.match(c)]
            assert not bad, (
                f"{b.where}: a shell block with a python -m sims/jaxtire command holds only such commands "
                f"(mark it '<!-- docs-test: skip (why) -->' otherwise): {bad}"
            )
            exe = shlex.quote(sys.executable)
            plan.append(dict(kind="shell", where=b.where, commands=[re.sub(r"^python3?", exe, c) for c in cmds]))
    return plan


def statements(b: Block) -> list[str]:
    """A block's commands (shell) or code lines (python), comments and runs of spaces dropped: what ``same-as``
    compares."""
    lines = b.commands(as_written=True) if b.kind == "shell" else b.text.splitlines()
    out = [re.sub(r"\s+", " ", ln.split("  #")[0].split(" # ")[0]).strip() for ln in lines]
    return [ln for ln in out if ln and not ln.startswith("#")]


DRIVER = r"""
import json, os, shutil, subprocess, sys, time, traceback
plan = json.load(open(sys.argv[1]))
ns = {"__name__": "__main__"}
t_page = time.perf_counter()
for step in plan:
    t0 = time.perf_counter()
    print(f"--- {step['where']} ({step['kind']})", flush=True)
    if step["kind"] == "copy":
        shutil.copyfile(step["src"], step["name"])
    elif step["kind"] == "file":
        with open(step["name"], "w") as f:
            f.write(step["text"])
    elif step["kind"] == "python":
        try:
            exec(compile(step["code"], step["filename"], "exec"), ns)
        except ImportError as e:  # an optional extra (rl: gymnasium; studies: pandas) not installed: skipped
            traceback.print_exc()
            name = (getattr(e, "name", None) or "").split(".")[0]
            optional = name not in ("", "jaxtire", "sims") or "pip install" in str(e)
            print(f"{'OPTIONAL' if optional else 'FAILED'} {step['where']}: {e}", flush=True)
            sys.exit(3 if optional else 1)
        except BaseException:
            traceback.print_exc()
            print(f"FAILED {step['where']}", flush=True)
            sys.exit(1)
    else:
        for cmd in step["commands"]:
            print("$ " + cmd, flush=True)
            p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True)
            print(p.stdout[-3000:] + p.stderr[-3000:], flush=True)
            if p.returncode:
                print(f"FAILED {step['where']}: exit status {p.returncode}", flush=True)
                sys.exit(1)
    print(f"    {time.perf_counter() - t0:.1f} s", flush=True)
print(f"page {time.perf_counter() - t_page:.1f} s", flush=True)
"""


def run_page(blocks: list[Block], folder: Path, jax_cache: Path | None = None) -> subprocess.CompletedProcess:
    """Run a page's plan in a fresh Python in ``folder``; ``jax_cache``: JAX's persistent compilation cache,
    shared by the pages of one test worker (the docs repeat programs: ``python -m sims`` twice, ``tune`` and
    ``tune --lateral``, a training from the CLI and from Python; a hit reads the compiled program back)."""
    plan = folder / ".docs_test_plan.json"
    plan.write_text(json.dumps(steps(blocks)))
    env = dict(
        os.environ,
        MPLBACKEND="Agg",
        JAX_PLATFORMS="cpu",
        PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    )
    if jax_cache is not None:
        env.update(JAX_COMPILATION_CACHE_DIR=str(jax_cache), JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0.5")
    return subprocess.run(
        [sys.executable, "-c", DRIVER, str(plan)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=PAGE_TIMEOUT,
    )


RUN_PAGES = sorted({b.page for b in BLOCKS if b.skip_reason is None and b.kind in ("python", "shell")})


@pytest.fixture(scope="module")
def jax_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("jax-cache")


@pytest.mark.parametrize("page", RUN_PAGES)
def test_page_runs(page, tmp_path, jax_cache):
    blocks = [b for b in BLOCKS if b.page == page]
    proc = run_page(blocks, tmp_path, jax_cache)
    print(proc.stdout[-6000:])
    if proc.returncode == 3:
        pytest.skip([ln for ln in proc.stdout.splitlines() if ln.startswith("OPTIONAL ")][-1])
    assert proc.returncode == 0, f"{page}: a block failed\n{proc.stdout[-8000:]}\n{proc.stderr[-4000:]}"


SKIPPED = [b for b in BLOCKS if b.skip_reason is not None]


@pytest.mark.parametrize("block", SKIPPED, ids=[b.where for b in SKIPPED])
def test_marked_not_run(block):
    assert block.skip_reason, f"{block.where}: a skip marker needs its reason: <!-- docs-test: skip (why) -->"
    pytest.skip(f"{block.where}: {block.skip_reason}")


def test_markers_are_known_and_placed():
    for b in BLOCKS:
        for m in b.markers:
            kind = m.split(None, 1)[0] if m else ""
            assert kind in ("skip", "replace", "copy", "file", "same-as"), f"{b.where}: unknown docs-test marker {m!r}"
        if b.kind == "text" or b.kind == "other-shell":
            assert not b.marked("replace") and not b.marked("copy"), f"{b.where}: a marker on a block that never runs"
        if b.skip_reason is None:
            b.run_text()  # replace markers that match


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.kind == "study"], ids=lambda b: b.where)
def test_study_files_pass_the_checks(block):
    from sims.studies import study as sm

    sm.check(sm.Study.from_dict(tomllib.loads(block.run_text())))


SAME_AS = [b for b in BLOCKS if b.marked("same-as")]


@pytest.mark.parametrize("block", SAME_AS, ids=[b.where for b in SAME_AS])
def test_same_as_blocks_run_on_their_page(block):
    page = block.marked("same-as")[0]
    assert page in RUN_PAGES, f"{block.where}: same-as {page!r}: no page of that name runs"
    ran = [o for o in BLOCKS if o.page == page and o.kind == block.kind and o.skip_reason is None]
    have = {ln for o in ran for ln in statements(o)}
    missing = [ln for ln in statements(block) if ln not in have]
    assert not missing, f"{block.where}: same-as {page}, but these lines run nowhere there: {missing}"


def test_inventory():
    """Counts every block by what happens to it (printed: ``-rP`` or ``-s``)."""
    rows: dict[str, list[str]] = {}
    for b in BLOCKS:
        if b.skip_reason is not None:
            what = "not run, marked skip"
        elif b.kind in ("python", "shell"):
            what = f"run ({b.kind})"
        elif b.kind == "study":
            what = "checked (study file)"
        elif b.kind == "other-shell":
            what = "not run: shell without a python -m sims/jaxtire command"
        else:
            what = f"not code ({b.lang or 'plain'}: output, listing or fragment)"
        rows.setdefault(what, []).append(b.where + (f" ({b.skip_reason})" if b.skip_reason else ""))
    for what, wheres in sorted(rows.items()):
        print(f"{what}: {len(wheres)}")
        for w in wheres:
            print(f"    {w}")
    assert sum(len(w) for what, w in rows.items() if what.startswith("run")) >= 20


def test_every_catalogue_scenario_is_in_the_scenarios_table():
    from sims.scenarios import catalog

    rows = re.findall(r"^\| `(\w+)` \|", (REPO / "docs" / "scenarios.md").read_text(encoding="utf-8"), re.M)
    missing = sorted(set(catalog.names()) - set(rows))
    assert not missing, f"docs/scenarios.md's catalogue table lacks {missing}"


def test_every_cli_scenario_is_in_the_readme_table():
    from sims.cli.fleet import SCENARIOS

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    (row,) = [ln for ln in readme.splitlines() if ln.startswith("| `--scenario` |")]
    missing = [s for s in SCENARIOS if f"`{s}`" not in row]
    assert not missing, f"the README's --scenario row lacks {missing} (python -m sims --help accepts them)"


def test_the_home_page_installs_as_the_readme():
    first = {
        p: next(b for b in BLOCKS if b.page == p and b.lang == "bash").text for p in ("README.md", "docs/index.md")
    }
    assert first["README.md"] == first["docs/index.md"], first
