// Building blocks for requests: XRs, observed provider-kubernetes Objects,
// InferenceClusters, and checks every response must pass.

import { composedManifest, type JsonObject } from '#lib';
import type { TestRequest, TestResource, TestResponse } from './protocol.js';

export function resource(body: JsonObject, ready?: TestResource['ready']): TestResource {
  return ready ? { resource: body, ready } : { resource: body };
}

export function items(...bodies: JsonObject[]): { items: TestResource[] } {
  return { items: bodies.map((body) => ({ resource: body })) };
}

export interface ObservedObjectOptions {
  /** The Object's own Ready condition (Crossplane's verdict from the readiness query). */
  ready?: boolean;
  managementPolicies?: string[];
  /** The Object as desired: defaults to the manifest as observed. */
  desiredManifest?: JsonObject;
}

/** A provider-kubernetes Object as observed: the remote manifest under status.atProvider. */
export function observedObject(manifest: JsonObject | undefined, options: ObservedObjectOptions = {}): JsonObject {
  const spec: JsonObject = { forProvider: { manifest: options.desiredManifest ?? manifest ?? {} } };
  if (options.managementPolicies) spec['managementPolicies'] = options.managementPolicies;
  const status: JsonObject = {};
  if (manifest) status['atProvider'] = { manifest };
  if (options.ready !== undefined) {
    status['conditions'] = [
      { type: 'Ready', status: options.ready ? 'True' : 'False', reason: options.ready ? 'Available' : 'Unavailable' },
    ];
  }
  // The external-name annotation every composed Object carries from the start (remoteObject), as Crossplane observes it.
  const remoteName = ((options.desiredManifest ?? manifest)?.['metadata'] as JsonObject | undefined)?.['name'];
  const metadata: JsonObject = { name: 'generated' };
  if (typeof remoteName === 'string') metadata['annotations'] = { 'crossplane.io/external-name': remoteName };
  return { apiVersion: 'kubernetes.m.crossplane.io/v1alpha1', kind: 'Object', metadata, spec, status };
}

export interface ClusterOptions {
  labels?: Record<string, string>;
  providerConfig?: string;
  storageClassName?: string;
  imageVolumes?: boolean;
}

export function inferenceCluster(name: string, options: ClusterOptions = {}): JsonObject {
  const status: JsonObject = {};
  if (options.providerConfig) status['providerConfigRef'] = { name: options.providerConfig };
  const cache: JsonObject = {};
  if (options.storageClassName) cache['storageClassName'] = options.storageClassName;
  if (options.imageVolumes !== undefined) cache['imageVolumes'] = options.imageVolumes;
  if (Object.keys(cache).length > 0) status['cache'] = cache;
  return {
    apiVersion: 'modelplane.ai/v1alpha1',
    kind: 'InferenceCluster',
    metadata: { name, labels: options.labels ?? {} },
    spec: {},
    status,
  };
}

export function composite(kind: string, namespace: string, name: string, spec: JsonObject, status?: JsonObject): TestResource {
  const body: JsonObject = { apiVersion: 'modelplane.ai/v1alpha1', kind, metadata: { name, namespace }, spec };
  if (status) body['status'] = status;
  return { resource: body };
}

export function request(parts: TestRequest): TestRequest {
  return { meta: { tag: 'test' }, ...parts };
}

/** Every path in a value that holds null, NaN or Infinity (Crossplane would read a null as "delete this field"). */
export function badValues(value: unknown, path = ''): string[] {
  if (value === null) return [path || '(root)'];
  if (typeof value === 'number' && !Number.isFinite(value)) return [path || '(root)'];
  if (Array.isArray(value)) return value.flatMap((item, i) => badValues(item, `${path}[${i}]`));
  if (typeof value === 'object' && value !== undefined) {
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => badValues(v, path ? `${path}.${k}` : k));
  }
  return [];
}

/** The composed resources of a response as plain JSON, keyed as desired. */
export function desiredResources(rsp: TestResponse): Record<string, JsonObject> {
  const out: Record<string, JsonObject> = {};
  for (const [key, value] of Object.entries(rsp.desired?.resources ?? {})) out[key] = value.resource;
  return out;
}

/** The remote manifest inside a desired provider-kubernetes Object. */
export function manifestOf(object: JsonObject | undefined): JsonObject {
  return composedManifest(object) ?? {};
}

export function compositeStatus(rsp: TestResponse): JsonObject {
  return (rsp.desired?.composite?.resource['status'] as JsonObject | undefined) ?? {};
}

export function condition(rsp: TestResponse, type: string): { status: string; reason: string; message?: string } | undefined {
  const found = rsp.conditions.find((c) => c.type === type);
  if (!found) return undefined;
  return found.message === undefined
    ? { status: found.status, reason: found.reason }
    : { status: found.status, reason: found.reason, message: found.message };
}
