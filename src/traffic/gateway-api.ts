/**
 * Gateway API router: sets the `weight` of the HTTPRoute backendRefs that point at the primary
 * and canary Services.
 *
 * Field ownership. In the HTTPRoute CRD (gateway-api v1.4, v1 and v1beta1 alike) `spec.rules`
 * and each rule's `backendRefs` are `x-kubernetes-list-type: atomic`: server-side apply owns and
 * replaces either list as one value, so no manager can own just a weight. Sluice therefore
 * applies the whole `spec.rules` list, rebuilt from the live object with only the two weights
 * changed, as `sluice-rollout` with `force` — the Delivery (`sluice-delivery`) owns the list
 * from Git, and without force the apply is a conflict. Taking it over is what keeps the weights:
 * on its next sync the Delivery's `planOwnership` sees another *apply* manager holding
 * `spec.rules` and leaves the list out of its apply (reported as yielded), so it neither
 * conflicts nor resets the weights. The price: while `sluice-rollout` holds `spec.rules`, a Git
 * change to those rules (matches, filters, other backends) is not applied either. Because the
 * write rebuilds the list from what it read, it is conditional on the resourceVersion it read
 * (a conflict re-reads and retries) and never overwrites an edit it did not see.
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

export const HTTP_ROUTE_API_VERSION = 'gateway.networking.k8s.io/v1';
const REF_FIELD = 'spec.trafficRouting.gatewayAPI.httpRoute.name';

/** One `backendRefs` entry; fields Sluice does not read are carried through untouched. */
export interface BackendRef {
  readonly group?: string;
  readonly kind?: string;
  readonly name: string;
  readonly namespace?: string;
  readonly port?: number;
  readonly weight?: number;
  readonly [field: string]: unknown;
}

export interface HttpRouteRule {
  readonly backendRefs?: readonly BackendRef[];
  readonly [field: string]: unknown;
}

export interface HttpRoute extends KubernetesObject {
  spec?: { rules?: HttpRouteRule[]; [field: string]: unknown };
}

/** True when `ref` names the core Service `service` in the route's namespace (the defaults spelled out). */
function pointsAt(ref: BackendRef, service: string, namespace: string): boolean {
  return (
    (ref.group ?? '') === '' &&
    (ref.kind ?? 'Service') === 'Service' &&
    ref.name === service &&
    (ref.namespace ?? namespace) === namespace
  );
}

/** The indexes of the rules that have backendRefs to both the primary and the canary Service. */
function splitRules(route: HttpRoute, names: ReleaseNames): number[] {
  const rules = route.spec?.rules ?? [];
  const out: number[] = [];
  rules.forEach((rule, i) => {
    const refs = rule.backendRefs ?? [];
    const primary = refs.some((r) => pointsAt(r, names.primaryService, names.namespace));
    const canary = refs.some((r) => pointsAt(r, names.canaryService, names.namespace));
    if (primary && canary) out.push(i);
  });
  return out;
}

/** What is wrong with `route` for splitting between the two Services; empty when nothing is. */
export function httpRouteProblems(route: HttpRoute, names: ReleaseNames): string[] {
  const at = where('HTTPRoute', names.namespace, route.metadata?.name ?? '?');
  if (splitRules(route, names).length > 0) return [];
  const problems = [
    `${at} spec.rules: no rule has backendRefs to both Service ${names.primaryService} and Service ${names.canaryService}`,
  ];
  (route.spec?.rules ?? []).forEach((rule, i) => {
    const refs = rule.backendRefs ?? [];
    const primary = refs.some((r) => pointsAt(r, names.primaryService, names.namespace));
    const canary = refs.some((r) => pointsAt(r, names.canaryService, names.namespace));
    if (primary !== canary) {
      const [has, lacks] = primary
        ? [names.primaryService, names.canaryService]
        : [names.canaryService, names.primaryService];
      problems.push(`${at} spec.rules[${i}].backendRefs: references ${has} but not ${lacks}`);
    }
  });
  return problems;
}

/** The split the route sends now: the weights of the first rule that has both Services. */
export function httpRouteSplit(route: HttpRoute, names: ReleaseNames): TrafficSplit | undefined {
  const first = splitRules(route, names)[0];
  if (first === undefined) return undefined;
  const refs = route.spec?.rules?.[first]?.backendRefs ?? [];
  // The CRD defaults an unset weight to 1.
  const weightOf = (service: string) =>
    refs.filter((r) => pointsAt(r, service, names.namespace)).reduce((n, r) => n + (r.weight ?? 1), 0);
  return splitFromWeights(weightOf(names.primaryService), weightOf(names.canaryService));
}

