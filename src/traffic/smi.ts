/**
 * SMI router: a TrafficSplit (`split.smi-spec.io/v1alpha2`) that Sluice creates and owns —
 * `spec.service` is the apex Service, `spec.backends` the primary and canary Services with
 * their weights. v1alpha2 because it is the version the SMI meshes implement most widely
 * (Linkerd's SMI extension, Open Service Mesh, Flagger): integer weights (v1alpha1 had
 * quantities), no HTTP matches (v1alpha3/4 add them; a canary split needs none).
 *
 * The object is Sluice's alone, so it is applied whole, as `sluice-rollout`, with `force`: a
 * stale copy in Git or a manual edit must not keep the weights from moving (the Delivery then
 * yields the fields to this apply manager instead of fighting it).
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ClusterClient } from '../kube/clients.js';
import type { ReleaseNames } from '../rollout/names.js';
import { RouterConfigError } from './errors.js';
import { MANAGED_BY, MANAGED_BY_LABEL } from './labels.js';
import { applyAsRollout, probe, readForVerify, readOptional, where } from './kube.js';
import type { RouterCheck, RouterContext, TrafficRouter, TrafficSplit } from './router.js';
import { checkSplit, splitFromWeights } from './split.js';

export const SMI_API_VERSION = 'split.smi-spec.io/v1alpha2';
const REF_FIELD = 'spec.trafficRouting.smi.trafficSplit.name';

export interface TrafficSplitBackend {
  readonly service: string;
  readonly weight: number;
}

export interface SmiTrafficSplit extends KubernetesObject {
  spec?: { service?: string; backends?: TrafficSplitBackend[] };
}

/** The TrafficSplit that routes `split`; undefined when `current` already is exactly that. */
export function desiredTrafficSplit(
  split: TrafficSplit,
  names: ReleaseNames,
  name: string,
  current: SmiTrafficSplit | undefined,
): SmiTrafficSplit | undefined {
  checkSplit(split);
  const spec = {
    service: names.apexService,
    backends: [
      { service: names.primaryService, weight: split.primary },
      { service: names.canaryService, weight: split.canary },
    ],
  };
  const labelled = current?.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY;
  if (current && labelled && isDeepStrictEqual(current.spec, spec)) return undefined;
  return {
    apiVersion: SMI_API_VERSION,
    kind: 'TrafficSplit',
    metadata: { name, namespace: names.namespace, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
    spec,
  };
}

/** The split `ts` routes: its primary and canary backends' weights. */
export function trafficSplitSplit(ts: SmiTrafficSplit, names: ReleaseNames): TrafficSplit | undefined {
  const weightOf = (service: string) =>
    (ts.spec?.backends ?? []).filter((b) => b.service === service).reduce((n, b) => n + b.weight, 0);
  return splitFromWeights(weightOf(names.primaryService), weightOf(names.canaryService));
}

/** What is wrong with an existing TrafficSplit; empty when nothing is. */
export function trafficSplitProblems(ts: SmiTrafficSplit, names: ReleaseNames): string[] {
  const at = where('TrafficSplit', names.namespace, ts.metadata?.name ?? '?');
  const problems: string[] = [];
  if (ts.spec?.service !== names.apexService) {
    problems.push(
      `${at} spec.service: ${JSON.stringify(ts.spec?.service)} is not the apex Service ${names.apexService}`,
    );
  }
  const services = new Set((ts.spec?.backends ?? []).map((b) => b.service));
  for (const s of [names.primaryService, names.canaryService]) {
    if (!services.has(s)) problems.push(`${at} spec.backends: no backend for Service ${s}`);
  }
  return problems;
}

/**
 * {@link TrafficRouter} over a TrafficSplit Sluice creates. `set` creates it when missing;
 * `verify` accepts a missing one (the first `set` creates it) but reports one that routes
 * elsewhere, and a cluster without the SMI CRD, where no weight can ever be set.
 */
export class SmiRouter implements TrafficRouter {
  readonly provider = 'smi' as const;
  readonly #client: ClusterClient;
  readonly #names: ReleaseNames;
  readonly #name: string;

  constructor(ctx: RouterContext) {
    const name = ctx.release.spec.trafficRouting.smi?.trafficSplit?.name;
    if (!name) throw new RouterConfigError(REF_FIELD, 'Required value: the TrafficSplit to manage');
    this.#client = ctx.client;
    this.#names = ctx.names;
    this.#name = name;
  }

  #ref(): KubernetesObject {
    return probe(SMI_API_VERSION, 'TrafficSplit', this.#names.namespace, this.#name);
  }

  /**
   * Reads first and writes only when the spec differs: the desired object does not depend on
   * the live one, but a read is cheaper than a write and leaves no managedFields timestamp churn.
   */
  async set(split: TrafficSplit): Promise<void> {
    checkSplit(split);
    const current = await readOptional<SmiTrafficSplit>(this.#client, this.#ref());
    const body = desiredTrafficSplit(split, this.#names, this.#name, current);
    if (body) await applyAsRollout(this.#client, body, { force: true });
  }

  async get(): Promise<TrafficSplit | undefined> {
    const current = await readOptional<SmiTrafficSplit>(this.#client, this.#ref());
    return current && trafficSplitSplit(current, this.#names);
  }

  async verify(): Promise<RouterCheck> {
    const { object, notServed } = await readForVerify<SmiTrafficSplit>(
      this.#client,
      this.#ref(),
      'spec.trafficRouting.provider',
    );
    if (notServed) return { ok: false, problems: [`${notServed} (SMI TrafficSplit CRD not installed)`] };
    if (!object) return { ok: true };
    const problems = trafficSplitProblems(object, this.#names);
    return problems.length > 0 ? { ok: false, problems } : { ok: true };
  }
}
