import Anthropic from '@anthropic-ai/sdk';
import { startGateway, waitForLogs, type Harness } from '../support/gateway-harness.ts';
import { fixture, sendSse, sseEvents, startUpstream, type UpstreamStub } from '../support/upstream-stub.ts';

let upstream: UpstreamStub;
let gateway: Harness;
let key: string;

beforeAll(async () => {
  upstream = await startUpstream();
  // A 3.5 s function timeout with a 2 s margin leaves every request a 1.5 s deadline.
  gateway = await startGateway({
    config: { upstreams: { ant: { type: 'anthropic', baseUrl: upstream.url } }, routes: [{ model: '*', upstream: 'ant' }] },
    functionTimeoutMs: 3_500,
    settings: { deadlineMarginMs: 2_000 },
  });
  ({ key } = await gateway.issueKey());
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

test('a stream still running at the deadline is ended cleanly with an error event, and the upstream call is dropped', async () => {
  const events = sseEvents(fixture('anthropic/text-stream.sse'));
  upstream.reply(sendSse([...events.slice(0, 3), ...Array(50).fill(events[3])], { gapMs: 100 }));
  const started = Date.now();
  const anthropic = new Anthropic({ baseURL: `${gateway.url}/first`, apiKey: key, maxRetries: 0 });
  const stream = anthropic.messages.stream({ model: 'claude-sonnet-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
  let text = '';
  stream.on('text', (delta) => (text += delta));
  await expect(stream.finalMessage()).rejects.toMatchObject({ error: { error: { type: 'api_error', message: 'The request reached the gateway deadline before the upstream finished.' } } });
  const elapsed = Date.now() - started;
  expect(elapsed).toBeGreaterThan(1_300);
  // Without the deadline the upstream's 53 events would end 5.3 s on: the bound leaves a loaded machine room.
  expect(elapsed).toBeLessThan(4_500);
  expect(text.length).toBeGreaterThan(0);
  await upstream.requests[0]!.closed;
  const [line] = await waitForLogs(gateway, 1);
  expect(line).toMatchObject({ outcome: 'deadline', status: 200 });
});
