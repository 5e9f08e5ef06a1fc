"""The serving stand-in for vLLM (images/engine/README.md): loads the model the
way vLLM does with HF_HUB_OFFLINE=1, reads every file, then serves.

Usage, as vLLM's OpenAI server takes it (the image's entrypoint runs this, so a
ModelReplica's `args` are appended):

    python3 engine_standin.py [serve] [MODEL] [--model=MODEL] [--revision=REV]
                              [--port=8000] [--host=0.0.0.0] [--served-model-name=NAME] ...

MODEL is a HuggingFace repo id (resolved in the hub cache at HF_HUB_CACHE with
snapshot_download(local_files_only=True), never the network) or a directory
(an OCI image volume or a claim: its files are read as they are). Without
--model or --revision on the command line, MODELPLANE_MODEL and
MODELPLANE_MODEL_REVISION are used. Flags it does not know are accepted and
ignored, so a vLLM command line runs unchanged.

Served once every file was read: GET /health (200), GET /v1/models (vLLM's
shape), GET /files (what was read: the snapshot path, each file's path, size
and sha256; and the devices the pod's DRA claim gave it). A model that can't be loaded exits 1 with the reason on stderr,
as a real engine does offline with nothing staged.
"""

import hashlib
import json
import os
import re
import signal
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# A `$(VAR)` Kubernetes left as it was: the pod has no such variable (the
# cache's contract did not set it), so it names nothing.
UNEXPANDED = re.compile(r"^\$\([A-Za-z_][A-Za-z0-9_]*\)$")
# Flags vLLM takes with no value: seen bare, they must not swallow the next word.
BARE_FLAGS = {"--trust-remote-code", "--enforce-eager", "--disable-log-requests", "--disable-log-stats"}
CHUNK = 1024 * 1024


def say(message):
    print(f"[engine-standin] {message}", file=sys.stderr, flush=True)


def fail(message):
    say(f"error: {message}")
    sys.exit(1)


def parse(argv):
    """The flags this stand-in reads from a vLLM-style command line, and where each came from."""
    flags = {}
    positional = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if word.startswith("--"):
            if "=" in word:
                name, value = word.split("=", 1)
            elif word in BARE_FLAGS or i + 1 >= len(argv) or argv[i + 1].startswith("--"):
                name, value = word, ""
            else:
                name, value = word, argv[i + 1]
                i += 1
            flags[name] = value
        else:
            positional.append(word)
        i += 1
    if positional[:1] == ["serve"]:
        positional = positional[1:]
    model, model_from = flags.get("--model"), "--model"
    if model is None and positional:
        model, model_from = positional[0], "the positional MODEL"
    if model is None:
        model, model_from = os.environ.get("MODELPLANE_MODEL"), "MODELPLANE_MODEL"
    revision, revision_from = flags.get("--revision"), "--revision"
    if revision is None:
        revision, revision_from = os.environ.get("MODELPLANE_MODEL_REVISION"), "MODELPLANE_MODEL_REVISION"
    try:
        port = int(flags.get("--port", "8000"))
    except ValueError:
        fail(f"--port must be a number (got {flags['--port']!r})")
    return {
        "model": model,
        "model_from": model_from,
        "revision": revision,
        "revision_from": revision_from if revision is not None else None,
        "port": port,
        "host": flags.get("--host", "0.0.0.0"),
        "served_name": flags.get("--served-model-name"),
    }


def resolve(options):
    """The directory to read and how it was found: a path as it is, a repo id through the hub cache, offline."""
    model, revision = options["model"], options["revision"]
    if not model:
        fail("no model: pass --model=$(MODELPLANE_MODEL) (or set MODELPLANE_MODEL)")
    if UNEXPANDED.match(model):
        fail(f"the model is {model} as written: the pod has no such variable (is the cache Ready on this cluster?)")
    if model.startswith("/") or model.startswith(".") or os.path.isdir(model):
        # vLLM reads a local directory as it is and ignores --revision for it.
        if not os.path.isdir(model):
            fail(f"the model directory {model} does not exist (is the cache volume mounted there?)")
        return {"source": "directory", "snapshot": os.path.realpath(model), "revision_ignored": revision}
    if revision is not None and UNEXPANDED.match(revision):
        fail(f"the revision is {revision} as written: the pod has no such variable")
    # Imported here: a directory model needs no huggingface_hub, and its import
    # reads HF_HUB_CACHE and HF_HUB_OFFLINE, which the log above states first.
    from huggingface_hub import snapshot_download

    try:
        snapshot = snapshot_download(repo_id=model, revision=revision, local_files_only=True)
    except Exception as error:  # every error of an offline lookup means the same: nothing usable is staged
        fail(
            f"can't load {model} at revision {revision or 'main'} offline "
            f"(HF_HUB_CACHE={os.environ.get('HF_HUB_CACHE', '<unset>')}, "
            f"HF_HUB_OFFLINE={os.environ.get('HF_HUB_OFFLINE', '<unset>')}): {type(error).__name__}: {error}"
        )
    return {"source": "huggingface", "snapshot": snapshot, "revision": revision or "main"}


