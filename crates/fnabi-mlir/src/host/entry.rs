//! The one Rust entry every trampoline calls, and the per-thread record of
//! a host function's failure that the module call running it reports
//! ([`CallScope`]); [`Binding`], a loaded library's bound slots.

use super::*;

thread_local! {
    /// Nesting depth of fnabi calls into modules with bindings on this thread.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// The first host-function failure of the innermost such call.
    static PENDING: RefCell<Option<MlirError>> = const { RefCell::new(None) };
}

/// The one Rust entry every trampoline calls (through its slot).
///
/// # Safety
/// `ctx` is the `Slot` fnabi stored with this entry; `words` holds one word
/// per declared argument; `result` is where the results go (see `Slot::commit`).
pub(crate) unsafe extern "C" fn host_entry(ctx: *const c_void, words: *const u64, result: *mut c_void) {
    // SAFETY: fnabi stored a pointer to a boxed Slot that the library's
    // binding keeps alive while the library is loaded.
    let slot = unsafe { &*ctx.cast::<Slot>() };
    let n = slot.ty.inputs.len();
    // SAFETY: the trampoline passes an array of at least `n` words.
    let words = if n == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(words, n) } };
    let outcome = catch_unwind(AssertUnwindSafe(|| slot.invoke(words, result)));
    let error: HostError = match outcome {
        Ok(Ok(())) => return,
        Ok(Err(e)) => e,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic payload that is not a string".into());
            // Dropping a payload may itself panic: never let that unwind.
            let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
            Box::new(HostPanic(msg))
        }
    };
    let defaults = slot.defaults();
    // SAFETY: as for the successful path.
    unsafe { slot.commit(defaults, result) };
    let e = MlirError::HostFunction { name: slot.name.clone(), source: error };
    if DEPTH.try_with(|d| d.get() > 0).unwrap_or(false) {
        let mut e = Some(e);
        let _ = PENDING.try_with(|p| {
            let mut p = p.borrow_mut();
            if p.is_none() {
                *p = e.take();
            }
        });
    } else {
        eprintln!("fnabi: {e} (outside any fnabi call, so no call reports it)");
    }
}

/// Brackets one native call into a module with a binding: flushes Rust's
/// stdout first and C's stdio after (when the module uses the runtime
/// utilities), and collects the host-function failure of this call.
pub(crate) struct CallScope {
    outer: Option<MlirError>,
    flush: bool,
}

impl CallScope {
    pub(crate) fn enter(binding: &Binding) -> CallScope {
        if binding.flush_stdio {
            use std::io::Write;
            let _ = std::io::stdout().flush();
        }
        DEPTH.with(|d| d.set(d.get() + 1));
        let outer = PENDING.with(|p| p.borrow_mut().take());
        CallScope { outer, flush: binding.flush_stdio }
    }

    /// The failure of this call, if any (the enclosing call's is restored).
    pub(crate) fn finish(self) -> Option<Error> {
        if self.flush {
            // SAFETY: fflush(NULL) flushes every C output stream.
            unsafe { libc::fflush(std::ptr::null_mut()) };
        }
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
        PENDING.with(|p| std::mem::replace(&mut *p.borrow_mut(), self.outer)).map(Error::from)
    }
}

/// What a loaded library's externals are bound to; owned by the library.
pub(crate) struct Binding {
    pub(crate) slots: Vec<Slot>,
    pub(crate) flush_stdio: bool,
}

impl fmt::Debug for Binding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Binding")
            .field("host", &self.slots.iter().map(|s| s.name.as_str()).collect::<Vec<_>>())
            .finish()
    }
}
