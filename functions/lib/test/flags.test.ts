import { describe, expect, it } from 'vitest';
import { FlagError, parseFlags } from '#lib';

describe('parseFlags', () => {
  it('defaults to Crossplane’s address and certificate directory', () => {
    expect(parseFlags([], {})).toEqual({
      address: '0.0.0.0:9443',
      insecure: false,
      tlsServerCertsDir: '/tls/server',
      debug: false,
      help: false,
    });
  });
  it('takes the certs dir from TLS_SERVER_CERTS_DIR, and the flag over it', () => {
    expect(parseFlags([], { TLS_SERVER_CERTS_DIR: '/env' }).tlsServerCertsDir).toBe('/env');
    expect(parseFlags(['--tls-server-certs-dir', '/flag'], { TLS_SERVER_CERTS_DIR: '/env' }).tlsServerCertsDir).toBe('/flag');
    expect(parseFlags(['--tls-certs-dir=/py'], {}).tlsServerCertsDir).toBe('/py');
  });
  it('reads every flag', () => {
    expect(parseFlags(['--address', '127.0.0.1:1234', '--insecure', '-d'], {})).toMatchObject({
      address: '127.0.0.1:1234',
      insecure: true,
      debug: true,
    });
    expect(parseFlags(['--address', '[::1]:9443'], {}).address).toBe('[::1]:9443');
  });
  it.each([['--port', '1'], ['--address', 'nowhere'], ['extra']])('refuses %j', (...argv) => {
    expect(() => parseFlags(argv, {})).toThrow(FlagError);
  });
});
