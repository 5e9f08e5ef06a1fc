// A Standalone engine: one self-contained pod per copy, as a Deployment.

import type { V1Container, V1Deployment } from '@kubernetes/client-node';
import { READY_QUERY, celReadiness, remoteObject, toJson } from '#lib';
import { memberClaims } from './claims.js';
import { LABEL_SERVING, LABEL_WORKLOAD, engineName, servingLabel, workloadKey } from './names.js';
import {
  ENGINE_CONTAINER,
  ENGINE_PORT,
  claimResources,
  engineEnv,
  engineMounts,
  memberPodSpec,
  podMetadata,
  readinessProbe,
  userCommand,
  type CacheShaping,
} from './pod.js';
import type { Composed } from './composed.js';
import type { PhaseShaping } from './disaggregated.js';
import type { Replica, StandaloneEngine } from './spec.js';
import type { StackShaping } from './stack.js';

export function nativeWorkload(
  providerConfig: string,
  replica: Replica,
  engine: StandaloneEngine,
  cache: CacheShaping | undefined,
  stack: StackShaping,
  phase?: PhaseShaping,
): Composed {
  const member = engine.member;
  const name = engineName(replica, engine);
  const env = engineEnv(cache, [...stack.env, ...(phase?.env ?? [])], member.container.env);
  const port = phase?.enginePort ?? ENGINE_PORT;
  const container: V1Container = {
    name: ENGINE_CONTAINER,
    image: member.container.image,
    ...userCommand(member),
    // Always present, even empty: the user's args exactly as written, never a flag of ours.
    args: [...(member.container.args ?? [])],
    ...(env.length > 0 ? { env } : {}),
    ports: [{ containerPort: port }],
    volumeMounts: engineMounts(cache),
    readinessProbe: readinessProbe(port),
    ...claimResources(member),
    ...(stack.securityContext ? { securityContext: structuredClone(stack.securityContext) } : {}),
  };
  const podSpec = memberPodSpec(replica, engine, member, cache, container, phase);
  const deployment: V1Deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: replica.workloadNamespace },
    spec: {
      replicas: engine.copies,
      selector: { matchLabels: { [LABEL_WORKLOAD]: name } },
      template: {
        metadata: podMetadata(member, { [LABEL_SERVING]: servingLabel(replica), [LABEL_WORKLOAD]: name, ...phase?.labels }),
        spec: podSpec,
      },
    },
  };
  return [
    [
      workloadKey(engine),
      remoteObject({ providerConfig, readiness: celReadiness(READY_QUERY.workloadAvailable), manifest: toJson(deployment) }),
    ],
    ...memberClaims(providerConfig, replica, engine, [member]),
  ];
}
