/**
 * Istio router: sets the weights of the VirtualService `spec.http[].route[]` destinations that
 * are the primary and the canary. Without a DestinationRule the destinations are the two
 * Services (`host: <primary Service>` / `host: <canary Service>`, Flagger's layout); with one,
 * they are the subsets {@link ISTIO_PRIMARY_SUBSET} and {@link ISTIO_CANARY_SUBSET} of the apex
 * Service, which that DestinationRule must define.
 *
 * Uses `networking.istio.io/v1` (served by Istio ≥ 1.22; `v1beta1` is the same schema). A CRD
 * list without `x-kubernetes-list-type` is atomic for server-side apply, and Istio's generated
 * CRDs are not known to mark `spec.http` otherwise (the test fixture mirrors that; not checked
 * against a real Istio release here). So, as with the HTTPRoute's rules (gateway-api.ts), the
 * whole list is rebuilt from the live object and applied as `sluice-rollout` with `force`,
 * conditional on the resourceVersion read — which stays correct even if the list were keyed.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ClusterClient } from '../kube/clients.js';
import type { ReleaseNames } from '../rollout/names.js';
import { RouterConfigError, TrafficRouteError } from './errors.js';
import { applyAsRollout, probe, readForVerify, readOptional, retryOnConflict, where } from './kube.js';
import { otherAppliers } from './ownership.js';
import type { RouterCheck, RouterContext, TrafficRouter, TrafficSplit } from './router.js';
import { checkSplit, splitFromWeights } from './split.js';

export const ISTIO_API_VERSION = 'networking.istio.io/v1';
/** The DestinationRule subset names of the two sides, when a DestinationRule is used. */
export const ISTIO_PRIMARY_SUBSET = 'primary';
export const ISTIO_CANARY_SUBSET = 'canary';
const VS_FIELD = 'spec.trafficRouting.istio.virtualService.name';
const DR_FIELD = 'spec.trafficRouting.istio.destinationRule.name';

export interface Destination {
  readonly host: string;
  readonly subset?: string;
  readonly [field: string]: unknown;
}

export interface RouteDestination {
  readonly destination: Destination;
  readonly weight?: number;
  readonly [field: string]: unknown;
}

export interface HttpRoute {
  readonly route?: readonly RouteDestination[];
  readonly [field: string]: unknown;
}

export interface VirtualService extends KubernetesObject {
  spec?: { http?: HttpRoute[]; [field: string]: unknown };
}

export interface DestinationRule extends KubernetesObject {
  spec?: { host?: string; subsets?: { name: string }[]; [field: string]: unknown };
}

/** How the two sides are addressed: by Service host, or by subset of the apex Service. */
export interface IstioTargets {
  readonly primary: Destination;
  readonly canary: Destination;
}

/** The destinations of the two sides for `names`, with or without a DestinationRule. */
export function istioTargets(names: ReleaseNames, useSubsets: boolean): IstioTargets {
  return useSubsets
    ? {
        primary: { host: names.apexService, subset: ISTIO_PRIMARY_SUBSET },
        canary: { host: names.apexService, subset: ISTIO_CANARY_SUBSET },
      }
    : { primary: { host: names.primaryService }, canary: { host: names.canaryService } };
}

/**
 * True when Istio resolves `host` to Service `service` in `namespace`: the short name (relative
 * to the VirtualService's namespace), `svc.ns`, `svc.ns.svc` or the FQDN in any cluster domain.
 */
export function hostIs(host: string, service: string, namespace: string): boolean {
  const [svc, ns, kind, ...domain] = host.split('.');
  if (svc !== service) return false;
  if (ns === undefined) return true;
  if (ns !== namespace) return false;
  return kind === undefined || (kind === 'svc' && (domain.length === 0 || domain.every((d) => d !== '')));
}

function isSide(d: Destination, side: Destination, namespace: string): boolean {
  return hostIs(d.host, side.host, namespace) && (d.subset ?? undefined) === side.subset;
}

