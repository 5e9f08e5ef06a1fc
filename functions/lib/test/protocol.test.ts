import * as sdk from '@crossplane-org/function-sdk-typescript';
import { describe, expect, it } from 'vitest';
import {
  InputError,
  Ready,
  Severity,
  Status,
  Target,
  RUN_FUNCTION_METHOD,
  composedManifest,
  conditionOf,
  desire,
  isReady,
  jsonLogger,
  newResponse,
  observedResource,
  readComposite,
  remoteManifest,
  remoteObject,
  remoteStatus,
  requiredOne,
  requiredResources,
  runSafely,
  setCompositeReady,
  setCompositeStatus,
  setCondition,
  READY_QUERY,
  JOB_POLICIES,
  keepObservedObject,
} from '#lib';
import { FunctionRunnerServiceService, RunFunctionRequest } from '#lib/sdk';

describe('the protocol enums', () => {
  // Written in protocol.ts so that functions need not load the SDK's module; they must be the SDK's, member for member.
  it.each([
    ['Ready', Ready, sdk.Ready],
    ['Severity', Severity, sdk.Severity],
    ['Status', Status, sdk.Status],
    ['Target', Target, sdk.Target],
  ] as const)("%s has the generated enum's members and values", (_name, ours, generated) => {
    const members = Object.entries(generated).filter(([key, value]) => typeof value === 'number' && key !== 'UNRECOGNIZED');
    expect(Object.entries(ours)).toEqual(members);
  });
  it('names RunFunction as the generated service does', () => {
    expect(RUN_FUNCTION_METHOD).toBe(FunctionRunnerServiceService.runFunction.path);
  });
});

function req(partial: Partial<RunFunctionRequest>): RunFunctionRequest {
  return RunFunctionRequest.fromPartial(partial);
}
const xr = { apiVersion: 'modelplane.ai/v1alpha1', kind: 'ModelCache', metadata: { name: 'qwen', namespace: 'ml-team' }, spec: { a: 1 } };

describe('readComposite', () => {
  it('reads name, namespace, spec and status', () => {
    const composite = readComposite(
      req({
        observed: {
          composite: { resource: { ...xr, status: { x: 1 } }, connectionDetails: {}, ready: Ready.READY_UNSPECIFIED },
          resources: {},
        },
      }),
    );
    expect([composite.name, composite.namespace, composite.spec, composite.status]).toEqual(['qwen', 'ml-team', { a: 1 }, { x: 1 }]);
  });
  it.each([
    [undefined, 'observed composite resource must be an object (got nothing)'],
    [{ metadata: 'x' }, 'metadata must be an object'],
    [{ metadata: {} }, 'metadata.name is missing'],
    [{ metadata: { name: '' } }, 'metadata.name is missing'],
    [{ metadata: { name: 'q' } }, 'metadata.namespace is missing'],
  ])('refuses %j', (resource, message) => {
    const request = req({
      observed: { composite: resource ? { resource, connectionDetails: {}, ready: Ready.READY_UNSPECIFIED } : undefined, resources: {} },
    });
    expect(() => readComposite(request)).toThrow(InputError);
    expect(() => readComposite(request)).toThrow(message);
  });
});

describe('required resources', () => {
  it('tells "not fetched" from "fetched, found nothing"', () => {
    const request = req({
      requiredResources: {
        clusters: { items: [] },
        cluster: { items: [{ resource: { metadata: { name: 'a' } }, connectionDetails: {}, ready: Ready.READY_UNSPECIFIED }] },
      },
    });
    expect(requiredResources(request, 'clusters')).toEqual({ fetched: true, items: [] });
    expect(requiredResources(request, 'replicas')).toEqual({ fetched: false });
    expect(requiredOne(request, 'cluster')).toEqual({ fetched: true, item: { metadata: { name: 'a' } } });
    expect(requiredOne(request, 'clusters')).toEqual({ fetched: true });
  });
  it('falls back to extraResources (Crossplane before v2)', () => {
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- the fallback under test
    const request = req({ extraResources: { clusters: { items: [] } } });
    expect(requiredResources(request, 'clusters')).toEqual({ fetched: true, items: [] });
  });
});

describe('responses', () => {
  it('echo the tag, set a 60 s TTL and keep earlier steps’ desired state and context', () => {
    const request = req({
      meta: { tag: 'abc', capabilities: [] },
      desired: { composite: undefined, resources: { other: { resource: { a: 1 }, connectionDetails: {}, ready: Ready.READY_TRUE } } },
      context: { k: 'v' },
    });
    const rsp = newResponse(request);
    expect(rsp.meta).toEqual({ tag: 'abc', ttl: { seconds: 60, nanos: 0 } });
    expect(Object.keys(rsp.desired!.resources)).toEqual(['other']);
    expect(rsp.context).toEqual({ k: 'v' });
  });

  it('write whole fields, never null, and replace a condition of the same type', () => {
    const rsp = newResponse(req({}));
    setCompositeStatus(rsp, { clusters: [{ name: 'a', message: null }], summary: { ready: '0/1' } });
    setCompositeStatus(rsp, { clusters: [{ name: 'b' }], gone: undefined });
    expect(rsp.desired!.composite!.resource).toEqual({ status: { clusters: [{ name: 'b' }], summary: { ready: '0/1' } } });
    setCondition(rsp, { type: 'ArtifactReady', status: false, reason: 'Hydrating', message: 'x' });
    setCondition(rsp, { type: 'ArtifactReady', status: true, reason: 'Staged' });
    expect(rsp.conditions).toEqual([{ type: 'ArtifactReady', status: Status.STATUS_CONDITION_TRUE, reason: 'Staged' }]);
    setCompositeReady(rsp, true);
    expect(rsp.desired!.composite!.ready).toBe(Ready.READY_TRUE);
    desire(rsp, 'pvc', { a: null, b: 1 }, true);
    expect(rsp.desired!.resources['pvc']).toEqual({ resource: { b: 1 }, connectionDetails: {}, ready: Ready.READY_TRUE });
  });
});

