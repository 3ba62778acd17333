import { mintKey } from '../../lambda/auth/issue-key.ts';
import { runSmokeChecks } from '../../bin/local/smoke-checks.ts';
import { DEFAULT_PACED_MODEL } from '../../bin/local/smoke-delivery.ts';
import { SMOKE_ROUTING, startRealRuntime, type RealRuntime } from './real-runtime.ts';

/**
 * `npm run smoke` against the production bundle under the real runtime client behind the
 * Function URL front: every check passes, and the delivery check finds the paced stream's events
 * arriving at the simulator's pace (the runtime client passes each write on; whether AWS's own
 * Function URL does is what the check measures on a deployed stack).
 */
let runtime: RealRuntime;
let key: string;

beforeAll(async () => {
  runtime = await startRealRuntime({
    routing: SMOKE_ROUTING,
    timeoutMs: 30_000,
  });
  const minted = mintKey({ name: 'smoke' });
  await runtime.putKey(minted.record);
  key = minted.key;
}, 90_000);

afterAll(() => runtime?.close());

test('every smoke check passes through the real runtime, streams delivered as written', async () => {
  const results = await runSmokeChecks({ url: runtime.url, key, messagesModel: 'claude-sim', responsesModel: 'gpt-sim' });
  expect(results.filter((result) => !result.passed)).toEqual([]);
  expect(results.at(-1)).toMatchObject({ name: `streaming delivery (${DEFAULT_PACED_MODEL}: the simulator paced)`, detail: expect.stringMatching(/^delivered as written: .* one every 100 ms/) });
  expect(runtime.lambda.starts).toHaveLength(1);
});
