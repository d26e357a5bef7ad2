"""The preStop drain of engines without --shutdown-timeout (the Neuron DLC's vLLM 0.16 cancels in-flight requests at
SIGTERM): the hook waits until the engine's own metrics say nothing runs or waits. Run here against a stand-in
/metrics."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading
import time

import pytest

from inferstack.constructs.vllm import drain_command


@pytest.fixture
def engine():
    state = {"running": 2}

    class Metrics(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = (
                f'vllm:num_requests_running{{engine="0",model_name="m"}} {state["running"]}.0\n'
                'vllm:num_requests_waiting{engine="0",model_name="m"} 0.0\n'
            )
            self.send_response(200)
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Metrics)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield state, server.server_address[1]
    server.shutdown()


def _run(port: int, budget: int) -> subprocess.Popen:
    command = list(drain_command(0, budget, port))
    command[0] = sys.executable
    return subprocess.Popen(command)


def test_the_hook_waits_for_running_requests_then_returns(engine):
    state, port = engine
    hook = _run(port, 30)
    time.sleep(2.5)
    assert hook.poll() is None, "returned while 2 requests still ran"
    state["running"] = 0
    assert hook.wait(timeout=10) == 0


def test_the_hook_gives_up_at_its_budget(engine):
    _, port = engine
    started = time.monotonic()
    assert _run(port, 2).wait(timeout=15) == 0
    assert time.monotonic() - started < 10


def test_the_neuron_server_drains_in_its_pre_stop(neuron_vllm_app):
    (server,) = [
        o
        for o in neuron_vllm_app.kubernetes_objects()
        if o["kind"] == "Deployment" and o["metadata"]["labels"].get("app.kubernetes.io/component") == "vllm"
    ]
    container = server["spec"]["template"]["spec"]["containers"][0]
    command = container["lifecycle"]["preStop"]["exec"]["command"]
    assert command[:2] == ["python3", "-c"] and "num_requests_(running|waiting)" in command[2]
    assert "--shutdown-timeout" not in container["args"]
