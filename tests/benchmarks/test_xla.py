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
    # with the collective timeouts this jaxlib knows (XLA aborts on unknown flags)
    want = " ".join(["--xla_force_host_platform_device_count=2", *_xla._known_flags(_xla.COLLECTIVE_FLAGS)])
    assert _xla.tune_cpu(env, {"avx2"}, host_devices=2) == want
    assert env["XLA_FLAGS"] == want
    env = {"XLA_FLAGS": "--xla_force_host_platform_device_count=8"}
    assert _xla.tune_cpu(env, AVX512, host_devices=2) == _xla.VECTOR_FLAG
    assert env["XLA_FLAGS"] == "--xla_force_host_platform_device_count=8 --xla_cpu_prefer_vector_width=512"
    env = {}
    assert _xla.tune_cpu(env, {"avx2"}, host_devices=1) is None and "XLA_FLAGS" not in env
