//! The copy kernels: the innermost-dim loops of a planned copy (rows, fills, gathers, transposes).
//!
//! Element pointers may be unaligned when the caller's memory is (raw byte
//! destinations), so all accesses are unaligned loads/stores, which cost
//! nothing extra on the targets fnabi runs on.

use super::{Ctx, Kernel};
#[cfg(target_arch = "x86_64")]
use std::mem::MaybeUninit;

/// Tile edge (in elements) of the blocked transpose: a 32×32 tile of 8-byte
/// elements is 8 KiB of source and 8 KiB of destination, well inside L1.
const TILE: usize = 32;

/// # Safety
/// As `strided_copy`.
pub(super) unsafe fn kernel(ctx: &Ctx<'_>, src: *const u8, dst: *mut u8) {
    let inner = ctx.dims[ctx.dims.len() - 1];
    // SAFETY (all arms): forwarded caller contract.
    unsafe {
        match ctx.kernel {
            Kernel::Rows => std::ptr::copy_nonoverlapping(src, dst, inner.n * ctx.es),
            Kernel::Elements => match ctx.es {
                1 => elements::<u8>(src, inner.s, dst, inner.d, inner.n),
                2 => elements::<u16>(src, inner.s, dst, inner.d, inner.n),
                4 => elements::<u32>(src, inner.s, dst, inner.d, inner.n),
                8 => elements::<u64>(src, inner.s, dst, inner.d, inner.n),
                es => {
                    for t in 0..inner.n as isize {
                        std::ptr::copy_nonoverlapping(src.offset(t * inner.s), dst.offset(t * inner.d), es);
                    }
                }
            },
            Kernel::Fill => match ctx.es {
                1 => fill::<u8>(src, dst, inner.n),
                2 => fill::<u16>(src, dst, inner.n),
                4 => fill::<u32>(src, dst, inner.n),
                _ => fill::<u64>(src, dst, inner.n),
            },
            Kernel::Gather => match ctx.es {
                1 => gather::<u8>(src, inner.s, dst, inner.n),
                2 => gather::<u16>(src, inner.s, dst, inner.n),
                4 => gather_u32(src, inner.s, dst, inner.n, ctx.nt),
                _ => gather::<u64>(src, inner.s, dst, inner.n),
            },
            Kernel::Transpose { k } => {
                let p = ctx.dims[k];
                let t = Tile { p: p.n, q: inner.n, src_q: inner.s, dst_p: p.d };
                match ctx.es {
                    1 => transpose_u8(&t, src, dst, ctx.nt),
                    2 => transpose_u16(&t, src, dst, ctx.nt),
                    4 => transpose_u32(&t, src, dst, ctx.nt),
                    _ => transpose_u64(&t, src, dst, ctx.nt),
                }
            }
        }
    }
}

/// # Safety
/// `n` elements at `src + t·s` readable, at `dst + t·d` writable.
#[inline]
unsafe fn elements<T: Copy>(src: *const u8, s: isize, dst: *mut u8, d: isize, n: usize) {
    for t in 0..n as isize {
        // SAFETY: caller contract.
        unsafe { dst.offset(t * d).cast::<T>().write_unaligned(src.offset(t * s).cast::<T>().read_unaligned()) };
    }
}

/// # Safety
/// One element at `src` readable, `n` contiguous elements at `dst` writable.
#[inline]
unsafe fn fill<T: Copy>(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: caller contract.
    unsafe {
        let v = src.cast::<T>().read_unaligned();
        let dst = dst.cast::<T>();
        for t in 0..n {
            dst.add(t).write_unaligned(v);
        }
    }
}

/// Strided row gather into a contiguous row; constant small strides are
/// specialized so that the compiler vectorizes them.
///
/// # Safety
/// `n` elements at `src + t·s` readable, `n` contiguous elements at `dst` writable.
#[inline]
unsafe fn gather<T: Copy>(src: *const u8, s: isize, dst: *mut u8, n: usize) {
    let es = std::mem::size_of::<T>() as isize;
    // SAFETY: caller contract.
    unsafe {
        match s / es {
            2 if s % es == 0 => gather_const::<T, 2>(src.cast(), dst.cast(), n),
            3 if s % es == 0 => gather_const::<T, 3>(src.cast(), dst.cast(), n),
            4 if s % es == 0 => gather_const::<T, 4>(src.cast(), dst.cast(), n),
            _ => elements::<T>(src, s, dst, es, n),
        }
    }
}

/// # Safety
/// As `gather` with stride `S` elements.
#[inline]
unsafe fn gather_const<T: Copy, const S: usize>(src: *const T, dst: *mut T, n: usize) {
    for t in 0..n {
        // SAFETY: caller contract.
        unsafe { dst.add(t).write_unaligned(src.add(t * S).read_unaligned()) };
    }
}

