import { describe, expect, it } from 'vitest';
import {
  GROVE_NAME_MAX,
  InputError,
  assertNamePart,
  cacheNames,
  childName,
  hydrationName,
  ownerAnnotation,
  replicaNames,
  upstreamReplicaNames,
} from '#lib';

// Every value in lib.md's table, the upstream literals, and the computed vectors.
const VECTORS: [string[], string][] = [
  [['modelcache', 'ml-team', 'qwen'], 'modelcache-ml-team-qwen-17db2'],
  [['modelcache', 'ml-team', 'qwen', 'hydrate'], 'modelcache-ml-team-qwen-hydrate-256ec'],
  [['modelcache', 'ml-team', 'qwen', 'auth'], 'modelcache-ml-team-qwen-auth-ae01b'],
  [['test-cluster', 'kubeconfig'], 'test-cluster-kubeconfig-55b57'],
  [['modelcache', 'ml-team', 'kimi-k2', 'us-east-a100'], 'modelcache-ml-team-kimi-k2-us-east-a100-e3395'],
  [['modelcache', 'ml-team', 'qwen', 'cluster-a'], 'modelcache-ml-team-qwen-cluster-a-d4283'],
  [['test-cluster', 'subnet-us-west-2a'], 'test-cluster-subnet-us-west-2a-952dc'],
  [['modelplane-system', 'test-cluster', 'eks'], 'modelplane-system-test-cluster-eks-0865f'],
  [['test-cluster', 'sa-key'], 'test-cluster-sa-key-3295c'],
  [['modelcache', 'ml-team', 'kimi-k2'], 'modelcache-ml-team-kimi-k2-81193'],
  [['modelcache', 'ml-team', 'kimi-k2', 'hydrate'], 'modelcache-ml-team-kimi-k2-hydrate-fc988'],
  [['modelcache', 'ml-team', 'kimi-k2', 'auth'], 'modelcache-ml-team-kimi-k2-auth-4f88b'],
  [['modelcache', 'ml-team', 'kimi-k2', 'us-east-a100', 'resolve'], 'modelcache-ml-team-kimi-k2-us-east-a100-resolve-7093a'],
  [['modelcache', 'ml-team', 'qwen', 'cluster-b'], 'modelcache-ml-team-qwen-cluster-b-a99c8'],
  [['modelcache', 'ml-team', 'qwen', 'resolve'], 'modelcache-ml-team-qwen-resolve-167ed'],
  [['my-xr', 'bucket'], 'my-xr-bucket-05ecb'],
  [['test-replica', 'main'], 'test-replica-main-6b608'],
  [['test-replica', 'main', 'standalone', 'devices'], 'test-replica-main-standalone-devices-e609d'],
  [['qwen-0', 'main'], 'qwen-0-main-7c37f'],
  [['qwen-0', 'main', 'leader', 'devices'], 'qwen-0-main-leader-devices-08577'],
  [['mp', 'ml-team'], 'mp-ml-team-51733'],
];

describe('childName', () => {
  it.each(VECTORS)('%j → %s', (parts, expected) => {
    expect(childName(...parts)).toBe(expected);
  });

  it('cuts at 57 characters, strips the dashes the cut leaves, and hashes the whole string', () => {
    const name = childName('modelcache', 'team-with-a-rather-long-namespace', 'a-very-long-model-cache-name', 'cluster-prod-1');
    expect(name).toBe('modelcache-team-with-a-rather-long-namespace-a-very-long-ef232');
    expect(name).toHaveLength(62);
  });

  it('is exactly 63 characters when the cut lands on a letter', () => {
    expect(childName('modelcache', 'ns', 'x'.repeat(60))).toBe('modelcache-ns-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-4ec52');
    expect(childName('modelcache', 'abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklm', 'xyz')).toBe(
      'modelcache-abcdefghijklmnopqrstuvwxyz0123456789abcdefghij-e8c61',
    );
    expect(childName('a'.repeat(60), 'main')).toBe(`${'a'.repeat(57)}-8bf5d`);
  });

  it('keeps an empty part as a double dash and hashes an empty name like the SDK', () => {
    expect(childName('a', '', 'b').startsWith('a--b-')).toBe(true);
    expect(childName('')).toBe('-e3b0c');
  });

  it('never exceeds 63 characters, whatever the parts', () => {
    for (let n = 0; n < 200; n += 7) {
      const name = childName('modelcache', 'n'.repeat(n), '-'.repeat(n % 13), 'c'.repeat(200 - n));
      expect(name.length).toBeLessThanOrEqual(63);
    }
  });
});

describe('childName, asked again', () => {
  it('names the same, asked twice, and after twenty thousand other names have come and gone', () => {
    // Names are remembered (and forgotten when too many); what a name is must never depend on that.
    const first = VECTORS.map(([parts]) => childName(...parts));
    for (let i = 0; i < 20_000; i++) childName('modelcache', 'ns', `cluster-${i}`);
    expect(VECTORS.map(([parts]) => childName(...parts))).toEqual(VECTORS.map(([, expected]) => expected));
    expect(first).toEqual(VECTORS.map(([, expected]) => expected));
    expect(childName('modelcache', 'ns', 'cluster-19999')).toBe(childName('modelcache', 'ns', 'cluster-19999'));
  });
});

