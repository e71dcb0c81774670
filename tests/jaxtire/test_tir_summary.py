"""`python -m jaxtire` summary: ISO-W signs and one peak convention on every row (issue 16 item 6)."""

import numpy as np

import jaxtire
from jaxtire.__main__ import summary
from jaxtire.mf61 import cornering_stiffness


def test_summary_signs_are_iso_w_and_consistent():
    p = jaxtire.default_tire()
    lines = summary(p).splitlines()
    assert "ISO-W" in lines[0]
    rows = [list(map(float, ln.split())) for ln in lines[2:]]
    assert len(rows) == 4
    for fz, fxpk, kpk, kxk, fypk, apk, kya, mzpk in rows:
        assert fxpk > 0 and kpk > 0 and kxk > 0          # driving side
        assert fypk < 0 and apk > 0                      # positive slip angle -> negative Fy (ISO-W)
        assert kya < 0 and mzpk > 0
        # Kya in N/deg = dFy/dalpha [N/rad] * pi/180, from the analytic stiffness and a finite difference
        np.testing.assert_allclose(kya, float(cornering_stiffness(p, fz)) * np.pi / 180, atol=0.06)
        h = 1e-4
        fy = np.asarray(jaxtire.mf_forces(p, 0.0, np.array([-h, h]), 0.0, fz, combined=False).fy, np.float64)
        np.testing.assert_allclose(kya, (fy[1] - fy[0]) / (2 * h) * np.pi / 180, rtol=2e-2)
    # the bundled tire at FNOMIN: PKY1 = -15.314 ... gives -930.4 N/deg (printed before as +930.4)
    assert rows[1][6] == -930.4


def test_cli_bad_file_is_one_line_error(tmp_path):
    import pytest

    from jaxtire.__main__ import main

    with pytest.raises(SystemExit) as e:
        main([str(tmp_path)])
    assert "regular file" in str(e.value) and "\n" not in str(e.value)
