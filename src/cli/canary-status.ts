/**
 * What on-call reads about a CanaryRelease: the `sluice get canaries` columns and the
 * `sluice status canary` report (timeline, measurements against thresholds, rollback and
 * its Git write-back). Pure: everything comes from the object, the clock is a parameter.
 */
import type { CanaryRelease, Measurement, WriteBackRecord } from '../api/canary-release.js';
import { formatTable, humanAge, type Column } from './table.js';

/** The `sluice get canaries` columns (NAMESPACE is added by `get -A`). */
export function canaryColumns(now: Date): Column<CanaryRelease>[] {
  return [
    { header: 'NAME', value: (o) => o.metadata?.name ?? '' },
    { header: 'PHASE', value: (o) => o.status?.phase ?? '' },
    { header: 'STEP', value: (o) => o.status?.step ?? '' },
    {
      header: 'WEIGHT',
      value: (o) => (o.status?.canaryWeight === undefined ? '' : String(o.status.canaryWeight)),
    },
    { header: 'SCORE', value: (o) => (o.status?.lastScore === undefined ? '' : score(o.status.lastScore)) },
    {
      header: 'AGE',
      value: (o) => {
        const created = Date.parse(String(o.metadata?.creationTimestamp ?? ''));
        return Number.isNaN(created) ? '' : humanAge(now.getTime() - created);
      },
    },
  ];
}

const score = (s: number) => s.toFixed(2);

