"""The fitting tables are built from one source each: stages from the params sections, ranges from
``jaxtire.bounds.range_table``; these tests pin what they build (no compilation, well under a second)."""

import math

import numpy as np
import pytest

from jaxtire.bounds import BOUNDS, bound_for, range_table
from jaxtire.fit import DEFAULT_BOUNDS, SIMPLE_BOUNDS, SIMPLE_STAGES, STAGES
from jaxtire.fit.stages import CAMBER_TERMS, fit_coefficients, stage_coefficients
from jaxtire.params import MODEL_COEFFICIENTS
from jaxtire.simple import default_simple_params
from jaxtire.tire import coefficient_names
from jaxtire.tydex import UNIT_TO_SI

# The MF 6.1 stages as the fit module documents them (MF-Tool / MFeval workflow): "coefficients | camber terms",
# in the order the optimiser sees them.
EXPECTED = {
    "Fx0": "PCX1 PDX1 PDX2 PEX1 PEX2 PEX3 PEX4 PKX1 PKX2 PKX3 PHX1 PHX2 PVX1 PVX2 | PDX3",
    "Fy0": "PCY1 PDY1 PDY2 PEY1 PEY2 PEY3 PKY1 PKY2 PKY4 PHY1 PHY2 PVY1 PVY2"
    " | PDY3 PEY4 PEY5 PKY3 PKY5 PKY6 PKY7 PVY3 PVY4",
    "Mz0": "QBZ1 QBZ2 QBZ3 QBZ9 QBZ10 QCZ1 QDZ1 QDZ2 QDZ6 QDZ7 QEZ1 QEZ2 QEZ3 QEZ4 QHZ1 QHZ2"
    " | QBZ4 QBZ5 QDZ3 QDZ4 QDZ8 QDZ9 QDZ10 QDZ11 QEZ5 QHZ3 QHZ4",
    "combined": "RBX1 RBX2 RCX1 REX1 REX2 RHX1 RBY1 RBY2 RBY3 RCY1 REY1 REY2 RHY1 RHY2 RVY1 RVY2 RVY4 RVY5 RVY6"
    " | RBX3 RBY4 RVY3",
    "Mz": "SSZ1 SSZ2 QBZ1 QBZ2 QBZ3 QBZ9 QBZ10 QCZ1 QDZ1 QDZ2 QDZ6 QDZ7 QEZ1 QEZ2 QEZ3 QEZ4 QHZ1 QHZ2 | SSZ3 SSZ4",
}
#: The .tir sections a stage's coefficients come from.
SECTIONS = {
    "Fx0": ("LONGITUDINAL_COEFFICIENTS",),
    "Fy0": ("LATERAL_COEFFICIENTS",),
    "Mz0": ("ALIGNING_COEFFICIENTS",),
    "combined": ("LONGITUDINAL_COEFFICIENTS", "LATERAL_COEFFICIENTS"),
    "Mz": ("ALIGNING_COEFFICIENTS",),
}


def test_mf_stages_in_order_with_their_keys():
    assert list(STAGES) == list(EXPECTED)
    for name, text in EXPECTED.items():
        base, camber = (tuple(part.split()) for part in text.split("|"))
        assert STAGES[name][:2] == (base, camber), name
        assert stage_coefficients(name) == base and stage_coefficients(name, camber=True) == base + camber
    assert [STAGES[s][2:] for s in STAGES] == [
        (("Fx0",), False),
        (("Fy0",), False),
        (("Mz0",), False),
        (("Fx", "Fy"), True),
        (("Mz0", "Mz"), True),
    ]


@pytest.mark.parametrize("name", list(SECTIONS))
def test_stage_keys_are_coefficients_of_the_section_they_claim(name):
    base, camber, _, _ = STAGES[name]
    section = {k for sec in SECTIONS[name] for k in MODEL_COEFFICIENTS[sec]}
    assert set(base + camber) <= section
    assert not set(base) & CAMBER_TERMS and set(camber) <= CAMBER_TERMS
    assert len(set(base + camber)) == len(base + camber)  # no key twice


def test_every_camber_term_joins_a_stage_and_bounds_cover_exactly_the_fittable_keys():
    assert CAMBER_TERMS == {k for s in STAGES.values() for k in s[1]}
    assert set(DEFAULT_BOUNDS) == set(fit_coefficients(STAGES))
    assert set(SIMPLE_BOUNDS) == set(fit_coefficients(SIMPLE_STAGES)) <= set(coefficient_names(default_simple_params()))


def test_fit_bounds_lie_inside_the_plausible_ranges():
    # a fit never moves a coefficient to a value load_tir would refuse from a file
    for k, (lo, hi) in DEFAULT_BOUNDS.items():
        plo, phi = bound_for(k, True)
        assert plo <= lo < hi <= phi, (k, (lo, hi), (plo, phi))


def test_range_table_rows_comments_and_errors():
    t = range_table(
        """
        # a comment line
        -1   1     A B      # two keys share a range
        1e-3 2.5e2 C
        """
    )
    assert t == {"A": (-1.0, 1.0), "B": (-1.0, 1.0), "C": (0.001, 250.0)}
    for bad in ("1 0 A", "0 1", "0 1 A\n2 3 A"):
        with pytest.raises(ValueError):
            range_table(bad)


def test_plausibility_table_spot_values():
    assert BOUNDS["PKY1"] == (-1e3, -1e-3)  # ISO-W: negative cornering stiffness
    assert BOUNDS["LMUX"] == BOUNDS["LMUV"] == BOUNDS["LKG"] == (0.0, 100.0)  # scaling factors
    assert BOUNDS["LFZO"] == (1e-3, 100.0)
    assert BOUNDS["ALPMAX"] == (0.0, math.pi / 2 + 1e-3) and BOUNDS["CAMMIN"] == (-math.pi / 2, 0.0)


def test_tydex_units_by_factor():
    assert UNIT_TO_SI[""] == UNIT_TO_SI["-"] == (1.0, 0.0)
    assert UNIT_TO_SI["deg"] == UNIT_TO_SI["grad"] == UNIT_TO_SI["deg/s"] == (np.pi / 180.0, 0.0)
    assert UNIT_TO_SI["km/h"][0] * 36.0 == pytest.approx(10.0, rel=1e-15)
    assert UNIT_TO_SI["rpm"] == UNIT_TO_SI["1/min"] == (2.0 * np.pi / 60.0, 0.0)
    assert UNIT_TO_SI["psi"][0] == pytest.approx(0.45359237 * 9.80665 / 0.0254**2, rel=1e-12)  # lbf / in^2
    assert {u for u, (_, off) in UNIT_TO_SI.items() if off} == {"degc", "c"}
    assert UNIT_TO_SI["degc"] == (1.0, 273.15)


@pytest.mark.parametrize("entry", ["fit", "fit_many"])
def test_a_misspelt_fit_option_is_a_type_error(entry):
    # fit and fit_many share their options (FitOptions): a wrong keyword fails before any work, as in Python
    import jaxtire.fit as F

    z = np.zeros((2, 3)) if entry == "fit_many" else np.zeros(3)
    data = F.MeasurementSet(z, z, z, z + 4000.0, z, z, z)
    with pytest.raises(TypeError, match="n_iters"):
        getattr(F, entry)(data, n_iters=5)
