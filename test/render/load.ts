// Render's inputs, loaded and checked as `crossplane render` loads and checks
// them (cmd/crank/render/load.go and cmd.go): one XR, one Composition in
// Pipeline mode whose compositeTypeRef is the XR's type, a stream of Functions,
// and streams of observed and required resources.

import { asArray, getIn, getObject, getString, getStringMap, isObject, type JsonObject } from '#lib';
import { LoadError, readYamlObject, readYamlStream } from './yaml.js';

export const COMPOSITION_API_VERSION = 'apiextensions.crossplane.io/v1';
export const FUNCTION_API_VERSIONS: readonly string[] = ['pkg.crossplane.io/v1', 'pkg.crossplane.io/v1beta1'];

export const ANNOTATION = {
  compositionResourceName: 'crossplane.io/composition-resource-name',
  runtime: 'render.crossplane.io/runtime',
  developmentTarget: 'render.crossplane.io/runtime-development-target',
} as const;

/** Where render dials a Development runtime Function that names no target. */
export const DEFAULT_DEVELOPMENT_TARGET = 'localhost:9443';

export interface PipelineStep {
  step: string;
  functionName: string;
  input?: JsonObject;
  /** Secret credentials the step asks for: name -> the Secret's name and namespace. */
  credentials: { name: string; secretName: string; secretNamespace: string }[];
  /** Bootstrap requirements, resolved before the first call. */
  requiredResources: { requirementName: string; selector: Selector }[];
}

/** A ResourceSelector as a requirement states it. */
export interface Selector {
  apiVersion: string;
  kind: string;
  matchName?: string;
  matchLabels?: Record<string, string>;
  namespace?: string;
}

export interface Composition {
  name: string;
  labels: Record<string, string>;
  compositeTypeRef: { apiVersion: string; kind: string };
  mode: string;
  pipeline: PipelineStep[];
}

export interface FunctionRef {
  name: string;
  runtime: string;
  target: string;
  package?: string;
}

function kindOf(doc: JsonObject): string {
  return `${getString(doc, 'kind') ?? ''}/${getString(doc, 'metadata', 'name') ?? ''}`;
}

export function loadCompositeResource(source: string | JsonObject): JsonObject {
  const xr = typeof source === 'string' ? readYamlObject(source) : structuredClone(source);
  if (!getString(xr, 'kind')) throw new LoadError(`the composite resource has no kind`);
  return xr;
}

export function parseComposition(doc: JsonObject): Composition {
  if (getString(doc, 'apiVersion') !== COMPOSITION_API_VERSION || getString(doc, 'kind') !== 'Composition') {
    throw new LoadError(`not a composition: ${kindOf(doc)}`);
  }
  const spec = getObject(doc, 'spec') ?? {};
  const pipeline = asArray(spec['pipeline']).map((raw, index): PipelineStep => {
    const step = getString(raw, 'step') ?? '';
    const functionName = getString(raw, 'functionRef', 'name');
    if (!functionName)
      throw new LoadError(`Composition ${kindOf(doc)}: spec.pipeline[${index}] (step ${JSON.stringify(step)}) has no functionRef.name`);
    const parsed: PipelineStep = { step, functionName, credentials: [], requiredResources: [] };
    const input = getObject(raw, 'input');
    if (input) parsed.input = input;
    for (const credential of asArray(getIn(raw, 'credentials'))) {
      // Render loads Secret credentials only; other sources are skipped.
      if (getString(credential, 'source') !== 'Secret') continue;
      const secretName = getString(credential, 'secretRef', 'name');
      if (!secretName) continue;
      parsed.credentials.push({
        name: getString(credential, 'name') ?? '',
        secretName,
        secretNamespace: getString(credential, 'secretRef', 'namespace') ?? '',
      });
    }
    for (const requirement of asArray(getIn(raw, 'requirements', 'requiredResources'))) {
      if (!isObject(requirement)) continue;
      parsed.requiredResources.push({
        requirementName: getString(requirement, 'requirementName') ?? '',
        selector: readSelector(requirement),
      });
    }
    return parsed;
  });
  return {
    name: getString(doc, 'metadata', 'name') ?? '',
    labels: getStringMap(doc, 'metadata', 'labels'),
    compositeTypeRef: {
      apiVersion: getString(spec, 'compositeTypeRef', 'apiVersion') ?? '',
      kind: getString(spec, 'compositeTypeRef', 'kind') ?? '',
    },
    mode: getString(spec, 'mode') ?? '',
    pipeline,
  };
}

