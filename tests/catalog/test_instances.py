"""Instance catalog: facts used by sizing and scheduling rules, checked against ../shared/facts."""

from __future__ import annotations

from inferstack.catalog.instances import INSTANCE_TYPES, AcceleratorKind, efa_capable, near_matches


def test_p5_facts():
    p5 = INSTANCE_TYPES["p5.48xlarge"]
    assert (p5.accelerator, p5.accelerator_model, p5.accelerator_count) == (AcceleratorKind.NVIDIA, "H100", 8)
    assert p5.accelerator_memory_gib == 80 and p5.max_efa_interfaces == 32 and p5.network_cards == 32


def test_inf2_has_neuron_cores_and_no_efa():
    inf2 = INSTANCE_TYPES["inf2.48xlarge"]
    assert inf2.accelerator is AcceleratorKind.NEURON and inf2.neuron_cores == 24
    assert not inf2.efa_supported


def test_efa_capable_list():
    capable = efa_capable()
    assert "p5.48xlarge" in capable and "g6e.48xlarge" in capable
    assert "g6e.2xlarge" not in capable and "trn1.2xlarge" not in capable


def test_every_family_of_the_mission_is_present():
    families = {t.family for t in INSTANCE_TYPES.values()}
    assert {"g5", "g6", "g6e", "p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "inf2", "trn1", "trn2"} <= families


def test_near_matches_prefer_the_same_family():
    assert near_matches("g6e.3xlarge")[0].startswith("g6e.")
    assert near_matches("p5.48xl")[0] == "p5.48xlarge"
