"""Kind ``dynamo``: NVIDIA Dynamo — a DynamoGraphDeployment of a frontend and vLLM workers, aggregated or
prefill/decode."""

from __future__ import annotations

from inferstack.charts.dynamo import DynamoChart
from inferstack.config.dynamo import DynamoWorkloadConfig
from inferstack.config.kinds import KindEndpoint, WorkloadKind
from inferstack.constructs.dynamo import DYNAMO_COMPILE_CACHE
from inferstack.plan.dynamo import plan_dynamo, runtime_image
from inferstack.plan.runtime_paths import DYNAMO_FRONTEND, dynamo_paths
from inferstack.rules import dynamo, serving

KIND = WorkloadKind(
    name="dynamo",
    summary="NVIDIA Dynamo: a DynamoGraphDeployment of a frontend and vLLM workers, aggregated or prefill/decode",
    config=DynamoWorkloadConfig,
    plan=plan_dynamo,
    chart=DynamoChart,
    paths=dynamo_paths,
    rules=(serving.RULES, dynamo.RULES),
    operators=("dynamo",),
    # the Dynamo operator makes <name>-frontend, selecting its component labels
    endpoint=KindEndpoint(port=DYNAMO_FRONTEND, path="/v1", provider="openai", suffix="-frontend"),
    operator_service_ports=(DYNAMO_FRONTEND,),
    # its workers run vLLM too, but which series reach their scrape endpoints is not confirmed (?): no dashboards
    engine_image=runtime_image,
    images=("dynamo-vllm", "dynamo-vllm-efa", "dynamo-frontend"),
    examples=("dynamo-disagg-efa.yaml",),
    compile_cache=DYNAMO_COMPILE_CACHE,  # mounted by the operator (compilationCache), on the workers
)