/// 4-byte gather: SSE de-interleave (with streaming stores for large
/// outputs) for stride 2, else the generic gather.
///
/// # Safety
/// As `gather`.
#[inline]
unsafe fn gather_u32(src: *const u8, s: isize, dst: *mut u8, n: usize, nt: bool) {
    #[cfg(target_arch = "x86_64")]
    if s == 8 && n >= 32 && std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F (checked above); caller contract.
        unsafe { gather2_u32_avx512(src, dst, n, nt) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if s == 8 {
        use std::arch::x86_64::*;
        // SAFETY: SSE/SSE2 are baseline on x86-64. Destination element t
        // comes from source element 2t; a vector step at t reads source
        // elements 2t..=2t+7, and running it only while t + 4 < n keeps
        // 2t + 7 <= 2(n-1) - 1, inside the row's checked extent.
        unsafe {
            let mut t = 0usize;
            if nt {
                // Scalar head up to a 16-byte aligned destination.
                while t < n && !(dst.add(t * 4) as usize).is_multiple_of(16) {
                    dst.add(t * 4).cast::<u32>().write_unaligned(src.add(t * 8).cast::<u32>().read_unaligned());
                    t += 1;
                }
            }
            while t + 4 < n {
                let a = _mm_loadu_ps(src.add(t * 8).cast());
                let b = _mm_loadu_ps(src.add(t * 8 + 16).cast());
                let v = _mm_shuffle_ps::<0b10_00_10_00>(a, b);
                if nt {
                    _mm_stream_ps(dst.add(t * 4).cast(), v);
                } else {
                    _mm_storeu_ps(dst.add(t * 4).cast(), v);
                }
                t += 4;
            }
            while t < n {
                dst.add(t * 4).cast::<u32>().write_unaligned(src.add(t * 8).cast::<u32>().read_unaligned());
                t += 1;
            }
        }
        return;
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = nt;
    // SAFETY: caller contract.
    unsafe { gather::<u32>(src, s, dst, n) }
}

/// 4-byte stride-2 gather with AVX-512: two source lines in, one whole
/// destination line out (a streaming store when `nt`).
///
/// # Safety
/// As `gather` with a stride of 2 elements; the CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn gather2_u32_avx512(src: *const u8, dst: *mut u8, n: usize, nt: bool) {
    use std::arch::x86_64::*;
    let even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    let mut t = 0usize;
    // SAFETY (whole body): destination element t comes from source element
    // 2t, and the caller guarantees elements 0, 2, …, 2(n-1). A vector step
    // at t reads source elements 2t..=2t+31; running it only while
    // t + 16 < n keeps 2t + 31 <= 2(n-1) - 1, inside the row's extent (the
    // odd elements in between belong to the same checked extent).
    unsafe {
        if nt {
            while t < n && !(dst.add(t * 4) as usize).is_multiple_of(64) {
                dst.add(t * 4).cast::<u32>().write_unaligned(src.add(t * 8).cast::<u32>().read_unaligned());
                t += 1;
            }
        }
        while t + 16 < n {
            let a = _mm512_loadu_ps(src.add(t * 8).cast());
            let b = _mm512_loadu_ps(src.add(t * 8 + 64).cast());
            let v = _mm512_permutex2var_ps(a, even, b);
            if nt {
                _mm512_stream_ps(dst.add(t * 4).cast(), v);
            } else {
                _mm512_storeu_ps(dst.add(t * 4).cast(), v);
            }
            t += 16;
        }
        while t < n {
            dst.add(t * 4).cast::<u32>().write_unaligned(src.add(t * 8).cast::<u32>().read_unaligned());
            t += 1;
        }
    }
}

/// A 2-D transpose problem: `dst[p·dst_p + q·es] = src[p·es + q·src_q]`
/// for `p < self.p`, `q < self.q` (byte strides).
struct Tile {
    p: usize,
    q: usize,
    src_q: isize,
    dst_p: isize,
}

/// Cache-blocked transpose, one element at a time inside a tile.
///
/// # Safety
/// Every `(p, q)` source and destination element of `t` is accessible.
unsafe fn transpose_scalar<T: Copy>(t: &Tile, src: *const u8, dst: *mut u8) {
    let es = std::mem::size_of::<T>() as isize;
    for pb in (0..t.p).step_by(TILE) {
        let pe = (pb + TILE).min(t.p);
        for qb in (0..t.q).step_by(TILE) {
            let qe = (qb + TILE).min(t.q);
            // SAFETY: caller contract (p < t.p, q < t.q).
            unsafe { tile_scalar::<T>(t, src, dst, es, pb..pe, qb..qe) };
        }
    }
}

/// # Safety
/// As `transpose_scalar`, for the given sub-ranges.
#[inline]
unsafe fn tile_scalar<T: Copy>(
    t: &Tile,
    src: *const u8,
    dst: *mut u8,
    es: isize,
    ps: std::ops::Range<usize>,
    qs: std::ops::Range<usize>,
) {
    for p in ps {
        let p = p as isize;
        for q in qs.clone() {
            let q = q as isize;
            // SAFETY: caller contract.
            unsafe {
                dst.offset(p * t.dst_p + q * es)
                    .cast::<T>()
                    .write_unaligned(src.offset(p * es + q * t.src_q).cast::<T>().read_unaligned())
            };
        }
    }
}

/// The elements of `t` outside its tiled part `[0, p_done) × [0, q_done)`
/// (the ragged right and bottom edges), one at a time.
///
/// # Safety
/// As `transpose_scalar`; `p_done <= t.p`, `q_done <= t.q`.
#[cfg(target_arch = "x86_64")]
unsafe fn ragged_edges<T: Copy>(t: &Tile, src: *const u8, dst: *mut u8, p_done: usize, q_done: usize) {
    let es = std::mem::size_of::<T>() as isize;
    // SAFETY: both ranges are inside the problem (caller contract).
    unsafe {
        tile_scalar::<T>(t, src, dst, es, 0..p_done, q_done..t.q);
        tile_scalar::<T>(t, src, dst, es, p_done..t.p, 0..t.q);
    }
}

/// Whether streaming stores of `align`-byte vectors may be used: wanted
/// (`nt`), and every destination row start is `align`-byte aligned.
#[cfg(target_arch = "x86_64")]
fn streams(nt: bool, dst: *mut u8, t: &Tile, align: usize) -> bool {
    nt && (dst as usize).is_multiple_of(align) && t.dst_p.unsigned_abs().is_multiple_of(align)
}

/// How many of `n` lines `pitch` bytes apart share the fullest set of a
/// 64-set L1 with 64-byte lines (x86-64 L1 data caches since long: 32 or
/// 48 KiB, 8 or 12 ways). A pitch that is not a whole number of lines
/// spreads them.
#[cfg(any(target_arch = "x86_64", test))]
fn lines_per_l1_set(n: usize, pitch: isize) -> usize {
    let pitch = pitch.unsigned_abs();
    if !pitch.is_multiple_of(64) {
        return 1;
    }
    // Line i falls into set (first + i·step) mod 64: `64 / gcd(step, 64)`
    // sets in turn.
    let step = (pitch / 64) % 64;
    let sets = if step == 0 { 1 } else { 64 >> step.trailing_zeros().min(6) };
    n.div_ceil(sets)
}

/// Whole destination lines of consecutive transpose blocks, stored so that
/// no more than 8 stores in a row go to one L1 set: with power-of-two row
/// pitches all lines of a block (same columns, consecutive rows) share one
/// or two sets, and so many stores into one set refetch each other's lines
/// (each store first fetches its line). A committed block stores its first
/// half 8 lines at a time, each 8 followed by 8 of the previous block's
/// second half, which waited (on the development machine: 1024² f32
/// 154 → 110 µs; 2048² u8 11.7 → 19.0 GB/s). Streaming stores do not need
/// this (they bypass the L1).
#[cfg(target_arch = "x86_64")]
struct InterleavedStores<const N: usize> {
    /// Not zeroed: a kernel call may be one small tile of a batch, where
    /// clearing 2–8 KiB cost more than the tile (a batch of 4096 16×16 f32
    /// transposes: 227–232 µs with it, 170–176 µs without).
    lines: [[MaybeUninit<std::arch::x86_64::__m512i>; N]; 2],
    at: [*mut u8; 2],
    cur: usize,
    waiting: bool,
}

#[cfg(target_arch = "x86_64")]
impl<const N: usize> InterleavedStores<N> {
    fn new() -> Self {
        const { assert!(N.is_multiple_of(16)) };
        InterleavedStores {
            lines: [[const { MaybeUninit::uninit() }; N]; 2],
            at: [std::ptr::null_mut(); 2],
            cur: 0,
            waiting: false,
        }
    }

    /// The block being made: line `i` goes to `d + i·pitch` of its commit.
    /// Every line must be written before the commit.
    #[inline(always)]
    fn block(&mut self) -> &mut [MaybeUninit<std::arch::x86_64::__m512i>; N] {
        &mut self.lines[self.cur]
    }

    /// Stores the block made, to lines `d + i·pitch`, half now, half with
    /// the next commit (or `finish`).
    ///
    /// # Safety
    /// Every line of `block()` was written since the last commit; the `N`
    /// lines of 64 bytes at `d + i·pitch` are writable, and stay so until
    /// the next commit or `finish`; the CPU supports AVX-512F.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn commit(&mut self, d: *mut u8, pitch: isize) {
        use std::arch::x86_64::*;
        let (cur, prev) = (self.cur, 1 - self.cur);
        self.at[cur] = d;
        let half = N / 2;
        for g in 0..half / 8 {
            // SAFETY: the lines are written and their destinations writable
            // (this and the previous commit's contract).
            unsafe {
                for i in 8 * g..8 * g + 8 {
                    _mm512_storeu_si512(d.offset(i as isize * pitch).cast(), self.lines[cur][i].assume_init());
                }
                if self.waiting {
                    for i in half + 8 * g..half + 8 * g + 8 {
                        let to = self.at[prev].offset(i as isize * pitch);
                        _mm512_storeu_si512(to.cast(), self.lines[prev][i].assume_init());
                    }
                }
            }
        }
        self.waiting = true;
        self.cur = prev;
    }

    /// Stores what the last commit left waiting.
    ///
    /// # Safety
    /// As `commit`'s, for the last commit.
    #[target_feature(enable = "avx512f")]
    unsafe fn finish(&mut self, pitch: isize) {
        use std::arch::x86_64::*;
        if !self.waiting {
            return;
        }
        let last = 1 - self.cur;
        for i in N / 2..N {
            // SAFETY: as the last commit's contract.
            unsafe {
                let to = self.at[last].offset(i as isize * pitch);
                _mm512_storeu_si512(to.cast(), self.lines[last][i].assume_init());
            }
        }
        self.waiting = false;
    }
}

/// True when `t` holds at least one `edge × edge` block and the CPU has
/// AVX-512F and BW (the 1- and 2-byte block kernels).
#[cfg(target_arch = "x86_64")]
fn avx512bw_blocks(t: &Tile, edge: usize) -> bool {
    t.p >= edge
        && t.q >= edge
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
}

/// 1-byte transpose: 64×64 AVX-512BW blocks when the CPU has them, else
/// 64×64 AVX2 ones (`transpose_u8_avx2`) when it has AVX2, else
/// cache-blocked scalar tiles.
///
/// # Safety
/// As `transpose_scalar`.
unsafe fn transpose_u8(t: &Tile, src: *const u8, dst: *mut u8, nt: bool) {
    #[cfg(target_arch = "x86_64")]
    if avx512bw_blocks(t, 64) {
        // SAFETY: the CPU has AVX-512F and BW (checked above); caller contract.
        unsafe { transpose_u8_avx512(t, src, dst, nt) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if t.p >= 64 && t.q >= 64 && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked above); caller contract.
        unsafe { transpose_u8_avx2(t, src, dst, nt) };
        return;
    }
    let _ = nt;
    // SAFETY: caller contract.
    unsafe { transpose_scalar::<u8>(t, src, dst) }
}

