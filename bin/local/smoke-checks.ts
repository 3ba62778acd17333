import { DEFAULT_PACED_MODEL, judgeDelivery, PACED_GAP_HEADER, readDelivery } from './smoke-delivery.ts';

/**
 * End-to-end checks of a running gateway (deployed or local) through its public HTTP surface,
 * with plain fetch: both wire formats, buffered and streamed, the model list, the refusal of an
 * unauthenticated request, and whether streams arrive as they are written (smoke-delivery.ts).
 * Each check reports instead of throwing, so one run shows everything that is wrong.
 */

/** Where and how to check. */
export interface SmokeOptions {
  /** The gateway address, e.g. the Function URL output (trailing slash optional). */
  url: string;
  /** A key issued by the gateway. */
  key: string;
  messagesModel: string;
  responsesModel: string;
  /** A model routed to a paced simulator (default DEFAULT_PACED_MODEL); its stream measures delivery. */
  pacedModel?: string;
  /** Per request: covers cold starts and a slow first token. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** One check's outcome. */
export interface CheckResult {
  name: string;
  passed: boolean;
  /** Not run: what it needs is missing (the detail says what); not a failure. */
  skipped?: boolean;
  /** What was seen: the evidence of a pass, or what was wrong. */
  detail: string;
  durationMs: number;
}

/** Models routed by the default cdk.json config; small prompts keep each run to a few cents. */
export const DEFAULT_MESSAGES_MODEL = 'claude-haiku-4-5-20251001';
export const DEFAULT_RESPONSES_MODEL = 'gpt-5.5';

const PROMPT = 'Reply with the single word: ok';
const ANTHROPIC_VERSION = '2023-06-01';

/** A failed expectation; its message becomes the check's detail. */
class CheckFailure extends Error {}

/** A check that cannot run against this gateway; its message says what it needs. */
class CheckSkipped extends Error {}

interface Check {
  name: string;
  run(): Promise<string>;
}

/** Runs every check in order and returns one result per check; never throws for a failed check. */
export async function runSmokeChecks(options: SmokeOptions): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  // One at a time: the output reads in order, and a cold start is paid once, not six times.
  for (const check of smokeChecks(options)) {
    const started = performance.now();
    let passed = true;
    let skipped = false;
    let detail: string;
    try {
      detail = await check.run();
    } catch (error) {
      skipped = error instanceof CheckSkipped;
      passed = skipped;
      detail = error instanceof CheckFailure || skipped ? (error as Error).message : `request failed: ${explain(error)}`;
    }
    results.push({ name: check.name, passed, ...(skipped ? { skipped } : {}), detail, durationMs: Math.round(performance.now() - started) });
  }
  return results;
}

function smokeChecks(options: SmokeOptions): Check[] {
  const base = options.url.replace(/\/+$/, '');
  const pacedModel = options.pacedModel ?? DEFAULT_PACED_MODEL;
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 120_000;
  const request = (path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown }) =>
    doFetch(`${base}${path}`, {
      method: init.method ?? 'POST',
      headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  // Both header styles clients use: x-api-key (Anthropic SDK) and Bearer (Claude Code, OpenAI).
  const messagesHeaders = { 'x-api-key': options.key, 'anthropic-version': ANTHROPIC_VERSION };
  const responsesHeaders = { authorization: `Bearer ${options.key}` };
  const messagesBody = (stream: boolean) => ({
    model: options.messagesModel,
    max_tokens: 64,
    stream,
    messages: [{ role: 'user', content: PROMPT }],
  });
  // Room for a reasoning model's thinking, so the answer completes instead of being cut short.
  const responsesBody = (stream: boolean) => ({ model: options.responsesModel, max_output_tokens: 1024, stream, input: PROMPT });

  return [
    {
      name: 'request without a key is refused (401)',
      async run() {
        const response = await request('/first/v1/messages', { headers: { 'anthropic-version': ANTHROPIC_VERSION }, body: messagesBody(false) });
        await response.body?.cancel();
        ensure(response.status === 401, `expected status 401, got ${response.status}`);
        return 'status 401';
      },
    },
    {
      name: 'GET /first/v1/models',
      async run() {
        const body = await jsonOf(await request('/first/v1/models', { method: 'GET', headers: messagesHeaders }));
        ensure(Array.isArray(body.data), 'the body has no "data" list');
        return `${(body.data as unknown[]).length} model(s) listed`;
      },
    },
    {
      name: `POST /first/v1/messages (${options.messagesModel})`,
      async run() {
        const body = await jsonOf(await request('/first/v1/messages', { headers: messagesHeaders, body: messagesBody(false) }));
        ensure(body.type === 'message', `expected a "message" object, got type ${JSON.stringify(body.type)}`);
        return `message, stop_reason ${String(body.stop_reason)}`;
      },
    },
    {
      name: `POST /first/v1/messages, stream (${options.messagesModel})`,
      run: () => streamReport(() => request('/first/v1/messages', { headers: messagesHeaders, body: messagesBody(true) }), 'message_stop'),
    },
    {
      name: `POST /second/v1/responses (${options.responsesModel})`,
      async run() {
        const body = await jsonOf(await request('/second/v1/responses', { headers: responsesHeaders, body: responsesBody(false) }));
        ensure(body.object === 'response', `expected a "response" object, got object ${JSON.stringify(body.object)}`);
        ensure(body.status === 'completed', `expected status "completed", got ${JSON.stringify(body.status)}`);
        return 'response, status completed';
      },
    },
    {
      name: `POST /second/v1/responses, stream (${options.responsesModel})`,
      run: () => streamReport(() => request('/second/v1/responses', { headers: responsesHeaders, body: responsesBody(true) }), 'response.completed'),
    },
    {
      name: `streaming delivery (${pacedModel}: the simulator paced)`,
      async run() {
        // Short words: the simulator answers word by word, quoting up to 120 characters.
        const body = { model: pacedModel, max_tokens: 256, stream: true, messages: [{ role: 'user', content: 'one two three four five six seven eight nine ten a b c d e f g h i j k l m n o p q r s t u v w x y z' }] };
        const started = performance.now();
        const response = await request('/first/v1/messages', { headers: messagesHeaders, body });
        const headersMs = performance.now() - started;
        if (response.status === 404 || response.status === 400) {
          throw new CheckSkipped(`skipped: the gateway does not route ${pacedModel} (${response.status}: ${excerpt(await response.text())}); route it to a paced simulator to measure delivery (docs/deployment.md, "Streaming delivery")`);
        }
        if (response.status !== 200) throw new CheckFailure(`expected status 200, got ${response.status}: ${excerpt(await response.text())}`);
        const gapMs = Number(response.headers.get(PACED_GAP_HEADER));
        if (!(gapMs > 0) || response.body === null) {
          await response.body?.cancel();
          throw new CheckSkipped(`skipped: ${pacedModel} is not answered by a paced simulator (no ${PACED_GAP_HEADER}); give its simulator a "delayMs"`);
        }
        const read = await readDelivery(response.body, started);
        ensure(read.text.includes('event: message_stop'), `the paced stream did not end with message_stop: ${excerpt(read.text.slice(-300))}`);
        const verdict = judgeDelivery({ gapMs, headersMs, eventsMs: read.eventsMs, paddingBytes: read.paddingBytes });
        ensure(verdict.asWritten, verdict.summary);
        return verdict.summary;
      },
    },
  ];
}

function ensure(condition: boolean, failure: string): asserts condition {
  if (!condition) throw new CheckFailure(failure);
}

/** A 200 JSON body, or a failure quoting what came instead. */
async function jsonOf(response: Response): Promise<Record<string, unknown>> {
  const text = await response.text();
  ensure(response.status === 200, `expected status 200, got ${response.status}: ${excerpt(text)}`);
  expectContentType(response, 'application/json');
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new CheckFailure(`the body is not JSON: ${excerpt(text)}`);
  }
}

