//! The x86-64 System V trick that calls a C function of any signature
//! made of integer-class and float-class scalars through a few fixed
//! function-pointer types, with no per-signature code and no libffi.
//!
//! The System V AMD64 ABI assigns each argument of class INTEGER (pointers,
//! `i1`…`i64`, `index`) to the next free register of `rdi, rsi, rdx, rcx,
//! r8, r9`, and each argument of class SSE (`f16`, `bf16`, `f32`, `f64`) to
//! the next free one of `xmm0`–`xmm7`, **independently of each other**: an
//! interleaved float does not use up an integer register or vice versa.
//! Arguments left over when their class runs out go on the stack, in
//! argument order, each in its own 8-byte slot (the value in the low bytes).
//! So the callee `f(ptr, float, i32, double)` reads exactly the registers that
//! `g(u64 a, u64 b, u64 c, u64 d, u64 e, u64 f, f64 x0, …, f64 x7, u64 s0, …)`
//! would be given for `a = ptr, b = i32, x0 = float, x1 = double`, and the
//! stack slots `s0, s1, …` are the overflow in order. Registers and slots
//! the callee does not read are harmless (they are caller-owned scratch).
//!
//! Values narrower than their register sit in its low bits: an `f32`, `f16`
//! or `bf16` in the low 32/16 bits of an `xmm` register (the callee reads
//! only those; MLIR-lowered code neither assumes nor needs the upper bits),
//! an `i8`/`i16`/`i32` in the low bits of a general register (LLVM-lowered
//! MLIR functions carry no `signext`/`zeroext` attributes, so they do not
//! read the upper bits either; fnabi extends them anyway). A scalar result
//! comes back in `rax` (integers) or `xmm0` (floats), low bits likewise;
//! `void` functions are called as returning `u64` and `rax` is ignored.
//!
//! The stack part is rounded up to a few bucket sizes (0, 2, 4, …, 128
//! slots) so a handful of function-pointer types cover every arity;
//! calls with no floats and no stack use the short `fn(u64 × 6)` form.

#[cfg(target_arch = "x86_64")]
use std::ffi::c_void;

/// Integer-class argument registers.
pub(crate) const INT_REGS: usize = 6;
/// Float-class argument registers.
pub(crate) const FLOAT_REGS: usize = 8;
/// The most stack slots a call may use.
pub(crate) const MAX_STACK_SLOTS: usize = 128;

/// The stack-slot buckets, smallest first.
const BUCKETS: [usize; 8] = [0, 2, 4, 8, 16, 32, 64, 128];

/// The smallest bucket holding `n` stack slots (`None` above the maximum).
pub(crate) fn stack_bucket(n: usize) -> Option<usize> {
    BUCKETS.iter().copied().find(|&b| b >= n)
}

/// Which register the scalar result comes back in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReturnReg {
    /// `rax` (integers, and `void`: ignored).
    Int,
    /// `xmm0` (floats).
    Float,
}

/// Where an argument goes: an integer register, a float register or a
/// stack slot, by index in its class.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Loc {
    Int(usize),
    Float(usize),
    Stack(usize),
}

impl Loc {
    /// Its index in a [`Frame`]'s slots: the integer registers, then the
    /// float registers, then the stack slots.
    pub(crate) fn slot(self) -> usize {
        match self {
            Loc::Int(k) => k,
            Loc::Float(k) => INT_REGS + k,
            Loc::Stack(k) => REGS + k,
        }
    }
}

/// Integer plus float registers.
pub(crate) const REGS: usize = INT_REGS + FLOAT_REGS;

/// The argument registers and stack slots of one call.
pub(crate) struct Frame {
    /// `rdi, rsi, rdx, rcx, r8, r9`, then `xmm0`–`xmm7` as bit patterns.
    pub regs: [u64; REGS],
    /// The stack slots, `stack_bucket(n)` long.
    pub stack: Vec<u64>,
    /// False when no float register and no stack slot is used.
    pub full: bool,
}

impl Frame {
    pub(crate) fn new(stack_slots: usize, full: bool) -> Frame {
        let len = stack_bucket(stack_slots).unwrap_or(MAX_STACK_SLOTS);
        Frame { regs: [0; REGS], stack: vec![0; len], full }
    }

