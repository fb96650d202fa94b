/**
 * NGINX Ingress router: beside the Ingress the user writes, Sluice keeps `<ingress>-canary`, a
 * copy whose backends point at the canary Service, marked with ingress-nginx's canary
 * annotations (`nginx.ingress.kubernetes.io/canary: "true"`, `canary-weight: "<percent>"`).
 * ingress-nginx then sends that percent of the host/path's requests to the canary.
 *
 * The copy is rebuilt from the live original on every `set`, so a Git change to the original
 * (hosts, paths, class, TLS) reaches the canary Ingress with the next step. At canary weight 0
 * the canary Ingress is kept, with weight "0": it then routes nothing, `get` still tells "0%"
 * from "never set up", a release does not cost ingress-nginx a delete and a re-create (two
 * reloads) per run, and nothing is deleted on doubt (a controller killed between a delete and
 * the next step would leave the route state unknown). Removing it belongs to the release's
 * cleanup when the CanaryRelease itself goes away.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ClusterClient } from '../kube/clients.js';
import type { ReleaseNames } from '../rollout/names.js';
import { RouterConfigError, TrafficRouteError } from './errors.js';
import { applyAsRollout, probe, readOptional, where } from './kube.js';
import { MANAGED_BY, MANAGED_BY_LABEL } from './labels.js';
import type { RouterCheck, RouterContext, TrafficRouter, TrafficSplit } from './router.js';
import { checkSplit, splitFromWeights } from './split.js';

const INGRESS_API_VERSION = 'networking.k8s.io/v1';
const REF_FIELD = 'spec.trafficRouting.nginx.ingress.name';
export const CANARY_ANNOTATION = 'nginx.ingress.kubernetes.io/canary';
export const CANARY_WEIGHT_ANNOTATION = 'nginx.ingress.kubernetes.io/canary-weight';
export const CANARY_WEIGHT_TOTAL_ANNOTATION = 'nginx.ingress.kubernetes.io/canary-weight-total';
/** Annotations never copied to the canary Ingress: client-side apply's record, and the canary set. */
const NOT_COPIED =
  /^(kubectl\.kubernetes\.io\/last-applied-configuration|nginx\.ingress\.kubernetes\.io\/canary.*)$/;

export interface IngressBackend {
  readonly service?: { readonly name: string; readonly port?: unknown };
  readonly [field: string]: unknown;
}

export interface IngressPath {
  readonly backend: IngressBackend;
  readonly [field: string]: unknown;
}

export interface IngressRule {
  readonly host?: string;
  readonly http?: { readonly paths: readonly IngressPath[] };
  readonly [field: string]: unknown;
}

export interface Ingress extends KubernetesObject {
  spec?: {
    defaultBackend?: IngressBackend;
    rules?: IngressRule[];
    [field: string]: unknown;
  };
}

/** The canary Ingress's name for the user's Ingress `ingress`. */
export function canaryIngressName(ingress: string): string {
  return `${ingress}-canary`;
}

/** True when `backend` sends to the stable side: the apex or the primary Service. */
function isStable(backend: IngressBackend | undefined, names: ReleaseNames): boolean {
  const svc = backend?.service?.name;
  return svc === names.apexService || svc === names.primaryService;
}

function toCanary(backend: IngressBackend, names: ReleaseNames): IngressBackend {
  return { ...backend, service: { ...backend.service!, name: names.canaryService } };
}

/** What is wrong with the user's Ingress for a canary copy; empty when nothing is. */
export function ingressProblems(ingress: Ingress, names: ReleaseNames): string[] {
  const at = where('Ingress', names.namespace, ingress.metadata?.name ?? '?');
  const problems: string[] = [];
  if (ingress.metadata?.annotations?.[CANARY_ANNOTATION] === 'true') {
    problems.push(
      `${at} metadata.annotations.${CANARY_ANNOTATION}: the referenced Ingress is itself a canary`,
    );
  }
  const stable =
    isStable(ingress.spec?.defaultBackend, names) ||
    (ingress.spec?.rules ?? []).some((r) => (r.http?.paths ?? []).some((p) => isStable(p.backend, names)));
  if (!stable) {
    problems.push(
      `${at} spec.rules: no backend routes to Service ${names.apexService} or ${names.primaryService}`,
    );
  }
  return problems;
}

/** A live Ingress with the canary's name that Sluice did not make: it must not be overwritten. */
export function foreignCanaryProblems(canary: Ingress, names: ReleaseNames): string[] {
  if (canary.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY) return [];
  const at = where('Ingress', names.namespace, canary.metadata?.name ?? '?');
  // The name is derived, not chosen by the user: a collision is plausible, an overwrite destructive.
  return [
    `${at} metadata.labels.${MANAGED_BY_LABEL}: exists and was not made by Sluice; the canary Ingress would overwrite it`,
  ];
}

/**
 * The canary Ingress for `split`: `original`'s spec with only the host/paths that go to the
 * apex or primary Service, each sent to the canary Service instead; `original`'s annotations
 * (but its canary ones and kubectl's record) plus the canary annotations. Undefined when
 * `current` (the live canary Ingress) already is that. Throws {@link TrafficRouteError} when
 * `original` has nothing to copy or `current` is an Ingress Sluice did not make.
 */
