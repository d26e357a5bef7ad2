"""aws-cdk-lib's CloudFormation validator, built while Python loads inferstack and the config.

Every ``cdk synth`` of aws-cdk-lib 2.275.0 validates the templates with ``CloudFormationValidatePlugin``, which
aws-cdk-lib builds at the first synth (``core/lib/private/synthesis-validation.js`` ``pluginsToEvaluate``:
``_singletonInstance()``): 1.5-1.9 s of Node time, mostly @aws/cloudformation-validate's WebAssembly starting, with
Python idle. inferstack's own import, the config and the rules are 0.6-0.9 s of Python with Node idle. An
:class:`EarlyValidator` builds the plugin on a second thread meanwhile; the app registers it at the App before
synth — "Registering a CloudFormationValidatePlugin explicitly replaces the auto-registered default instance"
(aws-cdk-lib's README, Validation), and a plugin made with no props is the default instance's configuration (the
CDK's default rules included, the same name, so ``@aws-cdk/core:validateAgainstDefaultRules`` treats its findings
alike). Nothing is validated earlier or skipped; only the build of the engine moves.

Before it starts, :func:`~inferstack.kernel.serialized.serialize_kernel` makes the two threads take turns in the
kernel. The thread first imports the jsii packages inferstack loads (:data:`JSII_PACKAGES`), so the main thread's
imports find them loaded and keep running Python while the kernel builds the plugin.
"""

from __future__ import annotations

import importlib
import os
import threading
from typing import Any

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


def builtin_validation_enabled(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """Whether aws-cdk-lib would validate with its own plugin in this process: not when ``CDK_VALIDATION`` is
    ``false`` (what ``cdk synth --no-validation`` sets for the app). An app made with
    ``builtinCloudFormationValidation: false`` is the caller's to rule out."""
    return environ.get("CDK_VALIDATION") != "false"


class EarlyValidator:
    """The CloudFormation validator plugin, built on a daemon thread from :meth:`start` on.

    :meth:`register` waits for it and adds it to an App; :meth:`discard` only waits (an app that stops before
    synth, so the kernel is idle when Python exits). Either re-raises what the thread raised.
    """

    def __init__(self) -> None:
        self._thread = threading.Thread(target=self._build, name="inferstack-early-validator", daemon=True)
        self._plugin: Any = None
        self._error: BaseException | None = None
        self._wanted = builtin_validation_enabled()

    def start(self) -> EarlyValidator:
        """Serialize the kernel, then start the thread. Returns ``self``."""
        serialize_kernel()
        self._thread.start()
        return self

    def _build(self) -> None:
        try:
            for package in JSII_PACKAGES:
                importlib.import_module(package)
            if self._wanted:
                import aws_cdk

                self._plugin = aws_cdk.CloudFormationValidatePlugin()
        except BaseException as exc:  # handed to the main thread by register/discard
            self._error = exc

    def _wait(self) -> None:
        self._thread.join()
        if self._error is not None:
            raise self._error

    def register(self, app: Any) -> None:
        """Wait for the plugin and add it to ``app`` (an ``aws_cdk.App`` with built-in validation on, before
        ``synth``), unless ``CDK_VALIDATION=false`` ruled validation out when the thread started."""
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
    """The started :class:`EarlyValidator`, handed over once (later calls: None), or None if none was started."""
    global _started
    started, _started = _started, None
    return started
