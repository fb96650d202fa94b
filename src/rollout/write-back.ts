/**
 * Git write-back after a rollback, from the release's Delivery and its GitSource: the glue
 * between the status (what was rolled back, why) and src/git's idempotent push / pull request.
 */
import type { V1Secret } from '@kubernetes/client-node';
import type { CanaryRelease } from '../api/canary-release.js';
import type { Delivery } from '../api/delivery.js';
import type { GitSource } from '../api/git-source.js';
import { authFromSecretData, NO_AUTH } from '../git/auth.js';
import { openRollbackPullRequest, pushRollback, rollbackCommitMessage } from '../git/write-back.js';
import type { ClusterClient } from '../kube/clients.js';
import { isNotFound } from '../kube/errors.js';
import type { WriteBackOutcome } from './observations.js';

/** Who the rollback commits are by. */
export const WRITE_BACK_AUTHOR = { name: 'Sluice', email: 'sluice@sluice.dev' } as const;

async function secretData(
  hub: ClusterClient,
  namespace: string,
  name: string,
): Promise<Record<string, string> | undefined> {
  try {
    const s = await hub.raw.getRaw<V1Secret>({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace, name },
    });
    return s.data ?? {};
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Pushes (or opens a pull request with) the rollback commit for `release.status.rollback`.
 * Never throws: every problem is an `{ ok: false, error }` outcome, recorded in status and
 * retried on a later tick. Idempotent through the commit's `Sluice-Reverts` trailer.
 */
export async function writeBack(
  hub: ClusterClient,
  release: CanaryRelease,
  workDir: string,
): Promise<WriteBackOutcome> {
  try {
    const ns = release.metadata.namespace ?? 'default';
    const name = release.metadata.name ?? '';
    const r = release.status?.rollback;
    const deliveryName = release.spec.deliveryRef?.name;
    if (!r?.revision || !deliveryName)
      return { ok: false, error: 'nothing to write back: no rolled-back revision or deliveryRef' };
    const delivery = await hub.raw.getRaw<Delivery>({
      apiVersion: 'sluice.dev/v1',
      kind: 'Delivery',
      metadata: { namespace: ns, name: deliveryName },
    });
    const source = await hub.raw.getRaw<GitSource>({
      apiVersion: 'sluice.dev/v1',
      kind: 'GitSource',
      metadata: { namespace: ns, name: delivery.spec.sourceRef.name },
    });
    const branch = source.spec.ref.branch;
    if (!branch) {
      return {
        ok: false,
        error: `GitSource ${ns}/${source.metadata?.name} spec.ref: write-back needs a branch to push to`,
      };
    }
    let auth = NO_AUTH;
    if (source.spec.secretRef) {
      const data = await secretData(hub, ns, source.spec.secretRef.name);
      if (!data)
        return {
          ok: false,
          error: `Secret ${ns}/${source.spec.secretRef.name} (GitSource spec.secretRef) not found`,
        };
      auth = authFromSecretData(data, `${ns}/${source.spec.secretRef.name}`);
    }
    const message = rollbackCommitMessage({
      namespace: ns,
      name,
      step: r.step,
      canaryWeight: r.canaryWeight,
      reason: `${r.reason}: ${r.message}`,
      ...(r.metric ? { metric: r.metric } : {}),
      ...(r.value !== undefined ? { value: r.value } : {}),
      ...(r.threshold !== undefined ? { threshold: r.threshold } : {}),
      badRevision: r.revision,
    });
    const req = {
      url: source.spec.url,
      auth,
      branch,
      badCommit: r.revision,
      ...(release.status?.lastPromotedRevision
        ? { lastGoodCommit: release.status.lastPromotedRevision }
        : {}),
      paths: [],
      dir: delivery.spec.path ?? './',
      message,
      author: { ...WRITE_BACK_AUTHOR },
      workDir,
    };
    if (release.spec.gitWriteBack.mode === 'pullRequest') {
      const target = release.spec.gitWriteBack.pullRequest;
      if (!target)
        return { ok: false, error: 'spec.gitWriteBack.pullRequest: required with mode pullRequest' };
      const token = (await secretData(hub, ns, target.secretRef.name))?.token;
      if (!token) return { ok: false, error: `Secret ${ns}/${target.secretRef.name}: no key token` };
      const pr = await openRollbackPullRequest({
        ...req,
        target,
        token: Buffer.from(token, 'base64').toString('utf8'),
      });
      return { ok: true, pullRequestURL: pr.url, commit: pr.commit };
    }
    const out = await pushRollback(req);
    return { ok: true, method: out.method, commit: out.commit };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}
