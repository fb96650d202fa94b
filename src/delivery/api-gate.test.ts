import type { ServedApis, ServedResource } from '../scan/discovery.js';
import { apiGateMessage, checkServed } from './api-gate.js';
import type { Manifest, RenderedObject } from './objects.js';

const res = (kind: string, plural = `${kind.toLowerCase()}s`): ServedResource => ({
  kind,
  plural,
  namespaced: true,
  verbs: ['list'],
});
const served: ServedApis = {
  gitVersion: 'v1.36.3',
  groupVersions: new Map([
    ['v1', [res('ConfigMap'), res('Namespace')]],
    ['networking.k8s.io/v1', [res('Ingress'), res('NetworkPolicy')]],
    ['apps/v1', [res('Deployment')]],
    ['policy/v1', [res('PodDisruptionBudget')]],
  ]),
};

let line = 0;
const at = (object: Record<string, unknown>, file = 'deploy/app.yaml'): RenderedObject => ({
  object: { metadata: { name: 'x' }, ...object } as unknown as Manifest,
  origin: { file, line: ++line, col: 1, docIndex: 0 },
});

describe('checkServed', () => {
  it('GIVEN only served objects THEN nothing is refused', () => {
    expect(
      checkServed(
        [at({ apiVersion: 'v1', kind: 'ConfigMap' }), at({ apiVersion: 'apps/v1', kind: 'Deployment' })],
        served,
      ),
    ).toEqual([]);
  });

  it('GIVEN an extensions/v1beta1 Ingress THEN it is refused with the replacement the cluster serves', () => {
    line = 0;
    const out = checkServed(
      [
        at({ apiVersion: 'v1', kind: 'ConfigMap' }),
        at(
          { apiVersion: 'extensions/v1beta1', kind: 'Ingress', metadata: { name: 'web' } },
          'deploy/ingress.yaml',
        ),
      ],
      served,
      served.gitVersion,
    );
    expect(out).toEqual([
      {
        where: 'deploy/ingress.yaml:2:1',
        file: 'deploy/ingress.yaml',
        apiVersion: 'extensions/v1beta1',
        kind: 'Ingress',
        name: 'web',
        replacement: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress' },
        servedVersions: [],
      },
    ]);
  });

  it('GIVEN a kind served at another version but unknown to the table THEN refused, naming the served version', () => {
    const out = checkServed([at({ apiVersion: 'apps/v2', kind: 'Deployment' })], served);
    expect(out[0]).toMatchObject({
      replacement: { apiVersion: 'apps/v1', kind: 'Deployment' },
      servedVersions: ['apps/v1'],
    });
  });

  it('GIVEN policy/v1 on a 1.20 cluster that serves only policy/v1beta1 THEN refused as not served yet, pointing at v1beta1', () => {
    const old: ServedApis = {
      gitVersion: 'v1.20.15',
      groupVersions: new Map([['policy/v1beta1', [res('PodDisruptionBudget')]]]),
    };
    const out = checkServed(
      [at({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' })],
      old,
      old.gitVersion,
    );
    expect(out[0]).toMatchObject({
      apiVersion: 'policy/v1',
      replacement: { apiVersion: 'policy/v1beta1', kind: 'PodDisruptionBudget' },
    });
  });

  it('GIVEN a PodSecurityPolicy (no replacement) THEN refused with none', () => {
    const out = checkServed(
      [at({ apiVersion: 'policy/v1beta1', kind: 'PodSecurityPolicy' })],
      served,
      'v1.36.3',
    );
    expect(out[0]?.replacement).toBeNull();
  });

  it("GIVEN a custom resource whose CRD is in the render, or unknown everywhere THEN not the gate's business", () => {
    const crd = at({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      spec: { group: 'example.com', names: { kind: 'Widget' }, versions: [{ name: 'v1' }] },
    });
    const served2: ServedApis = {
      groupVersions: new Map([
        ...served.groupVersions,
        ['apiextensions.k8s.io/v1', [res('CustomResourceDefinition')]],
      ]),
    };
    expect(checkServed([crd, at({ apiVersion: 'example.com/v1', kind: 'Widget' })], served2)).toEqual([]);
    expect(checkServed([at({ apiVersion: 'other.example.com/v1', kind: 'Gadget' })], served2)).toEqual([]);
  });
});

describe('apiGateMessage', () => {
  it('GIVEN one refused object THEN file:line, kind, name, apiVersion, the replacement and the fix command for the cluster version', () => {
    line = 0;
    const out = checkServed(
      [
        at(
          { apiVersion: 'extensions/v1beta1', kind: 'Ingress', metadata: { name: 'web' } },
          'deploy/ingress.yaml',
        ),
      ],
      served,
      'v1.36.3',
    );
    expect(apiGateMessage(out, 'v1.36.3')).toBe(
      'API versions not served, nothing applied to this cluster: deploy/ingress.yaml:1:1: Ingress web uses extensions/v1beta1, not served by this cluster (v1.36.3); use networking.k8s.io/v1; fix with: sluice fix deploy/ingress.yaml --target-version 1.36',
    );
  });
  it('GIVEN five refused objects in four files THEN three listed, a count, two fix commands and a count of files', () => {
    const many = [1, 2, 3, 4, 5].map((i) =>
      at({ apiVersion: 'batch/v1beta1', kind: 'CronJob' }, `f${Math.min(i, 4)}.yaml`),
    );
    const msg = apiGateMessage(checkServed(many, served, 'v1.36.0'), 'v1.36.0');
    expect(msg).toContain('; and 2 more;');
    expect(msg).toContain(
      'fix with: sluice fix f1.yaml --target-version 1.36; sluice fix f2.yaml --target-version 1.36 (and 2 more files)',
    );
  });
});
