"""Skidpad understeer gradient (issue 14 item 6): the fit with intercept and stated range, against linear theory."""

import math

import numpy as np
import pytest

from jaxtire.constants import GRAVITY
from jaxtire.tire import scale_tire, tire_forces
from sims.scenarios import skidpad
from sims.vehicles import presets
from tests.sims.conftest import FAST


def _points(ay, steer):
    n = len(ay)
    z = np.zeros(n)
    return skidpad.SkidpadPoint(np.asarray(ay), np.asarray(steer), z, z, z, z, z, np.ones(n, bool))


def test_fit_recovers_slope_and_intercept_and_reports_its_range_and_residual():
    """A steer line with an offset, curved beyond 0.3 g: the fit over the linear range returns the slope
    and intercept exactly, the range of the points used and zero residual; fitted through the origin
    (the old method) the same points give a biased slope."""
    L, R, K, d0 = 2.6, 40.0, 0.002, -1e-4
    ay = np.linspace(0.3, 6.0, 12)
    steer = L / R + d0 + K * ay + 3e-4 * np.maximum(ay - 0.3 * GRAVITY, 0.0) ** 2
    fit = skidpad.understeer_fit(_points(ay, steer), L, R)
    lin = ay <= 0.3 * GRAVITY
    assert fit.gradient == pytest.approx(K, rel=1e-6) and fit.intercept == pytest.approx(d0, abs=1e-9)
    assert (fit.ay_lo, fit.ay_hi, fit.n) == (pytest.approx(ay[lin].min()), pytest.approx(ay[lin].max()), lin.sum())
    assert fit.residual < 1e-9
    assert fit.deg_per_g == pytest.approx(math.degrees(K) * GRAVITY)
    through_origin = float(np.sum(ay[lin] * (steer[lin] - L / R)) / np.sum(ay[lin] ** 2))
    assert abs(through_origin - K) > 0.02 * K
    assert math.isnan(skidpad.understeer_fit(_points(ay[:2], steer[:2]), L, R).gradient)  # < 3 points


def _theory_by_hand(p):
    """``(K, m b / (L Cf))``: K = m / L (b / Cf - a / Cr), Cf, Cr = 2 x the tire's Fy slope by central
    differences (float64 arithmetic on the tire's outputs) at half the static axle load (no downforce at rest)."""
    ch = p.chassis
    m, a, b = float(ch.mass), float(ch.cg_to_front), float(ch.cg_to_rear)
    L = a + b
    loads = (m * GRAVITY * b / L, m * GRAVITY * a / L)
    c = []
    for tire, scale, load in (
        (p.tire_front, ch.tire_scale_front, loads[0]),
        (p.tire_rear, ch.tire_scale_rear, loads[1]),
    ):
        t = scale_tire(tire, *scale)
        h = 1e-3
        fy = [float(tire_forces(t, 0.0, s * h, 0.0, load / 2, 20.0, combined=False).fy) for s in (1.0, -1.0)]
        c.append(2.0 * abs(fy[0] - fy[1]) / (2 * h))
    return m / L * (b / c[0] - a / c[1]), m * b / (L * c[0])


def test_linear_theory_equals_the_hand_computation():
    for name in ("hatchback", "race_car"):
        p = presets.get(name)
        k, front = _theory_by_hand(p)
        # K is a difference of two axle compliances of ~1-4 deg/g: compared on the scale of one of them
        assert abs(skidpad.understeer_theory(p) - k) < 0.005 * front, name


def _small_ay_fit(p):
    g = GRAVITY
    return skidpad.skidpad(
        p, radius=100.0, ay_min=0.03 * g, ay_max=0.1 * g, n_points=4, ay_range=0.1 * g, compiler_options=FAST
    ).fit


def test_small_ay_gradient_of_the_hatchback_matches_linear_theory_within_3pct():
    """ISO 4138 constant radius, R = 100 m (speeds of 5-10 m/s; on a 40 m circle the lowest points run
    below 4 m/s where the tire's slip regularisation V_REG = 0.5 m/s is felt), 0.03-0.1 g, straight line
    with intercept, kinematic steer L r / V of the circle actually driven.  Measured 0.651 deg/g against
    theory 0.658 (-1.1 %); the residual stays below 1e-3 deg."""
    p = presets.get("hatchback")
    fit = _small_ay_fit(p)
    g = GRAVITY
    assert (
        fit.n == 4 and fit.ay_lo == pytest.approx(0.03 * g, rel=0.05) and fit.ay_hi == pytest.approx(0.1 * g, rel=0.05)
    )
    assert fit.gradient == pytest.approx(skidpad.understeer_theory(p), rel=0.03)
    assert math.degrees(fit.residual) < 1e-3


def test_small_ay_gradient_of_the_near_neutral_race_car_matches_theory_within_3pct_of_its_axle_compliance():
    """The race car is near neutral (theory -0.026 deg/g, the difference of two axle compliances of
    ~1.3 deg/g each), so its gradient is compared on the scale of the front compliance m b / (L Cf):
    within 3 % of it (measured -0.003 deg/g, 1.8 %).  A relative 3 % on K itself would ask for 0.001 deg/g."""
    p = presets.get("race_car")
    fit = _small_ay_fit(p)
    k, front = _theory_by_hand(p)
    assert abs(fit.gradient - k) < 0.03 * front
