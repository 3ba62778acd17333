import { runKeys } from '../support/processes.ts';
import { ChaosGateway, type LogLine } from './support/gateway.ts';
import { startProviders, type Providers } from './support/providers.ts';
import { requestHead } from './support/raw-http.ts';
import { bodyFor, type Family } from './support/requests.ts';

/**
 * Issue 19, item 2: output nobody pays for. A client that reads 2 MB of a stream and then stops
 * reading (the server lets it go as `client_stalled`), or whose stream the server cuts at
 * shutdown, got output the upstream bills; the key must be charged for it. Measured against the
 * real `npm start`: what the log line says, and what `keys usage` finds in the store afterwards.
 */
const READ_BYTES = 2 * 1024 * 1024;
/** Output tokens the 2 MB the client read are at least worth (4 bytes per token, a tenth off for the SSE envelopes). */
const MIN_OUTPUT_TOKENS = Math.floor((READ_BYTES / 4) * 0.9);
const CLIENT_STALL_TIMEOUT_MS = 2_000;
const GRACE_MS = 1_000;

/** $1 / $2 per million tokens for both scripted providers: the cost is the tokens, plainly. */
function config(providers: Providers): unknown {
  return {
    upstreams: { anth: { type: 'anthropic', baseUrl: providers.anthropic.url }, oai: { type: 'openai', baseUrl: `${providers.openai.url}/v1` } },
    routes: [
      { model: 'anth-*', upstream: 'anth' },
      { model: 'oai-*', upstream: 'oai' },
    ],
    prices: { 'anth-*': { inputPerMTok: 1, outputPerMTok: 2 }, 'oai-*': { inputPerMTok: 1, outputPerMTok: 2 } },
  };
}

const STREAMS = [
  ['/first/v1/messages', 'messages', 'anth'],
  ['/second/v1/responses', 'responses', 'oai'],
] as const;

let providers: Providers;

beforeAll(async () => {
  providers = await startProviders();
});

afterAll(async () => {
  await providers?.close();
});

/** A streamed request to a provider sending 64 KB events without pause; the client reads 2 MB of it, then nothing more. */
async function readThenStop(gateway: ChaosGateway, path: string, family: Family, provider: string, marker: string): Promise<{ model: string; close: () => void }> {
  const model = `${provider}-flood-${marker}`;
  const body = JSON.stringify(bodyFor(family, model, 'keep talking', { stream: true }));
  const connection = await gateway.connect();
  await connection.write(requestHead('POST', path, { authorization: `Bearer ${gateway.key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }) + body);
  expect((await connection.head(10_000)).status).toBe(200);
  await connection.receivedAtLeast(READ_BYTES, 10_000);
  connection.pause();
  return { model, close: () => connection.destroy() };
}

/** The key's usage of one model, as `keys usage --json` reads it from the store. */
async function storedUsage(gateway: ChaosGateway, model: string): Promise<{ requests: number; outputTokens: number; costMicroUsd: number } | undefined> {
  const list = await runKeys(['list', '--json'], { GATEWAY_DATA_DIR: gateway.dataDir });
  const [key] = JSON.parse(list.stdout) as { id: string }[];
  const result = await runKeys(['usage', key?.id ?? '', '--since', '1d', '--json'], { GATEWAY_DATA_DIR: gateway.dataDir });
  if (result.code !== 0) throw new Error(`keys usage failed (${result.code}): ${result.stderr}`);
  return (JSON.parse(result.stdout) as { days: { model: string; requests: number; outputTokens: number; costMicroUsd: number }[] }).days.find((day) => day.model === model);
}

/** Charged as an estimate of what was delivered: the input, and at least the 2 MB of output read. */
function expectChargedForWhatWasRead(line: LogLine, outcome: string): void {
  const usage = line.usage ?? {};
  expect({ outcome: line.outcome, status: line.status, usageEstimated: line.usageEstimated }).toEqual({ outcome, status: 200, usageEstimated: true });
  expect(usage.inputTokens).toBeGreaterThan(0);
  expect(usage.outputTokens).toBeGreaterThanOrEqual(MIN_OUTPUT_TOKENS);
  // $1 per million input tokens (cache reads too; cache writes 1.25x), $2 per million output: the line's cost is those tokens' (to the micro-dollar).
  const expected = (usage.inputTokens ?? 0) + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0) * 1.25 + (usage.outputTokens ?? 0) * 2;
  expect(Math.round((line.costUsd as number) * 1e6)).toBe(Math.round(expected));
}

test.each(STREAMS)('%s (%s, %s upstream): a client that reads 2 MB and stops reading is charged for them (client_stalled)', async (path, family, provider) => {
  const gateway = await ChaosGateway.start({ config: config(providers), env: { GATEWAY_CLIENT_STALL_TIMEOUT_MS: String(CLIENT_STALL_TIMEOUT_MS) } });
  try {
    const mark = gateway.mark();
    const stream = await readThenStop(gateway, path, family, provider, `stall-${Date.now()}`);
    const line = await gateway.nextLine(mark, (candidate) => candidate.model === stream.model, CLIENT_STALL_TIMEOUT_MS + 5_000);
    stream.close();
    expectChargedForWhatWasRead(line, 'client_stalled');
    // Written to the store at the next flush, as `keys usage` shows it.
    let stored = await storedUsage(gateway, stream.model);
    for (const until = Date.now() + 5_000; stored === undefined && Date.now() < until; stored = await storedUsage(gateway, stream.model)) await new Promise((resolve) => setTimeout(resolve, 250));
    expect(stored).toMatchObject({ requests: 1, outputTokens: line.usage?.outputTokens, costMicroUsd: Math.round((line.costUsd as number) * 1e6) });
  } finally {
    await gateway.stop();
  }
});

test('streams cut at shutdown are charged for what they delivered, in the store once the process has exited', async () => {
  const gateway = await ChaosGateway.start({ config: config(providers), env: { GATEWAY_SHUTDOWN_GRACE_MS: String(GRACE_MS) } });
  try {
    const mark = gateway.mark();
    const streams = await Promise.all(STREAMS.map(([path, family, provider]) => readThenStop(gateway, path, family, provider, `shutdown-${Date.now()}`)));
    gateway.server.process.kill('SIGTERM');
    const exit = await gateway.server.exited;
    for (const stream of streams) stream.close();
    expect(exit.code).toBe(0);
    for (const stream of streams) {
      const line = gateway.linesSince(mark).find((candidate) => candidate.model === stream.model);
      if (!line) throw new Error(`no log line for ${stream.model}; npm start's last 40 lines:\n${gateway.tail()}`);
      expectChargedForWhatWasRead(line, 'shutdown');
      expect(await storedUsage(gateway, stream.model)).toMatchObject({ requests: 1, outputTokens: line.usage?.outputTokens, costMicroUsd: Math.round((line.costUsd as number) * 1e6) });
    }
  } finally {
    await gateway.stop();
  }
});
