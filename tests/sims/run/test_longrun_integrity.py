"""sims.run.longrun integrity: each kind of damaged, foreign or mismatched checkpoint is refused with a
LongRunError naming the file; repair=True restarts from the last good chunk and gives results bitwise equal
to an undamaged run; a failed write (disk full, file too large) leaves no temporary file and loses nothing
the manifest listed; n_steps runs exactly (partial last chunk)."""

import errno
import hashlib
import json
import os
import shutil

import numpy as np
import pytest

N_STEPS, CHUNK = 10, 4  # 3 chunks: 4, 4 and a partial one of 2


@pytest.fixture(scope="module")
def setup():
    import jax

    from sims import drivers
    from sims.run.fleet import make_fleet
    from sims.vehicles import DOUBLE_TRACK, presets

    base = presets.get("hatchback", tire="simple")
    fleet = make_fleet(base, 2)
    state0 = jax.vmap(lambda c: DOUBLE_TRACK.init_state(base._replace(chassis=c), 10.0))(fleet.chassis)
    drv = drivers.Constant(steer=0.01, throttle=0.1)
    kw = dict(dt=0.01, chunk_steps=CHUNK, record="telemetry", every=2, progress=False)
    return fleet, state0, drv, kw


def run(setup, out, **extra):
    from sims.run.longrun import long_run

    fleet, state0, drv, kw = setup
    return long_run(out, fleet, state0, drv, extra.pop("n_steps", N_STEPS), **{**kw, **extra})


@pytest.fixture(scope="module")
def reference(setup, tmp_path_factory):
    from sims.run.longrun import load_records

    out = tmp_path_factory.mktemp("ref") / "run"
    res = run(setup, out)
    return out, res, load_records(out)


def _leaves(res):
    import jax

    return [np.asarray(x) for x in jax.tree.leaves((res.final_state, res.driver_state, res.reduced))]


def assert_same(res, rec, reference):
    from sims.run.longrun import load_records

    _, ref, ref_rec = reference
    for a, b in zip(_leaves(res), _leaves(ref)):
        np.testing.assert_array_equal(a, b)
    got = load_records(res.out_dir)
    assert set(got) == set(ref_rec)
    for k in got:
        np.testing.assert_array_equal(got[k], ref_rec[k], err_msg=k)


def test_exact_steps_partial_last_chunk(reference):
    out, res, rec = reference
    man = res.manifest
    assert man["done"] and [c["steps"] for c in man["completed"]] == [[0, 4], [4, 8], [8, 10]]
    assert rec["time"].shape == (5,)  # 10 steps, every 2nd recorded
    np.testing.assert_allclose(rec["time"], 0.01 * np.arange(0, 10, 2))
    assert rec["fx"].shape[:2] == (2, 5)
    assert not list(out.glob("*.tmp")) and not list(out.glob(".*"))
    assert sorted(p.name for p in out.glob("carry_*.npz")) == ["carry_000001.npz", "carry_000002.npz"]


def test_partial_chunk_every_must_divide(setup, tmp_path):
    from jaxtire.validation import ValidationError

    with pytest.raises(ValidationError, match="last_chunk_steps"):
        run(setup, tmp_path / "r", n_steps=9)


def _fresh(setup, reference, tmp_path, chunks=2):
    """A copy of the reference run stopped after ``chunks`` chunks (manifest rewound, later files removed)."""
    out = tmp_path / "run"
    run(setup, out, max_chunks=chunks)
    return out


def _man(out):
    return json.loads((out / "manifest.json").read_text())


def _write_man(out, man):
    (out / "manifest.json").write_text(json.dumps(man))


def _rehash(out, man, idx, key="carry"):
    """Forge the manifest so the checksum of chunk ``idx``'s file matches the (tampered) file."""
    c = man["completed"][idx]
    c[key + "_sha256"] = hashlib.sha256((out / c[key]).read_bytes()).hexdigest()
    _write_man(out, man)


def _savez_like(path, arrays):
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def _truncate_carry(out):
    p = out / "carry_000001.npz"
    p.write_bytes(p.read_bytes()[:100])
    return p.name


def _empty_carry(out):
    (out / "carry_000001.npz").write_bytes(b"")
    return "carry_000001.npz"