describe('runSafely', () => {
  const logger = jsonLogger({ function: 'f', debug: false, write: () => undefined });
  it('turns an InputError into a Fatal result with its message', () => {
    const rsp = runSafely(
      'f',
      () => {
        throw new InputError('spec.source', 'is required');
      },
      req({ meta: { tag: 't', capabilities: [] } }),
      logger,
    );
    expect(rsp.results).toEqual([{ severity: Severity.SEVERITY_FATAL, message: 'spec.source is required' }]);
    expect(rsp.meta?.tag).toBe('t');
  });
  it('turns any other error into a Fatal result naming the function', () => {
    const rsp = runSafely(
      'f',
      () => {
        throw new TypeError('boom');
      },
      req({}),
      logger,
    );
    expect(rsp.results[0]).toEqual({ severity: Severity.SEVERITY_FATAL, message: 'f failed: boom' });
  });
});

describe('remote objects', () => {
  it('wrap a manifest for provider-kubernetes', () => {
    expect(
      remoteObject({
        providerConfig: 'pc',
        manifest: { kind: 'Job' },
        readiness: { policy: 'DeriveFromCelQuery', celQuery: READY_QUERY.jobComplete },
        managementPolicies: JOB_POLICIES,
      }),
    ).toEqual({
      apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
      kind: 'Object',
      spec: {
        forProvider: { manifest: { kind: 'Job' } },
        providerConfigRef: { kind: 'ClusterProviderConfig', name: 'pc' },
        readiness: {
          policy: 'DeriveFromCelQuery',
          celQuery: 'has(object.status.conditions) && object.status.conditions.exists(c, c.type == "Complete" && c.status == "True")',
        },
        managementPolicies: ['Observe', 'Create', 'Update', 'LateInitialize'],
      },
    });
    expect(remoteObject({ providerConfig: 'pc', manifest: {} }).spec).toEqual({
      forProvider: { manifest: {} },
      providerConfigRef: { kind: 'ClusterProviderConfig', name: 'pc' },
    });
  });
  it('read back the manifest an Object was composed with, not the remote one it observed', () => {
    const manifest = { kind: 'PodCliqueSet', metadata: { name: 'r-main' } };
    const object = { ...remoteObject({ providerConfig: 'pc', manifest }), status: { atProvider: { manifest: { kind: 'Other' } } } };
    expect(composedManifest(object)).toEqual(manifest);
    expect(composedManifest({ spec: {} })).toBeUndefined();
    expect(composedManifest(undefined)).toBeUndefined();
  });
  it('read back the observed remote manifest, status and conditions', () => {
    const observed = {
      status: {
        atProvider: { manifest: { status: { phase: 'Bound' } } },
        conditions: [{ type: 'Ready', status: 'True', reason: 'Available' }],
      },
    };
    const request = req({
      observed: { composite: undefined, resources: { pvc: { resource: observed, connectionDetails: {}, ready: Ready.READY_UNSPECIFIED } } },
    });
    expect(remoteManifest(observedResource(request, 'pvc'))).toEqual({ status: { phase: 'Bound' } });
    expect(remoteStatus(observedResource(request, 'pvc'))).toEqual({ phase: 'Bound' });
    expect(remoteStatus(observedResource(request, 'job'))).toEqual({});
    expect(isReady(observed)).toBe(true);
    expect(conditionOf(observed, 'Ready')).toEqual({ status: 'True', reason: 'Available' });
    expect(isReady({ status: { conditions: 'nope' } })).toBe(false);
  });
});

describe('keepObservedObject', () => {
  it('keeps what we asked of the Object and drops what others added', () => {
    const observed = {
      apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
      kind: 'Object',
      metadata: { name: 'qwen-x7k2p', uid: 'u', annotations: { 'crossplane.io/composition-resource-name': 'pvc' } },
      spec: {
        forProvider: { manifest: { kind: 'PersistentVolumeClaim' } },
        providerConfigRef: { kind: 'ClusterProviderConfig', name: 'pc' },
        managementPolicies: ['*'],
        deletionPolicy: 'Delete',
        readiness: { policy: 'DeriveFromCelQuery', celQuery: 'q' },
        writeConnectionSecretToRef: null,
      },
      status: { atProvider: { manifest: {} } },
    };
    expect(keepObservedObject(observed)).toEqual({
      apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
      kind: 'Object',
      spec: {
        forProvider: { manifest: { kind: 'PersistentVolumeClaim' } },
        providerConfigRef: { kind: 'ClusterProviderConfig', name: 'pc' },
        readiness: { policy: 'DeriveFromCelQuery', celQuery: 'q' },
        managementPolicies: ['*'],
      },
    });
  });
});
