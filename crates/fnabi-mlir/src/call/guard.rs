//! Calls that a failed runtime check ends with a typed error instead of
//! an aborted process: the library's `fnabi_guarded_call` (C glue that
//! fnabi links into modules compiled with runtime checks) sets a jump point,
//! calls back into [`invoke`] through [`guarded_thunk`], and a failed
//! `cf.assert` jumps back to it with its report, as does an allocation
//! that fnabi's allocation glue refuses. That glue's limit is set here
//! when a library is loaded ([`set_allocation_limit`]).

use super::*;

/// `int fnabi_guarded_call(uint64_t (*thunk)(void *), void *ctx, uint64_t *bits)`.
type GuardedCall = unsafe extern "C" fn(extern "C" fn(*mut c_void) -> u64, *mut c_void, *mut u64) -> i32;
/// `const char *fnabi_failure_report(void)`.
type FailureReport = unsafe extern "C" fn() -> *const std::ffi::c_char;

/// The two functions of a library's guard glue.
pub(super) struct Guard {
    call: GuardedCall,
    report: FailureReport,
}

impl Guard {
    /// The guard glue of `lib`, when it has it (a module compiled with
    /// runtime checks by this fnabi).
    pub(super) fn find(lib: &libloading::Library) -> Option<Guard> {
        // SAFETY: these symbols, when present, are fnabi's own glue
        // (compile.rs, ASSERT_GLUE) with exactly these C signatures; the
        // pointers are used only while the library stays loaded (the
        // `Guard` lives in the `LibInner` that owns it).
        unsafe {
            let call = *lib.get::<GuardedCall>(b"fnabi_guarded_call\0").ok()?;
            let report = *lib.get::<FailureReport>(b"fnabi_failure_report\0").ok()?;
            Some(Guard { call, report })
        }
    }

    /// [`invoke`]s `fp` with `frame` under the guard: `Err` with the
    /// module's report when one of its runtime checks failed. Then the
    /// call did not finish: its results were not written, and what it had
    /// allocated so far is not freed (a leak, not a hazard).
    pub(super) fn invoke(&self, fp: usize, frame: &Frame, ret: ReturnReg) -> Result<u64, String> {
        let mut ctx = ThunkArgs { fp, frame, ret };
        let mut bits = 0u64;
        // SAFETY: `call` is the glue's `fnabi_guarded_call` (see `find`): it
        // sets a jump point, calls `guarded_thunk(ctx)` and stores its
        // result in `bits`. `ctx` points to live `ThunkArgs` for the whole
        // call. A failed check longjmps from module code back into the glue,
        // over the frames of the module and of `guarded_thunk` and
        // `invoke`/the trampoline, which are plain old frames (no value with
        // a destructor is alive in them: integers, references and a
        // function pointer), as Rust requires of frames a longjmp skips.
        let failed = unsafe { (self.call)(guarded_thunk, (&raw mut ctx).cast(), &raw mut bits) };
        if failed == 0 {
            return Ok(bits);
        }
        // SAFETY: the glue's report is a NUL-terminated buffer of this
        // thread, valid until this thread's next guarded call.
        let report = unsafe { std::ffi::CStr::from_ptr((self.report)()) };
        Err(report.to_string_lossy().into_owned())
    }
}

/// What the thunk needs to make the call.
struct ThunkArgs<'a> {
    fp: usize,
    frame: &'a Frame,
    ret: ReturnReg,
}

/// Called by `fnabi_guarded_call`: makes the call `ctx` describes. Holds
/// nothing with a destructor (a failed check jumps over this frame).
extern "C" fn guarded_thunk(ctx: *mut c_void) -> u64 {
    // SAFETY: `ctx` is the `ThunkArgs` that `Guard::invoke` passed, alive
    // for the duration of this call.
    let a = unsafe { &*(ctx as *const ThunkArgs<'_>) };
    invoke(a.fp, a.frame, a.ret)
}

/// The report of an allocation refused by the module's allocation glue
/// (`fnabi-alloc-failed REQUESTED LIMIT`, limit 0 when the allocator
/// failed): the bytes asked for and the limit they were over.
pub(super) fn allocation_failure(report: &str) -> Option<(u64, Option<u64>)> {
    let mut words = report.lines().next()?.strip_prefix("fnabi-alloc-failed ")?.split(' ');
    let requested = words.next()?.parse().ok()?;
    let limit: u64 = words.next()?.parse().ok()?;
    Some((requested, (limit != 0).then_some(limit)))
}

/// Sets the per-array byte limit of `lib`'s allocation glue (a module that
/// this fnabi compiled), when it has one: the limit in force now
/// ([`ByteLimit::Array`](fnabi_abi::limits::ByteLimit::Array)), checked
/// at each of the module's heap allocations.
pub(super) fn set_allocation_limit(lib: &libloading::Library) {
    // SAFETY: when present, `fnabi_max_alloc_bytes` is the glue's aligned
    // `uint64_t` (compile.rs, ALLOC_GLUE), which the module's code reads
    // only with relaxed atomic loads; it is written here as an atomic of
    // the same size (a library loaded again is the same mapping, whose
    // calls may be running on other threads).
    unsafe {
        if let Ok(slot) = lib.get::<*mut u64>(b"fnabi_max_alloc_bytes\0") {
            let limit = fnabi_abi::limits::max_bytes(fnabi_abi::limits::ByteLimit::Array);
            std::sync::atomic::AtomicU64::from_ptr(*slot).store(limit, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::allocation_failure;

    #[test]
    fn allocation_reports_read_back() {
        assert_eq!(allocation_failure("fnabi-alloc-failed 80000000000 1024\n"), Some((80_000_000_000, Some(1024))));
        assert_eq!(allocation_failure("fnabi-alloc-failed 5 0\n"), Some((5, None)));
        assert_eq!(allocation_failure("ERROR: Runtime op verification failed\n"), None);
        assert_eq!(allocation_failure("fnabi-alloc-failed x 0"), None);
    }
}
