//! [`Staging`]: the argument objects of one call state, kept from call to
//! call. The k-th buffer view and the k-th nested list that a call
//! marshals (in argument order, depth first) are reused by the next call
//! when they fit (same element type and shape; same list element type) and
//! nothing but the staging area holds them, so a loop over the same kind
//! of arguments allocates no runtime objects: it rewrites the arrays'
//! bytes into the same device buffers. Anything shared (a result that
//! aliases an argument, a module global that kept one) is left alone and
//! replaced by a new object.

use crate::buffer::{WriteMapping, buffer_of, is_unshared, new_view, refill};
use crate::error::IreeError;
use crate::ffi::{self, sys};
use crate::list::{OwnedRef, RtList};
use crate::runtime::DeviceHandle;
use fnabi_core::{Array, DType};
use std::ptr::NonNull;

/// A staged argument buffer view: its element type and shape (to match the
/// next argument without asking the runtime), and a persistent write
/// mapping of its buffer when the memory allows one.
struct StagedView {
    view: NonNull<sys::iree_hal_buffer_view_t>,
    buffer: NonNull<sys::iree_hal_buffer_t>,
    dtype: DType,
    shape: Vec<usize>,
    mapping: Option<WriteMapping>,
}

impl Drop for StagedView {
    fn drop(&mut self) {
        // Unmap while the buffer is alive, then drop the reference.
        self.mapping = None;
        // SAFETY: the staged view holds one reference owned here.
        unsafe { sys::iree_hal_buffer_view_release(self.view.as_ptr()) };
    }
}