/// 1-byte transpose with AVX-512BW: 64×64 blocks (each source and
/// destination row one cache line), walked as `transpose_u32_avx512` walks
/// its tiles. A block is four quarters of 16 source lines, each transposed
/// as four 16×16 tiles side by side in the registers' 128-bit lanes; the
/// quarters' lanes are then gathered into whole destination lines.
///
/// # Safety
/// As `transpose_scalar`, and the CPU must support AVX-512F and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn transpose_u8_avx512(t: &Tile, src: *const u8, dst: *mut u8, nt: bool) {
    use std::arch::x86_64::*;
    let nt = streams(nt, dst, t, 64);
    let (p64, q64) = (t.p & !63, t.q & !63);
    let interleave = lines_per_l1_set(64, t.dst_p) > 8;
    let mut out = InterleavedStores::<64>::new();
    diagonal_tiles(p64 / 64, q64 / 64, 64, if nt { 16 } else { 64 }, |p, q| {
        if nt && p + 191 < t.p && q + 191 < t.q {
            // SAFETY: the source of the block two steps down this diagonal,
            // inside the problem (see `transpose_u32_avx512`).
            unsafe { prefetch_lines(src.offset((p + 128) as isize + (q + 128) as isize * t.src_q), t.src_q, 64) };
        }
        // quarter[s][c], lane l: destination row p + 16·l + c, elements
        // q + 16·s .. + 16.
        let mut quarter = [[_mm512_setzero_si512(); 16]; 4];
        for (s, w) in quarter.iter_mut().enumerate() {
            // SAFETY: source rows q + 16·s .. + 16, elements p .. p + 64 are
            // in the problem (p + 63 < t.p, q + 63 < t.q; caller contract).
            *w = unsafe { load_lines(src.offset(p as isize + (q + 16 * s) as isize * t.src_q), t.src_q) };
            transpose16x16_u8_lanes(w);
        }
        // Every line of the block is written here.
        let block = out.block();
        for c in 0..16 {
            let [a, b, e, f] = [quarter[0][c], quarter[1][c], quarter[2][c], quarter[3][c]];
            let (ab_lo, ab_hi) = (_mm512_shuffle_i64x2::<0x44>(a, b), _mm512_shuffle_i64x2::<0xee>(a, b));
            let (ef_lo, ef_hi) = (_mm512_shuffle_i64x2::<0x44>(e, f), _mm512_shuffle_i64x2::<0xee>(e, f));
            block[c].write(_mm512_shuffle_i64x2::<0x88>(ab_lo, ef_lo));
            block[16 + c].write(_mm512_shuffle_i64x2::<0xdd>(ab_lo, ef_lo));
            block[32 + c].write(_mm512_shuffle_i64x2::<0x88>(ab_hi, ef_hi));
            block[48 + c].write(_mm512_shuffle_i64x2::<0xdd>(ab_hi, ef_hi));
        }
        // SAFETY: every line of the block was written above; destination
        // rows p .. p + 64, elements q .. q + 64 are in the problem (caller
        // contract) and nothing else writes them; streaming stores only to
        // 64-byte aligned rows (checked above).
        unsafe {
            let d = dst.offset(p as isize * t.dst_p + q as isize);
            if nt {
                for (i, v) in out.block().iter().enumerate() {
                    _mm512_stream_si512(d.offset(i as isize * t.dst_p).cast(), v.assume_init());
                }
            } else if !interleave {
                for (i, v) in out.block().iter().enumerate() {
                    _mm512_storeu_si512(d.offset(i as isize * t.dst_p).cast(), v.assume_init());
                }
            } else {
                out.commit(d, t.dst_p);
            }
        }
    });
    // SAFETY: the last block's lines, as committed.
    unsafe { out.finish(t.dst_p) };
    // SAFETY: caller contract.
    unsafe { ragged_edges::<u8>(t, src, dst, p64, q64) };
}

/// Transposes four 16×16 blocks of bytes side by side: each 128-bit lane of
/// the 16 registers is one block, and afterwards `r[j]` byte `i` of a lane
/// is the old `r[i]` byte `j` of that lane.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn transpose16x16_u8_lanes(r: &mut [std::arch::x86_64::__m512i; 16]) {
    use std::arch::x86_64::*;
    let mut t = [_mm512_setzero_si512(); 16];
    // t[2i] holds rows 2i, 2i+1 of columns 0-7 as byte pairs, t[2i+1] of 8-15.
    for i in 0..8 {
        t[2 * i] = _mm512_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi8(r[2 * i], r[2 * i + 1]);
    }
    // u[4j + m] holds rows 4j..4j+3 of columns 4m..4m+3.
    let mut u = [_mm512_setzero_si512(); 16];
    for j in 0..4 {
        for x in 0..2 {
            u[4 * j + 2 * x] = _mm512_unpacklo_epi16(t[4 * j + x], t[4 * j + 2 + x]);
            u[4 * j + 2 * x + 1] = _mm512_unpackhi_epi16(t[4 * j + x], t[4 * j + 2 + x]);
        }
    }
    // t[8h + n] holds rows 8h..8h+7 of columns 2n, 2n+1.
    for h in 0..2 {
        for m in 0..4 {
            t[8 * h + 2 * m] = _mm512_unpacklo_epi32(u[8 * h + m], u[8 * h + 4 + m]);
            t[8 * h + 2 * m + 1] = _mm512_unpackhi_epi32(u[8 * h + m], u[8 * h + 4 + m]);
        }
    }
    // r[c] holds rows 0-15 of column c.
    for n in 0..8 {
        r[2 * n] = _mm512_unpacklo_epi64(t[n], t[8 + n]);
        r[2 * n + 1] = _mm512_unpackhi_epi64(t[n], t[8 + n]);
    }
}

/// 2-byte transpose: 32×32 AVX-512BW blocks when the CPU has them, else
/// 32×32 AVX2 ones (`transpose_u16_avx2`) when it has AVX2, else
/// cache-blocked scalar tiles.
///
/// # Safety
/// As `transpose_scalar`.
unsafe fn transpose_u16(t: &Tile, src: *const u8, dst: *mut u8, nt: bool) {
    #[cfg(target_arch = "x86_64")]
    if avx512bw_blocks(t, 32) {
        // SAFETY: the CPU has AVX-512F and BW (checked above); caller contract.
        unsafe { transpose_u16_avx512(t, src, dst, nt) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if t.p >= 32 && t.q >= 32 && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked above); caller contract.
        unsafe { transpose_u16_avx2(t, src, dst, nt) };
        return;
    }
    let _ = nt;
    // SAFETY: caller contract.
    unsafe { transpose_scalar::<u16>(t, src, dst) }
}

/// 2-byte transpose with AVX-512BW: 32×32 blocks (each source and
/// destination row one cache line), walked as `transpose_u32_avx512` walks
/// its tiles. A block is two halves of 16 source lines, each transposed as
/// two 16×16 tiles side by side in the registers' 256-bit halves; the two
/// halves' rows are joined into whole destination lines, stored at once
/// (through `InterleavedStores` they measured slower here: 153 → 180 µs
/// for 1024×2048).
///
/// # Safety
/// As `transpose_scalar`, and the CPU must support AVX-512F and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn transpose_u16_avx512(t: &Tile, src: *const u8, dst: *mut u8, nt: bool) {
    use std::arch::x86_64::*;
    let nt = streams(nt, dst, t, 64);
    let (p32, q32) = (t.p & !31, t.q & !31);
    diagonal_tiles(p32 / 32, q32 / 32, 32, 32, |p, q| {
        if nt && p + 95 < t.p && q + 95 < t.q {
            // SAFETY: the source of the block two steps down this diagonal,
            // inside the problem (see `transpose_u32_avx512`).
            unsafe { prefetch_lines(src.offset((p + 64) as isize * 2 + (q + 64) as isize * t.src_q), t.src_q, 32) };
        }
        // Source rows q .. q + 16 and q + 16 .. q + 32, elements p .. p + 32.
        // SAFETY: inside the problem (p + 31 < t.p, q + 31 < t.q; caller
        // contract); AVX-512BW is enabled.
        let (top, bottom) = unsafe { (load_pairs_u16(t, src, p, q), load_pairs_u16(t, src, p, q + 16)) };
        // top[k] = [destination row p + k | row p + 16 + k], elements
        // q .. q + 16; bottom[k] the same for elements q + 16 .. q + 32.
        // SAFETY: destination rows p .. p + 32, elements q .. q + 32 are in
        // the problem (caller contract); streaming stores only to 64-byte
        // aligned rows (checked above).
        unsafe {
            let d = dst.offset(p as isize * t.dst_p + q as isize * 2);
            for k in 0..16 {
                let upper = _mm512_shuffle_i64x2::<0x44>(top[k], bottom[k]);
                let lower = _mm512_shuffle_i64x2::<0xee>(top[k], bottom[k]);
                if nt {
                    _mm512_stream_si512(d.offset(k as isize * t.dst_p).cast(), upper);
                    _mm512_stream_si512(d.offset((16 + k) as isize * t.dst_p).cast(), lower);
                } else {
                    _mm512_storeu_si512(d.offset(k as isize * t.dst_p).cast(), upper);
                    _mm512_storeu_si512(d.offset((16 + k) as isize * t.dst_p).cast(), lower);
                }
            }
        }
    });
    // SAFETY: caller contract.
    unsafe { ragged_edges::<u16>(t, src, dst, p32, q32) };
}

/// Source rows `q .. q + 16`, elements `p .. p + 32` (one cache line each),
/// transposed as two 16×16 blocks (see `transpose16x16_u16_pairs`).
///
/// # Safety
/// The 16 rows of 32 elements are inside the problem; the CPU must support
/// AVX-512F and BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
unsafe fn load_pairs_u16(t: &Tile, src: *const u8, p: usize, q: usize) -> [std::arch::x86_64::__m512i; 16] {
    // SAFETY: caller contract.
    let mut r = unsafe { load_lines(src.offset(p as isize * 2 + q as isize * t.src_q), t.src_q) };
    transpose16x16_u16_pairs(&mut r);
    r
}

/// `R` whole lines of 64 bytes, `pitch` bytes apart from `first` on.
///
/// # Safety
/// The `R` lines are readable; the CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn load_lines<const R: usize>(first: *const u8, pitch: isize) -> [std::arch::x86_64::__m512i; R] {
    use std::arch::x86_64::*;
    let mut r = [_mm512_setzero_si512(); R];
    for (i, v) in r.iter_mut().enumerate() {
        // SAFETY: caller contract.
        *v = unsafe { _mm512_loadu_si512(first.offset(i as isize * pitch).cast()) };
    }
    r
}

