// The settings library: defaults, overrides, the workload namespace rule and
// where a cache or a replica is placed when the setting and what exists differ.

import { describe, expect, it } from 'vitest';
import {
  childName,
  HYDRATION_IMAGE,
  InputError,
  SETTINGS_API_VERSION,
  WORKLOAD_NAMESPACE_ENV,
  defaultClusterSettings,
  mountNamespace,
  parseHydrationSettings,
  parseReplicaSettings,
  placement,
  settingsFor,
  workloadNamespace,
} from '#lib';

const hydration = (fields: object) => ({ apiVersion: SETTINGS_API_VERSION, kind: 'HydrationSettings', ...fields });

describe('parsing', () => {
  it.each([undefined, null, {}])('no input (%s) is today', (input) => {
    const settings = parseHydrationSettings(input);
    expect(settings.workloadNamespace).toBe('Shared');
    expect(settingsFor(settings, {})).toEqual(defaultClusterSettings());
    expect(defaultClusterSettings().images.hydration).toBe(HYDRATION_IMAGE);
    expect(parseReplicaSettings(input)).toEqual({ workloadNamespace: 'Shared' });
  });

  it('refuses the other function’s kind, naming input.kind', () => {
    expect(() => parseReplicaSettings(hydration({}))).toThrow(
      new InputError('input.kind', 'must be ReplicaSettings (got "HydrationSettings")'),
    );
    expect(parseReplicaSettings({ apiVersion: SETTINGS_API_VERSION, kind: 'ReplicaSettings', workloadNamespace: 'PerTeam' })).toEqual({
      workloadNamespace: 'PerTeam',
    });
  });

  it('accepts URLs with ports and paths, refuses what a shell or a reader could misread', () => {
    const ok = ['http://proxy:3128', 'https://hf-mirror.corp.example/api/', 'http://10.0.0.1:8080', 'https://[fd00::1]:443'];
    for (const url of ok) expect(() => parseHydrationSettings(hydration({ network: { httpsProxy: url } })), url).not.toThrow();
    const bad = [
      'proxy:3128',
      'ftp://p',
      'http://',
      "http://p'x",
      'http://p/$(id)',
      'http://p/`id`',
      'http://p /x',
      'http://u:p@p',
      'http://u@p',
    ];
    for (const url of bad) expect(() => parseHydrationSettings(hydration({ network: { httpsProxy: url } })), url).toThrow(InputError);
  });
});

