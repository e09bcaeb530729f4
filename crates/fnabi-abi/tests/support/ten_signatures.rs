//! The ten signatures of issue 19 (P6), shared by the `signature` bench
//! (crates/fnabi) and the allocation-count test (crates/fnabi-abi): what
//! real modules carry, from an empty function to a 50-leaf SIP signature.

use fnabi_abi::sip::SipMangler;
use fnabi_abi::structure::PathKey;

/// One signature: a short name (the bench id) and the mangled text.
pub struct Signature {
    /// The bench id's signature part.
    pub name: &'static str,
    /// The mangled signature.
    pub mangled: String,
    /// True for a raw signature (`fv`), false for a SIP one (`sip`);
    /// `I1!R1!` is both.
    pub raw: bool,
    /// True for a SIP signature.
    pub sip: bool,
}

/// The 50-leaf SIP signature: ten blocks `{attn: [3 leaves], bias, kernel}`
/// under keys `block_0`..`block_9`, results `{logits, state: [2 leaves]}`,
/// built with fnabi's SIP mangler.
pub fn sip50() -> String {
    let mut m = SipMangler::new();
    for i in 0..10usize {
        let block = PathKey::from(format!("block_{i}").as_str());
        let base = 5 * i as i64;
        for j in 0..3usize {
            m.input(base + j as i64, &[block.clone(), "attn".into(), PathKey::Index(j)]).unwrap();
        }
        m.input(base + 3, &[block.clone(), "bias".into()]).unwrap();
        m.input(base + 4, &[block, "kernel".into()]).unwrap();
    }
    m.result(0, &["logits".into()]).unwrap();
    m.result(1, &["state".into(), PathKey::Index(0)]).unwrap();
    m.result(2, &["state".into(), PathKey::Index(1)]).unwrap();
    m.finish().to_mangled()
}

/// The ten signatures, in the order.
pub fn ten() -> Vec<Signature> {
    let many = "B8!d-1d128".repeat(16);
    let raw = |name, mangled: String| Signature { name, mangled, raw: true, sip: false };
    vec![
        Signature { name: "empty", mangled: "I1!R1!".into(), raw: true, sip: true },
        raw("ref_buf", "I18!O1!B11!d-1d128d64R17!B13!t11d32d-1d64".into()),
        raw("buf16", format!("I{}!{many}R11!B8!d-1d128", many.len() + 1)),
        raw("mnist", "I15!B7!d1d784B3!d4R9!B6!d1d10".into()),
        raw("conv", "I42!B10!d64d3d7d7B4!d64B14!d1d64d112d112S3!t2R11!B8!d1d1000".into()),
        raw("resnet", "I25!B13!d1d224d224d3S3!t6O1!R18!B8!d1d1000B5!t7d1".into()),
        raw("rank6", "I41!B13!t4d2d3d4d5d6B21!t1d-1d-1d-1d-1d-1d-1R17!B13!t3d2d3d4d5d6".into()),
        raw("scalars", "I22!S1!S3!t6S3!t7S3!t2O1!R9!S3!t8O1!".into()),
        Signature {
            name: "sip_dict",
            mangled: "I31!S27!k0D17!K4!bar_1K4!foo_0k1_2R12!S9!k0_0k1_1".into(),
            raw: false,
            sip: true,
        },
        Signature { name: "sip50", mangled: sip50(), raw: false, sip: true },
    ]
}
