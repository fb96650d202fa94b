/**
 * `sluice fix` without the command line: reads the files, runs the pure per-file fixer, and —
 * only when asked — writes the results. Everything is computed before anything is written, so
 * a refusal (an OLM bundle) or an unreadable file leaves every file as it was.
 */
import { existsSync } from 'node:fs';
import { cp, readFile, rename, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { unifiedDiff } from '../../cli/line-diff.js';
import { mapBounded } from '../../delivery/applier.js';
import { collectFiles, displayPath, type FixTarget } from './files.js';
import {
  fixManifestText,
  flagTemplateText,
  flagValuesText,
  type ObjectReport,
  type TextFix,
} from './file-fix.js';
import { formatPath } from './types.js';
import { parseDocuments } from './yaml-edit.js';

/** The fixer's result for one file. */
export interface FileResult extends TextFix {
  readonly target: FixTarget;
  readonly before: string;
  readonly template: boolean;
}

/** The fixer's result for all paths. */
export interface FixReport {
  readonly targetVersion: string;
  readonly files: readonly FileResult[];
  /** Set when `write` was asked and refused; nothing was written. */
  readonly refused?: string;
  readonly written: readonly string[];
}

const READ_CONCURRENCY = 16;

/**
 * A template outside a chart's templates/: `{{` where YAML cannot hold it, or in the apiVersion
 * or kind line. `{{ $labels.x }}` inside a quoted string (alerting rules, Go templates in a
 * ConfigMap) is plain YAML and still fixed.
 */
export function looksLikeTemplate(text: string): boolean {
  if (!text.includes('{{')) return false;
  if (/^\s*-?\s*(apiVersion|kind):.*\{\{/m.test(text)) return true;
  return parseDocuments(text).docs.some((d) => d.errors.length > 0);
}

/**
 * Exit codes of `sluice fix`: 0 nothing to fix; 1 fixes found (dry run) or written, nothing
 * flagged; 3 at least one FLAG remains (whatever else was fixed); 2 an error — a bad flag, an
 * unreadable path, a document that is not valid YAML, or `--write` refused for an OLM bundle.
 */
export const FixExit = { Clean: 0, Fixed: 1, Error: 2, Flagged: 3 } as const;

/** Runs the fixer over the pure per-file functions; reads files, writes only with `write`. */
export async function runFix(
  paths: readonly string[],
  targetVersion: string,
  write: boolean,
  opts: { bundleOut?: string } = {},
): Promise<FixReport> {
  const targets = await collectFiles(paths);
  // Reads overlap (a repository holds thousands of small files); the fixing itself is CPU.
  const texts = await mapBounded(targets, READ_CONCURRENCY, (t) => readFile(t.path, 'utf8'));
  const files: FileResult[] = targets.map((target, i) => {
    const before = texts[i]!;
    const template = target.role === 'chart-template' || looksLikeTemplate(before);
    const result =
      target.role === 'values'
        ? flagValuesText(before, targetVersion)
        : template
          ? flagTemplateText(before, targetVersion)
          : fixManifestText(before, targetVersion, { json: target.json });
    return { ...result, target, before, template };
  });
  const changed = files.filter((f) => f.after !== f.before);
  const written: string[] = [];
  let refused: string | undefined;
  if (write && changed.length > 0) {
    const bundles = [...new Set(changed.flatMap((f) => (f.target.bundle ? [f.target.bundle] : [])))];
    const unreadable = files.some((f) => f.problems.length > 0);
    // --bundle-out makes one new bundle: every change must be inside that one bundle.
    const bundleCopy =
      opts.bundleOut !== undefined &&
      bundles.length === 1 &&
      changed.every((f) => f.target.bundle === bundles[0]);
    if (bundles.length > 0 && !bundleCopy) {
      refused = `refusing --write: ${bundles.map(displayPath).join(', ')} ${bundles.length > 1 ? 'are OLM bundles' : 'is an OLM bundle'}, and a published bundle is immutable — write a fixed copy as a new bundle version with --bundle-out DIR (one bundle at a time), then give its CSV a new name and version and set replaces. Nothing was written.`;
    } else if (unreadable) {
      refused = 'refusing --write: some files could not be read (see above). Nothing was written.';
    } else {
      const bundle = bundles[0];
      if (bundle && bundleCopy && opts.bundleOut) {
        // A new bundle beside the published one: copy it whole, then write the fixed files there.
        if (existsSync(opts.bundleOut)) throw new Error(`--bundle-out ${opts.bundleOut}: already exists`);
        await cp(bundle, opts.bundleOut, { recursive: true });
        for (const f of changed) {
          const dest = join(opts.bundleOut, relative(bundle, f.target.path));
          await writeFile(dest, f.after, 'utf8');
          written.push(displayPath(dest));
        }
        return { targetVersion, files, written };
      }
      for (const f of changed) {
        // Write beside and rename: a crash never leaves a half-written manifest.
        const tmp = `${f.target.path}.sluice-fix.tmp`;
        await writeFile(tmp, f.after, 'utf8');
        await rename(tmp, f.target.path);
        written.push(f.target.display);
      }
    }
  }
  return { targetVersion, files, written, ...(refused ? { refused } : {}) };
}

/** The exit code for a report (see {@link FixExit}). */
export function fixExitCode(report: FixReport): number {
  if (report.refused || report.files.some((f) => f.problems.length > 0)) return FixExit.Error;
  const outcomes = report.files.flatMap((f) => f.objects.map((o) => o.outcome.action));
  if (outcomes.includes('flag')) return FixExit.Flagged;
  if (outcomes.includes('fix')) return FixExit.Fixed;
  return FixExit.Clean;
}

function objectLabel(o: ObjectReport): string {
  return `${o.kind}${o.name ? ` ${o.name}` : ''}${o.itemPath ? ` (${o.itemPath})` : ''}`;
}

/**
 * The report as text: per object a `FIXED`, `FLAG` or `SKIP` line with `file:line` (and the
 * notes and reasons indented under it), problems as `ERROR file:line`, then the unified diff of
 * every changed file, then one summary line.
 */
export function formatFixReport(report: FixReport): string {
  const out: string[] = [];
  let fixed = 0;
  let flagged = 0;
  for (const f of report.files) {
    for (const p of f.problems) out.push(`ERROR ${f.target.display}:${p.line}: ${p.message}`);
    for (const o of f.objects) {
      const at = `${f.target.display}:${o.line}`;
      const what = `${objectLabel(o)} ${o.apiVersion}`;
      const when =
        o.outcome.action === 'skip'
          ? ''
          : o.outcome.status === 'removed'
            ? `removed in ${o.outcome.removal.removedIn}`
            : `deprecated in ${o.outcome.removal.deprecatedIn}${o.outcome.removal.removedIn ? `, removed in ${o.outcome.removal.removedIn}` : ''}`;
      if (o.outcome.action === 'fix') {
        fixed++;
        out.push(`FIXED ${at} ${what} → ${o.outcome.object.apiVersion} (${when})`);
        for (const n of o.outcome.notes) out.push(`      ${formatPath(n.path)}: ${n.text}`);
      } else if (o.outcome.action === 'flag') {
        flagged++;
        o.outcome.flags.forEach((fl, i) => {
          out.push(
            `FLAG  ${f.target.display}:${o.flagLines[i] ?? o.line} ${what} (${when}): ${formatPath(fl.path)}: ${fl.reason}`,
          );
        });
      } else {
        out.push(`SKIP  ${at} ${what}: ${o.outcome.reason}`);
      }
    }
  }
  const bundles = new Set(
    report.files.flatMap((f) => (f.after !== f.before && f.target.bundle ? [f.target.bundle] : [])),
  );
  for (const b of bundles) {
    out.push(
      `NOTE  ${displayPath(b)} is an OLM bundle: the diff is shown, but --write will not change a published bundle in place (use --bundle-out DIR for a fixed copy)`,
    );
  }
  for (const f of report.files) {
    if (f.after === f.before) continue;
    out.push(
      unifiedDiff(f.before, f.after, {
        labels: { before: `a/${f.target.display}`, after: `b/${f.target.display}` },
      }).trimEnd(),
    );
  }
  if (report.refused) out.push(report.refused);
  const changedFiles = report.files.filter((f) => f.after !== f.before).length;
  const verb =
    report.written.length > 0
      ? `written to ${report.written.length} file(s)`
      : changedFiles > 0
        ? `in ${changedFiles} file(s), not written (use --write)`
        : '';
  out.push(
    `${fixed} fixed${verb ? ` ${verb}` : ''}, ${flagged} flagged, ${report.files.length} file(s) read, target ${report.targetVersion}`,
  );
  return `${out.join('\n')}\n`;
}
