// The InferenceCluster fields these functions read. InferenceClusters are
// written by other compositions; a field of the wrong type reads as absent, so
// one odd cluster can never fail a whole cache.

import { getIn, getObject, getString, getStringMap } from './json.js';

export interface InferenceCluster {
  name: string;
  labels: Record<string, string>;
  /** The ClusterProviderConfig that reaches the workload cluster; absent until provisioned. */
  providerConfigName?: string;
  /** The cluster's ReadWriteMany StorageClass for staging (HuggingFace needs one). */
  storageClassName?: string;
  /** Whether pods there can mount OCI image volumes (Kubernetes >= 1.35 with containerd >= 2.1, or CRI-O). */
  imageVolumes: boolean;
  /** The gateway the cluster reports for HTTPRoutes, when it reports one. */
  gatewayName?: string;
  gatewayNamespace?: string;
  /** The serving stack the cluster runs (`spec.stack`: Standard or Dynamo), when it says; absent means Standard. */
  stack?: string;
}

export function readInferenceCluster(raw: unknown): InferenceCluster | undefined {
  const name = getString(raw, 'metadata', 'name');
  if (!name) return undefined;
  const cluster: InferenceCluster = {
    name,
    labels: getStringMap(raw, 'metadata', 'labels'),
    imageVolumes: getIn(raw, 'status', 'cache', 'imageVolumes') === true,
  };
  const providerConfigName = getString(raw, 'status', 'providerConfigRef', 'name');
  if (providerConfigName) cluster.providerConfigName = providerConfigName;
  const storageClassName = getString(raw, 'status', 'cache', 'storageClassName');
  if (storageClassName) cluster.storageClassName = storageClassName;
  const gateway = getObject(raw, 'status', 'gateway');
  const gatewayName = getString(gateway, 'name');
  if (gatewayName) cluster.gatewayName = gatewayName;
  const gatewayNamespace = getString(gateway, 'namespace');
  if (gatewayNamespace) cluster.gatewayNamespace = gatewayNamespace;
  const stack = getString(raw, 'spec', 'stack');
  if (stack) cluster.stack = stack;
  return cluster;
}
