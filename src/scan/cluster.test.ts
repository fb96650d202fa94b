import { gzipSync } from 'node:zlib';
import { decodeHelmRelease, judgeHelmRelease, judgeLiveObject } from './cluster.js';

describe('judgeLiveObject', () => {
  it('GIVEN an object whose last-applied-configuration and a manager used old versions WHEN judged THEN one finding per old version, saying how it was found', () => {
    const obj = {
      metadata: {
        name: 'web',
        namespace: 'shop',
        annotations: {
          'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({
            apiVersion: 'networking.k8s.io/v1beta1',
            kind: 'Ingress',
          }),
        },
        managedFields: [
          {
            manager: 'kubectl-client-side-apply',
            operation: 'Update',
            apiVersion: 'networking.k8s.io/v1beta1',
          },
          { manager: 'old-operator', operation: 'Update', apiVersion: 'extensions/v1beta1' },
          { manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'networking.k8s.io/v1' },
        ],
      },
    };
    const out = judgeLiveObject(obj, 'Ingress', 'prod', '1.29');
    expect(out.map((f) => [f.apiVersion, f.status, f.location, f.detail])).toEqual([
      [
        'networking.k8s.io/v1beta1',
        'removed',
        { cluster: 'prod', namespace: 'shop', name: 'web' },
        'kubectl.kubernetes.io/last-applied-configuration (the manifest last given to kubectl apply)',
      ],
      [
        'extensions/v1beta1',
        'removed',
        { cluster: 'prod', namespace: 'shop', name: 'web' },
        'managedFields: last Update by "old-operator" used extensions/v1beta1',
      ],
    ]);
  });

  it('GIVEN an object written only through current versions, or an unparseable annotation THEN nothing', () => {
    expect(
      judgeLiveObject(
        {
          metadata: {
            name: 'x',
            annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{oops' },
            managedFields: [{ manager: 'm', apiVersion: 'networking.k8s.io/v1' }],
          },
        },
        'Ingress',
        'prod',
        '1.29',
      ),
    ).toEqual([]);
  });
});

describe('Helm releases', () => {
  const manifest = [
    '---',
    '# Source: app/templates/pdb.yaml',
    'apiVersion: policy/v1beta1',
    'kind: PodDisruptionBudget',
    'metadata:',
    '  name: app',
    '---',
    '# Source: app/templates/svc.yaml',
    'apiVersion: v1',
    'kind: Service',
    'metadata:',
    '  name: app',
  ].join('\n');
  // What the Secret's data.release holds: base64 (the Secret encoding) of Helm's base64(gzip(JSON)).
  const secretValue = (release: object, gzip = true) => {
    const json = Buffer.from(JSON.stringify(release));
    const helm = (gzip ? gzipSync(json) : json).toString('base64');
    return Buffer.from(helm).toString('base64');
  };

  it('GIVEN a stored release WHEN decoded THEN its name, namespace, revision and manifest (gzipped or not)', () => {
    const r = { name: 'app', namespace: 'shop', version: 3, manifest };
    expect(decodeHelmRelease(secretValue(r))).toEqual(r);
    expect(decodeHelmRelease(secretValue(r, false))).toEqual(r);
    expect(decodeHelmRelease('bm90IGEgcmVsZWFzZQ==')).toBeUndefined();
    expect(decodeHelmRelease(undefined)).toBeUndefined();
  });

  it('GIVEN a release manifest with a removed apiVersion WHEN judged THEN a finding naming the release and why it matters', () => {
    const out = judgeHelmRelease({ name: 'app', namespace: 'shop', version: 3, manifest }, 'prod', '1.29');
    expect(out.map((f) => [f.apiVersion, f.kind, f.name, f.location])).toEqual([
      [
        'policy/v1beta1',
        'PodDisruptionBudget',
        'app',
        { cluster: 'prod', namespace: 'shop', name: 'helm release app (revision 3)' },
      ],
    ]);
    expect(out[0]?.detail).toMatch(/helm upgrade of app fails once policy\/v1beta1 is not served/);
  });
});
