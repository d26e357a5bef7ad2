"""Command line: ``python -m inferstack.cli {summary,schema,check,plan,preflight,bench,diff,export}``.

* ``summary [CDK_OUT]`` — stacks, resources, Kubernetes objects and Helm charts in a synthesized cloud assembly;
* ``schema`` — the JSON Schema of the config (for editors) on stdout;
* ``check [CONFIG]`` — validate a config and run every rule, without synthesizing;
* ``plan [CONFIG]`` — per workload: accelerator, TP/PP, weights, KV budget, tokens, concurrency, verdict;
* ``preflight [CONFIG] [--cluster NAME]`` — the real account (read-only, the caller's credentials): quotas,
  offerings, EFA, reservations, the model bucket, the EKS version; with ``--cluster``, a team's own cluster's
  add-ons and Helm releases against what inferstack would install there;
* ``bench NAME [CONFIG]`` — the ``kubectl`` command that starts one run of workload NAME's benchmark Job;
* ``export CONFIG DIR`` — the workloads' Kubernetes side as plain YAML for Argo CD (Applications for the Helm
  releases, sync waves that keep the CDK order);
* ``diff OLD NEW`` — the stateful resources (buckets, FSx, keys, log groups, volumes) going from config OLD to NEW
  replaces, renames, orphans or deletes, and the data each holds; 1 when data would be lost.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

# DEPLOY_TIME_VALUE, MANIFEST_TYPE and json_property are re-exported: the gates and tests read them from here.
from inferstack.assembly import DEPLOY_TIME_VALUE as DEPLOY_TIME_VALUE
from inferstack.assembly import HELM_TYPE, kubernetes_objects
from inferstack.assembly import MANIFEST_TYPE as MANIFEST_TYPE
from inferstack.assembly import json_property as json_property
from inferstack.config import ConfigError, InferstackConfig, load_config
from inferstack.config.base import require_field_descriptions

if TYPE_CHECKING:
    from inferstack.charts.workload import StorageRefs


def summarize(out_dir: Path) -> str:
    manifest = json.loads((out_dir / "manifest.json").read_text())
    lines = [f"Synthesized to {out_dir.resolve()}"]
    total = 0
    stacks = {n: a for n, a in manifest["artifacts"].items() if a.get("type") == "aws:cloudformation:stack"}

    def depth(name: str) -> int:
        deps = [d for d in stacks[name].get("dependencies", []) if d in stacks]
        return 1 + max((depth(d) for d in deps), default=0)

    for name, artifact in sorted(stacks.items(), key=lambda item: (depth(item[0]), item[0])):
        path = out_dir / artifact["properties"]["templateFile"]
        template = json.loads(path.read_text())
        resources = template.get("Resources", {})
        total += len(resources)
        helm = [r["Properties"].get("Chart") for r in resources.values() if r.get("Type") == HELM_TYPE]
        kinds = Counter(obj.get("kind", "?") for obj in kubernetes_objects(template))
        parts = [f"{len(resources)} resources", f"{path.stat().st_size / 1024:.0f} KiB"]
        if helm:
            parts.append(f"Helm charts: {', '.join(sorted(map(str, helm)))}")
        if kinds:
            parts.append("Kubernetes objects: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())))
        lines.append(f"  {name:<28} {' · '.join(parts)}  ({path.name})")
    lines.append(f"  total: {total} resources. Deploy with: npx cdk deploy --all")
    return "\n".join(lines)


def plan_table(config: InferstackConfig) -> str:
    """Per vLLM engine (a workload, or each model / prefill-decode side of a Ray app): accelerator, parallelism,
    weights, KV budget and tokens, concurrency, verdict."""
    from inferstack.plan import resolve
    from inferstack.plan.served import engines, memory_per_rank_gib, ranks_per_node, sizing_for

    header = (
        f"{'workload':<24} {'pool':<12} {'instance':<16} {'accel':<12} {'TP×PP':>6} {'weights':>9} "
        f"{'KV budget':>10} {'KV tokens':>11} {'max len':>8} {'concur.':>8}  verdict"
    )
    lines = [header, "-" * len(header)]
    plan = resolve(config)
    config = plan.config  # with the defaults the plan fills in (max_model_len)
    judged = list(engines(config))
    for path, served in judged:
        workload = served.workload
        resolved = plan.workload(workload)
        pool = resolved.pool
        part = path.removeprefix(resolved.path).lstrip(".").removeprefix("prefill_decode.")
        name = f"{workload.namespace}/{workload.name}" + (f" {part}" if part else "")
        engine = served.engine
        parallel = served.ranks_per_pod
        hosts = [t for t in pool.instances if ranks_per_node(t) >= parallel]
        if not hosts:
            lines.append(f"{name:<24} {pool.name:<12} {'-':<16} {'-':<12} {parallel:>6}  no instance holds {parallel}")
            continue
        host = min(hosts, key=lambda t: (ranks_per_node(t), t.vcpu))
        result = sizing_for(served, host)
        accel = f"{host.accelerator_model} {memory_per_rank_gib(host):.0f}G"
        verdict = "fits" if result.fits else "DOES NOT FIT"
        nodes = f" on {served.nodes} nodes" if served.nodes > 1 else ""
        startup = resolved.server.pod.startup_seconds
        budget = f" (startup ≤ {startup}s)" if startup else ""
        lines.append(
            f"{name:<24} {pool.name:<12} {host.name:<16} {accel:<12} "
            f"{engine.tensor_parallel_size}×{engine.pipeline_parallel_size:<4} {result.weights_gib:>7.2f}G "
            f"{result.kv_budget_gib:>9.2f}G {result.kv_tokens:>11,} {served.max_model_len:>8,} "
            f"{result.concurrency:>7.1f}×  {verdict}{nodes}{budget}"
        )
    planned = {served.workload.name for _, served in judged}
    for resolved in plan.workloads:
        if resolved.name not in planned:
            lines.append(f"{resolved.namespace}/{resolved.name:<14} {resolved.pool.name:<12} no accelerator to plan")
    return "\n".join(lines)


def _plan(config_path: str) -> int:
    try:
        config = load_config(config_path)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    if not config.workloads:
        print(f"{config_path}: no workloads")
        return 0
    from inferstack.plan.cost import cost_table

    print(plan_table(config))
    print()
    print(cost_table(config))
    return 0


def _endpoints(config_path: str) -> int:
    """Print where each workload answers and the commands that try it (:mod:`inferstack.plan.access`)."""
    from inferstack.plan.access import access_report

    try:
        config = load_config(config_path)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(access_report(config), end="")
    return 0


def _bench(name: str, config_path: str) -> int:
    """Print the command that starts one run of workload ``name``'s benchmark, and where its results land."""
    from inferstack.plan.bench import BenchError, resolve_bench

    try:
        config = load_config(config_path)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    matches = [w for w in config.workloads if w.name == name]
    if not matches:
        names = ", ".join(sorted(w.name for w in config.workloads)) or "none"
        print(f"{config_path}: no workload {name!r} — workloads: {names}", file=sys.stderr)
        return 1
    for workload in matches:
        index = config.workloads.index(workload)
        try:
            bench = resolve_bench(workload)
        except BenchError as problem:
            print(f"workloads[{index}].{problem.field}: {problem} — {problem.fix}", file=sys.stderr)
            return 1
        if bench is None:
            print(
                f"workloads[{index}].bench: {name!r} has no bench — add one (concurrency, input_tokens…)",
                file=sys.stderr,
            )
            return 1
        from inferstack.constructs.bench import run_command

        load = bench.config
        print(
            f"# {name}: vllm bench serve → {bench.base_url}{bench.endpoint} (model {bench.model}), {load.num_prompts}"
        )
        print(f"# prompts of {load.input_tokens} → {load.output_tokens} tokens, {load.concurrency} in flight")
        print(run_command(name, workload.namespace))
        print(f"# results: s3://<model bucket>/{bench.results_prefix}<UTC time>/result.json")
    return 0


