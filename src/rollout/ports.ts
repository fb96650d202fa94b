/**
 * The one place the rollout controller picks a traffic router by provider name. A thin adapter
 * until `src/traffic/index.ts` (`routerFor`) lands: then this re-exports it.
 */
import { GatewayApiRouter } from '../traffic/gateway-api.js';
import { IstioRouter } from '../traffic/istio.js';
import { NginxRouter } from '../traffic/nginx.js';
import { ReplicasRouter } from '../traffic/replicas.js';
import { SmiRouter } from '../traffic/smi.js';
import { UnknownTrafficProviderError } from '../traffic/errors.js';
import type { RouterContext, TrafficRouter } from '../traffic/router.js';

/** The router of `ctx.release`'s provider; throws `UnknownTrafficProviderError` (terminal) for any other name. */
export function routerFor(ctx: RouterContext): TrafficRouter {
  const provider = ctx.release.spec.trafficRouting?.provider;
  switch (provider) {
    case 'gatewayAPI':
      return new GatewayApiRouter(ctx);
    case 'istio':
      return new IstioRouter(ctx);
    case 'smi':
      return new SmiRouter(ctx);
    case 'nginx':
      return new NginxRouter(ctx);
    case 'replicas':
      return new ReplicasRouter(ctx);
    default:
      throw new UnknownTrafficProviderError(provider);
  }
}
