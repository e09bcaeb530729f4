//! Short decimal literals read straight into `f64`/`f32`, correctly rounded (Clinger's fast path); every other literal is left to core's parser.
//!
//! A literal `[+-]digits[.digits][(e|E)[+-]digits]` with at most 19
//! digits, a significand `w ≤ 2^53` and a decimal exponent `q` in
//! `-22..=22` is `w × 10^q` or `w / 10^-q`: both operands are exact in
//! `f64`, so one IEEE operation rounds the exact value once (W. D.
//! Clinger, *How to read floating point numbers accurately*, 1990; core's
//! `dec2flt` takes the same path first). Such a value is also what core
//! returns for the literal.
//!
//! For `f32` the `f64` result is rounded again, which gives the correctly
//! rounded `f32` unless the `f64` result lies exactly halfway between two
//! `f32`s: every `f32` and every midpoint between neighbours is an `f64`,
//! and rounding is monotonic, so a literal strictly on one side of a
//! midpoint has its `f64` on the same side (or on the midpoint, which is
//! refused here and left to core). The fast path's values, at least
//! `10^-22` and below `2^53 × 10^22` in magnitude (or zero), are normal
//! `f32`s, so a midpoint is an `f64` whose 29 bits below the `f32`
//! significand are `1000…0`.

// A literal read here must be the whole value: it ends at one of these
// bytes or at the end of the text.
use super::ENDS_VALUE;

/// `10^0 ..= 10^22`, each exact in `f64`.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

/// Reads a whole value at the start of `b` (it ends at a byte of
/// [`ENDS_VALUE`] or at the end of `b`) when it is a short decimal
/// literal (see the module docs): the correctly rounded `f64` and the
/// literal's length. `None` for anything else (longer literals, large
/// exponents, `inf`, `nan`, malformed text): the caller parses those the
/// general way.
#[inline(always)]
pub(super) fn short_f64(b: &[u8]) -> Option<(f64, usize)> {
    let mut i = 0;
    let neg = match b.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let mut w: u64 = 0;
    let int_start = i;
    while let Some(d) = b.get(i).map(|c| c.wrapping_sub(b'0')).filter(|d| *d <= 9) {
        // At most 19 digits are kept (checked below): no overflow before.
        w = w.wrapping_mul(10).wrapping_add(u64::from(d));
        i += 1;
    }
    let mut digits = i - int_start;
    let mut q: i32 = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let frac_start = i;
        while let Some(d) = b.get(i).map(|c| c.wrapping_sub(b'0')).filter(|d| *d <= 9) {
            w = w.wrapping_mul(10).wrapping_add(u64::from(d));
            i += 1;
        }
        digits += i - frac_start;
        q = -((i - frac_start).min(64) as i32);
    }
    // No digit at all, or more than 19 (then `w` may have wrapped).
    if digits == 0 || digits > 19 {
        return None;
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        let eneg = match b.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let exp_start = i;
        let mut e: i32 = 0;
        while let Some(d) = b.get(i).map(|c| c.wrapping_sub(b'0')).filter(|d| *d <= 9) {
            // Four digits at most here: a longer exponent is left to core.
            if i - exp_start == 4 {
                return None;
            }
            e = e * 10 + i32::from(d);
            i += 1;
        }
        if i == exp_start {
            return None;
        }
        q += if eneg { -e } else { e };
    }
    if let Some(&c) = b.get(i)
        && !ENDS_VALUE[usize::from(c)]
    {
        return None;
    }
    if w > 1 << 53 {
        return None;
    }
    let x = w as f64; // exact: w ≤ 2^53
    let v = if w == 0 {
        0.0
    } else if (0..=22).contains(&q) {
        x * POW10[q as usize]
    } else if (-22..0).contains(&q) {
        x / POW10[(-q) as usize]
    } else {
        return None;
    };
    Some((if neg { -v } else { v }, i))
}

