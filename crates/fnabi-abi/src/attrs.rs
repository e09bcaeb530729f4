//! A typed view over a function's ABI attributes: `abi`/`abiv` (the generic
//! pair), `fv`/`f`/`fbr` (the raw function ABI) and `sipv`/`sip` (the
//! structured index path ABI). It checks versions and consistency and hands
//! out the parsed raw signature.
//!
//! ```
//! use fnabi_abi::AbiAttributes;
//! let attrs = AbiAttributes::from_pairs([("fv", "1"), ("f", "I4!B1!R1!"), ("other", "ignored")]).unwrap();
//! assert_eq!(attrs.raw_signature().unwrap().unwrap().to_string(), "(Buffer<float32[]>) -> ()");
//! let err = AbiAttributes::from_pairs([("fv", "3"), ("f", "I1!R1!")]).unwrap_err();
//! assert_eq!(err.to_string(), "ABI attributes: unsupported raw ABI version fv = 3 (fnabi reads 1 and 2)");
//! ```

use crate::raw::RawSignature;
use std::fmt;

/// A function's ABI attributes are inconsistent, malformed or of a version
/// fnabi does not read; the message names the attribute.
///
/// ```
/// use fnabi_abi::AbiAttributes;
/// let e = AbiAttributes::from_pairs([("f", "I1!R1!")]).unwrap_err(); // no `fv`
/// assert!(e.message().contains("fv"));
/// assert!(e.to_string().starts_with("ABI attributes: "));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttributeError {
    message: String,
}

impl AttributeError {
    /// An error with this message (it names the attribute at fault).
    #[cold]
    pub fn new(message: impl Into<String>) -> Self {
        AttributeError { message: message.into() }
    }

    /// What is wrong, naming the attribute.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for AttributeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ABI attributes: {}", self.message)
    }
}

impl std::error::Error for AttributeError {}

type Error = AttributeError;

/// The raw function ABI versions fnabi reads (2 = version 1 plus the layout hint).
pub const RAW_ABI_VERSIONS: [u32; 2] = [1, 2];
/// The SIP ABI version fnabi reads.
pub const SIP_ABI_VERSION: u32 = 1;

/// The ABI attributes of one function, checked.
///
/// ```
/// use fnabi_abi::AbiAttributes;
/// // f: one sint32 buffer of 4 in, one float64 scalar out
/// let a = AbiAttributes::from_pairs([("abi", "sip"), ("abiv", "1"), ("fv", "1"), ("f", "I8!B5!t6d4R6!S3!t2")]).unwrap();
/// assert_eq!(a.abi(), Some("sip"));
/// assert_eq!((a.abi_version(), a.raw_version()), (Some(1), Some(1)));
/// assert_eq!(a.raw_signature_str(), Some("I8!B5!t6d4R6!S3!t2"));
/// assert_eq!(a.raw_signature().unwrap().unwrap().to_string(), "(Buffer<sint32[4]>) -> (float64)");
/// assert_eq!(a.sip_signature().unwrap(), None);
/// assert!(AbiAttributes::from_pairs([("fv", "1"), ("fv", "1")]).is_err()); // repeated
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AbiAttributes {
    abi: Option<String>,
    abiv: Option<u32>,
    fv: Option<u32>,
    f: Option<String>,
    fbr: Option<String>,
    sipv: Option<u32>,
    sip: Option<String>,
}

fn attr_err(msg: impl Into<String>) -> Error {
    AttributeError::new(msg)
}

fn version(key: &str, value: &str) -> Result<u32, Error> {
    value.trim().parse::<u32>().map_err(|_| attr_err(format!("{key} = {value:?} is not a version number")))
}

impl AbiAttributes {
    /// Reads the attributes from `(key, value)` pairs, ignoring keys that
    /// are not ABI attributes. Errors: a repeated key, a version that is not
    /// a number or not supported, a signature without its version (or the
    /// reverse), `fbr` without `f`, and an `f` that does not parse or that
    /// uses a feature newer than its `fv`.
    pub fn from_pairs<K: AsRef<str>, V: AsRef<str>>(pairs: impl IntoIterator<Item = (K, V)>) -> Result<Self, Error> {
        let mut a = AbiAttributes::default();
        for (k, v) in pairs {
            let (k, v) = (k.as_ref(), v.as_ref());
            let dup = match k {
                "abi" => a.abi.replace(v.to_owned()).is_some(),
                "abiv" => a.abiv.replace(version(k, v)?).is_some(),
                "fv" => a.fv.replace(version(k, v)?).is_some(),
                "f" => a.f.replace(v.to_owned()).is_some(),
                "fbr" => a.fbr.replace(v.to_owned()).is_some(),
                "sipv" => a.sipv.replace(version(k, v)?).is_some(),
                "sip" => a.sip.replace(v.to_owned()).is_some(),
                _ => false,
            };
            if dup {
                return Err(attr_err(format!("attribute {k} is given twice")));
            }
        }
        a.check()?;
        Ok(a)
    }

