// `sluice fix` against the real apiserver: every object the fixer rewrites out of the fixture
// corpus (CRDs, Ingresses, webhook configurations and every other fixed kind) must be accepted
// by kube-local's apiserver through a server-side dry-run apply — the apiserver's own
// validation (structural schemas, Ingress pathType, webhook sideEffects, apps/v1 selectors) is
// the judge, not our reading of it. Then the CLI is run as a user runs it: `--write`, and a
// second run must find nothing left to do.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { serverSideApply } from '../../src/kube/apply.js';
import { normalizeKubeError } from '../../src/kube/errors.js';
import { fixManifestText } from '../../src/scan/fix/file-fix.js';
import { testClient, uniqueName } from '../support/clusters.js';
import { createNamespace, deleteObject } from '../support/sluice-objects.js';

const REPO = process.cwd();
const FIXTURES = join(REPO, 'test/fixtures/fix/rewrite');
const TARGET = '1.29';
const hub = testClient('hub');
const ns = uniqueName('fix');

// Cluster-scoped kinds among the fixtures; every other kind is put in the test namespace.
const CLUSTER_SCOPED = new Set([
  'CustomResourceDefinition',
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'ClusterRole',
  'ClusterRoleBinding',
  'PriorityClass',
  'StorageClass',
  'IngressClass',
  'PriorityLevelConfiguration',
  'FlowSchema',
]);

