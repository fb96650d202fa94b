/**
 * `sluice scan` over paths: walks each path and hands each part to the reader that fits it —
 * a Helm chart (a directory with Chart.yaml), an OLM bundle (manifests/ + metadata/annotations.yaml),
 * a Kustomize directory (a kustomization file), or plain YAML/JSON files — and judges every
 * top-level object at the target version. Everything that could not be read becomes a notice;
 * nothing is skipped silently.
 */
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import type { KustomizeRunner } from '../delivery/render.js';
import { scanText, type ScannedObject } from './documents.js';
import { formatFindingLocation, judge, type Finding, type Notice, type ScanReport } from './findings.js';
import { chartName, helmTemplate, patternScanChart, templateLineOf } from './helm.js';
import { bundleCap, cappedBelow, isOlmBundle, openShiftToKube, kubeToOpenShift } from './olm.js';
import { parseKubeVersion } from './removals.js';

/** What a scan needs besides the paths. */
export interface ScanOptions {
  readonly targetVersion: string;
  /** The helm binary (see `findHelm`); undefined = charts are pattern-scanned and say so. */
  readonly helm?: string;
  /** Renders a kustomization directory; undefined = its files are scanned directly and it says so. */
  readonly kustomize?: KustomizeRunner;
  /** Files read at once. Default 32. */
  readonly concurrency?: number;
}

const MANIFEST_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);
const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];
const SKIP_DIRS = new Set(['node_modules']);

interface Acc {
  readonly opts: ScanOptions;
  readonly findings: Finding[];
  readonly notices: Notice[];
  /** Real paths of directories entered, so a symlink cycle is walked once. */
  readonly visited: Set<string>;
  scanned: number;
}

const joinPath = (a: string, b: string): string => (a === '.' ? b : `${a.replace(/\/+$/, '')}/${b}`);

/** Scans `paths` (files or directories) and returns every finding and notice, in path order. */
export async function scanPaths(paths: readonly string[], opts: ScanOptions): Promise<ScanReport> {
  parseKubeVersion(opts.targetVersion);
  const acc: Acc = { opts, findings: [], notices: [], visited: new Set(), scanned: 0 };
  for (const p of paths) await scanPath(acc, p);
  return {
    targetVersion: opts.targetVersion,
    findings: acc.findings,
    notices: acc.notices,
    scanned: acc.scanned,
  };
}

async function scanPath(acc: Acc, path: string): Promise<void> {
  let info;
  try {
    info = await stat(path);
  } catch (err) {
    acc.notices.push({ path, level: 'error', message: `cannot read: ${(err as Error).message}` });
    return;
  }
  if (info.isFile()) {
    await scanFiles(acc, [path], 'file', path);
    return;
  }
  if (info.isDirectory()) await scanDirectory(acc, path);
}

async function scanDirectory(acc: Acc, dir: string): Promise<void> {
  let names: string[];
  try {
    const real = await realpath(dir);
    if (acc.visited.has(real)) return;
    acc.visited.add(real);
    names = (await readdir(dir)).sort();
  } catch (err) {
    acc.notices.push({ path: dir, level: 'error', message: `cannot list: ${(err as Error).message}` });
    return;
  }
  if (names.includes('Chart.yaml')) return scanChart(acc, dir);
  if (await isOlmBundle(dir)) return scanBundle(acc, dir);
  const kustomization = KUSTOMIZATION_FILES.find((k) => names.includes(k));
  if (kustomization) return scanKustomization(acc, dir, joinPath(dir, kustomization));

  const files: string[] = [];
  const dirs: string[] = [];
  await Promise.all(
    names.map(async (name) => {
      if (name.startsWith('.') || SKIP_DIRS.has(name)) return;
      const full = joinPath(dir, name);
      const s = await stat(full).catch(() => undefined);
      if (!s) {
        acc.notices.push({ path: full, level: 'error', message: 'cannot stat (broken symlink?)' });
      } else if (s.isDirectory()) dirs.push(full);
      else if (s.isFile() && MANIFEST_EXTENSIONS.has(extname(name).toLowerCase())) files.push(full);
    }),
  );
  files.sort();
  dirs.sort();
  await scanFiles(acc, files, 'file');
  for (const d of dirs) await scanDirectory(acc, d);
}

