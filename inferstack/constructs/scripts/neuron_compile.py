"""Compile a model for AWS Neuron once and store the artifacts in s3://$BUCKET/$ARTIFACTS_PREFIX.

Idempotent: exits at once when the marker ($ARTIFACTS_PREFIX.inferstack-compile-complete) exists. Downloads the
weights from s3://$BUCKET/$MODEL_PREFIX to $MODEL_DIR (the path the server loads them from), then runs
``vllm.LLM(model=$MODEL_DIR, **$ENGINE_KWARGS)`` — the server's exact engine settings — which makes the vllm-neuron
plugin compile into $NEURON_COMPILED_ARTIFACTS (and load the result once, proving it works). Uploads that folder
and writes the marker last.
"""

import json
import os
import sys
import time

import boto3

bucket = os.environ["BUCKET"]
model_prefix, artifacts_prefix = os.environ["MODEL_PREFIX"], os.environ["ARTIFACTS_PREFIX"]
model_dir = os.environ.get("MODEL_DIR", "/models")
compiled = os.environ["NEURON_COMPILED_ARTIFACTS"]
engine_kwargs = json.loads(os.environ["ENGINE_KWARGS"])
marker = f"{artifacts_prefix}.inferstack-compile-complete"
s3 = boto3.client("s3")


def exists(key: str) -> bool:
    """Whether ``key`` exists, by listing it: the role's s3:ListBucket is conditioned on s3:prefix, and S3 answers a
    HeadObject of a missing key with 403 (not 404) to a caller without s3:ListBucket for the request
    (API_HeadObject, "Permissions") — a listing with Prefix=key is allowed and says it plainly."""
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=key, MaxKeys=1)
    return any(item["Key"] == key for item in listed.get("Contents", []))


if exists(marker):
    print(f"s3://{bucket}/{artifacts_prefix} already holds compiled artifacts; nothing to do")
    sys.exit(0)

sync_marker = os.environ.get("SYNC_MARKER")
while sync_marker and not exists(sync_marker):  # the model-sync Job may still be copying the weights
    print("waiting for the model sync to finish")
    time.sleep(30)

for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=model_prefix):
    for item in page.get("Contents", []):
        relative = item["Key"][len(model_prefix) :]
        if not relative or relative.startswith("neuron/") or relative.startswith(".inferstack"):
            continue
        target = os.path.join(model_dir, relative)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        s3.download_file(bucket, item["Key"], target)

from vllm import LLM  # noqa: E402 - only after the weights are local

print(f"compiling {model_dir} with {engine_kwargs} into {compiled}")
LLM(model=model_dir, **engine_kwargs)

uploaded = 0
for root, _, files in os.walk(compiled):
    for name in files:
        path = os.path.join(root, name)
        s3.upload_file(path, bucket, artifacts_prefix + os.path.relpath(path, compiled))
        uploaded += 1
if not uploaded:
    sys.exit(f"the compile produced nothing in {compiled}; not writing the marker")
s3.put_object(Bucket=bucket, Key=marker, Body=json.dumps(engine_kwargs, sort_keys=True).encode())
print("done")
