"""aws-cdk-lib's CloudFormation validator, built while Python loads inferstack and the config.

Every ``cdk synth`` of aws-cdk-lib 2.275.0 validates the templates with ``CloudFormationValidatePlugin``, which
aws-cdk-lib builds at the first synth (``core/lib/private/synthesis-validation.js`` ``pluginsToEvaluate``:
``_singletonInstance()``): 1.1-1.9 s of Node time, mostly @aws/cloudformation-validate's WebAssembly starting, with
Python idle. inferstack's own import, the config and the rules are 0.6-0.9 s of Python with Node idle. An
:class:`EarlyValidator` builds the plugin on a second thread meanwhile; the app registers it at the App before
synth — "Registering a CloudFormationValidatePlugin explicitly replaces the auto-registered default instance"
(aws-cdk-lib's README, Validation), and a plugin made with no props is the default instance's configuration (the
CDK's default rules included, the same name, so ``@aws-cdk/core:validateAgainstDefaultRules`` treats its findings
alike). Nothing is validated earlier or skipped; only the build of the engine moves.

Before it starts, :func:`~inferstack.kernel.serialized.serialize_kernel` makes the two threads take turns in the
kernel. The thread first imports the jsii packages inferstack loads (:data:`JSII_PACKAGES`), so the main thread's
imports find them loaded and keep running Python while the kernel builds the plugin.

What keeps the two kinds of lock (Python's per-module import locks, the kernel lock) from deadlocking: the thread
holds a package's import lock only while it loads that package, and a deadlock needs the main thread to import that
package from inside a kernel call (jsii imports a type's module while reading a response; callbacks run Python).
While the thread loads, the main thread is importing inferstack, whose only kernel calls are assembly loads
(no callbacks, no imports); :func:`take_early_validator`, the first thing ``main()`` does, waits until the loads are
done, so every later kernel call of the main thread finds the thread holding no import lock.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Mapping
from typing import Any

from inferstack.kernel.node_options import restore_node_options
from inferstack.kernel.serialized import serialize_kernel

#: The jsii packages inferstack's stacks and charts import, loaded by the thread before it builds the plugin, in
#: this order (tests/test_kernel.py holds the list to what ``inferstack.stacks`` loads). One missing costs only time:
#: the main thread would load it itself, after the plugin.
JSII_PACKAGES = (
    "aws_cdk",
    "aws_cdk.lambda_layer_kubectl_v36",
    "cdk8s",
    "cdk8s_plus_36",
    "cdk_nag",
)


def builtin_validation_enabled(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether aws-cdk-lib would validate with its own plugin in this process: not when ``CDK_VALIDATION`` is
    ``false`` (what ``cdk synth --no-validation`` sets for the app). An app made with
    ``builtinCloudFormationValidation: false`` is the caller's to rule out."""
    return environ.get("CDK_VALIDATION") != "false"


class EarlyValidator:
    """The CloudFormation validator plugin, built on a daemon thread from :meth:`start` on.

    :meth:`register` waits for it and adds it to an App; :meth:`discard` only waits (an app that stops before
    synth, so the kernel is idle when Python exits). What the thread raised, either reports in one stderr line
    (aws-cdk-lib's default instance then validates).
    """

    def __init__(self) -> None:
        self._thread = threading.Thread(target=self._build, name="inferstack-early-validator", daemon=True)
        self._plugin: Any = None
        self._error: BaseException | None = None
        self._wanted = builtin_validation_enabled()
        self._loaded = threading.Event()

    def start(self) -> EarlyValidator:
        """Serialize the kernel, then start the thread. Returns ``self``."""
        serialize_kernel()
        self._thread.start()
        return self

    def _build(self) -> None:
        try:
            try:
                for package in JSII_PACKAGES:
                    importlib.import_module(package)
                    if package == "aws_cdk":  # the kernel's Node runs: processes started later get the user's options
                        restore_node_options()
            finally:
                self._loaded.set()
            if self._wanted:
                import aws_cdk

                self._plugin = aws_cdk.CloudFormationValidatePlugin()
        except BaseException as exc:  # handed to the main thread by register/discard
            self._error = exc

    def _wait(self) -> None:
        """Join the thread; what it raised is reported on stderr in one line (the plugin is then None)."""
        self._thread.join()
        if self._error is not None:
            print(
                f"inferstack: the early CloudFormation validator failed ({type(self._error).__name__}: "
                f"{self._error}); aws-cdk-lib builds its own at synth",
                file=sys.stderr,
            )
            self._error = None
            self._plugin = None

    def register(self, app: Any) -> None:
        """Wait for the plugin and add it to ``app`` (an ``aws_cdk.App`` with built-in validation on, before
        ``synth``: an explicitly added plugin runs even where the App turned its own off), unless
        ``CDK_VALIDATION=false`` ruled validation out when the thread started or the thread failed (then
        aws-cdk-lib's default instance validates, as without this class)."""
        self._wait()
        if self._plugin is not None:
            import aws_cdk

            aws_cdk.Validations.of(app).add_plugins(self._plugin)

    def discard(self) -> None:
        """Wait for the thread and drop the plugin (the app stops before synth)."""
        self._wait()
        self._plugin = None


_started: EarlyValidator | None = None


def start_early_validator() -> EarlyValidator:
    """Start the process's one :class:`EarlyValidator` (a second call returns the first)."""
    global _started
    if _started is None:
        _started = EarlyValidator().start()
    return _started


def take_early_validator() -> EarlyValidator | None:
    """The started :class:`EarlyValidator`, handed over once (later calls: None), or None if none was started;
    returns once its thread has loaded :data:`JSII_PACKAGES` (the thread then holds no import lock: see above)."""
    global _started
    started, _started = _started, None
    if started is not None:
        started._loaded.wait()
    return started
