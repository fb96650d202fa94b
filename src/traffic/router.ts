import type { CanaryRelease, TrafficProvider } from '../api/canary-release.js';
import type { ClusterClient } from '../kube/clients.js';
import type { ReleaseNames } from '../rollout/names.js';

/** Percent of traffic on each side; the two always add up to 100. */
export interface TrafficSplit {
  readonly primary: number;
  readonly canary: number;
}

/** What `verify` found: the router object is there and routes to both Services, or why not. */
export type RouterCheck =
  { readonly ok: true } | { readonly ok: false; readonly problems: readonly string[] };

/** Everything a router needs to act on one release in one cluster. */
export interface RouterContext {
  readonly client: ClusterClient;
  readonly release: CanaryRelease;
  readonly names: ReleaseNames;
}

/**
 * One traffic provider (Gateway API, Istio, SMI, NGINX, replica ratio). Writes are
 * server-side applies with the field manager `sluice-rollout`, so the Delivery leaves them
 * alone; every method is idempotent, so a controller killed mid-write simply writes again.
 */
export interface TrafficRouter {
  readonly provider: TrafficProvider;
  /** Routes `split` (idempotent). */
  set(split: TrafficSplit): Promise<void>;
  /** The split the cluster routes now; undefined when the router object does not exist. */
  get(): Promise<TrafficSplit | undefined>;
  /** Whether the router object exists and references the primary and canary Services. */
  verify(): Promise<RouterCheck>;
}
