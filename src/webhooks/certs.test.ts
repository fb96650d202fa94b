import { createServer } from 'node:https';
import { connect } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { X509Certificate } from 'node:crypto';
import { caBundleOf, createServingMaterial, pemBlocks, rotationDue } from './certs.js';

const hosts = { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] };

/** Whether a TLS client trusting `ca` accepts the server presenting `cert`. */
async function verifies(cert: string, key: string, ca: string): Promise<string> {
  const server = createServer({ cert, key }, (_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  try {
    return await new Promise((resolve) => {
      const s = connect({ host: '127.0.0.1', port, ca }, () => {
        resolve('ok');
        s.end();
      });
      s.on('error', (err) => resolve(err.message));
    });
  } finally {
    server.close();
  }
}

describe('webhook certificates', () => {
  const first = createServingMaterial(hosts, 3_600_000);

  it('GIVEN a generated CA and serving certificate THEN the certificate names 127.0.0.1 and localhost and is verified by the CA only', async () => {
    const x = new X509Certificate(first.serving.certPem);
    expect(x.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1');
    expect(x.checkIssued(new X509Certificate(first.ca.certPem))).toBe(true);
    expect(await verifies(first.serving.certPem, first.serving.keyPem, first.ca.certPem)).toBe('ok');
    const other = createServingMaterial(hosts, 3_600_000);
    expect(await verifies(first.serving.certPem, first.serving.keyPem, other.ca.certPem)).toMatch(
      /self.signed|unable to (get|verify)/i,
    );
  });

  it('GIVEN a rotation WHEN the new certificate is served with its cross-signed chain THEN clients trusting the old CA or the new one both accept it', async () => {
    const next = createServingMaterial(hosts, 3_600_000, new Date(), first.ca);
    expect(pemBlocks(next.servingChainPem!)).toHaveLength(2);
    expect(await verifies(next.servingChainPem!, next.serving.keyPem, first.ca.certPem)).toBe('ok');
    expect(await verifies(next.servingChainPem!, next.serving.keyPem, next.ca.certPem)).toBe('ok');
    // Without the chain, a client that has only the old CA refuses it: the chain is what makes the swap safe.
    expect(await verifies(next.serving.certPem, next.serving.keyPem, first.ca.certPem)).not.toBe('ok');
  });

  it('GIVEN two CAs THEN the caBundle holds both PEMs, and rotation is due after two thirds of the lifetime', () => {
    const bundle = Buffer.from(caBundleOf([first.ca.certPem, first.ca.certPem]), 'base64').toString();
    expect(pemBlocks(bundle)).toHaveLength(2);
    expect(rotationDue(new Date(0), new Date(3000)).getTime()).toBe(2000);
  });
});
