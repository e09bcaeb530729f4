//! The size of the CPU's last-level cache as the operating system reports
//! it: what decides which layout outputs are written around the caches.

use std::sync::OnceLock;

/// Bytes of the largest data or unified cache CPU 0 sees (Linux:
/// `/sys/devices/system/cpu/cpu0/cache/index*/size`), read once per
/// process; `None` where the system does not say.
pub(super) fn last_level_cache_bytes() -> Option<usize> {
    static BYTES: OnceLock<Option<usize>> = OnceLock::new();
    *BYTES.get_or_init(|| largest_cache("/sys/devices/system/cpu/cpu0/cache".as_ref()))
}

/// The largest `size` among the `index*` folders of `dir` whose `type` is
/// not `Instruction`.
fn largest_cache(dir: &std::path::Path) -> Option<usize> {
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).ok();
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.starts_with("index")))
        .filter(|e| read(e.path().join("type")).is_some_and(|t| t.trim() != "Instruction"))
        .filter_map(|e| parse_size(&read(e.path().join("size"))?))
        .max()
}

/// A cache size as Linux writes it (`8192K`; `M`, `G` and plain bytes
/// read too); `None` for anything else or an overflowing one.
fn parse_size(text: &str) -> Option<usize> {
    let t = text.trim();
    let (digits, unit) = match t.as_bytes().last()? {
        b'K' => (&t[..t.len() - 1], 1 << 10),
        b'M' => (&t[..t.len() - 1], 1 << 20),
        b'G' => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<usize>().ok()?.checked_mul(unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_linux_writes_them() {
        assert_eq!(parse_size("8192K\n"), Some(8 << 20));
        assert_eq!(parse_size("32M"), Some(32 << 20));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("49152"), Some(49152));
        for bad in ["", "K", "-1K", "8 MiB", "12.5M", "99999999999999999999K", "18014398509481984G"] {
            assert_eq!(parse_size(bad), None, "{bad:?}");
        }
    }

    proptest::proptest! {
        /// Every size Linux can write reads back as its bytes (or `None`
        /// past `usize`; half the sizes below 2^24, the others any), and
        /// any other text reads as `None` or a number, never a panic.
        #[test]
        fn sizes_round_trip(
            n in proptest::prop_oneof![0u64..1 << 24, proptest::prelude::any::<u64>()],
            unit in 0usize..4,
            junk in "\\PC{0,12}",
        ) {
            let (suffix, scale) = [("", 1u128), ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)][unit];
            let want = usize::try_from(u128::from(n) * scale).ok();
            proptest::prop_assert_eq!(parse_size(&format!("{n}{suffix}\n")), want);
            if let Some(bytes) = parse_size(&junk) {
                proptest::prop_assert!(junk.trim().trim_end_matches(['K', 'M', 'G']).parse::<usize>().is_ok(), "{}", bytes);
            }
        }
    }

    #[test]
    fn the_largest_data_or_unified_cache_counts() {
        let dir = std::env::temp_dir().join(format!("fnabi-cache-{}", std::process::id()));
        let index = |i: usize, kind: &str, size: &str| {
            let d = dir.join(format!("index{i}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("type"), format!("{kind}\n")).unwrap();
            std::fs::write(d.join("size"), format!("{size}\n")).unwrap();
        };
        index(0, "Data", "32K");
        index(1, "Instruction", "64M");
        index(2, "Unified", "512K");
        index(3, "Unified", "8192K");
        std::fs::create_dir_all(dir.join("power")).unwrap();
        assert_eq!(largest_cache(&dir), Some(8 << 20));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(largest_cache(&dir), None);
    }
}
