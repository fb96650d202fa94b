import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import type { Cluster } from '../../api/cluster.js';
import { kindInfo } from '../../api/crds.js';
import type { Delivery } from '../../api/delivery.js';
import type { GitSource } from '../../api/git-source.js';
import { mapBounded, planCluster, previewPrune, withTimeout } from '../../delivery/applier.js';
import { kubectlKustomize } from '../../delivery/kustomize.js';
import type { RenderedObject } from '../../delivery/objects.js';
import { deliveryApplyInput } from '../../delivery/reconciler.js';
import { renderDirectory, renderProblems } from '../../delivery/render.js';
import { ArtifactStore } from '../../git/artifact.js';
import { fetchRevision } from '../../git/fetch.js';
import { sourceFetchSettings } from '../../git/source-reconciler.js';
import type { ClusterClient } from '../../kube/clients.js';
import { isNotFound, normalizeKubeError } from '../../kube/errors.js';
import { memberClientFromKubeconfig, memberClientFromSecret } from '../../placement/member-clients.js';
import { clusterDiff, diffExitCode, formatClusterDiff, type ClusterDiffOutcome } from '../delivery-diff.js';
import { cliResource, currentNamespace, getObject, resolveResource } from '../resources.js';
import { parseCommandArgs, parseDurationFlag } from '../usage.js';
import type { Command } from './command.js';
import { hubClient, kubeFlags, kubeFlagsUsage } from './kube-flags.js';

const usage = `Usage: sluice diff delivery NAME [flags]

Shows, per placed cluster, what applying the Delivery's current source revision would
change: the GitSource's ref is fetched here (with the credentials of its secretRef), the
Delivery's path rendered, and every object dry-run with server-side apply on each cluster
in the Delivery's status and compared with what runs there. Nothing is written anywhere.
Per object: "+ created", "~ configured" (with a diff of live vs dry-run result), "- deleted"
(what prune would delete); then a summary line per cluster.
Secret values are never printed: they show as *** (and as "*** (before)" / "*** (after)"
where they differ).

Exit status (as kubectl diff): 0 no differences, 1 differences found, 2 an error (a
cluster could not be diffed, the revision does not render, an object was rejected, or a
bad flag). Clusters that can be diffed are still shown when another one fails.

Flags:
${kubeFlagsUsage}  -n, --namespace NS   namespace (default: the context's, then default)
  --cluster NAME       only this placed cluster (default: every placed cluster)
  --timeout DURATION   bound on each cluster's dry-run (default 2m)
`;

const RESOURCES = [cliResource('delivery', 'Delivery', ['deliveries', 'dlv'])];

/** What `sluice diff` was asked to do, once the flags are checked. */
export interface DiffRequest {
  readonly name: string;
  readonly namespace?: string;
  readonly cluster?: string;
}

const DEFAULT_TIMEOUT_MS = 120_000;
const CLUSTER_CONCURRENCY = 4;

async function readSecret(
  hub: ClusterClient,
  namespace: string,
  name: string,
): Promise<V1Secret | undefined> {
  try {
    return await hub.raw.getRaw<V1Secret & KubernetesObject>({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace, name },
    });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw normalizeKubeError(err, `read Secret ${namespace}/${name}`);
  }
}

/** The client for placed cluster `name`, as the controller builds it, or why there is none. */
async function memberClient(
  hub: ClusterClient,
  name: string,
): Promise<{ ok: true; client: ClusterClient } | { ok: false; message: string }> {
  let cluster: Cluster;
  try {
    cluster = await hub.raw.getRaw<Cluster & KubernetesObject>({
      apiVersion: kindInfo('Cluster').apiVersion,
      kind: 'Cluster',
      metadata: { name },
    });
  } catch (err) {
    if (isNotFound(err)) return { ok: false, message: `Cluster ${name} not found on the hub` };
    throw err;
  }
  if (cluster.spec.inCluster) return { ok: true, client: hub };
  const loaded = await memberClientFromSecret(hub, cluster, memberClientFromKubeconfig);
  return loaded.ok ? loaded : { ok: false, message: `${loaded.reason}: ${loaded.message}` };
}

