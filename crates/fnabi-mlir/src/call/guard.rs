//! Calls that a failed runtime check ends with a typed error instead of
//! an aborted process: the library's `fnabi_guarded_call` (C glue that
//! fnabi links into modules compiled with runtime checks) sets a jump point,
//! calls back into [`invoke`] through [`guarded_thunk`], and a failed
//! `cf.assert` jumps back to it with its report.

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
