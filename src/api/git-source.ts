import type { ConditionedStatus } from '../kube/conditions.js';
import {
  AGE_COLUMN,
  conditionColumn,
  conditionMessageColumn,
  duration,
  httpUrl,
  interval,
  localRef,
  statusOf,
  type LocalObjectReference,
  type SluiceObject,
} from './common.js';
import { bool, exactlyOne, obj, str, timestamp, type ResourceKind } from './schema.js';

/** Which revision of the repository to follow; exactly one field is set. */
export interface GitRef {
  /** Follow the tip of this branch. */
  branch?: string;
  /** Pin to this tag. */
  tag?: string;
  /** Follow the highest tag that satisfies this semver range, e.g. `>=1.2.0 <2.0.0`. */
  semver?: string;
  /** Pin to this commit (full SHA-1 or SHA-256). */
  commit?: string;
}

/**
 * A push webhook for a `GitSource`: the Git host POSTs to `/hooks/<namespace>/<name>` on the
 * controller's webhook address, and a valid push for the followed ref triggers a fetch at once.
 */
export interface GitSourceWebhook {
  /**
   * Secret in the GitSource's namespace whose key `token` holds the shared secret: the HMAC
   * key of GitHub's `X-Hub-Signature-256` and of the generic `X-Signature`, or the value of
   * GitLab's `X-Gitlab-Token`.
   */
  secretRef: LocalObjectReference;
}

/** What a `GitSource` fetches and how often. */
export interface GitSourceSpec {
  url: string;
  ref: GitRef;
  interval: string;
  secretRef?: LocalObjectReference;
  timeout?: string;
  suspend: boolean;
  webhook?: GitSourceWebhook;
}

/** The immutable result of one fetch: what consumers (Delivery) apply, by digest. */
export interface Artifact {
  /** `<ref name>@sha1:<commit>`, e.g. `main@sha1:4f1c…`. */
  revision: string;
  /** Content digest of the fetched tree, e.g. `sha256:…`. */
  digest: string;
  lastUpdateTime: string;
  url?: string;
  /** Directory of the artifact's files in the controller's storage (content-addressed by digest). */
  path?: string;
}

/** What the GitSource controller last fetched. */
export interface GitSourceStatus extends ConditionedStatus {
  artifact?: Artifact;
  /**
   * The value of the `sluice.dev/reconcile-requested-at` annotation the controller last
   * acted on (as Flux's `lastHandledReconcileAt`): equal to the annotation once the requested
   * reconcile ran.
   */
  lastHandledReconcileAt?: string;
}

/** A Git repository and the revision of it that Sluice follows. */
export type GitSource = SluiceObject<'GitSource', GitSourceSpec, GitSourceStatus>;

const REF_NAME_LIMIT = { minLength: 1, maxLength: 255 };

const spec = obj<GitSourceSpec>(
  'The repository, the ref to follow and how often to look for new commits.',
  {
    url: httpUrl('HTTP(S) URL of the repository, e.g. https://git.example.com/team/app.git.'),
    ref: obj<GitRef>(
      'The ref to follow: exactly one of branch, tag, semver or commit.',
      {
        branch: str('Branch whose tip is followed, e.g. main.', REF_NAME_LIMIT),
        tag: str('Tag to check out, e.g. v1.4.2.', REF_NAME_LIMIT),
        semver: str(
          'Semver range over the tags; the highest matching tag is checked out, e.g. ">=1.2.0 <2.0.0".',
          REF_NAME_LIMIT,
        ),
        commit: str('Full commit SHA (40 hex digits for SHA-1, 64 for SHA-256) to pin to.', {
          pattern: '^([0-9a-f]{40}|[0-9a-f]{64})$',
        }),
      },
      {
        'x-kubernetes-validations': [
          exactlyOne(
            ['branch', 'tag', 'semver', 'commit'],
            'ref must set exactly one of branch, tag, semver or commit',
          ),
        ],
      },
    ),
    interval: interval(
      'How often the repository is checked for new commits (a push webhook triggers a check sooner).',
      '1m',
    ),
    secretRef: localRef(
      'Secret in this namespace with HTTP credentials: keys username and password (basic auth), or bearerToken. Omit for public repositories.',
      'Secret',
    ),
    timeout: duration('Limit for one fetch; the controller uses 60s when unset.'),
    suspend: bool('Stop fetching; the last artifact stays available.', { default: false }),
    webhook: obj<GitSourceWebhook>(
      'Push webhook: the Git host POSTs to /hooks/<namespace>/<name> on the controller webhook address (GitHub X-Hub-Signature-256, GitLab X-Gitlab-Token, or a generic X-Signature: sha256=<HMAC of the body>), and a push to the followed ref triggers a fetch at once. Polling continues.',
      {
        secretRef: localRef(
          'Secret in this namespace whose key token holds the webhook secret (HMAC key, or the GitLab token).',
          'Secret',
        ),
      },
      { required: ['secretRef'] },
    ),
  },
  { required: ['url', 'ref'] },
);

const status = statusOf<GitSourceStatus>('What the GitSource controller last fetched.', {
  artifact: obj<Artifact>(
    'The last fetched revision, published for Delivery to consume by digest.',
    {
      revision: str('The ref name and commit, e.g. main@sha1:4f1c2d….', { maxLength: 512 }),
      digest: str('Content digest of the fetched tree, e.g. sha256:….', { maxLength: 128 }),
      lastUpdateTime: timestamp('When the artifact last changed.'),
      url: str('Where the artifact can be downloaded from, when it is served.', { maxLength: 2048 }),
      path: str('Directory of the artifact files in the controller storage.', { maxLength: 4096 }),
    },
    { required: ['revision', 'digest', 'lastUpdateTime'] },
  ),
  lastHandledReconcileAt: str(
    'The sluice.dev/reconcile-requested-at annotation value the controller last acted on.',
    { maxLength: 256 },
  ),
});

/** The `GitSource` kind: a repository URL, a ref and credentials → `status.artifact`. */
export const gitSourceKind: ResourceKind<'GitSource'> = {
  kind: 'GitSource',
  plural: 'gitsources',
  singular: 'gitsource',
  scope: 'Namespaced',
  shortNames: ['gs'],
  description:
    'GitSource follows a ref of a Git repository and publishes the revision it points to as status.artifact, for Deliveries to apply.',
  spec,
  status,
  printerColumns: [
    { name: 'URL', type: 'string', jsonPath: '.spec.url' },
    { name: 'Revision', type: 'string', jsonPath: '.status.artifact.revision' },
    conditionColumn('Ready'),
    conditionMessageColumn('Ready'),
    AGE_COLUMN,
  ],
};
