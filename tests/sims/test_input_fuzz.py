"""Issue 38 item 7: the new input surfaces fuzzed as tests/jaxtire/test_tir_fuzz.py fuzzes .tir files.

Every bad value (NaN, +-inf, a string, None, a list, a table, +-1e30, an empty string) put into every field of
the constructors of suspension, driveline and chassis controls, of the road-profile builders and of a study
file, and seeded mutations of a circuit CSV (a bad field, a deleted or repeated line, a truncated file, a
degenerate point): each is a one-line ``ValueError`` / ``TypeError`` naming the field (the file and line for a
circuit), or, where the value is valid (a per-vehicle list where fields batch), an accepted input with finite
results.  Never another exception, a multi-line message or a silent change.  The counts are printed.
"""

import copy
import random

import jax
import numpy as np

from sims.roads import circuits
from sims.roads import profile as rp
from sims.studies import study as sm
from sims.vehicles import controls as ctl
from sims.vehicles import driveline as dlm
from sims.vehicles import presets
from sims.vehicles import suspension as susp

BAD = [float("nan"), float("inf"), -float("inf"), "abc", None, [1.0, 2.0], {"a": 1}, -1e30, 1e30, ""]


class Cases:
    def __init__(self):
        self.n, self.problems = 0, []

    def refused(self, label: str, names: tuple, fn, accept=lambda: False):
        """``fn()`` raises ValueError / TypeError in one line naming one of ``names``, or ``accept()`` holds."""
        self.n += 1
        try:
            fn()
        except (ValueError, TypeError) as e:
            msg = str(e).strip()
            if "\n" in msg or not any(k in msg for k in names):
                self.problems.append((label, msg[:200]))
            return
        except Exception as e:  # noqa: BLE001 - the point: nothing else may escape
            self.problems.append((label, f"{type(e).__name__}: {str(e)[:200]}"))
            return
        if not accept():
            self.problems.append((label, "accepted"))


def _batch(b):  # a per-vehicle list is a valid batch where fields batch (a leading vehicle axis)
    return isinstance(b, list)


def test_constructors_and_profile_builders():
    c = Cases()
    for f in susp.SUSPENSION_DEFAULTS:
        for b in BAD:
            c.refused(f"suspension {f}={b!r}", (f,), lambda f=f, b=b: susp.make_suspension(**{f: b}), lambda b=b: _batch(b))
    dl = jax.tree.map(np.asarray, presets.get_driveline("hatchback"))
    for part in ("engine", "gearbox"):
        for f in getattr(dl, part)._fields:
            for b in BAD:

                def mk(part=part, f=f, b=b):
                    parts = {"engine": dl.engine, "gearbox": dl.gearbox}
                    parts[part] = parts[part]._replace(**{f: b})
                    return dlm.make_driveline(**parts)

                ok = lambda f=f, b=b: _batch(b) and f not in ("speeds", "torque_full", "torque_drag", "ratios")  # noqa: E731
                c.refused(f"driveline {part}.{f}={b!r}", (f,), mk, ok)
    for part in ("tc", "esc"):
        for f in getattr(ctl.ChassisControls(), part)._fields:
            for b in BAD:

                def mk(part=part, f=f, b=b):
                    base = ctl.ChassisControls()
                    return dlm.make_driveline(dl.engine, dl.gearbox, controls=base._replace(**{part: getattr(base, part)._replace(**{f: b})}))

                c.refused(f"controls {part}.{f}={b!r}", (f,), mk, lambda b=b: _batch(b))
    flat = rp.flat(100.0, 0.05)
    builders = {
        "flat": (lambda **k: rp.flat(**{"length": 100.0, **k}), ("length", "spacing", "start", "split_y")),
        "bump": (lambda **k: rp.bump(flat, **{"at": 10.0, "height": 0.05, "length": 0.5, **k}), ("at", "height", "length", "side")),
        "kerb": (lambda **k: rp.kerb(flat, **{"at": 10.0, "height": 0.05, "length": 2.0, **k}), ("at", "height", "length", "ramp", "side")),
        "washboard": (
            lambda **k: rp.washboard(flat, **{"start": 10.0, "end": 50.0, "amplitude": 0.01, "wavelength": 1.0, **k}),
            ("start", "end", "amplitude", "wavelength", "side"),
        ),
        "iso8608": (lambda **k: rp.iso8608(flat, **k), ("road_class", "seed", "n_min", "n_max", "side", "fade")),
    }  # fmt: skip
    for name, (fn, fields) in builders.items():
        for f in fields:
            for b in BAD:
                ok = lambda f=f, b=b: f == "n_max" and b is None  # noqa: E731  (None: the grid's Nyquist, documented)
                c.refused(f"profile.{name} {f}={b!r}", (f,), lambda fn=fn, f=f, b=b: fn(**{f: b}), ok)
    print(f"constructors and profile builders: {c.n} bad inputs, {len(c.problems)} problems")
    assert c.n > 700 and not c.problems, c.problems[:20]


