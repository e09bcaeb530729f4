//! # fnabi-iree
//!
//! The IREE runtime backend of fnabi: load IREE modules (`.vmfb`)
//! in-process and call their functions with host values, without Python
//! and without a subprocess.
//!
//! - [`IreeModule`]: a module loaded on a [`Device`] (`local-sync`, the
//!   default, or `local-task`), from a mapped file, bytes or a shared
//!   buffer; its [`IreeExport`]s with their calling conventions and reflection;
//! - [`IreeModule::function`]: an export as a [`fnabi_core::Function`], called
//!   with nested lists, tuples, dicts, scalars, strings and arrays through
//!   [`fnabi_core::conventions`] (typed by `iree.abi` when the module has it, by
//!   `iree.abi.declaration` otherwise). Before the runtime is entered, every
//!   value is checked against what those state (kind, dtype, rank, static
//!   dims, structure): the runtime itself reports a wrong argument type only
//!   as a bare `FAILED_PRECONDITION`. Relations between dynamic dims are in
//!   neither and are **not** checked: `dyn_add(tensor<?x4xf32>,
//!   tensor<?x4xf32>)` called with 3 and 2 rows reads past the second
//!   buffer (garbage or a crash) unless the module checks it (see
//!   [`fnabi_core::Function`]);
//! - [`IreeModule::vm_call`]: a call with a prebuilt VM argument list, the
//!   runtime's own cost;
//! - [`IreeModule::compile_file`]: MLIR source (tensor level, the same
//!   `.mlir` fnabi's MLIR backend runs) compiled by IREE's own
//!   `iree-compile` ([`IreeCompiler`], PyPI `iree-base-compiler==3.13.0`,
//!   the runtime's version) with [`IreeCompileOptions`], cached by source
//!   bytes, flags and compiler version, then loaded; the compiler's errors
//!   ([`IreeCompileError`]) name the user's file and line;
//! - [`IreeError`]: every failure the runtime reports, with its status code
//!   and message, inside [`fnabi_core::ErrorKind::Backend`].
//!
//! ```
//! # fn main() -> Result<(), fnabi_core::Error> {
//! use fnabi_core::{Array, Value};
//! use fnabi_iree::{Device, IreeModule};
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fnabi/tests/fixtures/iree/nested.vmfb");
//! // SAFETY: a module from iree-compile that we trust to run in-process.
//! let module = unsafe { IreeModule::load(path, Device::LocalSync)? };
//! let f = module.function("dict_in_tuple_out")?;
//! let x = Array::from_vec(&[1, 4], vec![1.0f32, 2.0, 3.0, 4.0])?;
//! let y = Array::from_vec(&[1, 4], vec![10.0f32, 20.0, 30.0, 40.0])?;
//! let out = f.call([Value::dict([("y", Value::from(y)), ("x", Value::from(x))])])?;
//! // (x + y, x * y): a tuple, as the function's iree.abi record says.
//! let Value::Tuple(t) = &out else { panic!() };
//! assert_eq!(t[0].as_array().unwrap().to_vec::<f32>()?, [11.0, 22.0, 33.0, 44.0]);
//! assert_eq!(t[1].as_array().unwrap().to_vec::<f32>()?, [10.0, 40.0, 90.0, 160.0]);
//! # Ok(()) }
//! ```
//!
//! ## Values and memory
//! Argument arrays are copied into device buffers. A prepared call (and
//! each of the few call states a function pools for its plain calls) keeps
//! those buffer views, mapped for writing, and the nested argument lists,
//! and rewrites them in place on the next call while the runtime's
//! reference counts show that nothing else holds them: a hot loop allocates
//! no runtime objects. Host memory is not imported (see `buffer.rs`).
//! Results are read-only arrays over the runtime's own buffers (no copy);
//! they keep their buffer and device alive and release them with their
//! last clone. A function keeps the argument buffers of its last calls
//! until it is dropped.
//!
//! Arguments of the common records (numeric `ndarray`s of the exact dtype,
//! scalars, `slist`/`stuple`/`sdict` of them) go straight from host values
//! to the runtime's list, along the same walk of the function's
//! [`RecordPlan`](fnabi_core::conventions::RecordPlan) (and its checks) as
//! [`fnabi_core::conventions::FunctionAbi::pack_args`]; everything else
//! (and every error) goes through `pack_args` itself.
//!
//! Async functions (`iree.abi.model = "coarse-fences"`) get their wait and
//! signal fences from fnabi and are waited for: to the caller they are
//! synchronous.
//!
//! One VM instance serves the whole process (IREE registers its HAL types
//! in process-global slots); each kind of device is made on first use,
//! shared by the modules loaded on it and kept for the process (IREE 3.13
//! fails HAL imports when a device is destroyed while the other kind's
//! runs: `tests/devices.rs`). Calls into one module are serialized (IREE
//! contexts need external synchronization).
//!
//! ## Speed
//! On `local-sync`, against the runtime called with prebuilt lists (bench
//! target `iree`: `cargo bench -p fnabi-iree --bench iree`), a prepared
//! call from host values adds about 0.5 µs to `add_one` (2.1 µs raw) and
//! 0.8–0.9 µs to `dict8`, a dict of 8 arrays (4.3 µs raw); `Function::call`
//! adds about 0.1 µs more, plus the caller's cloning of its arguments.
//!
//! ## Building
//! `eerie-sys` builds the IREE 3.13 runtime from its vendored C sources
//! with CMake (≥ 3.26), a C/C++ compiler, make and libclang (Debian 12:
//! `build-essential libclang1-14 libclang-common-14-dev`, CMake from
//! `pip install cmake`; `scripts/lib/deps.sh` installs them). A cold build
//! takes about a minute on two cores.
//!
//! **As a dependency of another project** (no wrapper of this repository
//! needed), install first, on Debian 12 / Ubuntu:
//!
//! ```sh
//! apt-get install build-essential libclang1-14 libclang-common-14-dev python3-venv
//! python3 -m venv ~/.cache/fnabi/cmake-venv && ~/.cache/fnabi/cmake-venv/bin/pip install 'cmake>=3.26'
//! export PATH=~/.cache/fnabi/cmake-venv/bin:$PATH    # or CMAKE=~/.cache/fnabi/cmake-venv/bin/cmake
//! ```
//!
//! This crate's build script checks those tools (the `cmake` cmake-rs will
//! run, `CMAKE` included, is ≥ 3.26; `cc`, `c++`, `make`; a libclang where
//! clang-sys looks, `LIBCLANG_PATH` included, with clang's `stdbool.h`
//! beside it) and fails with one message saying what to install
//! (`FNABI_IREE_SKIP_BUILD_CHECK=1` skips it). **Where that message cannot
//! come first**: Cargo runs `eerie-sys`'s build script without waiting for
//! this one (a dependent crate cannot order them; `eerie-sys` has no
//! `links` key) and, on a cold build, schedules it first, as more units
//! depend on it. A failure at its CMake configure step comes within a second,
//! before this check has run, and Cargo then starts nothing more, so the
//! raw error is all that shows; the fix is the install lines above:
//! - no `cmake`: `failed to execute command: No such file or directory (os
//!   error 2)` / `` is `cmake` not installed? ``;
//! - CMake 3.25 (Debian 12's): `CMake 3.26 or higher is required.  You are
//!   running version 3.25.1`;
//! - no C/C++ compiler or `make`: CMake's own error naming the missing
//!   compiler or make program.
//!
//! A missing libclang or missing clang headers fail only in `eerie-sys`'s
//! bindgen step, after its minute-long CMake build, so this check reports
//! them first (`bindgen needs clang's resource headers (stdbool.h) …:
//! apt-get install libclang-common-14-dev`).
//!
//! Checked by `scripts/check-iree-dependency.sh` (report-only, about five
//! minutes), which builds a throw-away project that depends on this crate by
//! path, outside this workspace: with CMake 4.x from PyPI first on `PATH` it
//! builds and runs (3 min cold on two cores); with Debian's CMake 3.25.1 it
//! fails with CMake's own message above; with `LIBCLANG_PATH` naming a
//! folder without libclang it fails with this crate's message, before the
//! IREE build reruns. Add `[profile.dev.package.eerie-sys] opt-level = 3`
//! to your workspace, or debug builds get a Debug IREE (about 3.5× slower
//! calls).
//!
//! Without this repository's `.cargo/config.toml` (see below), Cargo reruns
//! `eerie-sys`'s build script on every build (about 20 s): set `CMAKE` in
//! your own `.cargo/config.toml` `[env]` to a copy of
//! `scripts/cmake-configure-once` to avoid it. The workspace sets
//! `[profile.dev.package.eerie-sys] opt-level = 3`: the IREE build type
//! follows the Cargo profile, and a Debug IREE makes calls about 3.5× slower.
//!
//! **The rebuild on every `cargo build`**: `eerie-sys`'s build script
//! declares `rerun-if-changed` on a directory of its own CMake build tree,
//! and cmake-rs reconfigures on every run. Configuring rewrites some 3000
//! generator files in that directory (`depend.make`, `cmake_install.cmake`,
//! `progress.marks`, …) even when nothing changed, so Cargo found the
//! script stale every time and spent about 20 s rerunning CMake, bindgen and
//! rustc. `cmake --build` alone touches nothing there. The workspace's
//! `.cargo/config.toml` therefore points cmake-rs (through its `CMAKE`
//! variable) at `scripts/cmake-configure-once`, which skips a configure
//! step whose arguments are the same as the last successful one in that
//! build tree, and passes every other call to the real `cmake`; CMake's own
//! regeneration check still reconfigures when a `CMakeLists.txt` changes.
//! The first build after a cold one settles the tree (about 5 s); no-op
//! builds then take 0.1 s. Rejected: a `[patch.crates-io]` copy of the
//! crate (65 MB of IREE sources in the repository), and living with it.

#![warn(missing_docs)]

mod backend;
mod buffer;
mod compile;
mod error;
mod fastpack;
mod ffi;
mod list;
mod module;
mod runtime;
mod staging;

pub use compile::{
    IREE_COMPILER_PACKAGE, IREE_RUNTIME_VERSION, IreeCompileError, IreeCompileOptions, IreeCompiler, tools_dir,
};
pub use error::{IreeError, StatusCode};
pub use list::RuntimeRef;
pub use module::{IreeExport, IreeModule, VmCall};
pub use runtime::Device;
