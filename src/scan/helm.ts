/**
 * Helm charts: rendered with `helm template --kube-version <target>` when a helm binary is there;
 * otherwise, or when rendering fails, scanned as templates for every `apiVersion:` a branch can
 * produce (literal lines inside `.Capabilities`/`semverCompare` branches, and the literals of a
 * helper a templated `apiVersion:` includes). A chart is never skipped silently: a pattern scan
 * says why it was needed on every finding.
 *
 * Offline, `helm template` answers `.Capabilities.APIVersions.Has` from every version compiled
 * into helm (chartutil.DefaultVersionSet), not from what the target serves: a chart that picks
 * `policy/v1` that way renders `policy/v1` even for 1.20. The judge flags such a version as not
 * served yet (status `unavailable`), so the per-target verdict is right anyway.
 */
import { execFile } from 'node:child_process';
import { access, cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { constants } from 'node:fs';
import { basename, delimiter, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scanText, type ScannedObject } from './documents.js';
import {
  API_REMOVALS,
  compareKubeVersions,
  parseKubeVersion,
  removalApiVersion,
  removalStatusAt,
} from './removals.js';

/** The package root (two levels above src/scan or dist/scan). */
const PACKAGE_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');

async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The helm binary: `$SLUICE_HELM`, else `bin/helm` in the package (built by
 * tools/helm/build.sh), else `helm` on PATH; undefined when none is there.
 */
export async function findHelm(
  env: NodeJS.ProcessEnv = process.env,
  packageRoot = PACKAGE_ROOT,
): Promise<string | undefined> {
  if (env.SLUICE_HELM) return (await executable(env.SLUICE_HELM)) ? env.SLUICE_HELM : undefined;
  const bundled = join(packageRoot, 'bin', 'helm');
  if (await executable(bundled)) return bundled;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && (await executable(join(dir, 'helm')))) return join(dir, 'helm');
  }
  return undefined;
}

/** One object of a rendered chart, with the template it came from. */
export interface RenderedChartObject extends ScannedObject {
  /** Template path relative to the chart directory, e.g. `templates/pdb.yaml`. */
  readonly template: string;
}

/**
 * Runs `helm template` for `chartDir` at `targetVersion`, on a temporary copy of the chart whose
 * literal `.Capabilities.APIVersions.Has "<group/version[/Kind]>"` calls are answered for the
 * target (see {@link pinCapabilities}). Rejects with helm's own last stderr lines as the message.
 */
export async function helmTemplate(
  helm: string,
  chartDir: string,
  targetVersion: string,
  timeoutMs = 60_000,
): Promise<{ objects: RenderedChartObject[]; pinned: number }> {
  const { major, minor } = parseKubeVersion(targetVersion);
  const work = await mkdtemp(join(tmpdir(), 'sluice-chart-'));
  try {
    const copy = join(work, basename(resolve(chartDir)));
    await cp(chartDir, copy, { recursive: true, dereference: true });
    let pinned = 0;
    for (const file of await chartTemplateFiles(copy)) {
      const text = await readFile(file, 'utf8');
      const out = pinCapabilities(text, targetVersion);
      if (out.count > 0) {
        pinned += out.count;
        await writeFile(file, out.text);
      }
    }
    const args = ['template', 'sluice-scan', copy, '--kube-version', `v${major}.${minor}.0`];
    const stdout = await new Promise<string>((resolveP, reject) => {
      execFile(
        helm,
        args,
        {
          timeout: timeoutMs,
          maxBuffer: 64 * 1024 * 1024,
          // No repositories or plugins are needed to template a local chart; keep helm off $HOME.
          env: {
            PATH: process.env.PATH ?? '',
            HELM_CACHE_HOME: join(work, 'cache'),
            HELM_CONFIG_HOME: join(work, 'config'),
            HELM_DATA_HOME: join(work, 'data'),
          },
        },
        (err, out, stderr) => {
          if (err) {
            // helm prints `Error: <why>` and then advice (`Use --debug …`): keep the why.
            const lines = String(stderr).trim().split('\n');
            const detail =
              lines.find((l) => l.startsWith('Error: ')) ?? (lines.slice(-2).join(' ') || err.message);
            reject(
              new Error(
                detail
                  .replace(/^Error: /, '')
                  .split(copy)
                  .join(chartDir),
                { cause: err },
              ),
            );
            return;
          }
          resolveP(String(out));
        },
      );
    });
    return { objects: splitRendered(stdout), pinned };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

const HAS_CALL = /\$?\.Capabilities\.APIVersions\.Has\s+"([^"]+)"/g;

