"""fnabi: call compiled tensor functions (MLIR-compiled native code, IREE
modules) with numpy arrays and nested dicts, lists and tuples.

Every error fnabi raises is a `fnabi.Error` or one of its subclasses.
"""

from __future__ import annotations

import os
from typing import Any, List, Mapping, Optional, Union, final

from ._errors import (
    CallError as CallError,
    CompileError as CompileError,
    Error as Error,
    ExecutionError as ExecutionError,
    FunctionNotFoundError as FunctionNotFoundError,
    LoadError as LoadError,
    SignatureError as SignatureError,
)

__version__: str

def load(
    path: Union[str, os.PathLike[str]],
    *,
    device: Optional[str] = None,
    signature: Optional[Union[str, Mapping[str, str]]] = None,
    backend: Optional[str] = None,
    runtime_checks: bool = False,
) -> Module:
    """Loads a module of compiled functions.

    - ``path``: an ``.mlir`` file (compiled with Debian's MLIR tools through
      fnabi's default pipeline and cached by content hash in
      ``$FNABI_CACHE_DIR``, else ``~/.cache/fnabi``, as ``fnabi run`` does);
      a shared library of MLIR-compiled code (``.so``); or an IREE module
      (``.vmfb``, when the package was built with IREE: see `has_iree`;
      a file by another name that starts as an IREE module is one).
    - ``device``: for ``.vmfb`` only: ``"local-sync"`` (default) or
      ``"local-task"``.
    - ``signature``: for functions whose types the module does not record
      (a library without its source; an LLVM-level module's functions that
      take pointers): an MLIR function type
      (``"(memref<?xf32>, f32) -> memref<?xf32>"``) or a mangled raw
      signature, used for every function; or a dict of them by name. A
      function whose type is known is checked against it.
    - ``backend``: for ``.mlir`` files: ``"mlir"`` (default) or ``"iree"``
      (compiled by ``iree-compile`` 3.13 and run in IREE's runtime; needs
      `has_iree`), to cross-check the two backends on the same inputs.
    - ``runtime_checks``: for ``.mlir`` files on the MLIR backend: compile
      with MLIR's runtime op verification; a failed check raises
      `ExecutionError` naming the file and line, as does an allocation of
      the module's code over the per-array byte limit
      (``FNABI_MAX_ARRAY_BYTES``) or one the allocator cannot give. Without
      runtime checks such an allocation aborts the process, saying why.

    Loading runs the module's initialisers and calling its functions runs
    its code in this process: load only code you trust.

    Raises `LoadError` (unreadable file, bad library or module, malformed
    ABI attributes), `CompileError` (the MLIR tools failed or are missing),
    or `CallError` (a `ValueError`: an option value that is not one of its
    choices, such as ``backend="cuda"``, or an option that does not apply
    to the file).
    """

def compile_mlir(source: str, *, runtime_checks: bool = False) -> Module:
    """Compiles MLIR source text (cached like files) into a `Module`;
    ``runtime_checks`` as for `load`."""

def demangle(signature: str, *, kind: Optional[str] = None) -> str:
    """The human-readable form of a mangled signature: a raw function
    signature (the ``f`` attribute) or a SIP signature (``sip``). ``kind`` is
    ``"raw"``, ``"sip"`` or ``None`` to detect it (a text that reads both
    ways is an error).

    >>> fnabi.demangle("I18!O1!B11!d-1d128d64R17!B13!t11d32d-1d64")
    '(RefObject<?>, Buffer<float32[?x128x64]>) -> (Buffer<uint64[32x?x64]>)'

    Raises `SignatureError` (with ``offset``, the byte of the problem).
    """

def mangle(signature: str) -> str:
    """The mangled form (the ``f`` attribute) of a human-readable raw
    signature, e.g. ``"(Buffer<float32[?x4]>) -> (sint32)"``.

    Raises `SignatureError`.
    """

def has_iree() -> bool:
    """Whether this build can load IREE modules (``.vmfb``)."""

