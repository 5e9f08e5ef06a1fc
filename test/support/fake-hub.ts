// A small HuggingFace hub, serving repositories the way the hub's API does
// for what huggingface_hub 1.x asks (read in its source: HfApi.model_info,
// get_hf_file_metadata, http_get). The hydration script's tests run it on
// localhost; `make up` with nodes runs it for the plane's pods
// (test/e2e/hub/main.ts), as the stand-in for huggingface.co.
//
//   GET  /api/models/<repo>/revision/<rev>?blobs=true   the commit (`sha`) and the
//        files (`siblings`: rfilename, size, blobId, lfs {size, sha256, pointerSize})
//   HEAD /<repo>/resolve/<rev>/<path>   X-Repo-Commit, ETag (the git blob id, or
//        for LFS files X-Linked-Etag = sha256 and X-Linked-Size), Content-Length
//   GET  /<repo>/resolve/<rev>/<path>   the bytes, with Range (206) for resumes
//
// and the one Kubernetes call the script makes: PATCH of its own Job's
// annotations (recorded, for the progress assertions). Faults are switched
// per test: a corrupted file (right size, wrong bytes), a connection cut
// mid-file, a slow file, an error body that echoes the Authorization header,
// a token refused. A gated repository (`token`) answers 401 to a request
// without that token, as the hub does (X-Error-Code GatedRepo).

import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeFile {
  path: string;
  content: Buffer;
  /** Served as an LFS file: sha256 and X-Linked-* headers. */
  lfs?: boolean;
  /** Listed with this size, never served (a file too big to stage). */
  listedSize?: number;
}

export interface FakeRevision {
  commit: string;
  files: FakeFile[];
}

export interface Faults {
  /** Serve this file's bytes flipped (same size). */
  corrupt?: string;
  /** Cut the connection after this many bytes of this file, once. */
  cut?: { path: string; after: number };
  /** Stream this file in 16 KiB chunks, this many ms apart. */
  slow?: { path: string; delayMs: number };
  /** Answer model_info with 404 and a body quoting the request's Authorization header. */
  echoAuth?: boolean;
  /** Refuse every token, the right one too, as the hub does a revoked one (401, X-Error-Code GatedRepo). */
  refuseToken?: boolean;
  /** Hold a GET of this file until the fault is cleared (the download waits, with the files before it done). */
  hold?: string;
  /**
   * Answer 403 to every request from a client whose address starts with one of these, as an egress proxy that
   * refuses the hub would (a cluster's pods: test/e2e/hub/client.ts clusterClients). A held request is answered so
   * when it is let go.
   */
  refuseFrom?: string[];
  /**
   * Only this repository's files are corrupted, cut, slowed or held, and only its requests are refused (refuseFrom):
   * a story's faults stay its own while another story downloads another repository beside it (unset: every repository's).
   */
  repo?: string;
}

export interface RepoOptions {
  /** Gated: only `Authorization: Bearer <token>` is let in. */
  token?: string;
}

interface Repo {
  refs: Record<string, FakeRevision>;
  token?: string;
}

export interface Recorded {
  method: string;
  url: string;
  range?: string;
  authorization?: string;
  body?: string;
  /** The client's address (IPv4 as such, not IPv4-mapped). */
  from?: string;
}

/** Where the controls are (never a repository's path: `_hub` is no owner name the hub allows). */
export const CONTROL = '/_hub/';