    fn check(&self) -> Result<(), Error> {
        match (self.fv, &self.f) {
            (Some(v), _) if !RAW_ABI_VERSIONS.contains(&v) => {
                return Err(attr_err(format!("unsupported raw ABI version fv = {v} (fnabi reads 1 and 2)")));
            }
            (None, Some(_)) => return Err(attr_err("f is given without its version fv")),
            (Some(_), None) => return Err(attr_err("fv is given without a signature f")),
            _ => {}
        }
        if self.fbr.is_some() && self.f.is_none() {
            return Err(attr_err("fbr (result allocator) is given without a raw signature f"));
        }
        if let (Some(v), Some(f)) = (self.fv, &self.f) {
            let sig = RawSignature::parse(f).map_err(|e| attr_err(format!("f = {f:?}: {e}")))?;
            if sig.abi_version() > v {
                return Err(attr_err(format!(
                    "f = {f:?} uses a layout hint, which needs fv = {} (fv = {v})",
                    sig.abi_version()
                )));
            }
        }
        match (self.sipv, &self.sip) {
            (Some(v), _) if v != SIP_ABI_VERSION => {
                return Err(attr_err(format!("unsupported SIP ABI version sipv = {v} (fnabi reads 1)")));
            }
            (None, Some(_)) => return Err(attr_err("sip is given without its version sipv")),
            (Some(_), None) => return Err(attr_err("sipv is given without a signature sip")),
            _ => {}
        }
        if let (Some("sip"), Some(v)) = (self.abi.as_deref(), self.abiv)
            && v != SIP_ABI_VERSION
        {
            return Err(attr_err(format!("unsupported abi = sip version abiv = {v} (fnabi reads 1)")));
        }
        Ok(())
    }

    /// `abi`: the name of the calling convention, if given.
    pub fn abi(&self) -> Option<&str> {
        self.abi.as_deref()
    }

    /// `abiv`: the version of `abi`, if given.
    pub fn abi_version(&self) -> Option<u32> {
        self.abiv
    }

    /// `fv`: the raw ABI version, if given.
    pub fn raw_version(&self) -> Option<u32> {
        self.fv
    }

    /// `f`: the mangled raw signature, if given.
    pub fn raw_signature_str(&self) -> Option<&str> {
        self.f.as_deref()
    }

    /// The parsed raw signature (`None` without `f`).
    pub fn raw_signature(&self) -> Result<Option<RawSignature>, Error> {
        match &self.f {
            None => Ok(None),
            Some(f) => RawSignature::parse(f).map(Some).map_err(|e| attr_err(format!("f = {f:?}: {e}"))),
        }
    }

    /// `fbr`: the name of the result allocator function, if given.
    pub fn result_allocator(&self) -> Option<&str> {
        self.fbr.as_deref()
    }

    /// `sip`: the mangled SIP signature, if given (its version is checked).
    pub fn sip_signature_str(&self) -> Option<&str> {
        self.sip.as_deref()
    }

    /// The parsed SIP signature (`None` without `sip`).
    pub fn sip_signature(&self) -> Result<Option<crate::sip::SipSignature>, Error> {
        match &self.sip {
            None => Ok(None),
            Some(s) => crate::sip::SipSignature::parse(s).map(Some).map_err(|e| attr_err(format!("sip = {s:?}: {e}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(pairs: &[(&str, &str)]) -> String {
        AbiAttributes::from_pairs(pairs.iter().copied()).unwrap_err().to_string()
    }

    #[test]
    fn reads_all_keys() {
        let a = AbiAttributes::from_pairs([
            ("abi", "sip"),
            ("abiv", "1"),
            ("fv", "1"),
            ("f", "I1!R1!"),
            ("fbr", "__allocate_results"),
            ("sipv", "1"),
            ("sip", "I1!R1!"),
        ])
        .unwrap();
        assert_eq!(a.abi(), Some("sip"));
        assert_eq!(a.abi_version(), Some(1));
        assert_eq!(a.raw_version(), Some(1));
        assert_eq!(a.result_allocator(), Some("__allocate_results"));
        assert_eq!(a.sip_signature_str(), Some("I1!R1!"));
        assert_eq!(a.raw_signature().unwrap(), Some(RawSignature::default()));
        assert_eq!(AbiAttributes::from_pairs::<&str, &str>([]).unwrap().raw_signature().unwrap(), None);
        assert_eq!(a.sip_signature().unwrap().unwrap().to_string(), "() -> None");
        let bad = AbiAttributes::from_pairs([("sipv", "1"), ("sip", "I3!k0R1!")]).unwrap();
        assert_eq!(
            bad.sip_signature().unwrap_err().to_string(),
            "ABI attributes: sip = \"I3!k0R1!\": at byte 3: key `k` outside a sequence or dict"
        );
    }

    #[test]
    fn version_and_consistency_errors() {
        assert_eq!(err(&[("fv", "x"), ("f", "I1!R1!")]), "ABI attributes: fv = \"x\" is not a version number");
        assert_eq!(err(&[("f", "I1!R1!")]), "ABI attributes: f is given without its version fv");
        assert_eq!(err(&[("fv", "1")]), "ABI attributes: fv is given without a signature f");
        assert_eq!(err(&[("fbr", "g")]), "ABI attributes: fbr (result allocator) is given without a raw signature f");
        assert_eq!(err(&[("fv", "1"), ("fv", "1")]), "ABI attributes: attribute fv is given twice");
        assert_eq!(
            err(&[("fv", "1"), ("f", "I3!BxR1!")]),
            "ABI attributes: f = \"I3!BxR1!\": at byte 4: span has no decimal length after its tag"
        );
        assert_eq!(
            err(&[("fv", "1"), ("f", "I6!B3!c1R1!")]),
            "ABI attributes: f = \"I6!B3!c1R1!\" uses a layout hint, which needs fv = 2 (fv = 1)"
        );
        assert!(AbiAttributes::from_pairs([("fv", "2"), ("f", "I6!B3!c1R1!")]).is_ok());
        assert_eq!(
            err(&[("sipv", "2"), ("sip", "I1!R1!")]),
            "ABI attributes: unsupported SIP ABI version sipv = 2 (fnabi reads 1)"
        );
        assert_eq!(err(&[("sip", "I1!R1!")]), "ABI attributes: sip is given without its version sipv");
        assert_eq!(
            err(&[("abi", "sip"), ("abiv", "2")]),
            "ABI attributes: unsupported abi = sip version abiv = 2 (fnabi reads 1)"
        );
    }
}
