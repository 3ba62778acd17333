import type { HandlerResponse } from '../deps.ts';
import type { IdentityContext } from './context.ts';
import { bodyBytes, type IdentityRequest } from './http.ts';

/**
 * `POST /first/v1/{metrics,logs,traces}` (bearer, at most 1 MiB): Claude Code's OpenTelemetry,
 * OTLP/HTTP in protobuf or JSON. Always answered 200 at once (Claude Code's gateway protocol: a
 * 404 or an error makes its exporter complain on every flush); the body is forwarded, byte for
 * byte, to the configured collector (`identity.otlp`) after the answer, or discarded when there
 * is none. A forward that fails or takes longer than FORWARD_TIMEOUT_MS is logged and dropped:
 * telemetry never costs the client a request.
 */
export function telemetry(context: IdentityContext, request: IdentityRequest): HandlerResponse {
  const signal = request.path.slice(request.path.lastIndexOf('/') + 1);
  const type = request.event.headers['content-type'] ?? '';
  const protobuf = /^application\/x-protobuf\s*(;|$)/i.test(type);
  const forwarder = context.telemetry;
  if (forwarder && (protobuf || /^application\/json\s*(;|$)/i.test(type)) && bodyBytes(request.event) > 0) {
    const { event } = request;
    const body = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64') : Buffer.from(event.body ?? '', 'utf8');
    const encoding = event.headers['content-encoding'];
    request.defer(() => forwarder.forward(signal, body, type, encoding));
  }
  // An OTLP/HTTP success answers in the request's encoding: an empty export response.
  return protobuf ? { statusCode: 200, headers: { 'content-type': 'application/x-protobuf' }, body: '' } : { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' };
}

/** How long a forward may take (it runs after the answer; on Lambda, within the invocation). */
export const FORWARD_TIMEOUT_MS = 3_000;
/** Forwards under way at once per instance: beyond, telemetry is dropped (memory stays bounded: this many bodies of 1 MiB). */
export const MAX_FORWARDS = 16;

export interface OtlpForwarderOptions {
  /** The collector's OTLP/HTTP base URL; signals go to `<endpoint>/v1/<signal>`. */
  endpoint: string;
  /** Extra headers for the collector (an API key, say), `name=value,name=value` as OTEL_EXPORTER_OTLP_HEADERS takes them. */
  headers(): Promise<string | undefined>;
  fetch: typeof fetch;
  log(line: string): void;
}

/** Sends telemetry on to the collector, bounded in time and in forwards under way. */
export class OtlpForwarder {
  readonly #options: OtlpForwarderOptions;
  #inFlight = 0;

  constructor(options: OtlpForwarderOptions) {
    this.#options = options;
  }

  async forward(signal: string, body: Uint8Array, contentType: string, contentEncoding: string | undefined): Promise<void> {
    if (this.#inFlight >= MAX_FORWARDS) return this.#report(signal, 'dropped: too many forwards under way');
    this.#inFlight++;
    try {
      const extra = parseOtlpHeaders(await this.#options.headers());
      const url = `${this.#options.endpoint.replace(/\/+$/, '')}/v1/${signal}`;
      const headers: Record<string, string> = { ...extra, 'content-type': contentType, ...(contentEncoding ? { 'content-encoding': contentEncoding } : {}) };
      const response = await this.#options.fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS) });
      await response.arrayBuffer().catch(() => undefined);
      if (!response.ok) this.#report(signal, `the collector answered ${response.status}`);
    } catch (error) {
      // Never the headers (they may hold the collector's key): only what failed.
      this.#report(signal, error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${FORWARD_TIMEOUT_MS} ms` : 'the collector could not be reached');
    } finally {
      this.#inFlight--;
    }
  }

  #report(signal: string, problem: string): void {
    this.#options.log(JSON.stringify({ timestamp: new Date().toISOString(), level: 'warn', msg: 'telemetry not forwarded', signal, problem, collector: new URL(this.#options.endpoint).host }));
  }
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** `name=value,name=value` (values percent-encoded, as the OpenTelemetry exporters take them); malformed entries are left out. */
export function parseOtlpHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const entry of (text ?? '').split(',')) {
    const at = entry.indexOf('=');
    if (at <= 0) continue;
    const name = entry.slice(0, at).trim().toLowerCase();
    let value: string;
    try {
      value = decodeURIComponent(entry.slice(at + 1).trim());
    } catch {
      continue;
    }
    if (HEADER_NAME.test(name) && /^[\t\x20-\x7e]*$/.test(value)) headers[name] = value;
  }
  return headers;
}