export function gitBlobId(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

export function sha256(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/** Deterministic bytes that are not all alike: the same every run (so their sha256 is), and a flipped or shifted copy differs. */
export function deterministicBytes(n: number, seed: number): Buffer {
  const out = Buffer.alloc(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    out[i] = x >> 16;
  }
  return out;
}

export class FakeHub {
  readonly requests: Recorded[] = [];
  /** Every request recorded since the hub started, which reset() leaves: what a story reads while another one resets beside it. */
  readonly history: Recorded[] = [];
  faults: Faults = {};
  private server: Server | undefined;
  private cutDone = new Set<string>();
  private readonly repos = new Map<string, Repo>();

  /** `refs`: branches and tags by name, each resolving to a revision; a commit resolves to itself. */
  constructor(repo: string, refs: Record<string, FakeRevision>, options: RepoOptions = {}) {
    this.addRepo(repo, refs, options);
  }

  /** One more repository on the same hub. */
  addRepo(repo: string, refs: Record<string, FakeRevision>, options: RepoOptions = {}): void {
    this.repos.set(repo, options.token === undefined ? { refs } : { refs, token: options.token });
  }

  get url(): string {
    const address = this.server?.address() as AddressInfo;
    return `http://127.0.0.1:${address.port}`;
  }

  /** Called with each request recorded (the server's log). */
  log: ((request: Recorded) => void) | undefined;

  /**
   * The controls a test uses from outside the process (the plane's hub):
   * GET requests (what was recorded since the last reset), GET history (since
   * the start), PUT faults (a Faults object, replacing the last), POST reset,
   * GET healthz.
   */
  private control(req: IncomingMessage, res: ServerResponse, what: string, body: string | undefined): void {
    const json = (status: number, value: unknown): void => {
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(value));
    };
    if (req.method === 'GET' && what === 'healthz') {
      json(200, { ok: true });
    } else if (req.method === 'GET' && what === 'requests') {
      json(200, this.requests);
    } else if (req.method === 'GET' && what === 'history') {
      json(200, this.history);
    } else if (req.method === 'POST' && what === 'reset') {
      this.reset();
      json(200, { ok: true });
    } else if (req.method === 'PUT' && what === 'faults') {
      try {
        this.faults = JSON.parse(body ?? '{}') as Faults;
        json(200, this.faults);
      } catch (error) {
        json(400, { error: `faults: ${String(error)}` });
      }
    } else {
      json(404, { error: `no control ${req.method ?? ''} ${what}` });
    }
  }

  /** Forget what was recorded (the history stays) and every fault (a cut done once is done again). */
  reset(): void {
    this.requests.length = 0;
    this.faults = {};
    this.cutDone.clear();
  }

  /** The PATCH bodies sent to the Job, as the annotation values they set, in order. */
  reports(): Record<string, unknown>[] {
    return this.requests
      .filter((r) => r.method === 'PATCH')
      .map((r) => JSON.parse(r.body ?? '{}') as { metadata: { annotations: Record<string, string> } })
      .map((patch) => JSON.parse(patch.metadata.annotations['modelplane.ai/progress'] ?? '{}') as Record<string, unknown>);
  }

  /** Listen on `host` (loopback unless given) and `port` (any free one unless given). */
  async start(host = '127.0.0.1', port = 0): Promise<void> {
    this.server = createServer((req, res) => {
      void this.handle(req, res).catch(() => res.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, host, resolve);
    });
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
    });
  }

  /** The repository a path names (`<prefix><owner>/<name>...`), and the rest of the path after it. */
  private repoOf(path: string, prefix: string): { name: string; repo: Repo; rest: string } | undefined {
    if (!path.startsWith(prefix)) return undefined;
    for (const [name, repo] of this.repos) {
      const start = `${prefix}${name}`;
      if (path === start || path.startsWith(`${start}/`)) return { name, repo, rest: path.slice(start.length) };
    }
    return undefined;
  }

  /** A gated repository's answer to a request without its token: true when it has answered (401). */
  private refused(req: IncomingMessage, res: ServerResponse, name: string, repo: Repo): boolean {
    if (repo.token === undefined) return false;
    if (!this.faults.refuseToken && req.headers.authorization === `Bearer ${repo.token}`) return false;
    const message = `Access to model ${name} is restricted. You must have access to it and be authenticated to access it. Please log in.`;
    res
      .writeHead(401, { 'Content-Type': 'application/json', 'X-Error-Code': 'GatedRepo', 'X-Error-Message': message })
      .end(JSON.stringify({ error: message }));
    return true;
  }

  /** Whether the file faults (corrupt, cut, slow, hold) apply to this repository (faults.repo). */
  private faultsApplyTo(repo: string): boolean {
    return this.faults.repo === undefined || this.faults.repo === repo;
  }

  /**
   * The answer of an egress proxy that refuses this client (faults.refuseFrom) a request for this repository (faults.repo;
   * undefined: a path of no repository, refused only when the faults name none): true when it has answered (403).
   */
  private refusedFrom(res: ServerResponse, from: string | undefined, repo: string | undefined): boolean {
    if (from === undefined || !(this.faults.refuseFrom ?? []).some((prefix) => from.startsWith(prefix))) return false;
    if (this.faults.repo !== undefined && this.faults.repo !== repo) return false;
    const message = `egress to the hub refused for ${from}`;
    res.writeHead(403, { 'Content-Type': 'text/plain', 'X-Error-Message': message }).end(`${message}\n`);
    return true;
  }

  /**
   * Wait while a GET of this file is held (faults.hold), or until its client goes. Every 2 s an interim
   * `102 Processing` keeps the client's read timeout (huggingface_hub's is 10 s) from ending the wait: no byte of
   * the file comes, so the download's progress stays where it was.
   */
  private async letGo(req: IncomingMessage, res: ServerResponse, repo: string, path: string): Promise<void> {
    const held = () => this.faults.hold === path && this.faultsApplyTo(repo);
    for (let tick = 1; held() && !req.socket.destroyed; tick++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      if (tick % 10 === 0) res.writeProcessing();
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://hub');
    const record: Recorded = { method: req.method ?? '', url: url.pathname };
    if (req.headers.range) record.range = req.headers.range;
    if (req.headers.authorization) record.authorization = req.headers.authorization;
    if (chunks.length > 0) record.body = Buffer.concat(chunks).toString('utf8');
    const from = clientAddress(req);
    if (from) record.from = from;

    if (url.pathname.startsWith(CONTROL)) {
      this.control(req, res, url.pathname.slice(CONTROL.length), record.body);
      return;
    }
    this.requests.push(record);
    this.history.push(record);
    this.log?.(record);

    if (req.method === 'PATCH' && url.pathname.startsWith('/apis/batch/v1/')) {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      return;
    }
    // The Job's reports above go to the API server, not through the egress proxy refuseFrom plays.
    const models = this.repoOf(url.pathname, '/api/models/');
    if (this.refusedFrom(res, from, (models ?? this.repoOf(url.pathname, '/'))?.name)) return;
    if (req.method === 'GET' && models) {
      if (this.refused(req, res, models.name, models.repo)) return;
      if (this.faults.echoAuth) {
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: `Repository not found for ${req.headers.authorization ?? 'anonymous'}` }));
        return;
      }
      // Without a revision, huggingface_hub asks /api/models/<repo>: the default branch.
      const name = models.rest === '' ? 'main' : models.rest.startsWith('/revision/') ? models.rest.slice('/revision/'.length) : undefined;
      const revision = name === undefined ? undefined : revisionOf(models.repo, decodeURIComponent(name));
      if (!revision) {
        notFound(res, 'Revision Not Found');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          id: models.name,
          modelId: models.name,
          sha: revision.commit,
          private: false,
          gated: models.repo.token === undefined ? false : 'manual',
          siblings: revision.files.map(sibling),
        }),
      );
      return;
    }
    const resolve = this.repoOf(url.pathname, '/');
    if (resolve?.rest.startsWith('/resolve/')) {
      if (this.refused(req, res, resolve.name, resolve.repo)) return;
      const rest = resolve.rest.slice('/resolve/'.length);
      const slash = rest.indexOf('/');
      const revision = revisionOf(resolve.repo, decodeURIComponent(rest.slice(0, slash)));
      const path = decodeURIComponent(rest.slice(slash + 1));
      const file = revision?.files.find((f) => f.path === path && f.listedSize === undefined);
      if (!revision || !file) {
        notFound(res, 'Entry not found');
        return;
      }
      const faulty = this.faultsApplyTo(resolve.name);
      if (req.method === 'GET' && faulty && this.faults.hold === path) {
        await this.letGo(req, res, resolve.name, path);
        if (this.refusedFrom(res, from, resolve.name)) return;
      }
      this.serveFile(req, res, revision.commit, file, faulty ? this.faults : {});
      return;
    }
    notFound(res, 'not found');
  }

  private serveFile(req: IncomingMessage, res: ServerResponse, commit: string, file: FakeFile, faults: Faults): void {
    const content = faults.corrupt === file.path ? Buffer.from(file.content.map((b) => b ^ 0xff)) : file.content;
    const headers: Record<string, string> = {
      'X-Repo-Commit': commit,
      'Accept-Ranges': 'bytes',
      'Content-Type': 'application/octet-stream',
    };
    if (file.lfs) {
      headers['ETag'] = `"${sha256(file.content)}"`;
      headers['X-Linked-Etag'] = `"${sha256(file.content)}"`;
      headers['X-Linked-Size'] = String(file.content.length);
    } else {
      headers['ETag'] = `"${gitBlobId(file.content)}"`;
    }
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const start = range ? Number(range[1]) : 0;
    const body = content.subarray(start);
    headers['Content-Length'] = String(body.length);
    if (req.method === 'HEAD') {
      res.writeHead(200, { ...headers, 'Content-Length': String(content.length) }).end();
      return;
    }
    if (range) headers['Content-Range'] = `bytes ${start}-${content.length - 1}/${content.length}`;
    res.writeHead(range ? 206 : 200, headers);
    const cut = faults.cut;
    if (cut?.path === file.path && !this.cutDone.has(file.path) && !range) {
      this.cutDone.add(file.path);
      res.write(body.subarray(0, cut.after), () => res.socket?.destroy());
      return;
    }
    const slow = faults.slow;
    if (slow?.path === file.path) {
      void streamSlowly(res, body, slow.delayMs);
      return;
    }
    res.end(body);
  }
}

