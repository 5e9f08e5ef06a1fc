"""Stage one HuggingFace repo in the hub layout, report how far it got, verify it.

Run by the hydration Job on a workload cluster (`python3 - <repo> [options]`,
the script on standard input), with HF_HUB_CACHE pointing at the claim and,
for a gated repo, HF_TOKEN from the workload Secret. In order:

1. If this artifact's completion marker is there, report what it records
   (verified, the commit, files and bytes) and stop. (With --size-only:
   report the claim size the selection needs, then stop; with
   --verify-only: check the staged copy again, downloading nothing.)
2. Ask the hub which commit the revision is now and what files it holds
   (with sizes, sha256 of large files and git blob ids of the rest), keep the
   files the include/exclude patterns select (huggingface_hub's own
   filter_repo_objects, as `hf download --include/--exclude` uses), and
   refuse before downloading anything if they don't fit the claim.
3. Download each selected file pinned to that commit (so a branch that moves
   mid-download can't mix two snapshots), resuming partial downloads.
4. Verify every file against what the hub said: sha256 for large (LFS)
   files, size and git blob id (their etag) for the rest. A mismatch removes
   the bad copy (so the next try downloads it again) and fails, naming it.
5. Write the marker (the report, as JSON) only once everything is verified.

Throughout, the report is written as the annotation modelplane.ai/progress on
this Job (MODELPLANE_JOB / MODELPLANE_NAMESPACE, with the pod's
ServiceAccount, whose Role can patch only this Job), every
MODELPLANE_PROGRESS_INTERVAL seconds while the numbers move and at each change
of state. provider-kubernetes observes the Job back into its Object, where
the function reads it. The token is never printed, reported or logged: any
text that leaves this script goes through `scrub`.
"""

import argparse
import hashlib
import json
import math
import os
import ssl
import sys
import threading
import time
import urllib.error
import urllib.request

PROGRESS_ANNOTATION = "modelplane.ai/progress"
GIB = 1024**3
# The claim asked for when sizeGiB is not given: the selected files plus 10%
# and 1 GiB (the hub layout's refs, links and lock files, and room for a
# partial download beside a complete one).
MARGIN_FRACTION = 0.10
MARGIN_GIB = 1
# How often the report is refreshed while bytes move, and how long without a
# new byte before the report says the download is stalled.
DEFAULT_INTERVAL = 15
DEFAULT_STALL_SECONDS = 300
# A message in an annotation is read on a status line: bounded.
MAX_MESSAGE = 600
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


class StageError(Exception):
    """A failure this script explains itself (its message names the file or the limit)."""


def scrub(text):
    """The text with the token (if any) cut out, bounded: the only way text leaves this script."""
    token = os.environ.get("HF_TOKEN", "")
    if len(token) >= 4:
        text = text.replace(token, "[token]")
    text = " ".join(text.split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def say(line):
    print(scrub(line), flush=True)


def required_gib(total_bytes):
    """The claim size for `total_bytes` of selected files: plus the documented margin, whole GiB."""
    return math.ceil(total_bytes * (1 + MARGIN_FRACTION) / GIB) + MARGIN_GIB


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="hydrate", description="stage a HuggingFace repo in the hub layout")
    parser.add_argument("repo")
    parser.add_argument("--revision")
    parser.add_argument("--include", action="append", default=[])
    parser.add_argument("--exclude", action="append", default=[])
    parser.add_argument("--marker")
    parser.add_argument("--size-gib", type=int)
    parser.add_argument("--verify-only", action="store_true", help="re-verify a staged copy; download nothing")
    parser.add_argument("--size-only", action="store_true", help="report the claim size the selection needs; download nothing")
    args = parser.parse_args(argv)
    if args.marker is None and not args.size_only:
        parser.error("--marker is required to stage or verify")
    return args


