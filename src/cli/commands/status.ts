import type { CanaryRelease } from '../../api/canary-release.js';
import { formatCanaryStatus } from '../canary-status.js';
import { formatObjects, parseOutputFormat } from '../output.js';
import { cliResource, currentNamespace, getObject, resolveResource } from '../resources.js';
import { parseCommandArgs } from '../usage.js';
import type { Command } from './command.js';
import { hubClient, kubeFlags, kubeFlagsUsage } from './kube-flags.js';

const usage = `Usage: sluice status canary NAME [flags]

Shows why a CanaryRelease is where it is: its phase, step and weight; after a rollback the
reason, the failing metric with its value and threshold, and the revert commit or pull
request; the timeline of transitions; and every kept measurement against its threshold,
grouped by step and cluster.

Flags:
${kubeFlagsUsage}  -n, --namespace NS       namespace (default: the context's, then default)
  -o, --output FORMAT      text, json or yaml (default text)
`;

const RESOURCES = [cliResource('canary', 'CanaryRelease', ['canaries', 'crel'])];

export const statusCommand: Command = {
  name: 'status',
  summary: 'Show the timeline, measurements and rollback of a canary',
  async run(argv) {
    const { values, positionals } = parseCommandArgs(
      argv,
      {
        ...kubeFlags,
        namespace: { type: 'string', short: 'n' },
        output: { type: 'string', short: 'o', default: 'text' },
      },
      usage,
      { positionals: { min: 2, max: 2 } },
    );
    const { info } = resolveResource(positionals[0]!, RESOURCES, usage);
    const format = values.output === 'text' ? 'text' : parseOutputFormat(values.output, usage);
    const client = hubClient(values);
    const namespace = currentNamespace(client, values.namespace);
    const release = await getObject<CanaryRelease>(client, info, positionals[1]!, namespace);
    if (format === 'text' || format === 'table') process.stdout.write(formatCanaryStatus(release));
    else process.stdout.write(formatObjects([release], format, true));
    return 0;
  },
};
