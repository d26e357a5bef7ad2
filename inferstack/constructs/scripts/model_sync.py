"""Copy one Hugging Face model revision into s3://$BUCKET/$PREFIX, once.

Idempotent: a marker object ($PREFIX.inferstack-sync-complete) is written last and records what was copied (model,
revision and the file set: $INCLUDE / $EXCLUDE glob patterns). When the marker matches, the job exits at once. When
it records anything else the marker is removed first, then:

* the same model and revision with another file set (e.g. both checkpoint layouts of a Mistral-format repo): the
  objects the new file set leaves out are deleted and the missing files copied;
* another revision (or model): every object under the prefix that is not in the new revision's file set is deleted
  and every file is copied again — same-named files of two revisions differ, so nothing of the old one is kept.

Without a marker (a first sync, or one that was interrupted) every file is copied and nothing is deleted.

The bucket is versioned: deleted and overwritten objects stay recoverable. The new marker is written last. Files
are streamed one at a time (download, upload, delete), so local disk needs only the largest file.
"""

import fnmatch
import json
import os
import sys
import tempfile

import boto3
from huggingface_hub import HfApi, hf_hub_download

bucket, prefix = os.environ["BUCKET"], os.environ["PREFIX"]
repo, revision = os.environ["MODEL_ID"], os.environ["REVISION"]
token = os.environ.get("HF_TOKEN") or None
include = [p for p in os.environ.get("INCLUDE", "").split(",") if p]
exclude = [p for p in os.environ.get("EXCLUDE", "").split(",") if p]
marker = f"{prefix}.inferstack-sync-complete"
record = json.dumps({"model": repo, "revision": revision, "include": include, "exclude": exclude}, sort_keys=True)
s3 = boto3.client("s3")


def wanted(name: str) -> bool:
    """In the file set the engine reads: matches an include pattern (if any) and no exclude pattern."""
    if include and not any(fnmatch.fnmatch(name, p) for p in include):
        return False
    return not any(fnmatch.fnmatch(name, p) for p in exclude)


def exists(key: str) -> bool:
    """Whether ``key`` exists, by listing it: the role's s3:ListBucket is conditioned on s3:prefix, and S3 answers a
    GetObject/HeadObject of a missing key with 403 (not 404) to a caller without s3:ListBucket for the request
    (API_GetObject, "Permissions") — a listing with Prefix=key is allowed and says it plainly."""
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=key, MaxKeys=1)
    return any(item["Key"] == key for item in listed.get("Contents", []))


previous = s3.get_object(Bucket=bucket, Key=marker)["Body"].read().decode() if exists(marker) else None
if previous == record:
    print(f"s3://{bucket}/{prefix} already holds {repo}@{revision} with this file set; nothing to do")
    sys.exit(0)

repository_files = HfApi(token=token).list_repo_files(repo, revision=revision)
files = [f for f in repository_files if wanted(f)]
if not files:
    sys.exit(f"no file of {repo}@{revision} matches include={include} exclude={exclude}")

present: dict[str, int] = {}
for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
    for item in page.get("Contents", []):
        present[item["Key"][len(prefix) :]] = item["Size"]
before = json.loads(previous) if previous is not None else None
same_revision = before is not None and (before.get("model"), before.get("revision")) == (repo, revision)
stale: set[str] = set()  # no marker: a first (or interrupted) sync copies everything and deletes nothing
if before is not None:
    print(f"s3://{bucket}/{prefix} holds another file set ({previous.strip()}); re-syncing")
    s3.delete_object(Bucket=bucket, Key=marker)
    stale = set(repository_files) - set(files) if same_revision else set(present) - set(files)
for name in sorted(stale - {marker[len(prefix) :]}):
    if name in present:
        s3.delete_object(Bucket=bucket, Key=f"{prefix}{name}")
        print(f"  removed {name} ({'not read by the engine' if same_revision else 'not in ' + revision})")

print(f"copying {len(files)} files of {repo}@{revision} to s3://{bucket}/{prefix}")
with tempfile.TemporaryDirectory(dir=os.environ.get("WORK_DIR", "/work")) as workdir:
    for name in files:
        if same_revision and name in present:
            continue  # copied by the earlier sync of this revision
        local = hf_hub_download(repo, name, revision=revision, token=token, local_dir=workdir)
        s3.upload_file(local, bucket, f"{prefix}{name}")
        os.remove(local)
        print(f"  {name}")
s3.put_object(Bucket=bucket, Key=marker, Body=record.encode())
print("done")