/// Transposes two 16×16 blocks of 16-bit lanes side by side: the low and
/// the high 256 bits of the 16 registers are each one block, and afterwards
/// `r[j]` element `i` of either half is the old `r[i]` element `j` of that
/// half.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn transpose16x16_u16_pairs(r: &mut [std::arch::x86_64::__m512i; 16]) {
    use std::arch::x86_64::*;
    let mut t = [_mm512_setzero_si512(); 16];
    // Rows 2i, 2i+1 interleaved by 16 bits: in each 128-bit lane, four
    // columns (0-3 / 4-7 of the lane's eight) as (row 2i, row 2i+1) pairs.
    for i in 0..8 {
        t[2 * i] = _mm512_unpacklo_epi16(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi16(r[2 * i], r[2 * i + 1]);
    }
    // Row quads by 32 bits: u[4j + m] holds rows 4j..4j+3 of lane columns
    // 2m, 2m + 1.
    let mut u = [_mm512_setzero_si512(); 16];
    for j in 0..4 {
        for x in 0..2 {
            u[4 * j + 2 * x] = _mm512_unpacklo_epi32(t[4 * j + x], t[4 * j + 2 + x]);
            u[4 * j + 2 * x + 1] = _mm512_unpackhi_epi32(t[4 * j + x], t[4 * j + 2 + x]);
        }
    }
    // Row octets by 64 bits: t[8h + k] holds rows 8h..8h+7 of lane column k.
    for h in 0..2 {
        for m in 0..4 {
            t[8 * h + 2 * m] = _mm512_unpacklo_epi64(u[8 * h + m], u[8 * h + 4 + m]);
            t[8 * h + 2 * m + 1] = _mm512_unpackhi_epi64(u[8 * h + m], u[8 * h + 4 + m]);
        }
    }
    // Lanes 0 and 2 of t[k] hold columns k of the two blocks (rows 0-7),
    // lanes 1 and 3 columns k + 8; t[8 + k] the same for rows 8-15.
    let col = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
    let col8 = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    for k in 0..8 {
        r[k] = _mm512_permutex2var_epi64(t[k], col, t[8 + k]);
        r[8 + k] = _mm512_permutex2var_epi64(t[k], col8, t[8 + k]);
    }
}

/// 4-byte transpose: the AVX-512 or AVX kernel where the CPU has it, else
/// tiles of 4×4 SSE in-register transposes; streaming stores when `nt`
/// and the destination rows are 16-byte aligned.
///
/// # Safety
/// As `transpose_scalar`.
unsafe fn transpose_u32(t: &Tile, src: *const u8, dst: *mut u8, nt: bool) {
    #[cfg(target_arch = "x86_64")]
    if t.p >= 16 && t.q >= 16 && std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F (checked above); caller contract.
        unsafe { transpose_u32_avx512(t, src, dst, nt) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if t.p >= 16 && t.q >= 16 && std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX (checked above); caller contract.
        unsafe { transpose_u32_avx(t, src, dst, nt) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let nt = streams(nt, dst, t, 16);
        let (p4, q4) = (t.p & !3, t.q & !3);
        for pb in (0..p4).step_by(TILE) {
            let pe = (pb + TILE).min(p4);
            for qb in (0..q4).step_by(TILE) {
                let qe = (qb + TILE).min(q4);
                let mut p = pb;
                while p < pe {
                    let mut q = qb;
                    while q < qe {
                        // SAFETY: SSE is baseline on x86-64; p + 3 < t.p and
                        // q + 3 < t.q, so all 16 elements are in the problem.
                        unsafe {
                            let s = src.offset(p as isize * 4 + q as isize * t.src_q);
                            let mut r0 = _mm_loadu_ps(s.cast());
                            let mut r1 = _mm_loadu_ps(s.offset(t.src_q).cast());
                            let mut r2 = _mm_loadu_ps(s.offset(2 * t.src_q).cast());
                            let mut r3 = _mm_loadu_ps(s.offset(3 * t.src_q).cast());
                            _MM_TRANSPOSE4_PS(&mut r0, &mut r1, &mut r2, &mut r3);
                            let d = dst.offset(p as isize * t.dst_p + q as isize * 4);
                            if nt {
                                _mm_stream_ps(d.cast(), r0);
                                _mm_stream_ps(d.offset(t.dst_p).cast(), r1);
                                _mm_stream_ps(d.offset(2 * t.dst_p).cast(), r2);
                                _mm_stream_ps(d.offset(3 * t.dst_p).cast(), r3);
                            } else {
                                _mm_storeu_ps(d.cast(), r0);
                                _mm_storeu_ps(d.offset(t.dst_p).cast(), r1);
                                _mm_storeu_ps(d.offset(2 * t.dst_p).cast(), r2);
                                _mm_storeu_ps(d.offset(3 * t.dst_p).cast(), r3);
                            }
                        }
                        q += 4;
                    }
                    p += 4;
                }
            }
        }
        // SAFETY: caller contract.
        unsafe { ragged_edges::<u32>(t, src, dst, p4, q4) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = nt;
        // SAFETY: caller contract.
        unsafe { transpose_scalar::<u32>(t, src, dst) }
    }
}

/// 4-byte transpose with AVX-512: 16×16 in-register transposes, so that each
/// source cache line is read once, whole, and each destination line is
/// written once, whole (one streaming store when `nt` and the rows are
/// 64-byte aligned — no read-for-ownership, no partial lines).
///
/// # Safety
/// As `transpose_scalar`, and the CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn transpose_u32_avx512(t: &Tile, src: *const u8, dst: *mut u8, nt: bool) {
    use std::arch::x86_64::*;
    let nt = streams(nt, dst, t, 64);
    let (p16, q16) = (t.p & !15, t.q & !15);
    // Tile order: diagonals of super-blocks of tiles. When the row pitches
    // are powers of two (a 1024² f32 has 4 KiB rows) the 16 source lines of
    // one tile share one L1 set, and so do its 16 destination lines; walking
    // a row or a column of tiles keeps one side on the same set tile after
    // tile, and its lines evict each other before they are used.
    // Consecutive tiles on a diagonal differ in both p and q, so both sides
    // change set every tile. With ordinary stores, 16 lines stored into one
    // set are still too many: they go out through `InterleavedStores`.
    // Streaming stores go to write-combining buffers, not the L1: there a
    // tile's 16 stores stay together. (1024² f32, ordinary stores: 185 ->
    // 110 µs; 4096² streamed: 7.0 -> 4.4 ms on the development machine;
    // DESIGN.md, "Transpose".)
    let (tp, tq) = (p16 / 16, q16 / 16);
    if nt || lines_per_l1_set(16, t.dst_p) <= 8 {
        diagonal_tiles(tp, tq, 16, if nt { 16 } else { 64 }, |p, q| {
            // SAFETY: p + 15 < t.p and q + 15 < t.q: all 256 elements are
            // in the problem (caller contract), and so are those prefetched
            // (p + 47 < t.p, q + 47 < t.q); AVX-512F is enabled; streaming
            // stores only to 64-byte aligned rows (checked above).
            unsafe {
                // The source of the tile two steps down this diagonal, from
                // memory (a streamed output is too large for the caches, and
                // its input usually too): 4096² 73–75 → 80 % of memcpy.
                if nt && p + 47 < t.p && q + 47 < t.q {
                    prefetch_lines(src.offset((p + 32) as isize * 4 + (q + 32) as isize * t.src_q), t.src_q, 16);
                }
                let r = load_tile16(t, src, p, q);
                let d = dst.offset(p as isize * t.dst_p + q as isize * 4);
                for (i, v) in r.iter().enumerate() {
                    if nt {
                        _mm512_stream_ps(d.offset(i as isize * t.dst_p).cast(), *v);
                    } else {
                        _mm512_storeu_ps(d.offset(i as isize * t.dst_p).cast(), *v);
                    }
                }
            }
        });
    } else {
        let mut out = InterleavedStores::<16>::new();
        diagonal_tiles(tp, tq, 16, 64, |p, q| {
            // SAFETY: as above.
            let r = unsafe { load_tile16(t, src, p, q) };
            // Every line of the block is written here.
            for (line, v) in out.block().iter_mut().zip(r) {
                line.write(_mm512_castps_si512(v));
            }
            // SAFETY: every line of the block was written above; destination
            // rows p .. p + 16, elements q .. q + 16 are in the problem
            // (caller contract) and nothing else writes them.
            unsafe { out.commit(dst.offset(p as isize * t.dst_p + q as isize * 4), t.dst_p) };
        });
        // SAFETY: the last tile's lines, as committed.
        unsafe { out.finish(t.dst_p) };
    }
    // SAFETY: caller contract.
    unsafe { ragged_edges::<u32>(t, src, dst, p16, q16) };
}

/// 4-byte transpose with AVX (CPUs without AVX-512): 16×16 tiles, each
/// made of four 8×8 in-register transposes, on the walk of `avx_walk`. A
/// tile reads its 16 source lines 8 at a time, each whole (both halves
/// right after each other, while the 8 lines that share an L1 set are still
/// there), and writes its 16 destination lines whole, from a staging copy
/// on the stack (two adjacent 32-byte stores per line: a full line for the
/// write-combining buffers when streaming).
///
/// # Safety
/// As `transpose_scalar`, and the CPU must support AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn transpose_u32_avx(t: &Tile, src: *const u8, dst: *mut u8, nt: bool) {
    use std::arch::x86_64::*;
    let nt = streams(nt, dst, t, 32);
    let tile = |p: usize, q: usize| {
        let mut out = [[_mm256_setzero_ps(); 2]; 16];
        // SAFETY: the tile is in the problem (`avx_walk`); AVX is enabled.
        unsafe {
            line_tile(t, src, dst, nt, (p, q), &mut out, |s| _mm256_loadu_ps(s.cast()), |r| transpose8x8(r), |v| v)
        };
    };
    // SAFETY: the source part of the caller contract.
    unsafe { avx_walk(t, src, 16, nt, tile) };
    // SAFETY: caller contract.
    unsafe { ragged_edges::<u32>(t, src, dst, t.p & !15, t.q & !15) };
}