/**
 * Whether a cluster at `targetVersion` serves `spec` (`group/version`, `group/version/Kind`,
 * `v1`, `v1/Pod`), as far as the removal table knows; undefined for versions it does not know
 * (custom resources), which are left to helm.
 */
export function servedAt(spec: string, targetVersion: string): boolean | undefined {
  const parts = spec.split('/');
  const hasKind = parts.length === 3 || (parts.length === 2 && /^[A-Z]/.test(parts[1]!));
  const apiVersion = hasKind ? parts.slice(0, -1).join('/') : spec;
  const kind = hasKind ? parts[parts.length - 1]! : undefined;
  const rows = API_REMOVALS.filter((r) => removalApiVersion(r) === apiVersion && (!kind || r.kind === kind));
  const asReplacement = API_REMOVALS.filter(
    (r) => r.replacement?.apiVersion === apiVersion && (!kind || r.replacement.kind === kind),
  );
  if (rows.length === 0 && asReplacement.length === 0) return undefined;
  if (rows.length > 0 && rows.every((r) => removalStatusAt(r, targetVersion) === 'removed')) return false;
  if (asReplacement.length > 0) {
    const since = asReplacement
      .map((r) => r.replacementSince)
      .filter((v): v is string => v !== undefined)
      .sort(compareKubeVersions)[0];
    if (since && compareKubeVersions(targetVersion, since) < 0) return false;
  }
  return true;
}

/**
 * Answers every literal `.Capabilities.APIVersions.Has "…"` in a template for `targetVersion`
 * (`true`/`false` from the removal table), leaving unknown versions to helm. Offline, helm
 * answers Has from every version compiled into it, so without this a chart picks `policy/v1`
 * for 1.20 and `policy/v1beta1` for 1.29 when it checks the old version first. Same line count.
 */
export function pinCapabilities(text: string, targetVersion: string): { text: string; count: number } {
  let count = 0;
  const out = text.replace(HAS_CALL, (call, spec: string) => {
    const served = servedAt(spec, targetVersion);
    if (served === undefined) return call;
    count += 1;
    return `(${served})`;
  });
  return { text: out, count };
}

async function chartTemplateFiles(chartDir: string): Promise<string[]> {
  const files = await templateFiles(join(chartDir, 'templates'));
  const chartsDir = join(chartDir, 'charts');
  for (const e of await readdir(chartsDir, { withFileTypes: true }).catch(() => [])) {
    if (e.isDirectory()) files.push(...(await chartTemplateFiles(join(chartsDir, e.name))));
  }
  return files;
}

/** Splits `helm template` output at `---` and reads each part's `# Source:` comment. */
export function splitRendered(output: string): RenderedChartObject[] {
  const out: RenderedChartObject[] = [];
  for (const part of output.split(/^---\s*$/m)) {
    const source = /^# Source: [^/\n]+\/(.+)$/m.exec(part)?.[1]?.trim();
    if (!source) continue;
    for (const o of scanText(part).objects) out.push({ ...o, template: source });
  }
  return out;
}

/** An apiVersion a template can produce, found without rendering. */
export interface TemplateApiVersion {
  /** Path relative to the chart directory. */
  readonly template: string;
  readonly line: number;
  readonly apiVersion: string;
  /** undefined when the kind is itself templated. */
  readonly kind: string | undefined;
  /** Why it is only one possibility: `branch`, `helper "<name>"`, or absent for a plain line. */
  readonly via?: string;
}

