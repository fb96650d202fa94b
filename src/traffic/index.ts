/**
 * The traffic routers and the one factory that picks one by `spec.trafficRouting.provider`.
 * Adding a provider touches its file, one line here and its tests (Flagger's seam), and an
 * unknown provider is an error, never a silent default.
 */
import type { TrafficProvider } from '../api/canary-release.js';
import { UnknownTrafficProviderError } from './errors.js';
import { GatewayApiRouter } from './gateway-api.js';
import { IstioRouter } from './istio.js';
import { NginxRouter } from './nginx.js';
import { ReplicasRouter } from './replicas.js';
import type { RouterContext, TrafficRouter } from './router.js';
import { SmiRouter } from './smi.js';

export type { RouterCheck, RouterContext, TrafficRouter, TrafficSplit } from './router.js';
export {
  RouterConfigError,
  TrafficRouteError,
  UnknownTrafficProviderError,
  InvalidSplitError,
} from './errors.js';

const ROUTERS: Readonly<Record<TrafficProvider, new (ctx: RouterContext) => TrafficRouter>> = {
  gatewayAPI: GatewayApiRouter,
  istio: IstioRouter,
  smi: SmiRouter,
  nginx: NginxRouter,
  replicas: ReplicasRouter,
};

/**
 * The router for `ctx.release`. Throws {@link UnknownTrafficProviderError} for a provider
 * Sluice has no router for, and `RouterConfigError` (a `FieldError` naming the field) when the
 * provider's block is missing; both are terminal — the spec must change.
 */
export function routerFor(ctx: RouterContext): TrafficRouter {
  const provider: unknown = ctx.release.spec.trafficRouting?.provider;
  const Router = Object.hasOwn(ROUTERS, String(provider)) ? ROUTERS[provider as TrafficProvider] : undefined;
  if (!Router) throw new UnknownTrafficProviderError(provider);
  return new Router(ctx);
}