function splitRoutes(vs: VirtualService, targets: IstioTargets, namespace: string): number[] {
  const out: number[] = [];
  (vs.spec?.http ?? []).forEach((http, i) => {
    const route = http.route ?? [];
    const p = route.some((r) => isSide(r.destination, targets.primary, namespace));
    const c = route.some((r) => isSide(r.destination, targets.canary, namespace));
    if (p && c) out.push(i);
  });
  return out;
}

const label = (d: Destination) => (d.subset ? `${d.host} subset ${d.subset}` : d.host);

/** What is wrong with `vs` for splitting between the two sides; empty when nothing is. */
export function virtualServiceProblems(
  vs: VirtualService,
  names: ReleaseNames,
  targets: IstioTargets,
): string[] {
  if (splitRoutes(vs, targets, names.namespace).length > 0) return [];
  const at = where('VirtualService', names.namespace, vs.metadata?.name ?? '?');
  const problems = [
    `${at} spec.http: no route has destinations ${label(targets.primary)} and ${label(targets.canary)}`,
  ];
  (vs.spec?.http ?? []).forEach((http, i) => {
    const route = http.route ?? [];
    const p = route.some((r) => isSide(r.destination, targets.primary, names.namespace));
    const c = route.some((r) => isSide(r.destination, targets.canary, names.namespace));
    if (p !== c) {
      const [has, lacks] = p ? [targets.primary, targets.canary] : [targets.canary, targets.primary];
      problems.push(`${at} spec.http[${i}].route: routes to ${label(has)} but not ${label(lacks)}`);
    }
  });
  return problems;
}

/** The split `vs` routes now: the weights of the first http route with both sides. */
export function virtualServiceSplit(
  vs: VirtualService,
  names: ReleaseNames,
  targets: IstioTargets,
): TrafficSplit | undefined {
  const first = splitRoutes(vs, targets, names.namespace)[0];
  if (first === undefined) return undefined;
  const route = vs.spec?.http?.[first]?.route ?? [];
  // Istio: an unset weight is 0, unless the destination is the route's only one (then 100).
  const weightOf = (side: Destination) =>
    route
      .filter((r) => isSide(r.destination, side, names.namespace))
      .reduce((n, r) => n + (r.weight ?? (route.length === 1 ? 100 : 0)), 0);
  return splitFromWeights(weightOf(targets.primary), weightOf(targets.canary));
}

/**
 * The apply body that routes `split` through `current`: `spec.http` as live, with the weight of
 * the primary and canary destinations set in every http route that has both. Undefined when
 * `current` already routes `split`. Throws {@link TrafficRouteError} when no route has both.
 */
export function desiredVirtualService(
  split: TrafficSplit,
  names: ReleaseNames,
  current: VirtualService,
  targets: IstioTargets = istioTargets(names, false),
): VirtualService | undefined {
  checkSplit(split);
  const problems = virtualServiceProblems(current, names, targets);
  if (problems.length > 0) throw new TrafficRouteError(problems);
  const chosen = new Set(splitRoutes(current, targets, names.namespace));
  const live = current.spec?.http ?? [];
  const http = live.map((h, i) => {
    if (!chosen.has(i)) return h;
    const route = (h.route ?? []).map((r) => {
      if (isSide(r.destination, targets.primary, names.namespace)) return { ...r, weight: split.primary };
      if (isSide(r.destination, targets.canary, names.namespace)) return { ...r, weight: split.canary };
      return r;
    });
    return { ...h, route };
  });
  if (isDeepStrictEqual(http, live)) return undefined;
  return {
    apiVersion: ISTIO_API_VERSION,
    kind: 'VirtualService',
    metadata: { name: current.metadata?.name, namespace: names.namespace },
    spec: { http },
  };
}

