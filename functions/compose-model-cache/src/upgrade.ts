// The two-step upgrade from the single-function ModelCache (architecture
// decision 12). That layout composed `pvc-<c>`, `hydrate-<c>` and `auth-<c>`
// itself. Dropping those Objects in the reconcile that stamps the child would
// let provider-kubernetes delete the remote PVC, weights and all, before the
// child adopts it by name. So, per cluster:
//
//   1. re-desire them with management policies that lack Delete, and stamp no
//      child for that cluster yet;
//   2. once every one of them is observed without Delete, drop them (their
//      remote objects stay) and stamp the child, which adopts the same PVC.

import {
  OBSERVE_ONLY,
  canDeleteRemote,
  getObject,
  isReady,
  keepObservedObject,
  managementPoliciesOf,
  withoutDelete,
  type JsonObject,
} from '#lib';
import { legacyKey, type LegacyKind, type LegacyObjects } from './observed.js';

/** Ready to hand over: every legacy Object of the cluster is observed unable to delete its remote object. */
export function readyToHandOver(legacy: LegacyObjects): boolean {
  return Object.values(legacy).every((object) => !canDeleteRemote(object));
}

export interface LegacyDesired {
  key: string;
  resource: JsonObject;
  ready: boolean;
}

/**
 * Step 1: each legacy Object of a cluster as observed, but unable to delete.
 * The PVC and the Job keep everything else they had. The token Secret is the
 * exception: its manifest holds the token, and this function never copies a
 * token, so it is re-desired observe-only with `data` and `stringData` left
 * out (observe-only, the provider never writes that shortened manifest back;
 * the child composes the Secret again under the same name if it needs it).
 */
export function keepLegacy(cluster: string, legacy: LegacyObjects): LegacyDesired[] {
  const out: LegacyDesired[] = [];
  for (const kind of ['pvc', 'hydrate', 'auth'] as const satisfies readonly LegacyKind[]) {
    const observed = legacy[kind];
    if (!observed) continue;
    const resource = keepObservedObject(observed);
    const spec = getObject(resource, 'spec') ?? {};
    if (kind === 'auth') {
      spec['forProvider'] = withoutSecretData(getObject(spec, 'forProvider') ?? {});
      spec['managementPolicies'] = [...OBSERVE_ONLY];
    } else {
      spec['managementPolicies'] = withoutDelete(managementPoliciesOf(observed));
    }
    resource['spec'] = spec;
    out.push({ key: legacyKey(kind, cluster), resource, ready: isReady(observed) });
  }
  return out;
}

function withoutSecretData(forProvider: JsonObject): JsonObject {
  const manifest = getObject(forProvider, 'manifest') ?? {};
  const kept: JsonObject = {};
  for (const [field, value] of Object.entries(manifest)) {
    if (field !== 'data' && field !== 'stringData') kept[field] = value;
  }
  return { ...forProvider, manifest: kept };
}