def placeholder_refs(config: InferstackConfig) -> StorageRefs:
    """The AWS-side values ``check`` renders the workloads with (no stacks): literals where synth has tokens, and
    what comes from the config as synth takes it (:func:`~inferstack.charts.workload.config_refs`), so the objects
    are named and configured as synth renders them (overrides may name them)."""
    from inferstack.charts.workload import StorageRefs, config_refs

    return StorageRefs(
        region="us-east-1",
        bucket="bucket",
        fsx_id="fs-0123456789abcdef0",
        fsx_dns_name="fsx.example",
        fsx_mount_name="mount",
        efs_id="fs-0123456789abcdef1",
        **config_refs(config.storage),
        sync_image=config.storage.model_sync_image or "registry.invalid/inferstack/model-sync:check",
    )


def _check(config_path: str) -> int:
    from inferstack.rules import evaluate

    try:
        config = load_config(config_path)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    report = evaluate(config)
    if not report.errors and config.workloads:
        # Render the workloads' charts (cdk8s only, no CDK stacks): overrides and every construct's own checks run
        # on the rendered objects, so what passes check does not fail later in synth.
        from inferstack.constructs.custom_resource import CustomResourceError
        from inferstack.constructs.validation import PropError
        from inferstack.plan.workloads import workloads_plan
        from inferstack.stacks.workloads import render_workloads

        try:
            placeholders = placeholder_refs(config)
            render_workloads(workloads_plan(config), None, placeholders)
        except ConfigError as exc:
            print(ConfigError(config_path, exc.problems), file=sys.stderr)
            return 1
        except (PropError, CustomResourceError) as exc:
            print(f"{config_path}: {exc}", file=sys.stderr)
            return 1
    for finding, reason in report.acknowledged:
        print(f"acknowledged: {finding} (reason: {reason})")
    for finding in report.warnings:
        print(f"warning: {finding}")
    for finding in report.errors:
        print(f"error: {finding}", file=sys.stderr)
    if report.errors:
        return 1
    print(f"{config_path}: OK")
    return 0