class Reporter:
    """Writes the report on this Job's annotation; never fails the download when it can't."""

    def __init__(self, env):
        self.job = env.get("MODELPLANE_JOB")
        self.namespace = env.get("MODELPLANE_NAMESPACE")
        self.interval = float(env.get("MODELPLANE_PROGRESS_INTERVAL", DEFAULT_INTERVAL))
        self.stall_after = float(env.get("MODELPLANE_STALL_SECONDS", DEFAULT_STALL_SECONDS))
        account = env.get("MODELPLANE_SERVICE_ACCOUNT_DIR", SERVICE_ACCOUNT_DIR)
        self.api = env.get("MODELPLANE_KUBE_API")
        if self.api is None and env.get("KUBERNETES_SERVICE_HOST"):
            self.api = f"https://{env['KUBERNETES_SERVICE_HOST']}:{env.get('KUBERNETES_SERVICE_PORT', '443')}"
        self.token_file = os.path.join(account, "token")
        self.ca_file = os.path.join(account, "ca.crt")
        self.last_sent = None
        self.lock = threading.Lock()

    def send(self, report):
        # One report at a time, in the order they were made: the background
        # refresh never lands after a later state.
        with self.lock:
            self._send(report)

    def _send(self, report):
        body = json.dumps(report, sort_keys=True, separators=(",", ":"))
        if body == self.last_sent:
            return
        self.last_sent = body
        if not (self.api and self.job and self.namespace):
            return
        patch = json.dumps({"metadata": {"annotations": {PROGRESS_ANNOTATION: body}}}).encode()
        url = f"{self.api}/apis/batch/v1/namespaces/{self.namespace}/jobs/{self.job}"
        request = urllib.request.Request(url, data=patch, method="PATCH")
        request.add_header("Content-Type", "application/merge-patch+json")
        try:
            with open(self.token_file, encoding="utf-8") as handle:
                request.add_header("Authorization", "Bearer " + handle.read().strip())
        except OSError:
            pass
        context = None
        if url.startswith("https:"):
            context = ssl.create_default_context(cafile=self.ca_file if os.path.exists(self.ca_file) else None)
        try:
            with urllib.request.urlopen(request, timeout=10, context=context) as response:
                response.read()
        except (urllib.error.URLError, OSError) as error:
            say(f"could not write the progress report on Job {self.job}: {error}")


class Progress:
    """The numbers of one staging run, refreshed from the files on disk by a background thread."""

    def __init__(self, reporter, storage, commit, files):
        self.reporter = reporter
        self.blobs = os.path.join(storage, "blobs")
        self.report = {
            "state": "Downloading",
            "commit": commit,
            "filesTotal": len(files),
            "filesDone": 0,
            "bytesTotal": sum(size_of(f) for f in files),
            "bytesDone": 0,
            "requiredGiB": required_gib(sum(size_of(f) for f in files)),
        }
        self.completed_bytes = 0
        # A partial file a killed run left (huggingface_hub names each run's own) is not this run's progress.
        self.started = time.time() - 1
        self.last_bytes = -1
        self.last_change = time.monotonic()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def partial_bytes(self):
        total = 0
        try:
            for name in os.listdir(self.blobs):
                path = os.path.join(self.blobs, name)
                if name.endswith(".incomplete") and os.path.getmtime(path) >= self.started:
                    total += os.path.getsize(path)
        except OSError:
            pass
        return total

    def refresh(self):
        done = min(self.completed_bytes + self.partial_bytes(), self.report["bytesTotal"])
        now = time.monotonic()
        if done != self.last_bytes:
            self.last_bytes = done
            self.last_change = now
        self.report["bytesDone"] = done
        idle = now - self.last_change
        if idle >= self.stall_after:
            self.report["stalledSeconds"] = int(idle)
        else:
            self.report.pop("stalledSeconds", None)
        self.reporter.send(dict(self.report))

    def loop(self):
        while not self.stop.wait(self.reporter.interval):
            if self.report["state"] == "Downloading":
                self.refresh()

    def file_done(self, size):
        self.completed_bytes += size
        self.report["filesDone"] += 1

    @property
    def stall_after(self):
        return self.reporter.stall_after


def size_of(sibling):
    if sibling.lfs is not None:
        return sibling.lfs.size
    return sibling.size or 0


def git_blob_id(path):
    digest = hashlib.sha1()
    digest.update(b"blob %d\0" % os.path.getsize(path))
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def check_file(snapshot, sibling):
    """What is wrong with one staged file, or None: checked through the snapshot path engines read."""
    path = os.path.join(snapshot, sibling.rfilename)
    if not os.path.exists(path):
        return f"{sibling.rfilename}: missing"
    size = os.path.getsize(path)
    expected_size = size_of(sibling)
    if size != expected_size:
        return f"{sibling.rfilename}: {size} bytes, the hub says {expected_size}"
    if sibling.lfs is not None:
        actual = sha256_of(path)
        if actual != sibling.lfs.sha256:
            return f"{sibling.rfilename}: sha256 {actual}, the hub says {sibling.lfs.sha256}"
    elif sibling.blob_id:
        actual = git_blob_id(path)
        if actual != sibling.blob_id:
            return f"{sibling.rfilename}: etag (git blob id) {actual}, the hub says {sibling.blob_id}"
    return None


