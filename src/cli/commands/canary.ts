import {
  operatorAnnotation,
  OPERATOR_ACTIONS,
  type CanaryRelease,
  type OperatorAction,
} from '../../api/canary-release.js';
import { kindInfo } from '../../api/crds.js';
import { isNotFound } from '../../kube/errors.js';
import type { ClusterClient } from '../../kube/clients.js';
import { currentNamespace, getObject, objectRef } from '../resources.js';
import { parseCommandArgs, parseDurationFlag } from '../usage.js';
import type { Command } from './command.js';
import { hubClient, kubeFlags, kubeFlagsUsage } from './kube-flags.js';

const WHAT: Record<OperatorAction, string> = {
  promote: 'promote the canary now: skip the remaining steps and open the gate it waits at',
  abort: 'roll the release back now (traffic to the primary, and Git write-back)',
  pause: 'hold the release where it is: no step, analysis or promotion until resumed',
  resume: 'continue a paused release from where it was paused',
  retry: 'start a rolled-back or failed release again with the same revision',
};

const usageOf = (action: OperatorAction) => `Usage: sluice ${action} NAME [flags]

Asks the controller to ${WHAT[action]}, for CanaryRelease NAME, by setting the
annotation ${operatorAnnotation(action)} to the time of the request. Never changes spec
or status: the controller acts on the request and records it in
status.acknowledgedRequests.${action}.

Flags:
${kubeFlagsUsage}  -n, --namespace NS   namespace (default: the context's, then default)
  --wait               wait until the controller acknowledged the request
  --timeout DURATION   how long --wait waits (default 2m)
`;

const INFO = kindInfo('CanaryRelease');

/** The merge patch that requests `action` at `at`: the annotation only. Pure. */
export function operatorRequestPatch(
  action: OperatorAction,
  at: Date,
): { metadata: { annotations: Record<string, string> } } {
  // Millisecond precision: two requests within one second must differ, or the second would
  // look handled already.
  return { metadata: { annotations: { [operatorAnnotation(action)]: at.toISOString() } } };
}

/** One line on where the release stands, for the messages of the operator commands. Pure. */
export function describeRelease(release: CanaryRelease): string {
  const s = release.status ?? {};
  if (!s.phase) return 'not started yet';
  const parts = [`phase ${s.phase}`];
  if (s.step) parts.push(`step ${s.step}`);
  if (s.canaryWeight !== undefined) parts.push(`canary weight ${s.canaryWeight}%`);
  return parts.join(', ');
}

async function request(
  client: ClusterClient,
  action: OperatorAction,
  namespace: string,
  name: string,
  at: Date,
): Promise<string> {
  const patch = operatorRequestPatch(action, at);
  try {
    await client.raw.mergePatch(
      { apiVersion: INFO.apiVersion, kind: INFO.kind, metadata: { namespace, name } },
      patch,
      { fieldManager: 'sluice-cli' },
    );
  } catch (err) {
    // Deleted between the read and the patch.
    if (isNotFound(err)) throw new Error(`${objectRef(INFO, name)} not found in namespace ${namespace}`);
    throw err;
  }
  return patch.metadata.annotations[operatorAnnotation(action)]!;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function operatorCommand(action: OperatorAction): Command {
  const usage = usageOf(action);
  return {
    name: action,
    summary: `Ask the controller to ${action} a CanaryRelease`,
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
        { positionals: { min: 1, max: 1 } },
      );
      const name = positionals[0]!;
      const timeoutMs = parseDurationFlag('timeout', values.timeout, usage);
      const client = hubClient(values);
      const namespace = currentNamespace(client, values.namespace);
      const ref = `${INFO.crdName}/${name}`;

      const before = await getObject<CanaryRelease>(client, INFO, name, namespace);
      const requested = await request(client, action, namespace, name, new Date());
      process.stdout.write(
        `${ref} in namespace ${namespace}: ${action} requested at ${requested} (${describeRelease(before)})\n`,
      );
      if (!values.wait) return 0;

      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const now = await getObject<CanaryRelease>(client, INFO, name, namespace);
        if (now.status?.acknowledgedRequests?.[action] === requested) {
          const last = now.status.transitions?.at(-1);
          const what = last ? `: ${last.reason}: ${last.message}` : '';
          process.stdout.write(`${ref}: ${action} acknowledged, ${describeRelease(now)}${what}\n`);
          return 0;
        }
        if (Date.now() >= deadline) {
          const seen = now.status?.acknowledgedRequests?.[action];
          throw new Error(
            `timed out after ${values.timeout} waiting for the controller to acknowledge the request: ` +
              `status.acknowledgedRequests.${action} is ${seen ? `"${seen}"` : 'not set'}, want "${requested}"`,
          );
        }
        await sleep(Math.min(500, Math.max(0, deadline - Date.now())));
      }
    },
  };
}

/** `sluice promote|abort|pause|resume|retry NAME`, one command each. */
export const operatorCommands: readonly Command[] = OPERATOR_ACTIONS.map(operatorCommand);
