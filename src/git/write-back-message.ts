import { parseRevision } from './ref.js';

/** Trailer naming the CanaryRelease a rollback commit belongs to (`namespace/name`). */
export const RELEASE_TRAILER = 'Sluice-Release';
/** Trailer naming the commit a rollback commit undoes; how a re-run finds its own earlier work. */
export const REVERTS_TRAILER = 'Sluice-Reverts';

/** What a rollback commit message says. */
export interface RollbackMessageInput {
  namespace: string;
  name: string;
  /** The step the release was at, e.g. `2/5`. */
  step: string;
  canaryWeight: number;
  /** Why it was rolled back, e.g. `AnalysisFailed: score 0.5 below 0.95`. */
  reason: string;
  metric?: string;
  value?: string;
  threshold?: string;
  /** The revision rolled back: a sha or Flux's `main@sha1:<sha>`. */
  badRevision: string;
}

/** The sha in `revision` (`main@sha1:<sha>`, `sha1:<sha>` or a bare sha). Pure. */
export function revisionSha(revision: string): string {
  return parseRevision(revision)?.sha ?? revision;
}

const oneLine = (text: string) => text.replace(/\s*[\r\n]+\s*/g, ' ').trim();

/**
 * The rollback commit's message: a subject on-call can read in `git log --oneline` (which
 * release, which metric at what value against which threshold), a body with the step and
 * weight, and the trailers `Sluice-Release: ns/name` and `Sluice-Reverts: <sha>` that
 * tools — and Sluice itself, after a crash — search for. Pure.
 */
export function rollbackCommitMessage(input: RollbackMessageInput): string {
  const release = `${input.namespace}/${input.name}`;
  const sha = revisionSha(input.badRevision);
  const metricText =
    input.metric !== undefined
      ? `${input.metric} = ${input.value ?? 'no data'}${input.threshold ? ` (threshold ${input.threshold})` : ''}`
      : undefined;
  const subject = `Roll back ${release} at step ${input.step}: ${metricText ?? oneLine(input.reason)}`;
  const body = [
    `Sluice rolled back CanaryRelease ${release} at step ${input.step} (canary weight ${input.canaryWeight}%).`,
    '',
    `Reason: ${oneLine(input.reason)}`,
    ...(metricText ? [`Failing metric: ${metricText}`] : []),
    `Rolled back revision: ${input.badRevision}`,
  ];
  return [subject, '', ...body, '', `${RELEASE_TRAILER}: ${release}`, `${REVERTS_TRAILER}: ${sha}`, ''].join(
    '\n',
  );
}

/** The values of trailer `key` in a commit message (last paragraph lines `Key: value`). Pure. */
export function trailerValues(message: string, key: string): string[] {
  const out: string[] = [];
  const re = new RegExp(`^${key}:\\s*(\\S.*?)\\s*$`, 'gmi');
  for (const m of message.matchAll(re)) out.push(m[1]!);
  return out;
}