const API_VERSION_LITERAL = /^(?:[a-z0-9][a-z0-9.-]*\/)?v\d+(?:(?:alpha|beta)\d+)?$/;
const QUOTED = /["'`]([^"'`\s]+)["'`]/g;

async function templateFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = join(d, e.name);
      if (e.isDirectory()) await walk(full);
      else if (/\.(ya?ml|tpl|json)$/.test(e.name)) out.push(full);
    }
  };
  await walk(dir);
  return out;
}

/**
 * Every `apiVersion:` a chart's templates (and its sub-charts' under `charts/`) can produce,
 * without rendering: literal lines, including each branch of an `if`/`else`; for a templated
 * value (`{{ include "x.apiVersion" . }}`), every apiVersion-shaped literal in that helper's
 * `define` block. The kind is the nearest `kind:` of the same document.
 */
export async function patternScanChart(chartDir: string): Promise<TemplateApiVersion[]> {
  const files = await chartTemplateFiles(chartDir);
  const texts = new Map<string, string>();
  for (const f of files) texts.set(f, await readFile(f, 'utf8'));

  // Helper name → apiVersion literals inside its define block.
  const helpers = new Map<string, string[]>();
  for (const text of texts.values()) {
    const re = /\{\{-?\s*define\s+"([^"]+)"\s*-?\}\}([\s\S]*?)\{\{-?\s*end\s*-?\}\}/g;
    for (const m of text.matchAll(re)) {
      const body = m[2] ?? '';
      const found = new Set<string>();
      for (const q of body.matchAll(QUOTED)) if (API_VERSION_LITERAL.test(q[1]!)) found.add(q[1]!);
      for (const line of body.split('\n')) {
        const bare = line.trim();
        if (API_VERSION_LITERAL.test(bare)) found.add(bare);
      }
      helpers.set(m[1]!, [...found]);
    }
  }

  const out: TemplateApiVersion[] = [];
  for (const [file, text] of texts) {
    if (/\.tpl$/.test(file)) continue;
    const template = relative(chartDir, file).split('\\').join('/');
    const lines = text.split('\n');
    // Document boundaries, so a kind is looked up in the same document only.
    const docOf: number[] = [];
    let doc = 0;
    lines.forEach((l, i) => {
      if (/^---\s*$/.test(l)) doc += 1;
      docOf[i] = doc;
    });
    const kindOfDoc = (d: number): string | undefined => {
      for (let i = 0; i < lines.length; i += 1) {
        if (docOf[i] !== d) continue;
        const m = /^kind:\s*["']?([A-Za-z0-9]+)["']?\s*$/.exec(lines[i]!);
        if (m) return m[1];
      }
      return undefined;
    };
    const inBranch = (i: number): boolean => {
      let depth = 0;
      for (let j = i - 1; j >= 0 && docOf[j] === docOf[i]; j -= 1) {
        if (/\{\{-?\s*end\b/.test(lines[j]!)) depth -= 1;
        if (/\{\{-?\s*(if|else|with)\b/.test(lines[j]!)) {
          if (depth === 0) return true;
          if (/\{\{-?\s*(if|with)\b/.test(lines[j]!)) depth += 1;
        }
      }
      return false;
    };
    lines.forEach((l, i) => {
      const m = /^\s*apiVersion:\s*(.+?)\s*$/.exec(l);
      if (!m || /^\s/.test(l)) return;
      const raw = m[1]!.replace(/^["']|["']$/g, '');
      const kind = kindOfDoc(docOf[i]!);
      if (API_VERSION_LITERAL.test(raw)) {
        out.push({ template, line: i + 1, apiVersion: raw, kind, ...(inBranch(i) ? { via: 'branch' } : {}) });
        return;
      }
      const helper = /(?:include|template)\s+"([^"]+)"/.exec(raw)?.[1];
      for (const v of helper ? (helpers.get(helper) ?? []) : []) {
        out.push({ template, line: i + 1, apiVersion: v, kind, via: `helper "${helper}"` });
      }
      // A literal inside an inline `{{ if … }}v1{{ else }}v1beta1{{ end }}`.
      if (!helper) {
        for (const part of raw.split(/\{\{[^}]*\}\}/)) {
          const v = part.trim();
          if (API_VERSION_LITERAL.test(v))
            out.push({ template, line: i + 1, apiVersion: v, kind, via: 'branch' });
        }
      }
    });
  }
  return out;
}

/** The chart's name from Chart.yaml (for messages), or the directory name. */
export async function chartName(chartDir: string): Promise<string> {
  const text = await readFile(join(chartDir, 'Chart.yaml'), 'utf8').catch(() => '');
  return /^name:\s*["']?([^"'\s]+)/m.exec(text)?.[1] ?? chartDir;
}

/** The line of the first `apiVersion: <value>` in a template (where a rendered object came from). */
export async function templateLineOf(
  chartDir: string,
  template: string,
  apiVersion: string,
): Promise<number> {
  const text = await readFile(join(chartDir, template), 'utf8').catch(() => '');
  const lines = text.split('\n');
  const exact = lines.findIndex((l) =>
    new RegExp(`^apiVersion:\\s*["']?${escape(apiVersion)}["']?\\s*$`).test(l),
  );
  if (exact >= 0) return exact + 1;
  const any = lines.findIndex((l) => /^apiVersion:/.test(l));
  return any >= 0 ? any + 1 : 1;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
