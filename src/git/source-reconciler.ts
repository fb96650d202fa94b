import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import { kindInfo } from '../api/crds.js';
import { requestReconcile as requestReconcileOf } from '../api/reconcile-request.js';
import { parseDuration } from '../api/duration.js';
import type { GitSource } from '../api/git-source.js';
import type { ClusterClient } from '../kube/clients.js';
import { TerminalError, type ReconcileResult, type Reconciler } from '../kube/controller.js';
import { isNotFound, normalizeKubeError } from '../kube/errors.js';
import type { EventRecorder } from '../kube/events.js';
import type { Informer } from '../kube/informer.js';
import { writeStatus } from '../kube/status.js';
import type { Logger } from '../log.js';
import type { ArtifactStore } from './artifact.js';
import type { ArtifactCollector } from './artifact-gc.js';
import { authFromSecretData, NO_AUTH, type GitAuth } from './auth.js';
import { GitError } from './errors.js';
import { fetchRevision, type FetchRevisionOptions } from './fetch.js';
import { withPathLock } from './lock.js';
import { parseRefSpec } from './ref.js';
import {
  failureOutcome,
  jitteredInterval,
  NEW_ARTIFACT_REASON,
  nextSourceStatus,
  RECONCILE_REQUESTED_ANNOTATION,
  type SourceFailureReason,
  type SourceOutcome,
} from './source-status.js';
import { DEFAULT_GIT_TIMEOUT_MS } from './transport.js';

/** What a {@link GitSourceReconciler} works with. */
export interface GitSourceReconcilerOptions {
  hub: ClusterClient;
  sources: Informer<GitSource>;
  /** Secrets on the hub (the credentials a source's `spec.secretRef` names are read from its cache). */
  secrets: Informer<V1Secret>;
  artifacts: ArtifactStore;
  /** Root of the per-source Git directories: `<workRoot>/<namespace>/<name>`. */
  workRoot: string;
  events: EventRecorder;
  logger: Logger;
  /** Removes unused artifacts; fetches run inside its `use()` and a new artifact schedules a collection. */
  collector?: ArtifactCollector;
  now?: () => Date;
  /** For the interval jitter; returns [0, 1). */
  random?: () => number;
}

/**
 * A GitSource reconcile that failed in a way a retry may fix (the server is down, the
 * credentials were refused, the branch is gone). Thrown after the status and Event are
 * written, so that the controller logs it and retries with backoff. Carries only the
 * redacted message (no `cause`: the raw isomorphic-git error may hold credentials).
 */
export class SourceNotReadyError extends Error {
  override readonly name = 'SourceNotReadyError';
  readonly reason: SourceFailureReason;

  constructor(reason: SourceFailureReason, message: string) {
    super(`${reason}: ${message}`);
    this.reason = reason;
  }
}

/**
 * Keeps each GitSource's `status.artifact` at the revision its ref points to.
 *
 * Each reconcile: reads credentials from the Secret `spec.secretRef` names (`username` +
 * `password`, or `bearerToken`); resolves the ref with one ref listing; fetches (shallow,
 * into `<workRoot>/<namespace>/<name>`, serialized per directory) only when the sha differs
 * from `status.artifact`'s or that artifact's directory is missing locally (a restart on a
 * new pod); stores the tree content-addressed in the `ArtifactStore`, so every consumer of
 * the digest shares one copy; writes status once; records an Event per new revision and per
 * failure transition; and asks to run again after `spec.interval` ± 10%.
 *
 * Guarantees: a failure never clears or changes `status.artifact` (consumers keep applying
 * the last good revision); a terminal failure (invalid ref, unsupported URL, a Secret missing
 * or malformed) is `Stalled` and throws `TerminalError` (not retried until the spec, the
 * Secret or the reconcile-requested annotation changes); any other failure is `Ready=False`
 * with `Reconciling=ProgressingWithRetry` and throws `SourceNotReadyError` (retried with
 * backoff). A suspended source is left alone (no fetch, no status write, no requeue).
 * `status.lastHandledReconcileAt` records the `sluice.dev/reconcile-requested-at` value handled.
 * A deleted source's work directory is removed; its artifacts stay (other consumers may share
 * them).
 */
export class GitSourceReconciler implements Reconciler {
  readonly #o: GitSourceReconcilerOptions;
  readonly #logger: Logger;

  constructor(opts: GitSourceReconcilerOptions) {
    this.#o = opts;
    this.#logger = opts.logger.child({ controller: 'gitsource' });
  }

