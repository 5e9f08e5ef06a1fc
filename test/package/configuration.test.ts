// The Configuration package: its metadata and dependencies, the Functions
// examples/functions.yaml declares for render, and every XRD and Composition
// under package/, whatever is there: each XRD has its Composition and each
// Composition its XRD, in Pipeline mode, calling Functions by the names
// Crossplane gives the installed dependencies.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { asArray, getObject, getString, getStringMap, type JsonObject } from '#lib';
import { FUNCTION_NAMES, REPO_ROOT } from '#testing';
import { readYamlObject, readYamlStream } from '../render/yaml.js';
import {
  INSTALLED_FUNCTION_NAMES,
  PACKAGE_PLURALS,
  installedName,
  kindOf,
  packageDirs,
  packageDocuments,
  toDnsLabel,
} from './packaging.js';

const configuration = readYamlObject(join(REPO_ROOT, 'crossplane.yaml'));
const packageJson = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { license: string };
const installed = Object.values(INSTALLED_FUNCTION_NAMES).sort();

/** A Masterminds semver constraint as Crossplane accepts one, e.g. ">=v1.0.0" or ">=v1.2.0, <v2.0.0". */
const CONSTRAINT =
  /^\s*(?:(?:>=|<=|>|<|=|~|\^)?\s*v?\d+(?:\.\d+){0,2}(?:-[0-9A-Za-z.-]+)?)(?:\s*,?\s*(?:>=|<=|>|<|=|~|\^)?\s*v?\d+(?:\.\d+){0,2}(?:-[0-9A-Za-z.-]+)?)*\s*$/;

interface Dependency {
  reference: string;
  kind: 'Function' | 'Provider' | 'Configuration';
  version: string;
}

/** dependsOn entries in either form: apiVersion/kind/package, or the older function:/provider:/configuration: keys. */
function dependencies(): Dependency[] {
  return asArray(getObject(configuration, 'spec')?.['dependsOn']).map((raw) => {
    const version = getString(raw, 'version') ?? '';
    const pkg = getString(raw, 'package');
    const kind = getString(raw, 'kind');
    if (pkg && (kind === 'Function' || kind === 'Provider' || kind === 'Configuration')) {
      expect(getString(raw, 'apiVersion'), `dependsOn ${pkg}`).toBe('pkg.crossplane.io/v1');
      return { reference: pkg, kind, version };
    }
    for (const legacy of ['function', 'provider', 'configuration'] as const) {
      const reference = getString(raw, legacy);
      if (reference) return { reference, kind: `${legacy[0]!.toUpperCase()}${legacy.slice(1)}` as Dependency['kind'], version };
    }
    throw new Error(`dependsOn entry names no package: ${JSON.stringify(raw)}`);
  });
}

describe('toDnsLabel (the name Crossplane gives an installed package)', () => {
  it.each<[string, string]>([
    ['xpkg.upbound.io/modelplane/compose-model-cache', 'modelplane-compose-model-cache'],
    ['xpkg.upbound.io/modelplane/compose-model-cache-hydration:v0.1.0', 'modelplane-compose-model-cache-hydration'],
    ['xpkg.upbound.io/crossplane-contrib/provider-kubernetes', 'crossplane-contrib-provider-kubernetes'],
    ['registry.example.org:5000/team/fn@sha256:abc', 'team-fn'],
  ])('%s -> %s', (reference, name) => {
    expect(installedName(reference)).toBe(name);
  });
  it('drops what is not a lower-case letter or digit, and caps at 63 characters', () => {
    expect(toDnsLabel('-Team_A/Fn.')).toBe('eam-n');
    expect(toDnsLabel('a'.repeat(80))).toHaveLength(63);
  });
});

