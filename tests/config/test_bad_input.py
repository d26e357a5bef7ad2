"""Values AWS, Kubernetes or the engine would refuse at deploy or at start (issue 24 §10) are refused when the config
is read, each at the field that is wrong, with what would be valid; the value next to each is accepted."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from inferstack.config import ConfigError, parse_config

BASE: dict[str, Any] = {
    "compute": {"karpenter_pools": [{"name": "gpu", "instance_types": ["g6e.2xlarge"]}]},
    "workloads": [{"name": "qwen", "pool": "gpu", "model": {"id": "Qwen/Qwen3-8B"}}],
}


def _with(path: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    *parents, leaf = path.split(".")
    node: Any = data
    for part in parents:
        node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
    node[leaf] = value
    return data


def _problem(data: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as raised:
        parse_config(data)
    (problem,) = raised.value.problems
    return str(problem)


#: (config path, bad value, the field named, words of the message, a good value).
CASES = [
    ("network.vpc_cidr", "127.0.0.0/16", "network.vpc_cidr", "loopback", "10.1.0.0/16"),
    ("network.vpc_cidr", "169.254.0.0/16", "network.vpc_cidr", "link-local", "172.16.0.0/16"),
    ("network.vpc_cidr", "224.1.0.0/16", "network.vpc_cidr", "multicast", "192.168.0.0/16"),
    ("network.vpc_cidr", "0.0.0.0/16", "network.vpc_cidr", "'this network'", "100.64.0.0/16"),
    ("network.vpc_cidr", "250.0.0.0/16", "network.vpc_cidr", "reserved", "10.0.0.0/16"),
    (
        "compute.karpenter_pools.0.capacity_types",
        [],
        "compute.karpenter_pools[0].capacity_types",
        "no values",
        ["spot"],
    ),
    (
        "compute.karpenter_pools.0.capacity_types",
        ["spot", "spot"],
        "compute.karpenter_pools[0].capacity_types",
        "twice",
        ["spot", "on_demand"],
    ),
    (
        "compute.karpenter_pools.0.labels",
        {"a" * 254 + "/team": "ml"},
        "compute.karpenter_pools[0].labels",
        "at most 253",
        {"a" * 253 + "/team": "ml"},
    ),
    ("storage.model_bucket.bucket_name", "sthree-models", "storage.model_bucket.bucket_name", "'sthree-'", "models-1"),
    ("storage.model_bucket.bucket_name", "amzn-s3-demo-m", "storage.model_bucket.bucket_name", "reserves", "m-demo"),
    ("storage.model_bucket.bucket_name", "models--ol-s3", "storage.model_bucket.bucket_name", "'--ol-s3'", "models-ol"),
    ("storage.model_bucket.bucket_name", "models.mrap", "storage.model_bucket.bucket_name", "'.mrap'", "models.map"),
    ("storage.model_bucket.bucket_name", "m--x-s3", "storage.model_bucket.bucket_name", "'--x-s3'", "m-x-s3"),
    (
        "workloads.0.engine.extra_args",
        ["4"],
        "workloads[0].engine.extra_args[0]",
        "follows no flag",
        ["--max-loras", "4"],
    ),
    (
        "workloads.0.engine.extra_args",
        ["--enable-lora", "4"],
        "workloads[0].engine.extra_args[1]",
        "second model",
        ["--enable-lora"],
    ),
    ("workloads.0.model.served_name", "", "workloads[0].model.served_name", "1-256 characters", "qwen3-8b"),
    ("workloads.0.model.served_name", "qwen 3", "workloads[0].model.served_name", "without spaces", "qwen-3"),
    (
        "workloads.0.model.hf_token_secret",
        {"name": "hf", "key": "bad key!"},
        "workloads[0].model.hf_token_secret.key",
        "Secret key Kubernetes accepts",
        {"name": "hf", "key": "HF_TOKEN.v2"},
    ),
]


@pytest.mark.parametrize(("path", "bad", "field", "words", "good"), CASES, ids=[f"{c[0]}={c[1]!r}"[:60] for c in CASES])
def test_refused_at_the_field_with_what_is_valid(path, bad, field, words, good):
    problem = _problem(_with(path, bad))
    assert problem.startswith(f"{field}:"), problem
    assert words in problem, problem
    parse_config(_with(path, good))


# A workload that fails validation is reported at the field that is wrong, with what it should be: the kind's valid
# values, the key it was probably meant to be.
MISNAMED = [
    ("workloads.0.kind", "vllm-multinode", "workloads[0].kind", "did you mean vllm_multinode?", "vllm_multinode"),
    ("workloads.0.kind", "VLLM", "workloads[0].kind", "did you mean vllm?", "vllm"),
    ("workloads.0.replcas", 2, "workloads[0].replcas", "did you mean replicas?", None),
    ("workloads.0.engine", {"tensor_paralel_size": 1}, "workloads[0].engine.tensor_paralel_size",
     "did you mean tensor_parallel_size?", {"tensor_parallel_size": 1}),
    ("workloads.0.pool", "gpus", "workloads[0].pool", "did you mean gpu?", "gpu"),
]  # fmt: skip


@pytest.mark.parametrize(("path", "bad", "field", "words", "good"), MISNAMED, ids=[c[0] for c in MISNAMED])
def test_a_misnamed_value_is_refused_with_the_name_it_is_near(path, bad, field, words, good):
    problem = _problem(_with(path, bad))
    assert problem.startswith(f"{field}:"), problem
    assert words in problem, problem
    if good is not None:
        try:
            parse_config(_with(path, good))
        except ConfigError as error:  # right now: what is left (a vllm_multinode's nodes) is another field's
            assert all(not str(p).startswith(f"{field}:") for p in error.problems), error.report()


ARN = "arn:aws:iam::123456789012:role/platform-admins"
# Identifiers AWS and Kubernetes compare byte for byte: a look-alike letter (Cyrillic 'а' for 'a'), a non-ASCII digit
# or an invisible or trailing character (a YAML block scalar's newline) is refused at the field, by position.
LOOKALIKES = [
    ("cluster.admin_principal_arns", ["\u0430" + ARN[1:]], "cluster.admin_principal_arns[0]", "character 1", [ARN]),
    ("cluster.admin_principal_arns", [ARN.replace("admins", "\u0430dmins")], "cluster.admin_principal_arns[0]",
     "character 41 is 'а' (U+0430 CYRILLIC SMALL LETTER A)", [ARN]),
    ("cluster.admin_principal_arns", [ARN.replace("123", "\u0661\u0662\u0663")], "cluster.admin_principal_arns[0]",
     "character 14", [ARN]),
    ("cluster.admin_principal_arns", [ARN + "\n"], "cluster.admin_principal_arns[0]", "character 47 is '\\n'", [ARN]),
    ("env.account", "\u0661\u0662\u0663456789012", "env.account", "character 1", "123456789012"),
    ("env.account", "123456789012\n", "env.account", "character 13", "123456789012"),
    ("env.region", "us-west-\u0662", "env.region", "character 9", "us-west-2"),
    ("network.availability_zones", ["us-west-2a", "us-west-\u0662b"], "network.availability_zones[1]", "character 9",
     ["us-west-2a", "us-west-2b"]),
    ("cluster.name", "platform\n", "cluster.name", "character 9", "platform"),
    ("name", "infer\u200bstack", "name", "character 6 is '\\u200b' (U+200B ZERO WIDTH SPACE)", "inferstack"),
    ("compute.karpenter_pools.0.capacity_reservation_ids", ["cr-0123456789abcdef0", "cr-0123\u0430"],
     "compute.karpenter_pools[0].capacity_reservation_ids[1]", "character 8", ["cr-0123456789abcdef0"]),
    ("compute.karpenter_pools.0.capacity_reservation_ids", ["cr-0123\n"],
     "compute.karpenter_pools[0].capacity_reservation_ids[0]", "character 8", ["cr-0123"]),
    ("storage.model_bucket.bucket_name", "m\u043edels", "storage.model_bucket.bucket_name", "character 2", "models"),
    ("storage.model_bucket.bucket_name", "models\n", "storage.model_bucket.bucket_name", "character 7", "models"),
    ("storage.model_bucket.existing_bucket_name", "models\n", "storage.model_bucket.existing_bucket_name",
     "character 7", "models"),
    ("workloads.0.model.hf_token_secret", {"name": "hf-t\u043eken"}, "workloads[0].model.hf_token_secret.name",
     "character 5", {"name": "hf-token"}),
    ("workloads.0.model.hf_token_secret", {"name": "hf", "key": "token\n"}, "workloads[0].model.hf_token_secret.key",
     "character 6", {"name": "hf", "key": "token"}),
    ("workloads.0.namespace", "inference\n", "workloads[0].namespace", "character 10", "inference"),
    ("workloads.0.name", "qwen\n", "workloads[0].name", "character 5", "qwen"),
    ("workloads.0.model.revision", "main\n", "workloads[0].model.revision", "character 5", "main"),
    ("workloads.0.model.source", {"prefix": "models/x/\n"}, "workloads[0].model.source.prefix", "character 10",
     {"prefix": "models/x/"}),
    ("compute.karpenter_pools.0.labels", {"team\n": "ml"}, "compute.karpenter_pools[0].labels", "character 5",
     {"team": "ml"}),
    ("compute.karpenter_pools.0.labels", {"team": "ml\n"}, "compute.karpenter_pools[0].labels", "character 3",
     {"team": "ml"}),
    ("compute.karpenter_pools.0.taints", [{"key": "dedicated\n"}], "compute.karpenter_pools[0].taints[0].key",
     "character 10", [{"key": "dedicated"}]),
    ("compute.karpenter_pools.0.consolidate_after", "30m\n", "compute.karpenter_pools[0].consolidate_after",
     "character 4", "30m"),
]  # fmt: skip


@pytest.mark.parametrize(("path", "bad", "field", "words", "good"), LOOKALIKES, ids=[c[2] for c in LOOKALIKES])
def test_an_identifier_with_a_character_outside_ascii_is_refused_by_position(path, bad, field, words, good):
    data, fixed = _with(path, bad), _with(path, good)
    if "capacity_reservation_ids" in path:
        for config in (data, fixed):
            config["compute"]["karpenter_pools"][0]["capacity_types"] = ["reserved"]
    problem = _problem(data)
    assert problem.startswith(f"{field}:"), problem
    assert words in problem, problem
    parse_config(fixed)


# A benchmark ``vllm bench serve`` cannot run as written: no rate, prompt count or length is zero, negative, NaN or
# infinite, no rate leaves the Job's deadline before the last request is sent, and no concurrency asks for more
# requests in flight than there are prompts.
BENCH = [
    ("workloads.0.bench", {"request_rate": 0}, "workloads[0].bench.request_rate", "greater than 0",
     {"request_rate": 1}),
    ("workloads.0.bench", {"request_rate": -2.5}, "workloads[0].bench.request_rate", "greater than 0",
     {"request_rate": 2.5}),
    ("workloads.0.bench", {"request_rate": float("nan")}, "workloads[0].bench.request_rate", "finite",
     {"request_rate": 10}),
    ("workloads.0.bench", {"request_rate": float("inf")}, "workloads[0].bench.request_rate", "finite", {}),
    ("workloads.0.bench", {"request_rate": "inf"}, "workloads[0].bench.request_rate", "finite", {}),
    ("workloads.0.bench", {"num_prompts": 0}, "workloads[0].bench.num_prompts", "greater than or equal to 1",
     {"num_prompts": 1}),
    ("workloads.0.bench", {"concurrency": -1}, "workloads[0].bench.concurrency", "greater than or equal to 1",
     {"concurrency": 1}),
    ("workloads.0.bench", {"input_tokens": 0}, "workloads[0].bench.input_tokens", "greater than or equal to 1",
     {"input_tokens": 1}),
    ("workloads.0.bench", {"output_tokens": True}, "workloads[0].bench.output_tokens", "is a boolean",
     {"output_tokens": 1}),
    ("workloads.0.bench", {"num_prompts": 2.5}, "workloads[0].bench.num_prompts", "fractional", {"num_prompts": 2}),
    ("workloads.0.bench", {"request_rate": 0.01, "num_prompts": 200}, "workloads[0].bench.request_rate",
     "200 prompts at 0.01 requests/s take about 20,000 s to send, past the Job's deadline of 3,600 s",
     {"request_rate": 0.1, "num_prompts": 200}),
    ("workloads.0.bench", {"request_rate": 0.01, "num_prompts": 200}, "workloads[0].bench.request_rate",
     "raise request_rate to at least 0.056, send at most 35 prompts, or raise timeout_minutes to at least 334",
     {"request_rate": 0.01, "num_prompts": 200, "timeout_minutes": 334}),
    ("workloads.0.bench", {"concurrency": 64, "num_prompts": 10}, "workloads[0].bench.concurrency",
     "at most 10 requests are ever in flight", {"concurrency": 10, "num_prompts": 10}),
]  # fmt: skip


@pytest.mark.parametrize(("path", "bad", "field", "words", "good"), BENCH, ids=[str(c[1])[:50] for c in BENCH])
def test_a_benchmark_that_cannot_run_is_refused_at_the_field(path, bad, field, words, good):
    problem = _problem(_with(path, bad))
    assert problem.startswith(f"{field}:"), problem
    assert words in problem, problem
    parse_config(_with(path, good))


def test_a_default_concurrency_above_few_prompts_is_accepted():
    """The default concurrency (16) with a short run: the user asked for no concurrency, so none is misreported."""
    parse_config(_with("workloads.0.bench", {"num_prompts": 4}))


def _set(*changes: tuple[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    for path, value in changes:
        *parents, leaf = path.split(".")
        node: Any = data
        for part in parents:
            node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
        node[leaf] = value
    return data


# An option only read while another is on, set while that one is off: the user expects an effect that never comes,
# so it is refused at the option with the switch it waits for (leaving it unset, or turning the switch on, passes).
SILENT = [
    ([("observability.install_prometheus_stack", False), ("observability.grafana", True)],
     "observability.grafana", "install_prometheus_stack is false", "observability.install_prometheus_stack"),
    ([("observability.install_prometheus_stack", False), ("observability.prometheus_retention_days", 30)],
     "observability.prometheus_retention_days", "install_prometheus_stack is false",
     "observability.install_prometheus_stack"),
    ([("observability.install_prometheus_stack", False), ("observability.prometheus_storage_gib", 200)],
     "observability.prometheus_storage_gib", "install_prometheus_stack is false",
     "observability.install_prometheus_stack"),
    ([("observability.install_prometheus_stack", False), ("observability.prometheus_storage_class", "fast")],
     "observability.prometheus_storage_class", "install_prometheus_stack is false",
     "observability.install_prometheus_stack"),
    ([("observability.log_shipping", False), ("observability.log_retention_days", 90)],
     "observability.log_retention_days", "log_shipping is false", "observability.log_shipping"),
    ([("observability.log_shipping", False), ("observability.log_pod_exclusion", True)],
     "observability.log_pod_exclusion", "log_shipping is false", "observability.log_shipping"),
    ([("network.flow_logs", False), ("network.flow_log_retention_days", 90)],
     "network.flow_log_retention_days", "flow_logs is false", "network.flow_logs"),
    ([("workloads.0.autoscaling", {"kind": "hpa", "prometheus_url": "http://prometheus.monitoring:9090"})],
     "workloads[0].autoscaling.prometheus_url", "kind hpa", "workloads.0.autoscaling.kind"),
    ([("workloads.0.model.source", {"type": "s3_mount", "streamer_concurrency": 32})],
     "workloads[0].model.source.streamer_concurrency", "type s3 only", "workloads.0.model.source.type"),
    ([("workloads.0.model.source", {"type": "s3", "cache_size_gib": 200})],
     "workloads[0].model.source.cache_size_gib", "type hf only", "workloads.0.model.source.type"),
    ([("storage.model_bucket", {"existing_bucket_name": "models", "noncurrent_version_days": 7})],
     "storage.model_bucket.noncurrent_version_days", "existing_bucket_name",
     "storage.model_bucket.existing_bucket_name"),
    ([("storage.model_bucket", {"existing_bucket_name": "models", "encryption": "s3_managed"})],
     "storage.model_bucket.encryption", "existing_bucket_name", "storage.model_bucket.existing_bucket_name"),
    ([("storage.model_bucket", {"existing_bucket_name": "models", "access_logs": True})],
     "storage.model_bucket.access_logs", "existing_bucket_name", "storage.model_bucket.existing_bucket_name"),
]  # fmt: skip
#: What the switch each SILENT case waits for is set to, to pass.
SWITCHED_ON = {
    "observability.install_prometheus_stack": True,
    "observability.log_shipping": True,
    "network.flow_logs": True,
    "workloads.0.autoscaling.kind": "keda",
    "workloads.0.model.source.type": None,  # the type the option is read for, from the message
    "storage.model_bucket.existing_bucket_name": None,  # create the bucket instead
}


@pytest.mark.parametrize(("changes", "field", "words", "switch"), SILENT, ids=[c[1] for c in SILENT])
def test_an_option_that_would_do_nothing_is_refused_with_its_switch(changes, field, words, switch):
    problem = _problem(_set(*changes))
    assert problem.startswith(f"{field}:"), problem
    assert words in problem, problem
    parse_config(_set(*changes[:-1]))  # without the option: accepted
    on = SWITCHED_ON[switch]
    if switch.endswith("source.type"):
        on = "s3" if "streamer" in field else "hf"
    if switch.endswith("existing_bucket_name"):
        (_, bucket), *_ = [c for c in changes if c[0] == "storage.model_bucket"]
        parse_config(_set(("storage.model_bucket", {k: v for k, v in bucket.items() if k != "existing_bucket_name"})))
    else:
        parse_config(_set(*changes, (switch, on)))


def test_the_defaults_of_those_options_stay_quiet():
    """Switching the feature off without touching its options is accepted: nothing was asked of them."""
    parse_config(
        _set(
            ("observability.install_prometheus_stack", False),
            ("observability.log_shipping", False),
            ("network.flow_logs", False),
            ("observability.grafana", False),
        )
    )


# A value CloudWatch Logs does not take was rounded up to the next one it does (45 days → 60): refused instead.
def test_a_flow_log_retention_cloudwatch_does_not_take_is_refused_not_rounded():
    problem = _problem(_with("network.flow_log_retention_days", 45))
    assert problem.startswith("network.flow_log_retention_days: 45 — "), problem
    assert "1, 3, 5, 7, 14, 30, 60, 90" in problem, problem
    for days in (1, 60, 3653):
        parse_config(_with("network.flow_log_retention_days", days))


def test_a_gateway_database_volume_without_a_database_it_deploys_is_refused():
    gateway = {
        "kind": "litellm",
        "name": "gateway",
        "pool": "gpu",
        "master_key_secret": {"name": "litellm"},
        "routes": [{"name": "chat", "backends": [{"workload": "qwen"}]}],
    }
    data = _set(("workloads", [*BASE["workloads"], {**gateway, "database": {"storage_gib": 50}}]))
    problem = _problem(data)
    assert problem.startswith("workloads[1].database.storage_gib: 50 — read only with mode deploy"), problem
    deployed = {"mode": "deploy", "password_secret": {"name": "db"}, "storage_gib": 50}
    gateway |= {"database": deployed, "salt_key_secret": {"name": "salt"}}
    parse_config(_set(("workloads", [*BASE["workloads"], gateway])))


# An empty or blank string where a value is optional read as "not given" and fell back to the default without a word
# (an empty engine image ran the catalog's, an empty tool parser the model family's): refused at the field.
BLANK = [
    ("workloads.0.engine", {"image": ""}, "workloads[0].engine.image", "not a pinned image reference",
     {"image": "vllm/vllm-openai:v0.19.0"}),
    ("workloads.0.engine", {"image": "vllm/vllm-openai"}, "workloads[0].engine.image", "not a pinned image reference",
     {"image": "vllm/vllm-openai:v0.19.0"}),
    ("workloads.0.engine", {"tool_calling": {"parser": ""}}, "workloads[0].engine.tool_calling.parser",
     "leave parser unset", {"tool_calling": {"parser": "hermes"}}),
    ("workloads.0.engine", {"tool_calling": {"parser": "my parser"}}, "workloads[0].engine.tool_calling.parser",
     "a vLLM tool-call parser name", {"tool_calling": {"parser": "granite-20b-fc"}}),
    ("acknowledge", [{"rule": "EKS-LOGS", "reason": " " * 12}], "acknowledge[0].reason", "at least 10 characters",
     [{"rule": "EKS-LOGS", "reason": "logs go to our SIEM instead"}]),
]  # fmt: skip


@pytest.mark.parametrize(("path", "bad", "field", "words", "good"), BLANK, ids=[str(c[1])[:50] for c in BLANK])
def test_a_blank_string_is_refused_not_defaulted(path, bad, field, words, good):
    problem = _problem(_with(path, bad))
    assert problem.startswith(f"{field}:"), problem
    assert words in problem, problem
    parse_config(_with(path, good))


def test_a_config_changed_by_path_keeps_what_it_left_to_defaults():
    """The plan fills in ``max_model_len`` by changing the config (``with_changes``), and the checks above judge an
    option by whether the config sets it: a default must stay a default there, or a short benchmark with the default
    concurrency, or a switched-off Prometheus with its default settings, would be refused after the loader took it."""
    from inferstack.config.edit import with_changes

    config = parse_config(
        _set(("workloads.0.bench", {"num_prompts": 4}), ("observability.install_prometheus_stack", False))
    )
    changed = with_changes(config, {"workloads[0].engine.max_model_len": 4096})
    assert changed is not None
    assert changed.workloads[0].engine.max_model_len == 4096
    assert changed.model_dump() == config.model_dump() | {"workloads": changed.model_dump()["workloads"]}
