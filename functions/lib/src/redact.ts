// What a message may quote of a value a person wrote or a cluster reported:
// never a credential. Two helpers, used wherever a value is quoted.
//
// - redactCredentials(text): a refused value is quoted without its user
//   info (`scheme://user:password@host`, `user:password@host`), its query
//   and fragment, a `key=value` whose key names a credential, an
//   `Authorization`-style `Bearer …`, or anything shaped like a HuggingFace
//   token. Whatever check refused the value (its scheme, a character, its
//   length, the user info itself), the quote is the same.
// - scrubSecret(text, forms) with secretForms(base64): a known secret (the
//   HuggingFace token, as a Secret's base64 `data` holds it) cut out of a
//   message in every form a pod or a tool could print it: raw, base64 (as
//   the Secret holds it, of the value alone, padded or not, URL-safe, and
//   at any alignment inside a longer base64 text), URL-encoded, hex.

import { getString } from './json.js';
import type { RunFunctionResponse } from './protocol.js';

/** What stands where a credential was. */
export const REDACTED = '<redacted>';
/** What stands where a known secret (the token) was. */
export const SECRET_MARK = '[token]';

/** `@sha256:<hex>` and the like: the "@" of a digest, not of user info. */
const DIGEST_AT = /@(?=[A-Za-z][A-Za-z0-9+._-]*:[0-9a-fA-F]{6,})/g;
const CREDENTIAL_KEY =
  /\b((?:access[_-]?)?token|password|passwd|pwd|secret|api[_-]?key|access[_-]?key|auth(?:orization)?|sig(?:nature)?|credentials?|x-amz-[a-z-]+)(\s*[=:]\s*)((?:(?:Bearer|Basic|Token|Digest|Negotiate)\s+)?(?:"[^"]*"|'[^']*'|[^\s&;,)"']+))/gi;
/** A command-line flag that carries one: --password x, --token=x, --hf-token x. */
const CREDENTIAL_FLAG = /(--?[a-z-]{0,24}?(?:password|passwd|token|secret|api-?key|auth)[a-z-]{0,24})(\s+|=)[^\s]+/gi;
const AUTH_SCHEME = /\b(Bearer|Basic|Token|Digest|Negotiate)(\s+)[^\s,;)"']+/gi;
/** A HuggingFace access token (hf_ and 34 characters), or anything close to one. */
const HF_TOKEN_SHAPE = /\bhf_[A-Za-z0-9]{20,}/g;

/** The position of the last "@" that is not a digest's, or -1. */
function lastUserinfoAt(text: string): number {
  const digest = new Set<number>();
  for (const match of text.matchAll(DIGEST_AT)) digest.add(match.index);
  for (let i = text.length - 1; i >= 0; i--) if (text[i] === '@' && !digest.has(i)) return i;
  return -1;
}

/**
 * `text` (one value: a URL, a proxy, a list of hosts, an image reference)
 * with anything that may be a credential replaced by <redacted>. A value
 * that is not one is returned as it is; one that merely looks like one loses
 * a little, which in a refusal message is the right way to be wrong.
 */
export function redactCredentials(text: string): string {
  let out = text;
  // User info: everything before the last "@" of the authority. A password may hold "@", "/", ":" or a space
  // (however wrongly), so "the authority" is taken to run to the last such "@" in the value.
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(out);
  const start = scheme ? scheme[0].length : 0;
  const rest = out.slice(start);
  const at = lastUserinfoAt(rest);
  if (at >= 0) out = `${out.slice(0, start)}${REDACTED}${rest.slice(at)}`;
  // A query or a fragment: a base URL needs neither, and either can carry a token.
  const query = out.search(/[?#]/);
  if (query >= 0 && query < out.length - 1) out = `${out.slice(0, query + 1)}${REDACTED}`;
  out = out.replace(CREDENTIAL_KEY, (_m, key: string, sep: string) => `${key}${sep}${REDACTED}`);
  out = out.replace(CREDENTIAL_FLAG, (_m, flag: string, sep: string) => `${flag}${sep}${REDACTED}`);
  out = out.replace(AUTH_SCHEME, (_m, name: string, space: string) => `${name}${space}${REDACTED}`);
  return out.replace(HF_TOKEN_SHAPE, REDACTED);
}

/**
 * A whole message (code's words, which may quote values) with what may be a
 * credential redacted: each word that holds "://" or "@" as a value
 * (redactCredentials), and the key=value, Bearer and token shapes anywhere.
 */
export function redactMessage(text: string): string {
  const words = text
    .split(/(\s+)/)
    .map((word) => (word.includes('://') || word.includes('@') ? redactCredentials(word) : word))
    .join('');
  return words
    .replace(CREDENTIAL_FLAG, (_m, flag: string, sep: string) => `${flag}${sep}${REDACTED}`)
    .replace(AUTH_SCHEME, (_m, name: string, space: string) => `${name}${space}${REDACTED}`)
    .replace(HF_TOKEN_SHAPE, REDACTED);
}

/** Longer than any value a setting or a name admits: such a value is not quoted at all, only measured. */
const MAX_QUOTED = 4096;

/**
 * A value as a message quotes it: credentials redacted, then cut to `max`
 * characters, JSON-quoted. A value longer than 4,096 characters is only
 * measured ("a value of N characters"): its head alone could end inside a
 * password whose "@" comes later.
 */
export function quoteValue(text: string, max = 40): string {
  if (text.length > MAX_QUOTED) return `a value of ${text.length} characters`;
  const safe = redactCredentials(text);
  return JSON.stringify(safe.length > max ? `${safe.slice(0, max)}…` : safe);
}

/**
 * A map key or a field name as a field path shows it: as written when it is
 * a plain name, else with credentials redacted and cut to 64 characters (a
 * key is user input like any value).
 */
export function pathKey(key: string): string {
  if (/^[A-Za-z0-9_./-]{0,64}$/.test(key)) return key;
  if (key.length > MAX_QUOTED) return `(a key of ${key.length} characters)`;
  const safe = redactCredentials(key);
  return safe.length > 64 ? `${safe.slice(0, 64)}…` : safe;
}

/** Below this, a secret's forms would match ordinary text: nothing is cut. */
const MIN_SECRET_LENGTH = 6;
/** A base64 fragment shorter than this is too common to cut. */
const MIN_FRAGMENT = 8;

/**
 * Every form in which the secret a Secret's data value (base64) holds may be
 * printed: the base64 text itself, the value raw (and trimmed: `echo` adds a
 * newline), its base64 at each of the three alignments inside a longer
 * base64 text (standard and URL-safe), URL-encoded and hex. Longest first,
 * so a longer form is cut before a shorter one inside it.
 */
export function secretForms(base64: string): string[] {
  const forms = new Set<string>();
  const value = Buffer.from(base64, 'base64');
  const raw = value.toString('utf8');
  for (const text of [raw, raw.trim()]) {
    if (text.length < MIN_SECRET_LENGTH) continue;
    const bytes = Buffer.from(text, 'utf8');
    forms.add(text);
    forms.add(encodeURIComponent(text));
    forms.add(encodeURIComponent(text).replaceAll('%20', '+'));
    forms.add(bytes.toString('hex'));
    forms.add(bytes.toString('hex').toUpperCase());
    for (let offset = 0; offset < 3; offset++) {
      const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
      // The characters that depend on the secret's bytes alone: whole groups of 3 bytes inside it.
      const first = offset === 0 ? 0 : 4;
      const whole = Math.floor((offset + bytes.length) / 3) * 4;
      const core = encoded.slice(first, whole);
      if (core.length >= MIN_FRAGMENT) {
        forms.add(core);
        forms.add(core.replaceAll('+', '-').replaceAll('/', '_'));
      }
      if (offset === 0) {
        forms.add(encoded);
        forms.add(encoded.replace(/=+$/, ''));
        forms.add(encoded.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, ''));
      }
    }
  }
  if (base64.length >= MIN_SECRET_LENGTH) forms.add(base64);
  return [...forms].filter((form) => form.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
}

/** `text` with every form of the secret cut out. */
export function scrubSecret(text: string, forms: readonly string[]): string {
  let out = text;
  for (const form of forms) if (out.includes(form)) out = out.replaceAll(form, SECRET_MARK);
  return out;
}

/** Every string in a JSON value with the secret cut out, in place; `skip` says which object keys to leave. */
function scrubValue(value: unknown, forms: readonly string[], skip: (node: Record<string, unknown>, key: string) => boolean): unknown {
  if (typeof value === 'string') return scrubSecret(value, forms);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = scrubValue(value[i], forms, skip);
    return value;
  }
  if (value !== null && typeof value === 'object') {
    const node = value as Record<string, unknown>;
    for (const key of Object.keys(node)) if (!skip(node, key)) node[key] = scrubValue(node[key], forms, skip);
  }
  return value;
}

/** The fields of a Secret manifest that hold its values. */
export const SECRET_VALUE_FIELDS: readonly string[] = ['data', 'stringData'];

/** A core Secret manifest (kind Secret, apiVersion v1). */
export function isSecretManifest(node: unknown): boolean {
  return getString(node, 'kind') === 'Secret' && getString(node, 'apiVersion') === 'v1';
}

/** A Secret manifest's data: where a token is copied on purpose (the workload Secret the Job reads). */
const secretData = (node: Record<string, unknown>, key: string): boolean => SECRET_VALUE_FIELDS.includes(key) && isSecretManifest(node);

/**
 * The response with the secret (every form of it, secretForms) cut out of
 * every result and condition message, the composite's desired status, and
 * every desired resource but the `data` of a Secret manifest: whatever a pod
 * or a cluster wrote into a report or a message, it leaves only where it was
 * put on purpose.
 */
export function scrubResponse(rsp: RunFunctionResponse, forms: readonly string[]): RunFunctionResponse {
  if (forms.length === 0) return rsp;
  for (const result of rsp.results) result.message = scrubSecret(result.message, forms);
  for (const condition of rsp.conditions) if (condition.message !== undefined) condition.message = scrubSecret(condition.message, forms);
  const none = (): boolean => false;
  if (rsp.desired?.composite?.resource) scrubValue(rsp.desired.composite.resource, forms, none);
  for (const resource of Object.values(rsp.desired?.resources ?? {}))
    if (resource.resource) scrubValue(resource.resource, forms, secretData);
  return rsp;
}