/// One tile of the AVX kernels at source column `p`, row `q`: `2k`×`2k`
/// elements (`k` = `V`'s lanes; a row of the tile is one 64-byte line), made
/// of four `k`×`k` in-register transposes. It reads its `2k` source lines
/// `k` at a time, each whole (both halves right after each other, while the
/// `k` lines that may share an L1 set are still there), and writes its `2k`
/// destination lines whole from `out`, a staging copy on the stack (two
/// adjacent 32-byte stores per line: a full line for the write-combining
/// buffers when streaming). `load` reads one vector, `transpose` turns `k`
/// rows into `k` columns, `lines` views a vector as floats for the stores.
/// (The three kernels that call it stay three functions: one generic
/// kernel taking the loads and transposes as closures, itself without AVX
/// enabled, measured 3–5× slower: its vector code was no longer inlined.)
///
/// # Safety
/// Source columns `p .. p + 2k` and rows `q .. q + 2k` and the destination
/// lines they go to are in the problem (the caller contract of
/// `transpose_scalar`); `out` has `2k` lines; streaming stores (`nt`) only to
/// 32-byte aligned rows; the CPU has what `load` and `transpose` use.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn line_tile<V: Copy, const K: usize>(
    t: &Tile,
    src: *const u8,
    dst: *mut u8,
    nt: bool,
    (p, q): (usize, usize),
    out: &mut [[std::arch::x86_64::__m256; 2]],
    load: impl Fn(*const u8) -> V,
    transpose: impl Fn(&mut [V; K]),
    lines: impl Fn(V) -> std::arch::x86_64::__m256,
) {
    let es = 32 / K;
    debug_assert_eq!(out.len(), 2 * K);
    // `h` picks the source rows (q + kh ..) and the half of each
    // destination line they fill, `half` the source columns (p + k·half ..)
    // and the destination rows.
    #[allow(clippy::needless_range_loop)]
    for h in 0..2 {
        for half in 0..2 {
            // SAFETY: caller contract (all 4k² elements are in the problem).
            let s = unsafe { src.offset(((p + K * half) * es) as isize + (q + K * h) as isize * t.src_q) };
            // SAFETY: as above: rows q + kh + i, i < k.
            let mut r: [V; K] = std::array::from_fn(|i| load(unsafe { s.offset(i as isize * t.src_q) }));
            transpose(&mut r);
            for (i, v) in r.into_iter().enumerate() {
                out[K * half + i][h] = lines(v);
            }
        }
    }
    // SAFETY: destination rows p .. p + 2k, elements q .. q + 2k are in the
    // problem (caller contract); streaming only to aligned rows (likewise).
    unsafe { store_lines_avx(dst.offset(p as isize * t.dst_p + (q * es) as isize), t.dst_p, out, nt) };
}

/// Calls `tile(p, q)` for each `edge`×`edge` tile of `t` (its whole tiles;
/// `edge` elements fill one 64-byte line), in the order of the AVX kernels,
/// prefetching the source of a tile a few steps before it is transposed.
///
/// Streamed (an output too large for the caches): blocks of
/// [`AVX_BLOCK_NT`]² tiles, each walked along its source rows, with the
/// tile four steps ahead in that order prefetched (`streamed_tiles`). On an
/// AMD EPYC without AVX-512 (2026-11-27, old and new bench binaries
/// alternated): 4096² f32 15.2–17.3 → 9.6–10.1 ms (41–42 → 64–75 % of
/// `memcpy/4096`), 2048² f64 7.6–8.8 → 4.2–4.6 ms, 4096² u16 9.7–11.2 →
/// 8.4–9.3 ms, 4096×8192 u8 15.9–18.9 → 14.9–17.0 ms, and from a source on
/// 4 KiB pages (a `Vec`) 4096² f32 21.5–23.4 → 11.1 ms. Blocks of 32 tiles
/// along the source rows measured as slow as the older walks for f32 (16.7
/// ms), 8 or 4 a little slower than 16, whole source rows 17–19 ms, the
/// diagonals of 16-tile super-blocks (the earlier walk) 15–17 ms; without
/// the prefetch 10.4–10.6 ms, two or eight tiles ahead the same as four.
/// In cache: row order, which that CPU's prefetchers follow where its L2
/// (512 KiB) is too small for the problem (1024² f32: 31–38 with SSE
/// tiles; 18 on diagonals, 31–40 in row order, 56–66 with the prefetch, 3
/// steps ahead the same; storing 8 lines at a time as `InterleavedStores`
/// does measured no better there; the streamed blocks measured no better,
/// f64 slower).
///
/// # Safety
/// The source part of the caller contract of `transpose_scalar`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn avx_walk(t: &Tile, src: *const u8, edge: usize, nt: bool, mut tile: impl FnMut(usize, usize)) {
    let es = 64 / edge;
    let (pe, qe) = (t.p / edge * edge, t.q / edge * edge);
    if nt {
        streamed_tiles(
            pe / edge,
            qe / edge,
            edge,
            |p, q| {
                // SAFETY: (p, q) is a whole tile of the problem (`streamed_tiles`
                // gives only those), so its `edge` source lines are in the source.
                unsafe { prefetch_lines(src.offset((p * es) as isize + q as isize * t.src_q), t.src_q, edge) }
            },
            tile,
        );
    } else {
        for p in (0..pe).step_by(edge) {
            for q in (0..qe).step_by(edge) {
                if q + 3 * edge <= t.q {
                    // SAFETY: the tile two steps along this row is in the
                    // source (checked just above).
                    unsafe {
                        prefetch_lines(src.offset((p * es) as isize + (q + 2 * edge) as isize * t.src_q), t.src_q, edge)
                    };
                }
                tile(p, q);
            }
        }
    }
}

/// Calls `tile(p, q)` (element offsets, multiples of `edge`) for each of
/// `tp × tq` tiles of `edge × edge` elements, in blocks of up to
/// [`AVX_BLOCK_NT`]² tiles (blocks in source row order), each block along
/// its source rows (`q` outer, `p` inner). `ahead(p, q)` is called for
/// each tile before `tile(p, q)`, with the `ahead` calls of the next four
/// tiles in between (of fewer, near the end of the walk).
#[cfg(any(target_arch = "x86_64", test))]
#[inline(always)]
fn streamed_tiles(
    tp: usize,
    tq: usize,
    edge: usize,
    mut ahead: impl FnMut(usize, usize),
    mut tile: impl FnMut(usize, usize),
) {
    const AHEAD: usize = 4;
    let mut queued = [(0usize, 0usize); AHEAD];
    let mut n = 0usize;
    for bq in (0..tq).step_by(AVX_BLOCK_NT) {
        for bp in (0..tp).step_by(AVX_BLOCK_NT) {
            for q in bq..(bq + AVX_BLOCK_NT).min(tq) {
                for p in bp..(bp + AVX_BLOCK_NT).min(tp) {
                    let next = (p * edge, q * edge);
                    ahead(next.0, next.1);
                    let slot = &mut queued[n % AHEAD];
                    if n >= AHEAD {
                        tile(slot.0, slot.1);
                    }
                    *slot = next;
                    n += 1;
                }
            }
        }
    }
    for i in n.saturating_sub(AHEAD)..n {
        let (p, q) = queued[i % AHEAD];
        tile(p, q);
    }
}

/// 8-byte transpose with AVX (CPUs without AVX-512): 8×8 tiles, each made
/// of four 4×4 in-register transposes, on the walk and with the whole-line
/// reads and writes of `transpose_u32_avx`.
///
/// # Safety
/// As `transpose_scalar`, and the CPU must support AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn transpose_u64_avx(t: &Tile, src: *const u8, dst: *mut u8, nt: bool) {
    use std::arch::x86_64::*;
    let nt = streams(nt, dst, t, 32);
    let tile = |p: usize, q: usize| {
        let mut out = [[_mm256_setzero_ps(); 2]; 8];
        // SAFETY: the tile is in the problem (`avx_walk`); AVX is enabled.
        unsafe {
            line_tile(
                t,
                src,
                dst,
                nt,
                (p, q),
                &mut out,
                |s| _mm256_loadu_pd(s.cast()),
                |r| transpose4x4_pd(r),
                |v| _mm256_castpd_ps(v),
            )
        };
    };
    // SAFETY: the source part of the caller contract.
    unsafe { avx_walk(t, src, 8, nt, tile) };
    // SAFETY: caller contract.
    unsafe { ragged_edges::<u64>(t, src, dst, t.p & !7, t.q & !7) };
}

/// 2-byte transpose with AVX2 (CPUs without AVX-512): 32×32 tiles, each
/// made of four 16×16 in-register transposes, on the walk and with the
/// whole-line reads and writes of `transpose_u32_avx`.
///
/// # Safety
/// As `transpose_scalar`, and the CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn transpose_u16_avx2(t: &Tile, src: *const u8, dst: *mut u8, nt: bool) {
    use std::arch::x86_64::*;
    let nt = streams(nt, dst, t, 32);
    let tile = |p: usize, q: usize| {
        let mut out = [[_mm256_setzero_ps(); 2]; 32];
        // SAFETY: the tile is in the problem (`avx_walk`); AVX2 is enabled.
        unsafe {
            line_tile(
                t,
                src,
                dst,
                nt,
                (p, q),
                &mut out,
                |s| _mm256_loadu_si256(s.cast()),
                |r| transpose16x16_epi16(r),
                |v| _mm256_castsi256_ps(v),
            )
        };
    };
    // SAFETY: the source part of the caller contract.
    unsafe { avx_walk(t, src, 32, nt, tile) };
    // SAFETY: caller contract.
    unsafe { ragged_edges::<u16>(t, src, dst, t.p & !31, t.q & !31) };
}