def _bitflip_carry(out):
    p = out / "carry_000001.npz"
    b = bytearray(p.read_bytes())
    b[len(b) // 2] ^= 0x10
    p.write_bytes(bytes(b))
    return p.name


def _missing_carry(out):
    os.remove(out / "carry_000001.npz")
    return "carry_000001.npz"


def _nan_carry_forged(out):
    p = out / "carry_000001.npz"
    with np.load(p) as z:
        arrays = {k: z[k] for k in z.files}
    k = next(k for k in arrays if k != "__run__" and np.issubdtype(arrays[k].dtype, np.floating)
             and np.all(np.isfinite(arrays[k])))
    arrays[k] = np.full_like(arrays[k], np.nan)
    _savez_like(p, arrays)
    _rehash(out, _man(out), 1)  # even with the checksum forged, the NaN is seen
    return p.name


def _foreign_carry(out, other):
    shutil.copy(other / "carry_000001.npz", out / "carry_000001.npz")
    _rehash(out, _man(out), 1)  # the fingerprint inside the file still says "another run"
    return "carry_000001.npz"


def _wrong_size_carry(out):
    p = out / "carry_000001.npz"
    with np.load(p) as z:
        arrays = {k: (z[k] if k in ("__run__", "__chunk__") else np.concatenate([z[k], z[k]])) for k in z.files}
    _savez_like(p, arrays)
    _rehash(out, _man(out), 1)
    return p.name


def _missing_leaf_carry(out):
    p = out / "carry_000001.npz"
    with np.load(p) as z:
        arrays = {k: z[k] for k in z.files if k != "leaf_00003"}
    _savez_like(p, arrays)
    _rehash(out, _man(out), 1)
    return p.name


def _truncated_records(out):
    p = out / "chunk_000000.npz"
    p.write_bytes(p.read_bytes()[:-40])
    return p.name


def _bitflip_records(out):
    p = out / "chunk_000001.npz"
    b = bytearray(p.read_bytes())
    b[300] ^= 0x01
    p.write_bytes(bytes(b))
    return p.name


def _manifest_extra_chunk(out):
    man = _man(out)
    extra = dict(man["completed"][-1], index=2, steps=[8, 10], records="chunk_000002.npz", carry="carry_000002.npz")
    man["completed"].append(extra)
    man["carry"] = "carry_000002.npz"
    man["done"] = True
    _write_man(out, man)
    return "chunk_000002.npz"


def _manifest_truncated(out):
    p = out / "manifest.json"
    p.write_text(p.read_text()[:-50])
    return "manifest.json"


def _manifest_missing_key(out):
    man = _man(out)
    del man["completed"][0]["carry_sha256"]
    _write_man(out, man)
    return "manifest.json"


def _manifest_binary(out):
    (out / "manifest.json").write_bytes(bytes(range(256)))
    return "manifest.json"


KINDS = {
    "truncated carry": (_truncate_carry, "checksum"),
    "empty carry": (_empty_carry, "checksum"),
    "bit-flipped carry": (_bitflip_carry, "checksum"),
    "missing carry": (_missing_carry, "cannot be read"),
    "NaN in the carry (checksum forged)": (_nan_carry_forged, "NaN"),
    "another run's carry (checksum forged)": (_foreign_carry, "another run"),
    "carry of another fleet size (checksum forged)": (_wrong_size_carry, "leaf"),
    "carry missing a leaf (checksum forged)": (_missing_leaf_carry, "leaf"),
    "truncated records chunk": (_truncated_records, "checksum"),
    "bit-flipped records chunk": (_bitflip_records, "checksum"),
    "manifest lists one chunk too many": (_manifest_extra_chunk, "chunk_000002.npz"),
    "truncated manifest": (_manifest_truncated, "not a valid manifest"),
    "manifest missing a field": (_manifest_missing_key, "checksums"),
    "binary manifest": (_manifest_binary, "not a valid manifest"),
}


@pytest.fixture(scope="module")
def other_run(setup, tmp_path_factory):
    """Another run (other initial speed) stopped after 2 chunks: source of foreign checkpoint files."""

    fleet, state0, drv, kw = setup
    out = tmp_path_factory.mktemp("other") / "run"
    run((fleet, state0._replace(vx=state0.vx + 1.0), drv, kw), out, max_chunks=2)
    return out


@pytest.mark.parametrize("kind", list(KINDS))
def test_corruption_refused_then_repaired(kind, setup, reference, other_run, tmp_path):
    from sims.run.longrun import LongRunError, iter_records

    out = _fresh(setup, reference, tmp_path)
    damage, words = KINDS[kind]
    fname = damage(out, other_run) if damage is _foreign_carry else damage(out)
    with pytest.raises(LongRunError) as e:
        run(setup, out)
    msg = str(e.value)
    assert isinstance(e.value, ValueError)
    assert fname in msg and words in msg, msg
    assert "\n" not in msg
    if kind.startswith("manifest") or "manifest" in kind:
        return  # the manifest itself is the damage: nothing to repair from (overwrite=True starts afresh)
    if "records" in kind:
        with pytest.raises(LongRunError, match="checksum"):
            list(iter_records(out))
    res = run(setup, out, repair=True)  # restart from the last good chunk: bitwise equal to a clean run
    assert res.manifest["done"]
    assert_same(res, None, reference)


def test_other_configuration_refused(setup, reference, tmp_path):
    from sims.run.longrun import LongRunError

    out = _fresh(setup, reference, tmp_path, chunks=1)
    with pytest.raises(LongRunError, match="different run.*configuration"):
        run(setup, out, dt=0.02)
    fleet, state0, drv, kw = setup
    with pytest.raises(LongRunError, match="different run.*inputs"):
        run((fleet, state0._replace(vx=state0.vx * 1.5), drv, kw), out)
    with pytest.raises(LongRunError, match="different run"):
        run(setup, out, n_steps=12)


def test_foreign_manifest_refused(setup, tmp_path):
    from sims.run.longrun import LongRunError

    out = tmp_path / "run"
    out.mkdir()
    (out / "manifest.json").write_text(json.dumps({"format": 1, "completed": []}))
    with pytest.raises(LongRunError, match="manifest.json.*format 1"):
        run(setup, out)
    (out / "manifest.json").write_text("[1, 2]")
    with pytest.raises(LongRunError, match="not a long-run manifest"):
        run(setup, out)


@pytest.mark.parametrize("err", [errno.ENOSPC, errno.EFBIG])
@pytest.mark.parametrize("fail_at", [1, 2, 3])  # the records, carry or manifest write of chunk 1
def test_failed_write_leaves_nothing_and_loses_nothing(err, fail_at, setup, reference, tmp_path, monkeypatch):
    from sims.run import longrun

    out = tmp_path / "run"
    run(setup, out, max_chunks=1)
    saved = _man(out)
    listed = {out / c[k] for c in saved["completed"] for k in ("records", "carry")}
    before = {p: p.read_bytes() for p in listed}
    calls = {"n": 0}
    real = os.fsync

    def fsync(fd):
        if os.path.isdir(f"/proc/self/fd/{fd}") is False and os.readlink(f"/proc/self/fd/{fd}").endswith(".tmp"):
            calls["n"] += 1
            if calls["n"] == fail_at:
                raise OSError(err, os.strerror(err))
        return real(fd)

    monkeypatch.setattr(longrun.os, "fsync", fsync)
    with pytest.raises(longrun.LongRunError) as e:
        run(setup, out)
    monkeypatch.setattr(longrun.os, "fsync", real)
    msg = str(e.value)
    assert ("disk full" if err == errno.ENOSPC else "file too large") in msg and str(out) in msg
    assert not [p for p in os.listdir(out) if p.endswith(".tmp")]
    assert _man(out) == saved  # the manifest on disk still lists chunk 0 only, and its files are intact
    for p, b in before.items():
        assert p.read_bytes() == b
    res = run(setup, out)  # resume after the failure: bitwise equal to an undisturbed run
    assert res.resumed_from_chunk == 1
    assert_same(res, None, reference)


def test_out_dir_is_a_file(setup, tmp_path):
    from sims.run.longrun import LongRunError

    f = tmp_path / "f"
    f.write_text("x")
    with pytest.raises(LongRunError, match="not a directory"):
        run(setup, f)


def test_stale_temporaries_of_a_killed_writer_are_removed(setup, reference, tmp_path):
    out = _fresh(setup, reference, tmp_path, chunks=1)
    stale = [out / ".carry_000001.npz.abc123.tmp", out / ".manifest.json.xyz.tmp"]
    for p in stale:
        p.write_bytes(b"half written")
    keep = out / "notes.tmp"  # not ours: left alone
    keep.write_text("x")
    res = run(setup, out)
    assert not any(p.exists() for p in stale) and keep.exists()
    assert_same(res, None, reference)


def test_entry_pointing_at_another_chunks_files_is_refused_naming_the_entry(setup, reference, tmp_path):
    """Issue 29 item 5: the entry of chunk 1 names chunk 0's files with their real checksums (steps 4-8 would
    never run and chunk 0's records would be read twice): refused, naming the entry, on resume and on load."""
    from sims.run.longrun import LongRunError, load_records

    out = _fresh(setup, reference, tmp_path, chunks=2)
    man = _man(out)
    c0, c1 = man["completed"]
    forged = dict(c1, records=c0["records"], records_sha256=c0["records_sha256"], carry=c0["carry"],
                  carry_sha256=c0["carry_sha256"], carry_nonfinite=c0["carry_nonfinite"])
    _write_man(out, dict(man, completed=[c0, forged], carry=c0["carry"]))
    with pytest.raises(LongRunError, match=r"completed chunk #1 \(steps \[4, 8\]\) names records file 'chunk_000000.npz'"):
        run(setup, out)
    with pytest.raises(LongRunError, match=r"completed chunk #1"):
        load_records(out)


def test_a_file_copied_over_another_chunks_name_is_refused(setup, reference, tmp_path):
    """The same with the files renamed to fit the entry: the chunk tag inside the file disagrees."""
    from sims.run.longrun import LongRunError

    out = _fresh(setup, reference, tmp_path, chunks=2)
    shutil.copy(out / "chunk_000000.npz", out / "chunk_000001.npz")
    man = _man(out)
    _rehash(out, man, 1, key="records")
    with pytest.raises(LongRunError, match=r"chunk_000001.npz: holds chunk \[0, 0, 4\] .* manifest entry #1 is chunk \[1, 4, 8\]"):
        run(setup, out)
