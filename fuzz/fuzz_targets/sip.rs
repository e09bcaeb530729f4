//! SIP parser: never panics; whatever parses re-mangles to a signature that
//! parses to the same structures (and mangles to itself), and the reference
//! text read straight from the input equals the one from the structures;
//! what fails to parse fails the visitor with the same error.
#![no_main]

use fnabi::sip::{ReferenceText, SipReader, SipSignature};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let sig = match SipSignature::parse(data) {
        Ok(sig) => sig,
        Err(e) => {
            // The visitor (which counts nothing ahead) stops at the same error.
            let visited = SipReader::new(data).and_then(|r| {
                r.visit_inputs(&mut ReferenceText::new())?;
                r.visit_results(&mut ReferenceText::new())
            });
            assert_eq!(visited, Err(e));
            return;
        }
    };
    let mangled = sig.to_mangled();
    let again = SipSignature::parse(&mangled).expect("a re-mangled signature parses");
    assert_eq!(again, sig);
    assert_eq!(again.to_mangled(), mangled);
    let reader = SipReader::new(data).expect("parsed once");
    let mut inputs = ReferenceText::new();
    reader.visit_inputs(&mut inputs).expect("parsed once");
    let mut results = ReferenceText::new();
    reader.visit_results(&mut results).expect("parsed once");
    assert_eq!(inputs.as_str(), sig.inputs_reference());
    assert_eq!(results.as_str(), sig.results_reference());
    let _ = sig.to_string();
    if let Ok(plan) = fnabi::Plan::new(sig.inputs()) {
        let v = plan.unflatten(vec![fnabi::Value::None; plan.leaf_count()]).expect("leaf count matches");
        assert_eq!(plan.flatten(&v).expect("own value flattens").len(), plan.leaf_count());
    }
});
