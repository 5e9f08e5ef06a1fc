// PersistentVolumeClaim: the user already filled a claim on the cluster.
// Modelplane observes it, never creates, changes or deletes it, and mounts it
// read-only once it is Bound.

import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import {
  OBSERVE_ONLY,
  READY_QUERY,
  asArray,
  celReadiness,
  claimMount,
  getIn,
  getString,
  getStringMap,
  remoteManifest,
  remoteObject,
  toJson,
} from '#lib';
import { remoteNotReported } from './adoption.js';
import { claimOwner } from './labels.js';
import type { Outcome, Stage } from './outcome.js';
import type { ClaimSource } from './spec.js';

/**
 * Not `pvc`: that key is the PVC the HuggingFace source owns (and deletes
 * with the cache). A cache that switches source then drops one Object and adds
 * another, and never turns its own PVC's Object into an observer of the
 * user's claim, or the user's claim's Object into an owner.
 */
export const CLAIM_KEY = 'claim';

/** Access modes that let pods on several nodes mount the claim at once (a multi-node gang needs one). */
const SHAREABLE_MODES: readonly string[] = ['ReadWriteMany', 'ReadOnlyMany'];

export function stageClaim(stage: Stage, source: ClaimSource): Outcome {
  const { cluster } = stage;
  const name = source.claimName;
  const claimRef: V1PersistentVolumeClaim = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: stage.workloadNamespace },
  };
  const outcome: Outcome = {
    phase: 'Pending',
    reason: 'ClaimNotFound',
    facts: {},
    resources: [
      [
        CLAIM_KEY,
        remoteObject({
          providerConfig: cluster.providerConfigName,
          manifest: toJson(claimRef),
          readiness: celReadiness(READY_QUERY.pvcBound),
          managementPolicies: OBSERVE_ONLY,
        }),
      ],
    ],
    warnings: [],
    artifact: `claim ${name}`,
  };
  const observed = stage.observed(CLAIM_KEY);
  if (observed === undefined) outcome.firstCompose = `Mounting claim ${name} on ${cluster.name}`;

  // Not found is Pending, never Failed: the claim can be created after the cache, and bind later.
  const claim = remoteManifest(observed);
  const previous = stage.previous;
  if (claim === undefined && previous.phase === 'Ready' && previous.staged === outcome.artifact && remoteNotReported(stage, CLAIM_KEY)) {
    // Adopted from the XR this one replaces, not observed yet: the claim it mounted.
    outcome.phase = 'Ready';
    outcome.reason = 'Staged';
    outcome.mount = claimMount({ claimName: name, subPath: source.subPath });
    if (previous.accessModes !== undefined) outcome.facts.accessModes = previous.accessModes;
    return outcome;
  }
  if (claim === undefined) {
    outcome.message = `claim ${name} not found in namespace ${stage.workloadNamespace} on ${cluster.name}`;
    return outcome;
  }
  // Checked before anything else about it: a claim staged for another namespace is never ours to read.
  const owner = claimOwner(name, getStringMap(claim, 'metadata', 'labels'), stage.namespace);
  if (!owner.usable) {
    outcome.phase = 'Failed';
    outcome.reason = 'ClaimOwnedElsewhere';
    outcome.message = `claim ${name} in namespace ${stage.workloadNamespace} on ${cluster.name} holds weights Modelplane staged for ${owner.owner}; a cache in namespace ${stage.namespace} can't mount it (name a claim your platform provisioned, or stage the model with a cache of your own)`;
    return outcome;
  }
  const modes = accessModes(claim);
  if (modes.length > 0) outcome.facts.accessModes = modes;
  const phase = getString(claim, 'status', 'phase');
  if (phase !== 'Bound') {
    outcome.reason = 'ClaimNotBound';
    outcome.message = `claim ${name} in namespace ${stage.workloadNamespace} on ${cluster.name} is ${phase ?? 'not bound yet'}`;
    return outcome;
  }
  outcome.phase = 'Ready';
  outcome.reason = 'Staged';
  outcome.mount = claimMount({ claimName: name, subPath: source.subPath });
  if (!modes.some((mode) => SHAREABLE_MODES.includes(mode))) {
    outcome.message = `claim ${name} is ${modes.length > 0 ? modes.join(', ') : 'of unknown access mode'}: only single-node replicas can mount it`;
  }
  return outcome;
}

/** What the bound claim grants (status), else what it asked for (spec). */
function accessModes(claim: unknown): string[] {
  const granted = asArray(getIn(claim, 'status', 'accessModes')).filter((m): m is string => typeof m === 'string');
  if (granted.length > 0) return granted;
  return asArray(getIn(claim, 'spec', 'accessModes')).filter((m): m is string => typeof m === 'string');
}
