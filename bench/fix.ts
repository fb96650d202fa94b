/**
 * bench/fix — the removed-API fixer on 1,000 generated `apiextensions.k8s.io/v1beta1` CRDs.
 *
 *   make bench-fix      (or: npx tsx bench/fix.ts; CRDS=5000 for another size)
 *
 * The CRDs are written to a temporary directory (one file each, as a repository of operators
 * would hold them) with varied shapes: 1–3 versions or the old single `version`, schemas 2–4
 * levels deep with 3–12 properties per object, untyped nodes to repair, int-or-string
 * `anyOf`s, string enums, `uniqueItems`, printer columns with `JSONPath`, subresources, and
 * conversion webhooks; a third carry comments. The figure is `sluice fix DIR --target-version
 * 1.29` end to end as a dry run — read, parse, rewrite, re-print with comments kept, and the
 * unified diff — on one core; every CRD must come out FIXED (none flagged) or the bench fails.
 *
 * Prints one JSON line, then one human line.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { formatFixReport, runFix } from '../src/scan/fix/fixer.js';

const CRDS = Number(process.env.CRDS ?? 1000);
const TARGET = '1.29';

/** A small deterministic PRNG (mulberry32), so every run fixes the same corpus. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function schema(rand: () => number, depth: number): Record<string, unknown> {
  const n = 3 + Math.floor(rand() * 10);
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) {
    const pick = rand();
    const name = `field${i}`;
    if (depth > 0 && pick < 0.2)
      properties[name] = { properties: schema(rand, depth - 1).properties }; // untyped object
    else if (depth > 0 && pick < 0.3) properties[name] = { type: 'array', items: schema(rand, depth - 1) };
    else if (pick < 0.4) properties[name] = { anyOf: [{ type: 'integer' }, { type: 'string' }] };
    else if (pick < 0.5) properties[name] = { enum: ['a', 'b', 'c'] };
    else if (pick < 0.55) properties[name] = { type: 'array', uniqueItems: true, items: { type: 'string' } };
    else if (pick < 0.75) properties[name] = { type: 'string', description: `the ${name}` };
    else if (pick < 0.9) properties[name] = { type: 'integer', minimum: 0 };
    else properties[name] = { type: 'boolean' };
  }
  return { type: 'object', properties };
}

function crd(i: number): string {
  const rand = rng(i + 1);
  const plural = `things${i}`;
  const group = `bench${i % 50}.example.com`;
  const openAPIV3Schema = {
    properties: { spec: schema(rand, 1 + Math.floor(rand() * 3)), status: schema(rand, 1) },
  };
  const columns = [
    { name: 'Phase', type: 'string', JSONPath: '.status.field0' },
    { name: 'Age', type: 'date', JSONPath: '.metadata.creationTimestamp' },
  ];
  const spec: Record<string, unknown> = {
    group,
    names: { kind: `Thing${i}`, plural, singular: `thing${i}` },
    ...(rand() < 0.5 ? { scope: rand() < 0.5 ? 'Namespaced' : 'Cluster' } : {}),
    preserveUnknownFields: false,
  };
  const versionCount = 1 + Math.floor(rand() * 3);
  if (versionCount === 1 && rand() < 0.5) spec.version = 'v1';
  else {
    spec.versions = Array.from({ length: versionCount }, (_, v) => ({
      name: `v${versionCount - v}`,
      served: true,
      storage: v === 0,
    }));
  }
  spec.validation = { openAPIV3Schema };
  if (rand() < 0.7)
    spec.subresources = {
      status: {},
      ...(rand() < 0.3
        ? { scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } }
        : {}),
    };
  if (rand() < 0.6) spec.additionalPrinterColumns = columns;
  if (versionCount > 1 && rand() < 0.5) {
    spec.conversion = {
      strategy: 'Webhook',
      webhookClientConfig: {
        service: { namespace: 'system', name: 'webhook', path: '/convert' },
        caBundle: 'Cg==',
      },
    };
  }
  const doc = stringify(
    {
      apiVersion: 'apiextensions.k8s.io/v1beta1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${plural}.${group}` },
      spec,
    },
    { lineWidth: 0 },
  );
  return i % 3 === 0 ? `# generated for the fixer bench, CRD ${i}\n${doc}` : doc;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-bench-fix-'));
  try {
    for (let i = 0; i < CRDS; i++)
      await writeFile(join(dir, `crd-${String(i).padStart(5, '0')}.yaml`), crd(i));
    const cpuStart = process.cpuUsage();
    const start = process.hrtime.bigint();
    const report = await runFix([dir], TARGET, false);
    const rewritten = process.hrtime.bigint();
    const text = formatFixReport(report);
    const end = process.hrtime.bigint();
    const seconds = Number(end - start) / 1e9;
    const cpu = process.cpuUsage(cpuStart);
    // The machine is shared: CPU seconds say what the fixer itself cost.
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    const outcomes = report.files.flatMap((f) => f.objects.map((o) => o.outcome.action));
    const fixed = outcomes.filter((a) => a === 'fix').length;
    if (fixed !== CRDS) {
      const flags = text
        .split('\n')
        .filter((l) => l.startsWith('FLAG'))
        .slice(0, 5);
      throw new Error(`expected ${CRDS} CRDs fixed, got ${fixed}:\n${flags.join('\n')}`);
    }
    const diffLines = text.split('\n').filter((l) => l.startsWith('+') || l.startsWith('-')).length;
    const result = {
      bench: 'fix',
      crds: CRDS,
      seconds: Number(seconds.toFixed(3)),
      crdsPerSecond: Math.round(CRDS / seconds),
      cpuSeconds: Number(cpuSeconds.toFixed(3)),
      // Wall time of the two halves: read + parse + rewrite + re-print, then the unified diffs.
      rewriteSeconds: Number((Number(rewritten - start) / 1e9).toFixed(3)),
      diffSeconds: Number((Number(end - rewritten) / 1e9).toFixed(3)),
    };
    console.log(JSON.stringify(result));
    console.log(
      `fixer: ${CRDS} v1beta1 CRDs → v1 in ${seconds.toFixed(2)} s wall, ${cpuSeconds.toFixed(2)} s CPU (${result.crdsPerSecond} CRDs/s; dry run with diffs: ${diffLines} changed lines)`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