describe('the Configuration package (crossplane.yaml)', () => {
  it('is a meta.pkg.crossplane.io/v1 Configuration with its metadata annotations', () => {
    expect(configuration['apiVersion']).toBe('meta.pkg.crossplane.io/v1');
    expect(configuration['kind']).toBe('Configuration');
    expect(getString(configuration, 'metadata', 'name')).toBe('modelplane-model-cache');
    const annotations = getStringMap(configuration, 'metadata', 'annotations');
    for (const key of ['maintainer', 'source', 'license', 'description', 'readme']) {
      expect(annotations[`meta.crossplane.io/${key}`]?.trim(), key).toBeTruthy();
    }
    expect(annotations['meta.crossplane.io/license']).toBe(packageJson.license);
  });

  it('needs Crossplane v2 (namespaced XRs, required resources)', () => {
    const constraint = getString(configuration, 'spec', 'crossplane', 'version') ?? '';
    expect(constraint).toMatch(CONSTRAINT);
    expect(constraint).toMatch(/>=\s*v?2\./);
  });

  it('depends on exactly the three Function packages and provider-kubernetes, each with a version constraint', () => {
    const deps = dependencies();
    for (const dep of deps) expect(dep.version, dep.reference).toMatch(CONSTRAINT);
    expect(
      deps
        .filter((d) => d.kind === 'Function')
        .map((d) => d.reference.split(':')[0])
        .sort(),
    ).toEqual(FUNCTION_NAMES.map((name) => `xpkg.upbound.io/modelplane/${name}`).sort());
    expect(deps.filter((d) => d.kind === 'Provider').map((d) => d.reference)).toEqual([
      'xpkg.upbound.io/crossplane-contrib/provider-kubernetes',
    ]);
    expect(deps).toHaveLength(FUNCTION_NAMES.length + 1);
  });

  it('installs the Functions under the names the Compositions reference', () => {
    const names = dependencies()
      .filter((d) => d.kind === 'Function')
      .map((d) => installedName(d.reference))
      .sort();
    expect(names).toEqual([
      'modelplane-compose-model-cache',
      'modelplane-compose-model-cache-hydration',
      'modelplane-compose-model-replica',
    ]);
    expect(names).toEqual(installed);
  });

  it('asks for a provider-kubernetes with the namespaced Object (v1.0.0 or later)', () => {
    const provider = dependencies().find((d) => d.kind === 'Provider')!;
    expect(provider.version).toMatch(/>=\s*v?([1-9]\d*)\./);
  });
});

describe('examples/functions.yaml (the Functions crossplane render runs)', () => {
  const functions = readYamlStream(join(REPO_ROOT, 'examples/functions.yaml'));

  it('declares the three installed Function names, each once', () => {
    expect(functions.map((f) => getString(f, 'metadata', 'name')).sort()).toEqual(installed);
  });

  it.each(functions.map((f) => [getString(f, 'metadata', 'name') ?? '?', f] as const))(
    '%s is a Development runtime Function whose package installs under that name',
    (name, fn) => {
      expect(kindOf(fn)).toBe('pkg.crossplane.io/v1 Function');
      const annotations = getStringMap(fn, 'metadata', 'annotations');
      expect(annotations['render.crossplane.io/runtime']).toBe('Development');
      expect(annotations['render.crossplane.io/runtime-development-target']).toMatch(/^localhost:\d+$/);
      expect(installedName(getString(fn, 'spec', 'package') ?? '')).toBe(name);
    },
  );

  it('points each Function at its own port: 9443, 9444, 9445 as `make run` serves them', () => {
    const targets = Object.fromEntries(
      functions.map((f): [string, string | undefined] => [
        getString(f, 'metadata', 'name') ?? '?',
        getStringMap(f, 'metadata', 'annotations')['render.crossplane.io/runtime-development-target'],
      ]),
    );
    expect(targets).toEqual({
      'modelplane-compose-model-cache': 'localhost:9443',
      'modelplane-compose-model-cache-hydration': 'localhost:9444',
      'modelplane-compose-model-replica': 'localhost:9445',
    });
  });
});

