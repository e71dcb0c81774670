"""jaxtire.plot: every figure renders headless to a non-empty PNG with the expected number of curves."""

import io
import os
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import jaxtire  # noqa: E402
from jaxtire import plot  # noqa: E402
from tests.conftest import REPO, tir_path  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def render(fig, min_bytes=8000) -> bytes:
    """Render ``fig`` to PNG in memory, check it is a real, non-trivial image, close it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=60)
    plt.close(fig)
    data = buf.getvalue()
    assert data[:8] == PNG_MAGIC
    assert len(data) > min_bytes
    return data


def finite_fraction(fig) -> float:
    ys = np.concatenate([np.asarray(l.get_ydata(), dtype=float) for ax in fig.axes for l in ax.lines])
    return float(np.isfinite(ys).mean())


@pytest.mark.parametrize("fn", [plot.fy_alpha, plot.fx_kappa, plot.mz_alpha, plot.trail_alpha])
def test_families_over_loads_and_cambers(tnop, fn):
    fig = fn(tnop, loads=[2000.0, 4000.0, 6000.0], cambers=[-0.05, 0.0, 0.05], n=61)
    assert plot.count_lines(fig) == 9
    assert len(fig.axes[0].get_legend().get_texts()) == 9
    assert finite_fraction(fig) > 0.7  # the trail is masked only around Fy = 0
    render(fig)


def test_default_loads_and_title_numbers(tnop):
    fig = plot.fy_alpha(tnop, n=41)
    assert plot.count_lines(fig) == 4  # 0.5, 1, 1.5, 2 x FNOMIN
    s = plot.tire_summary(tnop)
    title = fig.axes[0].get_title()
    assert f"{abs(s['fy_peak']):.0f} N" in title and "Kα" in title
    kya_deg = float(jaxtire.mf61.cornering_stiffness(tnop)) * np.pi / 180
    assert f"{kya_deg:.0f} N/deg" in title
    render(fig)


def test_peak_markers_sit_on_the_curve_peaks(tnop):
    fig = plot.fy_alpha(tnop, loads=[3000.0, 5000.0], n=201)
    ax = fig.axes[0]
    pts = ax.collections[0].get_offsets()
    for line, (xp, yp) in zip(ax.lines, pts):
        y = np.asarray(line.get_ydata())
        assert abs(yp) == pytest.approx(np.max(np.abs(y)))
    plt.close(fig)


def test_tire_summary_matches_library(tnop):
    s = plot.tire_summary(tnop, 4000.0)
    pk = jaxtire.mf61.peak_values(tnop, 4000.0)
    assert abs(s["fy_peak"]) == pytest.approx(max(abs(float(pk.fy_max)), abs(float(pk.fy_min))), rel=1e-3)
    assert abs(s["fx_peak"]) == pytest.approx(max(abs(float(pk.fx_max)), abs(float(pk.fx_min))), rel=1e-3)
    assert s["kya"] == pytest.approx(float(jaxtire.mf61.cornering_stiffness(tnop, 4000.0)), rel=1e-6)
    assert 3 * np.pi / 180 < abs(s["alpha_peak"]) < 15 * np.pi / 180
    assert 0.03 < abs(s["kappa_peak"]) < 0.3
    assert 0.005 < s["trail0"] < 0.08  # a car tire's trail: a few centimetres


def test_trail_is_masked_near_zero_lateral_force():
    fy = np.array([[-3000.0, -10.0, 0.0, 10.0, 3000.0]])
    mz = np.array([[60.0, 5.0, 5.0, 5.0, -60.0]])
    t = plot.trail_values(fy, mz, 0.05)
    assert np.isnan(t[0, 1:4]).all()
    np.testing.assert_allclose(t[0, [0, 4]], [0.02, 0.02])


def test_friction_ellipse_counts_and_operating_point(tnop):
    fig = plot.friction_ellipse(tnop, alphas_deg=(2, 5, 10), kappas=(0.05, 0.1), n=51,
                                operating_point=(0.3, 20 * np.pi / 180))
    assert plot.count_lines(fig) == 3 + 2 + 1 + 1
    ax = fig.axes[0]
    # every combined-slip point lies inside (or just on) a slightly inflated pure-slip ellipse
    s = plot.tire_summary(tnop)
    for line in ax.lines[:5]:
        fy, fx = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
        assert np.all((fx / s["fx_peak"]) ** 2 + (fy / s["fy_peak"]) ** 2 < 1.3)
    assert "utilisation" in ax.get_legend().get_texts()[-1].get_text()
    render(fig)
    fig = plot.friction_ellipse(tnop, ellipse=False, n=31)
    assert plot.count_lines(fig) == 6 + 4
    render(fig)


def test_surface_comparison(tnop):
    names = ["asphalt_dry", "asphalt_wet", "ice"]
    fig = plot.surface_comparison(tnop, names, n=61)
    assert len(fig.axes) == 2 and plot.count_lines(fig) == 2 * len(names)
    peaks = [np.max(np.abs(l.get_ydata())) for l in fig.axes[1].lines]
    assert peaks[0] > peaks[1] > peaks[2]  # grip ordering: dry > wet > ice
    render(fig)


def test_tire_sheet(tnop):
    fig = plot.tire_sheet(tnop, loads=[3000.0, 5000.0], cambers_deg=(-3.0, 0.0, 3.0), n=41)
    assert len(fig.axes) == 6
    assert plot.count_lines(fig) == 4 * 2 + 3 + (6 + 4 + 1)
    titles = " ".join(ax.get_title() for ax in fig.axes)
    assert "peak" in titles and "N/deg" in titles and "α" in titles and "κ" in titles
    render(fig, min_bytes=30000)


def test_unknown_params_type_raises():
    with pytest.raises(TypeError):
        plot.fy_alpha(object(), loads=[4000.0])


def test_simple_model_families():
    simple = pytest.importorskip("jaxtire.simple")
    p = simple.default_simple_params()
    fig = plot.fy_alpha(p, loads=[2000.0, 4000.0], cambers=[0.0, 0.05], n=41)
    assert plot.count_lines(fig) == 4
    render(fig)
    fig = plot.friction_ellipse(p, n=41, operating_point=(0.2, 0.3))
    assert plot.count_lines(fig) == 6 + 4 + 1 + 1
    render(fig)
    fig = plot.tire_sheet(p, n=31)
    assert plot.count_lines(fig) == 4 * 4 + 3 + 11 and "simple model" in fig._suptitle.get_text()
    render(fig, min_bytes=30000)


def test_spline_plot():
    spline = pytest.importorskip("jaxtire.spline")
    one = spline.make_spline()
    fig = plot.spline_plot(one, n=101)
    assert plot.count_lines(fig) == 1
    line = fig.axes[0].lines[0]
    assert np.max(np.abs(line.get_ydata())) == pytest.approx(20000.0, rel=1e-3)
    assert len(fig.axes[0].collections[0].get_offsets()) == 4  # the knots, both signs
    render(fig)
    two = [one, spline.make_spline(0.4, 8000.0, 0.8, 6000.0, 1.2)]
    fig = plot.spline_plot(two, labels=["unity", "stiff"], n=101)
    assert plot.count_lines(fig) == 2
    render(fig)


def test_load_table_slices():
    lt = pytest.importorskip("jaxtire.load_table")
    table = lt.make_load_table([2000.0, 4000.0, 6000.0], B=[12.0, 11.0, 10.0], C=1.4,
                               D=[2200.0, 4000.0, 5600.0], E=-0.5)
    fig = plot.load_table_slices(table, n=81)
    assert plot.count_lines(fig) == 3 + 2  # slices + midpoints
    lines = fig.axes[0].lines
    assert np.max(np.abs(lines[1].get_ydata())) == pytest.approx(4000.0, rel=1e-3)
    render(fig)
    fig = plot.load_table_slices(table, loads=[1000.0, 3000.0, 5000.0, 7000.0], n=81)
    assert plot.count_lines(fig) == 3 + 4
    render(fig)


def test_explorer():
    pytest.importorskip("jaxtire.simple")
    fig = plot.explorer(10.0, 1.9, 1.0, 0.97, fz=3000.0, camber_deg=2.0, n=121)
    assert len(fig.axes) == 3 and plot.count_lines(fig) == 3
    title = fig.axes[0].get_title()
    kya = 10.0 * 1.9 * 1.0 * 3000.0 * np.pi / 180  # B C D Fz per degree, k_load = 0
    assert f"{kya:.0f} N/deg" in title
    assert np.max(np.abs(fig.axes[0].lines[0].get_ydata())) == pytest.approx(3000.0 * 1.0, rel=0.05)
    render(fig)
    fig = plot.explorer(fig=fig, reference=jaxtire.default_tire(), n=121)  # redraw into the same figure
    assert len(fig.axes) == 3 and plot.count_lines(fig) == 6
    render(fig)


def test_cli_writes_the_sheet(tmp_path):
    written = plot.main([str(tir_path()), "--out", str(tmp_path), "--loads", "3000", "5000", "--dpi", "50"])
    assert written == 0
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == sorted(["sheet.png"] + [f"{n}.png" for n in plot.PANELS])
    for f in tmp_path.iterdir():
        data = f.read_bytes()
        assert data[:8] == PNG_MAGIC and len(data) > 5000


def test_cli_as_module_subprocess():
    """``python -m jaxtire.plot`` resolves in a fresh, headless interpreter (drawing: the test above)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MPLBACKEND", "DISPLAY")}
    r = subprocess.run([sys.executable, "-m", "jaxtire.plot", "--help"], cwd=REPO, capture_output=True,
                       text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert "--out" in r.stdout and "TIR" in r.stdout.upper()


def test_import_jaxtire_does_not_import_matplotlib():
    code = "import sys, jaxtire; print('matplotlib' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_evaluate_matches_mf_forces_for_any_shape(tnop):
    k = np.linspace(-0.3, 0.3, 7)[:, None]
    a = np.linspace(-0.2, 0.2, 5)[None, :]
    mf = __import__("jax").jit(jaxtire.mf_forces, static_argnames="combined")  # one compile, not one per op
    ref = mf(tnop, k, a, 0.01, 3500.0)
    out = plot.evaluate(tnop, k, a, 0.01, 3500.0)
    assert out.fx.shape == (7, 5) and isinstance(out.fy, np.ndarray)
    for name in ("fx", "fy", "mz", "grip_utilisation"):
        np.testing.assert_allclose(getattr(out, name), np.asarray(getattr(ref, name)), rtol=2e-4, atol=1e-2)
    pure = plot.evaluate(tnop, 0.1, 0.1, combined=False)  # default load: FNOMIN
    np.testing.assert_allclose(pure.fy, np.asarray(mf(tnop, 0.1, 0.1, 0.0, 4000.0, combined=False).fy), rtol=2e-4)
    big = plot.evaluate(tnop, 0.0, np.linspace(-0.3, 0.3, plot.CHUNK + 3), 0.0, 4000.0)  # two chunks
    assert big.fy.shape == (plot.CHUNK + 3,) and np.isfinite(big.fy).all()
    with pytest.raises(ValueError):
        plot.evaluate(tnop, 0.0, 0.0, 0.0, -1.0)


def test_a_misspelt_panel_option_is_a_type_error(tnop):
    # the family panels share their options (PanelOptions: n, surface, ax); a wrong keyword fails before drawing
    for fn in (plot.fx_kappa, plot.fy_alpha, plot.mz_alpha, plot.trail_alpha):
        with pytest.raises(TypeError, match="npoints"):
            fn(tnop, npoints=11)
