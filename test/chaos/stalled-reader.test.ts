import { chaosConfig, ChaosGateway } from './support/gateway.ts';
import { closedWithin, startProviders, type Providers } from './support/providers.ts';
import { requestHead } from './support/raw-http.ts';
import { bodyFor, type Family } from './support/requests.ts';

/**
 * Issue "Hardening", item 11: a client that stops reading a stream while the upstream keeps
 * sending. Today the server stops reading the upstream too, and after the upstream idle timeout
 * blames the upstream (`upstream_idle`). The fixed server notices the client (`client_stalled`)
 * and frees the upstream call. The upstream idle timeout is the shorter one here on purpose: the
 * upstream is not idle, so it must not be what ends the stream.
 */
const CLIENT_STALL_TIMEOUT_MS = 2_000;
const UPSTREAM_IDLE_TIMEOUT_MS = 1_000;

let providers: Providers;
let gateway: ChaosGateway;

beforeAll(async () => {
  providers = await startProviders();
  gateway = await ChaosGateway.start({
    config: chaosConfig({ anthropic: providers.anthropic.url, openai: providers.openai.url }),
    env: { GATEWAY_CLIENT_STALL_TIMEOUT_MS: String(CLIENT_STALL_TIMEOUT_MS), GATEWAY_UPSTREAM_IDLE_TIMEOUT_MS: String(UPSTREAM_IDLE_TIMEOUT_MS) },
  });
});

afterAll(async () => {
  await gateway?.stop();
  await providers?.close();
});

beforeEach(() => gateway.ensureRunning());

describe('11. a client that stops reading a stream', () => {
  test.each([
    ['/first/v1/messages', 'messages', 'anth'],
    ['/second/v1/responses', 'responses', 'oai'],
    ['/second/v1/responses', 'responses', 'anth'],
  ] as const)('%s (%s client, %s upstream sending 64 KB events without pause): client_stalled, never upstream_idle; the upstream call is closed', async (path, family, provider) => {
    const marker = `stall-${provider}-${Date.now()}`;
    const model = `${provider}-flood-${marker}`;
    const body = JSON.stringify(bodyFor(family as Family, model, 'keep talking', { stream: true }));
    const stub = provider === 'anth' ? providers.anthropic : providers.openai;
    const mark = gateway.mark();
    const connection = await gateway.connect();
    // Reads the response head, then nothing more: the socket's buffers fill and stay full.
    connection.pauseOnHead();
    await connection.write(requestHead('POST', path, { authorization: `Bearer ${gateway.key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }) + body);
    expect((await connection.head(10_000)).status).toBe(200);
    const ours = (candidate: { model?: string }) => candidate.model === model;
    const ended = await gateway.nextLine(mark, ours, CLIENT_STALL_TIMEOUT_MS + 4_000).catch(() => undefined);
    connection.destroy();
    // Still running with the client stalled (today: for good). The hang-up ends it; its log line says how.
    const line = ended ?? (await gateway.nextLine(mark, ours));
    expect({ endedWhileClientConnected: ended !== undefined, outcome: line.outcome, status: line.status }).toEqual({ endedWhileClientConnected: true, outcome: 'client_stalled', status: 200 });
    const upstream = stub.requests.find((request) => request.body.includes(marker));
    expect(upstream).toBeDefined();
    expect(await closedWithin(upstream!, 2_000)).toBe(true);
    await gateway.probe('after a client stopped reading');
  });
});