/** Plans `objects` on one cluster (reads and dry-runs only) and compares. Never throws. */
async function diffCluster(
  hub: ClusterClient,
  delivery: Delivery,
  cluster: string,
  objects: readonly RenderedObject[],
  revision: string,
  timeoutMs: number,
): Promise<ClusterDiffOutcome> {
  const failed = (message: string): ClusterDiffOutcome => ({ ok: false, cluster, message });
  try {
    return await withTimeout(
      (async (): Promise<ClusterDiffOutcome> => {
        const member = await memberClient(hub, cluster);
        if (!member.ok) return failed(member.message);
        const plan = await planCluster(
          deliveryApplyInput(delivery, cluster, member.client, objects, {
            deadline: Date.now() + timeoutMs,
          }),
        );
        if (!plan.ok) {
          return failed(
            plan.reason === 'Invalid' ? `rejected by the API server: ${plan.message}` : plan.message,
          );
        }
        const prune = await previewPrune(plan, Date.now() + timeoutMs);
        return { ok: true, diff: clusterDiff(cluster, plan, prune, revision) };
      })(),
      timeoutMs,
    );
  } catch (err) {
    return failed(normalizeKubeError(err).message);
  }
}

export const diffCommand: Command = {
  name: 'diff',
  summary: 'Show what applying a delivery would change on each placed cluster',
  failureExitCode: 2,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(
      argv,
      {
        ...kubeFlags,
        namespace: { type: 'string', short: 'n' },
        cluster: { type: 'string' },
        timeout: { type: 'string' },
      },
      usage,
      { positionals: { min: 2, max: 2 } },
    );
    const { info } = resolveResource(positionals[0]!, RESOURCES, usage);
    const timeoutMs =
      values.timeout === undefined ? DEFAULT_TIMEOUT_MS : parseDurationFlag('timeout', values.timeout, usage);
    const request: DiffRequest = {
      name: positionals[1]!,
      namespace: values.namespace,
      ...(values.cluster === undefined ? {} : { cluster: values.cluster }),
    };
    const client = hubClient(values);
    const namespace = currentNamespace(client, request.namespace);
    const delivery = await getObject<Delivery & KubernetesObject>(client, info, request.name, namespace);
    const placed = (delivery.status?.clusters ?? []).map((c) => c.name);
    if (request.cluster !== undefined && !placed.includes(request.cluster)) {
      throw new Error(
        `cluster ${request.cluster} is not placed for ${info.crdName}/${request.name} (placed: ${placed.join(', ') || 'none'})`,
      );
    }
    const clusters = request.cluster === undefined ? placed : [request.cluster];
    if (clusters.length === 0) {
      throw new Error(
        `${info.crdName}/${request.name} has no placed clusters in its status yet: nothing to compare with`,
      );
    }

    const sourceInfo = kindInfo('GitSource');
    const source = await getObject<GitSource & KubernetesObject>(
      client,
      sourceInfo,
      delivery.spec.sourceRef.name,
      namespace,
    );
    const secretRef = source.spec.secretRef;
    const secret = secretRef ? await readSecret(client, namespace, secretRef.name) : undefined;
    const settings = sourceFetchSettings(source, secret);

    // A private checkout: the controller's artifact store is on its own volume, not here.
    const scratch = await mkdtemp(join(tmpdir(), 'sluice-diff-'));
    try {
      const fetched = await fetchRevision({
        ...settings,
        workDir: join(scratch, 'git'),
        artifacts: new ArtifactStore(join(scratch, 'artifacts')),
      });
      const path = delivery.spec.path ?? './';
      const render = await renderDirectory(fetched.path, path, { kustomize: kubectlKustomize() });
      const problems = renderProblems(render, delivery.spec.path);
      if (!render.ok || problems.length > 0) {
        process.stderr.write(
          `sluice diff: revision ${fetched.revision}, path ${path} does not render:\n${problems.map((p) => `  ${p}\n`).join('')}`,
        );
        return 2;
      }
      process.stdout.write(
        `${info.crdName}/${request.name} in ${namespace}: revision ${fetched.revision}, path ${path}, ${render.objects.length} objects\n`,
      );
      const outcomes = await mapBounded(clusters, CLUSTER_CONCURRENCY, (cluster) =>
        diffCluster(client, delivery, cluster, render.objects, fetched.revision, timeoutMs),
      );
      for (const o of outcomes) {
        if (o.ok) process.stdout.write(`\n${formatClusterDiff(o.diff)}`);
        else process.stderr.write(`sluice diff: cluster ${o.cluster}: ${o.message}\n`);
      }
      const code = diffExitCode(outcomes);
      if (code === 0) process.stdout.write(`\nNo differences on ${clusters.length} cluster(s).\n`);
      return code;
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  },
};
