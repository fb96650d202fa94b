import { NOTIFY_KINDS, type NotifyKind } from './payload.js';

/** One receiver of notifications. */
export interface NotifyTarget {
  readonly kind: NotifyKind;
  readonly url: string;
}

/** The controller flag, for `parseCommandArgs`: `--notify KIND=URL`, repeatable. */
export const notifyFlag = { notify: { type: 'string', multiple: true } } as const;

/** The flag's line in the controller's usage text. */
export const notifyFlagUsage = `  --notify KIND=URL                post rollout notifications to URL; KIND is slack
                                   (Slack-compatible {"text": …}) or generic (JSON); repeatable
`;

/**
 * Parses `--notify` values (`slack=https://hooks.slack.com/…`, `generic=http://…`). Every
 * mistake — no `=`, an unknown kind, a URL that is not absolute http(s) — throws an `Error`
 * naming the flag and the offending value's kind (never the URL's path, which for Slack is
 * the secret). Duplicates are kept once.
 */
export function parseNotifyFlags(values: readonly string[] | undefined): NotifyTarget[] {
  const out: NotifyTarget[] = [];
  for (const [i, value] of (values ?? []).entries()) {
    const eq = value.indexOf('=');
    const where = `--notify #${i + 1}`;
    if (eq <= 0) throw new Error(`${where}: want KIND=URL with KIND one of ${NOTIFY_KINDS.join(', ')}`);
    const kind = value.slice(0, eq);
    const url = value.slice(eq + 1);
    if (!(NOTIFY_KINDS as readonly string[]).includes(kind)) {
      throw new Error(`${where}: unknown kind "${kind}": use one of ${NOTIFY_KINDS.join(', ')}`);
    }
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      throw new Error(`${where} (${kind}): the URL must be an absolute http:// or https:// URL`);
    }
    if (!out.some((t) => t.kind === kind && t.url === url)) out.push({ kind: kind as NotifyKind, url });
  }
  return out;
}
