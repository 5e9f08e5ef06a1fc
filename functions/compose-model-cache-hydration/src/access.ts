// Least-privilege access for a Job that writes back to its own cluster (the
// OCI resolver's result ConfigMap, the download's progress report): a
// ServiceAccount of its own and a Role bound to it that names the objects it
// may touch, by name. Both Jobs use the same shape, so it is written once.

import type { V1PolicyRule, V1Role, V1RoleBinding, V1ServiceAccount } from '@kubernetes/client-node';
import { toJson, type JsonObject } from '#lib';

export interface JobAccess {
  account: JsonObject;
  role: JsonObject;
  binding: JsonObject;
}

/** The ServiceAccount, Role and RoleBinding, all named `name`, granting only `rule`. */
export function jobAccess(name: string, namespace: string, labels: Record<string, string>, rule: V1PolicyRule): JobAccess {
  const metadata = { name, namespace, labels };
  const account: V1ServiceAccount = { apiVersion: 'v1', kind: 'ServiceAccount', metadata };
  const role: V1Role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata, rules: [rule] };
  const binding: V1RoleBinding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects: [{ kind: 'ServiceAccount', name, namespace }],
  };
  return { account: toJson(account), role: toJson(role), binding: toJson(binding) };
}