describe('package/: the XRDs and Compositions', () => {
  const docs = packageDocuments();
  const xrds = docs.filter((d) => getString(d.doc, 'kind') === 'CompositeResourceDefinition');
  const compositions = docs.filter((d) => getString(d.doc, 'kind') === 'Composition');
  const exampleFunctionNames = readYamlStream(join(REPO_ROOT, 'examples/functions.yaml')).map((f) => getString(f, 'metadata', 'name'));

  if (docs.length === 0) {
    it('holds none yet: these checks start as soon as package/<plural>/ has an XRD or a Composition', () => {
      expect(packageDocuments()).toEqual([]);
    });
  }

  it.each(packageDirs().map((plural) => [plural]))('package/%s/ is the folder of one of the three XRs', (plural) => {
    expect(Object.keys(PACKAGE_PLURALS)).toContain(plural);
  });

  it.each(docs.map((d) => [`${d.file}: ${kindOf(d.doc)} ${getString(d.doc, 'metadata', 'name') ?? '?'}`, d] as const))(
    '%s is an XRD or a Composition',
    (_label, d) => {
      expect(['apiextensions.crossplane.io/v2 CompositeResourceDefinition', 'apiextensions.crossplane.io/v1 Composition']).toContain(
        kindOf(d.doc),
      );
    },
  );

  /** The group/version an XRD's XRs are referenced by, and their kind. */
  function typeOf(xrd: JsonObject): { apiVersion: string; kind: string } {
    const referenceable = asArray(getObject(xrd, 'spec')?.['versions']).find((v) => getObject(v as JsonObject)?.['referenceable'] === true);
    return {
      apiVersion: `${getString(xrd, 'spec', 'group') ?? '?'}/${getString(referenceable, 'name') ?? '?'}`,
      kind: getString(xrd, 'spec', 'names', 'kind') ?? '?',
    };
  }
  function compositionsFor(type: { apiVersion: string; kind: string }): JsonObject[] {
    return compositions
      .map((c) => c.doc)
      .filter(
        (c) =>
          getString(c, 'spec', 'compositeTypeRef', 'apiVersion') === type.apiVersion &&
          getString(c, 'spec', 'compositeTypeRef', 'kind') === type.kind,
      );
  }

  it.each(xrds.map((d) => [d.file, d] as const))(
    '%s follows the package conventions and has exactly one Composition',
    (_file, { plural, doc }) => {
      const expected = PACKAGE_PLURALS[plural];
      expect(getString(doc, 'metadata', 'name')).toBe(`${plural}.modelplane.ai`);
      expect(getObject(doc, 'spec')).toMatchObject({
        group: 'modelplane.ai',
        scope: 'Namespaced',
        names: { plural, kind: expected?.kind },
      });
      expect(asArray(getObject(doc, 'spec', 'names')?.['categories'])).toEqual(expect.arrayContaining(['crossplane', 'modelplane']));
      expect(asArray(getObject(doc, 'spec')?.['versions'])).toContainEqual(
        expect.objectContaining({ name: 'v1alpha1', served: true, referenceable: true }),
      );
      const type = typeOf(doc);
      expect(type).toEqual({ apiVersion: 'modelplane.ai/v1alpha1', kind: expected?.kind });
      const found = compositionsFor(type);
      expect(
        found.map((c) => getString(c, 'metadata', 'name')),
        `Compositions for ${type.kind}`,
      ).toHaveLength(1);
      expect(getString(doc, 'spec', 'defaultCompositionRef', 'name')).toBe(getString(found[0], 'metadata', 'name'));
    },
  );

  it.each(compositions.map((d) => [d.file, d] as const))(
    "%s is a Pipeline whose one step calls its XR's Function by its installed name, for an XRD in package/",
    (_file, { plural, doc }) => {
      const expected = PACKAGE_PLURALS[plural]!;
      expect(getString(doc, 'metadata', 'name')).toBe(`${plural}.modelplane.ai`);
      expect(getString(doc, 'spec', 'mode')).toBe('Pipeline');
      const type = {
        apiVersion: getString(doc, 'spec', 'compositeTypeRef', 'apiVersion'),
        kind: getString(doc, 'spec', 'compositeTypeRef', 'kind'),
      };
      expect(type).toEqual({ apiVersion: 'modelplane.ai/v1alpha1', kind: expected.kind });
      expect(
        xrds.filter((x) => typeOf(x.doc).apiVersion === type.apiVersion && typeOf(x.doc).kind === type.kind).map((x) => x.file),
        `an XRD in package/ for ${type.kind}`,
      ).toHaveLength(1);
      const steps = asArray(getObject(doc, 'spec')?.['pipeline']);
      expect(steps).toHaveLength(1);
      const functionName = getString(steps[0], 'functionRef', 'name');
      expect(installed).toContain(functionName);
      expect(functionName).toBe(INSTALLED_FUNCTION_NAMES[expected.function]);
      expect([expected.function, functionName]).toContain(getString(steps[0], 'step'));
      expect(exampleFunctionNames).toContain(functionName);
    },
  );
});
