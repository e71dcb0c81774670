""".tir reading and writing: the strict loader (issue 15 item 1) and round trips (issue 16 item 2).

Real files come from ../shared/tir (skipped cleanly when absent); the bundled
jaxtire/data/TNO_car205_60R15.tir covers everything without /work/shared.
"""

import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import jaxtire
from jaxtire.bounds import BOUNDS, REQUIRED, REQUIRED_MF6
from jaxtire.validation import format_range
from jaxtire.tir import TirError, TirMeta, data_path, load_tir, render_tir, save_tir
from tests.conftest import SHARED_TIR

BUNDLED = data_path()
REAL = ["TNO_car205_60R15.tir", "MagicFormula61_Parameters.tir", "wild/CityBus_Pac02Tire.tir",
        "wild/mf_185_80R14.tir", "wild/fsaettc_obfuscated_mf61.tir", "wild/fsaettc_obfuscated_mf61_noblank.tir"]


def _real(name):
    p = SHARED_TIR / name
    if not p.exists():
        pytest.skip(f"{p} not available")
    return p


def _quiet_load(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_tir(path, **kw)


def _mutate(tmp_path, fn, name="m.tir", src=BUNDLED):
    """Write the bundled file's text, transformed by fn(text), and return the path."""
    text = src.read_text(encoding="utf-8")
    out = tmp_path / name
    out.write_text(fn(text), encoding="utf-8")
    return out


def _set(text, key, value):
    new, n = re.subn(rf"(?m)^({key}\s*=\s*)[^\s$]+", lambda m: m.group(1) + value, text, count=1)
    assert n == 1, key
    return new


# ----------------------------------------------------------------------------- values


def test_reads_bundled_file_values():
    p = load_tir(BUNDLED)
    assert p.fittyp == 62 and p.meta.dialect == "MF 6.2"
    assert float(p.FNOMIN) == 4000.0
    np.testing.assert_allclose(float(p.PKY1), -15.314)
    np.testing.assert_allclose(float(p.QSY1), 0.00702)
    np.testing.assert_allclose(float(p.UNLOADED_RADIUS), 0.3135)
    assert p.meta_value("TYRESIDE") == "'Left'"
    assert p.meta_value("IYY") == "0.736"
    assert p.unknown_keys() == ()
    assert isinstance(p.meta, TirMeta) and "LGAX" in p.meta.defaults_used and "PKY1" not in p.meta.defaults_used


def test_bundled_default_equals_shared_file():
    a, b = jaxtire.default_tire(), load_tir(_real("TNO_car205_60R15.tir"))
    assert all(np.array_equal(a.coef[k], b.coef[k]) for k in a.coef)


# ----------------------------------------------------------------------------- round trip


def test_bundled_round_trip_is_byte_identical(tmp_path):
    p = load_tir(BUNDLED)
    save_tir(p, tmp_path / "copy.tir")
    assert (tmp_path / "copy.tir").read_bytes() == BUNDLED.read_bytes()


@pytest.mark.parametrize("name", REAL)
def test_real_file_round_trip_diff_is_empty(tmp_path, name):
    src = _real(name)
    p = _quiet_load(src)
    save_tir(p, tmp_path / "copy.tir")
    assert (tmp_path / "copy.tir").read_bytes() == src.read_bytes()


def _independent_parse(path):
    """A minimal .tir reader written for this test only: KEY = number lines -> {KEY: float}."""
    out = {}
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([-+0-9.eEdD]+)\s*(\$.*)?$", line)
        if m:
            out[m.group(1).upper()] = float(m.group(2).replace("D", "e").replace("d", "e"))
    return out


@pytest.mark.parametrize("name", [None] + REAL[:3])
def test_one_changed_coefficient_changes_exactly_one_line(tmp_path, name):
    src = BUNDLED if name is None else _real(name)
    p = _quiet_load(src)
    q = p.replace(PCY1=np.asarray(1.2345678, p.PCY1.dtype))
    save_tir(q, tmp_path / "c.tir")
    a = src.read_text(encoding="utf-8").splitlines()
    b = (tmp_path / "c.tir").read_text(encoding="utf-8").splitlines()
    assert len(a) == len(b)
    diff = [(x, y) for x, y in zip(a, b) if x != y]
    assert len(diff) == 1
    old, new = diff[0]
    assert old.split("=")[0] == new.split("=")[0] and "PCY1" in new
    if "$" in old:  # inline comment kept
        assert old.split("$", 1)[1] == new.split("$", 1)[1]
    ref = _independent_parse(src)
    got = _independent_parse(tmp_path / "c.tir")
    assert got["PCY1"] == float(np.float32(1.2345678)) or got["PCY1"] == 1.2345678
    assert {k: v for k, v in got.items() if k != "PCY1"} == {k: v for k, v in ref.items() if k != "PCY1"}
    back = _quiet_load(tmp_path / "c.tir")
    assert all(np.array_equal(back.coef[k], q.coef[k]) for k in q.coef)


def test_key_the_file_lacked_is_written_only_when_changed(tmp_path):
    p = load_tir(BUNDLED)
    assert "LMUV" in p.meta.defaults_used
    save_tir(p, tmp_path / "a.tir")
    assert "LMUV" not in (tmp_path / "a.tir").read_text()
    save_tir(p.replace(LMUV=np.float32(0.5)), tmp_path / "b.tir")
    text = (tmp_path / "b.tir").read_text()
    assert len(re.findall(r"(?m)^LMUV\s*=\s*0\.5$", text)) == 1
    assert float(_quiet_load(tmp_path / "b.tir").LMUV) == 0.5


def test_float64_values_round_trip_exactly(tmp_path, x64):
    p = load_tir(BUNDLED)
    v = 1.0 / 3.0
    save_tir(p.replace(PDY1=np.float64(v)), tmp_path / "a.tir")
    assert float(load_tir(tmp_path / "a.tir").PDY1) == v


def test_blank_value_is_not_set_and_kept(tmp_path):
    src = _mutate(tmp_path, lambda t: t.replace("IYY                      = 0.736", "IYY                      ="))
    p = load_tir(src)
    assert p.meta_value("IYY") is None
    save_tir(p, tmp_path / "copy.tir")
    assert (tmp_path / "copy.tir").read_bytes() == src.read_bytes()


def test_params_without_file_write_complete_canonical_file(tmp_path):
    p = load_tir(BUNDLED)
    bare = jaxtire.make_params({k: float(v) for k, v in p.coef.items()}, fittyp=61)
    save_tir(bare, tmp_path / "new.tir")
    text = (tmp_path / "new.tir").read_text()
    for sec in ("[MDI_HEADER]", "[UNITS]", "[MODEL]", "[DIMENSION]", "[INERTIA]", "[VERTICAL]",
                "[VERTICAL_FORCE_RANGE]", "[LONG_SLIP_RANGE]", "[SLIP_ANGLE_RANGE]", "[INCLINATION_ANGLE_RANGE]",
                "[LATERAL_COEFFICIENTS]", "[ALIGNING_COEFFICIENTS]"):
        assert sec in text, sec
    assert re.search(r"(?m)^ANGLE\s*=\s*'radians'", text) and re.search(r"(?m)^FITTYP\s*=\s*61", text)
    q = _quiet_load(tmp_path / "new.tir")
    assert all(np.array_equal(q.coef[k], bare.coef[k]) for k in bare.coef)


# ----------------------------------------------------------------------------- dialects


def test_pac2002_without_fittyp_is_pac2002():
    p = _quiet_load(_real("wild/CityBus_Pac02Tire.tir"))
    assert p.is_mf52 and p.meta.dialect == "PAC2002" and p.meta.fittyp_declared is None
    assert float(p.INFLPRES) == 800000 and float(p.NOMPRES) == 800000  # from [TIRE_CONDITIONS]
    q = _quiet_load(_real("wild/mf_185_80R14.tir"))
    assert q.is_mf52 and any(s == "SHAPE" and k == "" for s, k, _ in q.meta)


def test_pac2002_bus_tire_by_hand(x64):
    """Kya and peak Fy of the Chrono city-bus PAC2002 tire, worked from its own coefficients.

    PAC2002 (Pacejka 2012, eqs. 4.E25-4.E30 with PKY4 = 2 as MF 5.2; gamma = 0, LFZO = 1, scalings 1):
      Kya = PKY1 Fz0 sin(2 atan(Fz / (PKY2 Fz0)))        (N/rad)
      Dy  = (PDY1 + PDY2 dfz) Fz,  peak |Fy| = Dy +- SVy,  SVy = Fz (PVY1 + PVY2 dfz)
    """
    p = _quiet_load(_real("wild/CityBus_Pac02Tire.tir"))
    # the file's lines 149-156 (CityBus_Pac02Tire.tir, Project Chrono)
    pky1, pky2, pdy1, pdy2, pvy1, pvy2 = -10.289, 3.3343, 0.73957, -0.075004, 0.015216, -0.010365
    assert p.meta.dialect == "PAC2002"
    fz0 = 35000.0
    for fz in (20000.0, 35000.0, 50000.0):
        kya = pky1 * fz0 * np.sin(2.0 * np.arctan(fz / (pky2 * fz0)))
        got = float(jaxtire.mf61.cornering_stiffness(p, fz))
        np.testing.assert_allclose(got, kya, rtol=1e-9)
        dfz = fz / fz0 - 1.0
        dy, svy = (pdy1 + pdy2 * dfz) * fz, fz * (pvy1 + pvy2 * dfz)
        alpha = np.linspace(-0.6, 0.6, 4001)
        fy = np.asarray(jaxtire.mf_forces(p, 0.0, alpha, 0.0, fz, combined=False).fy)
        np.testing.assert_allclose(fy.max(), dy + svy, rtol=2e-4)
        np.testing.assert_allclose(fy.min(), -dy + svy, rtol=2e-4)
    # the file's numbers, so a changed file is noticed: Kya(Fz0) = -10.289 * 35000 * sin(2 atan(1/3.3343)) = -198180.46 N/rad
    np.testing.assert_allclose(float(jaxtire.mf61.cornering_stiffness(p, fz0)), -198_180.46, rtol=1e-6)


def test_fsae_blank_values_load_like_noblank():
    a = _quiet_load(_real("wild/fsaettc_obfuscated_mf61.tir"))
    b = _quiet_load(_real("wild/fsaettc_obfuscated_mf61_noblank.tir"))
    assert a.fittyp == b.fittyp == 61
    assert all(np.array_equal(a.coef[k], b.coef[k]) for k in a.coef)


def test_no_fittyp_mf6_set_is_mf61(tmp_path):
    # without FITTYP and without the MF 6.2-only vertical keys (issue 29: with them it is MF 6.2, test_tir_no_fittyp)
    drop = r"(?m)^(FITTYP|Q_FCY2|Q_CAM1|Q_CAM2|Q_CAM3|Q_FYS1|Q_FYS2|Q_FYS3)\b.*\n"
    p = _quiet_load(_mutate(tmp_path, lambda t: re.sub(drop, "", t)))
    assert p.fittyp == 61 and p.meta.fittyp_declared is None
    save_tir(p, tmp_path / "c.tir")
    assert "FITTYP" not in (tmp_path / "c.tir").read_text()
    # with them it is read as MF 6.2 and saved with FITTYP = 62 written out
    p62 = _quiet_load(_mutate(tmp_path, lambda t: re.sub(r"(?m)^FITTYP.*\n", "", t)))
    assert p62.fittyp == 62
    save_tir(p62, tmp_path / "d.tir")
    assert re.search(r"(?m)^FITTYP\s*=\s*62", (tmp_path / "d.tir").read_text())


def test_pac2002_declared_with_mf6_terms_is_refused(tmp_path):
    def f(t):
        t = re.sub(r"(?m)^FITTYP.*\n", "", t)
        return t.replace("PROPERTY_FILE_FORMAT     ='USER'", "PROPERTY_FILE_FORMAT     ='PAC2002'")
    with pytest.raises(TirError, match="PKY4|PAC2002"):
        _quiet_load(_mutate(tmp_path, f))


# ----------------------------------------------------------------------------- strictness


@pytest.mark.parametrize("key", REQUIRED + REQUIRED_MF6)
def test_required_key_missing_is_an_error(tmp_path, key):
    f = _mutate(tmp_path, lambda t: re.sub(rf"(?m)^{key}\s*=.*\n", "", t))
    with pytest.raises(TirError, match=key):
        load_tir(f, check_forces=False)


@pytest.mark.parametrize("key", ["FNOMIN", "NOMPRES", "LONGVL", "VXLOW"])
def test_required_key_blank_is_an_error(tmp_path, key):
    """NOMPRES (MF 6.x), LONGVL and VXLOW were defaulted with a warning (issue 38 item 5): p0 of every pressure
    term and the reference speed of My would move with no trace in the file."""
    f = _mutate(tmp_path, lambda t: _set(t, key, ""))
    with pytest.raises(TirError, match=rf"missing or blank: {key} "):
        load_tir(f)


def test_mf52_file_without_nompres_and_blank_inflpres_still_load(tmp_path):
    """MF 5.2 / PAC2002 has no pressure model (the bus tire ships without NOMPRES); a blank INFLPRES is the tire
    at its nominal pressure (the FSAE file ships it blank)."""
    src = Path(__file__).parents[1] / "data" / "CityBus_Pac02Tire.tir"
    bus = _mutate(tmp_path, lambda t: re.sub(r"(?m)^(NOMPRES|IP_NOM)\s*=.*\n", "", t), name="bus.tir", src=src)
    assert "NOMPRES" in _quiet_load(bus, check_forces=False).meta.defaults_used
    f = _mutate(tmp_path, lambda t: _set(t, "INFLPRES", ""))
    p = load_tir(f, check_forces=False)
    assert float(p.coef["INFLPRES"]) == float(p.coef["NOMPRES"]) == 220000.0


@pytest.mark.parametrize("text", ["", "$ only a comment\n", "[MDI_HEADER]\n", "\n\n"])
def test_empty_or_header_only_files_are_errors(tmp_path, text):
    f = tmp_path / "e.tir"
    f.write_text(text)
    with pytest.raises(TirError):
        load_tir(f)


@pytest.mark.parametrize("key, value, dtype_note", [
    ("FNOMIN", "1e39", "float32"), ("PCY1", "1e39", "float32"), ("PDX1", "nan", ""), ("PDX1", "inf", "")])
def test_non_finite_in_stored_dtype_is_refused(tmp_path, key, value, dtype_note):
    f = _mutate(tmp_path, lambda t: _set(t, key, value))
    with pytest.raises(TirError) as e:
        load_tir(f)
    assert key in str(e.value) and "m.tir" in str(e.value)


@pytest.mark.parametrize("key, value", [("PDX1", "100"), ("PVX1", "1e6"), ("PKX1", "-20"), ("LMUY", "-1"),
                                        ("PKY1", "15"), ("LFZO", "1e-300"), ("LONGVL", "1e-9"), ("PKY2", "0"),
                                        ("FNOMIN", "-5")])
def test_implausible_value_names_key_value_range_and_line(tmp_path, key, value):
    f = _mutate(tmp_path, lambda t: _set(t, key, value))
    lineno = next(i for i, ln in enumerate(f.read_text().splitlines(), 1) if re.match(rf"{key}\s*=", ln))
    with pytest.raises(TirError) as e:
        load_tir(f)
    msg = str(e.value)
    assert key in msg and f"line {lineno}" in msg and value in msg
    lo, hi = BOUNDS[key]
    assert format_range(lo, hi) in msg


def test_bounds_override_for_exotic_tire(tmp_path):
    f = _mutate(tmp_path, lambda t: _set(t, "PDX1", "5.5"))
    with pytest.raises(TirError, match="PDX1"):
        load_tir(f, check_forces=False)
    p = load_tir(f, bounds={"PDX1": (0.0, 8.0)}, check_forces=False)
    assert float(p.PDX1) == 5.5


def test_fittyp_overflow_is_clean_error(tmp_path):
    for v in ("1e400", "9" * 400, "61.5", "'x'", "6_1", "nan", "99"):
        f = _mutate(tmp_path, lambda t, v=v: _set(t, "FITTYP", v))
        with pytest.raises(TirError, match="FITTYP"):
            load_tir(f)


def test_duplicate_key_across_sections_is_an_error(tmp_path):
    f = _mutate(tmp_path, lambda t: t.replace("[ALIGNING_COEFFICIENTS]\n", "[ALIGNING_COEFFICIENTS]\nPCY1 = 1.2\n"))
    with pytest.raises(TirError, match="duplicate key PCY1"):
        load_tir(f)


def test_coefficient_outside_its_section_is_an_error(tmp_path):
    def f(t):
        t = re.sub(r"(?m)^PCX1\s*=.*\n", "", t)
        return t.replace("[ALIGNING_COEFFICIENTS]\n", "[ALIGNING_COEFFICIENTS]\nPCX1 = 1.6\n")
    with pytest.raises(TirError, match=r"PCX1 belongs in \[LONGITUDINAL_COEFFICIENTS\]"):
        load_tir(_mutate(tmp_path, f))


@pytest.mark.parametrize("bad", ["{DIMENSION}", "[DIMENSION", "DIMENSION]", "[ DIM ENSION ]", "[1ABC]"])
def test_malformed_section_header_is_an_error(tmp_path, bad):
    f = _mutate(tmp_path, lambda t: t.replace("[DIMENSION]", bad))
    with pytest.raises(TirError) as e:
        load_tir(f)
    assert "line 71" in str(e.value)


@pytest.mark.parametrize("bad, where", [
    ("1.3 1.4", "line {n}"), ("'abc", "line {n}"), ("abc", "PCY1 must be a number"), ("1.3 $x\nnot a line", "line {m}")])
def test_broken_line_names_file_line_and_text(tmp_path, bad, where):
    f = _mutate(tmp_path, lambda t: re.sub(r"(?m)^(PCY1\s*=\s*)\S+", lambda m: m.group(1) + bad, t), name="broken.tir")
    n = next(i for i, ln in enumerate(f.read_text().splitlines(), 1) if ln.startswith("PCY1"))
    with pytest.raises(TirError) as e:
        load_tir(f)
    assert "broken.tir" in str(e.value) and where.format(n=n, m=n + 1) in str(e.value)


def test_utf8_bom_accepted_and_kept(tmp_path):
    f = tmp_path / "bom.tir"
    f.write_bytes(b"\xef\xbb\xbf" + BUNDLED.read_bytes())
    p = load_tir(f)
    save_tir(p, tmp_path / "copy.tir")
    assert (tmp_path / "copy.tir").read_bytes() == f.read_bytes()


def test_crlf_and_latin1_comments_round_trip(tmp_path):
    data = BUNDLED.read_bytes().replace(b"\n", b"\r\n").replace(b"! Copyright TNO 2013", b"! Copyright \xa9 TNO")
    f = tmp_path / "crlf.tir"
    f.write_bytes(data)
    p = load_tir(f)
    save_tir(p.replace(PCY1=np.float32(1.5)), tmp_path / "c.tir")
    out = (tmp_path / "c.tir").read_bytes()
    assert out.count(b"\r\n") == data.count(b"\r\n") and b"\xa9" in out


def test_units_are_converted_to_si(tmp_path):
    def f(t):
        t = t.replace("FORCE                    ='newton'", "FORCE                    ='kN'")
        for key in ("FNOMIN", "FZMIN", "FZMAX"):
            v = float(re.search(rf"(?m)^{key}\s*=\s*(\S+)", t).group(1))
            t = _set(t, key, repr(v / 1000.0))
        return t
    src = _mutate(tmp_path, f)
    p = load_tir(src)
    assert float(p.FNOMIN) == pytest.approx(4000.0) and float(p.FZMAX) == pytest.approx(10000.0)
    raw = float(re.search(r"(?m)^VERTICAL_STIFFNESS\s*=\s*(\S+)", src.read_text()).group(1))
    assert float(p.VERTICAL_STIFFNESS) == pytest.approx(raw * 1e3)  # kN/m -> N/m
    save_tir(p, tmp_path / "c.tir")
    assert (tmp_path / "c.tir").read_bytes() == src.read_bytes()  # unchanged values keep the file's units
    save_tir(p.replace(FNOMIN=np.float32(4500.0)), tmp_path / "d.tir")
    assert re.search(r"(?m)^FNOMIN\s*=\s*4\.5\b", (tmp_path / "d.tir").read_text())


def test_length_unit_mm_converts_radius(tmp_path):
    keys = ("UNLOADED_RADIUS", "WIDTH", "RIM_RADIUS", "RIM_WIDTH")
    def f(t):
        t = t.replace("LENGTH                   ='meter'", "LENGTH                   ='mm'")
        for key in keys:
            v = float(re.search(rf"(?m)^{key}\s*=\s*(\S+)", t).group(1))
            t = _set(t, key, repr(v * 1000.0))
        return t
    src = _mutate(tmp_path, f)
    with pytest.raises(TirError, match="LONGVL"):  # 16.7 mm/s is implausible: the loader really converts it
        load_tir(src)
    p = load_tir(_mutate(tmp_path, lambda t: _set(f(t), "LONGVL", "16700"), name="n.tir"))
    assert float(p.UNLOADED_RADIUS) == pytest.approx(0.3135) and float(p.LONGVL) == pytest.approx(16.7)


@pytest.mark.parametrize("quantity, unit", [("ANGLE", "'degree'"), ("LENGTH", "'furlong'"), ("FORCE", "12")])
def test_unsupported_units_are_refused(tmp_path, quantity, unit):
    f = _mutate(tmp_path, lambda t: re.sub(rf"(?m)^({quantity}\s*=\s*)\S+", lambda m: m.group(1) + unit, t))
    with pytest.raises(TirError, match=quantity):
        load_tir(f)


@pytest.mark.parametrize("kind", ["fifo", "dir", "devnull", "devzero", "huge", "missing"])
def test_special_paths_refused_without_blocking(tmp_path, kind):
    path = {"dir": tmp_path, "devnull": "/dev/null", "devzero": "/dev/zero", "missing": tmp_path / "nope.tir"}.get(kind)
    if kind == "fifo":
        path = tmp_path / "fifo.tir"
        os.mkfifo(path)
    if kind == "huge":
        path = tmp_path / "huge.tir"
        with open(path, "wb") as f:
            f.truncate(64 * 1024 * 1024)
    with pytest.raises(TirError):
        load_tir(path)


def test_forces_at_zero_load_are_finite_and_checked(tmp_path):
    p = load_tir(BUNDLED)
    out = jaxtire.mf_forces(p, np.linspace(-1, 1, 5), 0.1, 0.05, 0.0)
    assert np.all(np.isfinite(np.asarray(out.fy))) and np.all(np.isfinite(np.asarray(out.mz)))
    f = _mutate(tmp_path, lambda t: _set(t, "PVY1", "0.9"))  # in its bound, but Fy has the wrong sign
    with pytest.raises(TirError, match="sign|Fz"):
        load_tir(f)


def test_make_params_rejects_bad_values_and_keeps_previous():
    p = jaxtire.default_tire()
    with pytest.raises(ValueError, match="UNLOADED_RADIUS"):
        jaxtire.make_params({"UNLOADED_RADIUS": 0.0})
    with pytest.raises(ValueError, match="unknown coefficient"):
        p.replace(NOT_A_COEF=1.0)
    assert float(p.UNLOADED_RADIUS) == pytest.approx(0.3135)


def test_unknown_keys_kept_and_reported(tmp_path):
    f = _mutate(tmp_path, lambda t: t.replace("[MODEL]\n", "[MODEL]\nMY_SPECIAL = 42\n", 1))
    with pytest.warns(UserWarning, match="MY_SPECIAL"):
        p = load_tir(f)
    assert p.unknown_keys() == ("MY_SPECIAL",)
    assert render_tir(p) == f.read_bytes()


def test_known_numeric_key_with_text_value_is_an_error(tmp_path):
    f = _mutate(tmp_path, lambda t: _set(t, "VERTICAL_STIFFNESS", "abc"))
    with pytest.raises(TirError, match="VERTICAL_STIFFNESS must be a number"):
        load_tir(f)


def test_params_from_file_work_under_jit_pickle_and_tree_map():
    import pickle

    import jax

    p = load_tir(BUNDLED)
    assert float(jax.jit(lambda q: q.PCY1 * 2.0)(p)) == pytest.approx(2 * float(p.PCY1))
    q = jax.tree.map(lambda x: x, p)
    assert q.meta.document is p.meta.document and q.meta.defaults_used == p.meta.defaults_used
    r = pickle.loads(pickle.dumps(p))
    assert render_tir(r) == BUNDLED.read_bytes()


def test_pathological_sizes_are_refused_quickly(tmp_path):
    import time

    f = tmp_path / "lines.tir"
    f.write_text("\n" * 30000)
    with pytest.raises(TirError, match="lines"):
        load_tir(f)
    g = _mutate(tmp_path, lambda t: _set(t, "PCY1", "9" * 500000 + "x"), name="digits.tir")
    t0 = time.perf_counter()
    with pytest.raises(TirError, match="PCY1"):
        load_tir(g)
    assert time.perf_counter() - t0 < 5.0


def test_known_key_outside_its_section_is_an_error(tmp_path):
    def f(t):
        t = re.sub(r"(?m)^IYY\s*=.*\n", "", t)
        return t.replace("[LATERAL_COEFFICIENTS]\n", "[LATERAL_COEFFICIENTS]\nIYY = 0.7\n")
    with pytest.raises(TirError, match=r"IYY belongs in \[INERTIA\]"):
        load_tir(_mutate(tmp_path, f))
    g = _mutate(tmp_path, lambda t: t.replace("MASS                     = 9.3", "MASS                     = 'inch'"),
                name="mass.tir")
    with pytest.raises(TirError, match="MASS must be a number"):
        load_tir(g)


def test_repeated_section_is_an_error(tmp_path):
    f = _mutate(tmp_path, lambda t: t.replace("[ALIGNING_COEFFICIENTS]\n", "[ALIGNING_COEFFICIENTS]\n[UNITS]\n"))
    with pytest.raises(TirError, match=r"\[UNITS\] appears twice"):
        load_tir(f)


def test_float64_request_without_x64_checks_the_float32_that_is_stored(tmp_path):
    import jax.numpy as jnp

    f = _mutate(tmp_path, lambda t: _set(t, "QSX1", "1e39"))
    with pytest.raises(TirError, match="QSX1"):
        load_tir(f, dtype=jnp.float64)  # x64 off: the leaf would be float32 inf


def test_float64_file_values_exact_under_x64(x64):
    p = load_tir(BUNDLED)
    assert p.PKY1.dtype == np.float64 and float(p.PKY1) == -15.314


def test_save_header_and_alias_written_in_place(tmp_path):
    p = load_tir(BUNDLED)
    save_tir(p, tmp_path / "h.tir", header="fitted by jaxtire.fit from data.csv\nRMS Fy 0.4 %")
    lines = (tmp_path / "h.tir").read_text().splitlines()
    assert lines[:2] == ["$ fitted by jaxtire.fit from data.csv", "$ RMS Fy 0.4 %"]
    assert lines[2:] == BUNDLED.read_text().splitlines()
    bus = _quiet_load(_real("wild/CityBus_Pac02Tire.tir"))
    save_tir(bus.replace(INFLPRES=np.float32(750000.0)), tmp_path / "bus.tir")
    a = _real("wild/CityBus_Pac02Tire.tir").read_text().splitlines()
    b = (tmp_path / "bus.tir").read_text().splitlines()
    diff = [(x, y) for x, y in zip(a, b) if x != y]
    assert len(a) == len(b) and len(diff) == 1 and diff[0][1].startswith("IP ") and "750000" in diff[0][1]
    assert "$Inflation Pressure" in diff[0][1]


def test_pky5_that_zeroes_the_kya_load_within_camber_range_is_refused(tmp_path):
    # PKY2 + PKY5 * 0.3^2 <= 0 when PKY5 <= -PKY2 / 0.09
    p = load_tir(BUNDLED)
    pky5 = -1.01 * float(p.PKY2) / 0.09
    f = _mutate(tmp_path, lambda t: _set(t, "PKY5", repr(pky5)))
    with pytest.raises(TirError, match="PKY5"):
        load_tir(f)


def test_pac2002_params_without_file_save_and_reload(tmp_path):
    bus = _quiet_load(_real("wild/CityBus_Pac02Tire.tir"))
    bare = jaxtire.make_params({k: float(v) for k, v in bus.coef.items()}, fittyp=6)
    save_tir(bare, tmp_path / "pac.tir")
    back = _quiet_load(tmp_path / "pac.tir")
    assert back.is_mf52 and "PROPERTY_FILE_FORMAT" in (tmp_path / "pac.tir").read_text()
    for k in bus.coef:
        if k not in ("PKY4", "PKY5", "PKY6", "PKY7", "PEY5", "PPZ1", "PPZ2", "PPMX1", "LKYC", "LKZC"):
            assert np.array_equal(back.coef[k], bare.coef[k]), k


def test_blank_coefficient_filled_in_place(tmp_path):
    src = _real("wild/fsaettc_obfuscated_mf61.tir")
    p = _quiet_load(src)
    assert "INFLPRES" in p.meta.defaults_used
    save_tir(p.replace(INFLPRES=np.float32(83000.0)), tmp_path / "c.tir")
    a, b = src.read_text().splitlines(), (tmp_path / "c.tir").read_text().splitlines()
    diff = [(x, y) for x, y in zip(a, b) if x != y]
    assert len(a) == len(b) and len(diff) == 1
    assert re.fullmatch(r"INFLPRES\s+= 83000", diff[0][1])
    assert float(_quiet_load(tmp_path / "c.tir").INFLPRES) == 83000.0


def _check_files():
    """The bundled tire, the PAC2002 bus tire of tests/data and every other real file in ../shared/tir (when present)."""
    files = [BUNDLED, Path(__file__).resolve().parents[1] / "data" / "CityBus_Pac02Tire.tir"]
    files += sorted(SHARED_TIR.glob("*.tir")) + sorted(SHARED_TIR.glob("wild/*.tir"))
    unique: dict[bytes, Path] = {}
    for f in files:
        unique.setdefault(f.read_bytes(), f)  # each content once
    return list(unique.values())


def test_force_check_in_numpy_matches_jax_float64(x64):
    """Issue 38 item 4: the load check evaluates mf_forces in NumPy float64 (no compile). On its grid it equals the
    same equations in JAX float64 (jit, params as arguments) to 1e-9 of each channel's largest value (measured
    ~1e-15), for MF 6.1 and PAC2002 files; the finite flag and Fx, Fy that the check returns are those values."""
    import dataclasses

    import jax

    from jaxtire import bounds, tir

    on_device = jax.jit(jaxtire.mf_forces)  # one compile per equation family (params as arguments)
    for path in _check_files():
        p = _quiet_load(path, dtype=np.float64, check_forces=False)
        family = 61 if p.fittyp in (61, 62) else tir.PAC2002_FITTYP  # the check's equation families
        p = dataclasses.replace(p, fittyp=family, meta=())
        host = dataclasses.replace(p, coef={k: np.asarray(v, np.float64) for k, v in p.coef.items()})
        fz = float(p.FNOMIN) * np.asarray(bounds.SANITY_LOADS)
        grid = (tir._KAPPA[:, None, None, None], tir._ALPHA[None, :, None, None], tir._GAMMA[None, None, :, None],
                fz[None, None, None, :])
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            on_host = jaxtire.mf_forces(host, *grid)
        on_jax = on_device(p, *grid)
        for name in ("fx", "fy", "mz", "mx", "my", "grip_utilisation"):
            h, j = getattr(on_host, name), np.asarray(getattr(on_jax, name))
            assert isinstance(h, np.ndarray) and h.dtype == np.float64 and h.shape == (9, 9, 5, 7), name
            np.testing.assert_allclose(h, j, rtol=0, atol=1e-9 * np.max(np.abs(j)), err_msg=f"{path.name} {name}")
        finite, fx, fy, fz_check = tir._grid(p)
        assert finite and np.array_equal(fx, on_host.fx) and np.array_equal(fy, on_host.fy)
        np.testing.assert_array_equal(fz_check, fz)


_FIRST_LOAD = """
import json, sys, time
warm = sys.argv[1] == "warm"
if warm:  # JAX imported and its CPU backend started before the load
    import jax
    import jax.numpy as jnp
    jnp.zeros(3).block_until_ready()
from jax import monitoring
from jaxtire.tir import data_path, load_tir
events = []
monitoring.register_event_duration_secs_listener(lambda name, secs, **kw: events.append(name))
t0 = time.perf_counter()
load_tir(data_path())
seconds = time.perf_counter() - t0
print("RESULT " + json.dumps({"seconds": seconds, "compile_events": [e for e in events if "/compile" in e]}))
"""


@pytest.mark.parametrize("jax_started", [False, True], ids=["cold", "warm"])
def test_first_load_in_a_fresh_process_compiles_nothing(jax_started):
    """Issue 38 item 4: the first ``load_tir`` of the bundled file in a fresh Python process traces and compiles
    nothing (no ``/jax/core/compile/...`` monitoring event) and takes < 0.3 s: measured 0.05 s on the 2-core VM
    under load (it took 4.3 s idle, > 12 s loaded, when the force check compiled), with JAX's backend started
    before (``warm``) or by the load itself (``cold``). The assert allows 1.0 s for a loaded CI machine; the
    figure is printed."""
    from tests.conftest import run_on_host_devices

    r = run_on_host_devices(_FIRST_LOAD, 1, "warm" if jax_started else "cold", timeout=120)
    print(f"first load_tir in a fresh process ({'warm' if jax_started else 'cold'}): {r['seconds']:.3f} s")
    assert r["compile_events"] == []
    assert r["seconds"] < 1.0