/** Runs the `sluice` CLI from source, as a user runs the built one. */
function sluice(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(REPO, 'src/cli/main.ts'), ...args],
      { cwd: REPO, timeout: 120_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Every object the fixer rewrote, from every rewrite fixture, as the apiserver will see it. */
async function fixedObjects(): Promise<
  Array<{ file: string; obj: KubernetesObject & Record<string, unknown> }>
> {
  const out: Array<{ file: string; obj: KubernetesObject & Record<string, unknown> }> = [];
  for (const file of (await readdir(FIXTURES)).sort()) {
    const text = await readFile(join(FIXTURES, file), 'utf8');
    const fixed = fixManifestText(text, TARGET, { json: file.endsWith('.json') });
    const rewritten = new Set(
      fixed.objects.flatMap((o) =>
        o.outcome.action === 'fix' ? [`${o.outcome.object.kind}/${o.name ?? ''}`] : [],
      ),
    );
    for (const doc of parseAllDocuments(fixed.after) as Array<{ toJS(): unknown }>) {
      const value = doc.toJS() as KubernetesObject & Record<string, unknown>;
      const items =
        value.kind === 'List' ? (value.items as Array<KubernetesObject & Record<string, unknown>>) : [value];
      for (const obj of items) {
        if (rewritten.has(`${obj.kind}/${obj.metadata?.name ?? ''}`)) out.push({ file, obj });
      }
    }
  }
  return out;
}

/**
 * A server-side apply dry-run with `fieldValidation=Strict`: a field the new version does not
 * know (a leftover `serviceName`, `JSONPath`, `templateGeneration`) is an error, not a warning
 * the apiserver would otherwise only log.
 */
async function strictDryRunApply(obj: KubernetesObject): Promise<KubernetesObject> {
  try {
    return await hub.raw.request<KubernetesObject>({
      method: 'PATCH',
      path: await hub.raw.pathFor(obj, 'patch'),
      query: { fieldManager: 'sluice-fix-test', force: true, dryRun: 'All', fieldValidation: 'Strict' },
      body: obj,
      contentType: 'application/apply-patch+yaml',
    });
  } catch (err) {
    throw normalizeKubeError(err, `dry-run apply ${obj.kind} ${obj.metadata?.name}`);
  }
}

beforeAll(async () => {
  await createNamespace(hub, ns);
});

afterAll(async () => {
  await deleteObject(hub, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
});

describe('sluice fix output on a real apiserver', () => {
  it('GIVEN every rewrite fixture WHEN fixed for 1.29 THEN the apiserver accepts each fixed object (server-side dry-run)', async () => {
    const objects = await fixedObjects();
    const kinds = new Set(objects.map((o) => o.obj.kind));
    // The acceptance names these three; the corpus must keep covering them.
    for (const k of [
      'CustomResourceDefinition',
      'Ingress',
      'ValidatingWebhookConfiguration',
      'MutatingWebhookConfiguration',
    ])
      expect(kinds).toContain(k);
    expect(objects.length).toBeGreaterThanOrEqual(20);

    const rejected: string[] = [];
    for (const { file, obj } of objects) {
      const body = structuredClone(obj);
      body.metadata = {
        ...body.metadata,
        ...(CLUSTER_SCOPED.has(String(obj.kind)) ? {} : { namespace: ns }),
      };
      try {
        const applied = await strictDryRunApply(body);
        expect(applied.apiVersion).toBe(obj.apiVersion);
      } catch (err) {
        rejected.push(
          `${file}: ${obj.kind} ${obj.metadata?.name}: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
    expect(rejected).toEqual([]);
  });

  it.each([
    [
      'a v1 CRD whose schema is not structural (a property without type)',
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'nonstructurals.fixtures.sluice.dev' },
        spec: {
          group: 'fixtures.sluice.dev',
          scope: 'Namespaced',
          names: { kind: 'NonStructural', plural: 'nonstructurals' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', properties: { spec: { properties: {} } } } },
            },
          ],
        },
      },
    ],
    [
      'a v1 webhook configuration with sideEffects Unknown',
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'fixtures-unknown-side-effects' },
        webhooks: [
          {
            name: 'u.fixtures.sluice.dev',
            clientConfig: { url: 'https://u.example.com' },
            sideEffects: 'Unknown',
            admissionReviewVersions: ['v1'],
          },
        ],
      },
    ],
    [
      'a v1 DaemonSet that kept the v1beta1-only templateGeneration (strict field validation)',
      {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'kept-template-generation' },
        spec: {
          templateGeneration: 3,
          selector: { matchLabels: { app: 'a' } },
          template: {
            metadata: { labels: { app: 'a' } },
            spec: { containers: [{ name: 'a', image: 'busybox:1.36' }] },
          },
        },
      },
    ],
    [
      'a v1 Ingress path without pathType',
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name: 'no-path-type' },
        spec: {
          rules: [
            { http: { paths: [{ path: '/', backend: { service: { name: 's', port: { number: 80 } } } }] } },
          ],
        },
      },
    ],
  ])('GIVEN %s (what a fixer that guessed wrong would write) THEN the dry-run refuses it', async (_, obj) => {
    const body = obj as KubernetesObject;
    if (!CLUSTER_SCOPED.has(String(body.kind))) body.metadata = { ...body.metadata, namespace: ns };
    await expect(strictDryRunApply(body)).rejects.toThrow(
      /Invalid|invalid|Required|Unsupported|unknown field|not declared in schema/,
    );
  });

  it('GIVEN the original v1beta1 objects THEN the apiserver refuses them (the dry-run can fail)', async () => {
    const text = await readFile(join(FIXTURES, 'ingress-networking.yaml'), 'utf8');
    const obj = (parseAllDocuments(text)[0] as { toJS(): unknown }).toJS() as KubernetesObject;
    obj.metadata = { ...obj.metadata, namespace: ns };
    await expect(
      serverSideApply(hub, obj, { fieldManager: 'sluice-fix-test', dryRun: true }),
    ).rejects.toThrow();
  });
});

describe('sluice fix --write (the CLI)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sluice-fix-it-'));
    await cp(FIXTURES, join(dir, 'manifests'), { recursive: true });
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('GIVEN the fixtures WHEN dry run THEN exit 1 with FIXED lines and diffs, files untouched', async () => {
    const before = await readFile(join(dir, 'manifests/cronjob.yaml'), 'utf8');
    const r = await sluice('fix', join(dir, 'manifests'), '--target-version', TARGET);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FIXED .*cronjob\.yaml:1 CronJob nightly batch\/v1beta1 → batch\/v1/m);
    expect(r.stdout).toContain('+apiVersion: batch/v1');
    expect(await readFile(join(dir, 'manifests/cronjob.yaml'), 'utf8')).toBe(before);
  });

  it('GIVEN --write THEN exit 1 and files written; WHEN run again THEN exit 0 and no diff (idempotent)', async () => {
    const first = await sluice('fix', join(dir, 'manifests'), '--target-version', TARGET, '--write');
    expect(first.code).toBe(1);
    expect(first.stdout).toMatch(/fixed written to \d+ file\(s\)/);
    const second = await sluice('fix', join(dir, 'manifests'), '--target-version', TARGET);
    expect(second.code).toBe(0);
    expect(second.stdout).not.toContain('@@');
    expect(second.stdout).toMatch(/^0 fixed, 0 flagged/m);
  });

  it('GIVEN an OLM bundle WHEN --write THEN exit 2, refused, bundle untouched', async () => {
    const bundle = join(dir, 'bundle');
    await cp(join(REPO, 'test/fixtures/fix/flag/olm-bundle'), bundle, { recursive: true });
    const before = await readFile(join(bundle, 'manifests/crd.yaml'), 'utf8');
    const r = await sluice('fix', bundle, '--target-version', TARGET, '--write');
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('is an OLM bundle');
    expect(await readFile(join(bundle, 'manifests/crd.yaml'), 'utf8')).toBe(before);
  });
});
