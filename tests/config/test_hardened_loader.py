"""Issue 16's YAML-loading class: each damaged file is one named problem (file, line and column), never a
traceback or a hang; YAML merge keys work."""

from __future__ import annotations

import time

import pytest

from inferstack.config import ConfigError, load_config


def problems(tmp_path, content: bytes) -> list[str]:
    path = tmp_path / "config.yaml"
    path.write_bytes(content)
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    return [str(p) for p in raised.value.problems]


def test_invalid_utf8_names_the_position(tmp_path):
    (problem,) = problems(tmp_path, b"name: demo\nnetwork:\n  vpc_cidr: \xff\xfe\n")
    assert problem.startswith("line 3, column 13:") and "UTF-8" in problem


def test_a_mapping_or_list_as_a_key_is_refused(tmp_path):
    for content in (b"{a: 1}: 2\n", b"[a, b]: 2\n", b"? {a: 1}\n: 2\n"):
        (problem,) = problems(tmp_path, content)
        assert problem.startswith("line 1") and "key must be a plain value" in problem


def test_deep_nesting_is_refused_without_recursion(tmp_path):
    (problem,) = problems(tmp_path, b"tags: " + b"[" * 3000 + b"]" * 3000 + b"\n")
    assert "nested" in problem


def test_an_alias_bomb_is_refused_quickly(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
    start = time.monotonic()
    (problem,) = problems(tmp_path, "\n".join(lines).encode() + b"\n")
    assert "alias" in problem and time.monotonic() - start < 5


def test_an_oversized_file_is_refused(tmp_path):
    (problem,) = problems(tmp_path, b"# " + b"x" * 1_000_001 + b"\n")
    assert problem.startswith("<file>:") and "larger than" in problem


def test_merge_keys_work_and_explicit_keys_win(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(
        "x-pool: &pool {instance_types: [g6e.2xlarge], max_accelerators: 8}\n"
        "compute:\n  karpenter_pools:\n    - <<: *pool\n      name: gpu\n      max_accelerators: 16\n"
    )
    with pytest.raises(ConfigError) as raised:  # x-pool is not a config key: the merge itself worked
        load_config(path)
    assert [str(p).split(":")[0] for p in raised.value.problems] == ["x-pool"]
    path.write_text(
        "compute:\n  karpenter_pools:\n    - &gpu {name: gpu, instance_types: [g6e.2xlarge], max_accelerators: 8}\n"
        "    - <<: *gpu\n      name: gpu-big\n      max_accelerators: 16\n"
    )
    pools = load_config(path).compute.karpenter_pools
    assert [(p.name, p.max_accelerators) for p in pools] == [("gpu", 8), ("gpu-big", 16)]
    assert pools[1].instance_types == ("g6e.2xlarge",)


def test_duplicate_keys_are_still_refused(tmp_path):
    (problem,) = problems(tmp_path, b"name: a\nname: b\n")
    assert problem.startswith("line 2") and "duplicate key 'name'" in problem