    /// Puts an argument's bits where `loc` says.
    #[inline(always)]
    pub(crate) fn set(&mut self, loc: Loc, bits: u64) {
        self.set_slot(loc.slot(), bits);
    }

    /// Puts an argument's bits in slot `k` ([`Loc::slot`]).
    #[inline(always)]
    pub(crate) fn set_slot(&mut self, k: usize, bits: u64) {
        match self.regs.get_mut(k) {
            Some(r) => *r = bits,
            None => self.stack[k - REGS] = bits,
        }
    }

    /// The integer registers.
    #[inline(always)]
    pub(crate) fn ints(&self) -> &[u64; INT_REGS] {
        let [i @ .., _, _, _, _, _, _, _, _] = &self.regs;
        i
    }

    /// The float registers.
    #[inline(always)]
    pub(crate) fn floats(&self) -> &[u64; FLOAT_REGS] {
        let [_, _, _, _, _, _, x @ ..] = &self.regs;
        x
    }
}

/// Calls `fp` with the registers and stack slots of `frame`, returning the
/// bits of `rax` or `xmm0`.
///
/// # Safety
/// `fp` must be a function following the x86-64 System V C calling
/// convention whose parameters are exactly what `frame` encodes by the rules
/// in the module docs (integer-class in `ints`, float-class in `floats`, the
/// overflow in `stack` in order), whose result is returned in `ret` (or is
/// `void`), and which is safe to call with those values: every pointer among
/// them valid for what the callee does with it.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) unsafe fn invoke(fp: *const c_void, frame: &Frame, ret: ReturnReg) -> u64 {
    if !frame.full {
        // SAFETY: forwarded to the caller (a frame that is not `full` has
        // integer-class arguments only, all in its integer registers).
        return unsafe { invoke_ints(fp, frame.ints(), ret) };
    }
    // SAFETY: forwarded to the caller.
    unsafe { invoke_full(fp, frame, ret) }
}

/// [`invoke`] for a function whose arguments are all integer-class and in
/// registers (a frame that is not `full`): the short `fn(u64 × 6)` form.
///
/// # Safety
/// As for [`invoke`], with `i` the frame's integer registers.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) unsafe fn invoke_ints(fp: *const c_void, i: &[u64; INT_REGS], ret: ReturnReg) -> u64 {
    // SAFETY: the caller guarantees `fp` is a System V function whose
    // arguments are integer-class and all in `i`; a function of fewer
    // integer parameters ignores the extra registers. Its result (if any)
    // is in rax or xmm0, which `Rets` reads both of (see there).
    let r = unsafe {
        std::mem::transmute::<*const c_void, unsafe extern "C" fn(u64, u64, u64, u64, u64, u64) -> Rets>(fp)(
            i[0], i[1], i[2], i[3], i[4], i[5],
        )
    };
    r.pick(ret)
}

/// The return registers `rax` and `xmm0` after a call, both: a 16-byte
/// C struct of an INTEGER-class and an SSE-class eightbyte is returned in
/// exactly those two (System V ABI, 3.2.3). Calling a function that
/// returns an integer (in rax), a float (in xmm0) or nothing as if it
/// returned this struct reads the register it set and one it left alone;
/// both fields are plain bits (any pattern is a valid `u64`/`f64`, and the
/// `f64` is only reinterpreted, never computed with). One call site then
/// serves every result type, and the caller picks a field without a branch.
#[repr(C)]
#[derive(Clone, Copy)]
struct Rets {
    rax: u64,
    xmm0: f64,
}

impl Rets {
    /// The bits of the register `ret` names (without a branch).
    #[inline(always)]
    fn pick(self, ret: ReturnReg) -> u64 {
        let float = 0u64.wrapping_sub(u64::from(ret == ReturnReg::Float));
        (self.rax & !float) | (self.xmm0.to_bits() & float)
    }
}

