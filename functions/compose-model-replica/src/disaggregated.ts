// PrefillDecode (disaggregated) serving, the pod side: what the prefill and
// decode engines' serving pods get besides what every engine pod gets. The
// decode pod fronts its engine with the routing sidecar, which takes the
// serving port and sends each request's prefill to the prefill engine the
// picker chose; the KV cache then flows prefill → decode over NIXL, whose
// side channel each engine must advertise on its pod IP.

import type { V1Container, V1EnvVar, V1Volume } from '@kubernetes/client-node';
import { InputError, NIXL_SHM_VOLUME, describe } from '#lib';
import { LABEL_LLMD_ROLE, LABEL_LLMD_SERVING, servingLabel } from './names.js';
import { ENGINE_PORT, readinessProbe } from './pod.js';
import { flagValue } from './routing.js';
import { servingMember, type Engine, type Phase, type Replica } from './spec.js';

/** Pinned: a new sidecar release changes behaviour, so it is a reviewed bump, not a floating tag. */
export const SIDECAR_IMAGE = 'ghcr.io/llm-d/llm-d-router-disagg-sidecar:v0.9.0';
export const SIDECAR_CONTAINER = 'pd-sidecar';
/** The sidecar takes the serving port, so the decode engine listens here unless its --port says otherwise. */
export const DECODE_ENGINE_PORT = 8001;
const NIXL_SIDE_CHANNEL_PORT = '5557';

/** What one phase engine's serving pods get (never a gang's workers, which don't serve). */
export interface PhaseShaping {
  phase: Phase;
  /** Added to the serving pods' labels, after Modelplane's own. */
  labels: Record<string, string>;
  /** Injected after the contract's and Modelplane's other env, before the user's (who may refer to them and wins a clash). */
  env: V1EnvVar[];
  /** After the pod's other volumes. */
  volumes: V1Volume[];
  /** The engine container's port and probe port. */
  enginePort: number;
  /** After the engine container. */
  sidecars: V1Container[];
}

/** Python's int(), as upstream parses the flag: optional sign, digits, single underscores between digits, surrounding whitespace. */
const PYTHON_INT = /^\s*[+-]?\d+(_\d+)*\s*$/;
const MAX_PORT = 65535;

/**
 * The port the decode engine listens on: its `--port` (the user owns the
 * engine's flags; Modelplane only reads them), else 8001. Upstream crashes on
 * a `--port` that is no integer, and composes a pod whose engine and sidecar
 * both bind 8000 for `--port=8000`; both are refused here, naming the engine.
 */
export function decodePort(engine: Engine, index: number): number {
  const raw = flagValue(servingMember(engine).container.args ?? [], '--port');
  if (raw === undefined) return DECODE_ENGINE_PORT;
  const field = `spec.engines[${index}] (${engine.name}, phase Decode) --port`;
  const port = PYTHON_INT.test(raw) ? Number(raw.trim().replaceAll('_', '')) : Number.NaN;
  if (!Number.isInteger(port) || port < 1 || port > MAX_PORT) {
    throw new InputError(field, `must be a port number from 1 to ${MAX_PORT} (got ${describe(raw)})`);
  }
  if (port === ENGINE_PORT) {
    throw new InputError(
      field,
      `must not be ${ENGINE_PORT}: on a decode pod the ${SIDECAR_CONTAINER} container serves ${ENGINE_PORT} and forwards to the engine; leave --port out (the engine then listens on ${DECODE_ENGINE_PORT}) or pick another port`,
    );
  }
  return port;
}

/** The NIXL side channel: peers reach this engine's KV-transfer metadata on its pod IP. Without it transfers fail with a bare 500. */
const NIXL_ENV: readonly V1EnvVar[] = [
  { name: 'VLLM_NIXL_SIDE_CHANNEL_HOST', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
  { name: 'VLLM_NIXL_SIDE_CHANNEL_PORT', value: NIXL_SIDE_CHANNEL_PORT },
];

function sidecar(enginePort: number): V1Container {
  return {
    name: SIDECAR_CONTAINER,
    image: SIDECAR_IMAGE,
    args: ['--secure-proxy=false', '--kv-connector=nixlv2', `--vllm-port=${enginePort}`],
    ports: [{ containerPort: ENGINE_PORT }],
    // It proxies /health to the engine, so it answers as slowly: the engine's probe.
    readinessProbe: readinessProbe(ENGINE_PORT),
  };
}

/**
 * The shaping of each engine's serving pods for a PrefillDecode replica, by
 * engine name. Engines are told apart by phase, never by name (upstream's
 * rule): the Decode engine gets the sidecar and the moved port.
 */
export function phaseShapings(replica: Replica): Map<string, PhaseShaping> {
  const shapings = new Map<string, PhaseShaping>();
  replica.spec.engines.forEach((engine, index) => {
    if (engine.phase === undefined) return;
    const decode = engine.phase === 'Decode';
    const enginePort = decode ? decodePort(engine, index) : ENGINE_PORT;
    shapings.set(engine.name, {
      phase: engine.phase,
      labels: { [LABEL_LLMD_ROLE]: decode ? 'decode' : 'prefill', [LABEL_LLMD_SERVING]: 'true', app: servingLabel(replica) },
      env: NIXL_ENV.map((e) => structuredClone(e)),
      // Upstream's shared-memory volume for NIXL. Every engine pod already mounts `dshm` at /dev/shm, so
      // upstream's "mount it unless /dev/shm is mounted" never mounts it; it is still declared, as upstream
      // declares it, so the pod template is upstream's. A cache contract may not use the name (the library
      // reserves it), so it is never declared twice.
      volumes: [{ name: NIXL_SHM_VOLUME, emptyDir: { medium: 'Memory' } }],
      enginePort,
      sidecars: decode ? [sidecar(enginePort)] : [],
    });
  });
  return shapings;
}