/**
 * Reads a server-sent event stream to its end and requires the format's terminal event. The
 * time from sending to the first chunk is reported: a stream that something on the way buffers
 * shows a first chunk as late as its end.
 */
async function streamReport(send: () => Promise<Response>, terminalEvent: string): Promise<string> {
  const started = performance.now();
  const response = await send();
  if (response.status !== 200) throw new CheckFailure(`expected status 200, got ${response.status}: ${excerpt(await response.text())}`);
  expectContentType(response, 'text/event-stream');
  ensure(response.body !== null, 'the response has no body');
  const decoder = new TextDecoder();
  let text = '';
  let firstChunkMs: number | undefined;
  for await (const chunk of response.body) {
    firstChunkMs ??= performance.now() - started;
    text += decoder.decode(chunk, { stream: true });
  }
  const events = parseEvents(text + decoder.decode());
  const error = events.find((event) => event.type === 'error');
  ensure(error === undefined, `the stream carried an error event: ${excerpt(error?.data ?? '')}`);
  const last = events.at(-1)?.type;
  ensure(events.some((event) => event.type === terminalEvent), `no ${terminalEvent} event among ${events.length} event(s)${last === undefined ? '' : `; last: ${last}`}`);
  return `${events.length} events ending with ${last}, first chunk after ${Math.round(firstChunkMs ?? 0)} ms`;
}

/** Each event's type (its `event:` field, else the `type` of its JSON data) and data. */
function parseEvents(text: string): { type: string; data: string }[] {
  const events: { type: string; data: string }[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const lines = block.split(/\r?\n/);
    const named = lines.find((line) => line.startsWith('event:'))?.slice(6).trim();
    const data = lines.filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim()).join('\n');
    const type = named ?? typeOfData(data);
    if (type !== undefined) events.push({ type, data });
  }
  return events;
}

function typeOfData(data: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(data);
    return typeof parsed === 'object' && parsed !== null && 'type' in parsed && typeof parsed.type === 'string' ? parsed.type : undefined;
  } catch {
    return undefined;
  }
}

function expectContentType(response: Response, expected: string): void {
  const contentType = response.headers.get('content-type') ?? '(none)';
  ensure(contentType.startsWith(expected), `expected content-type ${expected}, got ${contentType}`);
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}...` : flat || '(empty body)';
}

/** An error's message and its cause's (fetch puts the network reason there). */
function explain(error: unknown): string {
  // Duck-typed: errors from another realm (a test VM, fetch's internals) fail instanceof.
  const cause = typeof error === 'object' && error !== null && 'cause' in error ? error.cause : undefined;
  return cause === undefined ? messageOf(error) : `${messageOf(error)} (${messageOf(cause)})`;
}

function messageOf(value: unknown): string {
  return typeof value === 'object' && value !== null && 'message' in value ? String(value.message) : String(value);
}
