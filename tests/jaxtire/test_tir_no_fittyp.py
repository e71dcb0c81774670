"""Issue 29, item 6: an MF 6.2 file without FITTYP is read as MF 6.2 (its 6.2-only vertical keys set), with a
warning naming the version assumed and why.  Numbers: the TNO 205/60 R15 file, vertical force at 20 mm
deflection, Fy = 3 kN, omega = 60 rad/s: 3 789 N with the MF 6.2 terms (Q_FCY2, Q_CAM1-3, Q_FYS1-3), 4 115 N
if they are ignored (as MF 6.1)."""

import dataclasses

import pytest

from jaxtire.tir import load_tir
from jaxtire.vertical import vertical_force
from tests.conftest import tir_path


def _without(tmp_path, drop):
    lines = [ln for ln in tir_path().read_text().splitlines() if not any(ln.startswith(k) for k in drop)]
    out = tmp_path / "no_fittyp.tir"
    out.write_text("\n".join(lines) + "\n")
    return out


def test_mf62_file_without_fittyp_is_read_as_mf62_and_says_why(tmp_path):
    with pytest.warns(UserWarning, match=r"no FITTYP; read as MF 6.2 \(FITTYP 62\) because it sets .*Q_FCY2"):
        p = load_tir(_without(tmp_path, ("FITTYP",)))
    assert p.fittyp == 62
    assert float(vertical_force(p, 0.02, 60.0, fy=3000.0)) == pytest.approx(3789.3, abs=1.0)
    as61 = dataclasses.replace(p, fittyp=61)
    assert float(vertical_force(as61, 0.02, 60.0, fy=3000.0)) == pytest.approx(4115.1, abs=1.0)


def test_without_the_mf62_keys_it_is_mf61_and_says_why(tmp_path):
    drop = ("FITTYP", "Q_FCY2", "Q_CAM1", "Q_CAM2", "Q_CAM3", "Q_FYS1", "Q_FYS2", "Q_FYS3")
    with pytest.warns(UserWarning, match=r"no FITTYP; read as MF 6.1 \(FITTYP 61\) because .*none of the MF 6.2-only"):
        p = load_tir(_without(tmp_path, drop))
    assert p.fittyp == 61