/** A Composition's bootstrap requirement: `name` wins over `matchLabels`, and empty labels mean neither. */
function readSelector(raw: JsonObject): Selector {
  const selector: Selector = { apiVersion: getString(raw, 'apiVersion') ?? '', kind: getString(raw, 'kind') ?? '' };
  const labels = getStringMap(raw, 'matchLabels');
  if (typeof raw['name'] === 'string') selector.matchName = raw['name'];
  else if (Object.keys(labels).length > 0) selector.matchLabels = labels;
  const namespace = getString(raw, 'namespace');
  if (namespace !== undefined) selector.namespace = namespace;
  return selector;
}

export function loadComposition(source: string | JsonObject): Composition {
  return parseComposition(typeof source === 'string' ? readYamlObject(source) : source);
}

export function parseFunction(doc: JsonObject): FunctionRef {
  if (!FUNCTION_API_VERSIONS.includes(getString(doc, 'apiVersion') ?? '') || getString(doc, 'kind') !== 'Function') {
    throw new LoadError(`not a function: ${kindOf(doc)}`);
  }
  const annotations = getStringMap(doc, 'metadata', 'annotations');
  const fn: FunctionRef = {
    name: getString(doc, 'metadata', 'name') ?? '',
    // No annotation means Docker, render's default runtime.
    runtime: annotations[ANNOTATION.runtime] ?? 'Docker',
    target: annotations[ANNOTATION.developmentTarget] || DEFAULT_DEVELOPMENT_TARGET,
  };
  const pkg = getString(doc, 'spec', 'package');
  if (pkg) fn.package = pkg;
  return fn;
}

export function loadFunctions(source: string | readonly JsonObject[]): FunctionRef[] {
  return (typeof source === 'string' ? readYamlStream(source) : source).map(parseFunction);
}

/** Observed composed resources, or required resources: any objects. */
export function loadResources(source: string | readonly JsonObject[] | undefined): JsonObject[] {
  if (source === undefined) return [];
  return typeof source === 'string' ? readYamlStream(source) : source.map((doc) => structuredClone(doc));
}

/**
 * What render checks before it runs anything: the Composition is for this
 * XR's type, carries every label the XR's composition selector asks for, and
 * is a Function pipeline. The messages are render's.
 */
export function checkCompositionFor(xr: JsonObject, composition: Composition): void {
  const kind = getString(xr, 'kind') ?? '';
  const apiVersion = getString(xr, 'apiVersion') ?? '';
  if (composition.compositeTypeRef.kind !== kind) {
    throw new LoadError(`composition's compositeTypeRef.kind (${composition.compositeTypeRef.kind}) does not match XR's kind (${kind})`);
  }
  if (composition.compositeTypeRef.apiVersion !== apiVersion) {
    throw new LoadError(
      `composition's compositeTypeRef.apiVersion (${composition.compositeTypeRef.apiVersion}) does not match XR's apiVersion (${apiVersion})`,
    );
  }
  // A v2 XR keeps Crossplane's fields under spec.crossplane.
  const wanted = getStringMap(xr, 'spec', 'crossplane', 'compositionSelector', 'matchLabels');
  for (const [key, value] of Object.entries(wanted)) {
    if (!Object.hasOwn(composition.labels, key))
      throw new LoadError(`composition "${composition.name}" is missing required label "${key}"`);
    if (composition.labels[key] !== value) {
      throw new LoadError(
        `composition "${composition.name}" has incorrect value for label "${key}": want "${value}", got "${composition.labels[key]}"`,
      );
    }
  }
  if (composition.mode !== 'Pipeline') {
    throw new LoadError(
      `render only supports Composition Function pipelines: Composition "${composition.name}" must use spec.mode: Pipeline`,
    );
  }
}