/// `a == b`, compared in place: dims lists are short, and slice equality
/// is a call to `memcmp` (~10 ns a staged view here).
#[inline(always)]
fn same_dims(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// See the [module docs](self).
#[derive(Default)]
pub(crate) struct Staging {
    views: Vec<StagedView>,
    next_view: usize,
    lists: Vec<Option<RtList>>,
    next_list: usize,
}

// SAFETY: the staged views, mappings and lists are ref-counted IREE objects
// (and host mappings of them) owned by this value; they may be used and
// released from any thread, and a `Staging` is only used through `&mut`.
unsafe impl Send for Staging {}

impl Staging {
    /// Starts marshalling a call: objects are handed out from the first.
    pub(crate) fn begin(&mut self) {
        self.next_view = 0;
        self.next_list = 0;
    }

    /// Ends a call: the staged lists let go of their elements, so that the
    /// staged views are unshared again.
    pub(crate) fn end(&mut self) {
        for l in self.lists.iter_mut().flatten() {
            l.clear();
        }
    }

    /// A reference to a buffer view holding `bytes`, the dense row-major
    /// elements of `a`: the staged view of this position, refilled, when it
    /// has the same element type and shape and is unshared; a new one
    /// otherwise.
    pub(crate) fn buffer_view(
        &mut self,
        device: &DeviceHandle,
        a: &Array<'_>,
        bytes: &[u8],
    ) -> Result<OwnedRef, IreeError> {
        let slot = self.next_view;
        self.next_view += 1;
        if let Some(s) = self.views.get_mut(slot)
            && s.dtype == a.dtype()
            && same_dims(&s.shape, a.shape())
            // SAFETY: staged views are live (held by this value), and
            // `buffer` is the view's.
            && unsafe { is_unshared(s.view, s.buffer) }
        {
            match &mut s.mapping {
                Some(m) => m.write(bytes)?,
                // SAFETY: the view is live, of this shape and element type
                // (so `bytes.len()` long), and unshared.
                None => unsafe { refill(device, s.view, bytes) }?,
            }
            return Ok(OwnedRef::retain_view(s.view));
        }
        let view = new_view(device, a, bytes)?;
        // SAFETY: a live view just made; a view always has a buffer.
        let Some(buffer) = (unsafe { buffer_of(view) }) else {
            // SAFETY: drops the new view.
            unsafe { sys::iree_hal_buffer_view_release(view.as_ptr()) };
            return Err(ffi::local_error(crate::StatusCode::Internal, "staging an argument", "no buffer".into()));
        };
        // SAFETY: the view lives as long as the StagedView that owns both,
        // and is written only when unshared (checked above).
        let mapping = unsafe { WriteMapping::of(view) };
        let staged = StagedView { view, buffer, dtype: a.dtype(), shape: a.shape().to_vec(), mapping };
        let r = OwnedRef::retain_view(view);
        if slot < self.views.len() {
            self.views[slot] = staged;
        } else {
            self.views.push(staged);
        }
        Ok(r)
    }

    /// An empty list of element type `t` for the next nested list: the
    /// staged one when it has that type and is unshared, a new one
    /// otherwise. Give it back with [`put_list`](Staging::put_list).
    pub(crate) fn take_list(
        &mut self,
        t: sys::iree_vm_type_def_t,
        capacity: usize,
    ) -> Result<(usize, RtList), IreeError> {
        let slot = self.next_list;
        self.next_list += 1;
        if let Some(mut l) = self.lists.get_mut(slot).and_then(Option::take)
            && ffi::same_type_def(&l.element_type(), &t)
            && l.is_unshared()
        {
            l.clear();
            return Ok((slot, l));
        }
        Ok((slot, RtList::new(t, capacity)?))
    }

    /// Keeps a list taken with [`take_list`](Staging::take_list).
    pub(crate) fn put_list(&mut self, slot: usize, list: RtList) {
        if self.lists.len() <= slot {
            self.lists.resize_with(slot + 1, || None);
        }
        self.lists[slot] = Some(list);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{Device, device};

    fn bv(a: &Array<'static>) -> (Array<'static>, Vec<u8>) {
        (a.clone(), a.as_bytes().unwrap().to_vec())
    }

    #[test]
    fn views_are_refilled_while_unshared() {
        let d = device(Device::LocalSync).unwrap();
        let mut s = Staging::default();
        let a = Array::from_vec(&[4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
        s.begin();
        let first = {
            let (x, b) = bv(&a);
            s.buffer_view(&d, &x, &b)
        }
        .unwrap();
        let p = first.raw().ptr;
        drop(first);
        assert!(s.views[0].mapping.is_some(), "local memory maps persistently");
        assert!(s.views[0].mapping.as_ref().is_some_and(|m| m.is_coherent()), "and is host-coherent (no flush)");
        // Unshared: the same view again, with the new contents.
        s.begin();
        let b = Array::from_vec(&[4], vec![5.0f32, 6.0, 7.0, 8.0]).unwrap();
        let second = {
            let (x, b) = bv(&b);
            s.buffer_view(&d, &x, &b)
        }
        .unwrap();
        assert_eq!(second.raw().ptr, p);
        let view = NonNull::new(p.cast::<sys::iree_hal_buffer_view_t>()).unwrap();
        // SAFETY: `second` keeps the view alive.
        let read = unsafe { crate::buffer::array_of_view(&d, view) }.unwrap();
        assert_eq!(read.to_vec::<f32>().unwrap(), [5.0, 6.0, 7.0, 8.0]);
        // Shared (by `second` and by the mapped array): a new view, and the
        // old contents stay as they were.
        s.begin();
        let third = {
            let (x, b) = bv(&a);
            s.buffer_view(&d, &x, &b)
        }
        .unwrap();
        assert_ne!(third.raw().ptr, p);
        assert_eq!(read.to_vec::<f32>().unwrap(), [5.0, 6.0, 7.0, 8.0]);
        drop((second, third, read));
        // Another shape: a new view.
        s.begin();
        let c = Array::from_vec(&[2, 2], vec![0.0f32; 4]).unwrap();
        let q = {
            let (x, b) = bv(&c);
            s.buffer_view(&d, &x, &b)
        }
        .unwrap()
        .raw()
        .ptr;
        s.begin();
        assert_eq!(
            {
                let (x, b) = bv(&c);
                s.buffer_view(&d, &x, &b)
            }
            .unwrap()
            .raw()
            .ptr,
            q
        );
        let i = Array::from_vec(&[2, 2], vec![0i32; 4]).unwrap();
        s.begin();
        assert_ne!(
            {
                let (x, b) = bv(&i);
                s.buffer_view(&d, &x, &b)
            }
            .unwrap()
            .raw()
            .ptr,
            q,
            "another element type"
        );
    }

    #[test]
    fn lists_are_reused_while_unshared() {
        let _d = device(Device::LocalSync).unwrap();
        let mut s = Staging::default();
        s.begin();
        let (slot, l) = s.take_list(ffi::variant_type_def(), 2).unwrap();
        let p = l.as_ptr();
        s.put_list(slot, l);
        s.end();
        s.begin();
        let (slot, l) = s.take_list(ffi::variant_type_def(), 2).unwrap();
        assert_eq!(l.as_ptr(), p);
        let held = l.retain_ref();
        s.put_list(slot, l);
        s.begin();
        let (slot, l) = s.take_list(ffi::variant_type_def(), 2).unwrap();
        assert_ne!(l.as_ptr(), p, "a list someone holds is not reused");
        s.put_list(slot, l);
        drop(held);
        s.begin();
        let (_, l) = s.take_list(ffi::value_type_def(sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_I8), 2).unwrap();
        assert_eq!(ffi::type_def_value(&l.element_type()), sys::iree_vm_value_type_e_IREE_VM_VALUE_TYPE_I8);
    }
}
