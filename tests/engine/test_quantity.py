"""Quantities (rows from quantity_test.go TestQuantityParse), durations and percentages."""

from __future__ import annotations

from fractions import Fraction

import pytest

from controller.engine.quantity import (
    MAX_INT64,
    DurationError,
    QuantityError,
    format_bytes,
    format_quantity,
    milli_value,
    parse_duration_ms,
    parse_percent_or_quantity,
    parse_quantity,
    quantity_format,
    quantity_to_int,
)

Ki, Mi, Gi, Ti, Pi, Ei = (2**e for e in (10, 20, 30, 40, 50, 60))
n = Fraction(1, 10**9)


@pytest.mark.parametrize(
    "text, value",
    [
        pytest.param("0", 0, id="0"),
        pytest.param("0Ki", 0, id="zero with a binary suffix"),
        pytest.param("1", 1, id="a bare number"),
        pytest.param("8Ki", 8 * Ki, id="8Ki"),
        pytest.param("7Mi", 7 * Mi, id="7Mi"),
        pytest.param("16Gi", 17179869184, id="16Gi"),
        pytest.param("5Ti", 5 * Ti, id="5Ti"),
        pytest.param("4Pi", 4 * Pi, id="4Pi"),
        pytest.param("3Ei", 3 * Ei, id="3Ei"),
        pytest.param("123Mi", 128974848, id="123Mi"),
        pytest.param("128974848", 128974848, id="plain bytes"),
        pytest.param("129e6", 129_000_000, id="an exponent"),
        pytest.param("129M", 129_000_000, id="decimal mega"),
        pytest.param("5n", 5 * n, id="nano"),
        pytest.param("4u", Fraction(4, 10**6), id="micro"),
        pytest.param("100m", Fraction(1, 10), id="milli"),
        pytest.param("8k", 8_000, id="kilo"),
        pytest.param("2P", 2 * 10**15, id="peta"),
        pytest.param("1E", 10**18, id="capital E alone is exa"),
        pytest.param("12E", 12 * 10**18, id="decimal values are not capped"),
        pytest.param("1E-3", Fraction(1, 1000), id="negative exponent"),
        pytest.param("1.3E+6", 1_300_000, id="signed exponent"),
        pytest.param("1e3", 1000, id="1e3"),
        pytest.param("100.035k", 100_035, id="fraction with a decimal suffix"),
        pytest.param("0.0005k", Fraction(1, 2), id="small fraction with a suffix"),
        pytest.param("0.5e-1", Fraction(1, 20), id="fraction and exponent"),
        pytest.param("1.5Gi", 3 * 2**29, id="1.5Gi"),
        pytest.param("100.035Ki", Fraction(10243584, 100), id="fractional binary"),
        pytest.param("0.025Ti", Fraction(274877906944, 10), id="0.025Ti"),
        pytest.param("-1.025Ti", -Fraction(1025, 1000) * Ti, id="negative"),
        pytest.param("+1", 1, id="explicit plus"),
        pytest.param("-0", 0, id="minus zero"),
        pytest.param(".001", Fraction(1, 1000), id="no integer part"),
        pytest.param("1.", 1, id="trailing dot"),
        pytest.param("1.G", 10**9, id="trailing dot before a suffix"),
        pytest.param("3.001n", 4 * n, id="rounds up to 1n"),
        pytest.param("0.0000000001", n, id="below 1n rounds up to 1n"),
        pytest.param("0.00000012345", 124 * n, id="rounds up at the ninth decimal"),
        pytest.param("1.1E-9", 2 * n, id="exponent form rounds up too"),
        pytest.param("0.000000000001Ki", 2 * n, id="binary fractions round up too"),
        pytest.param("-0.1n", -n, id="negative values round away from zero"),
        pytest.param("9Ei", MAX_INT64, id="binary values cap at 2^63-1"),
        pytest.param("9223372036854775807Ki", MAX_INT64, id="huge binary values cap"),
        pytest.param("-9Ei", -MAX_INT64, id="negative binary values cap"),
        pytest.param(4, 4, id="a YAML integer"),
        pytest.param(0.5, Fraction(1, 2), id="a YAML float as its text"),
        pytest.param(1e-10, n, id="a tiny YAML float rounds up to 1n"),
    ],
)
def test_parse_quantity(text: str | int | float, value: Fraction | int) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize(
    "bad, reason",
    [
        pytest.param("16GB", 'unknown suffix "GB"', id="16GB is not a suffix"),
        pytest.param("1K", 'unknown suffix "K"', id="capital K is not kilo"),
        pytest.param("1ki", 'unknown suffix "ki"', id="lower-case ki is not kibi"),
        pytest.param("1e", 'unknown suffix "e"', id="an exponent needs digits"),
        pytest.param("1.2.3", 'unknown suffix ".3"', id="two dots"),
        pytest.param("1Gi1", 'unknown suffix "Gi1"', id="digits after a binary suffix"),
        pytest.param("", "empty", id="empty"),
        pytest.param("1 Gi", "no spaces", id="inner space"),
        pytest.param(" 1Gi", "no spaces", id="leading space"),
        pytest.param("Gi", "no number", id="a suffix alone (Kubernetes reads 0; a typo here)"),
        pytest.param("-", "no number", id="a sign alone"),
        pytest.param(".", "no number", id="a dot alone"),
        pytest.param("--1", "no number", id="two signs"),
        pytest.param("1e99999", "exponent", id="absurd exponent"),
    ],
)
def test_bad_quantity_is_refused(bad: str, reason: str) -> None:
    with pytest.raises(QuantityError, match="is not a Kubernetes quantity") as info:
        parse_quantity(bad)
    assert reason in str(info.value)
    assert str(info.value).startswith(f'"{bad}"')


