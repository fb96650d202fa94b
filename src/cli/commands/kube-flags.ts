import { clusterClient, loadKubeConfig, type ClusterClient } from '../../kube/clients.js';

/** The flags every command that talks to the hub cluster takes. */
export const kubeFlags = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
} as const;

export const kubeFlagsUsage = `  --kubeconfig PATH    kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)
  --context NAME       kubeconfig context (default: the current context)
`;

/** The hub's clients from `--kubeconfig`/`--context`; throws a plain Error naming the file when unreadable. */
export function hubClient(values: { kubeconfig?: string; context?: string }): ClusterClient {
  try {
    return clusterClient('hub', loadKubeConfig({ kubeconfig: values.kubeconfig, context: values.context }));
  } catch (err) {
    const where = values.kubeconfig ?? process.env.KUBECONFIG ?? '~/.kube/config';
    throw new Error(`cannot load kubeconfig ${where}: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
}
