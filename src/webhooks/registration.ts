/**
 * Tells the apiserver where the webhooks are and which CA to trust: the CanaryRelease CRD's
 * conversion client config and the ValidatingWebhookConfiguration, both with the caBundle.
 * The objects are pure functions of (endpoint, caBundle); the writers are thin.
 */
import { CONVERSION_PATH, kindInfo } from '../api/crds.js';
import { serverSideApply } from '../kube/apply.js';
import type { ClusterClient } from '../kube/clients.js';
import { isNotFound, normalizeKubeError } from '../kube/errors.js';
import type { WebhookClientConfig } from '../api/schema.js';
import { WEBHOOK_PATHS } from './server.js';

/** Field manager of what this module writes. */
export const WEBHOOK_FIELD_MANAGER = 'sluice-webhooks';
/** Name of the ValidatingWebhookConfiguration. */
export const VALIDATING_WEBHOOK_CONFIGURATION = 'sluice-validation';

/** Where the apiserver reaches the webhook server. */
export type WebhookEndpoint =
  | { url: string } // out of cluster: https://127.0.0.1:<port>
  | { service: { namespace: string; name: string; port: number } }; // in cluster

/** The client config for `path` at `endpoint`, trusting `caBundle` (base64 PEM). */
export function clientConfig(endpoint: WebhookEndpoint, path: string, caBundle: string): WebhookClientConfig {
  return 'url' in endpoint
    ? { url: `${endpoint.url.replace(/\/$/, '')}${path}`, caBundle }
    : { service: { ...endpoint.service, path }, caBundle };
}

/**
 * The ValidatingWebhookConfiguration. failurePolicy, per webhook (README, "Webhooks"):
 * - CanaryRelease: `Fail`. A release that passes admission is trusted by the rollout to steer
 *   production traffic; one that slipped through while the webhook was down would fail
 *   mid-rollout instead of at `kubectl apply`. Only `canaryreleases` (not `/status`) is
 *   matched, so the controller's status writes never depend on the webhook.
 * - Delivery: `Ignore`. Deliveries are the GitOps path that would ship a fix for the
 *   webhook itself; an outage must not stop Git from syncing, and the Delivery controller
 *   reports the same errors as a Stalled condition.
 * `timeoutSeconds: 5` (≤ 10): the checks are local except one MetricTemplate list.
 */
export function validatingWebhookConfiguration(endpoint: WebhookEndpoint, caBundle: string): object {
  const cr = kindInfo('CanaryRelease');
  const dl = kindInfo('Delivery');
  const common = {
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    timeoutSeconds: 5,
    matchPolicy: 'Equivalent',
  };
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: VALIDATING_WEBHOOK_CONFIGURATION, labels: { 'app.kubernetes.io/part-of': 'sluice' } },
    webhooks: [
      {
        name: `${cr.plural}.validation.${cr.group}`,
        clientConfig: clientConfig(endpoint, WEBHOOK_PATHS.canaryReleases, caBundle),
        rules: [
          {
            apiGroups: [cr.group],
            // Both versions: a v1alpha1 request is checked in its own terms (threshold rule).
            apiVersions: ['v1', 'v1alpha1'],
            operations: ['CREATE', 'UPDATE'],
            resources: [cr.plural],
            scope: 'Namespaced',
          },
        ],
        failurePolicy: 'Fail',
        ...common,
      },
      {
        name: `${dl.plural}.validation.${dl.group}`,
        clientConfig: clientConfig(endpoint, WEBHOOK_PATHS.deliveries, caBundle),
        rules: [
          {
            apiGroups: [dl.group],
            apiVersions: ['v1'],
            operations: ['CREATE', 'UPDATE'],
            resources: [dl.plural],
            scope: 'Namespaced',
          },
        ],
        failurePolicy: 'Ignore',
        ...common,
      },
    ],
  };
}

/** The merge patch that points the CanaryRelease CRD's conversion at `endpoint`. */
export function conversionPatch(endpoint: WebhookEndpoint, caBundle: string): object {
  const cc = clientConfig(endpoint, CONVERSION_PATH, caBundle);
  return {
    spec: {
      conversion: {
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: ['v1'],
          // Merge patch: the other way of addressing must be removed explicitly.
          clientConfig: 'url' in cc ? { ...cc, service: null } : { ...cc, url: null },
        },
      },
    },
  };
}

/** Writes the conversion client config and caBundle into the CanaryRelease CRD. */
export async function registerConversionWebhook(
  client: ClusterClient,
  endpoint: WebhookEndpoint,
  caBundle: string,
): Promise<void> {
  const name = kindInfo('CanaryRelease').crdName;
  try {
    await client.raw.mergePatch(
      { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } },
      conversionPatch(endpoint, caBundle),
      { fieldManager: WEBHOOK_FIELD_MANAGER },
    );
  } catch (err) {
    throw normalizeKubeError(err, `write conversion webhook into CRD ${name}`);
  }
}

/** Creates or updates the ValidatingWebhookConfiguration. */
export async function registerValidatingWebhooks(
  client: ClusterClient,
  endpoint: WebhookEndpoint,
  caBundle: string,
): Promise<void> {
  await serverSideApply(client, validatingWebhookConfiguration(endpoint, caBundle) as never, {
    fieldManager: WEBHOOK_FIELD_MANAGER,
    force: true,
  });
}

/** Deletes the ValidatingWebhookConfiguration (tests, uninstall); absent is fine. */
export async function unregisterValidatingWebhooks(client: ClusterClient): Promise<void> {
  try {
    await client.raw.deleteRaw({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: VALIDATING_WEBHOOK_CONFIGURATION },
    });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}
