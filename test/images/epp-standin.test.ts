// The endpoint picker stand-in (images/epp/epp_standin.py), run as its image
// runs it: with the flags the replica's routing composes, it says which pool
// it was given, accepts connections on the gRPC and health ports (what makes
// its Service's endpoint real), and ends cleanly on SIGTERM as a pod's
// container is stopped.

import { spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/server.js';

const SCRIPT = join(REPO_ROOT, 'images', 'epp', 'epp_standin.py');

/** A port free now (the kernel's pick, released at once). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        resolve(typeof address === 'object' && address ? address.port : 0);
      });
    });
  });
}

/** Whether a TCP connection to the port is accepted, trying for up to 10 s while the script starts. */
async function accepts(port: number): Promise<boolean> {
  for (let tries = 0; tries < 100; tries++) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => {
        resolve(false);
      });
    });
    if (ok) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

describe('the endpoint picker stand-in', () => {
  it('takes the EPP’s flags, listens on its two ports, and stops on SIGTERM', async () => {
    const [grpc, health] = [await freePort(), await freePort()];
    const child = spawn('python3', [
      SCRIPT,
      '--pool-name=qwen-chat-7d2e4-pool',
      '--pool-namespace=default',
      '--pool-group=inference.networking.k8s.io',
      '--config-file=/config/epp.yaml',
      `--grpc-port=${grpc}`,
      `--grpc-health-port=${health}`,
    ]);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => {
        resolve(code);
      }),
    );
    try {
      expect(await accepts(grpc), 'the gRPC port').toBe(true);
      expect(await accepts(health), 'the health port').toBe(true);
      expect(stderr).toContain(`pool default/qwen-chat-7d2e4-pool, config /config/epp.yaml; listening on :${grpc} and :${health}`);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