/** Reads and judges plain manifest files, `concurrency` at a time, keeping their order. */
async function scanFiles(
  acc: Acc,
  files: readonly string[],
  source: 'file' | 'olm',
  fixPath?: string,
): Promise<Map<string, ScannedObject[]>> {
  const results = new Array<{ objects: ScannedObject[]; problems: Notice[] } | undefined>(files.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length) {
      const i = next++;
      const file = files[i]!;
      try {
        const { objects, problems } = scanText(await readFile(file, 'utf8'));
        results[i] = {
          objects,
          problems: problems.map((p) => ({ path: `${file}:${p.line}`, level: 'error', message: p.message })),
        };
      } catch (err) {
        results[i] = {
          objects: [],
          problems: [{ path: file, level: 'error', message: `cannot read: ${(err as Error).message}` }],
        };
      }
    }
  };
  const n = Math.max(1, Math.min(acc.opts.concurrency ?? 32, files.length));
  await Promise.all(Array.from({ length: n }, worker));
  const byFile = new Map<string, ScannedObject[]>();
  results.forEach((r, i) => {
    const file = files[i]!;
    if (!r) return;
    acc.notices.push(...r.problems);
    byFile.set(file, r.objects);
    if (source === 'olm') return; // the bundle reader judges them, after its cap.
    for (const o of r.objects) {
      acc.scanned += 1;
      const f = judge(o, acc.opts.targetVersion, {
        location: { file, line: o.line, ...(o.itemPath ? { itemPath: o.itemPath } : {}) },
        source,
        fixPath: fixPath ?? file,
      });
      if (f) acc.findings.push(f);
    }
  });
  return byFile;
}

async function listManifestFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true }).catch(() => []);
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (e.name.startsWith('.')) continue;
      const full = joinPath(d, e.name);
      if (e.isDirectory()) await walk(full);
      else if (MANIFEST_EXTENSIONS.has(extname(e.name).toLowerCase())) out.push(full);
    }
  };
  await walk(dir);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Kustomize

async function scanKustomization(acc: Acc, dir: string, kustomizationFile: string): Promise<void> {
  const { kustomize } = acc.opts;
  const sourceFiles = (await listManifestFiles(dir)).filter(
    (f) => !KUSTOMIZATION_FILES.some((k) => f.endsWith(`/${k}`)),
  );
  let why: string;
  if (kustomize) {
    try {
      const output = await kustomize(dir);
      const { objects } = scanText(output);
      const sources: SourceObject[] = [];
      for (const file of sourceFiles) {
        const text = await readFile(file, 'utf8').catch(() => '');
        for (const o of scanText(text).objects) sources.push({ ...o, file });
      }
      for (const o of objects) {
        acc.scanned += 1;
        const origin = originOf(o, sources);
        const f = judge(o, acc.opts.targetVersion, {
          location: origin ?? { file: kustomizationFile, line: 1 },
          source: 'kustomize',
          fixPath: origin?.file ?? dir,
          detail: origin
            ? `rendered by kustomize from ${dir}`
            : `rendered by kustomize from ${dir} (source file not found: generated or remote)`,
        });
        if (f) acc.findings.push(f);
      }
      return;
    } catch (err) {
      why = `kustomize build failed: ${(err as Error).message}`;
      acc.notices.push({
        path: kustomizationFile,
        level: 'error',
        message: `${why}; its files were scanned directly`,
      });
    }
  } else {
    why = 'no kustomize runner';
    acc.notices.push({
      path: kustomizationFile,
      level: 'info',
      message: `${why}; its files were scanned directly`,
    });
  }
  await scanFiles(acc, sourceFiles, 'file');
}

type SourceObject = ScannedObject & { readonly file: string };

/**
 * Where kustomize found a rendered object: the source document of the same kind and name, else
 * one whose name the rendered name contains (namePrefix/nameSuffix), else the only source
 * document with the same apiVersion and kind.
 */
export function originOf(
  o: ScannedObject,
  sources: readonly SourceObject[],
): { file: string; line: number } | undefined {
  const sameKind = sources.filter((s) => s.kind === o.kind);
  const sameVersion = sameKind.filter((s) => s.apiVersion === o.apiVersion);
  const pick =
    sameKind.find((s) => s.name === o.name) ??
    sameVersion.find((s) => s.name && o.name?.includes(s.name)) ??
    (sameVersion.length === 1 ? sameVersion[0] : undefined);
  return pick ? { file: pick.file, line: pick.line } : undefined;
}

// ---------------------------------------------------------------------------------------------
// Helm