describe('cache names', () => {
  it('are upstream names, without the cluster (each lives on its own cluster)', () => {
    expect(cacheNames('ml-team', 'qwen')).toEqual({
      pvc: 'modelcache-ml-team-qwen-17db2',
      job: 'modelcache-ml-team-qwen-hydrate-256ec',
      sizer: 'modelcache-ml-team-qwen-size-0415e',
      authSecret: 'modelcache-ml-team-qwen-auth-ae01b',
      resolver: 'modelcache-ml-team-qwen-resolve-167ed',
    });
    expect(hydrationName('ml-team', 'kimi-k2', 'us-east-a100')).toBe('modelcache-ml-team-kimi-k2-us-east-a100-e3395');
  });
});

describe('assertNamePart', () => {
  it.each(['qwen', 'a', 'cluster-a1', 'x'.repeat(63)])('accepts %s', (value) => {
    expect(assertNamePart(value, 'metadata.name')).toBe(value);
  });

  it.each(['Qwen', 'qwen_3', '-qwen', 'qwen-', '', 'x'.repeat(64), 'qwen.3', 'ünïcode'])('refuses %j, naming the field', (value) => {
    expect(() => assertNamePart(value, 'spec.clusterName')).toThrow(InputError);
    expect(() => assertNamePart(value, 'spec.clusterName')).toThrow(/^spec\.clusterName must be a DNS label/);
  });
});

describe('childName slices by code point, as Python does', () => {
  it('counts a character outside the BMP once', () => {
    const parts = ['🚀'.repeat(30), 'x'.repeat(40)];
    const name = childName(...parts);
    // 57 code points of the joined string, then "-" and the hash.
    expect(Array.from(name.slice(0, -6))).toHaveLength(30 + 1 + 26);
    expect(name.slice(-6)).toMatch(/^-[0-9a-f]{5}$/);
  });
});

describe('names unique per XR (docs/design/names.md)', () => {
  it.each<[string, string, (n: ReturnType<typeof replicaNames>) => string, string]>([
    ['ml-team', 'qwen-0', (n) => n.deployment('main'), 'qwen-0-main-4a818'],
    ['team-b', 'qwen-0', (n) => n.deployment('main'), 'qwen-0-main-d4000'],
    ['ml-team', 'qwen-0', (n) => n.claimTemplate('main', 'leader'), 'qwen-0-main-leader-devices-4ea65'],
    ['ml-team', 'qwen-0', (n) => n.pool, 'qwen-0-pool-7efa6'],
    ['ml-team', 'qwen-0', (n) => n.epp, 'qwen-0-epp-b67c2'],
    ['ml-team', 'qwen-0', (n) => n.route, 'qwen-0-a0ebc'],
    ['ml-team', 'qwen-0', (n) => n.podCliqueSet('main'), 'qwen-0-main-4a818'],
    ['ml-team', '7b-chat', (n) => n.deployment('main'), 'mr-7b-chat-main-'],
  ])('replicaNames(%s/%s)', (namespace, name, pick, want) => {
    const got = pick(replicaNames({ namespace, name }));
    if (want.endsWith('-')) expect(got.startsWith(want)).toBe(true);
    else expect(got).toBe(want);
  });

  it('two XRs whose namespace and name join alike with "-" hash apart; so do two purposes of one XR', () => {
    expect(childName('ml', 'team-qwen')).toBe(childName('ml-team', 'qwen'));
    expect(replicaNames({ namespace: 'ml', name: 'team-qwen' }).route).not.toBe(replicaNames({ namespace: 'ml-team', name: 'qwen' }).route);
    const one = replicaNames({ namespace: 'ml-team', name: 'r' });
    expect(one.deployment('epp')).not.toBe(one.epp);
    expect(one.deployment('pool')).not.toBe(one.pool);
  });

  it('every name fits its budget, whatever the parts', () => {
    for (const name of ['a', 'a'.repeat(63), `${'b'.repeat(40)}-${'c'.repeat(22)}`, '9'.repeat(63)]) {
      const n = replicaNames({ namespace: 'n'.repeat(63), name });
      for (const value of [n.deployment('e'.repeat(63)), n.claimTemplate('e'.repeat(63), 'worker'), n.pool, n.epp, n.route, n.serving]) {
        expect(value.length).toBeLessThanOrEqual(63);
        expect(value).toMatch(/^[a-z][-a-z0-9]*[a-z0-9]$/);
      }
      expect(n.podCliqueSet('e'.repeat(63)).length).toBeLessThanOrEqual(GROVE_NAME_MAX);
    }
  });

  it('upstream’s names, byte for byte (upstream v0.3.1’s goldens)', () => {
    const n = upstreamReplicaNames('qwen-0');
    expect([n.deployment('main'), n.claimTemplate('main', 'leader'), n.pool, n.epp, n.route, n.serving, n.podCliqueSet('main')]).toEqual([
      'qwen-0-main-7c37f',
      'qwen-0-main-leader-devices-08577',
      'qwen-0-pool',
      'qwen-0-epp',
      'qwen-0',
      'qwen-0',
      'qwen-0-main-7c37f',
    ]);
  });

  it('an owner annotation of its own per owner, naming it', () => {
    const a = ownerAnnotation({ kind: 'ModelReplica', namespace: 'team-a', name: 'qwen-chat-a' });
    const b = ownerAnnotation({ kind: 'ModelReplica', namespace: 'team-b', name: 'qwen-chat-a' });
    const c = ownerAnnotation({ kind: 'ModelCache', namespace: 'team-a', name: 'qwen-chat-a' });
    expect(new Set([a.key, b.key, c.key]).size).toBe(3);
    expect(a.key).toMatch(/^modelplane\.ai\/owner-[0-9a-f]{12}$/);
    expect(a.value).toBe('ModelReplica qwen-chat-a in namespace team-a');
  });
});
