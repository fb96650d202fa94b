/**
 * Finds the files `sluice fix` reads under the paths it is given and says what each one is:
 * manifests to rewrite, a Helm template or values file (FLAGs only), or a file inside an OLM
 * bundle (rewritten in the diff, never in place). Reads the file system, never writes.
 */
import { readdir, realpath, stat } from 'node:fs/promises';
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, extname, join, relative, resolve, sep } from 'node:path';

/** `chart-template`: a file under a Helm chart's `templates/` (Go template text, not YAML). */
export type FileRole = 'manifests' | 'values' | 'chart-template';

/** One file to fix. */
export interface FixTarget {
  /** Absolute path. */
  readonly path: string;
  /** What to print: relative to the working directory when it is below it. */
  readonly display: string;
  readonly role: FileRole;
  readonly json: boolean;
  /** The OLM bundle directory the file is published in, if any. */
  readonly bundle?: string;
}

const MANIFEST_EXT = new Set(['.yaml', '.yml', '.json']);
const SKIP_DIRS = new Set(['node_modules']);

/** The bundle directory (`metadata/annotations.yaml` + `manifests/`) whose manifests hold `file`. */
export function olmBundleOf(file: string): string | undefined {
  let dir = dirname(file);
  for (;;) {
    if (basename(dir) === 'manifests') {
      const root = dirname(dir);
      if (existsSync(join(root, 'metadata', 'annotations.yaml'))) return root;
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function chartDirOf(file: string): string | undefined {
  let dir = dirname(file);
  for (;;) {
    if (existsSync(join(dir, 'Chart.yaml'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** `path` relative to the working directory when it is below it, with `/` separators. */
export function displayPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel.split(sep).join('/') : path;
}

function classify(path: string): FixTarget | undefined {
  const ext = extname(path).toLowerCase();
  if (!MANIFEST_EXT.has(ext)) return undefined;
  const name = basename(path);
  const chart = chartDirOf(path);
  if (chart && dirname(path) === chart && (name === 'Chart.yaml' || name === 'Chart.lock')) return undefined;
  const display = displayPath(path);
  const bundle = olmBundleOf(path);
  const inTemplates = chart !== undefined && !relative(join(chart, 'templates'), path).startsWith('..');
  const role: FileRole =
    chart && dirname(path) === chart && /^values.*\.ya?ml$/.test(name)
      ? 'values'
      : inTemplates
        ? 'chart-template'
        : 'manifests';
  return { path, display, role, json: ext === '.json', ...(bundle ? { bundle } : {}) };
}

/**
 * Every file to fix under `paths` (files or directories), sorted, each once. A path that does
 * not exist is an error naming it. Hidden directories, `node_modules` and a chart's vendored
 * `charts/` are not entered (a dependency is fixed in its own repository).
 */
export async function collectFiles(paths: readonly string[]): Promise<FixTarget[]> {
  const seen = new Set<string>();
  const out: FixTarget[] = [];
  const visit = async (path: string, explicit: boolean): Promise<void> => {
    const real = await realpath(path);
    if (seen.has(real)) return;
    seen.add(real);
    const st = await stat(real);
    if (st.isDirectory()) {
      const entries = (await readdir(real)).sort();
      for (const e of entries) {
        const child = join(path, e);
        let isDir = false;
        try {
          isDir = statSync(child).isDirectory();
        } catch {
          continue; // a dangling symlink
        }
        if (isDir && (e.startsWith('.') || SKIP_DIRS.has(e))) continue;
        if (isDir && e === 'charts' && existsSync(join(real, 'Chart.yaml'))) continue;
        await visit(child, false);
      }
      return;
    }
    const target = classify(path);
    if (target) out.push(target);
    else if (explicit) throw new Error(`${path}: not a YAML or JSON file`);
  };
  for (const p of paths) {
    try {
      await stat(p);
    } catch {
      throw new Error(`${p}: no such file or directory`);
    }
    await visit(resolve(p), true);
  }
  return out;
}