/// 1-byte transpose with AVX2 (CPUs without AVX-512): 64×64 tiles, each
/// made of four 32×32 in-register transposes, on the walk and with the
/// whole-line reads and writes of `transpose_u32_avx`.
///
/// # Safety
/// As `transpose_scalar`, and the CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn transpose_u8_avx2(t: &Tile, src: *const u8, dst: *mut u8, nt: bool) {
    use std::arch::x86_64::*;
    let nt = streams(nt, dst, t, 32);
    let tile = |p: usize, q: usize| {
        let mut out = [[_mm256_setzero_ps(); 2]; 64];
        // SAFETY: the tile is in the problem (`avx_walk`); AVX2 is enabled.
        unsafe {
            line_tile(
                t,
                src,
                dst,
                nt,
                (p, q),
                &mut out,
                |s| _mm256_loadu_si256(s.cast()),
                |r| transpose32x32_epi8(r),
                |v| _mm256_castsi256_ps(v),
            )
        };
    };
    // SAFETY: the source part of the caller contract.
    unsafe { avx_walk(t, src, 64, nt, tile) };
    // SAFETY: caller contract.
    unsafe { ragged_edges::<u8>(t, src, dst, t.p & !63, t.q & !63) };
}

/// Transposes 32 rows of 32 bytes in place (row `i` becomes column `i`): a
/// 16×16 transpose inside each 128-bit lane for rows 0–15 and for rows
/// 16–31, then their lanes joined.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn transpose32x32_epi8(r: &mut [std::arch::x86_64::__m256i; 32]) {
    use std::arch::x86_64::*;
    // Rows 16g .. 16g + 16: afterwards `c[g][k]` holds column k of those
    // rows in its low lane and column k + 16 in its high lane.
    let mut c = [[_mm256_setzero_si256(); 16]; 2];
    for (g, cols) in c.iter_mut().enumerate() {
        let x = &r[16 * g..16 * g + 16];
        // t[2i], t[2i + 1]: rows 2i, 2i + 1 as byte pairs, columns 0–7 and 8–15.
        let mut t = [_mm256_setzero_si256(); 16];
        for i in 0..8 {
            t[2 * i] = _mm256_unpacklo_epi8(x[2 * i], x[2 * i + 1]);
            t[2 * i + 1] = _mm256_unpackhi_epi8(x[2 * i], x[2 * i + 1]);
        }
        // u[4j + m]: rows 4j .. 4j + 4 of columns 4m .. 4m + 4.
        let mut u = [_mm256_setzero_si256(); 16];
        for j in 0..4 {
            for h in 0..2 {
                u[4 * j + 2 * h] = _mm256_unpacklo_epi16(t[4 * j + h], t[4 * j + 2 + h]);
                u[4 * j + 2 * h + 1] = _mm256_unpackhi_epi16(t[4 * j + h], t[4 * j + 2 + h]);
            }
        }
        // t[8h + n]: rows 8h .. 8h + 8 of columns 2n, 2n + 1.
        for h in 0..2 {
            for m in 0..4 {
                t[8 * h + 2 * m] = _mm256_unpacklo_epi32(u[8 * h + m], u[8 * h + 4 + m]);
                t[8 * h + 2 * m + 1] = _mm256_unpackhi_epi32(u[8 * h + m], u[8 * h + 4 + m]);
            }
        }
        for n in 0..8 {
            cols[2 * n] = _mm256_unpacklo_epi64(t[n], t[8 + n]);
            cols[2 * n + 1] = _mm256_unpackhi_epi64(t[n], t[8 + n]);
        }
    }
    for k in 0..16 {
        r[k] = _mm256_permute2x128_si256::<0x20>(c[0][k], c[1][k]);
        r[k + 16] = _mm256_permute2x128_si256::<0x31>(c[0][k], c[1][k]);
    }
}

/// Transposes 16 rows of 16 two-byte elements in place (row `i` becomes
/// column `i`): an 8×8 transpose inside each 128-bit lane for rows 0–7 and
/// for rows 8–15, then their lanes joined.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn transpose16x16_epi16(r: &mut [std::arch::x86_64::__m256i; 16]) {
    use std::arch::x86_64::*;
    // Rows 8g .. 8g + 8: afterwards `c[g][k]` holds column k of those rows
    // in its low lane and column k + 8 in its high lane.
    let mut c = [[_mm256_setzero_si256(); 8]; 2];
    for (g, cols) in c.iter_mut().enumerate() {
        let x = &r[8 * g..8 * g + 8];
        let s = [
            _mm256_unpacklo_epi16(x[0], x[1]),
            _mm256_unpackhi_epi16(x[0], x[1]),
            _mm256_unpacklo_epi16(x[2], x[3]),
            _mm256_unpackhi_epi16(x[2], x[3]),
            _mm256_unpacklo_epi16(x[4], x[5]),
            _mm256_unpackhi_epi16(x[4], x[5]),
            _mm256_unpacklo_epi16(x[6], x[7]),
            _mm256_unpackhi_epi16(x[6], x[7]),
        ];
        let u = [
            _mm256_unpacklo_epi32(s[0], s[2]),
            _mm256_unpackhi_epi32(s[0], s[2]),
            _mm256_unpacklo_epi32(s[1], s[3]),
            _mm256_unpackhi_epi32(s[1], s[3]),
            _mm256_unpacklo_epi32(s[4], s[6]),
            _mm256_unpackhi_epi32(s[4], s[6]),
            _mm256_unpacklo_epi32(s[5], s[7]),
            _mm256_unpackhi_epi32(s[5], s[7]),
        ];
        for k in 0..4 {
            cols[2 * k] = _mm256_unpacklo_epi64(u[k], u[k + 4]);
            cols[2 * k + 1] = _mm256_unpackhi_epi64(u[k], u[k + 4]);
        }
    }
    for k in 0..8 {
        r[k] = _mm256_permute2x128_si256::<0x20>(c[0][k], c[1][k]);
        r[k + 8] = _mm256_permute2x128_si256::<0x31>(c[0][k], c[1][k]);
    }
}

/// Transposes 4 rows of 4 doubles in place (row `i` becomes column `i`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
fn transpose4x4_pd(r: &mut [std::arch::x86_64::__m256d; 4]) {
    use std::arch::x86_64::*;
    let t0 = _mm256_unpacklo_pd(r[0], r[1]);
    let t1 = _mm256_unpackhi_pd(r[0], r[1]);
    let t2 = _mm256_unpacklo_pd(r[2], r[3]);
    let t3 = _mm256_unpackhi_pd(r[2], r[3]);
    r[0] = _mm256_permute2f128_pd::<0x20>(t0, t2);
    r[1] = _mm256_permute2f128_pd::<0x20>(t1, t3);
    r[2] = _mm256_permute2f128_pd::<0x31>(t0, t2);
    r[3] = _mm256_permute2f128_pd::<0x31>(t1, t3);
}

/// Stores `lines` (each two halves of one 64-byte destination line) to
/// `d + i·pitch`, streaming when `nt`.
///
/// # Safety
/// The lines are writable (32-byte aligned when `nt`); the CPU must
/// support AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
unsafe fn store_lines_avx(d: *mut u8, pitch: isize, lines: &[[std::arch::x86_64::__m256; 2]], nt: bool) {
    use std::arch::x86_64::*;
    for (i, [a, b]) in lines.iter().enumerate() {
        // SAFETY: caller contract.
        unsafe {
            let line = d.offset(i as isize * pitch);
            if nt {
                _mm256_stream_ps(line.cast(), *a);
                _mm256_stream_ps(line.add(32).cast(), *b);
            } else {
                _mm256_storeu_ps(line.cast(), *a);
                _mm256_storeu_ps(line.add(32).cast(), *b);
            }
        }
    }
}

/// Block edge (in tiles) of the AVX kernels' streamed walk
/// (`streamed_tiles`).
#[cfg(any(target_arch = "x86_64", test))]
const AVX_BLOCK_NT: usize = 16;