@pytest.mark.parametrize("bad", [None, True, float("nan"), float("inf"), [1]])
def test_non_quantity_types_are_refused(bad: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text, value, milli",
    [
        pytest.param("100m", 1, 100, id="100m: Value rounds up to 1"),
        pytest.param("0.5", 1, 500, id="0.5"),
        pytest.param("4", 4, 4000, id="4"),
        pytest.param("1n", 1, 1, id="1n: both round up"),
        pytest.param("1Gi", Gi, 1000 * Gi, id="1Gi"),
        pytest.param("-1500m", -2, -1500, id="negative: away from zero like int64Amount"),
        pytest.param(3, 3, 3000, id="a YAML integer"),
    ],
)
def test_value_and_milli_value(text: str | int, value: int, milli: int) -> None:
    assert quantity_to_int(text) == value
    assert milli_value(text) == milli


@pytest.mark.parametrize(
    "number, text",
    [
        pytest.param(Gi, "1Gi", id="1073741824 is 1Gi"),
        pytest.param(1536 * Mi, "1536Mi", id="1.5Gi prints as 1536Mi"),
        pytest.param(1500, "1500", id="no binary suffix divides 1500"),
        pytest.param(0, "0", id="zero"),
        pytest.param(1023, "1023", id="below 1024: DecimalSI"),
        pytest.param(1000, "1k", id="1000 below 1024 prints as DecimalSI 1k, as Kubernetes does"),
        pytest.param(1024, "1Ki", id="1024 is 1Ki"),
        pytest.param(100 * Mi + 512, "104858112", id="not a whole Ki: plain bytes"),
        pytest.param(100 * Mi + Ki, "102401Ki", id="a whole Ki but not a whole Mi"),
        pytest.param(3 * Ei, "3Ei", id="Ei is the largest suffix"),
        pytest.param(-2 * Ki, "-2Ki", id="negative"),
    ],
)
def test_format_bytes(number: int, text: str) -> None:
    assert format_bytes(number) == text


@pytest.mark.parametrize(
    "text, ms",
    [
        pytest.param("5s", 5_000, id="5s"),
        pytest.param("1m30s", 90_000, id="1m30s"),
        pytest.param("300ms", 300, id="300ms"),
        pytest.param("2h", 7_200_000, id="2h"),
        pytest.param("1.5s", 1_500, id="1.5s"),
        pytest.param("1h2m3s4ms", 3_723_004, id="every unit from h to ms"),
        pytest.param(".5s", 500, id="no integer part"),
        pytest.param("1.s", 1_000, id="trailing dot"),
        pytest.param("+5s", 5_000, id="explicit plus"),
        pytest.param("1000us", 1, id="microseconds that make a whole ms"),
        pytest.param("1000000ns", 1, id="nanoseconds that make a whole ms"),
        pytest.param("2000\u00b5s", 2, id="micro sign"),
        pytest.param("0", 0, id="bare 0 needs no unit, as in Go"),
        pytest.param("0s", 0, id="0s"),
        pytest.param(100, 100_000, id="a YAML integer is seconds"),
        pytest.param(100.5, 100_500, id="a YAML float is seconds"),
        pytest.param(0.1, 100, id="0.1 s is exactly 100 ms"),
        pytest.param("40", 40_000, id="a bare number string is seconds"),
        pytest.param("2.5", 2_500, id="a bare decimal string is seconds"),
    ],
)
def test_parse_duration(text: str | int | float, ms: int) -> None:
    assert parse_duration_ms(text) == ms


