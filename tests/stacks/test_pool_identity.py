"""GIVEN every config of the repo, WHEN synthesized, THEN each pool's nodes carry exactly the labels and taints the
plan derives for it (``pool_labels`` / ``pool_node_taints``) — the managed node group's, the Karpenter NodePool's
and the scheduling rules' view are one derivation, so they cannot drift apart."""

from __future__ import annotations

from inferstack.catalog.instances import AcceleratorKind
from inferstack.plan import resolve

_CFN_EFFECT = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}


def _taint_dicts(taints) -> list[dict[str, str]]:
    return [{"key": t.key, "effect": t.effect, **({"value": t.value} if t.value is not None else {})} for t in taints]


def test_node_groups_and_node_pools_carry_the_plans_labels_and_taints(any_app):
    plan = resolve(any_app.config)
    groups = [
        r["Properties"]
        for name, template in any_app.templates.items()
        if name.endswith("-compute")
        for r in template["Resources"].values()
        if r["Type"] == "AWS::EKS::Nodegroup"
    ]
    node_pools = {o["metadata"]["name"]: o for o in any_app.kubernetes_objects() if o["kind"] == "NodePool"}
    checked = 0
    for pool in plan.pools.values():
        if pool.path.startswith("compute.karpenter_pools"):
            template = node_pools[pool.name]["spec"]["template"]
            assert template["metadata"]["labels"] == pool.labels
            assert template["spec"].get("taints", []) == _taint_dicts(pool.node_taints)
        else:
            (group,) = [g for g in groups if g["Labels"].get("inferstack.io/pool") == pool.name]
            assert group["Labels"] == pool.labels
            rendered = [
                {"key": t["Key"], "effect": _CFN_EFFECT[t["Effect"]], **({"value": t["Value"]} if "Value" in t else {})}
                for t in group.get("Taints", [])
            ]
            assert rendered == _taint_dicts(pool.node_taints)
        checked += 1
    assert checked == len(plan.pools)


def test_accelerated_pools_lead_with_the_accelerator_taint(any_app):
    for pool in resolve(any_app.config).pools.values():
        if pool.accelerator is not AcceleratorKind.NONE:
            first = pool.node_taints[0]
            assert (first.effect, first.value) == ("NoSchedule", "true")
            assert (first.key, "NoSchedule") in pool.taints
