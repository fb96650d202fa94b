import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { createServingMaterial } from '../webhooks/certs.js';
import { clusterClient } from './clients.js';

// A real HTTPS server standing in for an apiserver's transport: it counts TLS connections.
let server: Server;
let connections = 0;
let ca = '';
let port = 0;

function kubeconfig(server: string, extra: Record<string, unknown> = {}): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, caData: Buffer.from(ca).toString('base64'), ...extra }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

beforeAll(async () => {
  const material = createServingMaterial({ dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] }, 3600_000);
  ca = material.ca.certPem;
  server = createServer({ cert: material.serving.certPem, key: material.serving.keyPem }, (req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }));
  });
  server.on('secureConnection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('shareConnections (through clusterClient)', () => {
  it('GIVEN 20 sequential API calls THEN they share one TLS connection, not one each', async () => {
    const client = clusterClient('c', kubeconfig(`https://127.0.0.1:${port}`));
    connections = 0;
    for (let i = 0; i < 20; i++) {
      const got = await client.raw.request<{ kind: string }>({ method: 'GET', path: '/api/v1/x' });
      expect(got.kind).toBe('ConfigMap');
    }
    expect(connections).toBe(1);
  });

  it('GIVEN two clusters (two kubeconfigs) THEN each has its own connection', async () => {
    const a = clusterClient('a', kubeconfig(`https://127.0.0.1:${port}`));
    const b = clusterClient('b', kubeconfig(`https://localhost:${port}`));
    connections = 0;
    await a.raw.request({ method: 'GET', path: '/api/v1/x' });
    await b.raw.request({ method: 'GET', path: '/api/v1/x' });
    await a.raw.request({ method: 'GET', path: '/api/v1/x' });
    expect(connections).toBe(2);
  });

  it('GIVEN a server whose certificate the CA did not sign THEN the call fails (verification is kept)', async () => {
    const other = createServingMaterial({ dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] }, 3600_000);
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        {
          name: 'c',
          server: `https://127.0.0.1:${port}`,
          caData: Buffer.from(other.ca.certPem).toString('base64'),
        },
      ],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const client = clusterClient('bad', kc);
    await expect(client.raw.request({ method: 'GET', path: '/api/v1/x' })).rejects.toThrow(/certificate/i);
  });

  it('GIVEN plain http without skipTLSVerify THEN it is refused as client-node refuses it', async () => {
    const client = clusterClient('plain', kubeconfig(`http://127.0.0.1:${port}`));
    await expect(client.raw.request({ method: 'GET', path: '/api/v1/x' })).rejects.toThrow(
      /HTTP protocol is not allowed/,
    );
  });
});
