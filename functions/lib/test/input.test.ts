import { describe, expect, it } from 'vitest';
import { InputError, array, dnsLabel, integer, object, oneOf, optional, record, string, tryParse } from '#lib';

const spec = object({
  source: oneOf(['HuggingFace', 'OCI'] as const),
  huggingFace: optional(object({ repo: string(), sizeGiB: integer({ min: 1, max: 100000 }), revision: optional(string()) })),
  names: optional(array(dnsLabel(), { maxItems: 2 })),
  labels: optional(record(string({ minLength: 0 }))),
});

describe('object parser', () => {
  it('returns typed values and drops fields it does not know', () => {
    expect(spec({ source: 'HuggingFace', huggingFace: { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 20, extra: true }, unknown: 1 }, 'spec')).toEqual(
      {
        source: 'HuggingFace',
        huggingFace: { repo: 'Qwen/Qwen3-0.6B', sizeGiB: 20 },
      },
    );
  });

  it('reads null as absent for an optional field', () => {
    expect(spec({ source: 'OCI', huggingFace: null }, 'spec')).toEqual({ source: 'OCI' });
  });

  const refusals: [string, unknown, string][] = [
    ['a missing required field', {}, 'spec.source is required'],
    ['a null required field', { source: null }, 'spec.source is required'],
    ['an unknown enum value', { source: 'S3' }, 'spec.source must be one of HuggingFace, OCI (got "S3")'],
    [
      'a number as a string',
      { source: 'OCI', huggingFace: { repo: 'r', sizeGiB: '20' } },
      'spec.huggingFace.sizeGiB must be an integer from 1 to 100000 (got "20")',
    ],
    [
      'a fraction',
      { source: 'OCI', huggingFace: { repo: 'r', sizeGiB: 20.5 } },
      'spec.huggingFace.sizeGiB must be an integer from 1 to 100000 (got 20.5)',
    ],
    ['zero', { source: 'OCI', huggingFace: { repo: 'r', sizeGiB: 0 } }, 'spec.huggingFace.sizeGiB must be an integer'],
    ['an empty string', { source: 'OCI', huggingFace: { repo: '', sizeGiB: 1 } }, 'spec.huggingFace.repo must not be empty'],
    ['a list for an object', { source: 'OCI', huggingFace: [] }, 'spec.huggingFace must be an object (got a list)'],
    ['a map for a list', { source: 'OCI', names: { a: 1 } }, 'spec.names must be a list (got an object)'],
    ['a bad list item', { source: 'OCI', names: ['ok', 'Not-OK'] }, 'spec.names[1] must be a DNS label'],
    ['too many items', { source: 'OCI', names: ['a', 'b', 'c'] }, 'spec.names must have at most 2 items (got 3)'],
    ['a bad map value', { source: 'OCI', labels: { a: 1 } }, 'spec.labels.a must be a string (got 1)'],
    ['not an object at all', 'spec', 'spec must be an object (got "spec")'],
  ];
  it.each(refusals)('refuses %s, naming the field', (_name, value, message) => {
    const result = tryParse(spec, value, 'spec');
    expect('error' in result && result.error).toBeInstanceOf(InputError);
    expect('error' in result ? result.error.message : '').toContain(message);
  });

  it('shortens a long bad value in the message', () => {
    const result = tryParse(string({ pattern: /^a$/, patternHint: 'a' }), 'b'.repeat(500), 'x');
    expect('error' in result ? result.error.message.length : 0).toBeLessThan(100);
  });
});
