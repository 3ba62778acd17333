import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { firstKey, startDevServer, tempDir, type DevServer } from '../../support/processes.ts';
import { RawConnection } from './raw-http.ts';

/** The model of the liveness probe's requests (answered by the simulator). */
export const PROBE_MODEL = 'sim-probe';

/** One `"msg":"request"` line of the gateway's stdout, parsed, with when it was seen. */
export interface LogLine {
  requestId?: string;
  status?: number;
  outcome?: string;
  latencyMs?: number;
  model?: string;
  usage?: Record<string, number>;
  [field: string]: unknown;
  raw: string;
  seenAt: number;
}

export interface GatewayOptions {
  /** The routing config (written to a file, passed as GATEWAY_CONFIG). */
  config: unknown;
  /** More environment for `npm start` (settings under test). */
  env?: Record<string, string>;
}

/**
 * The real `npm start` process (bin/dev-server.ts) with a temporary data directory and a routing
 * config file, as a team would run it. It records the request log lines of stdout, notices when
 * the process dies, and can start it again on the same data directory (so the key printed by the
 * first start keeps working): a test that kills it does not take the next tests down with it.
 */
export class ChaosGateway {
  readonly dataDir: string;
  readonly env: Record<string, string>;
  readonly key: string;
  /** Request log lines of every start, in order. */
  readonly logs: LogLine[] = [];
  /** How earlier starts ended, for messages. */
  readonly deaths: string[] = [];
  #server: DevServer;

  private constructor(server: DevServer, dataDir: string, env: Record<string, string>, key: string) {
    this.#server = server;
    this.dataDir = dataDir;
    this.env = env;
    this.key = key;
    this.#collect(server);
  }

  static async start(options: GatewayOptions): Promise<ChaosGateway> {
    const dataDir = tempDir('gateway-chaos-');
    const configPath = join(tempDir('gateway-chaos-config-'), 'config.json');
    writeFileSync(configPath, JSON.stringify(options.config));
    const env = { GATEWAY_DATA_DIR: dataDir, GATEWAY_CONFIG: configPath, ...options.env };
    const server = await startDevServer(env);
    return new ChaosGateway(server, dataDir, env, firstKey(server.output()));
  }

  get url(): string {
    return this.#server.url;
  }

  get pid(): number {
    return this.#server.process.pid as number;
  }

  /** The running process (startDevServer's handle): signals, exit. */
  get server(): DevServer {
    return this.#server;
  }

  /** A description of the process's death with its last output, or undefined while it runs. */
  death(): string | undefined {
    const exit = this.#server.exit();
    if (exit === undefined) return undefined;
    return `npm start exited (code ${exit.code}, signal ${exit.signal}); its last 40 lines:\n${this.tail()}`;
  }

  /** Throws (with the server's last output) if the process has exited. */
  assertAlive(context = ''): void {
    const death = this.death();
    if (death !== undefined) throw new Error(`${context ? `${context}: ` : ''}${death}`);
  }

  tail(lines = 40): string {
    return this.#server.output().split('\n').slice(-lines - 1).join('\n');
  }

  /** Starts the process again on the same data directory if it has died (before each test). */
  async ensureRunning(): Promise<void> {
    const death = this.death();
    if (death === undefined) return;
    this.deaths.push(death);
    this.#server = await startDevServer(this.env);
    this.#collect(this.#server);
  }

  async stop(signal?: NodeJS.Signals): Promise<void> {
    await this.#server.stop(signal);
  }

  /** Index of the next log line: `linesSince(mark)` are those logged after it. */
  mark(): number {
    return this.logs.length;
  }

  linesSince(mark: number): LogLine[] {
    return this.logs.slice(mark);
  }

