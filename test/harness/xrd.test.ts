// The XRD validator the package tests rely on must itself refuse what the API
// server refuses; otherwise every CEL test built on it could pass vacuously.

import { describe, expect, it } from 'vitest';
import { celRules, validateXr, type Xrd } from '#testing';

const xrd: Xrd = {
  kind: 'CompositeResourceDefinition',
  metadata: { name: 'things.example.org' },
  spec: {
    group: 'example.org',
    names: { kind: 'Thing', plural: 'things' },
    versions: [
      {
        name: 'v1alpha1',
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['name'],
                'x-kubernetes-validations': [
                  { rule: 'self.name == oldSelf.name', message: 'name is immutable' },
                  { rule: "self.mode != 'Pair' || size(self.items) == 2", message: 'Pair needs two items' },
                ],
                properties: {
                  name: { type: 'string', minLength: 1 },
                  mode: { type: 'string', enum: ['One', 'Pair'], default: 'One' },
                  copies: { type: 'integer', minimum: 1, 'x-kubernetes-validations': [{ rule: 'self <= 8', message: 'at most 8' }] },
                  items: { type: 'array', maxItems: 3, items: { type: 'string', pattern: '^[a-z]+$' } },
                },
              },
            },
          },
        },
      },
    ],
  },
};

describe('validateXr', () => {
  it('admits a valid object, applying defaults before the rules', () => {
    expect(validateXr(xrd, { spec: { name: 'a', items: ['x'] } })).toEqual([]);
  });
  it('refuses by structure: required, enum, bounds, pattern, type', () => {
    const problems = validateXr(xrd, { spec: { mode: 'Three', copies: 0, items: ['A', 'b', 'c', 'd'] } });
    expect(problems).toContain('spec.mode: must be one of One, Pair');
    expect(problems).toContain('spec.copies: must be >= 1');
    expect(problems).toContain('spec.items: must have at most 3 items');
    expect(problems).toContain('spec.items[0]: must match ^[a-z]+$');
    expect(problems).toContain('spec.name: Required value');
    expect(validateXr(xrd, { spec: { name: 3 } })).toEqual(['spec.name: must be of type string']);
  });
  it('evaluates CEL rules with integers as CEL ints and reports their messages', () => {
    expect(validateXr(xrd, { spec: { name: 'a', copies: 9 } })).toEqual(['spec.copies: at most 8']);
    expect(validateXr(xrd, { spec: { name: 'a', mode: 'Pair', items: ['x'] } })).toEqual(['spec: Pair needs two items']);
  });
  it('applies transition rules only on update', () => {
    expect(validateXr(xrd, { spec: { name: 'b' } })).toEqual([]);
    expect(validateXr(xrd, { spec: { name: 'b' } }, { spec: { name: 'a' } })).toEqual(['spec: name is immutable']);
  });
  it('lists every rule with where it sits', () => {
    expect(celRules(xrd.spec.versions[0]!.schema.openAPIV3Schema).map((r) => r.path)).toEqual(['spec', 'spec', 'spec.copies']);
  });
});
