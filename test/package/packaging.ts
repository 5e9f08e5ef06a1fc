// What the package tests share: the names Crossplane gives installed
// packages, and reading every YAML document under package/.

import { existsSync, readdirSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { compareNames, getString, type JsonObject } from '#lib';
import { FUNCTION_NAMES, REPO_ROOT, type FunctionName } from '#testing';
import { readYamlStream } from '../render/yaml.js';

/** Where the Function packages are published (the Configuration's dependsOn). */
export const FUNCTION_REGISTRY = 'xpkg.upbound.io/modelplane';

/**
 * Crossplane's xpkg.ToDNSLabel: the name the package manager gives a
 * dependency, from its repository path (registry and tag dropped):
 * xpkg.upbound.io/modelplane/compose-model-cache -> modelplane-compose-model-cache.
 */
export function toDnsLabel(value: string): string {
  let out = '';
  for (let i = 0; i < value.length && i <= 62; i++) {
    const c = value[i]!;
    if (/[a-z0-9]/.test(c)) out += c;
    if ('./:-'.includes(c) && i !== 0 && i !== 62 && i !== value.length - 1) out += '-';
  }
  return out.replace(/^-+|-+$/g, '');
}

/** The repository part of a package reference: no registry host, no tag or digest. */
export function repositoryOf(reference: string): string {
  const withoutDigest = reference.split('@')[0]!;
  const lastSlash = withoutDigest.lastIndexOf('/');
  const lastColon = withoutDigest.lastIndexOf(':');
  const withoutTag = lastColon > lastSlash ? withoutDigest.slice(0, lastColon) : withoutDigest;
  const firstSlash = withoutTag.indexOf('/');
  const host = withoutTag.slice(0, firstSlash);
  // A first segment with a dot or a port is a registry host, as in Docker references.
  return firstSlash > 0 && /[.:]/.test(host) ? withoutTag.slice(firstSlash + 1) : withoutTag;
}

/** The name Crossplane gives an installed package. */
export function installedName(reference: string): string {
  return toDnsLabel(repositoryOf(reference));
}

/** The installed Function name of each of our functions. */
export const INSTALLED_FUNCTION_NAMES: Record<FunctionName, string> = Object.fromEntries(
  FUNCTION_NAMES.map((name) => [name, installedName(`${FUNCTION_REGISTRY}/${name}`)]),
) as Record<FunctionName, string>;

/** The XR each package/<plural>/ defines and the function that composes it (architecture.md). */
export const PACKAGE_PLURALS: Record<string, { kind: string; function: FunctionName }> = {
  modelcaches: { kind: 'ModelCache', function: 'compose-model-cache' },
  modelcachehydrations: { kind: 'ModelCacheHydration', function: 'compose-model-cache-hydration' },
  modelreplicas: { kind: 'ModelReplica', function: 'compose-model-replica' },
  // The shard level of a ModelCache's fan-out (docs/design/fleet.md), composed by the same function.
  modelcacheshards: { kind: 'ModelCacheShard', function: 'compose-model-cache' },
};

export interface PackageDocument {
  /** Relative to the repository root. */
  file: string;
  /** package/<plural>/ the file is in. */
  plural: string;
  doc: JsonObject;
}

/** The package/<plural>/ folders, in name order. */
export function packageDirs(root = REPO_ROOT): string[] {
  const dir = join(root, 'package');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => statSync(join(dir, name)).isDirectory())
    .sort(compareNames);
}

/** Every YAML document in package/, each with where it came from. */
export function packageDocuments(root = REPO_ROOT): PackageDocument[] {
  const out: PackageDocument[] = [];
  for (const plural of packageDirs(root)) {
    const dir = join(root, 'package', plural);
    for (const name of readdirSync(dir).sort(compareNames)) {
      if (!['.yaml', '.yml'].includes(extname(name))) continue;
      for (const doc of readYamlStream(join(dir, name))) out.push({ file: `package/${plural}/${name}`, plural, doc });
    }
  }
  return out;
}

export function kindOf(doc: JsonObject): string {
  return `${getString(doc, 'apiVersion') ?? '?'} ${getString(doc, 'kind') ?? '?'}`;
}
