"""sims.run._xla.tune_cpu: 512-bit vectors on AVX-512 CPUs, appended to the user's XLA_FLAGS, never overriding them."""

from sims.run import _xla

AVX512 = {"avx2", "avx512f"}


def test_adds_vector_width_on_avx512_and_keeps_user_flags():
    env = {"XLA_FLAGS": "--xla_cpu_use_thunk_runtime=true"}
    assert _xla.tune_cpu(env, AVX512) == _xla.VECTOR_FLAG
    assert env["XLA_FLAGS"] == "--xla_cpu_use_thunk_runtime=true --xla_cpu_prefer_vector_width=512"
    env = {}
    _xla.tune_cpu(env, AVX512)
    assert env["XLA_FLAGS"] == "--xla_cpu_prefer_vector_width=512"


def test_user_choice_wins_and_no_avx512_means_no_change():
    env = {"XLA_FLAGS": "--xla_cpu_prefer_vector_width=256"}
    assert _xla.tune_cpu(env, AVX512) is None and env["XLA_FLAGS"] == "--xla_cpu_prefer_vector_width=256"
    env = {}
    assert _xla.tune_cpu(env, {"avx2"}) is None and "XLA_FLAGS" not in env
    env = {"JAXTIRE_XLA_DEFAULT": "1"}
    assert _xla.tune_cpu(env, AVX512) is None and "XLA_FLAGS" not in env


def test_cpu_flags_reads_proc_cpuinfo():
    flags = _xla.cpu_flags()
    assert isinstance(flags, set)
    try:
        text = open("/proc/cpuinfo").read()
    except OSError:
        return
    assert ("avx2" in flags) == (" avx2" in text.split("flags", 1)[1].split("\n", 1)[0] if "flags" in text else False)


def test_host_devices_appended_unless_user_set_a_count():
    env = {}
    assert _xla.tune_cpu(env, {"avx2"}, host_devices=2) == "--xla_force_host_platform_device_count=2"
    assert env["XLA_FLAGS"] == "--xla_force_host_platform_device_count=2"
    env = {"XLA_FLAGS": "--xla_force_host_platform_device_count=8"}
    assert _xla.tune_cpu(env, AVX512, host_devices=2) == _xla.VECTOR_FLAG
    assert env["XLA_FLAGS"] == "--xla_force_host_platform_device_count=8 --xla_cpu_prefer_vector_width=512"
    env = {}
    assert _xla.tune_cpu(env, {"avx2"}, host_devices=1) is None and "XLA_FLAGS" not in env


class _FakeLibc:
    """Records mallopt calls; ``gnu_get_libc_version`` present as on glibc."""

    def __init__(self, glibc=True):
        self.calls = []
        if glibc:
            self.gnu_get_libc_version = lambda: b"2.36"

    def mallopt(self, param, value):
        self.calls.append((param.value, value.value))
        return 1


def test_tune_malloc_sets_one_arena_and_thresholds_unless_the_user_tunes_malloc():
    lib = _FakeLibc()
    assert _xla.tune_malloc({}, lib) is True
    # M_ARENA_MAX, M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, M_TOP_PAD (glibc malloc.h values)
    assert lib.calls == [(-8, 1), (-3, 32 << 20), (-1, 512 << 20), (-2, 64 << 20)]
    for env in ({"MALLOC_ARENA_MAX": "4"}, {"GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}, {"JAXTIRE_XLA_DEFAULT": "1"}):
        lib = _FakeLibc()
        assert _xla.tune_malloc(env, lib) is False and lib.calls == []
    lib = _FakeLibc(glibc=False)  # e.g. musl: other mallopt semantics, left alone
    assert _xla.tune_malloc({}, lib) is False and lib.calls == []


def test_tune_malloc_stops_page_faults_of_repeated_large_calls():
    """A fresh process calling a jitted computation with ~32 MB of buffers (2e6 float32 in, out and temporaries)
    20x right after two warm-up calls, as the entry points run it (tune_malloc before JAX starts): the calls
    reuse the heap.  Bound: 1.5 working sets of minor faults over the 20 calls (12 000 pages; the VM's
    proactive reclaim may page the idle set out once); without the tuning glibc gives whole heaps back
    and the count is typically 2 000-7 000 per call (kernel's getrusage count)."""
    import os
    import subprocess
    import sys

    code = (
        "import resource\n"
        "from sims.run import _xla\n"
        "assert _xla.tune_malloc()\n"
        "import jax, jax.numpy as jnp\n"
        "f = jax.jit(lambda x: jnp.sin(jnp.cumsum(jnp.exp(x) * x)) / (1 + x * x))\n"
        "x = jnp.linspace(0, 1, 2_000_000)\n"
        "f(x).block_until_ready(); f(x).block_until_ready()\n"
        "r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
        "for _ in range(20): f(x).block_until_ready()\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in _xla.MALLOC_ENV and k != "JAXTIRE_XLA_DEFAULT"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert int(out.stdout.split()[-1]) < 12_000
