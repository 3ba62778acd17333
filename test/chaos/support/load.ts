import http from 'node:http';
import type { Family } from './requests.ts';
import { bodyFor } from './requests.ts';

/** Token usage with the meaning of docs/keys-and-budgets.md: `input` excludes cache reads and writes. */
export interface Tokens {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** What one worker sends next. */
export interface Plan {
  family: Family;
  model: string;
  stream: boolean;
  /** Sends half the body, waits this long, then the rest (a request that is mid-upload for a while). */
  uploadPauseMs?: number;
  /** A label for counting what was in flight. */
  kind: string;
}

export interface Outcome {
  kind: string;
  status: number;
  requestId: string | undefined;
  startedAt: number;
  endedAt: number;
  /** The body arrived whole, with its final usage. */
  complete: boolean;
  usage: Tokens | undefined;
}

const PATHS: Record<Family, string> = { messages: '/first/v1/messages', responses: '/second/v1/responses' };

/**
 * A load generator like the ones teams point at a gateway: `connections` keep-alive connections,
 * each sending one request after another. It records every answer (status, request id, the usage
 * the client received, when it ended), and can stop politely or tear every socket down with
 * requests still in flight, as a benchmark tool does at the end of its run.
 */
export class Load {
  readonly outcomes: Outcome[] = [];
  /** Requests that failed at the socket level (reset, refused...), by message. */
  readonly failures = new Map<string, number>();
  #running = true;
  /** Requests in flight: whether their head has been handed to the kernel (so the server gets it), whether an answer started. */
  #inFlight = new Map<http.ClientRequest, { plan: Plan; headSent: boolean; answered: boolean }>();
  #agents: http.Agent[] = [];
  #workers: Promise<void>[];

  constructor(url: string, key: string, connections: number, plan: (worker: number, round: number) => Plan) {
    this.#workers = Array.from({ length: connections }, (_, worker) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      this.#agents.push(agent);
      return this.#work(url, key, agent, (round) => plan(worker, round));
    });
  }

  /** Stops sending new requests and waits for those in flight to end. */
  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#workers);
    for (const agent of this.#agents) agent.destroy();
  }

  /**
   * Destroys every socket now, requests in flight included. Returns what was in flight, by kind, and
   * how many of those had their head on the wire but no answer yet: the server received them, and
   * they are not among the outcomes (a torn-down answer is, as an incomplete one).
   */
  async abort(): Promise<{ inFlight: Record<string, number>; headsSent: number }> {
    this.#running = false;
    const inFlight: Record<string, number> = {};
    let headsSent = 0;
    for (const [req, { plan, headSent, answered }] of [...this.#inFlight]) {
      inFlight[plan.kind] = (inFlight[plan.kind] ?? 0) + 1;
      if (headSent && !answered) headsSent++;
      req.destroy();
    }
    for (const agent of this.#agents) agent.destroy();
    await Promise.all(this.#workers);
    return { inFlight, headsSent };
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  async #work(url: string, key: string, agent: http.Agent, plan: (round: number) => Plan): Promise<void> {
    for (let round = 0; this.#running; round++) {
      const next = plan(round);
      try {
        this.outcomes.push(await this.#send(url, key, agent, next));
      } catch (error) {
        const message = (error as Error).message;
        this.failures.set(message, (this.failures.get(message) ?? 0) + 1);
        // A refused connection (server gone) would otherwise spin.
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }

  #send(url: string, key: string, agent: http.Agent, plan: Plan): Promise<Outcome> {
    const body = JSON.stringify(bodyFor(plan.family, plan.model, `load ${plan.kind}`, { stream: plan.stream }));
    const startedAt = Date.now();
    return new Promise((resolve, reject) => {
      const req = http.request(`${url}${PATHS[plan.family]}`, {
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      });
      const entry = { plan, headSent: false, answered: false };
      this.#inFlight.set(req, entry);
      const done = () => this.#inFlight.delete(req);
      const written = (error?: Error | null) => {
        if (!error) entry.headSent = true;
      };
      req.on('error', (error) => {
        done();
        reject(error);
      });
      req.on('response', (res) => {
        entry.answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', () => {});
        res.on('close', () => {
          done();
          const text = Buffer.concat(chunks).toString('utf8');
          const usage = res.statusCode === 200 ? usageOf(plan, text) : undefined;
          resolve({ kind: plan.kind, status: res.statusCode ?? 0, requestId: res.headers['request-id'] as string | undefined, startedAt, endedAt: Date.now(), complete: res.complete && usage !== undefined, usage });
        });
      });
      if (plan.uploadPauseMs === undefined) return void req.end(body, written);
      const half = Math.floor(body.length / 2);
      req.write(body.slice(0, half), written);
      setTimeout(() => {
        if (!req.destroyed) req.end(body.slice(half));
      }, plan.uploadPauseMs);
    });
  }
}

/** The usage a client reads from a whole answer, or undefined when the answer is not whole. */
export function usageOf(plan: Pick<Plan, 'family' | 'stream'>, text: string): Tokens | undefined {
  try {
    if (!plan.stream) {
      const body = JSON.parse(text);
      return plan.family === 'messages' ? fromMessages(body.usage) : fromResponses(body.usage);
    }
    const events = text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)));
    if (plan.family === 'messages') {
      if (!events.some((event) => event.type === 'message_stop')) return undefined;
      const start = events.find((event) => event.type === 'message_start')?.message?.usage ?? {};
      const delta = events.filter((event) => event.type === 'message_delta').at(-1)?.usage ?? {};
      return fromMessages({ ...start, ...delta });
    }
    const completed = events.find((event) => event.type === 'response.completed');
    return completed ? fromResponses(completed.response.usage) : undefined;
  } catch {
    return undefined;
  }
}

function fromMessages(usage: Record<string, number> | undefined): Tokens | undefined {
  if (!usage) return undefined;
  return { inputTokens: usage.input_tokens ?? 0, outputTokens: usage.output_tokens ?? 0, cacheReadTokens: usage.cache_read_input_tokens ?? 0, cacheWriteTokens: usage.cache_creation_input_tokens ?? 0 };
}

function fromResponses(usage: { input_tokens?: number; output_tokens?: number; input_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } } | undefined): Tokens | undefined {
  if (!usage) return undefined;
  const cacheRead = usage.input_tokens_details?.cached_tokens ?? 0;
  const cacheWrite = usage.input_tokens_details?.cache_write_tokens ?? 0;
  return { inputTokens: (usage.input_tokens ?? 0) - cacheRead - cacheWrite, outputTokens: usage.output_tokens ?? 0, cacheReadTokens: cacheRead, cacheWriteTokens: cacheWrite };
}

export function sumTokens(outcomes: Outcome[]): Tokens & { requests: number } {
  const total = { requests: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  for (const outcome of outcomes) {
    total.requests++;
    for (const counter of ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens'] as const) total[counter] += outcome.usage?.[counter] ?? 0;
  }
  return total;
}