/// The general form of [`invoke`]: six integer registers, eight float
/// registers and a bucket of stack slots (kept out of line: it is large).
///
/// # Safety
/// As for [`invoke`].
#[cfg(target_arch = "x86_64")]
#[inline(never)]
unsafe fn invoke_full(fp: *const c_void, frame: &Frame, ret: ReturnReg) -> u64 {
    let i = frame.ints();
    let x = |k: usize| f64::from_bits(frame.floats()[k]);
    let s = &frame.stack;
    macro_rules! full {
        ($($k:literal)*) => {{
            // SAFETY: the caller guarantees the function's parameters are
            // what `frame` encodes: integer-class ones in the six integer
            // registers, float-class ones in the eight xmm registers, the
            // rest in the first stack slots in order; this type passes all
            // six + eight registers and `stack.len()` slots (its bucket, at
            // least the slots used), so each parameter lands where the
            // callee reads it and the extra registers/slots are ignored.
            // The f64 parameters carry arbitrary bit patterns (an f32 in the
            // low half): they are only moved into xmm registers, never
            // computed with, so the bits arrive unchanged.
            // The result is read as `Rets` (see there).
            unsafe {
                let f = std::mem::transmute::<*const c_void, unsafe extern "C" fn(u64, u64, u64, u64, u64, u64, f64, f64, f64, f64, f64, f64, f64, f64 $(, full!(@slot $k))*) -> Rets>(fp);
                f(i[0], i[1], i[2], i[3], i[4], i[5], x(0), x(1), x(2), x(3), x(4), x(5), x(6), x(7) $(, s[$k])*)
            }.pick(ret)
        }};
        (@slot $k:literal) => { u64 };
    }
    match s.len() {
        0 => full!(),
        2 => full!(0 1),
        4 => full!(0 1 2 3),
        8 => full!(0 1 2 3 4 5 6 7),
        16 => full!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15),
        32 => full!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31),
        64 => {
            full!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63)
        }
        128 => {
            full!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127)
        }
        // Frame::new only makes bucket-sized stacks.
        _ => unreachable!("stack of {} slots is not a bucket size", s.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets() {
        assert_eq!(stack_bucket(0), Some(0));
        assert_eq!(stack_bucket(1), Some(2));
        assert_eq!(stack_bucket(9), Some(16));
        assert_eq!(stack_bucket(128), Some(128));
        assert_eq!(stack_bucket(129), None);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn calls_rust_extern_c_functions_of_mixed_signatures() {
        extern "C" fn mixed(a: i32, x: f32, b: u8, y: f64, c: i64, d: i16, e: u64, f: i64, g: i8, z: f32) -> f64 {
            f64::from(a)
                + f64::from(x) * 10.0
                + f64::from(b) * 100.0
                + y * 1000.0
                + c as f64 * 1e4
                + f64::from(d) * 1e5
                + e as f64 * 1e6
                + f as f64 * 1e7
                + f64::from(g) * 1e8
                + f64::from(z) * 1e9
        }
        let mut fr = Frame::new(2, true);
        for (k, v) in [(-1i32) as i64 as u64, 2, 3, 4, 5, 6].into_iter().enumerate() {
            fr.set(Loc::Int(k), v);
        }
        fr.set(Loc::Float(0), u64::from(1.5f32.to_bits()));
        fr.set(Loc::Float(1), 2.0f64.to_bits());
        fr.set(Loc::Float(2), u64::from(3.0f32.to_bits()));
        fr.set(Loc::Stack(0), 7);
        fr.set(Loc::Stack(1), (-8i8) as i64 as u64);
        // SAFETY: `mixed` takes 7 integer-class arguments (6 in registers,
        // `g` in stack slot 0) and 3 float-class ones (xmm0-2), returns f64.
        let r = f64::from_bits(unsafe { invoke(mixed as *const c_void, &fr, ReturnReg::Float) });
        assert_eq!(r, mixed(-1, 1.5, 2, 2.0, 3, 4, 5, 6, 7, 3.0));
        // The short form: integers only, integer result.
        extern "C" fn sub(a: i64, b: i32) -> i64 {
            a - i64::from(b)
        }
        let mut fr = Frame::new(0, false);
        fr.set(Loc::Int(0), 10);
        fr.set(Loc::Int(1), 3);
        // SAFETY: `sub` takes two integer-class arguments and returns i64.
        assert_eq!(unsafe { invoke(sub as *const c_void, &fr, ReturnReg::Int) }, 7);
    }
}