STUDY = dict(
    name="wet", scenario="braking", vehicle={"surface": "asphalt_wet"}, runs=16, seed=3, design="saltelli",
    settings={"speed": 12.0}, options={"max_time": 3.0, "dt": 0.01, "model": "single_track"},
    metrics=["distance", "stop_time", "passed"],
    vary=[
        {"path": "vehicle.tire_scale.mu_x", "dist": "uniform", "by": "factor", "low": 0.6, "high": 1.1, "also": ["vehicle.tire_scale.mu_y"]},
        {"path": "vehicle.chassis.mass", "dist": "uniform", "by": "factor", "low": 0.9, "high": 1.25},
    ],
)  # fmt: skip


def _paths(d, pre=()):
    if isinstance(d, dict):
        for k, v in d.items():
            yield from _paths(v, pre + (k,))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            yield from _paths(v, pre + (i,))
    if pre:
        yield pre


def test_study_files():
    """Each key of a study file set to each bad value: refused by what ``python -m sims study`` runs before the
    fleet (the file's types and ranges, the scenario's options, settings, metrics and variations)."""
    sm._prepare(sm.Study.from_dict(copy.deepcopy(STUDY)))
    c = Cases()
    for p in list(_paths(STUDY)):
        names = tuple(str(k) for k in p if not isinstance(k, int)) + ("metric", "path", "vary")
        for b in BAD:
            d = copy.deepcopy(STUDY)
            node = d
            for k in p[:-1]:
                node = node[k]
            node[p[-1]] = b
            valid = (p == ("name",) and b == "abc") or (p == ("vehicle", "surface") and b is None)
            valid |= p[-2:] in (("vary", 0), ("vary", 1)) or (p[0] == "vary" and p[-1] == "high" and b == 1e30)
            c.refused(f"study {'.'.join(map(str, p))}={b!r}", names, lambda d=d: sm._prepare(sm.Study.from_dict(d)), lambda v=valid: v)
    print(f"study files: {c.n} bad inputs, {len(c.problems)} problems")
    assert c.n > 300 and not c.problems, c.problems[:20]


def test_circuit_files(tmp_path):
    """Seeded mutations of the Norisring centreline CSV: a refused file names itself and the line, a loaded
    one has a finite track (1e300 coordinates were read and overflowed downstream)."""
    src = circuits.circuit_path("Norisring").read_text().splitlines()
    rng = random.Random(0)
    tokens = ["nan", "inf", "-1", "abc", "", "1e300", "-1e300", "0", "1,2", " "]
    c = Cases()
    for k in range(200):
        lines = list(src)
        i = rng.randrange(1, len(lines))
        kind = k % 5
        if kind == 0:
            f = lines[i].split(",")
            f[rng.randrange(len(f))] = rng.choice(tokens)
            lines[i] = ",".join(f)
        elif kind == 1:
            del lines[rng.randrange(len(lines))]
        elif kind == 2:
            lines.insert(i, lines[i])
        elif kind == 3:
            lines = lines[: rng.randrange(0, 6)]
        else:
            f = lines[i].split(",")
            f[0] = f[1]
            lines[i] = ",".join(f)
        path = tmp_path / f"c{k}.csv"
        path.write_text("\n".join(lines) + "\n")

        def load(path=path):
            t = circuits.load_circuit(path)
            arrays = (t.xy, t.heading, t.curvature, t.width_left, t.width_right)
            if not all(np.all(np.isfinite(np.asarray(a))) for a in arrays):
                raise AssertionError("loaded with non-finite values")  # recorded as a problem

        c.refused(f"circuit mutation {k}", (str(path),), load, lambda: True)
    print(f"circuit files: {c.n} mutated files, {len(c.problems)} problems")
    assert c.n == 200 and not c.problems, c.problems[:20]
