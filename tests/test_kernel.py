"""inferstack.kernel: app.py's synth set-up — Node runs WebAssembly with V8's baseline compiler only, and
aws-cdk-lib's CloudFormation validator is built on a second thread that shares jsii's kernel through one lock.

Both patch process-wide state (``NODE_OPTIONS`` before the kernel starts, jsii's ``Kernel`` class), so every test
that needs them runs its own Python process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from inferstack.kernel.node_options import LIFTOFF_PRELOAD, preload_liftoff, with_liftoff_preload
from tests.synth import ROOT

ENV = {k: v for k, v in os.environ.items() if k not in ("INFERSTACK_FAST_SYNTH", "NODE_OPTIONS", "CDK_VALIDATION")}


def run_python(script: str, tmp_path: Path, **env: str) -> dict:
    """Run ``script`` in a fresh interpreter at the repository root; its last stdout line is JSON."""
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(script))
    result = subprocess.run(
        [sys.executable, str(path)], cwd=ROOT, env={**ENV, **env}, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_preload_follows_the_users_own_node_options():
    options = with_liftoff_preload("--max-old-space-size=8192 --enable-source-maps")
    assert options.startswith("--max-old-space-size=8192 --enable-source-maps --require ")
    assert options.endswith(f'"{LIFTOFF_PRELOAD}"')


def test_the_preload_is_added_once():
    once = with_liftoff_preload("")
    assert with_liftoff_preload(once) == once
    environ = {"NODE_OPTIONS": once}
    preload_liftoff(environ)
    assert environ == {"NODE_OPTIONS": once}


@pytest.mark.parametrize("folder", ["plain", 'with space and "quotes"', "back\\slash"])
def test_node_reads_the_preload_as_one_path_and_knows_its_v8_flag(tmp_path, folder):
    """Node starts with the option, runs the file (wherever the package is installed) and V8 takes the flag:
    an unknown flag would print ``Error: unrecognized flag`` on stderr."""
    copy = tmp_path / folder / "liftoff.js"
    copy.parent.mkdir()
    copy.write_text(LIFTOFF_PRELOAD.read_text() + "\nconsole.log('preloaded');\n")
    result = subprocess.run(
        ["node", "-e", "console.log('ran')"],
        env={**ENV, "NODE_OPTIONS": with_liftoff_preload("", copy)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (result.returncode, result.stdout.split(), result.stderr) == (0, ["preloaded", "ran"], "")


def test_the_preload_sets_liftoff_only():
    assert "require('v8').setFlagsFromString('--liftoff-only');" in LIFTOFF_PRELOAD.read_text()


def test_two_threads_take_turns_in_a_serialized_kernel(tmp_path):
    """Two threads calling into the kernel at once get their own answers, callbacks included (a Python-implemented
    IResolvable resolved by Node calls back into the thread that asked)."""
    result = run_python(
        """
        import json, os, threading, time
        import aws_cdk as cdk
        import jsii
        from inferstack.kernel.serialized import is_serialized, serialize_kernel

        serialize_kernel()

        @jsii.implements(cdk.IResolvable)
        class Answer:
            def __init__(self, value):
                self.value = value
                self.creation_stack = []
            def resolve(self, context):
                time.sleep(0.001)  # the other thread asks meanwhile
                return self.value
            def to_string(self):
                return cdk.Token.as_string(self)

        stack = cdk.Stack(cdk.App(), "s")
        wrong = []

        def work(offset):
            try:
                for i in range(300):
                    seconds = cdk.Duration.minutes(offset + i).to_seconds()
                    resolved = stack.resolve([Answer(f"{offset}-{i}"), Answer("second")])
                    if (seconds, resolved) != ((offset + i) * 60, [f"{offset}-{i}", "second"]):
                        wrong.append(repr((offset, i, seconds, resolved)))
            except Exception as exc:  # an unserialized kernel mixes the threads' messages up
                wrong.append(repr(exc))

        threads = [threading.Thread(target=work, args=(n * 1000,), daemon=True) for n in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        if any(t.is_alive() for t in threads):
            print(json.dumps({"hung": True, "wrong": wrong[:3]}), flush=True)
            os._exit(0)
        print(json.dumps({"hung": False, "wrong": wrong[:3], "serialized": is_serialized()}))
        """,
        tmp_path,
    )
    assert result == {"hung": False, "wrong": [], "serialized": True}


#: A GameLift fleet with an inverted port range: schema-valid, refused by the Rego rules aws-cdk-lib ships
#: (core/lib/validation/rules/gamelift-fleet.rego, CDK-GameLift-001), which only a plugin with its default rules runs.
GAMELIFT_FLEET = (
    'cdk.CfnResource(stack, "Fleet", type="AWS::GameLift::Fleet", properties={"Name": "f", '
    '"EC2InboundPermissions": [{"FromPort": 2000, "ToPort": 1000, "IpRange": "10.0.0.0/16", "Protocol": "TCP"}]})'
)


def test_the_early_validator_replaces_the_default_one_and_still_fails_synth(tmp_path):
    """Registered at the App, the early plugin is the one validation (aws-cdk-lib adds its own only when none is
    registered): one CloudFormation Validate report, and a misspelled property still fails synth."""
    result = run_python(
        f"""
        import json, os
        import inferstack  # starts the early validator (INFERSTACK_FAST_SYNTH=1)
        import aws_cdk as cdk
        from inferstack.kernel import take_early_validator
        from inferstack.kernel.serialized import is_serialized

        early = take_early_validator()
        app = cdk.App(outdir={str(tmp_path / "out")!r}, context={{"@aws-cdk/core:validateAgainstDefaultRules": True}})
        stack = cdk.Stack(app, "s")
        cdk.CfnResource(stack, "Topic", type="AWS::SNS::Topic", properties={{"TopicNam": "x"}})
        {GAMELIFT_FLEET}
        early.register(app)
        try:
            app.synth()
            failed = ""
        except RuntimeError as exc:
            failed = str(exc)
        report = json.load(open(os.path.join({str(tmp_path / "out")!r}, "validation-report.json")))
        second = cdk.App(outdir={str(tmp_path / "second")!r})
        cdk.Stack(second, "s")
        early.register(second)
        cdk.Validations.of(second).add_plugins(cdk.CloudFormationValidatePlugin())
        try:
            second.synth()
            duplicate = ""
        except RuntimeError as exc:
            duplicate = str(exc)
        print(json.dumps({{
            "duplicate": "only one instance of CloudFormationValidatePlugin can be registered" in duplicate,
            "serialized": is_serialized(),
            "taken_again": take_early_validator() is not None,
            "failed": "ValidationFailed" in failed,
            "plugins": [p["pluginName"] for p in report["pluginReports"]],
            "findings": [
                v["ruleName"] + " " + v["description"] for p in report["pluginReports"] for v in p["violations"]
            ],
        }}))
        """,
        tmp_path,
        INFERSTACK_FAST_SYNTH="1",
    )
    assert result["serialized"] and not result["taken_again"] and result["failed"]
    assert result["duplicate"], "register() left the App without the early plugin"
    assert result["plugins"] == ["CloudFormation Validate"]
    default_rule, schema = sorted(result["findings"])
    assert default_rule.startswith("CDK-GameLift-001 ")  # aws-cdk-lib's own Rego rules ran: the default configuration
    assert schema.startswith("F3002 TopicNam: Additional properties are not allowed")


def test_no_early_validator_when_validation_is_off_or_fast_synth_is_not_asked(tmp_path):
    """``cdk synth --no-validation`` (CDK_VALIDATION=false) builds and registers no plugin: the synth validates
    nothing; without INFERSTACK_FAST_SYNTH nothing starts and the kernel stays as jsii made it."""
    script = f"""
        import json, os
        import inferstack
        import aws_cdk as cdk
        from inferstack.kernel import take_early_validator
        from inferstack.kernel.serialized import is_serialized

        early = take_early_validator()
        app = cdk.App(outdir={str(tmp_path / "out")!r})
        cdk.CfnResource(cdk.Stack(app, "s"), "Topic", type="AWS::SNS::Topic", properties={{"TopicNam": "x"}})
        if early is not None:
            early.register(app)
        app.synth()
        report = os.path.join({str(tmp_path / "out")!r}, "validation-report.json")
        plugins = [p["pluginName"] for p in json.load(open(report))["pluginReports"]] if os.path.exists(report) else []
        print(json.dumps({{"started": early is not None, "plugins": plugins, "serialized": is_serialized()}}))
        """
    off = run_python(script, tmp_path, INFERSTACK_FAST_SYNTH="1", CDK_VALIDATION="false")
    assert off == {"started": True, "plugins": [], "serialized": True}
    default = run_python(script, tmp_path)
    assert default == {"started": False, "plugins": ["CloudFormation Validate"], "serialized": False}


def test_the_thread_loads_every_jsii_package_the_stacks_load(tmp_path):
    """The main thread's imports find every jsii assembly loaded by the thread, so none waits for the plugin."""
    result = run_python(
        """
        import importlib, json, sys
        from inferstack.kernel.early_validator import JSII_PACKAGES

        def assemblies():
            return sorted(m for m in sys.modules if m.endswith("._jsii"))

        for package in JSII_PACKAGES:
            importlib.import_module(package)
        first = assemblies()
        import inferstack.app, inferstack.stacks.platform  # noqa: E401
        print(json.dumps({"thread": first, "stacks": assemblies()}))
        """,
        tmp_path,
    )
    assert result["thread"] == result["stacks"]


#: Runs ``inferstack.app.main`` as app.py does (INFERSTACK_FAST_SYNTH=1), recording the early validator's calls.
MAIN_SCRIPT = """
    import json, os
    import inferstack
    from inferstack.kernel.early_validator import EarlyValidator

    calls = []
    register, discard = EarlyValidator.register, EarlyValidator.discard
    EarlyValidator.register = lambda self, app: (calls.append("register"), register(self, app))[1]
    EarlyValidator.discard = lambda self: (calls.append("discard"), discard(self))[1]
    from inferstack.app import main

    status = main()
    from jsii._runtime import kernel

    host = kernel.provider._process._process.pid
    environ = open(f"/proc/{host}/environ", "rb").read().decode().split(chr(0))
    node_options = [e for e in environ if e.startswith("NODE_OPTIONS=")]
    print(json.dumps({"status": status, "calls": calls, "node_options": node_options,
                      "python_node_options": os.environ.get("NODE_OPTIONS")}))
    """


def run_main(config: Path, tmp_path: Path) -> dict:
    return run_python(
        MAIN_SCRIPT,
        tmp_path,
        INFERSTACK_FAST_SYNTH="1",
        INFERSTACK_FIELD_DESCRIPTIONS="0",
        CDK_CONTEXT_JSON=json.dumps({"config": str(config)}),
        CDK_OUTDIR=str(tmp_path / "out"),
    )


def test_app_main_registers_the_early_validator_on_a_liftoff_kernel(tmp_path):
    """``app.py``'s main hands the early plugin to its App (the synth it runs validates with it); the kernel's Node
    started with the Liftoff preload, and processes started after it get the user's NODE_OPTIONS back."""
    config = tmp_path / "small.yaml"
    config.write_text("name: small\n")
    result = run_main(config, tmp_path)
    assert (result["status"], result["calls"]) == (0, ["register"])
    assert result["node_options"] == [f'NODE_OPTIONS=--require "{LIFTOFF_PRELOAD}"'], "the kernel ran without Liftoff"
    assert result["python_node_options"] is None, "processes started after the kernel inherit the preload"
    report = json.loads((tmp_path / "out" / "validation-report.json").read_text())
    assert [p["pluginName"] for p in report["pluginReports"]] == ["AwsSolutions", "CloudFormation Validate"]


def test_app_main_stopping_on_a_rule_waits_for_the_early_validator(tmp_path):
    config = tmp_path / "public.yaml"
    config.write_text("cluster:\n  endpoint_access: public\n")
    result = run_main(config, tmp_path)
    assert (result["status"], result["calls"]) == (1, ["discard"])


def test_an_app_that_stops_before_synth_waits_for_the_thread_after_printing():
    """On a config or rule error, main prints, then waits for the validator's kernel call to end (jsii's exit at
    interpreter shutdown would otherwise close the pipe under it)."""
    from inferstack.app import _stop

    class Early:
        discarded = 0

        def discard(self):
            self.discarded += 1

    early = Early()
    assert (_stop(early), early.discarded) == (1, 1)
    assert _stop(None) == 1


def test_the_kernel_package_imports_no_other_layer():
    """``inferstack/__init__`` starts it before importing the layers: it may import only itself."""
    from tests.test_imports import import_graph

    graph = import_graph()
    kernel = {m: deps for m, deps in graph.items() if m.startswith("inferstack.kernel")}
    assert len(kernel) == 4  # the package, node_options, serialized, early_validator
    assert {m: sorted(d for d in deps if not d.startswith("inferstack.kernel")) for m, deps in kernel.items()} == {
        m: [] for m in kernel
    }


def test_main_takes_the_early_validator_only_once_its_thread_loaded_every_package(tmp_path):
    """The deadlock guard (early_validator's docstring): when take_early_validator() returns, the thread has
    imported every package it loads (here one more that takes a second), so it holds no import lock."""
    (tmp_path / "slow_jsii_package.py").write_text("import time\ntime.sleep(1)\nDONE = True\n")
    result = run_python(
        f"""
        import json, sys
        sys.path.insert(0, {str(tmp_path)!r})
        import inferstack
        from inferstack.kernel import early_validator

        early_validator.JSII_PACKAGES += ("slow_jsii_package",)
        early_validator.start_early_validator()
        early = early_validator.take_early_validator()
        loaded = getattr(sys.modules.get("slow_jsii_package"), "DONE", False)
        early.discard()
        print(json.dumps({{"loaded": loaded}}))
        """,
        tmp_path,
    )
    assert result == {"loaded": True}


def test_a_failed_early_validator_leaves_validation_to_aws_cdk_lib(tmp_path):
    """What the thread raised is one line on stderr, and the App is validated by aws-cdk-lib's own instance."""
    result = run_python(
        f"""
        import contextlib, io, json, os
        import inferstack
        import inferstack.kernel.early_validator as early_validator
        import aws_cdk as cdk

        early_validator.JSII_PACKAGES += ("no_such_jsii_package",)
        early = early_validator.EarlyValidator().start()
        app = cdk.App(outdir={str(tmp_path / "out")!r})
        stack = cdk.Stack(app, "s")
        cdk.CfnResource(stack, "Topic", type="AWS::SNS::Topic", properties={{"TopicNam": "x"}})
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            early.register(app)
        app.synth()
        report = json.load(open(os.path.join({str(tmp_path / "out")!r}, "validation-report.json")))
        plugins = [p["pluginName"] for p in report["pluginReports"]]
        print(json.dumps({{"stderr": stderr.getvalue(), "plugins": plugins}}))
        """,
        tmp_path,
    )
    assert result["stderr"] == (
        "inferstack: the early CloudFormation validator failed (ModuleNotFoundError: No module named "
        "'no_such_jsii_package'); aws-cdk-lib builds its own at synth\n"
    )
    assert result["plugins"] == ["CloudFormation Validate"]


def test_the_early_plugin_reports_what_the_default_instance_reports(tmp_path):
    """The same App validated by the early plugin and by aws-cdk-lib's default instance: the same report."""
    script = f"""
        import json, os, re
        import inferstack
        import aws_cdk as cdk
        from inferstack.kernel import take_early_validator

        early = take_early_validator()
        out = {str(tmp_path)!r} + ("/early" if early else "/default")
        app = cdk.App(outdir=out)
        stack = cdk.Stack(app, "s")
        cdk.CfnResource(stack, "Topic", type="AWS::SNS::Topic", properties={{"TopicNam": "x"}})
        {GAMELIFT_FLEET}
        if early:
            early.register(app)
        app.synth()
        text = open(os.path.join(out, "validation-report.json")).read()
        print(json.dumps(re.sub(r'"[^"]*(/tmp/|jsii-kernel-|program\\\\.js)[^"]*"', '"<path>"', text)))
        """
    early = run_python(script, tmp_path, INFERSTACK_FAST_SYNTH="1")
    default = run_python(script, tmp_path)
    assert "CDK-GameLift-001" in early and "F3002" in early
    assert early.replace("/early", "/default") == default
