"""Copy one Hugging Face model revision into s3://$BUCKET/$PREFIX, once.

Idempotent: a marker object ($PREFIX.inferstack-sync-complete) is written last; when it exists the job exits at
once. Files are streamed one at a time (download, upload, delete), so local disk needs only the largest shard.
"""

import fnmatch
import os
import sys
import tempfile

import boto3
from botocore.exceptions import ClientError
from huggingface_hub import HfApi, hf_hub_download

bucket, prefix = os.environ["BUCKET"], os.environ["PREFIX"]
repo, revision = os.environ["MODEL_ID"], os.environ["REVISION"]
token = os.environ.get("HF_TOKEN") or None
marker = f"{prefix}.inferstack-sync-complete"
s3 = boto3.client("s3")

try:
    s3.head_object(Bucket=bucket, Key=marker)
    print(f"s3://{bucket}/{prefix} already holds {repo}@{revision}; nothing to do")
    sys.exit(0)
except ClientError as error:
    if error.response["Error"]["Code"] not in ("404", "NoSuchKey", "NotFound"):
        raise

include = [p for p in os.environ.get("INCLUDE", "").split(",") if p]
exclude = [p for p in os.environ.get("EXCLUDE", "").split(",") if p]


def wanted(name: str) -> bool:
    """In the file set the engine reads: matches an include pattern (if any) and no exclude pattern."""
    if include and not any(fnmatch.fnmatch(name, p) for p in include):
        return False
    return not any(fnmatch.fnmatch(name, p) for p in exclude)


files = [f for f in HfApi(token=token).list_repo_files(repo, revision=revision) if wanted(f)]
if not files:
    sys.exit(f"no file of {repo}@{revision} matches include={include} exclude={exclude}")
print(f"copying {len(files)} files of {repo}@{revision} to s3://{bucket}/{prefix}")
with tempfile.TemporaryDirectory(dir=os.environ.get("WORK_DIR", "/work")) as workdir:
    for name in files:
        local = hf_hub_download(repo, name, revision=revision, token=token, local_dir=workdir)
        s3.upload_file(local, bucket, f"{prefix}{name}")
        os.remove(local)
        print(f"  {name}")
s3.put_object(Bucket=bucket, Key=marker, Body=f"{repo}@{revision}\n".encode())
print("done")