describe('per-cluster overrides', () => {
  const settings = parseHydrationSettings(
    hydration({
      // A plain Python image of the platform's own: the script inline, pip on unless an override says otherwise.
      images: { hydration: 'python:3.11-slim', pullSecrets: ['fleet'] },
      jobs: { nodeSelector: { pool: 'a' }, backoffLimit: 1 },
      clusters: [
        { clusterSelector: { matchLabels: { region: 'eu' } }, images: { pullSecrets: ['eu'] }, jobs: { nodeSelector: { pool: 'eu' } } },
        { clusterSelector: { matchExpressions: [{ key: 'air-gapped', operator: 'Exists' }] }, install: { pip: false } },
      ],
    }),
  );

  it.each([
    [{}, ['fleet'], { pool: 'a' }, true],
    [{ region: 'eu' }, ['eu'], { pool: 'eu' }, true],
    [{ region: 'eu', 'air-gapped': '' }, ['eu'], { pool: 'eu' }, false],
    [{ 'air-gapped': 'yes' }, ['fleet'], { pool: 'a' }, false],
  ])('labels %j', (labels, pullSecrets, nodeSelector, pip) => {
    const s = settingsFor(settings, labels);
    expect(s.images.pullSecrets).toEqual(pullSecrets);
    expect(s.jobs.nodeSelector).toEqual(nodeSelector);
    // A field no override sets keeps the top level's.
    expect(s.jobs.backoffLimit).toBe(1);
    expect(s.install.pip).toBe(pip);
  });

  it.each<[string, object, { image: string; pip: boolean; script: string }]>([
    [
      'no input: the Modelplane image, its own script, no pip',
      {},
      { image: 'xpkg.upbound.io/modelplane/hydration:v0.1.0', pip: false, script: 'Image' },
    ],
    [
      'an image of your own: plain Python, the script inline, pip',
      { images: { hydration: 'reg.io/py:3' } },
      { image: 'reg.io/py:3', pip: true, script: 'Inline' },
    ],
    [
      'an image of your own with huggingface_hub in it',
      { images: { hydration: 'reg.io/hub:1' }, install: { pip: false } },
      { image: 'reg.io/hub:1', pip: false, script: 'Inline' },
    ],
    [
      'a mirrored copy of the Modelplane image',
      { images: { hydration: 'mirror.corp/modelplane/hydration:v0.1.0' }, install: { script: 'Image' } },
      { image: 'mirror.corp/modelplane/hydration:v0.1.0', pip: true, script: 'Image' },
    ],
    [
      'pip from an index, no image named: the stock Python image, not an index silently unused',
      { install: { indexUrl: 'https://pypi.corp.example/simple' } },
      { image: 'python:3.11-slim', pip: true, script: 'Inline' },
    ],
    ['pip asked for, no image named', { install: { pip: true } }, { image: 'python:3.11-slim', pip: true, script: 'Inline' }],
  ])('the hydration image and its script: %s', (_name, input, expected) => {
    const s = settingsFor(parseHydrationSettings(hydration(input)), {});
    expect({ image: s.images.hydration, pip: s.install.pip, script: s.install.script }).toEqual(expected);
  });

  it('never lets one cluster’s result change another’s (each call starts from the defaults)', () => {
    settingsFor(settings, { region: 'eu' }).images.pullSecrets.push('leak');
    expect(settingsFor(settings, {}).images.pullSecrets).toEqual(['fleet']);
    expect(defaultClusterSettings().images.pullSecrets).toEqual([]);
  });
});

describe('the workload namespace', () => {
  it('is default when shared, childName("mp", ns) per team, childName("mp", "cluster", cluster) per cluster', () => {
    expect(workloadNamespace('Shared', 'ml-team', 'us-east')).toBe('default');
    expect(workloadNamespace('PerTeam', 'ml-team', 'us-east')).toBe('mp-ml-team-51733');
    expect(workloadNamespace('PerCluster', 'ml-team', 'us-east')).toBe(childName('mp', 'cluster', 'us-east'));
    expect(workloadNamespace('PerCluster', 'other-team', 'us-east')).toBe(workloadNamespace('PerCluster', 'ml-team', 'us-east'));
    expect(workloadNamespace('PerCluster', 'ml-team', 'ml-team')).not.toBe(workloadNamespace('PerTeam', 'ml-team', 'x'));
  });

  it.each([
    ['nothing exists', 'PerTeam', {}, { namespace: 'mp-ml-team-51733' }],
    [
      'staged before the switch',
      'PerTeam',
      { staged: 'default' },
      { namespace: 'default', elsewhere: { configured: 'mp-ml-team-51733', because: 'staged' } },
    ],
    ['staged where the setting says', 'PerTeam', { staged: 'mp-ml-team-51733' }, { namespace: 'mp-ml-team-51733' }],
    [
      'staged per team, switched back',
      'Shared',
      { staged: 'mp-ml-team-51733' },
      { namespace: 'mp-ml-team-51733', elsewhere: { configured: 'default', because: 'staged' } },
    ],
    [
      'a replica follows its cache',
      'Shared',
      { cache: 'mp-ml-team-51733', staged: 'default' },
      { namespace: 'mp-ml-team-51733', elsewhere: { configured: 'default', because: 'cache' } },
    ],
    ['not a namespace we could have composed', 'PerTeam', { staged: 'Not_A_Label' }, { namespace: 'mp-ml-team-51733' }],
  ] as const)('%s', (_what, mode, found, expected) => {
    expect(placement(mode, 'ml-team', 'us-east', found)).toEqual(expected);
  });

  it('a mount names it, or is in default', () => {
    expect(mountNamespace({ env: [] })).toBe('default');
    expect(mountNamespace({ env: [{ name: WORKLOAD_NAMESPACE_ENV, value: 'mp-ml-team-51733' }] })).toBe('mp-ml-team-51733');
  });
});