@pytest.mark.parametrize(
    "bad, reason",
    [
        pytest.param("5 minutes", 'unknown unit " minutes"', id="words are not units"),
        pytest.param("5sec", 'unknown unit "sec"', id="sec is not a Go unit"),
        pytest.param("1d", 'unknown unit "d"', id="Go has no days"),
        pytest.param("5s3", "missing unit", id="a trailing number without unit"),
        pytest.param("s", "use e.g. 300s", id="a unit alone"),
        pytest.param(".s", "use e.g. 300s", id="a dot and a unit"),
        pytest.param("", "use e.g. 300s", id="empty"),
        pytest.param("100us", "whole number of milliseconds", id="sub-millisecond"),
        pytest.param("1.0001ms", "whole number of milliseconds", id="fractional millisecond"),
        pytest.param(0.0001, "whole number of milliseconds", id="a tiny YAML float"),
        pytest.param("-5s", "negative", id="negative Go duration"),
        pytest.param(-3, "negative", id="negative YAML number"),
        pytest.param("-0.5", "negative", id="negative bare string"),
        pytest.param(True, "use e.g. 300s", id="a YAML boolean"),
        pytest.param(float("inf"), "use e.g. 300s", id="infinity"),
    ],
)
def test_bad_duration_is_refused(bad: str | int | float, reason: str) -> None:
    with pytest.raises(DurationError, match="is not a duration") as info:
        parse_duration_ms(bad)
    assert reason in str(info.value)


def test_duration_error_quotes_the_text_and_suggests_a_form() -> None:
    with pytest.raises(DurationError) as info:
        parse_duration_ms("5 minutes")
    assert (
        str(info.value)
        == '"5 minutes" is not a duration (unknown unit " minutes"; use e.g. 300s, 5m, 1m30s)'
    )


@pytest.mark.parametrize(
    "text, result",
    [
        pytest.param("10%", ("percent", Fraction(1, 10)), id="10%"),
        pytest.param("7.5%", ("percent", Fraction(3, 40)), id="a fractional percentage"),
        pytest.param(
            "5%%",
            ("percent", Fraction(1, 20)),
            id="every trailing % is trimmed, like strings.TrimRight",
        ),
        pytest.param("0%", ("percent", Fraction(0)), id="0%"),
        pytest.param("100Mi", ("quantity", Fraction(104857600)), id="100Mi"),
        pytest.param("1.5Gi", ("quantity", Fraction(3 * 2**29)), id="1.5Gi"),
        pytest.param(500, ("quantity", Fraction(500)), id="a YAML integer"),
    ],
)
def test_parse_percent_or_quantity(text: str | int, result: tuple[str, Fraction]) -> None:
    assert parse_percent_or_quantity(text) == result


@pytest.mark.parametrize(
    "bad, error",
    [
        pytest.param("ten%", "is not a percentage", id="words"),
        pytest.param("%", "is not a percentage", id="a percent sign alone"),
        pytest.param("10 %", "is not a percentage", id="a space"),
        pytest.param("10GB", "is not a Kubernetes quantity", id="a bad quantity"),
    ],
)
def test_bad_percent_or_quantity(bad: str, error: str) -> None:
    with pytest.raises(QuantityError, match=error):
        parse_percent_or_quantity(bad)


@pytest.mark.parametrize(
    "text, fmt, printed",
    [
        ("500M", "DecimalSI", "500M"),
        ("0.5G", "DecimalSI", "500M"),
        ("2G", "DecimalSI", "2G"),
        ("1500", "DecimalSI", "1500"),
        ("1000", "DecimalSI", "1k"),
        (1000000, "DecimalSI", "1M"),
        ("1e9", "DecimalExponent", "1e9"),
        ("12e6", "DecimalExponent", "12e6"),
        ("1536Mi", "BinarySI", "1536Mi"),
        ("1Gi", "BinarySI", "1Gi"),
        ("0", "DecimalSI", "0"),
    ],
)
def test_quantity_string_keeps_the_format_it_was_written_in(
    text: str | int, fmt: str, printed: str
) -> None:
    """Quantity.String (CanonicalizeBytes): the format comes from the suffix as parsed."""
    assert quantity_format(text) == fmt
    assert format_quantity(quantity_to_int(text), fmt) == printed
