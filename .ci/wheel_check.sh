#!/usr/bin/env bash
# Wheel check: build the wheel, install it into a clean virtual environment OUTSIDE the checkout,
# and from another directory run the main job (python -m sims on its bundled default tire) and a
# smoke test that loads the bundled .tir (package data) and evaluates a force.
# Usage: bash .ci/wheel_check.sh   (from anywhere; needs python3 with pip and network or a wheel cache)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

python3 -m pip wheel -q --no-deps --wheel-dir "$WORK/dist" "$REPO"
WHEEL=$(ls "$WORK"/dist/jaxtire-*.whl)
echo "built $(basename "$WHEEL")"

python3 -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q "$WHEEL"

cd "$WORK"   # nothing of the checkout on sys.path from here on
"$WORK/venv/bin/python" - <<'PY'
import importlib.metadata as md
import pathlib

import jaxtire

version = md.version("jaxtire")
where = pathlib.Path(jaxtire.__file__).resolve()
assert "site-packages" in where.parts, f"jaxtire imported from {where}, not from the installed wheel"
assert getattr(jaxtire, "__version__", version) == version, (jaxtire.__version__, version)
files = {str(f) for f in md.files("jaxtire")}
names = {pathlib.Path(f).name for f in files}
assert {"LICENSE", "NOTICE"} <= names, f"licence files missing from the wheel: {sorted(names)[:20]}"
tir = jaxtire.data_path()
assert tir.is_file(), f"bundled .tir missing: {tir}"
params = jaxtire.default_tire()
# 4 kN, 5 deg slip angle: a car tire's lateral force is a few kN, opposite to alpha (ISO-W)
out = jaxtire.mf_forces(params, 0.0, 0.0873, 0.0, 4000.0)
fy = float(out.fy)
assert -6000.0 < fy < -2000.0, f"Fy = {fy} N at alpha 5 deg, Fz 4 kN"
print(f"wheel smoke test: jaxtire {version} from {where.parent}, {tir.name}, Fy(5 deg, 4 kN) = {fy:.0f} N")
PY
# the console script of [project.scripts] resolves in the installed wheel
"$WORK/venv/bin/jaxtire-fleet" --help > /dev/null
# the main job on its bundled default (10 000 hatchbacks braking on the bundled MF 6.2 tire)
"$WORK/venv/bin/python" -m sims --no-progress --out "$WORK/out"
test -s "$WORK/out/braking.csv" && test -s "$WORK/out/braking_hist.png"
echo "wheel check passed"
