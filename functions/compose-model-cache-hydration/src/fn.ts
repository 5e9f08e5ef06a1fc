// compose-model-cache-hydration: stage one cache on one cluster and publish the
// mount contract that tells a pod how to read the model there.

import {
  KIND,
  MODELPLANE_API_VERSION,
  newResponse,
  object,
  optional,
  readComposite,
  requireResources,
  requiredResources,
  selectByName,
  string,
  type ResourceSelector,
  type RunFunctionRequest,
  type RunFunctionResponse,
} from '#lib';

const specParser = object({
  clusterName: string(),
  authSecret: optional(object({ name: string(), namespace: optional(string()) })),
});

export function compose(req: RunFunctionRequest): RunFunctionResponse {
  const rsp = newResponse(req);
  const xr = readComposite(req);
  const spec = specParser(xr.spec, 'spec');

  const selectors: Record<string, ResourceSelector> = {
    cluster: selectByName(MODELPLANE_API_VERSION, KIND.InferenceCluster, spec.clusterName),
  };
  if (spec.authSecret)
    selectors['auth-secret'] = selectByName('v1', 'Secret', spec.authSecret.name, spec.authSecret.namespace ?? xr.namespace);
  requireResources(rsp, selectors);
  if (Object.keys(selectors).some((key) => !requiredResources(req, key).fetched)) return rsp;
  return rsp;
}
