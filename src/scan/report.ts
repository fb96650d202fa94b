/**
 * Prints a scan report as text (for people), JSON (one object, for scripts) or SARIF 2.1.0 (for
 * code-scanning UIs: one rule per removal-table row, one result per finding). Pure.
 */
import { formatFindingLocation, ruleIdOf, type Finding, type ScanReport } from './findings.js';
import { API_REMOVALS, findRemoval, removalApiVersion } from './removals.js';

export type ScanOutput = 'text' | 'json' | 'sarif';

const STATUS_WORD: Record<Finding['status'], string> = {
  removed: 'REMOVED',
  unavailable: 'NOT SERVED YET',
  deprecated: 'DEPRECATED',
};

function replacementText(f: Finding): string {
  if (f.replacement) return `use ${f.replacement.apiVersion} ${f.replacement.kind}`;
  if (f.status === 'unavailable') return 'use the older version the target serves';
  return 'no replacement';
}

/** Human-readable report: one block per finding, then notices, then a summary line. */
export function formatText(r: ScanReport): string {
  const lines: string[] = [];
  for (const f of r.findings) {
    const when =
      f.status === 'removed'
        ? `removed in ${f.removedIn}`
        : f.status === 'deprecated'
          ? `deprecated in ${f.deprecatedIn}${f.removedIn ? `, removed in ${f.removedIn}` : ''}`
          : '';
    lines.push(
      `${formatFindingLocation(f.location)}: ${STATUS_WORD[f.status]} ${f.apiVersion} ${f.kind}${f.name ? ` ${f.name}` : ''}` +
        `${when ? ` (${when})` : ''}; ${replacementText(f)}`,
    );
    if (f.detail) lines.push(`    found by: ${f.detail}`);
    if (f.note) lines.push(`    note: ${f.note}`);
    if (f.fix) lines.push(`    fix: ${f.fix}`);
  }
  for (const n of r.notices) lines.push(`${n.path}: ${n.level}: ${n.message}`);
  const removed = r.findings.filter((f) => f.status !== 'deprecated').length;
  const deprecated = r.findings.length - removed;
  const errors = r.notices.filter((n) => n.level === 'error').length;
  const capped = r.notices.filter((n) => n.level === 'capped').length;
  lines.push(
    `scanned ${r.scanned} objects for Kubernetes ${r.targetVersion}: ${removed} removed or not served, ${deprecated} deprecated` +
      `${capped ? `, ${capped} capped OLM bundles` : ''}${errors ? `, ${errors} errors` : ''}`,
  );
  return lines.join('\n') + '\n';
}

/** The report as one JSON document. */
export function formatJson(r: ScanReport): string {
  return JSON.stringify(r, null, 2) + '\n';
}

const SARIF_LEVEL: Record<Finding['status'], 'error' | 'warning'> = {
  removed: 'error',
  unavailable: 'error',
  deprecated: 'warning',
};

/** SARIF 2.1.0: a rule for every row of the table, a result for every finding and every error notice. */
export function formatSarif(r: ScanReport, toolVersion: string): string {
  const rules = API_REMOVALS.map((row) => ({
    id: ruleIdOf(row),
    name: `${removalApiVersion(row)} ${row.kind}`,
    shortDescription: {
      text: `${removalApiVersion(row)} ${row.kind} is deprecated in ${row.deprecatedIn}${row.removedIn ? ` and not served from ${row.removedIn}` : ''}`,
    },
    fullDescription: {
      text:
        (row.replacement
          ? `Migrate to ${row.replacement.apiVersion} ${row.replacement.kind}.`
          : 'No replacement API.') + (row.note ? ` ${row.note}` : ''),
    },
    helpUri: 'https://kubernetes.io/docs/reference/using-api/deprecation-guide/',
    properties: { deprecatedIn: row.deprecatedIn, removedIn: row.removedIn },
  }));
  const extraRules = new Map<string, object>();
  const results = r.findings.map((f) => {
    if (!findRemoval(f.apiVersion, f.kind) && !extraRules.has(f.ruleId)) {
      extraRules.set(f.ruleId, {
        id: f.ruleId,
        name: `${f.apiVersion} ${f.kind} (not served yet)`,
        shortDescription: { text: f.note ?? `${f.apiVersion} ${f.kind} is not served at the target` },
      });
    }
    const l = f.location;
    return {
      ruleId: f.ruleId,
      level: SARIF_LEVEL[f.status],
      message: {
        text: `${STATUS_WORD[f.status]} at Kubernetes ${f.targetVersion}: ${f.apiVersion} ${f.kind}${f.name ? ` ${f.name}` : ''}; ${replacementText(f)}.${f.fix ? ` Run: ${f.fix}` : ''}${f.detail ? ` (${f.detail})` : ''}`,
      },
      locations: [
        'file' in l
          ? {
              physicalLocation: {
                artifactLocation: { uri: l.file.replace(/^\.\//, '') },
                region: { startLine: l.line },
              },
            }
          : { logicalLocations: [{ fullyQualifiedName: formatFindingLocation(l), kind: 'resource' }] },
      ],
      properties: { status: f.status, source: f.source },
    };
  });
  const notifications = r.notices
    .filter((n) => n.level === 'error')
    .map((n) => ({ level: 'error', message: { text: `${n.path}: ${n.message}` } }));
  const sarif = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'sluice-scan',
            version: toolVersion,
            informationUri: 'https://kubernetes.io/docs/reference/using-api/deprecation-guide/',
            rules: [...rules, ...extraRules.values()],
          },
        },
        results,
        invocations: [
          {
            executionSuccessful: notifications.length === 0,
            toolExecutionNotifications: notifications,
          },
        ],
        properties: { targetVersion: r.targetVersion, scanned: r.scanned },
      },
    ],
  };
  return JSON.stringify(sarif, null, 2) + '\n';
}