@final
class Module:
    """A loaded module of compiled functions (see `load`).

    ``m.functions`` lists the names; ``m["f"]``, ``m.f`` and
    ``m.function("f")`` give a `Function`. Pickles by what it was loaded
    from (MLIR source text, a library's path, an IREE module's bytes and
    device): the other process compiles it again or finds it in its
    compile cache.
    """

    @property
    def functions(self) -> List[str]:
        """The names of the functions a caller can call."""
    @property
    def path(self) -> Optional[os.PathLike[str]]:
        """The file the module was loaded from (``None`` for source text)."""
    @property
    def library_path(self) -> Optional[os.PathLike[str]]:
        """The shared library that holds an MLIR module's code (for MLIR
        source, the compiled library in fnabi's compile cache); ``None`` for
        IREE modules."""
    @property
    def kind(self) -> str:
        """``"mlir"`` (compiled from MLIR source; ``"mlir-checked"`` with
        ``runtime_checks=True``), ``"library"`` (a shared library, or LLVM IR
        ``.ll``/``.bc`` compiled from its file: both loaded again from their
        path) or ``"vmfb"`` (an IREE module)."""
    def function(self, name: str, signature: Optional[str] = None) -> Function:
        """The function ``name``; a library without its source takes its
        signature here unless one was given to `load`. Raises
        `FunctionNotFoundError` (a `KeyError`) when there is none, and
        `LoadError` when the module cannot type it and no signature is given
        (an LLVM-level function that takes pointers)."""
    def __getitem__(self, name: str, /) -> Function: ...
    def __getattr__(self, name: str, /) -> Function: ...
    def __contains__(self, name: str, /) -> bool: ...

@final
class Function:
    """One compiled function, called with Python values.

    **Arguments** bind by position and keyword to the function's input
    structure (its ``sip`` attribute or ``iree.abi`` record; its parameters
    in order otherwise); nested dicts, lists and tuples bind through it.
    Leaves are numpy arrays (any layout; passed without a copy when the
    parameter's layout accepts them, converted otherwise), anything numpy
    views without copying (``__dlpack__``, ``__array__``, the buffer
    protocol), and ``int``/``float``/``bool`` scalars (an int for a float
    parameter is fine; a float for an integer one is an error), also for a
    0-d array parameter (``tensor<f32>``), which gets a 0-d array of its
    dtype. Arrays are never cast: a wrong dtype, rank, static dim, kind of
    value, arity, or a missing or unknown key raises `CallError` with
    ``path``, ``expected`` and ``got``. Values nest at most 128 levels deep.

    **Arguments written in place**: a memref-level MLIR function may
    update an argument (a tensor-level one cannot: fnabi bufferizes its
    tensors read-only; IREE functions never do). A writable numpy array is
    then updated in place, as in C, when it is passed without a copy (its
    dtype, byte order, alignment and layout fit the parameter); an array
    that had to be converted is a copy, and the function's updates to it
    are discarded. Memory that must not be written (a read-only array:
    ``mmap_mode="r"``, a view of ``bytes``, ``writeable=False``) is passed
    to such a function as a copy.

    **Results**: a single result is the value itself, several are a tuple,
    a structured result keeps its structure (dict / list / tuple). Arrays
    are numpy arrays over the callee's memory (no copy), released when the
    last reference to them dies; they outlive the module. Scalars are
    Python scalars; ``i1`` arrays are ``np.bool_``, ``f16`` ``np.float16``,
    ``bf16`` ``ml_dtypes.bfloat16`` (an error naming ``ml_dtypes`` when it
    is not installed), ``complex<f32>``/``complex<f64>`` ``np.complex64``/
    ``np.complex128`` (numpy complex arrays pass in as they are).

    Calls release the GIL while native code runs; one function may be
    called from several threads at once. Pickles as its module and name.
    """

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    @property
    def name(self) -> str:
        """The function's name."""
    @property
    def signature(self) -> str:
        """A one-line, human-readable signature."""
    @property
    def sip(self) -> Optional[str]:
        """Its ``sip`` structure in a Python-like form (``$N`` is raw
        argument or result ``N``), when it has one."""
    @property
    def raw(self) -> Optional[str]:
        """Its raw signature in the human-readable form (MLIR functions)."""
    @property
    def module(self) -> Module:
        """The module the function belongs to."""

__all__ = [
    "CallError",
    "CompileError",
    "Error",
    "ExecutionError",
    "Function",
    "FunctionNotFoundError",
    "LoadError",
    "Module",
    "SignatureError",
    "compile_mlir",
    "demangle",
    "has_iree",
    "load",
    "mangle",
]
