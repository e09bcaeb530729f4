//! The compile cache's entries on disk: `fnabi_core::cache` (shared with
//! the IREE backend), whose entries here are shared libraries
//! ([`ArtifactKind::SHARED_LIBRARY`], `libKEY.so`) in the `mlir` folder of
//! the cache.

pub use fnabi_core::cache::*;