/** RFC 3339 to the second: enough to line events up, short enough for a table. */
function time(at: string | undefined): string {
  if (!at) return '';
  const ms = Date.parse(at);
  return Number.isNaN(ms) ? at : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function indent(text: string, by = '  '): string {
  return text
    .split('\n')
    .map((l) => (l ? by + l : l))
    .join('\n');
}

/** `error-rate = 0.2 (threshold <= 0.01)`, with `no data` for a missing value. */
function valueAgainst(
  metric: string | undefined,
  value: string | undefined,
  threshold: string | undefined,
): string {
  const v = `${metric ?? '?'} = ${value ?? 'no data'}`;
  return threshold ? `${v} (threshold ${threshold})` : v;
}

function writeBackLine(w: WriteBackRecord | undefined): string {
  if (!w) return 'not attempted yet';
  if (w.mode === 'none') return 'none (gitWriteBack.mode: none): Git still holds the rolled-back revision';
  const when = w.pushedAt ? `, pushed ${time(w.pushedAt)}` : '';
  // No URL but a commit: the rollback was on the base branch already (the PR merged before status was written).
  if (w.mode === 'pullRequest' && !w.pullRequestURL && w.commit)
    return `already on the base branch in commit ${w.commit}${when}`;
  if (w.pullRequestURL)
    return `pull request ${w.pullRequestURL}${w.commit ? ` (commit ${w.commit})` : ''}${when}`;
  if (w.commit) {
    const how = w.method === 'restore' ? 'restored the last promoted files' : 'reverted';
    return `${how} in commit ${w.commit}${when}`;
  }
  if (w.error) return `failed, retrying: ${w.error}`;
  return `${w.mode}: pending`;
}

/** Measurements grouped by the canary weight they were taken at (in order of first appearance). */
function measurementGroups(ms: readonly Measurement[]): Array<{ weight: number; rows: Measurement[] }> {
  const groups: Array<{ weight: number; rows: Measurement[] }> = [];
  for (const m of ms) {
    let g = groups.find((x) => x.weight === m.canaryWeight);
    if (!g) {
      g = { weight: m.canaryWeight, rows: [] };
      groups.push(g);
    }
    g.rows.push(m);
  }
  for (const g of groups) {
    g.rows.sort(
      (a, b) =>
        (a.cluster ?? '').localeCompare(b.cluster ?? '') ||
        a.measuredAt.localeCompare(b.measuredAt) ||
        a.metric.localeCompare(b.metric),
    );
  }
  return groups;
}

/**
 * The `sluice status canary NAME` report: where the release stands, the rollback (reason,
 * failing metric against its threshold, the revision refused from now on, and the revert
 * commit or pull request), the timeline of transitions, and every kept measurement against
 * its threshold grouped by step and cluster. Pure; ends with a newline.
 */
export function formatCanaryStatus(release: CanaryRelease): string {
  const s = release.status ?? {};
  const ns = release.metadata?.namespace ?? '';
  const name = release.metadata?.name ?? '';
  const out: string[] = [];
  const field = (label: string, value: string | undefined) => {
    if (value) out.push(`${`${label}:`.padEnd(16)}${value}`);
  };

  out.push(`CanaryRelease ${ns}/${name}`);
  field('Phase', s.phase ? `${s.phase}${s.phaseSince ? ` since ${time(s.phaseSince)}` : ''}` : 'not started');
  if (s.phase === 'Paused' && s.pausedFrom) field('Paused from', s.pausedFrom);
  field('Step', s.step);
  field('Canary weight', s.canaryWeight === undefined ? undefined : `${s.canaryWeight}%`);
  const spec = release.spec;
  field(
    'Score',
    s.lastScore === undefined
      ? undefined
      : `${score(s.lastScore)} (threshold ${score(spec?.analysis?.scoreThreshold ?? 0.95)})`,
  );
  field(
    'Failed checks',
    s.failedChecks === undefined
      ? undefined
      : `${s.failedChecks} (limit ${spec?.analysis?.failureLimit ?? 2})`,
  );
  field('Revision', s.revision);
  field('Last promoted', s.lastPromotedRevision);
  field('Clusters', s.clusters?.length ? s.clusters.join(', ') : undefined);
  if (s.gate) {
    const attempts = s.gate.attempts ? `, ${s.gate.attempts} call(s)` : '';
    field(
      'Gate',
      `waiting at ${s.gate.name} since ${time(s.gate.since)}${attempts}${s.gate.message ? `: ${s.gate.message}` : ''}`,
    );
  }
  const ready = s.conditions?.find((c) => c.type === 'Ready');
  if (ready)
    field(
      'Ready',
      `${ready.status}${ready.reason ? ` (${ready.reason})` : ''}${ready.message ? `: ${ready.message}` : ''}`,
    );

  const r = s.rollback;
  if (r) {
    out.push('', 'Rollback:');
    const rows: Array<[string, string | undefined]> = [
      ['At', `${time(r.at)}, step ${r.step}, canary weight ${r.canaryWeight}%`],
      ['Reason', `${r.reason}: ${r.message}`],
      ['Failing metric', r.metric ? valueAgainst(r.metric, r.value, r.threshold) : undefined],
      ['Rolled back', r.revision ? `${r.revision} (the Delivery will not apply it again)` : undefined],
      ['Git', writeBackLine(r.writeBack)],
    ];
    for (const [label, value] of rows) if (value) out.push(`  ${`${label}:`.padEnd(16)}${value}`);
  }

  const transitions = s.transitions ?? [];
  out.push('', 'Timeline:');
  if (transitions.length === 0) out.push('  (no transitions yet)');
  else {
    const cols: Column<(typeof transitions)[number]>[] = [
      { header: 'TIME', value: (t) => time(t.at) },
      { header: 'PHASE', value: (t) => t.phase },
      { header: 'WEIGHT', value: (t) => String(t.canaryWeight) },
      { header: 'STEP', value: (t) => t.step ?? '' },
      { header: 'REASON', value: (t) => t.reason },
      { header: 'MESSAGE', value: (t) => t.message },
    ];
    out.push(indent(formatTable(cols, transitions)).trimEnd());
  }

  const measurements = s.measurements ?? [];
  out.push('', 'Measurements:');
  if (measurements.length === 0) out.push('  (none yet)');
  else {
    // A weight's step, from the timeline: measurements carry the weight, transitions both.
    const stepOf = new Map<number, string>();
    for (const t of transitions)
      if (t.step && !stepOf.has(t.canaryWeight)) stepOf.set(t.canaryWeight, t.step);
    const cols: Column<Measurement>[] = [
      { header: 'CLUSTER', value: (m) => m.cluster ?? '-' },
      { header: 'METRIC', value: (m) => m.metric },
      { header: 'VALUE', value: (m) => m.value ?? 'no data' },
      { header: 'THRESHOLD', value: (m) => m.threshold ?? '' },
      { header: 'RESULT', value: (m) => m.outcome },
      { header: 'MEASURED', value: (m) => time(m.measuredAt) },
      { header: 'MESSAGE', value: (m) => m.message ?? '' },
    ];
    for (const g of measurementGroups(measurements)) {
      const step = stepOf.get(g.weight);
      out.push(`  weight ${g.weight}%${step ? ` (step ${step})` : ''}:`);
      out.push(indent(formatTable(cols, g.rows), '    ').trimEnd());
    }
  }
  return `${out.join('\n')}\n`;
}
