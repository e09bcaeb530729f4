//! The process-wide runtime: one VM instance with the HAL types registered
//! and the driver registry (created once, never destroyed), and the
//! devices, shared by every module loaded on them and released with the
//! last one.
//!
//! Why one instance: IREE registers the HAL ref types (`!hal.buffer_view`,
//! `!hal.fence`, …) in process-global slots when an instance registers
//! them; creating and destroying HAL-registered instances repeatedly is
//! what IREE's own bindings avoid, and every module of the process can
//! share one.

use crate::error::IreeError;
use crate::ffi::{self, check, sv, sys};
use std::fmt;
use std::ptr::{null, null_mut};
use std::str::FromStr;
use std::sync::{Arc, Mutex, OnceLock};

/// The device that runs a module's dispatches.
///
/// ```
/// use fnabi_core::Value;
/// use fnabi_iree::{Device, IreeModule};
/// assert_eq!(Device::default(), Device::LocalSync);
/// assert_eq!("local-task".parse::<Device>()?, Device::LocalTask);
/// assert_eq!(Device::LocalTask.to_string(), "local-task");
/// assert!("cuda".parse::<Device>().is_err());
///
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fnabi/tests/fixtures/iree/add.vmfb");
/// // SAFETY: a module compiled by iree-compile that we trust to run.
/// let module = unsafe { IreeModule::load(path, Device::LocalTask)? };
/// assert_eq!(module.device(), Device::LocalTask);
/// let sum = module.function("add_i32")?.call([Value::Int(2), Value::Int(40)])?;
/// assert_eq!(i32::try_from(sum)?, 42);
/// # Ok::<(), fnabi_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Device {
    /// `local-sync`: dispatches run on the calling thread, one after the
    /// other. The lowest latency for small calls (the default).
    #[default]
    LocalSync,
    /// `local-task`: dispatches run on a pool of worker threads (one per
    /// core). Faster for large tensors; costs about 15 µs of thread hand-off
    /// per call.
    LocalTask,
}

