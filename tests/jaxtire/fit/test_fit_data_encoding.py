"""Measurement files in a wrong encoding give a ValueError naming the file and the encoding problem, never a
UnicodeDecodeError; a UTF-8 byte-order mark is accepted (load_csv and the TYDEX reader); property-based
CSV round trips (hypothesis)."""

import os
from pathlib import Path

import numpy as np
import pytest

from jaxtire.fit.data import COLUMNS, MeasurementSet, load_csv, load_files, save_csv
from jaxtire.tydex import TydexError, read_tydex
from jaxtire.validation import ValidationError

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

TDX = Path(__file__).resolve().parents[2] / "data" / "lateral_sweep.tdx"
CSV = "kappa,alpha,gamma,fz,fx,fy\n0.05,0.0,0.0,4000,3100.5,0\n0.0,0.1,0.0,4000,0,-3300\n"


def _write(tmp_path, name, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def test_utf8_bom_is_accepted_and_reads_the_same(tmp_path):
    plain = load_csv(_write(tmp_path, "plain.csv", CSV.encode()))
    bom = load_csv(_write(tmp_path, "bom.csv", b"\xef\xbb\xbf" + CSV.encode()))
    for c in COLUMNS:
        np.testing.assert_array_equal(getattr(bom, c), getattr(plain, c))
    assert plain.fx.tolist() == [3100.5, 0.0] and np.isnan(plain.mz).all()


@pytest.mark.parametrize(
    "name, data, text",
    [
        ("latin1.csv", (CSV + "0,0,0,4000,1,2 # r\xe9f\n").encode("latin-1"), "byte 0xe9 at offset"),
        ("utf16.csv", CSV.encode("utf-16"), "contains UTF-16 text"),
        ("utf16be.csv", b"\xfe\xff" + CSV.encode("utf-16-be"), "contains UTF-16 text"),
        ("utf16nobom.csv", CSV.encode("utf-16-le"), "contains NUL bytes"),
        ("binary.csv", bytes(range(256)) * 4, "contains NUL bytes"),
        ("binary2.csv", b"\x89PNG\r\n\x1a\n\xff\xd8\xff\xe0" * 30, "is not UTF-8"),
    ],
)
def test_wrong_encoding_is_a_clear_error_naming_file_and_encoding(tmp_path, name, data, text):
    p = _write(tmp_path, name, data)
    for load in (load_csv, lambda q: load_files([q])):
        with pytest.raises(ValidationError) as e:
            load(p)
        assert str(p) in str(e.value) and "encoding" in str(e.value) and text in str(e.value)
        assert not isinstance(e.value, UnicodeDecodeError)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_and_directory_refused_without_reading(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with pytest.raises(ValidationError, match="is a (FIFO|directory); a measurement CSV must be a regular file"):
        load_csv(fifo)  # would block forever if opened
    with pytest.raises(ValidationError, match="is a (FIFO|directory); a measurement CSV must be a regular file"):
        load_files([fifo])
    with pytest.raises(ValidationError, match="is a (FIFO|directory); a measurement CSV must be a regular file"):
        load_csv(tmp_path)
    with pytest.raises(ValidationError, match="cannot read"):
        load_csv(tmp_path / "missing.csv")


def test_tydex_reader_encodings(tmp_path):
    good = TDX.read_bytes()
    ref = read_tydex(TDX)
    bom = read_tydex(_write(tmp_path, "bom.tdx", b"\xef\xbb\xbf" + good))
    np.testing.assert_array_equal(bom.data, ref.data)
    assert [c.name for c in bom.channels] == [c.name for c in ref.channels]
    cases = [
        ("utf16.tdx", good.decode("ascii").encode("utf-16"), "NUL bytes"),
        ("binary.tdx", bytes(range(256)) * 4, "NUL bytes"),
        ("bombad.tdx", b"\xef\xbb\xbf" + good.replace(b"**HEADER", b"**HEADER \xe9", 1), "not UTF-8"),
    ]
    for name, data, text in cases:
        p = _write(tmp_path, name, data)
        with pytest.raises(TydexError) as e:
            read_tydex(p)
        assert isinstance(e.value, ValueError) and str(p) in str(e.value) and text in str(e.value)
    # Latin-1 comment text is allowed in a TYDEX file (it is read as Latin-1)
    lat = good.replace(b"**COMMENTS\n", b"**COMMENTS\nmesur\xe9 \xe0 Delft\n", 1)
    assert b"\xe9" in lat
    np.testing.assert_array_equal(read_tydex(_write(tmp_path, "latin1.tdx", lat)).data, ref.data)


_finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=30, deadline=None)
@given(
    rows=st.lists(st.tuples(st.floats(-1, 1), st.floats(-0.5, 0.5), st.floats(-0.2, 0.2), st.floats(10, 2e4), _finite,
                            _finite, st.floats(-1e3, 1e3)), min_size=1, max_size=6),
    bom=st.booleans(),
)
def test_property_finite_rows_round_trip(tmp_path_factory, rows, bom):
    arr = np.asarray(rows, np.float64)
    data = MeasurementSet(*arr.T)
    p = tmp_path_factory.mktemp("rt") / "m.csv"
    save_csv(data, p)
    if bom:
        p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes())
    back = load_csv(p)
    for c in COLUMNS:
        np.testing.assert_array_equal(getattr(back, c), getattr(data, c))


@settings(max_examples=30, deadline=None)
@given(
    col=st.sampled_from(["kappa", "alpha", "gamma", "fz", "fx"]),
    bad=st.sampled_from(["nan", "inf", "-inf", "1e400", "abc", ""]),
)
def test_property_bad_cell_is_refused_naming_file_line_and_column(tmp_path_factory, col, bad):
    header = ["kappa", "alpha", "gamma", "fz", "fx"]
    good = ["0.1", "0.0", "0.0", "4000", "3000"]
    row = [bad if h == col else g for h, g in zip(header, good, strict=True)]
    p = tmp_path_factory.mktemp("bad") / "m.csv"
    p.write_text(",".join(header) + "\n" + ",".join(good) + "\n" + ",".join(row) + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as e:
        load_csv(p)
    msg = str(e.value)
    assert str(p) in msg and col in msg and ("line 3" in msg or "row" in msg), msg
