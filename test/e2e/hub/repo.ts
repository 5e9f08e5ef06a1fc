// The model repository the plane's hub serves (main.ts) and the node e2e
// test checks on the nodes' disks (nodes.e2e.ts): small, but each file what
// a real one is. model.safetensors is a valid safetensors file (an 8-byte
// header length, the JSON header, the tensors' bytes) of 12 MiB, over the
// hub's 10 MiB LFS threshold, so the hub lists it with its sha256 and serves
// it with X-Linked-Etag, as it does a real model's weights.

import { createHash } from 'node:crypto';
import { deterministicBytes as bytes, type FakeFile, type FakeRevision } from '../../support/fake-hub.js';

/** The public repository, and its gated twin (the same files; the token below lets one in). */
export const HUB_REPO = 'modelplane-e2e/tiny-chat';
export const HUB_GATED_REPO = 'modelplane-e2e/tiny-chat-gated';
/** The same files again under names of their own, so a test's faults and request counts are its own. */
export const HUB_RESUME_REPO = 'modelplane-e2e/tiny-chat-resume';
export const HUB_RESTART_REPO = 'modelplane-e2e/tiny-chat-restart';
/**
 * The copies the stories of the second lane download (Makefile E2E_BESIDE: settings and nodes-lws one, the fleet
 * rig and nodes-pip one each), so no fault another story sets while they play reaches them, and the fleet's and the
 * pip path's counts of downloads are their own (docs/nodes.md, "Two lanes").
 */
export const HUB_BESIDE_REPO = 'modelplane-e2e/tiny-chat-beside';
export const HUB_FLEET_REPO = 'modelplane-e2e/tiny-chat-fleet';
export const HUB_PIP_REPO = 'modelplane-e2e/tiny-chat-pip';
/**
 * The walkthrough's model (docs/walkthrough.md, examples/model-cache/first-compose), under its real name with the
 * small files above: the stand-in hub has no real weights.
 */
export const HUB_WALKTHROUGH_REPO = 'Qwen/Qwen3-0.6B';
/** A repository whose listing is larger than a 1 GiB claim (one shard listed at 3 GiB, never served). */
export const HUB_LARGE_REPO = 'modelplane-e2e/too-large';
/** The e2e stories' token (plane.ts E2E_HF_TOKEN): the one the gated repository accepts. */
export const HUB_TOKEN = 'hf_e2e_not_a_real_token';
/** Where the plane's hub listens (common.sh HUB_PORT). */
export const HUB_PORT = 15080;
/** The repositories' weights: the one file over the LFS threshold, the one the download stories cut, slow or corrupt. */
export const HUB_WEIGHTS = 'model.safetensors';

/** A safetensors file holding one F32 tensor of `elements` values. */
function safetensors(name: string, elements: number): Buffer {
  const data = bytes(elements * 4, 7);
  let header = JSON.stringify({
    __metadata__: { format: 'pt' },
    [name]: { dtype: 'F32', shape: [elements / 1024, 1024], data_offsets: [0, data.length] },
  });
  // The header is padded with spaces to a multiple of 8, as the format's writers do.
  header = header.padEnd(Math.ceil(header.length / 8) * 8, ' ');
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(header.length));
  return Buffer.concat([length, Buffer.from(header, 'utf8'), data]);
}

const json = (value: unknown): Buffer => Buffer.from(`${JSON.stringify(value, null, 2)}\n`);

export const HUB_FILES: FakeFile[] = [
  { path: '.gitattributes', content: Buffer.from('*.safetensors filter=lfs diff=lfs merge=lfs -text\n') },
  { path: 'README.md', content: Buffer.from('# tiny-chat\n\nA model small enough for the e2e tests of Modelplane.\n') },
  {
    path: 'config.json',
    content: json({
      architectures: ['LlamaForCausalLM'],
      model_type: 'llama',
      hidden_size: 1024,
      num_hidden_layers: 1,
      num_attention_heads: 8,
      vocab_size: 3072,
      torch_dtype: 'float32',
    }),
  },
  { path: 'generation_config.json', content: json({ bos_token_id: 1, eos_token_id: 2, max_new_tokens: 32 }) },
  {
    path: 'tokenizer.json',
    content: json({
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: [{ id: 0, content: '[UNK]', special: true }],
      normalizer: null,
      pre_tokenizer: { type: 'Whitespace' },
      model: { type: 'WordLevel', vocab: { '[UNK]': 0, '<s>': 1, '</s>': 2, hello: 3, world: 4 }, unk_token: '[UNK]' },
    }),
  },
  { path: 'tokenizer_config.json', content: json({ bos_token: '<s>', eos_token: '</s>', unk_token: '[UNK]', model_max_length: 2048 }) },
  { path: HUB_WEIGHTS, content: safetensors('embed_tokens.weight', 3 * 1024 * 1024), lfs: true },
];

const LARGE_FILES: FakeFile[] = [
  ...HUB_FILES,
  { path: 'model-00002-of-00002.safetensors', content: Buffer.alloc(0), lfs: true, listedSize: 3 * 1024 ** 3 },
];

/** The commit main resolves to: a git-like id, fixed by the files. */
function revisionOf(files: FakeFile[]): FakeRevision {
  const digest = createHash('sha1');
  for (const file of files) digest.update(file.path).update('\0').update(file.content);
  return { commit: digest.digest('hex'), files };
}

export const hubRevision = (): FakeRevision => revisionOf(HUB_FILES);
/**
 * The tag HUB_RELEASE_TAG of the walkthrough's model: the same files with another README, so another commit (two
 * teams staging one repository at two revisions get two snapshots, teams.e2e.ts).
 */
export const HUB_RELEASE_TAG = 'v2.0';
export const hubReleaseRevision = (): FakeRevision =>
  revisionOf(
    HUB_FILES.map((f) => (f.path === 'README.md' ? { ...f, content: Buffer.concat([f.content, Buffer.from('\nRelease 2.0.\n')]) } : f)),
  );
export const hubLargeRevision = (): FakeRevision => revisionOf(LARGE_FILES);