/// [`short_f64`] for an `f32`: the correctly rounded `f32` (as an `f64`,
/// exactly) and the literal's length, or `None` (as there, and when the
/// `f64` lies on a midpoint between two `f32`s: see the module docs).
#[inline(always)]
pub(super) fn short_f32(b: &[u8]) -> Option<(f64, usize)> {
    let (v, len) = short_f64(b)?;
    // The bits of a normal f64's significand below a normal f32's.
    const BELOW: u64 = (1 << 29) - 1;
    const HALF: u64 = 1 << 28;
    if v.to_bits() & BELOW == HALF {
        return None;
    }
    Some((f64::from(v as f32), len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The fast path against core's parser, the reference: whenever the
    /// fast path reads a value, core reads the same bits.
    fn agrees(s: &str) {
        if let Some((v, len)) = short_f64(s.as_bytes()) {
            assert_eq!(len, s.len(), "{s}");
            assert_eq!(v.to_bits(), s.parse::<f64>().unwrap().to_bits(), "{s}");
        }
        if let Some((v, len)) = short_f32(s.as_bytes()) {
            assert_eq!(len, s.len(), "{s}");
            assert_eq!((v as f32).to_bits(), s.parse::<f32>().unwrap().to_bits(), "{s}");
        }
    }

    #[test]
    fn reads_the_usual_forms_and_leaves_the_rest() {
        for (s, v) in [
            ("1", 1.0f64),
            ("-0", -0.0),
            ("+2.5", 2.5),
            ("0.1", 0.1),
            (".5", 0.5),
            ("5.", 5.0),
            ("1e3", 1000.0),
            ("1.5E-07", 1.5e-7),
            ("9007199254740992", 9007199254740992.0),
        ] {
            let (got, len) = short_f64(s.as_bytes()).unwrap_or_else(|| panic!("{s}"));
            assert_eq!((got.to_bits(), len), (v.to_bits(), s.len()), "{s}");
            agrees(s);
        }
        // Left to core: no digits, too many digits or too large a
        // significand, exponents out of the exact range, names, trailing text.
        for s in [
            "",
            "-",
            ".",
            "e5",
            "1e",
            "1e+",
            "1x",
            "1..2",
            "inf",
            "nan",
            "12345678901234567890",
            "9007199254740993",
            "1e23",
            "1e-23",
            "3.4028235E+38",
            "1e00001",
            "1.5f",
            "0x10",
        ] {
            assert_eq!(short_f64(s.as_bytes()), None, "{s}");
        }
        // It stops at a separator, and only there.
        assert_eq!(short_f64(b"2.5 7"), Some((2.5, 3)));
        assert_eq!(short_f64(b"2.5]"), Some((2.5, 3)));
        assert_eq!(short_f64(b"2.5,"), Some((2.5, 3)));
        assert_eq!(short_f64(b"2.5j"), None);
    }

    #[test]
    fn an_f32_midpoint_is_left_to_core() {
        // 1 + 2^-24 is halfway between the f32s 1 and 1 + 2^-23: exact in
        // f64, so the f64 lands on the midpoint.
        let s = "1.000000059604644775390625";
        assert!(short_f32(s.as_bytes()).is_none());
        // Above 2^24 the f32s are the even integers: every odd one is a
        // midpoint (2^24 + 3 rounds to even, 2^24 + 4).
        assert_eq!(short_f32(b"16777217"), None);
        assert_eq!(short_f32(b"16777219"), None);
        assert_eq!("16777219".parse::<f32>(), Ok(16777220.0));
        // Just off a midpoint, on either side.
        assert_eq!(short_f32(b"16777218.9"), Some((16777218.0, 10)));
        assert_eq!(short_f32(b"16777219.1"), Some((16777220.0, 10)));
        agrees("16777218.9");
        agrees("16777219.1");
    }

    proptest! {
        /// Every f32 and f64 printed by Rust (shortest round trip) and in
        /// exponent form reads back through the fast path as core reads it.
        #[test]
        fn printed_floats_agree_with_core(bits in any::<u32>(), bits64 in any::<u64>(), p in 0usize..10) {
            let f = f32::from_bits(bits);
            let d = f64::from_bits(bits64);
            for s in [format!("{f}"), format!("{f:e}"), format!("{f:.p$}"), format!("{d}"), format!("{d:e}"), format!("{d:.p$e}")] {
                agrees(&s);
            }
        }

        /// Decimal-looking strings built from digits, signs, points and
        /// exponents (most malformed) agree with core whenever the fast
        /// path reads them, including values near f32 midpoints.
        #[test]
        fn decimal_strings_agree_with_core(s in "[+-]?[0-9]{0,20}(\\.[0-9]{0,20})?([eE][+-]?[0-9]{0,5})?") {
            agrees(&s);
        }

        /// Decimals of the f64 on an f32 midpoint (halfway between an f32
        /// and the next), at every precision: core rounds the decimal,
        /// which is on either side of the midpoint or on it.
        #[test]
        fn f32_midpoints_agree_with_core(mantissa in 0u32..(1 << 23), exponent in 117u32..150, digits in 0usize..18) {
            let a = f32::from_bits((exponent << 23) | mantissa);
            let m = (f64::from(a) + f64::from(f32::from_bits(a.to_bits() + 1))) / 2.0;
            agrees(&format!("{m}"));
            agrees(&format!("{m:.digits$e}"));
        }

        /// Integers around the f32 midpoints above 2^24 (every odd value
        /// there is one) and their decimal scalings.
        #[test]
        fn integers_near_f32_midpoints_agree_with_core(n in (1u64 << 24)..(1u64 << 53), q in -22i32..=22) {
            agrees(&format!("{n}"));
            agrees(&format!("{n}e{q}"));
        }
    }
}
