import numpy as np

import jaxtire


def test_bundled_default_loads_and_main_runs(capsys):
    p = jaxtire.default_tire()
    assert p.fittyp == 62
    assert float(p.FNOMIN) == 4000.0
    from jaxtire.__main__ import main

    main([])
    out = capsys.readouterr().out
    assert "Fy peak" in out


def test_magic_formula_slope_is_bcd():
    # d/dx D sin(C atan(Bx ...)) at x=0 equals B*C*D analytically.
    B, C, D, E = 10.0, 1.6, 1.35, -0.6
    h = 1e-4
    slope = (jaxtire.magic_formula(h, B, C, D, E) - jaxtire.magic_formula(-h, B, C, D, E)) / (2 * h)
    np.testing.assert_allclose(float(slope), B * C * D, rtol=1e-3)
