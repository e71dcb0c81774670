"""CLI arguments checked before anything is compiled: one line on stderr, exit status 2, no traceback;
--steps runs exactly that many steps."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sims.cli import main

REPO = Path(__file__).resolve().parents[3]


def _fails(argv, capsys, entry=main):
    with pytest.raises(SystemExit) as e:
        entry(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[-1].startswith("python -m sims") and "Traceback" not in "\n".join(err)
    return err[-1]


def test_out_under_or_at_a_regular_file(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    msg = _fails(["--vehicles", "2", "--out", str(f)], capsys)
    assert f"--out {f}: {f} is a file, not a directory" in msg
    msg = _fails(["--vehicles", "2", "--out", str(f / "sub")], capsys)
    assert f"{f} is a file, not a directory" in msg
    assert f.read_text() == "x"


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
def test_out_not_writable(capsys):
    msg = _fails(["--vehicles", "2", "--out", "/proc/x"], capsys)
    assert "--out /proc/x: not writable" in msg


@pytest.mark.parametrize("seed", [2**64, 2**63, -1])
def test_seed_out_of_range(seed, tmp_path, capsys):
    msg = _fails(["--vehicles", "2", "--seed", str(seed), "--out", str(tmp_path)], capsys)
    assert f"--seed {seed} is outside the allowed range [0, 9223372036854775807]" in msg


def test_seed_max_is_accepted_by_jax():
    import jax

    from sims.cli._checks import SEED_MAX

    jax.random.PRNGKey(SEED_MAX)  # the largest seed the CLIs take is one jax accepts


def test_counts_refused_before_allocating(tmp_path, capsys):
    msg = _fails(["--scenario", "throughput", "--counts", str(10**12), "--out", str(tmp_path)], capsys)
    assert "--counts" in msg and "100000000" in msg
    from sims.cli._checks import BYTES_PER_VEHICLE, available_memory

    n = available_memory() // BYTES_PER_VEHICLE + 1  # within the hard cap, over the memory estimate
    if n <= 100_000_000:
        msg = _fails(["--scenario", "throughput", "--counts", str(n), "--out", str(tmp_path)], capsys)
        assert "GiB" in msg and "available" in msg


def test_bad_flags_do_not_create_out(tmp_path, capsys):
    out = tmp_path / "never"
    _fails(["--dt", "0", "--out", str(out)], capsys)
    assert not out.exists()


@pytest.mark.parametrize("argv, steps", [(["--steps", "20"], 20), (["--steps", "10", "--chunk-steps", "5"], 10),
                                         (["--steps", "7", "--chunk-steps", "5"], 7)])
def test_steps_run_exactly(argv, steps, tmp_path, capsys):
    out = main(["--vehicles", "2", "--no-plot", "--no-progress", "--fast-compile", "--surfaces", "asphalt_dry",
                "--out", str(tmp_path)] + argv)
    assert out["stats"].steps == steps
    assert f"{steps} steps" in capsys.readouterr().out


@pytest.mark.parametrize("module, argv, message", [
    ("identify", ["--seed", str(2**64)], "--seed 18446744073709551616 is outside"),
    ("identify", ["--dt", "nan"], "--dt nan is outside"),
    ("identify", ["--noise", "-1"], "--noise -1.0 is outside"),
    ("tune", ["--seed", "-5"], "--seed -5 is outside"),
    ("tune", ["--lr", "inf"], "--lr inf is outside"),
    ("tune", ["--vehicles", str(10**9)], "--vehicles 1000000000 is outside"),
])
def test_identify_and_tune_flags(module, argv, message, capsys):
    import importlib

    entry = importlib.import_module(f"sims.cli.{module}").main
    with pytest.raises(SystemExit) as e:
        entry(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[-1] and "Traceback" not in "\n".join(err)


def test_subprocess_one_line_no_traceback(tmp_path):
    f = tmp_path / "f"
    f.write_text("x")
    proc = subprocess.run([sys.executable, "-m", "sims", "--out", str(f / "o"), "--vehicles", "2"], cwd=REPO,
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=str(REPO)))
    assert proc.returncode == 2
    want = f"python -m sims: error: --out {f / 'o'}: {f} is a file, not a directory"
    assert proc.stderr.strip().splitlines() == [want]