/// Transposes 8 rows of 8 floats in place (row `i` becomes column `i`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
fn transpose8x8(r: &mut [std::arch::x86_64::__m256; 8]) {
    use std::arch::x86_64::*;
    let t0 = _mm256_unpacklo_ps(r[0], r[1]);
    let t1 = _mm256_unpackhi_ps(r[0], r[1]);
    let t2 = _mm256_unpacklo_ps(r[2], r[3]);
    let t3 = _mm256_unpackhi_ps(r[2], r[3]);
    let t4 = _mm256_unpacklo_ps(r[4], r[5]);
    let t5 = _mm256_unpackhi_ps(r[4], r[5]);
    let t6 = _mm256_unpacklo_ps(r[6], r[7]);
    let t7 = _mm256_unpackhi_ps(r[6], r[7]);
    let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
    let u1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
    let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
    let u3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
    let u4 = _mm256_shuffle_ps::<0x44>(t4, t6);
    let u5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
    let u6 = _mm256_shuffle_ps::<0x44>(t5, t7);
    let u7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
    r[0] = _mm256_permute2f128_ps::<0x20>(u0, u4);
    r[1] = _mm256_permute2f128_ps::<0x20>(u1, u5);
    r[2] = _mm256_permute2f128_ps::<0x20>(u2, u6);
    r[3] = _mm256_permute2f128_ps::<0x20>(u3, u7);
    r[4] = _mm256_permute2f128_ps::<0x31>(u0, u4);
    r[5] = _mm256_permute2f128_ps::<0x31>(u1, u5);
    r[6] = _mm256_permute2f128_ps::<0x31>(u2, u6);
    r[7] = _mm256_permute2f128_ps::<0x31>(u3, u7);
}

/// Prefetches `n` source lines, `pitch` bytes apart, from `first` on.
///
/// # Safety
/// The `n` addresses are inside the source (prefetches never fault, but the
/// pointer arithmetic must stay in bounds).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn prefetch_lines(first: *const u8, pitch: isize, n: usize) {
    use std::arch::x86_64::*;
    for i in 0..n {
        // SAFETY: caller contract; a prefetch has no other effect.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(first.offset(i as isize * pitch).cast()) };
    }
}

/// Calls `f(p, q)` (element offsets, multiples of `edge`) for each of
/// `tp × tq` tiles of `edge × edge` elements: super-blocks of up to
/// `sup × sup` tiles in row order, each walked along its diagonals (tile row
/// k meets column (k + d) mod width on diagonal d), so that consecutive
/// tiles differ in both coordinates.
#[inline(always)]
fn diagonal_tiles(tp: usize, tq: usize, edge: usize, sup: usize, mut f: impl FnMut(usize, usize)) {
    if tp * tq <= 4 {
        // A few tiles (one small matrix of a batch, say): nothing to gain
        // from the order, and the walk's setup costs (a batch of 4096
        // 16×16 f32: 131–137 µs through it, 99–102 µs without).
        for k in 0..tp {
            for j in 0..tq {
                f(k * edge, j * edge);
            }
        }
        return;
    }
    for sp in (0..tp).step_by(sup) {
        let a = sup.min(tp - sp);
        for sq in (0..tq).step_by(sup) {
            let b = sup.min(tq - sq);
            for d in 0..b {
                // j = (k + d) mod b, kept without a division.
                let mut j = d;
                for k in 0..a {
                    f((sp + k) * edge, (sq + j) * edge);
                    j += 1;
                    if j == b {
                        j = 0;
                    }
                }
            }
        }
    }
}

/// The 16×16 tile of `transpose_u32_avx512` at source column `p`, row `q`,
/// loaded and transposed: row `i` of the result is destination row `p + i`.
///
/// # Safety
/// `p + 15 < t.p`, `q + 15 < t.q`, the source part of the caller contract of
/// `transpose_scalar`, and the CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn load_tile16(t: &Tile, src: *const u8, p: usize, q: usize) -> [std::arch::x86_64::__m512; 16] {
    use std::arch::x86_64::*;
    let mut r = [_mm512_setzero_ps(); 16];
    // SAFETY: the 16 rows of 16 elements read are inside the problem (caller contract).
    unsafe {
        let s = src.offset(p as isize * 4 + q as isize * t.src_q);
        for (i, v) in r.iter_mut().enumerate() {
            *v = _mm512_loadu_ps(s.offset(i as isize * t.src_q).cast());
        }
    }
    transpose16(&mut r);
    r
}

/// 8-byte transpose with AVX-512: 8×8 in-register transposes, each source
/// and destination cache line read or written once, whole, tiles walked as
/// `transpose_u32_avx512` walks them. A tile stores 8 lines into one L1 set
/// (with power-of-two pitches), few enough that its stores stay together.
///
/// # Safety
/// As `transpose_scalar`, and the CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn transpose_u64_avx512(t: &Tile, src: *const u8, dst: *mut u8, nt: bool) {
    use std::arch::x86_64::*;
    let nt = streams(nt, dst, t, 64);
    let (p8, q8) = (t.p & !7, t.q & !7);
    diagonal_tiles(p8 / 8, q8 / 8, 8, if nt { 16 } else { 64 }, |p, q| {
        // SAFETY: p + 7 < t.p and q + 7 < t.q: all 64 elements are in the
        // problem (caller contract); AVX-512F is enabled; streaming stores
        // only to 64-byte aligned rows (checked above). (Prefetching the
        // source as the other sizes do measured no gain here.)
        unsafe {
            let s = src.offset(p as isize * 8 + q as isize * t.src_q);
            let mut r = [_mm512_setzero_pd(); 8];
            for (i, v) in r.iter_mut().enumerate() {
                *v = _mm512_loadu_pd(s.offset(i as isize * t.src_q).cast());
            }
            transpose8(&mut r);
            let d = dst.offset(p as isize * t.dst_p + q as isize * 8);
            for (i, v) in r.iter().enumerate() {
                if nt {
                    _mm512_stream_pd(d.offset(i as isize * t.dst_p).cast(), *v);
                } else {
                    _mm512_storeu_pd(d.offset(i as isize * t.dst_p).cast(), *v);
                }
            }
        }
    });
    // SAFETY: caller contract.
    unsafe { ragged_edges::<u64>(t, src, dst, p8, q8) };
}

/// Transposes an 8×8 block of 64-bit lanes held in 8 registers: afterwards
/// `r[j]` lane `i` is the old `r[i]` lane `j`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
fn transpose8(r: &mut [std::arch::x86_64::__m512d; 8]) {
    use std::arch::x86_64::*;
    // Pairs of rows interleaved: t[2i] holds rows 2i, 2i+1 of the even
    // columns (one column per 128-bit lane), t[2i+1] of the odd ones.
    let mut t = [_mm512_setzero_pd(); 8];
    for i in 0..4 {
        t[2 * i] = _mm512_unpacklo_pd(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_pd(r[2 * i], r[2 * i + 1]);
    }
    // For the even (h = 0) and odd (h = 1) columns: lanes 0-1 (columns
    // h, h+2) and 2-3 (h+4, h+6) of row pairs 01 with 23 and 45 with 67,
    // then each column's four row pairs into one register.
    for h in 0..2 {
        let (a, b, c, d) = (t[h], t[2 + h], t[4 + h], t[6 + h]);
        let lo_ab = _mm512_shuffle_f64x2::<0x44>(a, b);
        let lo_cd = _mm512_shuffle_f64x2::<0x44>(c, d);
        let hi_ab = _mm512_shuffle_f64x2::<0xee>(a, b);
        let hi_cd = _mm512_shuffle_f64x2::<0xee>(c, d);
        r[h] = _mm512_shuffle_f64x2::<0x88>(lo_ab, lo_cd);
        r[2 + h] = _mm512_shuffle_f64x2::<0xdd>(lo_ab, lo_cd);
        r[4 + h] = _mm512_shuffle_f64x2::<0x88>(hi_ab, hi_cd);
        r[6 + h] = _mm512_shuffle_f64x2::<0xdd>(hi_ab, hi_cd);
    }
}

/// Transposes a 16×16 block of 32-bit lanes held in 16 registers:
/// afterwards `r[j]` lane `i` is the old `r[i]` lane `j`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
fn transpose16(r: &mut [std::arch::x86_64::__m512; 16]) {
    use std::arch::x86_64::*;
    let mut t = [_mm512_setzero_ps(); 16];
    // 32-bit interleave of row pairs.
    for i in 0..8 {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    // 64-bit interleave of pair pairs.
    for i in 0..4 {
        let (a, b, c, d) = (t[4 * i], t[4 * i + 1], t[4 * i + 2], t[4 * i + 3]);
        r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(c)));
        r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(c)));
        r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(b), _mm512_castps_pd(d)));
        r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(b), _mm512_castps_pd(d)));
    }
    // 128-bit lanes: rows 0-3 with 4-7, 8-11 with 12-15.
    for h in 0..2 {
        for i in 0..4 {
            let (a, b) = (r[8 * h + i], r[8 * h + 4 + i]);
            t[8 * h + i] = _mm512_shuffle_f32x4::<0x88>(a, b);
            t[8 * h + 4 + i] = _mm512_shuffle_f32x4::<0xdd>(a, b);
        }
    }
    // 128-bit lanes again: rows 0-7 with 8-15.
    for i in 0..8 {
        let (a, b) = (t[i], t[8 + i]);
        r[i] = _mm512_shuffle_f32x4::<0x88>(a, b);
        r[8 + i] = _mm512_shuffle_f32x4::<0xdd>(a, b);
    }
}