  /**
   * Waits for the first request log line after `mark` that is not a probe's (fails at once if the
   * process dies). Lines are written when a request's work is done, so a line of an earlier
   * request can still arrive after the mark: `accept` tells this request's line from theirs.
   */
  async nextLine(mark: number, accept: (line: LogLine) => boolean = () => true, timeoutMs = 5_000): Promise<LogLine> {
    const find = () => this.logs.slice(mark).find((line) => line.model !== PROBE_MODEL && accept(line));
    await this.waitFor(() => find() !== undefined, `the request's log line (none logged after it in ${timeoutMs} ms)`, timeoutMs);
    return find() as LogLine;
  }

  /** The log line of the request whose response carried `requestId`. */
  async lineOf(requestId: string, timeoutMs = 5_000): Promise<LogLine> {
    await this.waitFor(() => this.logs.some((line) => line.requestId === requestId), `the log line of ${requestId}`, timeoutMs);
    return this.logs.find((line) => line.requestId === requestId) as LogLine;
  }

  /** Polls `condition` until it holds; fails with the server's output when it dies or time runs out. */
  async waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      if (condition()) return;
      this.assertAlive(`while waiting for ${what}`);
      if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; npm start's last 40 lines:\n${this.tail()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** A raw connection to the server; when it cannot connect because the process died, says so with its output. */
  async connect(): Promise<RawConnection> {
    try {
      return await RawConnection.open(this.url);
    } catch (error) {
      await Promise.race([this.#server.exited, new Promise((resolve) => setTimeout(resolve, 2_000))]);
      this.assertAlive(`cannot connect (${(error as Error).message})`);
      throw error;
    }
  }

  /** Resident memory of the server process, in MB (VmRSS of /proc/<pid>/status). */
  rssMb(): number {
    const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
    const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]);
    return kb / 1024;
  }

  /**
   * The server still serves: an authenticated request to the simulator answers 200. Fails with the
   * server's last output when it does not (which is what a crash looks like from outside).
   */
  async probe(context = 'after the previous request'): Promise<void> {
    this.assertAlive(context);
    let status: number | string;
    try {
      const response = await fetch(`${this.url}/first/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: PROBE_MODEL, max_tokens: 5, messages: [{ role: 'user', content: 'still there?' }] }),
        signal: AbortSignal.timeout(10_000),
      });
      await response.arrayBuffer();
      status = response.status;
      // Its own log line too, so that it cannot turn up after the next test has taken its mark.
      if (status === 200) await this.lineOf(response.headers.get('request-id') as string);
    } catch (error) {
      status = String((error as Error & { cause?: Error }).cause ?? error);
    }
    this.assertAlive(context);
    if (status !== 200) throw new Error(`${context}: the next request got ${status}, not 200; npm start's last 40 lines:\n${this.tail()}`);
  }

  #collect(server: DevServer): void {
    let pending = '';
    server.process.stdout?.on('data', (chunk: Buffer) => {
      const text = pending + chunk.toString('utf8');
      const lines = text.split('\n');
      pending = lines.pop() as string;
      for (const raw of lines) {
        if (!raw.includes('"msg":"request"')) continue;
        try {
          this.logs.push({ ...JSON.parse(raw.slice(raw.indexOf('{'))), raw, seenAt: Date.now() });
        } catch {
          // Not a JSON line (a message that quotes one): not a request line.
        }
      }
    });
  }
}

/** The routing config most chaos tests use: two scripted loopback providers and the simulator. */
export function chaosConfig(urls: { anthropic: string; openai: string }, simulatorDelayMs = 20): unknown {
  return {
    upstreams: {
      anth: { type: 'anthropic', baseUrl: urls.anthropic },
      oai: { type: 'openai', baseUrl: `${urls.openai}/v1` },
      sim: { type: 'simulator', delayMs: 0 },
      simslow: { type: 'simulator', delayMs: simulatorDelayMs },
    },
    routes: [
      // The scripted providers' made-up names have no price: metered at the fallback price.
      { model: 'anth-*', upstream: 'anth', allowUnpriced: true },
      { model: 'oai-*', upstream: 'oai', allowUnpriced: true },
      { model: 'slow-*', upstream: 'simslow' },
      { model: '*', upstream: 'sim' },
    ],
  };
}