impl Device {
    /// IREE's driver name (`local-sync`, `local-task`).
    pub const fn name(self) -> &'static str {
        match self {
            Device::LocalSync => "local-sync",
            Device::LocalTask => "local-task",
        }
    }

    fn index(self) -> usize {
        match self {
            Device::LocalSync => 0,
            Device::LocalTask => 1,
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Device {
    type Err = fnabi_core::Error;

    /// `local-sync` or `local-task`.
    fn from_str(s: &str) -> Result<Device, fnabi_core::Error> {
        match s {
            "local-sync" => Ok(Device::LocalSync),
            "local-task" => Ok(Device::LocalTask),
            _ => Err(fnabi_core::Error::invalid_argument(format!(
                "unknown device {s:?} (expected local-sync or local-task)"
            ))),
        }
    }
}

/// The VM instance and the driver registry.
pub(crate) struct Instance {
    pub(crate) ptr: *mut sys::iree_vm_instance_t,
    registry: *mut sys::iree_hal_driver_registry_t,
}

// SAFETY: the instance and the registry are created once and only read
// afterwards; IREE documents both as thread-safe for lookups and creation
// of drivers, modules and contexts.
unsafe impl Send for Instance {}
// SAFETY: see `Send`.
unsafe impl Sync for Instance {}

static INSTANCE: OnceLock<Result<Instance, IreeError>> = OnceLock::new();

/// The process-wide instance, created on first use.
pub(crate) fn instance() -> Result<&'static Instance, IreeError> {
    INSTANCE.get_or_init(create_instance).as_ref().map_err(Clone::clone)
}

fn create_instance() -> Result<Instance, IreeError> {
    let a = ffi::host_allocator();
    let mut ptr = null_mut();
    // SAFETY: out-pointer to a local; the allocator is valid for the process.
    check(unsafe { sys::iree_vm_instance_create(sys::IREE_VM_TYPE_CAPACITY_DEFAULT as _, a, &mut ptr) }, || {
        "creating the VM instance".into()
    })?;
    // SAFETY: `ptr` is the live instance just created.
    let registered =
        check(unsafe { sys::iree_hal_module_register_all_types(ptr) }, || "registering the HAL types".into());
    let mut registry = null_mut();
    let allocated = registered.and_then(|()| {
        // SAFETY: out-pointer to a local.
        check(unsafe { sys::iree_hal_driver_registry_allocate(a, &mut registry) }, || {
            "allocating the driver registry".into()
        })
    });
    let drivers = allocated.and_then(|()| {
        // SAFETY: `registry` is the live registry just allocated.
        check(unsafe { sys::iree_hal_register_all_available_drivers(registry) }, || {
            "registering the HAL drivers".into()
        })
    });
    if let Err(e) = drivers {
        // SAFETY: releasing what this function created, once.
        unsafe {
            if !registry.is_null() {
                sys::iree_hal_driver_registry_free(registry);
            }
            sys::iree_vm_instance_release(ptr);
        }
        return Err(e);
    }
    Ok(Instance { ptr, registry })
}

/// A device with its driver, device group and HAL module (the VM module
/// through which bytecode reaches the device). Shared by the modules loaded
/// on it, and kept for the process (see [`device`]).
pub(crate) struct DeviceHandle {
    pub(crate) kind: Device,
    driver: *mut sys::iree_hal_driver_t,
    pub(crate) device: *mut sys::iree_hal_device_t,
    group: *mut sys::iree_hal_device_group_t,
    pub(crate) hal_module: *mut sys::iree_vm_module_t,
}

// SAFETY: HAL devices, drivers, device groups and native modules are
// internally synchronized, ref-counted IREE objects: they may be used and
// released from any thread.
unsafe impl Send for DeviceHandle {}
// SAFETY: see `Send`.
unsafe impl Sync for DeviceHandle {}

impl Drop for DeviceHandle {
    fn drop(&mut self) {
        // SAFETY: each pointer is either null or a reference this handle
        // owns; released once, dependents first.
        unsafe {
            if !self.hal_module.is_null() {
                sys::iree_vm_module_release(self.hal_module);
            }
            if !self.group.is_null() {
                sys::iree_hal_device_group_release(self.group);
            }
            if !self.device.is_null() {
                sys::iree_hal_device_release(self.device);
            }
            if !self.driver.is_null() {
                sys::iree_hal_driver_release(self.driver);
            }
        }
    }
}

static DEVICES: Mutex<[Option<Arc<DeviceHandle>>; 2]> = Mutex::new([None, None]);

/// The device of `kind`, made on first use and kept for the process.
///
/// Kept, not released with the last module that uses it: IREE 3.13's
/// runtime is not safe against a device being destroyed while the other
/// kind's device runs (measured: with modules loaded and dropped on
/// `local-sync` and `local-task` from six threads, 2–5 of twelve runs had a
/// call or a module initialization fail with `ref is null` or `ref type
/// mismatch` in a HAL import; with each device made on first use and kept,
/// none of 45).
pub(crate) fn device(kind: Device) -> Result<Arc<DeviceHandle>, IreeError> {
    let instance = instance()?;
    let mut devices = DEVICES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(d) = &devices[kind.index()] {
        return Ok(d.clone());
    }
    let d = Arc::new(create_device(instance, kind)?);
    devices[kind.index()] = Some(d.clone());
    Ok(d)
}

fn create_device(instance: &Instance, kind: Device) -> Result<DeviceHandle, IreeError> {
    let a = ffi::host_allocator();
    let what = || format!("creating the {} device", kind.name());
    // Fill the handle as objects are created, so that an error releases
    // exactly what exists (Drop skips nulls).
    let mut d =
        DeviceHandle { kind, driver: null_mut(), device: null_mut(), group: null_mut(), hal_module: null_mut() };
    // SAFETY: the registry is live for the process; out-pointer to a field.
    check(
        unsafe { sys::iree_hal_driver_registry_try_create(instance.registry, sv(kind.name()), a, &mut d.driver) },
        what,
    )?;
    // 3.x: a device needs an async proactor pool; the device retains it.
    let mut pool = null_mut();
    // SAFETY: plain creation with IREE's default options; out-pointer to a local.
    check(
        unsafe {
            sys::iree_async_proactor_pool_create(
                1,
                null(),
                sys::iree_async_proactor_pool_options_default(),
                a,
                &mut pool,
            )
        },
        what,
    )?;
    let params = sys::iree_hal_device_create_params_t { next: null(), proactor_pool: pool };
    // SAFETY: `driver` and `pool` are live; out-pointer to a field.
    let created =
        check(unsafe { sys::iree_hal_driver_create_default_device(d.driver, &params, a, &mut d.device) }, what);
    // SAFETY: drops this function's reference; the device holds its own.
    unsafe { sys::iree_async_proactor_pool_release(pool) };
    created?;
    // 3.x: the HAL module takes a device group, built around a frontier
    // tracker (the default options are a static inline: written out here).
    let mut tracker = null_mut();
    let options =
        sys::iree_async_frontier_tracker_options_t { axis_table_capacity: 256, session_epoch: 1, machine_index: 0 };
    // SAFETY: out-pointer to a local.
    check(unsafe { sys::iree_async_frontier_tracker_create(options, a, &mut tracker) }, what)?;
    // SAFETY: `device` and `tracker` are live; out-pointer to a field.
    let grouped =
        check(unsafe { sys::iree_hal_device_group_create_from_device(d.device, tracker, a, &mut d.group) }, what);
    // SAFETY: the group retains the tracker.
    unsafe { sys::iree_async_frontier_tracker_release(tracker) };
    grouped?;
    // SAFETY: instance and group are live; out-pointer to a field.
    check(
        unsafe {
            sys::iree_hal_module_create(
                instance.ptr,
                sys::iree_hal_module_device_policy_default(),
                d.group,
                sys::iree_hal_module_flag_bits_t_IREE_HAL_MODULE_FLAG_NONE as _,
                sys::iree_hal_module_debug_sink_null(),
                a,
                &mut d.hal_module,
            )
        },
        what,
    )?;
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names_parse() {
        for d in [Device::LocalSync, Device::LocalTask] {
            assert_eq!(d.name().parse::<Device>().unwrap(), d);
            assert_eq!(d.to_string(), d.name());
        }
        assert_eq!(Device::default(), Device::LocalSync);
        let e = "cuda".parse::<Device>().unwrap_err();
        assert_eq!(e.to_string(), "invalid argument: unknown device \"cuda\" (expected local-sync or local-task)");
    }

    #[test]
    fn devices_are_shared_while_alive() {
        let a = device(Device::LocalSync).unwrap();
        let b = device(Device::LocalSync).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(a.kind, Device::LocalSync);
        let t = device(Device::LocalTask).unwrap();
        assert!(!std::ptr::eq(t.device, a.device));
    }
}
