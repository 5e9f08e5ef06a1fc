// compose-model-cache: fan a ModelCache out to one ModelCacheHydration per
// selected cluster, and roll their status up.

import {
  KIND,
  MODELPLANE_API_VERSION,
  labelSelector,
  newResponse,
  object,
  readComposite,
  requireResources,
  requiredResources,
  requirementLabels,
  selectByLabels,
  type RunFunctionRequest,
  type RunFunctionResponse,
} from '#lib';

const specParser = object({ clusterSelector: labelSelector() });

export function compose(req: RunFunctionRequest): RunFunctionResponse {
  const rsp = newResponse(req);
  const xr = readComposite(req);
  const spec = specParser(xr.spec, 'spec');

  requireResources(rsp, {
    clusters: selectByLabels(MODELPLANE_API_VERSION, KIND.InferenceCluster, requirementLabels(spec.clusterSelector)),
    replicas: selectByLabels(MODELPLANE_API_VERSION, KIND.ModelReplica, {}, xr.namespace),
  });
  if (!requiredResources(req, 'clusters').fetched || !requiredResources(req, 'replicas').fetched) return rsp;
  return rsp;
}
