"""PREFIX-OVERLAP: each model has a bucket prefix of its own.

The model-sync Job mirrors one model's file set into its prefix and deletes what the set leaves out (the bucket is
versioned, so nothing is lost for good, but the serving copy is). So:

* two workloads may share a prefix only for the same model at the same revision;
* no model prefix may contain another (the outer sync would delete the inner model's files);
* no model prefix may overlap the benchmarks' results tree (``bench/``), which benchmark Jobs write.
"""

from __future__ import annotations

from collections.abc import Iterator

from inferstack.config.model import InferstackConfig
from inferstack.config.workloads import BUCKET_SOURCES
from inferstack.rules.base import Finding, Rule

RULE_ID = "PREFIX-OVERLAP"
#: Where benchmark Jobs write their results (``bench/<namespace>/<workload>/``, inferstack.plan.bench).
BENCH_TREE = "bench/"


def check(config: InferstackConfig) -> Iterator[Finding]:
    seen: dict[str, tuple[str, str]] = {}  # prefix -> (model@revision, config path)
    for index, workload in enumerate(config.workloads):
        for relative, model in workload.model_entries:
            if model.source.type not in BUCKET_SOURCES:
                continue
            path = f"workloads[{index}].{relative}.source.prefix"
            prefix, identity = model.bucket_prefix, f"{model.id}@{model.revision}"
            fix = "give each model (and revision) a prefix of its own, e.g. leave source.prefix unset"
            if prefix.startswith(BENCH_TREE) or BENCH_TREE.startswith(prefix):
                yield Finding(
                    rule=RULE_ID,
                    path=path,
                    message=f"{prefix} overlaps {BENCH_TREE}, where benchmark Jobs write their results",
                    fix="put the model outside bench/ (the default is models/<id>/<revision>/)",
                )
                continue
            other = seen.get(prefix)
            if other is not None and other[0] != identity:
                yield Finding(
                    rule=RULE_ID,
                    path=path,
                    message=f"{prefix} already holds {other[0]} ({other[1]}): the sync of {identity} would replace "
                    "its files",
                    fix=fix,
                )
                continue
            nested = next(
                ((p, o) for p, o in seen.items() if p != prefix and (p.startswith(prefix) or prefix.startswith(p))),
                None,
            )
            if nested is not None:
                outer, inner = (prefix, nested[0]) if nested[0].startswith(prefix) else (nested[0], prefix)
                yield Finding(
                    rule=RULE_ID,
                    path=path,
                    message=f"{prefix} and {nested[0]} ({nested[1][1]}) are nested: the sync of {outer} would delete "
                    f"the files of {inner}",
                    fix=fix,
                )
                continue
            seen.setdefault(prefix, (identity, path))


RULE = Rule(id=RULE_ID, title="Each model has a bucket prefix of its own", check=check)
RULES = (RULE,)