  /** Where the Git objects of the source with key `namespace/name` are kept. */
  workDir(key: string): string {
    const [namespace, name] = key.split('/');
    return join(this.#o.workRoot, namespace ?? '', name ?? '');
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const source = this.#o.sources.get(key);
    if (!source || source.metadata?.deletionTimestamp) {
      const dir = this.workDir(key);
      await withPathLock(dir, () => rm(dir, { recursive: true, force: true }));
      return;
    }
    if (source.spec.suspend) {
      this.#logger.debug('suspended: not fetching', { key });
      return;
    }
    const collector = this.#o.collector;
    return collector
      ? collector.use(() => this.#reconcileSource(key, source))
      : this.#reconcileSource(key, source);
  }

  async #reconcileSource(key: string, source: GitSource): Promise<ReconcileResult> {
    const now = this.#o.now ?? (() => new Date());
    const generation = source.metadata?.generation ?? 0;
    const requested = source.metadata?.annotations?.[RECONCILE_REQUESTED_ANNOTATION];

    let outcome: SourceOutcome;
    let intervalMs = 0;
    try {
      intervalMs = specDuration('interval', source.spec.interval);
      outcome = await this.#produce(key, source);
    } catch (err) {
      outcome = failureOutcome(err);
    }

    const { status, events } = nextSourceStatus(source.status, generation, outcome, now(), requested);
    const info = kindInfo('GitSource');
    try {
      await writeStatus(
        this.#o.hub,
        {
          apiVersion: info.apiVersion,
          kind: info.kind,
          plural: info.plural,
          namespace: source.metadata?.namespace,
          name: source.metadata?.name ?? '',
        },
        status,
      );
    } catch (err) {
      if (isNotFound(err)) return; // deleted meanwhile
      throw normalizeKubeError(err);
    }
    // After the status write: a controller killed in between repeats the write, not the Event.
    for (const e of events)
      await this.#o.events.record(source as KubernetesObject, e.type, e.reason, e.message);

    if (!outcome.ok) {
      if (outcome.terminal) throw new TerminalError(`${outcome.reason}: ${outcome.message}`);
      throw new SourceNotReadyError(outcome.reason, outcome.message);
    }
    if (events.length > 0) {
      this.#logger.info('artifact stored', { key, revision: outcome.revision, digest: outcome.digest });
    }
    if (events.some((e) => e.reason === NEW_ARTIFACT_REASON)) this.#o.collector?.schedule();
    return { requeueAfterMs: jitteredInterval(intervalMs, this.#o.random) };
  }

  async #produce(key: string, source: GitSource): Promise<SourceOutcome> {
    const ref = source.spec.secretRef;
    const secret = ref ? this.#o.secrets.get(source.metadata?.namespace ?? '', ref.name) : undefined;
    const last = source.status?.artifact;
    const fetched = await fetchRevision({
      ...sourceFetchSettings(source, secret),
      workDir: this.workDir(key),
      artifacts: this.#o.artifacts,
      last: last ? { revision: last.revision, digest: last.digest } : undefined,
    });
    return { ok: true, revision: fetched.revision, digest: fetched.digest, path: fetched.path };
  }
}

/** What fetching a GitSource takes from its spec and its credentials Secret. */
export type SourceFetchSettings = Pick<FetchRevisionOptions, 'url' | 'ref' | 'auth' | 'timeoutMs'>;

/**
 * How to fetch `source`: its URL, its parsed ref, credentials from `secret` (the Secret its
 * `spec.secretRef` names, `undefined` when that Secret does not exist) and its timeout. Shared
 * by the controller and `sluice diff`, so both fetch exactly what the spec says. Throws a
 * terminal `GitError` for an invalid ref, a missing or malformed Secret, or a bad duration.
 */
export function sourceFetchSettings(source: GitSource, secret: V1Secret | undefined): SourceFetchSettings {
  const ref = parseRefSpec(source.spec.ref);
  const auth = sourceAuth(source, secret);
  const timeoutMs = source.spec.timeout
    ? specDuration('timeout', source.spec.timeout)
    : DEFAULT_GIT_TIMEOUT_MS;
  return { url: source.spec.url, ref, auth, timeoutMs };
}

function sourceAuth(source: GitSource, secret: V1Secret | undefined): GitAuth {
  const ref = source.spec.secretRef;
  if (!ref) return NO_AUTH;
  const where = `${source.metadata?.namespace ?? ''}/${ref.name}`;
  if (!secret) {
    throw new GitError(`Secret ${where} (spec.secretRef) not found`, {
      reason: 'AuthFailed',
      terminal: true,
    });
  }
  return authFromSecretData(secret.data, where);
}

/** A spec duration in ms; an unparsable one (the schema prevents it) is a terminal error. */
function specDuration(field: string, value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined || ms <= 0) {
    throw new GitError(
      `spec.${field} ${JSON.stringify(value)} is not a positive duration such as 30s or 5m`,
      {
        reason: 'FetchFailed',
        terminal: true,
      },
    );
  }
  return ms;
}

/** The keys of the GitSources that use `secret` for credentials (`spec.secretRef`), so a fixed Secret is retried at once. */
export function sourcesUsingSecret(sources: Informer<GitSource>, secret: KubernetesObject): string[] {
  const ns = secret.metadata?.namespace;
  const name = secret.metadata?.name;
  return sources
    .list()
    .filter((s) => s.metadata?.namespace === ns && s.spec?.secretRef?.name === name)
    .map((s) => `${ns}/${s.metadata?.name ?? ''}`);
}

/**
 * Asks for an immediate reconcile of GitSource `namespace/name` by setting the
 * `sluice.dev/reconcile-requested-at` annotation to the current time (one merge patch of
 * metadata; the spec and generation are untouched). Works from any replica: the leader sees
 * the change through its watch. Resolves with the value written; throws a `KubeError`
 * (e.g. NotFound).
 */
export async function requestReconcile(
  hub: ClusterClient,
  namespace: string,
  name: string,
  at: Date = new Date(),
): Promise<string> {
  const info = kindInfo('GitSource');
  try {
    return await requestReconcileOf(
      hub,
      { apiVersion: info.apiVersion, kind: info.kind, namespace, name },
      at,
    );
  } catch (err) {
    throw normalizeKubeError(err, `request reconcile of GitSource ${namespace}/${name}`);
  }
}
