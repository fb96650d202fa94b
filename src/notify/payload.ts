/**
 * What a notification says, and how each kind of receiver wants it. Pure.
 */

/** One thing on-call should hear about a release: a phase change, a rollback, a promotion. */
export interface Notification {
  namespace: string;
  name: string;
  /** CamelCase, as the Event's reason (`Promoted`, `AnalysisFailed`, `RolledBack`). */
  reason: string;
  message: string;
  /** The release's phase after what happened. */
  phase: string;
  severity: 'info' | 'warning';
}

/** The receivers Sluice can post to. */
export type NotifyKind = 'slack' | 'generic';
export const NOTIFY_KINDS: readonly NotifyKind[] = ['slack', 'generic'];

/**
 * The body for a Slack-compatible incoming webhook (Slack, Mattermost, Rocket.Chat, Discord's
 * `/slack` endpoint): one `text` with the release, the phase, the reason and the message.
 */
export function slackPayload(n: Notification): { text: string } {
  const icon = n.severity === 'warning' ? ':warning:' : ':information_source:';
  return {
    text: `${icon} CanaryRelease *${n.namespace}/${n.name}* is ${n.phase} (${n.reason}): ${n.message}`,
  };
}

/** The body for a generic JSON webhook: every field, flat, with the kind and a timestamp. */
export function genericPayload(n: Notification, at: Date): Record<string, string> {
  return {
    kind: 'CanaryRelease',
    namespace: n.namespace,
    name: n.name,
    phase: n.phase,
    reason: n.reason,
    message: n.message,
    severity: n.severity,
    timestamp: at.toISOString(),
  };
}