/**
 * The apply body that routes `split` through `current`: `spec.rules` as live, with the weight
 * of every backendRef to the primary or canary Service set (in every rule that has both), and
 * every other rule, backendRef and field as it is. Undefined when `current` already routes
 * `split` — no write. Throws {@link TrafficRouteError} when no rule has both Services.
 */
export function desiredHttpRoute(
  split: TrafficSplit,
  names: ReleaseNames,
  current: HttpRoute,
): HttpRoute | undefined {
  checkSplit(split);
  const problems = httpRouteProblems(current, names);
  if (problems.length > 0) throw new TrafficRouteError(problems);
  const targets = new Set(splitRules(current, names));
  const live = current.spec?.rules ?? [];
  const rules = live.map((rule, i) => {
    if (!targets.has(i)) return rule;
    const backendRefs = (rule.backendRefs ?? []).map((ref) => {
      if (pointsAt(ref, names.primaryService, names.namespace)) return { ...ref, weight: split.primary };
      if (pointsAt(ref, names.canaryService, names.namespace)) return { ...ref, weight: split.canary };
      return ref;
    });
    return { ...rule, backendRefs };
  });
  if (isDeepStrictEqual(rules, live)) return undefined;
  return {
    apiVersion: HTTP_ROUTE_API_VERSION,
    kind: 'HTTPRoute',
    metadata: { name: current.metadata?.name, namespace: names.namespace },
    spec: { rules },
  };
}

/** {@link TrafficRouter} over a Gateway API HTTPRoute the user writes (in Git, usually). */
export class GatewayApiRouter implements TrafficRouter {
  readonly provider = 'gatewayAPI' as const;
  readonly #client: ClusterClient;
  readonly #names: ReleaseNames;
  readonly #route: string;

  constructor(ctx: RouterContext) {
    const name = ctx.release.spec.trafficRouting.gatewayAPI?.httpRoute?.name;
    if (!name) throw new RouterConfigError(REF_FIELD, 'Required value: the HTTPRoute to set weights on');
    this.#client = ctx.client;
    this.#names = ctx.names;
    this.#route = name;
  }

  #read(): Promise<HttpRoute | undefined> {
    return readOptional<HttpRoute>(
      this.#client,
      probe(HTTP_ROUTE_API_VERSION, 'HTTPRoute', this.#names.namespace, this.#route),
    );
  }

  #missing(): string {
    return `${REF_FIELD}: ${where('HTTPRoute', this.#names.namespace, this.#route)} not found`;
  }

  /** Reads first and writes only when a weight differs, so a repeated `set` sends no write. */
  async set(split: TrafficSplit): Promise<void> {
    checkSplit(split);
    await retryOnConflict(async () => {
      const current = await this.#read();
      if (!current) throw new TrafficRouteError([this.#missing()]);
      const body = desiredHttpRoute(split, this.#names, current);
      if (!body) return;
      await applyAsRollout(this.#client, body, {
        force: true,
        resourceVersion: current.metadata?.resourceVersion,
      });
    });
  }

  async get(): Promise<TrafficSplit | undefined> {
    const current = await this.#read();
    return current && httpRouteSplit(current, this.#names);
  }

  async verify(): Promise<RouterCheck> {
    const { object: current, notServed } = await readForVerify<HttpRoute>(
      this.#client,
      probe(HTTP_ROUTE_API_VERSION, 'HTTPRoute', this.#names.namespace, this.#route),
      'spec.trafficRouting.provider',
    );
    if (notServed) return { ok: false, problems: [`${notServed} (Gateway API CRDs not installed)`] };
    if (!current) return { ok: false, problems: [this.#missing()] };
    const problems = httpRouteProblems(current, this.#names);
    for (const m of otherAppliers(current, ['spec', 'rules'])) {
      problems.push(
        `${where('HTTPRoute', this.#names.namespace, this.#route)} spec.rules: also applied by ${m}, which would put its weights back`,
      );
    }
    return problems.length > 0 ? { ok: false, problems } : { ok: true };
  }
}
