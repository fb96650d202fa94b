/**
 * Webhook gates: the one HTTP call a gate makes, and the payload it sends. The decision of
 * what an answer means for the release is the state machine's (machine.ts); this is the
 * thin executor.
 */
import type { CanaryGate, CanaryRelease, GatePoint } from '../api/canary-release.js';
import { parseDuration } from '../api/duration.js';

/** A gate's answer. */
export interface GateResult {
  /** True when the webhook answered 2xx. */
  readonly open: boolean;
  /** Calls made, retries included. */
  readonly attempts: number;
  /** The last answer (`HTTP 200: ok`) or error, short enough for `status.gate.message`. */
  readonly message: string;
}

/** Knobs for {@link callGate}; the defaults are for production. */
export interface CallGateOptions {
  /** Wait before retry `i` (1-based). Default 1 s × 2^(i-1), at most 10 s. */
  backoffMs?: (retry: number) => number;
  /** Aborts the whole call (the controller is stopping). */
  signal?: AbortSignal;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_RETRIES = 2;
const MESSAGE_LIMIT = 512;

/** Flagger's names of the gate points, sent as `type` so existing Flagger webhooks work unchanged. */
const FLAGGER_TYPES: Record<GatePoint, string> = {
  preRollout: 'pre-rollout',
  confirmTrafficIncrease: 'confirm-traffic-increase',
  confirmPromotion: 'confirm-promotion',
  rollback: 'rollback',
};

/** The JSON body a gate webhook receives: Flagger's webhook payload, plus Sluice's fields. */
export interface GatePayload {
  name: string;
  namespace: string;
  phase: string;
  /** Flagger's `checksum`: the template hash under test. */
  checksum: string;
  /** The Git revision under test (Sluice). */
  revision: string;
  /** Flagger's hook type (`pre-rollout`, `confirm-traffic-increase`, `confirm-promotion`, `rollback`). */
  type: string;
  gate: string;
  canaryWeight: number;
  step: string;
  metadata: Record<string, string>;
}

/** The payload for `gate` of `release`, from its status. Pure. */
export function gatePayload(
  release: Pick<CanaryRelease, 'metadata' | 'status'>,
  gate: CanaryGate,
): GatePayload {
  const s = release.status ?? {};
  return {
    name: release.metadata.name ?? '',
    namespace: release.metadata.namespace ?? '',
    phase: s.phase ?? 'Initializing',
    checksum: s.templateHash ?? '',
    revision: s.revision ?? '',
    type: FLAGGER_TYPES[gate.at],
    gate: gate.name,
    canaryWeight: s.canaryWeight ?? 0,
    step: s.step ?? '',
    metadata: {},
  };
}

/** Result of one call: `retry` when another attempt may help (network, timeout, 5xx). */
type Attempt = { open: boolean; retry: boolean; message: string };

/**
 * Calls a webhook gate: POSTs `payload` as JSON to `gate.webhook.url`, each call bounded by
 * `gate.webhook.timeout` (default 10 s). A 2xx opens the gate; a 4xx (or 3xx the client did
 * not follow) closes it at once — the hook has answered, asking again would not change it;
 * a network error, a timeout or a 5xx is retried `gate.webhook.retries` times (default 2)
 * with backoff, then the gate counts as closed. Never throws: the answer, or the last
 * error, is in `message`. A manual gate is never open here (it waits for `sluice promote`).
 */
export async function callGate(
  gate: CanaryGate,
  payload: object,
  opts: CallGateOptions = {},
): Promise<GateResult> {
  const hook = gate.webhook;
  if (gate.type !== 'webhook' || !hook) {
    return {
      open: false,
      attempts: 0,
      message: `gate ${gate.name} is manual: run sluice promote to open it`,
    };
  }
  const timeoutMs = (hook.timeout ? parseDuration(hook.timeout) : undefined) ?? DEFAULT_TIMEOUT_MS;
  const retries = hook.retries ?? DEFAULT_RETRIES;
  const backoff = opts.backoffMs ?? ((i: number) => Math.min(10_000, 1000 * 2 ** (i - 1)));
  const body = JSON.stringify(payload);
  let last: Attempt = { open: false, retry: false, message: '' };
  let attempts = 0;
  for (let i = 0; i <= retries; i++) {
    if (i > 0) {
      await sleep(backoff(i), opts.signal);
      if (opts.signal?.aborted) break;
    }
    attempts++;
    last = await attempt(hook.url, body, timeoutMs, opts.signal);
    if (!last.retry) break;
  }
  const tries = attempts > 1 ? ` (after ${attempts} attempts)` : '';
  return { open: last.open, attempts, message: truncate(`${last.message}${tries}`) };
}

async function attempt(url: string, body: string, timeoutMs: number, outer?: AbortSignal): Promise<Attempt> {
  const signal = outer
    ? AbortSignal.any([outer, AbortSignal.timeout(timeoutMs)])
    : AbortSignal.timeout(timeoutMs);
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'User-Agent': 'sluice' },
      body,
      signal,
      redirect: 'manual',
    });
    // Read the body under the same deadline: a hook that sends headers and stalls is a timeout.
    const text = (await res.text()).trim().replace(/\s+/g, ' ');
    const answer = `HTTP ${res.status}${text ? `: ${text}` : ''}`;
    if (res.status >= 200 && res.status < 300) return { open: true, retry: false, message: answer };
    return { open: false, retry: res.status >= 500, message: answer };
  } catch (err) {
    const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
    if (e.name === 'TimeoutError' || (e.name === 'AbortError' && !outer?.aborted)) {
      return { open: false, retry: true, message: `no answer within ${timeoutMs} ms` };
    }
    const detail = e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
    return { open: false, retry: !outer?.aborted, message: `call failed: ${detail}` };
  }
}

function truncate(text: string): string {
  return text.length <= MESSAGE_LIMIT ? text : `${text.slice(0, MESSAGE_LIMIT - 1)}…`;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
