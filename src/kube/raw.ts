import {
  ApiException,
  HttpMethod,
  KubeConfig,
  KubernetesObjectApi,
  type KubernetesObject,
  type KubernetesListObject,
} from '@kubernetes/client-node';
import { normalizeKubeError } from './errors.js';

type Action = 'create' | 'delete' | 'patch' | 'read' | 'list' | 'replace';

export interface RawRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
}

/**
 * Untyped access to any resource. client-node's `KubernetesObjectApi` runs every body
 * and every response through the typed model of a built-in kind, which silently drops
 * what the 1.4 models don't know (a CRD schema's `default`, `enum`, `x-kubernetes-*`;
 * newer fields of any kind — client-node #2483) and turns timestamps into `Date`s.
 * Apply, drift detection and inventories need the server's JSON exactly, so this class
 * reuses only its URL resolution (discovery, cached) and auth, and sends and parses JSON
 * itself.
 */
export class RawObjectApi extends KubernetesObjectApi {
  /** Like `KubernetesObjectApi.makeApiClient`: default namespace from the kubeconfig context. */
  static forKubeConfig(kc: KubeConfig): RawObjectApi {
    const client = kc.makeApiClient(RawObjectApi);
    client.setDefaultNamespace(kc);
    return client;
  }

  /** The REST path of `obj` for `action`, resolved through discovery (cached per apiVersion). */
  pathFor(obj: KubernetesObject, action: Action): Promise<string> {
    return this.specUriPath(obj, action);
  }

  /** Sends one request and returns the parsed JSON body; a non-2xx answer throws `ApiException` (normalise it). */
  async request<T = unknown>(req: RawRequest): Promise<T> {
    const text = await this.requestText(req, 'application/json');
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** Like `request`, for endpoints that answer text (`/metrics`, `/readyz`): the body unparsed. */
  async requestText(req: RawRequest, accept = '*/*'): Promise<string> {
    const ctx = this.configuration.baseServer.makeRequestContext(req.path, req.method as HttpMethod);
    ctx.setHeaderParam('Accept', accept);
    for (const [k, v] of Object.entries(req.query ?? {}))
      if (v !== undefined) ctx.setQueryParam(k, String(v));
    if (req.body !== undefined) {
      ctx.setHeaderParam('Content-Type', req.contentType ?? 'application/json');
      ctx.setBody(JSON.stringify(req.body));
    }
    const auth = this.configuration.authMethods.default;
    if (auth?.applySecurityAuthentication) await auth.applySecurityAuthentication(ctx);
    const res = await this.configuration.httpApi.send(ctx).toPromise();
    const text = (await res.body.text()) ?? '';
    if (res.httpStatusCode < 200 || res.httpStatusCode > 299) {
      throw new ApiException(res.httpStatusCode, `HTTP ${res.httpStatusCode}`, text, {});
    }
    return text;
  }

  /** GET the object; throws a normalised `KubeError` (check `isNotFound`). */
  async getRaw<T extends KubernetesObject>(obj: KubernetesObject): Promise<T> {
    try {
      return await this.request<T>({ method: 'GET', path: await this.pathFor(obj, 'read') });
    } catch (err) {
      throw normalizeKubeError(err, `get ${describe(obj)}`);
    }
  }

  /** LIST objects of a kind (optionally in one namespace, with a label selector), one page at a time. */
  async listRaw<T extends KubernetesObject>(
    apiVersion: string,
    kind: string,
    opts: { namespace?: string; labelSelector?: string; limit?: number; continueToken?: string } = {},
  ): Promise<KubernetesListObject<T>> {
    const probe = { apiVersion, kind, metadata: opts.namespace ? { namespace: opts.namespace } : {} };
    try {
      return await this.request<KubernetesListObject<T>>({
        method: 'GET',
        path: await this.pathFor(probe, 'list'),
        query: { labelSelector: opts.labelSelector, limit: opts.limit, continue: opts.continueToken },
      });
    } catch (err) {
      throw normalizeKubeError(err, `list ${apiVersion} ${kind}`);
    }
  }

  /**
   * A JSON merge patch (RFC 7386) of `obj`'s metadata or spec, e.g. an annotation or labels:
   * for small edits that must not take ownership of the fields an apply manages.
   */
  async mergePatch<T extends KubernetesObject>(
    obj: KubernetesObject,
    patch: object,
    opts: { fieldManager?: string } = {},
  ): Promise<T> {
    return this.request<T>({
      method: 'PATCH',
      path: await this.pathFor(obj, 'patch'),
      query: { fieldManager: opts.fieldManager },
      body: patch,
      contentType: 'application/merge-patch+json',
    });
  }

  /** Server-side apply (`application/apply-patch+yaml`; JSON is valid YAML). */
  async applyRaw<T extends KubernetesObject>(
    obj: T,
    opts: { fieldManager: string; force?: boolean; dryRun?: boolean },
  ): Promise<T> {
    return this.request<T>({
      method: 'PATCH',
      path: await this.pathFor(obj, 'patch'),
      query: {
        fieldManager: opts.fieldManager,
        force: opts.force ?? false,
        dryRun: opts.dryRun ? 'All' : undefined,
      },
      body: obj,
      contentType: 'application/apply-patch+yaml',
    });
  }

  /** DELETE with background propagation (dependents are collected by the garbage collector). */
  async deleteRaw(obj: KubernetesObject, opts: { preconditionUid?: string } = {}): Promise<void> {
    try {
      await this.request({
        method: 'DELETE',
        path: await this.pathFor(obj, 'delete'),
        body: {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          propagationPolicy: 'Background',
          ...(opts.preconditionUid ? { preconditions: { uid: opts.preconditionUid } } : {}),
        },
      });
    } catch (err) {
      throw normalizeKubeError(err, `delete ${describe(obj)}`);
    }
  }
}

/** `apps/v1 Deployment ns/name`, for error contexts and logs. */
export function describe(obj: KubernetesObject): string {
  const ns = obj.metadata?.namespace ? `${obj.metadata.namespace}/` : '';
  return `${obj.apiVersion} ${obj.kind} ${ns}${obj.metadata?.name ?? '?'}`;
}
