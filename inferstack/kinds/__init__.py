"""The built-in workload kinds, one module each, above the layers they name: each module imports its kind's config
model, plan function, rules, chart factory, runtime paths, endpoint, metrics, images and examples, and declares them
in one :class:`~inferstack.config.kinds.WorkloadKind`. Importing this package (``import inferstack`` does) registers
them in the store (:mod:`inferstack.config.kinds`), where the layers below look them up by ``kind``.

A kind of one's own: a module like these and one :func:`~inferstack.config.kinds.register_kind` call.
"""

from __future__ import annotations

from inferstack.config.kinds import WorkloadKind, register_kinds
from inferstack.kinds import dynamo, kserve, litellm, nim, ollama, ray_serve, sglang, tgi, triton, vllm, vllm_multinode

#: The kinds inferstack ships, in the order ``inferstack kinds`` and the error messages list them.
BUILT_IN_KINDS: tuple[WorkloadKind, ...] = (
    vllm.KIND,
    vllm_multinode.KIND,
    ray_serve.KIND,
    triton.KIND,
    sglang.KIND,
    tgi.KIND,
    ollama.KIND,
    litellm.KIND,
    kserve.KIND,
    nim.KIND,
    dynamo.KIND,
)

register_kinds(*BUILT_IN_KINDS, built_in=True)
