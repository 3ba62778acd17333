import { ChaosGateway } from './support/gateway.ts';
import { Load, type Plan } from './support/load.ts';
import { expectBelow, median, sampleRss } from './support/measure.ts';

/**
 * Issue "Hardening", item 13: usage writes must not pile up. Today each request writes its usage
 * on its own, after its answer; at 16 connections the writes queue without bound (RSS from 124 MB
 * to over 1 GB in 20 s), log lines trail the load by 11-15 s, and the logged latency includes the
 * wait. The fixed server adds usage up in memory and writes it every GATEWAY_USAGE_FLUSH_MS.
 */
const CONNECTIONS = 16;
const LOAD_MS = 10_000;
const WARMUP_MS = 3_000;

let gateway: ChaosGateway;

beforeAll(async () => {
  gateway = await ChaosGateway.start({ config: { upstreams: { sim: { type: 'simulator', delayMs: 0 } }, routes: [{ model: '*', upstream: 'sim' }] } });
});

afterAll(() => gateway?.stop());

/** Short simulator answers: both formats, streamed and not. */
function plan(worker: number, round: number): Plan {
  const family = worker % 2 === 0 ? 'messages' : 'responses';
  return { kind: 'steady', family, model: `sim-steady-${worker % 4}`, stream: (worker + round) % 2 === 0 };
}

test(`13. ${CONNECTIONS} connections of steady load for ${LOAD_MS / 1000} s: memory bounded, log lines on time, logged latency is the client's`, async () => {
  // Warm up (JIT, pools), so that idle memory is the memory of a server that has served.
  const warmup = new Load(gateway.url, gateway.key, CONNECTIONS, plan);
  await new Promise((resolve) => setTimeout(resolve, WARMUP_MS));
  await warmup.stop();
  await gateway.waitFor(() => gateway.logs.length >= warmup.outcomes.length, 'the warm-up log lines', 20_000);
  const idle = gateway.rssMb();

  const mark = gateway.mark();
  const rss = sampleRss(gateway);
  const load = new Load(gateway.url, gateway.key, CONNECTIONS, plan);
  // The load's duration is what is being tested, not a wait for something.
  await new Promise((resolve) => setTimeout(resolve, LOAD_MS));
  await load.stop();
  const stoppedAt = Math.max(...load.outcomes.map((outcome) => outcome.endedAt));
  const answered = load.outcomes.filter((outcome) => outcome.status === 200 && outcome.requestId !== undefined);
  const ids = new Set(answered.map((outcome) => outcome.requestId));
  const logged = () => gateway.linesSince(mark).filter((line) => ids.has(line.requestId)).length;
  try {
    await gateway.waitFor(() => logged() === ids.size, 'every request log line', 30_000);
  } finally {
    rss.stop();
  }
  gateway.assertAlive('after the load');
  expect(load.failures.size).toBe(0);
  expect(answered.length).toBe(load.outcomes.length);

  const lines = gateway.linesSince(mark).filter((line) => ids.has(line.requestId));
  const lastLineAt = Math.max(...lines.map((line) => line.seenAt));
  const byId = new Map(lines.map((line) => [line.requestId, line]));
  const clientLatency = median(answered.map((outcome) => outcome.endedAt - outcome.startedAt));
  const loggedLatency = median(answered.map((outcome) => byId.get(outcome.requestId)?.latencyMs as number));
  const summary = `${answered.length} requests in ${LOAD_MS / 1000} s; RSS idle ${Math.round(idle)} MB, peak ${Math.round(rss.peakMb)} MB; last log line ${lastLineAt - stoppedAt} ms after the load stopped; p50 latency: clients ${clientLatency} ms, log ${loggedLatency} ms`;
  console.log(`steady load: ${summary}`);
  expectBelow(rss.peakMb - idle, 150, `RSS growth in MB under load (${summary})`);
  expectBelow(lastLineAt - stoppedAt, 3_000, `ms from the end of the load to the last log line (${summary})`);
  expectBelow(Math.abs(loggedLatency - clientLatency), 50, `ms between the logged and the measured p50 latency (${summary})`);
});
