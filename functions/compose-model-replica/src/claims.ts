// DRA ResourceClaimTemplates: one per member that claims devices. One
// template serves every pod of the member (DRA stamps a fresh claim per pod);
// the members of an engine may claim different devices, or none.

import { SUCCESSFUL_CREATE, remoteObject, toJson, type JsonObject } from '#lib';
import type { Composed } from './composed.js';
import { claimKey, claimTemplateName } from './names.js';
import type { DeviceRequest, Engine, Member, Replica } from './spec.js';

const DRA_API_VERSION = 'resource.k8s.io/v1';

function deviceRequest(request: DeviceRequest): JsonObject {
  const exactly: JsonObject = { deviceClassName: request.deviceClassName, count: request.count };
  // The scheduler's CEL selectors, ANDed, verbatim.
  if (request.selectorExpressions.length > 0)
    exactly['selectors'] = request.selectorExpressions.map((expression) => ({ cel: { expression } }));
  return { name: request.name, exactly };
}

/** The template as a remote Object; ready once created (nothing reconciles a template). */
export function claimTemplate(
  providerConfig: string,
  replica: Replica,
  engine: Engine,
  member: Member,
  requests: DeviceRequest[],
): JsonObject {
  return remoteObject({
    providerConfig,
    readiness: SUCCESSFUL_CREATE,
    manifest: toJson({
      apiVersion: DRA_API_VERSION,
      kind: 'ResourceClaimTemplate',
      metadata: { name: claimTemplateName(replica, engine, member), namespace: replica.workloadNamespace },
      spec: { spec: { devices: { requests: requests.map(deviceRequest) } } },
    }),
  });
}

/** The templates of an engine's members that claim devices, each under its member's key. */
export function memberClaims(providerConfig: string, replica: Replica, engine: Engine, members: readonly Member[]): Composed {
  return members.flatMap((member): Composed =>
    member.deviceRequests
      ? [[claimKey(engine, member), claimTemplate(providerConfig, replica, engine, member, member.deviceRequests)]]
      : [],
  );
}
