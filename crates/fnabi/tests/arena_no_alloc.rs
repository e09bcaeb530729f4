//! A steady-state call allocates nothing: after a first call has sized the
//! arena, asking the oracle and converting inputs into the arena makes no
//! heap allocation. (Its own test binary: it installs a counting allocator.)

use fnabi::buffer::{BufferDescription, Cast, Decision, LayoutPreference, oracle};
use fnabi::memory::Arena;
use fnabi::{Array, BufferType, Dim, DimOrder, ScalarType};
use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
use std::cell::Cell;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

struct Counting;

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: AllocLayout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: AllocLayout) {
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn call(arena: &mut Arena, ty: &BufferType, inputs: &[Array<'_>]) -> f32 {
    let scope = arena.scope();
    let pref = LayoutPreference::Dense(DimOrder::RowMajor);
    let mut sum = 0.0;
    for a in inputs {
        let d = oracle(ty, &BufferDescription::from_array(a), &pref, Cast::Forbidden);
        let Decision::Convert { target, .. } = d else { panic!("{d:?}") };
        let dense = scope.convert(a, &target).unwrap();
        sum += dense.as_slice::<f32>().unwrap()[1];
    }
    sum
}

#[test]
fn steady_state_call_allocates_nothing() {
    let ty = BufferType::new(ScalarType::F32, [Dim::Dynamic, Dim::Static(64)]).unwrap();
    let a = Array::from_vec(&[64, 100], (0..6400).map(|x| x as f32).collect()).unwrap();
    let b = Array::from_vec(&[64, 300], (0..19200).map(|x| x as f32).collect()).unwrap();
    let inputs = [a.permuted(&[1, 0]).unwrap(), b.permuted(&[1, 0]).unwrap()];
    let mut arena = Arena::new();
    // Warm-up: the first call spills and sizes the arena.
    assert_eq!(call(&mut arena, &ty, &inputs), 100.0 + 300.0);
    let before = ALLOCATIONS.with(Cell::get);
    for _ in 0..10 {
        assert_eq!(call(&mut arena, &ty, &inputs), 400.0);
    }
    assert_eq!(ALLOCATIONS.with(Cell::get) - before, 0, "steady-state calls allocated");
}
