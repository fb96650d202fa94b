/**
 * X.509 for the webhook server: a CA and a serving certificate it signs. Node 20's crypto has
 * no certificate builder, so the certificates are assembled with node-forge (pure JS, no
 * native code, no global polyfills); keys come from Node's native `generateKeyPairSync`
 * (forge's JS RSA key generation is ~10× slower).
 */
import { generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import forge from 'node-forge';

/** A certificate and its private key, PEM-encoded. */
export interface KeyPair {
  certPem: string;
  keyPem: string;
}

/** What the webhook server serves and what the apiserver must trust. */
export interface ServingMaterial {
  /** The CA that signed `serving`, PEM. */
  ca: KeyPair;
  serving: KeyPair;
  /**
   * With a previous CA: the serving certificate followed by the new CA cross-signed by the
   * previous one. A client that still trusts only the previous CA verifies it through the
   * cross-signed intermediate; one that trusts the new CA, directly — so the certificate can
   * be swapped before the apiserver has loaded the new caBundle.
   */
  servingChainPem?: string;
  notBefore: Date;
  notAfter: Date;
}

/** Hosts the serving certificate is valid for (subjectAltName): IPs and DNS names. */
export interface ServingHosts {
  dnsNames: string[];
  ipAddresses: string[];
}

function newKey(): { forgeKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey; pem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return {
    forgeKey: forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey,
    publicKey: forge.pki.publicKeyFromPem(publicKey) as forge.pki.rsa.PublicKey,
    pem: privateKey,
  };
}

function serial(): string {
  // Positive (top bit clear) 16-byte serial, as RFC 5280 asks.
  const b = randomBytes(16);
  b[0] = b[0]! & 0x7f;
  return b.toString('hex');
}

/**
 * A new CA and a serving certificate for `hosts`, both valid from `now` (minus a minute of
 * clock skew) for `validityMs`. The CA is fresh each time: rotation replaces both, and the old
 * CA stays in the caBundle while the new one propagates.
 */
export function createServingMaterial(
  hosts: ServingHosts,
  validityMs: number,
  now = new Date(),
  previousCa?: KeyPair,
): ServingMaterial {
  const notBefore = new Date(now.getTime() - 60_000);
  const notAfter = new Date(now.getTime() + validityMs);

  const caKey = newKey();
  const ca = forge.pki.createCertificate();
  ca.publicKey = caKey.publicKey;
  ca.serialNumber = serial();
  ca.validity.notBefore = notBefore;
  ca.validity.notAfter = notAfter;
  // PrintableString: Go's x509 (the apiserver) rejects a CN with characters such as '@'.
  const caName = [{ name: 'commonName', value: `sluice-webhook-ca-${Math.floor(now.getTime() / 1000)}` }];
  ca.setSubject(caName);
  ca.setIssuer(caName);
  ca.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  ca.sign(caKey.forgeKey, forge.md.sha256.create());

  const key = newKey();
  const cert = forge.pki.createCertificate();
  cert.publicKey = key.publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = notBefore;
  cert.validity.notAfter = notAfter;
  cert.setSubject([
    { name: 'commonName', value: hosts.dnsNames[0] ?? hosts.ipAddresses[0] ?? 'sluice-webhook' },
  ]);
  cert.setIssuer(caName);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      // 2 = dNSName, 7 = iPAddress (RFC 5280); the apiserver checks SANs only, never the CN.
      altNames: [
        ...hosts.dnsNames.map((value) => ({ type: 2, value })),
        ...hosts.ipAddresses.map((ip) => ({ type: 7, ip })),
      ],
    },
    { name: 'authorityKeyIdentifier', keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(caKey.forgeKey, forge.md.sha256.create());

  const servingPem = forge.pki.certificateToPem(cert);
  let servingChainPem: string | undefined;
  if (previousCa) {
    const prev = forge.pki.certificateFromPem(previousCa.certPem);
    const prevKey = forge.pki.privateKeyFromPem(previousCa.keyPem) as forge.pki.rsa.PrivateKey;
    const cross = forge.pki.createCertificate();
    cross.publicKey = caKey.publicKey;
    cross.serialNumber = serial();
    cross.validity.notBefore = notBefore;
    cross.validity.notAfter = new Date(Math.min(notAfter.getTime(), prev.validity.notAfter.getTime()));
    cross.setSubject(caName);
    cross.setIssuer(prev.subject.attributes);
    cross.setExtensions([
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      { name: 'subjectKeyIdentifier' },
      { name: 'authorityKeyIdentifier', keyIdentifier: prev.generateSubjectKeyIdentifier().getBytes() },
    ]);
    cross.sign(prevKey, forge.md.sha256.create());
    servingChainPem = servingPem + forge.pki.certificateToPem(cross);
  }

  return {
    ca: { certPem: forge.pki.certificateToPem(ca), keyPem: caKey.pem },
    serving: { certPem: servingPem, keyPem: key.pem },
    ...(servingChainPem ? { servingChainPem } : {}),
    notBefore,
    notAfter,
  };
}

/** The validity window of a PEM certificate (Node's parser; throws on a malformed PEM). */
export function certificateValidity(certPem: string): { notBefore: Date; notAfter: Date } {
  const x = new X509Certificate(certPem);
  return { notBefore: new Date(x.validFrom), notAfter: new Date(x.validTo) };
}

/** PEM blocks in `text`, in order (a caBundle may hold several CAs). */
export function pemBlocks(text: string): string[] {
  return (
    text
      .match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----\n?/g)
      ?.map((b) => b.trimEnd() + '\n') ?? []
  );
}

/** The caBundle field value: base64 of the concatenated PEMs. */
export function caBundleOf(caPems: readonly string[]): string {
  return Buffer.from(caPems.join('')).toString('base64');
}

/**
 * When to rotate a certificate valid from `notBefore` to `notAfter`: after two thirds of its
 * life (as kubelet and cert-manager do), so that a missed attempt leaves a third to retry in.
 */
export function rotationDue(notBefore: Date, notAfter: Date): Date {
  const life = notAfter.getTime() - notBefore.getTime();
  return new Date(notBefore.getTime() + Math.floor((life * 2) / 3));
}
