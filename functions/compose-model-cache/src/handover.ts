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

import { HANDOVER_BATCH, ORPHAN_ON_DELETE_ANNOTATION, getIn, getObject, type JsonObject } from '#lib';

export type HandOverStep = 'orphan' | 'list' | 'release' | 'wait';

/** Which step each cluster of the layout before shards is at; clusters beyond the batch wait their turn. */
export function handOverSteps(clusters: readonly { cluster: string; child: JsonObject }[]): Map<string, HandOverStep> {
  const steps = new Map<string, HandOverStep>();
  clusters.forEach(({ cluster, child }, i) => {
    if (i >= HANDOVER_BATCH) steps.set(cluster, 'wait');
    else steps.set(cluster, getIn(child, 'status', 'orphanOnDelete') === true ? 'list' : 'orphan');
  });
  return steps;
}

/** Annotations the child carries while it is handed over. */
export const ORPHAN_ANNOTATIONS: Readonly<Record<string, string>> = { [ORPHAN_ON_DELETE_ANNOTATION]: 'true' };

/** The status a child hands on: all of it but Crossplane's conditions and the hand-over's own word. */
export function inheritableStatus(child: JsonObject): JsonObject {
  const status = getObject(child, 'status') ?? {};
  const out: JsonObject = {};
  for (const [field, value] of Object.entries(status)) {
    if (field !== 'conditions' && field !== 'orphanOnDelete' && value !== undefined && value !== null) out[field] = value;
  }
  return out;
}
