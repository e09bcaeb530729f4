//! Round trips of IREE's text form: integer and boolean arrays print and
//! parse back exactly; float arrays keep dtype, shape and C `%G` precision.

use fnabi::Array;
use fnabi::text::{format_array, parse_array};
use proptest::prelude::*;

fn shape() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..4, 0..4)
}

proptest! {
    #[test]
    fn integer_arrays_round_trip(shape in shape(), seed in any::<u64>()) {
        let n: usize = shape.iter().product();
        let mut x = seed;
        let data: Vec<i64> = (0..n).map(|_| { x = x.wrapping_mul(6364136223846793005).wrapping_add(1); x as i64 >> (x % 60) }).collect();
        let a = Array::from_vec(&shape, data).unwrap();
        let text = format_array(&a);
        prop_assert_eq!(parse_array(&text).unwrap(), a, "{}", text);
    }

    #[test]
    fn bool_and_u8_arrays_round_trip(shape in shape(), bits in any::<u64>()) {
        let n: usize = shape.iter().product();
        let b = Array::from_vec(&shape, (0..n).map(|k| bits >> (k % 64) & 1 == 1).collect()).unwrap();
        prop_assert_eq!(parse_array(&format_array(&b)).unwrap(), b);
        let u = Array::from_vec(&shape, (0..n).map(|k| (bits >> (k % 56)) as u8).collect()).unwrap();
        prop_assert_eq!(parse_array(&format_array(&u)).unwrap(), u);
    }

    #[test]
    fn float_arrays_keep_six_digits(v in prop::collection::vec(-1e30f64..1e30, 1..8)) {
        let a = Array::from_vec(&[v.len()], v.clone()).unwrap();
        let b = parse_array(&format_array(&a)).unwrap();
        for (x, y) in v.iter().zip(b.to_vec::<f64>().unwrap()) {
            prop_assert!((x - y).abs() <= x.abs() * 5e-6, "{} vs {}", x, y);
        }
    }
}