/** What is wrong with the DestinationRule for subset routing; empty when nothing is. */
export function destinationRuleProblems(dr: DestinationRule, names: ReleaseNames): string[] {
  const at = where('DestinationRule', names.namespace, dr.metadata?.name ?? '?');
  const problems: string[] = [];
  const host = dr.spec?.host ?? '';
  if (!hostIs(host, names.apexService, names.namespace)) {
    problems.push(`${at} spec.host: ${JSON.stringify(host)} is not Service ${names.apexService}`);
  }
  const subsets = new Set((dr.spec?.subsets ?? []).map((s) => s.name));
  for (const s of [ISTIO_PRIMARY_SUBSET, ISTIO_CANARY_SUBSET]) {
    if (!subsets.has(s)) problems.push(`${at} spec.subsets: no subset named ${JSON.stringify(s)}`);
  }
  return problems;
}

/** {@link TrafficRouter} over an Istio VirtualService the user writes. */
export class IstioRouter implements TrafficRouter {
  readonly provider = 'istio' as const;
  readonly #client: ClusterClient;
  readonly #names: ReleaseNames;
  readonly #vs: string;
  readonly #dr: string | undefined;
  readonly #targets: IstioTargets;

  constructor(ctx: RouterContext) {
    const istio = ctx.release.spec.trafficRouting.istio;
    const name = istio?.virtualService?.name;
    if (!name) throw new RouterConfigError(VS_FIELD, 'Required value: the VirtualService to set weights on');
    this.#client = ctx.client;
    this.#names = ctx.names;
    this.#vs = name;
    this.#dr = istio?.destinationRule?.name;
    this.#targets = istioTargets(ctx.names, this.#dr !== undefined);
  }

  #ref(): KubernetesObject {
    return probe(ISTIO_API_VERSION, 'VirtualService', this.#names.namespace, this.#vs);
  }

  #missing(): string {
    return `${VS_FIELD}: ${where('VirtualService', this.#names.namespace, this.#vs)} not found`;
  }

  /** Reads first and writes only when a weight differs, so a repeated `set` sends no write. */
  async set(split: TrafficSplit): Promise<void> {
    checkSplit(split);
    await retryOnConflict(async () => {
      const current = await readOptional<VirtualService>(this.#client, this.#ref());
      if (!current) throw new TrafficRouteError([this.#missing()]);
      const body = desiredVirtualService(split, this.#names, current, this.#targets);
      if (!body) return;
      await applyAsRollout(this.#client, body, {
        force: true,
        resourceVersion: current.metadata?.resourceVersion,
      });
    });
  }

  async get(): Promise<TrafficSplit | undefined> {
    const current = await readOptional<VirtualService>(this.#client, this.#ref());
    return current && virtualServiceSplit(current, this.#names, this.#targets);
  }

  async verify(): Promise<RouterCheck> {
    const { object, notServed } = await readForVerify<VirtualService>(
      this.#client,
      this.#ref(),
      'spec.trafficRouting.provider',
    );
    if (notServed) return { ok: false, problems: [`${notServed} (Istio CRDs not installed)`] };
    const problems = object ? virtualServiceProblems(object, this.#names, this.#targets) : [this.#missing()];
    for (const m of object ? otherAppliers(object, ['spec', 'http']) : []) {
      problems.push(
        `${where('VirtualService', this.#names.namespace, this.#vs)} spec.http: also applied by ${m}, which would put its weights back`,
      );
    }
    if (this.#dr !== undefined) {
      const dr = await readOptional<DestinationRule>(
        this.#client,
        probe(ISTIO_API_VERSION, 'DestinationRule', this.#names.namespace, this.#dr),
      );
      if (!dr)
        problems.push(`${DR_FIELD}: ${where('DestinationRule', this.#names.namespace, this.#dr)} not found`);
      else problems.push(...destinationRuleProblems(dr, this.#names));
    }
    return problems.length > 0 ? { ok: false, problems } : { ok: true };
  }
}