export function desiredCanaryIngress(
  split: TrafficSplit,
  names: ReleaseNames,
  original: Ingress,
  current: Ingress | undefined,
): Ingress | undefined {
  checkSplit(split);
  const problems = ingressProblems(original, names);
  if (current) problems.push(...foreignCanaryProblems(current, names));
  if (problems.length > 0) throw new TrafficRouteError(problems);
  const { defaultBackend, rules, ...rest } = original.spec ?? {};
  const spec: NonNullable<Ingress['spec']> = { ...rest };
  if (defaultBackend && isStable(defaultBackend, names))
    spec.defaultBackend = toCanary(defaultBackend, names);
  const canaryRules = (rules ?? []).flatMap((rule) => {
    const paths = (rule.http?.paths ?? []).filter((p) => isStable(p.backend, names));
    if (paths.length === 0) return [];
    return [
      {
        ...rule,
        http: { ...rule.http, paths: paths.map((p) => ({ ...p, backend: toCanary(p.backend, names) })) },
      },
    ];
  });
  if (canaryRules.length > 0) spec.rules = canaryRules;
  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries(original.metadata?.annotations ?? {})) {
    if (!NOT_COPIED.test(k)) annotations[k] = v;
  }
  annotations[CANARY_ANNOTATION] = 'true';
  annotations[CANARY_WEIGHT_ANNOTATION] = String(split.canary);
  const labels = { [MANAGED_BY_LABEL]: MANAGED_BY };
  const desired: Ingress = {
    apiVersion: INGRESS_API_VERSION,
    kind: 'Ingress',
    metadata: {
      name: canaryIngressName(original.metadata?.name ?? ''),
      namespace: names.namespace,
      labels,
      annotations,
    },
    spec,
  };
  if (
    current &&
    isDeepStrictEqual(current.spec, spec) &&
    contains(current.metadata?.annotations, annotations) &&
    contains(current.metadata?.labels, labels)
  ) {
    return undefined;
  }
  return desired;
}

function contains(have: Record<string, string> | undefined, want: Record<string, string>): boolean {
  return Object.entries(want).every(([k, v]) => have?.[k] === v);
}

/** The split a canary Ingress routes: its canary weight out of its weight total (default 100). */
export function canaryIngressSplit(canary: Ingress): TrafficSplit | undefined {
  const a = canary.metadata?.annotations ?? {};
  if (a[CANARY_ANNOTATION] !== 'true') return undefined;
  const weight = Number(a[CANARY_WEIGHT_ANNOTATION] ?? '0');
  const total = Number(a[CANARY_WEIGHT_TOTAL_ANNOTATION] ?? '100');
  if (!Number.isFinite(weight) || !Number.isFinite(total)) return undefined;
  return splitFromWeights(Math.max(0, total - weight), Math.min(weight, total));
}

/** {@link TrafficRouter} that keeps a canary Ingress beside the user's Ingress. */
export class NginxRouter implements TrafficRouter {
  readonly provider = 'nginx' as const;
  readonly #client: ClusterClient;
  readonly #names: ReleaseNames;
  readonly #ingress: string;

  constructor(ctx: RouterContext) {
    const name = ctx.release.spec.trafficRouting.nginx?.ingress?.name;
    if (!name) throw new RouterConfigError(REF_FIELD, 'Required value: the Ingress to make a canary copy of');
    this.#client = ctx.client;
    this.#names = ctx.names;
    this.#ingress = name;
  }

  #ref(name: string): KubernetesObject {
    return probe(INGRESS_API_VERSION, 'Ingress', this.#names.namespace, name);
  }

  #missing(): string {
    return `${REF_FIELD}: ${where('Ingress', this.#names.namespace, this.#ingress)} not found`;
  }

  /**
   * Reads the original and the canary Ingress first and writes only when the canary one
   * differs. Forced: the canary Ingress is Sluice's alone (a same-named Ingress Sluice did not
   * make is refused, never taken over), so no other manager's value may hold it back.
   */
  async set(split: TrafficSplit): Promise<void> {
    checkSplit(split);
    const original = await readOptional<Ingress>(this.#client, this.#ref(this.#ingress));
    if (!original) throw new TrafficRouteError([this.#missing()]);
    const name = canaryIngressName(this.#ingress);
    const current = await readOptional<Ingress>(this.#client, this.#ref(name));
    const body = desiredCanaryIngress(split, this.#names, original, current);
    if (body) await applyAsRollout(this.#client, body, { force: true });
  }

  async get(): Promise<TrafficSplit | undefined> {
    const canary = await readOptional<Ingress>(this.#client, this.#ref(canaryIngressName(this.#ingress)));
    return canary && canaryIngressSplit(canary);
  }

  async verify(): Promise<RouterCheck> {
    const original = await readOptional<Ingress>(this.#client, this.#ref(this.#ingress));
    const problems = original ? ingressProblems(original, this.#names) : [this.#missing()];
    const canary = await readOptional<Ingress>(this.#client, this.#ref(canaryIngressName(this.#ingress)));
    if (canary) problems.push(...foreignCanaryProblems(canary, this.#names));
    return problems.length > 0 ? { ok: false, problems } : { ok: true };
  }
}
