// The benchmark's realistic requests held against requests captured from a
// real Crossplane (issue 17). test/e2e/capture.e2e.ts captures them on the
// local control plane, live; bench/captured/ keeps one capture per function,
// which test/bench/calibration.test.ts checks on every `make test`.

import { getIn, isObject, type JsonObject, type JsonValue } from '#lib';
import { RunFunctionRequest } from '#lib/sdk';
import { SCENARIOS, type FunctionName } from './scenarios.js';
import { compareShapes, shapeOf } from './shape.js';

export const CAPTURED_FUNCTIONS = ['compose-model-cache', 'compose-model-cache-hydration', 'compose-model-replica'] as const;
export type CapturedFunction = (typeof CAPTURED_FUNCTIONS)[number] & FunctionName;

/** The realistic scenario each capture is the live counterpart of. */
const COUNTERPART: Record<CapturedFunction, string> = {
  'compose-model-cache': 'steady-realistic',
  'compose-model-cache-hydration': 'steady-huggingface-realistic',
  'compose-model-replica': 'steady-native-realistic',
};

/**
 * Where the captured world and the benchmark's differ on purpose: choices of
 * the people in the story, not fields Crossplane adds. Each with its reason.
 */
const WORLD_CHOICES: { pattern: RegExp; why: string }[] = [
  { pattern: /: spec\.authSecret(\.|$)|^required Secret: /, why: "the captured model is gated behind a token; the benchmark's is public" },
  {
    pattern: /^required ModelReplica: |^composite ModelCache: metadata\.labels\.crossplane\.io\/in-use$/,
    why: "a replica serves from the captured cache (so it is in use); the benchmark's cache scenarios have none",
  },
];

/**
 * Kinds whose size differs on purpose. The local plane's InferenceCluster is
 * a bare CRD (test/e2e/manifests/inferencecluster-crd.yaml); upstream's is an
 * XR that composed node pools, releases and Objects, which the benchmark's carries.
 */
const SIZE_CHOICES = new Set(['required InferenceCluster']);

const REDACTED = Buffer.from('redacted').toString('base64');

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Every Secret's data and every connection detail replaced, keys kept: a
 * capture holds no credential. That includes a Secret's last-applied
 * annotation, which `kubectl apply` fills with the whole Secret (stringData
 * in clear) and Crossplane forwards like any other metadata.
 */
function redact(value: JsonValue, inSecret = false): JsonValue {
  if (Array.isArray(value)) return value.map((item) => redact(item, inSecret));
  if (!isObject(value)) return value;
  const secret = inSecret || value['kind'] === 'Secret';
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    if ((key === 'connectionDetails' || (key === 'data' && secret)) && isObject(child)) {
      out[key] = Object.fromEntries(Object.keys(child).map((k) => [k, REDACTED]));
    } else if (key === LAST_APPLIED && secret) {
      out[key] = 'redacted';
    } else if (child !== undefined) {
      out[key] = redact(child, secret);
    }
  }
  return out;
}

/** A captured request as it is kept: its JSON form, with no credential in it. */
export function capturedJson(request: RunFunctionRequest): JsonObject {
  return redact(RunFunctionRequest.toJSON(request) as JsonValue) as JsonObject;
}

export interface Calibration {
  /** `<part kind>: <path>` the captured request has and the built one lacks. */
  missing: string[];
  /** Per kind, the built resource's mean JSON size over the captured one's. */
  sizes: { kind: string; ratio: number; capturedBytes: number }[];
}

/** Hold the built counterpart of a captured request (at the captured cluster count) against it. */
export function calibrate(fn: CapturedFunction, captured: JsonObject): Calibration {
  const clusters = getClusterCount(captured);
  const scenario = SCENARIOS(clusters).find((s) => s.fn === fn && s.label === COUNTERPART[fn]);
  if (!scenario) throw new Error(`no scenario ${COUNTERPART[fn]} for ${fn}`);
  const built = shapeOf(RunFunctionRequest.toJSON(scenario.request) as JsonObject);
  const want = shapeOf(captured);
  const gaps = compareShapes(want, built);
  return {
    missing: gaps
      .flatMap((gap) => gap.missing.map((path) => `${gap.kind}: ${path}`))
      .filter((line) => !WORLD_CHOICES.some((choice) => choice.pattern.test(line))),
    sizes: gaps
      .filter((gap) => gap.sizeRatio !== undefined && !SIZE_CHOICES.has(gap.kind))
      .map((gap) => ({ kind: gap.kind, ratio: gap.sizeRatio!, capturedBytes: Math.round(want.get(gap.kind)!.meanBytes) })),
  };
}

/** How many clusters the captured request's world has: the InferenceClusters it requires, or its cache's clusters. */
function getClusterCount(captured: JsonObject): number {
  const required = isObject(captured['requiredResources']) ? captured['requiredResources'] : {};
  let count = 0;
  for (const set of Object.values(required)) {
    const items = isObject(set) && Array.isArray(set['items']) ? set['items'] : [];
    for (const item of items) {
      const resource = isObject(item) ? item['resource'] : undefined;
      if (getKind(resource) === 'InferenceCluster') count++;
      // A replica requires one cluster, and the cache whose status lists them all.
      const listed = getKind(resource) === 'ModelCache' && isObject(resource) ? getIn(resource, 'status', 'clusters') : undefined;
      if (Array.isArray(listed)) count = Math.max(count, listed.length);
    }
  }
  return Math.max(count, 1);
}

function getKind(resource: JsonValue | undefined): string | undefined {
  return isObject(resource) && typeof resource['kind'] === 'string' ? resource['kind'] : undefined;
}