def _preflight(
    config_path: str,
    region: str | None,
    clients: Any = None,
    *,
    prices: bool = False,
    cluster: str | None = None,
    releases: Any = None,
) -> int:
    """Run the preflight checks with the caller's credentials (read-only); 1 when any check fails. ``cluster``: a
    team's own cluster, whose add-ons and Helm releases are checked too (``releases``: the Helm release lister,
    default kubectl)."""
    from inferstack.preflight import Preflight, boto3_clients, table
    from inferstack.preflight_cluster import TeamCluster, kubectl_releases

    try:
        config = load_config(config_path)
        factory = clients or boto3_clients(region or config.env.region)
        results = Preflight(config, factory, prices=prices).run()
        if cluster is not None:
            results += TeamCluster(config, cluster, factory, releases or kubectl_releases).run()
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(table(results))
    failed = [r for r in results if not r.passed]
    print(f"{config_path}: {len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def synth_error(path: str, exc: Exception) -> str:
    """How a refused synthesis of config ``path`` is printed: a config problem found while rendering (an
    override) at the config's path, a rule violation with the rules' findings, a construct's refusal with the
    path."""
    from inferstack.rules import RuleViolationError

    if isinstance(exc, ConfigError):
        return str(exc if exc.source == path else ConfigError(path, exc.problems))
    if isinstance(exc, RuleViolationError):
        return f"inferstack: {path}: {exc}"
    return f"{path}: {exc}"


def _diff(old_path: str, new_path: str, accepted: list[str]) -> int:
    """Synthesize both configs and list what the change does to stateful resources: 0 when nothing stateful is lost
    (or every loss is in ``accepted``), 1 when something is, 2 when a config is not valid."""
    from inferstack.constructs.custom_resource import CustomResourceError
    from inferstack.constructs.validation import PropError
    from inferstack.diff import Change, compare, synthesize, table, unaccepted
    from inferstack.rules import RuleViolationError

    configs = []
    for path in (old_path, new_path):
        try:
            configs.append(load_config(path))
        except ConfigError as exc:
            print(exc, file=sys.stderr)
            return 2
    snapshots = []
    for path, config in zip((old_path, new_path), configs, strict=True):
        try:
            snapshots.append(synthesize(config))
        except (ConfigError, RuleViolationError, CustomResourceError, PropError) as exc:
            print(synth_error(path, exc), file=sys.stderr)
            return 2
    changes = compare(*snapshots)
    for name in accepted:
        if not any(c.lost and name in (c.key, c.resource) for c in changes):
            print(f"warning: --accept-loss {name}: this change loses no such resource", file=sys.stderr)
    if not changes:
        print(f"{old_path} → {new_path}: no stateful resource is replaced, renamed, orphaned or deleted")
        return 0
    print(table(changes))
    print()
    losses = unaccepted(changes, accepted)
    if losses:
        print(
            f"{old_path} → {new_path}: {len(losses)} stateful resource{'s' if len(losses) != 1 else ''} would lose "
            "data or leave the stacks' management — keep the old names and properties, move the data first, or "
            "accept: " + " ".join(f"--accept-loss {c.key}" for c in losses)
        )
        return 1
    lost = [c for c in changes if c.lost]
    refused = [c for c in changes if c.change is Change.REFUSED]
    verdict = f"{len(lost)} loss{'es' if len(lost) != 1 else ''} accepted" if lost else "nothing stateful is lost"
    tail = (
        f"; {len(refused)} update{'s' if len(refused) != 1 else ''} refused: the deploy would fail" if refused else ""
    )
    print(f"{old_path} → {new_path}: {verdict}{tail}")
    return 0


def synthesize_for_export(config: InferstackConfig, out_dir: Path) -> tuple[Any, tuple[str, ...]]:
    """Synthesize ``config`` with its Kubernetes side applied by CDK (whatever ``kubernetes_delivery`` says: the
    export writes that side) into ``out_dir``, with every check ``build_platform`` runs; return the assembly and
    the workloads stacks' names."""
    import aws_cdk as cdk

    from inferstack.assembly import cdk_context
    from inferstack.config.edit import with_changes
    from inferstack.config.model import KubernetesDelivery
    from inferstack.export import Assembly
    from inferstack.stacks import build_platform

    applied = with_changes(config, {"kubernetes_delivery": KubernetesDelivery.CDK.value})
    app = cdk.App(outdir=str(out_dir), context=cdk_context())  # ./cdk.json, as cdk synth reads it
    platform = build_platform(app, applied)
    app.synth()
    return Assembly.read(out_dir), tuple(stack.stack_name for stack in platform.workloads)


def _export(config_path: str, out: str, args: argparse.Namespace) -> int:
    """Write the workloads' Kubernetes side of ``config_path`` into folder ``out`` for Argo CD: 0 when written,
    1 when it cannot be (a bad config, a refused rule, a deploy-time value not given, a folder not empty)."""
    import tempfile

    from inferstack.constructs.custom_resource import CustomResourceError
    from inferstack.constructs.validation import PropError
    from inferstack.export import ArgoCdTarget, DeployTimeValues, ExportError, export, outputs_from_cli, write
    from inferstack.rules import RuleViolationError

    target_dir = Path(out)
    try:
        config = load_config(config_path)
        outputs: dict[tuple[str, str], str] = {}
        exports: dict[str, str] = {}
        if args.stack_outputs:
            outputs, exports = outputs_from_cli(Path(args.stack_outputs).read_text())
        for item in args.output:
            name, sep, value = item.partition("=")
            stack, slash, key = name.partition("/")
            if not sep or not slash or not stack or not key:
                raise ExportError(f"--output {item!r}: write it as STACK/OUTPUT_KEY=VALUE")
            outputs[(stack, key)] = value
        if target_dir.exists() and any(target_dir.iterdir()):
            raise ExportError(f"{target_dir}: not empty — export into a new folder (an export never overwrites files)")
        with tempfile.TemporaryDirectory(prefix="inferstack-export-") as tmp:
            assembly, stacks = synthesize_for_export(config, Path(tmp))
        values = DeployTimeValues(
            account=args.account or config.env.account,
            region=args.region or config.env.region,
            outputs=outputs,
            exports=exports,
        )
        target = ArgoCdTarget(
            namespace=args.argocd_namespace, project=args.project, server=args.server, prefix=config.name
        )
        result = export(assembly, stacks, values, target)
        written = write(result, target_dir)
    except (ExportError, OSError) as exc:
        print(f"inferstack export: {exc}", file=sys.stderr)
        return 1
    except (ConfigError, RuleViolationError, CustomResourceError, PropError) as exc:
        print(synth_error(config_path, exc), file=sys.stderr)
        return 1
    waves = max((f.wave for f in result.files), default=-1) + 1
    print(f"{target_dir}: {len(written)} files in {waves} sync waves from {', '.join(stacks)} (README.md says how)")
    if config.kubernetes_delivery.value != "gitops":
        print(
            "note: the config's kubernetes_delivery is 'cdk': cdk deploy would apply these objects too — set "
            "kubernetes_delivery: gitops before deploying, so that Argo CD alone applies them",
            file=sys.stderr,
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="inferstack", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    summary = sub.add_parser("summary", help="summarize a synthesized cloud assembly")
    summary.add_argument("out", nargs="?", default="cdk.out")
    sub.add_parser("schema", help="print the config's JSON Schema")
    check = sub.add_parser("check", help="validate a config and run the rules")
    check.add_argument("config", nargs="?", default="inferstack.yaml")
    plan = sub.add_parser("plan", help="memory plan of every workload (weights, KV cache, concurrency)")
    plan.add_argument("config", nargs="?", default="inferstack.yaml")
    preflight = sub.add_parser("preflight", help="check the real account (quotas, offerings, EFA, reservations)")
    preflight.add_argument("config", nargs="?", default="inferstack.yaml")
    preflight.add_argument("--region", help="AWS region. Default: env.region of the config, else the session's")
    preflight.add_argument(
        "--prices", action="store_true", help="also compare the vendored prices with the Pricing API"
    )
    preflight.add_argument(
        "--cluster",
        metavar="NAME",
        help="a team's own EKS cluster the platform goes onto: list its add-ons and Helm releases (kubectl, its "
        "context from 'aws eks update-kubeconfig') against what inferstack would install there",
    )
    endpoints = sub.add_parser(
        "endpoints", help="where each workload answers, and the port-forward and curl that try it"
    )
    endpoints.add_argument("config", nargs="?", default="inferstack.yaml")
    bench = sub.add_parser("bench", help="print the command that runs a workload's benchmark Job")
    bench.add_argument("name", help="the workload's name")
    bench.add_argument("config", nargs="?", default="inferstack.yaml")
    diff = sub.add_parser(
        "diff",
        help="stateful resources a config change replaces, renames, orphans or deletes",
        description="Synthesize OLD and NEW (no AWS call) and list every stateful resource the change replaces, "
        "renames, orphans or deletes — buckets, FSx for Lustre, KMS keys, log groups, the cluster, and the volumes "
        "of PersistentVolumeClaims (a LiteLLM gateway's Postgres, Prometheus, Ollama, NIM caches) — with the data "
        "each holds. Exit 0 when nothing stateful is lost, 1 when something is (unless accepted), 2 when a config "
        "is not valid.",
    )
    diff.add_argument("old", metavar="OLD", help="the config deployed now")
    diff.add_argument("new", metavar="NEW", help="the config to deploy")
    diff.add_argument(
        "--accept-loss",
        action="append",
        default=[],
        metavar="RESOURCE",
        help="acknowledge one loss the table lists, as <stack or namespace>/<resource> (or the resource alone), "
        "e.g. gateway-storage/ModelBucketB33D855B or gateway/data-llm-gateway-postgres-0: it is still printed, "
        "but no longer fails the command. Repeat for each loss",
    )
    gitops = sub.add_parser(
        "export",
        help="write the workloads' Kubernetes side as YAML for Argo CD, in sync waves",
        description="Synthesize CONFIG (no AWS call) and write what its workloads stacks apply into DIR: each object "
        "in a folder per namespace (cluster/ for cluster-scoped ones), each Helm release as an Argo CD Application "
        "(argocd/), every one with the sync wave that keeps the CDK order, and a README. Deploy the platform with "
        "kubernetes_delivery: gitops so that its workloads stacks hold only their AWS resources.",
    )
    gitops.add_argument("config", metavar="CONFIG")
    gitops.add_argument("out", metavar="DIR", help="a new or empty folder")
    gitops.add_argument(
        "--account", help="the AWS account id, for values CloudFormation fills in. Default: env.account"
    )
    gitops.add_argument("--region", help="the AWS region. Default: env.region of the config")
    gitops.add_argument(
        "--stack-outputs",
        metavar="FILE",
        help="the JSON of 'aws cloudformation describe-stacks' after deploying the platform (the model bucket's name…)",
    )
    gitops.add_argument(
        "--output", action="append", default=[], metavar="STACK/KEY=VALUE", help="one stack output's value; repeatable"
    )
    gitops.add_argument("--argocd-namespace", default="argocd", help="the Applications' namespace. Default argocd")
    gitops.add_argument("--project", default="default", help="the Applications' Argo CD project. Default default")
    gitops.add_argument(
        "--server", default="https://kubernetes.default.svc", help="the destination cluster. Default: in-cluster"
    )
    args = parser.parse_args(argv)
    if args.command == "export":
        return _export(args.config, args.out, args)
    if args.command == "diff":
        return _diff(args.old, args.new, args.accept_loss)
    if args.command == "bench":
        return _bench(args.name, args.config)
    if args.command == "endpoints":
        return _endpoints(args.config)
    if args.command == "preflight":
        return _preflight(args.config, args.region, prices=args.prices, cluster=args.cluster)
    if args.command == "summary":
        out = Path(args.out)
        if not (out / "manifest.json").is_file():
            print(f"{out}: no cloud assembly here — run `make synth` first", file=sys.stderr)
            return 1
        print(summarize(out))
        return 0
    if args.command == "schema":
        require_field_descriptions("inferstack schema")
        schema = InferstackConfig.model_json_schema(by_alias=True)
        print(json.dumps(schema, indent=2, sort_keys=True))
        return 0
    if args.command == "plan":
        return _plan(args.config)
    return _check(args.config)


if __name__ == "__main__":
    raise SystemExit(main())
