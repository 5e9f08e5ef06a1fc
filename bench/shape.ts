// The shape of a request as Crossplane sends it, to hold the benchmark's
// realistic requests (crossplane.ts) against requests captured from a real
// Crossplane (bench/captured/, recorded by test/e2e/capture.e2e.ts).
//
// Two requests from different worlds (other names, other models, other
// cluster counts) can't be compared byte for byte. What the realistic builder
// claims to reproduce is what the API server and Crossplane add around what
// our functions compose: the metadata of every object, an XR's
// spec.crossplane, the fields provider-kubernetes adds to an Object, condition
// fields, and the remote object an Object reports back. So a shape is, per
// kind of resource in each part of the request, the set of those paths
// (list items folded into `[]`), and the JSON size of one such resource.

import { OWNER_ANNOTATION_PREFIX, isObject, type JsonObject, type JsonValue } from '#lib';

/**
 * An owner annotation's key ends in a hash of its owner's kind, namespace and
 * name (names.ts), so the same annotation has another key in a world with
 * other names: it is one path, `modelplane.ai/owner-<hash>`, whoever owns it.
 */
const OWNER_KEY = new RegExp(`^${OWNER_ANNOTATION_PREFIX.replace(/[.]/g, '\\.')}[0-9a-f]+$`);

function pathKey(key: string): string {
  return OWNER_KEY.test(key) ? `${OWNER_ANNOTATION_PREFIX}<hash>` : key;
}

export interface KindShape {
  /** Decoration paths, e.g. `metadata.managedFields[].manager`. */
  paths: Set<string>;
  /** How many resources of this kind the request carries. */
  count: number;
  /** Their JSON size in bytes, on average. */
  meanBytes: number;
}

/** Shapes by `part kind`, e.g. `observed Object/Job`, `required InferenceCluster`, `composite ModelCache`. */
export type RequestShape = Map<string, KindShape>;

/**
 * Which paths are decoration. Any metadata not inside a nested spec or
 * status: the object's, its manifest's (as asked and as observed), and a
 * template's directly under spec; labels and annotations by key (the ones
 * Crossplane adds have fixed names); managedFields but not their fieldsV1,
 * which mirrors the object's own fields. Elsewhere: an XR's spec.crossplane,
 * an Object's own spec fields (not the manifest's content), condition fields,
 * and top-level keys.
 */
function isDecoration(path: string): boolean {
  if (/(^|\.)metadata\.managedFields\[\]\.fieldsV1\./.test(path)) return false;
  if (
    /(^|\.)metadata(\.|$)/.test(path) &&
    !/\.(spec|status)\./.test(path.replace(/^(spec\.forProvider\.manifest|status\.atProvider\.manifest)\./, ''))
  )
    return true;
  if (/^spec\.crossplane(\.|$)/.test(path)) return true;
  if (/^(spec|status)\.conditions\[\](\.|$)/.test(path)) return true;
  if (/^spec\.[A-Za-z]+$/.test(path)) return true;
  if (/^spec\.forProvider\.[A-Za-z]+$/.test(path)) return true;
  if (/^status\.atProvider\.[A-Za-z]+$/.test(path)) return true;
  return /^[A-Za-z]+$/.test(path);
}

function walk(value: JsonValue, path: string, out: Set<string>, depth: number): void {
  if (depth > 24) return;
  if (Array.isArray(value)) {
    for (const item of value) walk(item, `${path}[]`, out, depth + 1);
    return;
  }
  if (!isObject(value)) return;
  for (const [key, child] of Object.entries(value)) {
    const next = path === '' ? pathKey(key) : `${path}.${pathKey(key)}`;
    if (isDecoration(next)) out.add(next);
    if (/\.fieldsV1$/.test(next) || child === undefined) continue;
    walk(child, next, out, depth + 1);
  }
}

function kindOf(resource: JsonObject): string {
  const kind = typeof resource['kind'] === 'string' ? resource['kind'] : '?';
  if (kind !== 'Object') return kind;
  const spec = isObject(resource['spec']) ? resource['spec'] : {};
  const forProvider = isObject(spec['forProvider']) ? spec['forProvider'] : {};
  const manifest = isObject(forProvider['manifest']) ? forProvider['manifest'] : {};
  return `Object/${typeof manifest['kind'] === 'string' ? manifest['kind'] : '?'}`;
}

function add(shape: RequestShape, part: string, resource: JsonObject): void {
  const key = `${part} ${kindOf(resource)}`;
  const entry = shape.get(key) ?? { paths: new Set<string>(), count: 0, meanBytes: 0 };
  walk(resource, '', entry.paths, 0);
  const bytes = JSON.stringify(resource).length;
  entry.meanBytes = (entry.meanBytes * entry.count + bytes) / (entry.count + 1);
  entry.count++;
  shape.set(key, entry);
}

/** A RunFunctionRequest as JSON (RunFunctionRequest.toJSON): its composite, observed and required resources. */
export function shapeOf(request: JsonObject): RequestShape {
  const shape: RequestShape = new Map();
  const observed = isObject(request['observed']) ? request['observed'] : {};
  const composite = isObject(observed['composite']) ? observed['composite'] : {};
  if (isObject(composite['resource'])) add(shape, 'composite', composite['resource']);
  const resources = isObject(observed['resources']) ? observed['resources'] : {};
  for (const value of Object.values(resources))
    if (isObject(value) && isObject(value['resource'])) add(shape, 'observed', value['resource']);
  const required = isObject(request['requiredResources']) ? request['requiredResources'] : {};
  for (const set of Object.values(required)) {
    const items = isObject(set) && Array.isArray(set['items']) ? set['items'] : [];
    for (const item of items) if (isObject(item) && isObject(item['resource'])) add(shape, 'required', item['resource']);
  }
  return shape;
}

export interface ShapeGap {
  kind: string;
  /** Decoration the captured request has and the built one lacks. */
  missing: string[];
  /** The built resource's mean size over the captured one's (undefined when the kind is missing). */
  sizeRatio?: number;
}

/** Where a built request falls short of a captured one: kinds and paths it lacks, and each kind's size ratio. */
export function compareShapes(captured: RequestShape, built: RequestShape): ShapeGap[] {
  const gaps: ShapeGap[] = [];
  for (const [kind, want] of [...captured].sort(([a], [b]) => a.localeCompare(b))) {
    const have = built.get(kind);
    if (!have) {
      gaps.push({ kind, missing: ['(the kind itself)'] });
      continue;
    }
    gaps.push({
      kind,
      missing: [...want.paths].filter((path) => !have.paths.has(path)).sort(),
      sizeRatio: have.meanBytes / want.meanBytes,
    });
  }
  return gaps;
}
