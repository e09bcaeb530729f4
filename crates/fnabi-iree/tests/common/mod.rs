//! What the integration tests share: scratch folders that remove themselves.

#[path = "../../../fnabi-core/tests/support/scratch.rs"]
mod scratch;
#[allow(unused_imports)] // Not every test binary writes files.
pub use scratch::Scratch;
