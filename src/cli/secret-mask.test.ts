import type { KubernetesObject } from '@kubernetes/client-node';
import { maskSecretPair, SECRET_MASK, SECRET_MASK_AFTER, SECRET_MASK_BEFORE } from './secret-mask.js';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const secret = (fields: Record<string, unknown>, annotations?: Record<string, string>): KubernetesObject =>
  ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db', namespace: 'app', ...(annotations ? { annotations } : {}) },
    type: 'Opaque',
    ...fields,
  }) as KubernetesObject;
const dataOf = (o: KubernetesObject | undefined) =>
  (o as { data?: Record<string, string> } | undefined)?.data;

describe('maskSecretPair', () => {
  it('GIVEN a changed, an unchanged, a removed and an added key THEN *** everywhere, before/after where they differ', () => {
    const live = secret({ data: { user: b64('admin'), password: b64('old'), gone: b64('x') } });
    const desired = secret({ data: { user: b64('admin'), password: b64('new'), added: b64('y') } });
    const out = maskSecretPair(live, desired);
    expect(dataOf(out.live)).toEqual({ user: SECRET_MASK, password: SECRET_MASK_BEFORE, gone: SECRET_MASK });
    expect(dataOf(out.desired)).toEqual({
      user: SECRET_MASK,
      password: SECRET_MASK_AFTER,
      added: SECRET_MASK,
    });
    expect(JSON.stringify(out)).not.toMatch(/admin|old|new|YWRtaW4/);
  });

  it('GIVEN stringData in Git equal to the live data THEN folded into data and shown as unchanged', () => {
    const live = secret({ data: { token: b64('s3cret') } });
    const desired = secret({ stringData: { token: 's3cret' } });
    const out = maskSecretPair(live, desired);
    expect(out.desired).toEqual(secret({ data: { token: SECRET_MASK } }));
    expect(dataOf(out.live)).toEqual({ token: SECRET_MASK });
  });

  it('GIVEN stringData that changes a value THEN before/after, and stringData is gone', () => {
    const out = maskSecretPair(secret({ data: { token: b64('a') } }), secret({ stringData: { token: 'b' } }));
    expect(dataOf(out.live)).toEqual({ token: SECRET_MASK_BEFORE });
    expect(out.desired).toEqual(secret({ data: { token: SECRET_MASK_AFTER } }));
  });

  it('GIVEN a Secret only on one side (created or deleted) THEN that side masked, the other undefined', () => {
    const created = maskSecretPair(undefined, secret({ data: { k: b64('v') } }));
    expect(created.live).toBeUndefined();
    expect(dataOf(created.desired)).toEqual({ k: SECRET_MASK });
    const deleted = maskSecretPair(secret({ data: { k: b64('v') } }), undefined);
    expect(dataOf(deleted.live)).toEqual({ k: SECRET_MASK });
    expect(deleted.desired).toBeUndefined();
  });

  it('GIVEN the last-applied-configuration annotation THEN masked too (it holds the values in clear)', () => {
    const key = 'kubectl.kubernetes.io/last-applied-configuration';
    const live = secret({ data: { k: b64('v') } }, { [key]: '{"data":{"k":"dg=="}}', team: 'a' });
    const desired = secret({ data: { k: b64('w') } }, { [key]: '{"data":{"k":"dw=="}}', team: 'a' });
    const out = maskSecretPair(live, desired);
    expect(out.live?.metadata?.annotations).toEqual({ [key]: SECRET_MASK_BEFORE, team: 'a' });
    expect(out.desired?.metadata?.annotations).toEqual({ [key]: SECRET_MASK_AFTER, team: 'a' });
  });

  it('GIVEN a Secret without data THEN no data is invented', () => {
    const out = maskSecretPair(secret({}), secret({}));
    expect(out.live).toEqual(secret({}));
  });

  it('GIVEN objects that are not v1 Secrets THEN returned as they are', () => {
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      data: { k: 'v' },
    } as KubernetesObject;
    const sealed = {
      apiVersion: 'bitnami.com/v1alpha1',
      kind: 'Secret',
      metadata: { name: 's' },
    } as KubernetesObject;
    expect(maskSecretPair(cm, cm)).toEqual({ live: cm, desired: cm });
    expect(maskSecretPair(sealed, undefined).live).toBe(sealed);
  });

  it('GIVEN input THEN never mutated', () => {
    const live = secret({ data: { k: b64('v') } });
    const desired = secret({ stringData: { k: 'w' } });
    const copies = JSON.stringify([live, desired]);
    maskSecretPair(live, desired);
    expect(JSON.stringify([live, desired])).toBe(copies);
  });
});