def discard(snapshot, sibling):
    """Remove a bad copy (the blob and its link), so the next try downloads it again."""
    path = os.path.join(snapshot, sibling.rfilename)
    try:
        os.remove(os.path.realpath(path))
    except OSError:
        pass
    try:
        os.remove(path)
    except OSError:
        pass


def verify(snapshot, files, progress):
    progress.report["state"] = "Verifying"
    progress.reporter.send(dict(progress.report))
    for sibling in files:
        problem = check_file(snapshot, sibling)
        if problem is not None:
            discard(snapshot, sibling)
            raise StageError(f"verification failed: {problem}")


def stage(args, reporter):
    from huggingface_hub import HfApi, hf_hub_download
    from huggingface_hub.file_download import repo_folder_name
    from huggingface_hub.utils import filter_repo_objects

    # Sizing runs before the claim exists: it reads the listing and writes nothing.
    cache = os.environ.get("HF_HUB_CACHE", "/tmp")
    info = HfApi().model_info(args.repo, revision=args.revision, files_metadata=True)
    commit = info.sha
    files = sorted(
        filter_repo_objects(
            info.siblings or [],
            allow_patterns=args.include or None,
            ignore_patterns=args.exclude or None,
            key=lambda sibling: sibling.rfilename,
        ),
        key=lambda sibling: sibling.rfilename,
    )
    if not files:
        raise StageError(f"the include/exclude patterns select no file of {args.repo} at commit {commit}")
    storage = os.path.join(cache, repo_folder_name(repo_id=args.repo, repo_type="model"))
    snapshot = os.path.join(storage, "snapshots", commit)
    progress = Progress(reporter, storage, commit, files)
    total = progress.report["bytesTotal"]
    if args.size_gib is not None and total > args.size_gib * GIB:
        raise StageError(
            f"the selected files of {args.repo} at commit {commit} are {total} bytes ({len(files)} files), "
            f"more than sizeGiB {args.size_gib} holds; ask for at least {required_gib(total)}"
        )

    if args.size_only:
        progress.report["state"] = "Sized"
        return progress.report

    if args.verify_only:
        progress.report.update(filesDone=len(files), bytesDone=total)
        verify(snapshot, files, progress)
        return progress.report

    say(f"staging {args.repo} at commit {commit}: {len(files)} files, {total} bytes")
    progress.refresh()
    progress.thread.start()
    try:
        for sibling in files:
            hf_hub_download(args.repo, sibling.rfilename, revision=commit)
            progress.file_done(size_of(sibling))
            progress.refresh()
    finally:
        progress.stop.set()
        progress.thread.join()
    # The branch or tag asked for points at what was staged, as `hf download` leaves it.
    ref = args.revision or "main"
    if ref != commit:
        refs = os.path.join(storage, "refs")
        os.makedirs(os.path.dirname(os.path.join(refs, ref)), exist_ok=True)
        with open(os.path.join(refs, ref), "w", encoding="utf-8") as handle:
            handle.write(commit)
    verify(snapshot, files, progress)
    return progress.report


def main(argv):
    args = parse_args(argv)
    reporter = Reporter(os.environ)
    try:
        if not (args.verify_only or args.size_only) and os.path.exists(args.marker):
            with open(args.marker, encoding="utf-8") as handle:
                text = handle.read()
            try:
                report = json.loads(text)
            except ValueError:
                # An empty marker: staged by an earlier release, which checked nothing.
                report = {"state": "Unverified"}
            say("already hydrated, skipping")
            reporter.send(report)
            return 0
        report = stage(args, reporter)
        if args.size_only:
            reporter.send(report)
            say(f"{report['filesTotal']} files, {report['bytesTotal']} bytes at commit {report['commit']}: a claim of {report['requiredGiB']} GiB")
            return 0
        report["state"] = "Verified"
        report.pop("stalledSeconds", None)
        with open(args.marker + ".tmp", "w", encoding="utf-8") as handle:
            json.dump(report, handle, sort_keys=True)
        os.replace(args.marker + ".tmp", args.marker)
        reporter.send(report)
        say(f"verified {report['filesTotal']} files, {report['bytesTotal']} bytes, commit {report['commit']}")
        return 0
    except Exception as error:  # every failure is reported, in words without the token
        message = scrub(str(error) if isinstance(error, StageError) else f"{type(error).__name__}: {error}")
        failed = {"state": "Failed", "message": message}
        if args.verify_only and os.path.exists(args.marker):
            os.remove(args.marker)
        reporter.send(failed)
        print(message, file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
