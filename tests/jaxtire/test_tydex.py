"""TYDEX .tdx reading/writing (issue 16 item 4) on tests/data/lateral_sweep.tdx (source: tests/data/README.md)."""

from pathlib import Path

import numpy as np
import pytest

from jaxtire.tydex import (TydexChannel, TydexEntry, TydexError, TydexFile, channel, read_tydex, render_tydex,
                           to_measurements, write_tydex)

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "lateral_sweep.tdx"


@pytest.fixture(scope="module")
def tdx():
    return read_tydex(EXAMPLE)


def test_parses_blocks(tdx):
    assert tdx.header_value("RELEASE") == "1.3" and tdx.header_value("MEASID") == "JT-LAT-0001"
    assert [c.name for c in tdx.channels] == ["RUNTIME", "SLIPANGL", "FZW", "FYW", "MZW"]
    assert tdx.channels[4].unit == "Nm" and tdx.data.shape == (25, 5)
    assert tdx.data[0].tolist() == [0.0, -12.0, 4000.0, 3442.2, 16.02]
    assert len(tdx.comments) == 3


def test_unit_conversion_to_si(tdx):
    assert tdx.constant("LONGVEL") == pytest.approx(60.12 / 3.6)       # km/h -> m/s
    assert tdx.constant("INFLPRES") == pytest.approx(220e3)            # kPa -> Pa
    np.testing.assert_allclose(channel(tdx, "SLIPANGL"), np.radians(np.linspace(-12, 12, 25)))
    assert channel(tdx, "SLIPANGL", si=False)[0] == -12.0


def test_write_back_is_byte_identical(tdx, tmp_path):
    write_tydex(tdx, tmp_path / "copy.tdx")
    assert (tmp_path / "copy.tdx").read_bytes() == EXAMPLE.read_bytes()


def test_formatter_reproduces_the_example_from_scratch(tdx):
    """Entries built in Python (no original lines) are formatted in the fixed TYDEX columns."""
    fresh = TydexFile(
        tuple(TydexEntry(h.name, h.description, h.unit, h.value) for h in tdx.header), tdx.comments,
        tuple(TydexEntry(c.name, c.description, c.unit, c.value) for c in tdx.constants),
        tuple(TydexChannel(c.name, c.description, c.unit, c.factor, c.meas_offset, c.phys_offset)
              for c in tdx.channels), tdx.data)
    assert render_tydex(fresh) + "\n" == EXAMPLE.read_text()
    line = render_tydex(fresh).splitlines()[22]  # SLIPANGL channel line: columns 1-10, 11-40, 41-50, 51-
    assert line[:10].strip() == "SLIPANGL" and line[40:50].strip() == "deg" and line[50:60].strip() == "1"


def test_changed_data_written_and_read_back(tdx, tmp_path):
    import dataclasses
    new = dataclasses.replace(tdx, data=tdx.data * np.array([1, 1, 1, 2, 1]))
    write_tydex(new, tmp_path / "c.tdx")
    back = read_tydex(tmp_path / "c.tdx")
    np.testing.assert_array_equal(back.data, new.data)
    assert [c.name for c in back.channels] == [c.name for c in tdx.channels]


def test_factor_and_offsets(tmp_path):
    text = EXAMPLE.read_text().replace(
        "FYW       Lateral force W-axis          N         1         0         0",
        "FYW       Lateral force W-axis          kN        0.001     10        0.5")
    f = tmp_path / "o.tdx"
    f.write_text(text)
    t = read_tydex(f)
    raw = t.data[:, 3]
    np.testing.assert_allclose(channel(t, "FYW"), (0.001 * (raw - 10.0) + 0.5) * 1e3)


def test_to_measurements(tdx):
    import jaxtire
    m = to_measurements(tdx)
    assert set(m) == {"kappa", "alpha", "gamma", "fz", "fx", "fy", "mz"}
    assert m["fx"] is None
    np.testing.assert_array_equal(m["kappa"], np.zeros(25))   # from the LONGSLIP constant
    np.testing.assert_array_equal(m["gamma"], np.zeros(25))   # from the INCLANGL constant
    np.testing.assert_allclose(m["alpha"], np.radians(np.linspace(-12, 12, 25)))
    # the file was generated from the bundled tire: the model reproduces it to the rounding
    out = jaxtire.mf_forces(jaxtire.default_tire(), m["kappa"], m["alpha"], m["gamma"], m["fz"], combined=False)
    np.testing.assert_allclose(np.asarray(out.fy), m["fy"], atol=0.1)
    np.testing.assert_allclose(np.asarray(out.mz), m["mz"], atol=0.02)


@pytest.mark.parametrize("mutate, match", [
    (lambda t: t.replace("**END", ""), "END"),
    (lambda t: t.replace("        3442.2", "        abc"), "not a number"),
    (lambda t: t.replace("        3442.2", ""), "5 channels"),
    (lambda t: t.replace("MZW       Self-aligning moment W-axis   Nm",
                         "MZW       Self-aligning moment W-axis   furlong"), "furlong"),
    (lambda t: t.replace("RUNTIME   Running time                  s         1 ",
                         "RUNTIME   Running time                  s         0 "), "factor 0"),
    (lambda t: t.replace("FZW       Vertical force W-axis         N         1 ",
                         "FZW       Vertical force W-axis         N         1e305"), "non-finite"),
])
def test_bad_files_raise_clear_errors(tmp_path, mutate, match):
    f = tmp_path / "bad.tdx"
    f.write_text(mutate(EXAMPLE.read_text()))
    with pytest.raises(TydexError, match=match):
        to_measurements(read_tydex(f))


def test_special_paths_refused(tmp_path):
    with pytest.raises(TydexError):
        read_tydex(tmp_path)
    with pytest.raises(TydexError):
        read_tydex("/dev/zero")


def test_mutated_tydex_is_clean_error_or_consistent(tmp_path_factory):
    """Property: a mutated example file either raises TydexError or parses to finite, well-shaped data."""
    hyp = pytest.importorskip("hypothesis")
    st = hyp.strategies
    lines = EXAMPLE.read_text().split("\n")

    @hyp.settings(max_examples=60, deadline=None, suppress_health_check=list(hyp.HealthCheck))
    @hyp.given(i=st.integers(0, len(lines) - 1),
               new=st.one_of(st.just(""), st.text(alphabet="0123456789.eE+- *!abcxyzNFkmdeg/", max_size=90)))
    def check(i, new):
        mutated = lines[:i] + [new] + lines[i + 1:]
        f = tmp_path_factory.mktemp("tdx") / "m.tdx"
        f.write_text("\n".join(mutated))
        try:
            t = read_tydex(f)
            m = to_measurements(t)
        except TydexError as e:
            assert "m.tdx" in str(e)
            return
        assert t.data.shape == (t.data.shape[0], len(t.channels))
        for v in m.values():
            assert v is None or (v.shape == (t.data.shape[0],) and np.all(np.isfinite(v)))

    check()


def test_to_measurements_builds_a_fit_measurement_set(tdx):
    from jaxtire.fit import MeasurementSet

    ms = MeasurementSet(**to_measurements(tdx))
    assert ms.n_rows == 25 and ms.fx is None and ms.fy.shape == (25,)
