"""fnabi.demangle / fnabi.mangle: expected texts from the reference's
human-readable forms (the repository README's examples)."""

import fnabi


def test_raw_round_trip():
    mangled = "I18!O1!B11!d-1d128d64R17!B13!t11d32d-1d64"
    human = "(RefObject<?>, Buffer<float32[?x128x64]>) -> (Buffer<uint64[32x?x64]>)"
    assert fnabi.demangle(mangled) == human
    assert fnabi.demangle(mangled, kind="raw") == human
    assert fnabi.mangle(human) == mangled


def test_sip():
    assert fnabi.demangle("I31!S27!k0D17!K4!bar_1K4!foo_0k1_2R12!S9!k0_0k1_1") == (
        '([{"bar": $1, "foo": $0}, $2]) -> [$0, $1]'
    )
    assert fnabi.demangle("I1!R1!", kind="sip") == fnabi.demangle("I1!R1!", kind="sip")


def test_help_texts():
    import inspect

    assert str(inspect.signature(fnabi.load)) == "(path, *, device=None, signature=None, backend=None, runtime_checks=False)"
    for word in ("device", "signature", ".mlir", ".vmfb", "cache"):
        assert word in fnabi.load.__doc__
    assert fnabi.Function.sip.__doc__ and fnabi.Module.functions.__doc__
