import {
  ApiextensionsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  VersionApi,
} from '@kubernetes/client-node';
import { shareConnections } from './agents.js';
import { RawObjectApi } from './raw.js';

/**
 * Every API client Sluice needs for one cluster, built from one `KubeConfig` so that
 * they share one connection pool. Make one per cluster, once, and keep it.
 */
export interface ClusterClient {
  /** The cluster's name in Sluice (`hub`, or a `Cluster` resource's name). */
  readonly name: string;
  readonly kubeConfig: KubeConfig;
  readonly objects: KubernetesObjectApi;
  /** Untyped JSON access (apply, get, list, delete): use it for anything compared or applied. */
  readonly raw: RawObjectApi;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly coordination: CoordinationV1Api;
  readonly apiextensions: ApiextensionsV1Api;
  readonly version: VersionApi;
}

/** Builds the clients for one cluster. */
export function clusterClient(name: string, kubeConfig: KubeConfig): ClusterClient {
  shareConnections(kubeConfig);
  return {
    name,
    kubeConfig,
    objects: KubernetesObjectApi.makeApiClient(kubeConfig),
    raw: RawObjectApi.forKubeConfig(kubeConfig),
    core: kubeConfig.makeApiClient(CoreV1Api),
    custom: kubeConfig.makeApiClient(CustomObjectsApi),
    coordination: kubeConfig.makeApiClient(CoordinationV1Api),
    apiextensions: kubeConfig.makeApiClient(ApiextensionsV1Api),
    version: kubeConfig.makeApiClient(VersionApi),
  };
}

/** Where a kubeconfig comes from: a file (default: `$KUBECONFIG` or `~/.kube/config`), YAML text, or in-cluster. */
export interface KubeConfigSource {
  kubeconfig?: string;
  context?: string;
  yaml?: string;
  inCluster?: boolean;
}

/** Loads a kubeconfig; throws an `Error` naming the source when it cannot. */
export function loadKubeConfig(source: KubeConfigSource = {}): KubeConfig {
  const kc = new KubeConfig();
  if (source.inCluster) {
    kc.loadFromCluster();
  } else if (source.yaml !== undefined) {
    kc.loadFromString(source.yaml);
  } else if (source.kubeconfig) {
    kc.loadFromFile(source.kubeconfig);
  } else {
    kc.loadFromDefault();
  }
  if (source.context) {
    if (!kc.getContextObject(source.context)) {
      throw new Error(`kubeconfig has no context "${source.context}"`);
    }
    kc.setCurrentContext(source.context);
  }
  if (!kc.getCurrentCluster()) {
    throw new Error('kubeconfig names no current cluster');
  }
  return kc;
}
