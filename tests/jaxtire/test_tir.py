""".tir reading and writing on the real files in ../shared/tir (or the bundled copy)."""

import warnings

import numpy as np
import pytest

import jaxtire
from jaxtire.tir import TirError, load_tir, save_tir
from tests.conftest import SHARED_TIR, tir_path


def test_reads_real_file_values():
    p = load_tir(tir_path())
    assert p.fittyp == 62
    assert float(p.FNOMIN) == 4000.0
    np.testing.assert_allclose(float(p.PKY1), -15.314)
    np.testing.assert_allclose(float(p.QSY1), 0.00702)
    np.testing.assert_allclose(float(p.UNLOADED_RADIUS), 0.3135)
    assert p.meta_value("TYRESIDE") == "'Left'"
    assert p.meta_value("IYY") == "0.736"
    assert p.unknown_keys() == ()


def test_bundled_default_equals_shared_file():
    if not (SHARED_TIR / "TNO_car205_60R15.tir").exists():
        pytest.skip("no ../shared/tir")
    a, b = jaxtire.default_tire(), load_tir(SHARED_TIR / "TNO_car205_60R15.tir")
    assert all(np.array_equal(a.coef[k], b.coef[k]) for k in a.coef)


@pytest.mark.parametrize("name", ["TNO_car205_60R15.tir", "MagicFormula61_Parameters.tir"])
def test_round_trip_is_identical(tmp_path, name, x64):
    path = SHARED_TIR / name if (SHARED_TIR / name).exists() else tir_path()
    p = load_tir(path)
    out = tmp_path / "copy.tir"
    save_tir(p, out)
    q = load_tir(out)
    assert p.fittyp == q.fittyp and p.meta == q.meta
    for k in p.coef:
        assert np.array_equal(np.asarray(p.coef[k]), np.asarray(q.coef[k])), k


def test_round_trip_float32(tmp_path):
    p = jaxtire.default_tire().replace(PCY1=np.float32(1.2345678))
    save_tir(p, tmp_path / "a.tir")
    q = load_tir(tmp_path / "a.tir")
    assert all(np.array_equal(p.coef[k], q.coef[k]) for k in p.coef)


def test_missing_coefficients_take_defaults(tmp_path):
    f = tmp_path / "min.tir"
    f.write_text("[MODEL]\nFITTYP = 61\n[VERTICAL]\nFNOMIN = 3000 $ load\n[LATERAL_COEFFICIENTS]\nPCY1 = 1.3\n")
    p = load_tir(f)
    assert float(p.FNOMIN) == 3000.0 and float(p.PCY1) == pytest.approx(1.3)
    assert float(p.PKY1) == 0.0 and float(p.LMUY) == 1.0 and float(p.INFLPRES) == float(p.NOMPRES)


def test_unknown_keys_kept_and_reported(tmp_path):
    f = tmp_path / "u.tir"
    f.write_text("[MODEL]\nFITTYP = 61\nMY_SPECIAL = 42\n[LATERAL_COEFFICIENTS]\nPCY1 = 1.3\n")
    with pytest.warns(UserWarning, match="MY_SPECIAL"):
        p = load_tir(f)
    assert p.unknown_keys() == ("MY_SPECIAL",)
    save_tir(p, tmp_path / "u2.tir")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert load_tir(tmp_path / "u2.tir").meta_value("MY_SPECIAL") == "42"


@pytest.mark.parametrize("bad, where", [
    ("PCY1 = 1.3 1.4\n", "line 3"),
    ("PCY1 = 'abc\n", "line 3"),
    ("PCY1 = abc\n", "PCY1 must be a number"),
    ("this is not a tir line\n", "line 3"),
])
def test_broken_line_names_file_line_and_text(tmp_path, bad, where):
    f = tmp_path / "broken.tir"
    f.write_text("[MODEL]\nFITTYP = 61\n" + bad)
    with pytest.raises(TirError) as e:
        load_tir(f)
    msg = str(e.value)
    assert "broken.tir" in msg and where in msg


def test_out_of_range_value_names_field(tmp_path):
    f = tmp_path / "neg.tir"
    f.write_text("[VERTICAL]\nFNOMIN = -5\n")
    with pytest.raises(TirError, match="FNOMIN = -5.0 is outside the allowed range"):
        load_tir(f)


def test_non_si_units_rejected(tmp_path):
    f = tmp_path / "mm.tir"
    f.write_text("[UNITS]\nLENGTH = 'mm'\n")
    with pytest.raises(TirError, match="LENGTH unit"):
        load_tir(f)


def test_make_params_rejects_bad_values_and_keeps_previous():
    p = jaxtire.default_tire()
    with pytest.raises(ValueError, match="UNLOADED_RADIUS"):
        jaxtire.make_params({"UNLOADED_RADIUS": 0.0})
    with pytest.raises(ValueError, match="unknown coefficient"):
        p.replace(NOT_A_COEF=1.0)
    assert float(p.UNLOADED_RADIUS) == pytest.approx(0.3135)
