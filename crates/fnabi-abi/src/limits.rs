//! The limits on what an input may ask for, in one place: every walk of a
//! nested input (signatures, structures, `iree.abi` records, declarations,
//! JSON values) is bounded by [`MAX_DEPTH`], so recursion is bounded and a
//! hostile input gets an error, never a stack overflow.

/// The deepest nesting fnabi accepts anywhere a structure, record or value
/// is read or built: a path has at most this many keys, records and JSON
/// values nest at most this deep.
pub const MAX_DEPTH: usize = 128;

/// The most gap slots (sequence slots with no key, which read and write
/// `None`) that one structure may have in all. A signature can declare a
/// sequence key of two billion; without a bound, unflattening it would try
/// to build a list of two billion `None`s.
pub const MAX_GAP_SLOTS: usize = 1 << 16;

/// The highest rank of an array fnabi reads, builds or passes (memref
/// descriptors, `.npy` files, text values); far above any real tensor.
pub const MAX_RANK: usize = 64;