async function scanChart(acc: Acc, dir: string): Promise<void> {
  const target = acc.opts.targetVersion;
  let why: string;
  if (acc.opts.helm) {
    try {
      const { objects, pinned } = await helmTemplate(acc.opts.helm, dir, target);
      const how = `rendered by helm template --kube-version ${target}${pinned ? ` (${pinned} .Capabilities.APIVersions.Has answered for ${target})` : ''}`;
      for (const o of objects) {
        acc.scanned += 1;
        const file = joinPath(dir, o.template);
        const f = judge(o, target, {
          location: { file, line: await templateLineOf(dir, o.template, o.apiVersion) },
          source: 'helm',
          fixPath: dir,
          detail: how,
        });
        if (f) acc.findings.push(f);
      }
      // A template gated off by the default values (`{{ if .Values.ingress.enabled }}`) renders
      // nothing, but ships all the same: pattern-scan the templates that produced no object.
      const rendered = new Set(objects.map((o) => o.template));
      for (const t of await patternScanChart(dir)) {
        if (rendered.has(t.template) || !t.kind) continue;
        acc.scanned += 1;
        const f = judge({ apiVersion: t.apiVersion, kind: t.kind }, target, {
          location: { file: joinPath(dir, t.template), line: t.line },
          source: 'helm-pattern',
          fixPath: dir,
          detail: `${t.template} rendered nothing with the chart's default values (gated by a value?); pattern scan`,
        });
        if (f) acc.findings.push(f);
      }
      return;
    } catch (err) {
      why = `rendering failed: ${(err as Error).message}`;
    }
  } else {
    why = 'helm not found (set SLUICE_HELM, run make helm, or put helm on PATH)';
  }
  const name = await chartName(dir);
  acc.notices.push({
    path: dir,
    level: 'info',
    message: `chart ${name}: ${why}; pattern scan of its templates`,
  });
  const found = await patternScanChart(dir);
  for (const t of found) {
    const file = joinPath(dir, t.template);
    if (!t.kind) {
      acc.notices.push({
        path: `${file}:${t.line}`,
        level: 'info',
        message: `apiVersion ${t.apiVersion} with a templated kind: not judged`,
      });
      continue;
    }
    acc.scanned += 1;
    const f = judge({ apiVersion: t.apiVersion, kind: t.kind }, target, {
      location: { file, line: t.line },
      source: 'helm-pattern',
      fixPath: dir,
      detail: `${why}; pattern scan${t.via ? ` (one possible ${t.via === 'branch' ? 'branch of a .Capabilities/semverCompare condition' : t.via})` : ''}`,
    });
    if (f) acc.findings.push(f);
  }
}

// ---------------------------------------------------------------------------------------------
// OLM

async function scanBundle(acc: Acc, dir: string): Promise<void> {
  const files = await listManifestFiles(joinPath(dir, 'manifests'));
  const byFile = await scanFiles(acc, files, 'olm');
  const all = [...byFile.entries()].flatMap(([file, objects]) => objects.map((o) => ({ file, o })));
  const csvs = all.filter(({ o }) => o.kind === 'ClusterServiceVersion').map(({ o }) => o.value);
  let cap;
  try {
    cap = await bundleCap(dir, csvs);
  } catch (err) {
    acc.notices.push({
      path: dir,
      level: 'error',
      message: `OLM bundle cap unreadable: ${(err as Error).message}`,
    });
  }
  const target = acc.opts.targetVersion;
  const findings: Finding[] = [];
  for (const { file, o } of all) {
    acc.scanned += 1;
    const f = judge(o, target, {
      location: { file, line: o.line, ...(o.itemPath ? { itemPath: o.itemPath } : {}) },
      source: 'olm',
      fixPath: dir,
    });
    if (f) findings.push(f);
  }
  if (cap && cappedBelow(cap, target)) {
    const listed = findings
      .slice(0, 5)
      .map((f) => `${f.apiVersion} ${f.kind} at ${formatFindingLocation(f.location)}`)
      .join(', ');
    acc.notices.push({
      path: dir,
      level: 'capped',
      message:
        `OLM bundle capped at OpenShift ${cap.maxOpenShiftVersion} (Kubernetes ${openShiftToKube(cap.maxOpenShiftVersion)}) by ${cap.source}; ` +
        `the target ${target} is OpenShift ${kubeToOpenShift(target)}, where OLM will not install it, so its APIs are not judged as breakage` +
        (findings.length
          ? ` (${findings.length} old apiVersions: ${listed}${findings.length > 5 ? ', …' : ''})`
          : ''),
    });
    return;
  }
  acc.findings.push(...findings);
  if (findings.length) {
    acc.notices.push({
      path: dir,
      level: 'info',
      message: `OLM bundle${cap ? ` (capped at OpenShift ${cap.maxOpenShiftVersion}, which the target reaches)` : ' (uncapped)'}: a published bundle is not rewritten in place; fix its source and publish a new bundle version`,
    });
  }
}
