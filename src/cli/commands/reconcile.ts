import type { KubernetesObject } from '@kubernetes/client-node';
import type { KindInfo } from '../../api/crds.js';
import { RECONCILE_REQUESTED_ANNOTATION, requestReconcile } from '../../api/reconcile-request.js';
import type { ClusterClient } from '../../kube/clients.js';
import type { Condition } from '../../kube/conditions.js';
import { isNotFound } from '../../kube/errors.js';
import { cliResource, currentNamespace, getObject, objectRef, resolveResource } from '../resources.js';
import { parseCommandArgs, parseDurationFlag } from '../usage.js';
import type { Command } from './command.js';
import { hubClient, kubeFlags, kubeFlagsUsage } from './kube-flags.js';

const usage = `Usage: sluice reconcile source|delivery NAME [flags]

Asks the controller to reconcile a GitSource (fetch now) or a Delivery (apply now) at once,
by setting the annotation ${RECONCILE_REQUESTED_ANNOTATION}.

Flags:
${kubeFlagsUsage}  -n, --namespace NS   namespace (default: the context's, then default)
  --wait               wait until the controller handled the request, then report Ready
  --timeout DURATION   how long --wait waits (default 2m)
`;

const RESOURCES = [
  cliResource('source', 'GitSource', ['sources', 'gs']),
  cliResource('delivery', 'Delivery', ['dlv']),
];

type Reconcilable = KubernetesObject & {
  spec?: { suspend?: boolean };
  status?: { lastHandledReconcileAt?: string; conditions?: Condition[] };
};

async function annotate(
  client: ClusterClient,
  info: KindInfo,
  name: string,
  namespace: string,
  at: Date,
): Promise<string> {
  try {
    return await requestReconcile(
      client,
      { apiVersion: info.apiVersion, kind: info.kind, namespace, name },
      at,
    );
  } catch (err) {
    // Deleted between the read and the patch.
    if (isNotFound(err)) throw new Error(`${objectRef(info, name)} not found in namespace ${namespace}`);
    throw err;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const reconcileCommand: Command = {
  name: 'reconcile',
  summary: 'Ask for an immediate reconcile of a source or a delivery',
  async run(argv) {
    const { values, positionals } = parseCommandArgs(
      argv,
      {
        ...kubeFlags,
        namespace: { type: 'string', short: 'n' },
        wait: { type: 'boolean' },
        timeout: { type: 'string', default: '2m' },
      },
      usage,
      { positionals: { min: 2, max: 2 } },
    );
    const { info } = resolveResource(positionals[0]!, RESOURCES, usage);
    const name = positionals[1]!;
    const timeoutMs = parseDurationFlag('timeout', values.timeout, usage);

    const client = hubClient(values);
    const namespace = currentNamespace(client, values.namespace);
    const ref = `${info.crdName}/${name}`;
    const before = await getObject<Reconcilable>(client, info, name, namespace);
    if (before.spec?.suspend) {
      throw new Error(`${ref} in namespace ${namespace} is suspended: resume it (spec.suspend: false) first`);
    }
    const requested = await annotate(client, info, name, namespace, new Date());
    process.stdout.write(`${ref} reconcile requested at ${requested}\n`);
    if (!values.wait) return 0;

    const deadline = Date.now() + timeoutMs;
    let last: Reconcilable = before;
    for (;;) {
      last = await getObject<Reconcilable>(client, info, name, namespace);
      if (last.status?.lastHandledReconcileAt === requested) break;
      if (Date.now() >= deadline) {
        const seen = last.status?.lastHandledReconcileAt;
        throw new Error(
          `timed out after ${values.timeout} waiting for the controller to handle the request: ` +
            `status.lastHandledReconcileAt is ${seen ? `"${seen}"` : 'not set'}, want "${requested}"`,
        );
      }
      await sleep(Math.min(500, Math.max(0, deadline - Date.now())));
    }
    const ready = last.status?.conditions?.find((c) => c.type === 'Ready');
    if (ready?.status === 'True') {
      process.stdout.write(`${ref} reconciled: ${ready.message}\n`);
      return 0;
    }
    throw new Error(
      `${ref} reconciled but not Ready: ${ready ? `${ready.reason}: ${ready.message}` : 'no Ready condition'}`,
    );
  },
};
