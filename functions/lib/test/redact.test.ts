// What a message may quote of a value (redact.ts): never user info, a query,
// a credential-named parameter, an Authorization-style value or a token; and a
// known secret cut out in every form a pod could print it.

import { describe, expect, it } from 'vitest';
import {
  REDACTED,
  SECRET_MARK,
  describe as describeValue,
  nearestName,
  pathKey,
  redactCredentials,
  redactMessage,
  scrubSecret,
  secretForms,
} from '#lib';

const PW = 'Hunter2xyz';

describe('redactCredentials', () => {
  const cases: [string, string][] = [
    [`http://me:${PW}@proxy:3128`, `http://${REDACTED}@proxy:3128`],
    [`https://${PW}@hf.example.com`, `https://${REDACTED}@hf.example.com`],
    [`ftp://me:${PW}@host/x`, `ftp://${REDACTED}@host/x`],
    [`socks5://me:${PW}@p:1080`, `socks5://${REDACTED}@p:1080`],
    [`me:${PW}@proxy:3128`, `${REDACTED}@proxy:3128`],
    [`http://me:${PW} x@host`, `http://${REDACTED}@host`],
    [`http://me:a@${PW}@host`, `http://${REDACTED}@host`],
    [`http://me:${PW}/x@host/path`, `http://${REDACTED}@host/path`],
    [`http://me:${PW}@`, `http://${REDACTED}@`],
    [`https://hf.example.com/?token=${PW}`, `https://hf.example.com/?${REDACTED}`],
    [`https://hf.example.com/x#${PW}`, `https://hf.example.com/x#${REDACTED}`],
    [`Authorization: Bearer ${PW}`, `Authorization: ${REDACTED}`],
    [`Bearer ${PW}`, `Bearer ${REDACTED}`],
    [`password=${PW}`, `password=${REDACTED}`],
    [`img:1 --password ${PW}`, `img:1 --password ${REDACTED}`],
    [`--hf-token=${PW}`, `--hf-token=${REDACTED}`],
    ['hf_abcdefghijklmnopqrstuvwxyz0123', REDACTED],
    // What is no credential is left as it is.
    ['http://proxy.example.com:3128', 'http://proxy.example.com:3128'],
    [`registry.example.com:5000/team/img@sha256:${'a'.repeat(64)}`, `registry.example.com:5000/team/img@sha256:${'a'.repeat(64)}`],
    ['.svc,10.0.0.0/8', '.svc,10.0.0.0/8'],
    ['Python 3.11', 'Python 3.11'],
  ];
  it.each(cases)('%s → %s', (value, expected) => {
    expect(redactCredentials(value)).toBe(expected);
    expect(redactCredentials(value)).not.toContain(PW);
  });

  it('is what describe() quotes, before it cuts a value to 40 characters', () => {
    const long = `ftp://me:${PW}@${'h'.repeat(80)}.example.com`;
    expect(describeValue(long)).toBe(JSON.stringify(`ftp://${REDACTED}@${'h'.repeat(40 - 7 - REDACTED.length)}…`));
    expect(describeValue(`x y://me:${PW}@host`)).not.toContain(PW);
  });

  it('bounds and redacts a key in a field path, and keeps a plain one', () => {
    expect(pathKey('hfEndpoint')).toBe('hfEndpoint');
    expect(pathKey('node-role.corp.example/staging')).toBe('node-role.corp.example/staging');
    expect(pathKey(`http://me:${PW}@host`)).not.toContain(PW);
    expect(pathKey('x'.repeat(500)).length).toBeLessThanOrEqual(65);
  });

  it('redacts the values in a whole message word by word, keeping the rest', () => {
    expect(redactMessage(`cannot reach http://me:${PW}@proxy:3128 (Bearer ${PW})`)).toBe(
      `cannot reach http://${REDACTED}@proxy:3128 (Bearer ${REDACTED})`,
    );
    expect(redactMessage('staging Qwen/Qwen3-0.6B on cluster-a')).toBe('staging Qwen/Qwen3-0.6B on cluster-a');
  });
});

describe('secretForms and scrubSecret', () => {
  const token = 'hf_SecretTokenValue_0123456789';
  const b64 = Buffer.from(`${token}\n`).toString('base64');
  const forms: [string, string][] = [
    ['raw', token],
    ['the Secret’s base64, verbatim', b64],
    ['base64 of the value alone', Buffer.from(token).toString('base64')],
    ['unpadded', Buffer.from(token).toString('base64').replace(/=+$/, '')],
    ['URL-safe', Buffer.from(token).toString('base64url')],
    ['inside a longer base64 (Basic user:token)', Buffer.from(`user:${token}`).toString('base64')],
    ['inside a longer base64, another alignment', Buffer.from(`us:${token}`).toString('base64')],
    ['inside a longer base64, the third alignment', Buffer.from(`u:${token}`).toString('base64')],
    ['URL-encoded', encodeURIComponent(`${token}/+=`)],
    ['hex', Buffer.from(token).toString('hex')],
  ];
  it.each(forms)('cuts the token %s', (_what, printed) => {
    const scrubbed = scrubSecret(`401 for ${printed} at the hub`, secretForms(b64));
    expect(scrubbed).toContain(SECRET_MARK);
    expect(scrubbed).not.toContain(token);
    // No 8-character run of the token's base64 survives (standard or URL-safe).
    const core = Buffer.from(token).toString('base64').slice(0, 12);
    expect(scrubbed).not.toContain(core);
  });

  it('cuts nothing for a value too short to tell from ordinary text', () => {
    expect(secretForms(Buffer.from('abc').toString('base64'))).toEqual([]);
    expect(scrubSecret('abc and more', secretForms(Buffer.from('abc').toString('base64')))).toBe('abc and more');
  });
});

describe('nearestName', () => {
  const network = ['hfEndpoint', 'httpsProxy', 'httpProxy', 'noProxy', 'caBundle'];
  const cases: [string, string | undefined][] = [
    ['hfEndpiont', 'hfEndpoint'],
    ['hfendpoint', 'hfEndpoint'],
    ['httpProxi', 'httpProxy'],
    ['https_proxy', 'httpsProxy'],
    ['no_proxy', 'noProxy'],
    ['cabundle', 'caBundle'],
    ['completelyElse', undefined],
    ['', undefined],
  ];
  it.each(cases)('%s → %s', (name, expected) => {
    expect(nearestName(name, network)).toBe(expected);
  });
});
