/**
 * bench/scan — `sluice scan` throughput on a generated tree of manifest files.
 *
 *   make bench-scan      (or: npx tsx bench/scan.ts; FILES=5000 by default)
 *
 * Generates FILES files in a temporary directory, 50 per sub-directory: a mix of kinds (GA
 * Deployments, Services and ConfigMaps; old Ingresses, CronJobs, PDBs, HPAs and CRDs; some
 * multi-document files, some JSON, some Lists), then times one `scanPaths` over the tree at
 * target 1.29 (what `sluice scan DIR` does, minus printing). Prints one JSON line, then one
 * human line. No cluster, no helm.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanPaths } from '../src/scan/scan.js';

const FILES = Number(process.env.FILES ?? 5000);
const TARGET = '1.29';

const kinds: readonly ((i: number) => string)[] = [
  (i) =>
    `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web-${i}\nspec:\n  selector:\n    matchLabels: { app: web-${i} }\n  template:\n    metadata:\n      labels: { app: web-${i} }\n    spec:\n      containers:\n        - name: web\n          image: nginx:1.27\n          ports: [{ containerPort: 80 }]\n`,
  (i) =>
    `apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-${i}\nspec:\n  selector: { app: web-${i} }\n  ports: [{ port: 80, targetPort: 80 }]\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg-${i}\ndata:\n  key: "value ${i}"\n`,
  (i) =>
    `apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: ing-${i}\nspec:\n  rules:\n    - host: h${i}.example.com\n      http:\n        paths:\n          - path: /\n            backend: { serviceName: svc-${i}, servicePort: 80 }\n`,
  (i) =>
    `apiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n  name: cron-${i}\nspec:\n  schedule: "*/5 * * * *"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: OnFailure\n          containers: [{ name: c, image: busybox }]\n`,
  (i) =>
    JSON.stringify(
      {
        apiVersion: 'autoscaling/v2beta2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: `hpa-${i}` },
        spec: {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: `web-${i}` },
          maxReplicas: 5,
        },
      },
      null,
      2,
    ),
  (i) =>
    `apiVersion: v1\nkind: List\nitems:\n  - apiVersion: policy/v1beta1\n    kind: PodDisruptionBudget\n    metadata: { name: pdb-${i} }\n    spec: { minAvailable: 1, selector: { matchLabels: { app: web-${i} } } }\n  - apiVersion: policy/v1\n    kind: PodDisruptionBudget\n    metadata: { name: pdb2-${i} }\n    spec: { minAvailable: 1, selector: { matchLabels: { app: web-${i} } } }\n`,
  (i) =>
    `apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets${i}.example.com\nspec:\n  group: example.com\n  version: v1\n  scope: Namespaced\n  names: { kind: Widget${i}, plural: widgets${i} }\n  validation:\n    openAPIV3Schema:\n      type: object\n      properties:\n        spec: { type: object, properties: { size: { type: integer } } }\n`,
  (i) =>
    `apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: reader-${i}\nrules:\n  - apiGroups: [""]\n    resources: [configmaps]\n    verbs: [get, list, watch]\n`,
];

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'sluice-bench-scan-'));
  try {
    for (let i = 0; i < FILES; i += 1) {
      const dir = join(root, `team-${Math.floor(i / 50)}`);
      if (i % 50 === 0) await mkdir(dir, { recursive: true });
      const make = kinds[i % kinds.length]!;
      const ext = i % kinds.length === 4 ? 'json' : 'yaml';
      await writeFile(join(dir, `m-${i}.${ext}`), make(i));
    }
    const start = process.hrtime.bigint();
    const report = await scanPaths([root], { targetVersion: TARGET });
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    if (report.notices.some((n) => n.level === 'error')) {
      throw new Error(`scan reported errors: ${JSON.stringify(report.notices.slice(0, 3))}`);
    }
    const result = {
      bench: 'scan',
      files: FILES,
      objects: report.scanned,
      findings: report.findings.length,
      target: TARGET,
      seconds: Math.round(seconds * 1000) / 1000,
      filesPerSecond: Math.round(FILES / seconds),
    };
    process.stdout.write(JSON.stringify(result) + '\n');
    process.stdout.write(
      `scan: ${FILES} files (${report.scanned} objects, ${report.findings.length} findings at ${TARGET}) in ${result.seconds} s = ${result.filesPerSecond} files/s\n`,
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench/scan: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
