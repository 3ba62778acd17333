import { chaosConfig, ChaosGateway } from './support/gateway.ts';
import { Load, type Plan } from './support/load.ts';
import { startProviders, type Providers } from './support/providers.ts';

/**
 * Issue "Hardening", item 12: a load generator that, at the end of its run, destroys every socket
 * with requests still in flight. Today this kills the server in 10 runs out of 15.
 */
const RUNS = 10;
const RUN_MS = 1_500;
const CONNECTIONS = 16;

let providers: Providers;
let gateway: ChaosGateway;

beforeAll(async () => {
  providers = await startProviders();
  gateway = await ChaosGateway.start({ config: chaosConfig({ anthropic: providers.anthropic.url, openai: providers.openai.url }, 20) });
});

afterAll(async () => {
  await gateway?.stop();
  await providers?.close();
});

/** Four connections each: streams, slow uploads, answers the upstream takes 300 ms to start, quick answers. */
function plan(worker: number, round: number): Plan {
  const family = (worker + round) % 2 === 0 ? 'messages' : 'responses';
  switch (worker % 4) {
    case 0:
      return { kind: 'mid-stream', family, model: 'slow-stream', stream: true };
    case 1:
      return { kind: 'mid-upload', family, model: 'sim-upload', stream: false, uploadPauseMs: 200 + (round % 3) * 100 };
    case 2:
      // anth-slow: the Anthropic stub answers after 300 ms (a passthrough for /first, translated for /second).
      return { kind: 'waiting for the upstream', family, model: 'anth-slow-load', stream: round % 2 === 0 };
    default:
      return { kind: 'quick', family, model: 'sim-quick', stream: round % 2 === 0 };
  }
}

test(`12. ${RUNS} runs of ${CONNECTIONS} keep-alive connections, each ending with every socket destroyed mid-request: the server survives every run`, async () => {
  const caught: Record<string, number> = {};
  let answered = 0;
  for (let run = 1; run <= RUNS; run++) {
    gateway.assertAlive(`before run ${run}`);
    const mark = gateway.mark();
    const load = new Load(gateway.url, gateway.key, CONNECTIONS, plan);
    // The run's length is the point here (a benchmark's fixed duration), not a wait for something.
    await new Promise((resolve) => setTimeout(resolve, RUN_MS));
    const { inFlight, headsSent } = await load.abort();
    for (const [kind, count] of Object.entries(inFlight)) caught[kind] = (caught[kind] ?? 0) + count;
    answered += load.outcomes.filter((outcome) => outcome.status === 200).length;
    // The server logs every request it saw, the torn-down ones included; a crash shows up here first.
    const seen = load.outcomes.length + headsSent;
    await gateway.waitFor(() => gateway.linesSince(mark).length >= seen, `the log lines of run ${run}`, 3_000).catch((error: Error) => {
      if (gateway.death()) throw new Error(`run ${run} of ${RUNS}: ${error.message}`);
    });
    await gateway.probe(`after run ${run} of ${RUNS} (${JSON.stringify(inFlight)} torn down in flight)`);
  }
  // The runs did tear requests down in every phase (a kind is listed once at least one was), and did real work before that.
  expect(caught).toEqual(expect.objectContaining({ 'mid-upload': expect.any(Number), 'waiting for the upstream': expect.any(Number), 'mid-stream': expect.any(Number) }));
  expect(answered).toBeGreaterThan(RUNS * CONNECTIONS);
});
