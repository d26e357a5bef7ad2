"""Compile a model for AWS Neuron once and store the artifacts in s3://$BUCKET/$ARTIFACTS_PREFIX.

Idempotent: exits at once when the marker ($ARTIFACTS_PREFIX.inferstack-compile-complete) exists. Downloads the
weights from s3://$BUCKET/$MODEL_PREFIX, lets vLLM (Neuron plugin) compile them with the serving parallelism into
$NEURON_COMPILED_ARTIFACTS, uploads that folder and writes the marker last.
"""

import os
import sys
import time

import boto3
from botocore.exceptions import ClientError

bucket = os.environ["BUCKET"]
model_prefix, artifacts_prefix = os.environ["MODEL_PREFIX"], os.environ["ARTIFACTS_PREFIX"]
work = os.environ.get("WORK_DIR", "/work")
marker = f"{artifacts_prefix}.inferstack-compile-complete"
s3 = boto3.client("s3")

try:
    s3.head_object(Bucket=bucket, Key=marker)
    print(f"s3://{bucket}/{artifacts_prefix} already holds compiled artifacts; nothing to do")
    sys.exit(0)
except ClientError as error:
    if error.response["Error"]["Code"] not in ("404", "NoSuchKey", "NotFound"):
        raise

sync_marker = os.environ.get("SYNC_MARKER")
while sync_marker:  # the model-sync Job may still be copying the weights
    try:
        s3.head_object(Bucket=bucket, Key=sync_marker)
        break
    except ClientError:
        print("waiting for the model sync to finish")
        time.sleep(30)

model_dir = os.path.join(work, "model")
for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=model_prefix):
    for item in page.get("Contents", []):
        relative = item["Key"][len(model_prefix) :]
        if not relative or relative.startswith("neuron/") or relative.startswith(".inferstack"):
            continue
        target = os.path.join(model_dir, relative)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        s3.download_file(bucket, item["Key"], target)

from vllm import LLM  # noqa: E402 - only after the weights are local

LLM(
    model=model_dir,
    device="neuron",
    tensor_parallel_size=int(os.environ["TENSOR_PARALLEL_SIZE"]),
    max_model_len=int(os.environ["MAX_MODEL_LEN"]),
    max_num_seqs=int(os.environ["MAX_NUM_SEQS"]),
)

compiled = os.environ["NEURON_COMPILED_ARTIFACTS"]
for root, _, files in os.walk(compiled):
    for name in files:
        path = os.path.join(root, name)
        s3.upload_file(path, bucket, artifacts_prefix + os.path.relpath(path, compiled))
s3.put_object(Bucket=bucket, Key=marker, Body=b"compiled\n")
print("done")
