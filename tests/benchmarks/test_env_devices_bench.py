"""benchmarks.envs.devices_ab at a tiny size (one device in the test process): the figures it reports and the
bitwise check of each variant against the first."""

import math

import jax

from benchmarks.envs import devices_ab


def test_devices_ab_tiny():
    n, steps = 16, 2
    res = devices_ab("braking", n=n, steps=steps, repeat=1, rounds=2, counts=(1, None))
    k = jax.local_device_count()
    assert list(res) == (["1 device(s)"] if k == 1 else ["1 device(s)", f"{k} device(s)"])  # None -> every device
    for r in res.values():
        assert r["equal"] and r["compile_s"] > 0 and len(r["rounds"]) == 2
        for rd in r["rounds"]:
            assert rd["env_steps_per_s"] > 0 and rd["cpu_ns_per_env_step"] > 0 and math.isfinite(rd["load"])
        rates = sorted(rd["env_steps_per_s"] for rd in r["rounds"])
        assert r["median_env_steps_per_s"] == (rates[0] + rates[1]) / 2  # numpy's median of two rounds
