"""Seeded fuzzer of jaxtire.load_tir: mutated real .tir files and special paths.

    python -m benchmarks.fuzz_tir [--n 1200] [--seed 0] [--timeout 30] [--out fuzz_tir.json]

Seeds: the real files in ../shared/tir (and wild/) when present, plus the bundled
jaxtire/data/TNO_car205_60R15.tir.  Each case applies 1-3 mutations (value replaced by
huge / tiny / non-finite / overflowing / non-numeric / scaled / sign-flipped text, lines
deleted, duplicated into other sections, swapped, keys renamed, sections deleted, headers
misbracketed, units changed, FITTYP changed or removed, truncation, binary garbage, BOM,
CRLF, empty / comment-only / header-only files).  Special paths: FIFO, /dev/zero,
/dev/null, a directory, a 64 MiB sparse file, a dangling path, a symlink to /dev/zero.

Every case is loaded in a worker process (restarted after a hang) and classified:

* ``crash``: an exception other than TirError;
* ``hang``: no answer within ``--timeout`` seconds;
* ``clean_error``: a TirError whose message names the file;
* ``correct``: loads, forces/moments finite on a grid incl. Fz = 0, every required key
  present in the file, and every coefficient an independent minimal parser reads from the
  file (SI files) equals the loaded value;
* ``garbage``: loads but fails one of those checks (NaN/inf forces, a required key
  missing, a value that differs from the file's, a duplicate key accepted, ...).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "tir"

_VALUES = [
    "1e39",
    "-1e39",
    "1e400",
    "-1e400",
    "9" * 400,
    "nan",
    "inf",
    "-inf",
    "0",
    "-0",
    "1e-300",
    "1e6",
    "-1e6",
    "100",
    "abc",
    "",
    "1.0.0",
    "0x10",
    "1,5",
    "'text'",
    "1e308",
    "3.4e38",
    "-3.5e38",
    "1d5",
    "+.5",
    "1e-45",
]
_UNITS = ["'mm'", "'kN'", "'degree'", "'furlong'", "12", "'radian'", "''", "'meter'", "'inch'", "'lbf'", "'kpa'"]


def seeds() -> list[Path]:
    out = [REPO / "jaxtire" / "data" / "TNO_car205_60R15.tir"]
    if SHARED.is_dir():
        out += sorted(SHARED.glob("*.tir")) + sorted((SHARED / "wild").glob("*.tir"))
    return out


def _entry_lines(lines):
    return [i for i, ln in enumerate(lines) if re.match(r"^\s*[A-Za-z_][A-Za-z0-9_]*\s*=", ln)]


def mutate(text: str, rng: random.Random) -> tuple[str | bytes, str]:
    """One random mutation of ``text``; returns (new text or bytes, description)."""
    lines = text.split("\n")
    entries = _entry_lines(lines)
    kind = rng.choice(
        [
            "value",
            "value",
            "value",
            "scale",
            "delete_line",
            "delete_section",
            "duplicate",
            "swap",
            "rename",
            "header",
            "units",
            "fittyp",
            "truncate",
            "garbage",
            "bom",
            "crlf",
            "special_text",
            "move_key",
            "blank",
        ]
    )
    if kind in ("value", "scale", "blank") and entries:
        i = rng.choice(entries)
        m = re.match(r"^(\s*[A-Za-z_][A-Za-z0-9_]*\s*=\s*)('[^']*'|[^\s$]*)(.*)$", lines[i])
        if m:
            if kind == "value":
                new = rng.choice(_VALUES)
            elif kind == "blank":
                new = ""
            else:
                try:
                    v = float(m.group(2))
                except ValueError:
                    v = 1.0
                new = repr(v * rng.choice([-1.0, 10.0, 0.1, 1e3, 1e-3, -10.0, 0.0]))
            lines[i] = m.group(1) + new + m.group(3)
            return "\n".join(lines), f"{kind} line {i + 1} -> {new!r}"
    if kind == "delete_line" and lines:
        i = rng.randrange(len(lines))
        del lines[i]
        return "\n".join(lines), f"delete line {i + 1}"
    if kind == "delete_section":
        heads = [i for i, ln in enumerate(lines) if ln.strip().startswith("[")]
        if heads:
            k = rng.randrange(len(heads))
            a, b = heads[k], heads[k + 1] if k + 1 < len(heads) else len(lines)
            return "\n".join(lines[:a] + lines[b:]), f"delete section at line {a + 1}"
    if kind == "duplicate" and entries:
        i = rng.choice(entries)
        j = rng.randrange(len(lines))
        lines.insert(j, lines[i])
        return "\n".join(lines), f"duplicate line {i + 1} at {j + 1}"
    if kind == "move_key" and entries:
        i = rng.choice(entries)
        ln = lines.pop(i)
        j = rng.randrange(len(lines))
        lines.insert(j, ln)
        return "\n".join(lines), f"move line {i + 1} to {j + 1}"
    if kind == "swap" and len(lines) > 2:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return "\n".join(lines), f"swap lines {i + 1}, {j + 1}"
    if kind == "rename" and entries:
        i = rng.choice(entries)
        m = re.match(r"^(\s*)([A-Za-z_][A-Za-z0-9_]*)(.*)$", lines[i])
        if m is None:  # an entry line not starting with a name: nothing to rename
            return "\n".join(lines), f"rename line {i + 1}: no key"
        new = rng.choice([m.group(2) + "X", m.group(2)[:-1], "PCY1", "FNOMIN", "LMUY", m.group(2).lower()])
        lines[i] = m.group(1) + new + m.group(3)
        return "\n".join(lines), f"rename line {i + 1} to {new}"
    if kind == "header":
        heads = [i for i, ln in enumerate(lines) if ln.strip().startswith("[")]
        if heads:
            i = rng.choice(heads)
            name = lines[i].strip().strip("[]")
            new = rng.choice([f"{{{name}}}", f"[{name}", f"{name}]", f"[{name}]]", f"[ {name} X]", "[]", f"[[{name}]]"])
            lines[i] = new
            return "\n".join(lines), f"header line {i + 1} -> {new}"
    if kind == "units":
        idx = [i for i, ln in enumerate(lines) if re.match(r"^\s*(LENGTH|FORCE|ANGLE|MASS|TIME)\s*=", ln)]
        if idx:
            i = rng.choice(idx)
            u = rng.choice(_UNITS)
            lines[i] = re.sub(r"=.*$", "= " + u, lines[i])
            return "\n".join(lines), f"unit line {i + 1} -> {u}"
    if kind == "fittyp":
        idx = [i for i, ln in enumerate(lines) if re.match(r"^\s*FITTYP\s*=", ln)]
        if idx:
            fv = rng.choice(["", "1e400", "61.5", "6", "21", "52", "99", "-61", "'61'", None])
            if fv is None:
                del lines[idx[0]]
                return "\n".join(lines), "delete FITTYP"
            lines[idx[0]] = f"FITTYP = {fv}"
            return "\n".join(lines), f"FITTYP -> {fv!r}"
    if kind == "truncate":
        n = rng.randrange(len(text) + 1)
        return text[:n], f"truncate at byte {n}"
    if kind == "garbage":
        data = bytearray(text.encode("utf-8", "replace"))
        pos = rng.randrange(len(data) + 1)
        junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
        return bytes(data[:pos] + junk + data[pos:]), f"{len(junk)} random bytes at {pos}"
    if kind == "bom":
        return b"\xef\xbb\xbf" + text.encode("utf-8"), "UTF-8 BOM"
    if kind == "crlf":
        return text.replace("\n", "\r\n"), "CRLF"
    if kind == "special_text":
        t = rng.choice(
            [
                "",
                "$ comment only\n",
                "[MDI_HEADER]\n",
                "\n" * 10,
                "[UNITS]\nLENGTH='meter'\n",
                "FNOMIN = 4000\n",
                "\x00" * 100,
            ]
        )
        return t, f"special text {t[:20]!r}"
    return text, "unchanged"


def make_cases(n: int, seed: int, workdir: Path) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    srcs = seeds()
    texts = [(p, p.read_text(encoding="utf-8", errors="replace")) for p in srcs]
    cases = []
    for k in range(n):
        src, start = texts[k % len(texts)]
        text: str | bytes = start
        desc: list[str] = []
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            if isinstance(text, bytes):
                break
            text, d = mutate(text, rng)
            desc.append(d)
        path = workdir / f"case{k:05d}.tir"
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        cases.append((str(path), f"{src.name}: " + "; ".join(desc)))
        text = texts[k % len(texts)][1]
    # special paths
    fifo = workdir / "fifo.tir"
    os.mkfifo(fifo)
    dpath = workdir / "dir.tir"
    dpath.mkdir()
    huge = workdir / "huge.tir"
    with open(huge, "wb") as f:
        f.truncate(64 * 1024 * 1024)
    link = workdir / "zero_link.tir"
    os.symlink("/dev/zero", link)
    for p, what in [
        (fifo, "FIFO"),
        ("/dev/zero", "/dev/zero"),
        ("/dev/null", "/dev/null"),
        (dpath, "directory"),
        (huge, "64 MiB sparse file"),
        (workdir / "missing.tir", "missing"),
        (link, "symlink to /dev/zero"),
    ]:
        cases.append((str(p), what))
    return cases


# ----------------------------------------------------------------------------- worker


def _independent(path: str):
    """Minimal parser: ({KEY: float} of numeric entries outside [UNITS], set of duplicate keys, si?)."""
    try:
        text = Path(path).read_bytes().decode("utf-8", "replace")
    except OSError:
        return {}, set(), False
    vals, dup, section, si = {}, set(), None, True
    for ln in text.splitlines():
        s = ln.strip().lstrip("\ufeff")
        if s.startswith("["):
            section = s.strip("[] ").upper()
            continue
        m = re.match(r"^([A-Za-z_]\w*)\s*=\s*([^\s$]*)", s)
        if not m:
            continue
        k = m.group(1).upper()
        if section == "UNITS":
            if m.group(2).strip("'\"").lower() not in (
                "meter",
                "newton",
                "radian",
                "radians",
                "kg",
                "second",
                "pascal",
            ):
                si = False
            continue
        if k in vals:
            dup.add(k)
        try:
            vals[k] = float(m.group(2).replace("D", "e").replace("d", "e"))
        except ValueError:
            pass
    return vals, dup, si


def _worker(conn):
    import dataclasses
    import warnings

    import jax
    import numpy as np

    import jaxtire
    from jaxtire.bounds import REQUIRED, REQUIRED_MF6
    from jaxtire.tir import TirError, load_tir

    @jax.jit
    def grid(p):
        import jax.numpy as jnp

        fz = p.FNOMIN * jnp.array([0.0, 0.05, 0.3, 1.0, 2.0, 3.0])
        k = jnp.linspace(-1.0, 1.0, 21)
        a = jnp.linspace(-0.6, 0.6, 21)
        g = jnp.array([-0.15, 0.0, 0.15])
        o = jaxtire.mf_forces(
            p, k[:, None, None, None], a[None, :, None, None], g[None, None, :, None], fz[None, None, None, :]
        )
        return jnp.all(jnp.isfinite(jnp.stack([o.fx, o.fy, o.mz, o.mx, o.my])))

    while True:
        path = conn.recv()
        if path is None:
            return
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                p = load_tir(path)
        except TirError as e:
            named = Path(path).name in str(e) or path in str(e)
            conn.send(
                (
                    "clean_error" if named else "garbage",
                    f"TirError without the file name: {e}"[:300] if not named else str(e)[:300],
                    time.perf_counter() - t0,
                )
            )
            continue
        except Exception as e:  # noqa: BLE001 - classification of the fuzz target
            conn.send(("crash", f"{type(e).__name__}: {e}"[:300], time.perf_counter() - t0))
            continue
        why = []
        probe = dataclasses.replace(p, meta=())
        if not bool(grid(probe)):
            why.append("NaN/inf forces on the grid")
        vals, dup, si = _independent(path)
        req = REQUIRED + (REQUIRED_MF6 if p.fittyp in (61, 62) else ())
        miss = [k for k in req if k not in vals]
        if miss:
            why.append(f"required key(s) {miss} absent from the file")
        if dup:
            why.append(f"duplicate key(s) {sorted(dup)[:3]} accepted")
        if si:
            for k, v in vals.items():
                if k in p.coef and np.isfinite(v):
                    got = float(np.asarray(p.coef[k]))
                    if got != float(np.asarray(v, dtype=np.asarray(p.coef[k]).dtype)):
                        why.append(f"{k} loaded as {got}, file says {v}")
                        break
        conn.send(("garbage" if why else "correct", "; ".join(why)[:300], time.perf_counter() - t0))


def run(cases, timeout: float):
    ctx = mp.get_context("spawn")
    results = []
    proc = conn = None

    def start():
        a, b = ctx.Pipe()
        pr = ctx.Process(target=_worker, args=(b,), daemon=True)
        pr.start()
        return pr, a

    proc, conn = start()
    first = True
    for path, desc in cases:
        conn.send(path)
        if conn.poll(timeout + (120 if first else 0)):
            cls, msg, dt = conn.recv()
            first = False
        else:
            cls, msg, dt = "hang", f"no answer in {timeout} s", timeout
            proc.kill()
            proc.join()
            proc, conn = start()
            first = True
        results.append({"path": Path(path).name, "case": desc, "class": cls, "detail": msg, "seconds": round(dt, 4)})
    conn.send(None)
    proc.join(10)
    return results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.fuzz_tir", description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1200, help="mutated files (default 1200)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per file before it counts as a hang")
    ap.add_argument("--out", default=None, help="write every case and its class as JSON")
    args = ap.parse_args(argv)
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="fuzz_tir_") as tmp:
        cases = make_cases(args.n, args.seed, Path(tmp))
        results = run(cases, args.timeout)
    counts = {c: sum(r["class"] == c for r in results) for c in ("crash", "hang", "garbage", "clean_error", "correct")}
    print(
        f"fuzz_tir: {len(results)} cases ({args.n} mutated files from {len(seeds())} seeds, "
        f"{len(results) - args.n} special paths), seed {args.seed}, {time.time() - t0:.0f} s"
    )
    for c, k in counts.items():
        print(f"  {c:12s} {k}")
    for r in results:
        if r["class"] in ("crash", "hang", "garbage"):
            print(f"  {r['class'].upper()}: {r['case']}: {r['detail']}")
    if args.out:
        Path(args.out).write_text(json.dumps({"counts": counts, "seed": args.seed, "cases": results}, indent=1))
    return 1 if counts["crash"] or counts["hang"] or counts["garbage"] else 0


if __name__ == "__main__":
    sys.exit(main())
