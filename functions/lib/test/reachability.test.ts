// Which Object errors mean the workload cluster can't be reached
// (reachability.ts): a network failure, nothing answered; never an error the
// API server answered, however it is worded. And what a status says of it.

import { describe, expect, it } from 'vitest';
import { UNREACHABLE_ERROR_MAX, readCacheStateChecked, unreachableCause, unreachableOf, type JsonObject } from '#lib';

const GET = 'observe failed: cannot get object: Get "https://127.0.0.1:6444/api/v1/namespaces/default/persistentvolumeclaims/pvc-a"';

describe('unreachableCause', () => {
  const cases: [error: string, cause: string | undefined][] = [
    [`${GET}: dial tcp 127.0.0.1:6444: connect: connection refused`, 'connection refused'],
    [`${GET}: dial tcp 10.0.0.9:6443: connect: no route to host`, 'no route to host'],
    [`${GET}: dial tcp 10.0.0.9:6443: connect: network is unreachable`, 'no route to host'],
    [`${GET}: dial tcp 10.0.0.9:6443: i/o timeout`, 'i/o timeout'],
    [`${GET}: net/http: TLS handshake timeout`, 'TLS handshake timeout'],
    [`${GET}: context deadline exceeded`, 'timeout'],
    [`${GET}: net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)`, 'timeout'],
    [`${GET}: EOF`, 'EOF'],
    [`${GET}: unexpected EOF`, 'EOF'],
    [`${GET}: read tcp 10.0.0.1:51234->10.0.0.9:6443: read: connection reset by peer`, 'connection reset'],
    [`${GET}: dial tcp: lookup cluster-a.example.internal on 10.96.0.10:53: no such host`, 'name not resolved'],
    [`${GET}: http2: client connection lost`, 'connection lost'],
    ['connect failed: cannot create new client: dial tcp [::1]:6444: connect: cannot assign requested address', 'dial failed'],
    // The API server answered: not unreachable.
    [`${GET}: persistentvolumeclaims "pvc-a" is forbidden: User "x" cannot get resource`, undefined],
    ['observe failed: cannot get object: Unauthorized', undefined],
    ['create failed: cannot create object: the server could not find the requested resource', undefined],
    ['update failed: cannot patch object: Job.batch "x" is invalid: spec.template: Invalid value: field is immutable', undefined],
    [
      'create failed: Internal error occurred: failed calling webhook "v.kyverno.svc": failed to call webhook: Post "https://kyverno.kyverno.svc:443/validate": dial tcp 10.96.0.12:443: connect: connection refused',
      undefined,
    ],
    ['create failed: admission webhook "policy.example.com" denied the request: no EOF allowed', undefined],
    ['observe failed: Timeout: request did not complete within requested timeout - context deadline exceeded', undefined],
    ['update failed: Operation cannot be fulfilled on jobs.batch "x": the object has been modified; please apply your changes', undefined],
    ['connect failed: cannot get credentials secret: Secret "cluster-a-kubeconfig" not found', undefined],
    // Nothing of the network at all.
    ['cannot resolve references: referenced field was empty', undefined],
    ['x509: certificate signed by unknown authority', undefined],
    ['the word GEOFFREY and EOFS are not EOF-shaped', undefined],
    ['', undefined],
  ];
  it.each(cases)('%s → %s', (error, cause) => {
    expect(unreachableCause(error)).toBe(cause);
  });
});

/** An observed Object with a Synced condition. */
function object(status: 'True' | 'False', message?: string, since?: string, kind = 'Object'): JsonObject {
  const synced: JsonObject = { type: 'Synced', status, reason: status === 'True' ? 'ReconcileSuccess' : 'ReconcileError' };
  if (message !== undefined) synced['message'] = message;
  if (since !== undefined) synced['lastTransitionTime'] = since;
  return { apiVersion: 'kubernetes.m.crossplane.io/v1alpha1', kind, status: { conditions: [{ type: 'Ready', status: 'True' }, synced] } };
}

const REFUSED = `${GET}: dial tcp 127.0.0.1:6444: connect: connection refused`;

describe('unreachableOf', () => {
  it('is the earliest Synced=False of a network failure, with its error', () => {
    const objects = [
      object('False', REFUSED, '2026-12-02T05:00:09Z'),
      object('False', `${GET}: i/o timeout`, '2026-12-02T05:00:01Z'),
      object('False', 'is forbidden: no', '2026-12-01T00:00:00Z'),
      object('True', undefined, '2026-12-01T00:00:00Z'),
    ];
    expect(unreachableOf(objects)).toEqual({ since: '2026-12-02T05:00:01Z', error: `${GET}: i/o timeout` });
  });
  it('keeps the earlier time the last status said while it lasts', () => {
    expect(unreachableOf([object('False', REFUSED, '2026-12-02T05:00:09Z')], '2026-12-02T04:59:00Z')?.since).toBe('2026-12-02T04:59:00Z');
    expect(unreachableOf([object('False', REFUSED, '2026-12-02T05:00:09Z')], 'yesterday')?.since).toBe('2026-12-02T05:00:09Z');
  });
  it('is nothing when no Object reports a network failure, or only things that are not Objects do', () => {
    expect(unreachableOf([])).toBeUndefined();
    expect(unreachableOf([object('True'), object('False', 'is invalid', '2026-12-02T05:00:00Z')])).toBeUndefined();
    expect(unreachableOf([object('False', REFUSED, '2026-12-02T05:00:00Z', 'ModelCacheHydration')])).toBeUndefined();
    expect(unreachableOf([object('Unknown' as 'False', REFUSED)])).toBeUndefined();
  });
  it('without a well-formed lastTransitionTime: unreachable, since unknown', () => {
    expect(unreachableOf([object('False', REFUSED, 'not a time')])).toEqual({ error: REFUSED });
    expect(unreachableOf([object('False', REFUSED)])).toEqual({ error: REFUSED });
  });
  it('quotes the error redacted, on one line, bounded', () => {
    const error = `Get "https://root:pa55w0rd@10.0.0.9/api?token=abc":\n dial tcp: connection refused ${'y'.repeat(5000)}`;
    const quoted = unreachableOf([object('False', error, '2026-12-02T05:00:00Z')])!.error;
    expect(quoted.length).toBe(UNREACHABLE_ERROR_MAX);
    expect(quoted).not.toMatch(/pa55w0rd|token=abc|\n/);
    expect(quoted.endsWith('…')).toBe(true);
  });
});

describe('status.unreachable as read back', () => {
  it('is read when well-formed, and refused naming the field when not', () => {
    const ok = readCacheStateChecked({ phase: 'Ready', unreachable: { since: '2026-12-02T05:00:00Z', error: 'connection refused' } });
    expect([ok.state.unreachable, ok.problems]).toEqual([{ since: '2026-12-02T05:00:00Z', error: 'connection refused' }, []]);
    const bad = readCacheStateChecked({ phase: 'Ready', unreachable: { since: 'soon', error: 'x'.repeat(300) } });
    expect(bad.state.unreachable).toBeUndefined();
    expect(bad.problems.map((p) => p.field)).toEqual(['unreachable.error', 'unreachable.since']);
    expect(readCacheStateChecked({ phase: 'Ready', unreachable: 'yes' }).problems.map((p) => p.field)).toEqual(['unreachable']);
  });
});
