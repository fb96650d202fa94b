import type { KubernetesObject } from '@kubernetes/client-node';
import type { Cluster } from '../../api/cluster.js';
import type { Delivery } from '../../api/delivery.js';
import type { GitSource } from '../../api/git-source.js';
import type { PlacementRule } from '../../api/placement-rule.js';
import type { Condition } from '../../kube/conditions.js';
import { canaryColumns } from '../canary-status.js';
import { formatObjects, parseOutputFormat } from '../output.js';
import {
  cliResource,
  currentNamespace,
  getObject,
  listObjects,
  resolveResource,
  type CliResource,
} from '../resources.js';
import { formatTable, humanAge, type Column } from '../table.js';
import { parseCommandArgs, UsageError } from '../usage.js';
import type { Command } from './command.js';
import { hubClient, kubeFlags, kubeFlagsUsage } from './kube-flags.js';

const usage = `Usage: sluice get sources|clusters|placements|deliveries|canaries [NAME] [flags]

Lists Sluice resources with their state, as kubectl and flux do: whether each is Ready,
what it last did and why not.

Flags:
${kubeFlagsUsage}  -n, --namespace NS       namespace (default: the context's, then default)
  -A, --all-namespaces     list in every namespace
  -o, --output FORMAT      table, json or yaml (default table)
`;

type Row = KubernetesObject & { status?: { conditions?: Condition[] } };

/** Status and message of condition `type`; `Unknown` and no message before the first reconcile. */
function condition(obj: Row, type: string): { status: string; message: string } {
  const c = obj.status?.conditions?.find((x) => x.type === type);
  return { status: c?.status ?? 'Unknown', message: c?.message ?? '' };
}

const name: Column<Row> = { header: 'NAME', value: (o) => o.metadata?.name ?? '' };
const readyCol: Column<Row> = { header: 'READY', value: (o) => condition(o, 'Ready').status };
const messageCol: Column<Row> = { header: 'MESSAGE', value: (o) => condition(o, 'Ready').message };
const suspended = (o: { spec?: { suspend?: boolean } }) => (o.spec?.suspend ? 'True' : 'False');
const age = (now: Date): Column<Row> => ({
  header: 'AGE',
  value: (o) => {
    const created = Date.parse(String(o.metadata?.creationTimestamp ?? ''));
    return Number.isNaN(created) ? '' : humanAge(now.getTime() - created);
  },
});

/** What `get` can list, and the columns of each. */
interface Listing extends CliResource {
  columns(now: Date): Column<Row>[];
}

const LISTINGS: readonly Listing[] = [
  {
    ...cliResource('sources', 'GitSource', ['source', 'gs']),
    columns: (now) => [
      name,
      readyCol,
      { header: 'REVISION', value: (o) => (o as GitSource).status?.artifact?.revision ?? '' },
      { header: 'SUSPENDED', value: (o) => suspended(o as GitSource) },
      age(now),
      messageCol,
    ],
  },
  {
    ...cliResource('clusters', 'Cluster', ['scl']),
    columns: (now) => [
      name,
      { header: 'AVAILABLE', value: (o) => condition(o, 'Available').status },
      { header: 'VERSION', value: (o) => (o as Cluster).status?.version ?? '' },
      age(now),
      { header: 'MESSAGE', value: (o) => condition(o, 'Available').message },
    ],
  },
  {
    ...cliResource('placements', 'PlacementRule', ['placement', 'plr']),
    columns: (now) => [
      name,
      readyCol,
      { header: 'DECISIONS', value: (o) => String((o as PlacementRule).status?.decisions?.length ?? 0) },
      {
        header: 'CLUSTERS',
        value: (o) =>
          ((o as PlacementRule).status?.decisions ?? []).map((d) => d.clusterName).join(',') || '<none>',
      },
      age(now),
      messageCol,
    ],
  },
  {
    ...cliResource('deliveries', 'Delivery', ['dlv']),
    columns: (now) => [
      name,
      readyCol,
      { header: 'REVISION', value: (o) => (o as Delivery).status?.lastAppliedRevision ?? '' },
      {
        // Healthy out of placed, e.g. 2/3: the one number on-call looks for first.
        header: 'CLUSTERS',
        value: (o) => {
          const clusters = (o as Delivery).status?.clusters ?? [];
          return `${clusters.filter((c) => c.phase === 'Healthy').length}/${clusters.length}`;
        },
      },
      { header: 'SUSPENDED', value: (o) => suspended(o as Delivery) },
      age(now),
      messageCol,
    ],
  },
  {
    // Phase, step and weight first: what on-call looks for during a rollout.
    ...cliResource('canaries', 'CanaryRelease', ['canary', 'crel']),
    columns: (now) => canaryColumns(now) as unknown as Column<Row>[],
  },
];

/** The table `sluice get` prints for `objects` of `type` (a word or alias), with a NAMESPACE column when listing every namespace. Pure. */
export function formatListing(
  type: string,
  objects: readonly KubernetesObject[],
  opts: { allNamespaces: boolean; now: Date },
): string {
  const listing = resolveResource(type, LISTINGS, usage) as Listing;
  const columns = listing.columns(opts.now);
  if (opts.allNamespaces && listing.info.namespaced) {
    columns.unshift({ header: 'NAMESPACE', value: (o) => o.metadata?.namespace ?? '' });
  }
  return formatTable(columns, objects as Row[]);
}

export const getCommand: Command = {
  name: 'get',
  summary: 'List sources, clusters, placements, deliveries or canaries and their state',
  async run(argv) {
    const { values, positionals } = parseCommandArgs(
      argv,
      {
        ...kubeFlags,
        namespace: { type: 'string', short: 'n' },
        'all-namespaces': { type: 'boolean', short: 'A' },
        output: { type: 'string', short: 'o', default: 'table' },
      },
      usage,
      { positionals: { min: 1, max: 2 } },
    );
    const listing = resolveResource(positionals[0]!, LISTINGS, usage) as Listing;
    const format = parseOutputFormat(values.output, usage);
    const one = positionals[1];
    const all = values['all-namespaces'] === true;
    if (all && values.namespace !== undefined) {
      throw new UsageError('-n and -A cannot be used together', usage);
    }
    if (all && one !== undefined) {
      throw new UsageError('a NAME cannot be given with -A: name one namespace with -n', usage);
    }

    const client = hubClient(values);
    const namespace = all ? undefined : currentNamespace(client, values.namespace);
    const objects =
      one !== undefined
        ? [await getObject(client, listing.info, one, namespace)]
        : await listObjects(client, listing.info, namespace);

    if (format !== 'table') {
      process.stdout.write(formatObjects(objects, format, one !== undefined));
      return 0;
    }
    if (objects.length === 0) {
      // As kubectl: not an error, said on stderr so that stdout stays a (empty) table.
      const where = !listing.info.namespaced ? '' : all ? ' in any namespace' : ` in ${namespace} namespace`;
      process.stderr.write(`No ${listing.info.crdName} found${where}.\n`);
      return 0;
    }
    process.stdout.write(formatListing(listing.word, objects, { allNamespaces: all, now: new Date() }));
    return 0;
  },
};
