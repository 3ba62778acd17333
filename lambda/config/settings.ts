/**
 * Runtime knobs, read from the environment once per cold start. Every one has a default, so a
 * bare environment works.
 */
export interface Settings {
  /** How long a looked-up key is trusted before the table is read again. */
  keyCacheSeconds: number;
  /**
   * The same for sign-in sessions and people: a session revoked on another instance (sign-out,
   * reuse, an operator) stops working there within this; on the instance that revoked it, at once.
   */
  sessionCacheSeconds: number;
  /** Largest request body accepted (Anthropic's own limit is 32 MB; Lambda caps at 6 MB). */
  maxBodyBytes: number;
  /** Streaming requests: longest wait for the upstream's response headers. */
  firstByteTimeoutMs: number;
  /** Safety margin kept before the function timeout, to end streams cleanly. */
  deadlineMarginMs: number;
  /** A stream whose upstream sends nothing for this long is ended with an error. */
  upstreamIdleTimeoutMs: number;
  /** Translated streams: a keepalive goes to the client after this much silence. */
  keepaliveMs: number;
  /** `lastUsedAt` is written at most this often per key. */
  lastUsedIntervalSeconds: number;
  /** When set, requests must carry `x-origin-verify` with this value (CloudFront in front). */
  originSecret: string | undefined;
  /**
   * 0 (Lambda): each request's usage is written before its invocation ends. Above 0 (npm start):
   * usage is added up per key, model and day and written at this interval.
   */
  usageFlushMs: number;
  /** When set (on Lambda), the request log line is also a CloudWatch Embedded Metric Format record in this namespace. */
  metricsNamespace: string | undefined;
  /**
   * 0 (off): stream writes go out as they are. Above 0: every stream write shorter than this is
   * padded to this many bytes with an SSE comment line, for a path that holds back small writes
   * (reported of Lambda Function URLs; `npm run smoke` measures whether yours does).
   */
  streamPadBytes: number;
  /**
   * Model requests a key with a token or dollar budget may have in progress at once, across
   * every instance (0: no default cap); a key's own `maxInFlight` limit wins. Budgets are checked
   * before a request and charged after it, so this bounds how far concurrent requests can
   * overshoot one: at most this many requests' cost.
   */
  maxInFlightPerKey: number;
}

export const DEFAULT_SETTINGS: Settings = {
  keyCacheSeconds: 30,
  sessionCacheSeconds: 10,
  maxBodyBytes: 32 * 1024 * 1024,
  firstByteTimeoutMs: 120_000,
  deadlineMarginMs: 2_000,
  upstreamIdleTimeoutMs: 300_000,
  keepaliveMs: 15_000,
  lastUsedIntervalSeconds: 300,
  originSecret: undefined,
  usageFlushMs: 0,
  metricsNamespace: undefined,
  streamPadBytes: 0,
  // Claude Code runs up to 10 tools at once (CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY), each subagent a request of its own.
  maxInFlightPerKey: 10,
};

export function settingsFromEnv(env: NodeJS.ProcessEnv): Settings {
  return {
    keyCacheSeconds: number(env, 'GATEWAY_KEY_CACHE_SECONDS', DEFAULT_SETTINGS.keyCacheSeconds),
    sessionCacheSeconds: number(env, 'GATEWAY_SESSION_CACHE_SECONDS', DEFAULT_SETTINGS.sessionCacheSeconds),
    maxBodyBytes: number(env, 'GATEWAY_MAX_BODY_BYTES', DEFAULT_SETTINGS.maxBodyBytes),
    firstByteTimeoutMs: number(env, 'GATEWAY_FIRST_BYTE_TIMEOUT_MS', DEFAULT_SETTINGS.firstByteTimeoutMs),
    deadlineMarginMs: number(env, 'GATEWAY_DEADLINE_MARGIN_MS', DEFAULT_SETTINGS.deadlineMarginMs),
    upstreamIdleTimeoutMs: number(env, 'GATEWAY_UPSTREAM_IDLE_TIMEOUT_MS', DEFAULT_SETTINGS.upstreamIdleTimeoutMs),
    keepaliveMs: number(env, 'GATEWAY_KEEPALIVE_MS', DEFAULT_SETTINGS.keepaliveMs),
    lastUsedIntervalSeconds: number(env, 'GATEWAY_LAST_USED_INTERVAL_SECONDS', DEFAULT_SETTINGS.lastUsedIntervalSeconds),
    originSecret: env.GATEWAY_ORIGIN_SECRET || undefined,
    usageFlushMs: number(env, 'GATEWAY_USAGE_FLUSH_MS', DEFAULT_SETTINGS.usageFlushMs),
    metricsNamespace: env.GATEWAY_METRICS_NAMESPACE || undefined,
    streamPadBytes: number(env, 'GATEWAY_STREAM_PAD_BYTES', DEFAULT_SETTINGS.streamPadBytes),
    maxInFlightPerKey: number(env, 'GATEWAY_MAX_IN_FLIGHT_PER_KEY', DEFAULT_SETTINGS.maxInFlightPerKey),
  };
}

function number(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return value;
}