/** The client's address, an IPv4-mapped one written as IPv4. */
function clientAddress(req: IncomingMessage): string | undefined {
  const address = req.socket.remoteAddress;
  return address?.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
}

function revisionOf(repo: Repo, name: string): FakeRevision | undefined {
  return repo.refs[name] ?? Object.values(repo.refs).find((r) => r.commit === name);
}

async function streamSlowly(res: ServerResponse, body: Buffer, delayMs: number): Promise<void> {
  const CHUNK = 16 * 1024;
  for (let offset = 0; offset < body.length; offset += CHUNK) {
    res.write(body.subarray(offset, offset + CHUNK));
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  res.end();
}

function notFound(res: ServerResponse, message: string): void {
  res.writeHead(404, { 'Content-Type': 'application/json', 'X-Error-Message': message }).end(JSON.stringify({ error: message }));
}

function sibling(file: FakeFile): Record<string, unknown> {
  const size = file.listedSize ?? file.content.length;
  if (file.lfs || file.listedSize !== undefined) {
    const digest = file.listedSize !== undefined ? 'f'.repeat(64) : sha256(file.content);
    return { rfilename: file.path, size, blobId: gitBlobId(file.content), lfs: { size, sha256: digest, pointerSize: 134 } };
  }
  return { rfilename: file.path, size, blobId: gitBlobId(file.content) };
}
