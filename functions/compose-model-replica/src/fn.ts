// compose-model-replica: serve a model on one cluster, starting no engine
// before the model's cache is Ready there.

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
  modelCacheRef: optional(object({ name: string() })),
});

export function compose(req: RunFunctionRequest): RunFunctionResponse {
  const rsp = newResponse(req);
  const xr = readComposite(req);
  const spec = specParser(xr.spec, 'spec');

  const selectors: Record<string, ResourceSelector> = {
    cluster: selectByName(MODELPLANE_API_VERSION, KIND.InferenceCluster, spec.clusterName),
  };
  if (spec.modelCacheRef) selectors['cache'] = selectByName(MODELPLANE_API_VERSION, KIND.ModelCache, spec.modelCacheRef.name, xr.namespace);
  requireResources(rsp, selectors);
  if (Object.keys(selectors).some((key) => !requiredResources(req, key).fetched)) return rsp;
  return rsp;
}
