// Handing the children of the layout before shards over to shards
// (docs/design/fleet.md, "Upgrading in place"). Crossplane can't move a
// composed resource to another parent: dropping it deletes it, and with it
// the staged claim. So, a batch of clusters at a time:
//
//   1. orphan: re-desire the child with ORPHAN_ON_DELETE_ANNOTATION; it turns
//      every Object's Delete policy off and says so (status.orphanOnDelete);
//   2. list: name the cluster in its shard, with the child's status to inherit;
//   3. release: once the shard is observed listing it, drop the child. The
//      shard then stamps one of the same name that inherits that status and
//      adopts what is on the cluster by name.

import {
  HANDOVER_BATCH,
  MAX_STATUS_MESSAGE,
  ORPHAN_ON_DELETE_ANNOTATION,
  cacheStateFields,
  getIn,
  getObject,
  readCacheState,
  type JsonObject,
} from '#lib';

export type HandOverStep = 'orphan' | 'list' | 'release' | 'wait';

/** Whether a child's hand-over has begun: it was re-desired orphan-on-delete, or says its Objects are. */
function underWay(child: JsonObject): boolean {
  return (
    getIn(child, 'metadata', 'annotations', ORPHAN_ON_DELETE_ANNOTATION) === 'true' || getIn(child, 'status', 'orphanOnDelete') === true
  );
}

/**
 * Which step each cluster of the layout before shards is at. A hand-over under
 * way carries on whatever else changed (a child put back to Delete midway
 * would only churn); the others start as the batch has room, in name order.
 */
export function handOverSteps(clusters: readonly { cluster: string; child: JsonObject }[]): Map<string, HandOverStep> {
  const steps = new Map<string, HandOverStep>();
  let started = clusters.filter(({ child }) => underWay(child)).length;
  for (const { cluster, child } of clusters) {
    if (getIn(child, 'status', 'orphanOnDelete') === true) steps.set(cluster, 'list');
    else if (underWay(child)) steps.set(cluster, 'orphan');
    else if (started < HANDOVER_BATCH) {
      started += 1;
      steps.set(cluster, 'orphan');
    } else steps.set(cluster, 'wait');
  }
  return steps;
}

/** Annotations the child carries while it is handed over. */
export const ORPHAN_ANNOTATIONS: Readonly<Record<string, string>> = { [ORPHAN_ON_DELETE_ANNOTATION]: 'true' };

/** The status fields a child hands on beside its cache state (the XRD's spec.inheritedStatus). */
const CARRIED_STRINGS = ['resolvedRef', 'staged', 'attemptsFor', 'retryRequest', 'reverifiedFor'] as const;

/**
 * The status a child hands on: its cache state as checked (lib reports.ts:
 * a field that fails is not handed on, so a size out of bounds never reaches
 * the hydration that adopts the claim) and its latches' bounded strings; not
 * Crossplane's conditions, not the hand-over's own word, nothing unknown;
 * not whether the cluster was reachable either (its new child reads that
 * from the Objects it adopts).
 */
export function inheritableStatus(child: JsonObject): JsonObject {
  const status = getObject(child, 'status') ?? {};
  const state = readCacheState(status);
  delete state.unreachable;
  const out = cacheStateFields(state);
  for (const field of CARRIED_STRINGS) {
    const value = status[field];
    if (typeof value === 'string' && value.length <= MAX_STATUS_MESSAGE) out[field] = value;
  }
  return out;
}