def read_all(snapshot):
    """Open and read every file under the snapshot (through the hub's blob links), sha256 each."""
    files = []
    for root, dirs, names in os.walk(snapshot, followlinks=True):
        dirs.sort()
        # Kubernetes' image and configMap volumes keep bookkeeping entries like ..data: not the model's.
        dirs[:] = [d for d in dirs if not d.startswith("..")]
        for name in sorted(names):
            path = os.path.join(root, name)
            digest = hashlib.sha256()
            size = 0
            try:
                with open(path, "rb") as f:
                    while True:
                        chunk = f.read(CHUNK)
                        if not chunk:
                            break
                        digest.update(chunk)
                        size += len(chunk)
            except OSError as error:
                fail(f"can't read {path}: {error}")
            files.append({"path": os.path.relpath(path, snapshot), "size": size, "sha256": digest.hexdigest()})
    if not files:
        fail(f"{snapshot} holds no files: nothing to serve")
    return files


def main(argv):
    options = parse(argv)
    say(
        f"model {options['model']!r} (from {options['model_from']}), revision {options['revision']!r}"
        f" (from {options['revision_from']}), HF_HUB_CACHE={os.environ.get('HF_HUB_CACHE', '<unset>')},"
        f" HF_HUB_OFFLINE={os.environ.get('HF_HUB_OFFLINE', '<unset>')}"
    )
    t0 = time.monotonic()
    loaded = resolve(options)
    files = read_all(loaded["snapshot"])
    total = sum(f["size"] for f in files)
    say(f"read {len(files)} files, {total} bytes, from {loaded['snapshot']} in {time.monotonic() - t0:.2f} s")
    for f in files:
        say(f"  {f['sha256']}  {f['size']:>12}  {f['path']}")
    served = options["served_name"] or options["model"]
    report = {
        "engine": "modelplane-engine-standin",
        "model": options["model"],
        "modelFrom": options["model_from"],
        "revision": options["revision"],
        "revisionFrom": options["revision_from"],
        "source": loaded["source"],
        "snapshot": loaded["snapshot"],
        "hfHubCache": os.environ.get("HF_HUB_CACHE"),
        "hfHubOffline": os.environ.get("HF_HUB_OFFLINE"),
        # The devices the pod's DRA claim gave it, as the driver's CDI spec put them in the env
        # (dra-example-driver: GPU_DEVICE_<n>=gpu-<i>), where a GPU engine would read its own.
        "devices": sorted(v for k, v in os.environ.items() if re.fullmatch(r"GPU_DEVICE_[0-9]+", k)),
        "totalBytes": total,
        "files": files,
    }
    models = {
        "object": "list",
        "data": [
            {"id": served, "object": "model", "created": int(time.time()), "owned_by": "vllm", "root": options["model"], "parent": None}
        ],
    }

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            path = self.path.split("?", 1)[0]
            if path == "/health":
                self.send(200, b"", "text/plain")
            elif path == "/v1/models":
                self.send(200, json.dumps(models).encode(), "application/json")
            elif path == "/files":
                self.send(200, json.dumps(report).encode(), "application/json")
            else:
                self.send(404, json.dumps({"error": f"no route {path}"}).encode(), "application/json")

        def send(self, code, body, content_type):
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format, *args):
            # The kubelet's probe every 10 s would drown the load report.
            if not self.path.startswith("/health"):
                say(format % args)

    server = ThreadingHTTPServer((options["host"], options["port"]), Handler)
    # A pod's stop is SIGTERM: shut down cleanly, exit 0.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    say(f"serving {served} on {options['host']}:{server.server_address[1]} (/health, /v1/models, /files)")
    try:
        server.serve_forever()
    finally:
        server.server_close()


if __name__ == "__main__":
    main(sys.argv[1:])