/// 8-byte transpose: 8×8 AVX-512 in-register transposes when the CPU has
/// AVX-512F, else 4×4 AVX ones (`transpose_u64_avx`) when it has AVX,
/// else tiles of 2×2 SSE2 in-register transposes.
///
/// # Safety
/// As `transpose_scalar`.
unsafe fn transpose_u64(t: &Tile, src: *const u8, dst: *mut u8, nt: bool) {
    #[cfg(target_arch = "x86_64")]
    if t.p >= 8 && t.q >= 8 && std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F (checked above); caller contract.
        unsafe { transpose_u64_avx512(t, src, dst, nt) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if t.p >= 8 && t.q >= 8 && std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX (checked above); caller contract.
        unsafe { transpose_u64_avx(t, src, dst, nt) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let nt = streams(nt, dst, t, 16);
        let (p2, q2) = (t.p & !1, t.q & !1);
        for pb in (0..p2).step_by(TILE) {
            let pe = (pb + TILE).min(p2);
            for qb in (0..q2).step_by(TILE) {
                let qe = (qb + TILE).min(q2);
                let mut p = pb;
                while p < pe {
                    let mut q = qb;
                    while q < qe {
                        // SAFETY: SSE2 is baseline on x86-64; p + 1 < t.p and
                        // q + 1 < t.q.
                        unsafe {
                            let s = src.offset(p as isize * 8 + q as isize * t.src_q);
                            let a = _mm_loadu_si128(s.cast());
                            let b = _mm_loadu_si128(s.offset(t.src_q).cast());
                            let r0 = _mm_unpacklo_epi64(a, b);
                            let r1 = _mm_unpackhi_epi64(a, b);
                            let d = dst.offset(p as isize * t.dst_p + q as isize * 8);
                            if nt {
                                _mm_stream_si128(d.cast(), r0);
                                _mm_stream_si128(d.offset(t.dst_p).cast(), r1);
                            } else {
                                _mm_storeu_si128(d.cast(), r0);
                                _mm_storeu_si128(d.offset(t.dst_p).cast(), r1);
                            }
                        }
                        q += 2;
                    }
                    p += 2;
                }
            }
        }
        // SAFETY: caller contract.
        unsafe { ragged_edges::<u64>(t, src, dst, p2, q2) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = nt;
        // SAFETY: caller contract.
        unsafe { transpose_scalar::<u64>(t, src, dst) }
    }
}

#[cfg(test)]
mod tests {
    use super::lines_per_l1_set;

    /// An AVX kernel for `T` against the element-wise transpose, called
    /// directly (a CPU with AVX-512 never reaches it through the dispatch):
    /// sizes around whole tiles, padded and negative pitches, ordinary and
    /// streaming stores.
    #[cfg(target_arch = "x86_64")]
    fn check_avx_kernel<T: Copy + PartialEq + std::fmt::Debug + Default>(
        element: fn(usize) -> T,
        kernel: unsafe fn(&super::Tile, *const u8, *mut u8, bool),
    ) {
        use super::{Tile, transpose_scalar};
        let es = size_of::<T>();
        for (p, q, pad) in [
            (16, 16, 0),
            (8, 8, 0),
            (17, 33, 0),
            (48, 16, 8),
            (31, 47, 3),
            (64, 80, 16),
            (35, 64, 0),
            (33, 97, 5),
            (96, 40, 0),
            (64, 64, 0),
            (130, 70, 9),
            (65, 128, 64),
        ] {
            for nt in [false, true] {
                for reversed in [false, true] {
                    // Source: q rows of p + pad elements (row i at i·src_q);
                    // destination: p rows of q + pad, reversed when asked.
                    // Never the default (zero), which marks the unwritten.
                    let src: Vec<T> = (0..q * (p + pad)).map(element).collect();
                    let src_q = ((p + pad) * es) as isize;
                    let dst_pitch = ((q + pad) * es) as isize;
                    let n = p * (q + pad);
                    // Room to start 32-byte aligned, so that streaming stores may run.
                    let mut want = vec![T::default(); n + 32 / es];
                    let mut got = want.clone();
                    let skip = |v: &Vec<T>| (v.as_ptr() as usize).wrapping_neg() % 32 / es;
                    let (sw, sg) = (skip(&want), skip(&got));
                    let first_row = |v: &mut [T]| {
                        let base = v.as_mut_ptr().cast::<u8>();
                        if reversed { base.wrapping_offset((p as isize - 1) * dst_pitch) } else { base }
                    };
                    let t = Tile { p, q, src_q, dst_p: if reversed { -dst_pitch } else { dst_pitch } };
                    let (w, g) = (first_row(&mut want[sw..sw + n]), first_row(&mut got[sg..sg + n]));
                    // SAFETY: every (p, q) element of `t` is inside `src`
                    // and the two destinations; the CPU has AVX (checked by
                    // the callers).
                    unsafe {
                        transpose_scalar::<T>(&t, src.as_ptr().cast(), w);
                        kernel(&t, src.as_ptr().cast(), g, nt);
                    }
                    let (want, got) = (&want[sw..sw + n], &got[sg..sg + n]);
                    assert_eq!(got, want, "{p}×{q}, pad {pad}, nt {nt}, reversed {reversed}");
                    assert_eq!(want.iter().filter(|&&v| v != T::default()).count(), p * q);
                }
            }
        }
    }

    /// The AVX kernels of 4- and 8-byte elements and the AVX2 kernels of
    /// 1- and 2-byte ones (fails when the CPU has no AVX2, saying so).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx_transposes_match_scalar() {
        // Wider elements: 7v + 1 is one-to-one modulo 2^16 and zero there
        // only at v = 37449, past the largest index (128·129, the 65×128
        // case's source), so values are distinct and nonzero even for u16;
        // 1-byte: 1 ..= 255.
        assert!(std::arch::is_x86_feature_detected!("avx"), "this test needs a CPU with AVX");
        // SAFETY (both): the CPU has AVX (checked above); the rest is the
        // kernels' caller contract, which `check_avx_kernel` keeps.
        check_avx_kernel::<u32>(|v| (v * 7 + 1) as u32, |t, s, d, nt| unsafe { super::transpose_u32_avx(t, s, d, nt) });
        check_avx_kernel::<u64>(|v| (v * 7 + 1) as u64, |t, s, d, nt| unsafe { super::transpose_u64_avx(t, s, d, nt) });
        assert!(std::arch::is_x86_feature_detected!("avx2"), "this test needs a CPU with AVX2");
        // SAFETY (both): as above, with AVX2 (checked).
        check_avx_kernel::<u16>(
            |v| (v * 7 + 1) as u16,
            |t, s, d, nt| unsafe { super::transpose_u16_avx2(t, s, d, nt) },
        );
        check_avx_kernel::<u8>(
            |v| (v * 7 % 255 + 1) as u8,
            |t, s, d, nt| unsafe { super::transpose_u8_avx2(t, s, d, nt) },
        );
    }

    #[test]
    fn streamed_walk_visits_each_tile_once_after_its_prefetch() {
        use super::{AVX_BLOCK_NT, streamed_tiles};
        let b = AVX_BLOCK_NT;
        for (tp, tq) in [(0, 5), (1, 1), (3, 2), (b, b), (b + 1, 2 * b + 3), (3 * b + 5, b - 1), (40, 70)] {
            let edge = 8;
            // Event log: (is_tile, p, q).
            let log = std::cell::RefCell::new(Vec::new());
            streamed_tiles(
                tp,
                tq,
                edge,
                |p, q| log.borrow_mut().push((false, p, q)),
                |p, q| log.borrow_mut().push((true, p, q)),
            );
            let log = log.into_inner();
            let tiles: Vec<(usize, usize)> = log.iter().filter(|e| e.0).map(|e| (e.1, e.2)).collect();
            let mut sorted = tiles.clone();
            sorted.sort_unstable();
            let all: Vec<(usize, usize)> = (0..tp).flat_map(|p| (0..tq).map(move |q| (p * edge, q * edge))).collect();
            assert_eq!(sorted, all, "{tp}×{tq}: every tile once");
            let prefetches: Vec<(usize, usize)> = log.iter().filter(|e| !e.0).map(|e| (e.1, e.2)).collect();
            assert_eq!(prefetches, tiles, "{tp}×{tq}: prefetched in the order transposed");
            for (i, &(p, q)) in tiles.iter().enumerate() {
                let at = |is_tile| log.iter().position(|&e| e == (is_tile, p, q)).unwrap();
                // Its own prefetch and those of the next four tiles come
                // before its transpose (fewer at the end of the walk).
                let prefetched = log[at(false)..at(true)].iter().filter(|e| !e.0).count();
                assert_eq!(prefetched, 5.min(tiles.len() - i), "{tp}×{tq}: tile {i}");
            }
            // Within a block, along the source rows: the second tile is
            // the first's neighbour in p when the block is wider than one.
            if tp > 1 && tq > 0 {
                assert_eq!(tiles[1], (edge, 0));
            }
        }
    }

    #[test]
    fn lines_per_set_of_pitches() {
        // Power-of-two pitches of 4 KiB and more: one set for all.
        assert_eq!(lines_per_l1_set(16, 4096), 16);
        assert_eq!(lines_per_l1_set(16, 16384), 16);
        assert_eq!(lines_per_l1_set(16, -4096), 16);
        // 2 KiB: two sets in turn; 1 KiB: four.
        assert_eq!(lines_per_l1_set(16, 2048), 8);
        assert_eq!(lines_per_l1_set(64, 2048), 32);
        assert_eq!(lines_per_l1_set(64, 1024), 16);
        // Contiguous rows, an odd number of lines, or not whole lines: spread.
        assert_eq!(lines_per_l1_set(16, 64), 1);
        assert_eq!(lines_per_l1_set(16, 4160), 1);
        assert_eq!(lines_per_l1_set(16, 100), 1);
        assert_eq!(lines_per_l1_set(64, 192), 1);
    }
}
