"""A study over two processes (jax.distributed on localhost, Gloo on CPU): every process gets the one merged
table, bitwise the table of the same study on one process (7 rows: an uneven split)."""

import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[3]
WORKER = textwrap.dedent("""
    import json, sys
    nproc, pid, port, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    from sims.run import distributed
    if nproc > 1:
        distributed.initialize(f"localhost:{port}", num_processes=nproc, process_id=pid)
    import numpy as np
    from sims.run.spec import fast_compile_options
    from sims.studies import study as sm
    st = sm.Study(scenario="braking", tire="simple", surface="asphalt_wet", runs=7, seed=5, settings={"speed": 12.0},
        options={"max_time": 3.0, "dt": 0.01, "model": "single_track"},
        vary=({"path": "vehicle.tire_scale.mu_x", "dist": "uniform", "by": "factor", "low": 0.6, "high": 1.1},))
    r = sm.run(st, compiler_options=fast_compile_options())
    np.savez(f"{out}/p{pid}of{nproc}.npz", **{k: v for k, v in r.columns.items() if v.dtype != object})
    json.dump(r.summary["statistics"], open(f"{out}/s{pid}of{nproc}.json", "w"))
    distributed.shutdown()
""")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def test_two_processes_give_the_one_process_table(tmp_path):
    env = dict(
        os.environ,
        JAX_PLATFORMS="cpu",
        XLA_FLAGS="",
        PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    )
    port = str(_free_port())
    runs = [("1", "0", "0"), ("2", "0", port), ("2", "1", port)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, *a, str(tmp_path)],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for a in runs
    ]
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-4000:]
    one = np.load(tmp_path / "p0of1.npz")
    for pid in (0, 1):
        two = np.load(tmp_path / f"p{pid}of2.npz")
        assert one.files == two.files
        for k in one.files:
            assert one[k].dtype == two[k].dtype and np.array_equal(one[k], two[k]), k
    assert (tmp_path / "s0of1.json").read_text() == (tmp_path / "s1of2.json").read_text()
