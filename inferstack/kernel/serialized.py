"""One thread at a time in jsii's kernel.

jsii's Python runtime talks to its Node kernel over one pipe, request by response, and a request may be answered by a
callback into Python that makes requests of its own before the first one completes. Two threads interleaving there
would read each other's responses. :func:`serialize_kernel` makes every method of jsii's ``Kernel`` (the only caller
of the pipe in jsii 1.142.0: ``jsii/_kernel/__init__.py``, every generated binding goes through ``jsii._runtime``'s
``kernel``) hold one re-entrant lock for its whole call, callbacks included: a callback's own requests run in the
thread that holds the lock, another thread waits for the outermost call to return.

jsii's package binds the kernel's methods once, at its import (``jsii/__init__.py``: ``create = kernel.create``, …),
and the generated bindings call those (``jsii.create(...)``, ``jsii.invoke(...)``); jsii itself calls the kernel's
attributes (``_runtime``'s assembly loads, the callback loop's ``kernel.complete``). So both are rebound: the class's
methods, and each ``jsii.<name>`` that is a bound method of the kernel.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any

#: The lock every kernel call holds (re-entrant: a callback's requests are made by the thread holding it).
KERNEL_LOCK = threading.RLock()

_SERIALIZED = "__inferstack_serialized__"


def _locked(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        with KERNEL_LOCK:
            return method(*args, **kwargs)

    setattr(call, _SERIALIZED, True)
    return call


def kernel_methods() -> list[str]:
    """The public methods of jsii's ``Kernel`` class: what :func:`serialize_kernel` wraps."""
    from jsii._kernel import Kernel

    return sorted(name for name, value in vars(Kernel).items() if callable(value) and not name.startswith("_"))


def _bound_aliases() -> dict[str, Any]:
    """The attributes of the ``jsii`` package that are methods bound to its kernel (``jsii.create``, …)."""
    import jsii
    from jsii._runtime import kernel

    return {
        name: value
        for name, value in vars(jsii).items()
        if inspect.ismethod(value) and value.__self__ is kernel and not name.startswith("_")
    }


def serialize_kernel() -> None:
    """Wrap every public method of jsii's ``Kernel`` in :data:`KERNEL_LOCK` and rebind the ``jsii`` package's
    aliases of them (once per process; the kernel is a singleton). Call it before a second thread makes jsii
    calls."""
    import jsii
    from jsii._kernel import Kernel
    from jsii._runtime import kernel

    for name in kernel_methods():
        method = vars(Kernel)[name]
        if not getattr(method, _SERIALIZED, False):
            setattr(Kernel, name, _locked(method))
    for name, alias in _bound_aliases().items():
        setattr(jsii, name, getattr(kernel, alias.__func__.__name__))


def is_serialized() -> bool:
    """Whether every public ``Kernel`` method, and each ``jsii.<name>`` bound to the kernel, holds
    :data:`KERNEL_LOCK`."""
    from jsii._kernel import Kernel

    methods = [vars(Kernel)[name] for name in kernel_methods()]
    aliases = [alias.__func__ for alias in _bound_aliases().values()]
    return all(getattr(method, _SERIALIZED, False) for method in methods + aliases)
