"""The exceptions fnabi raises: every one is `fnabi.Error` or a subclass."""

from __future__ import annotations

from typing import Optional


class Error(Exception):
    """Base class of every error fnabi raises.

    Attributes (``None`` where the error has no such part):

    - ``path``: the index path of the value at fault, as fnabi prints it
      (``'[1]["w1"]'``; ``''`` for the root);
    - ``expected``: what the function needs there (``"f32[4]"``, ``"a dict"``);
    - ``got``: what it was given.
    """

    def __init__(
        self,
        message: str,
        *,
        path: Optional[str] = None,
        expected: Optional[str] = None,
        got: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.expected = expected
        self.got = got

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class SignatureError(Error, ValueError):
    """A signature (mangled, human-readable or an MLIR function type) that
    does not parse; ``offset`` is the byte offset of the problem."""

    def __init__(self, message: str, *, offset: Optional[int] = None, **kw) -> None:
        super().__init__(message, **kw)
        self.offset = offset


class CallError(Error, ValueError):
    """Arguments that do not fit the function: a wrong dtype, rank, static
    dim, kind of value or number of arguments, a missing or unknown key.
    ``path``, ``expected`` and ``got`` say where and what."""


class LoadError(Error):
    """A module that cannot be read or loaded (file, library, `.vmfb`,
    malformed ABI attributes)."""


class FunctionNotFoundError(LoadError, KeyError, AttributeError):
    """The module has no function of that name (``m["f"]``, ``m.f``)."""

    __str__ = Error.__str__


class CompileError(Error):
    """Compiling MLIR failed: the MLIR/LLVM tools are missing or reported
    an error (their stderr is in the message), or the source has a syntax
    error fnabi found."""


class ExecutionError(Error, RuntimeError):
    """The compiled code or its runtime failed while running (an IREE
    status, a host function that failed, a runtime check, an allocation
    of the compiled code that its limit or the allocator refused)."""


# Shown (and pickled) as what users import: fnabi.CallError, not fnabi._errors.CallError.
for _cls in (Error, SignatureError, CallError, LoadError, FunctionNotFoundError, CompileError, ExecutionError):
    _cls.__module__ = "fnabi"
del _cls
