import { gzipSync } from 'node:zlib';
import { startOtlpReceiver, type OtlpReceiver } from '../../support/otlp-receiver.ts';
import { signIn } from '../../support/sign-in.ts';
import { ALICE, startSignInGateway, type SignInSetup } from '../../support/sign-in-gateway.ts';

/**
 * Claude Code's telemetry (`POST /first/v1/{metrics,logs,traces}`, OTLP/HTTP) through the real
 * gateway to an OTLP/HTTP receiver on loopback (test/support/otlp-receiver.ts): JSON and
 * protobuf bodies arrive byte for byte, with the configured headers and never the client's
 * bearer; a collector that fails costs the client nothing.
 */

/** A small OTLP ExportLogsServiceRequest in protobuf, encoded by hand: one resource with service.name, one log record with a binary body. */
function otlpLogsProtobuf(): Buffer {
  const varint = (value: number) => {
    const bytes: number[] = [];
    do {
      bytes.push((value & 0x7f) | (value > 0x7f ? 0x80 : 0));
      value >>>= 7;
    } while (value > 0);
    return Buffer.from(bytes);
  };
  const field = (number: number, payload: Buffer) => Buffer.concat([varint((number << 3) | 2), varint(payload.length), payload]);
  const text = (value: string) => Buffer.from(value, 'utf8');
  const attribute = field(1, Buffer.concat([field(1, text('service.name')), field(2, field(1, text('claude-code')))]));
  const resource = field(1, attribute);
  // LogRecord.body (field 5) as AnyValue.bytes_value (field 7): bytes that are not UTF-8.
  const record = field(5, field(7, Buffer.from([0x00, 0xff, 0xfe, 0x80, 0xc3, 0x28])));
  const scopeLogs = field(2, field(2, record));
  return field(1, Buffer.concat([resource, scopeLogs]));
}

const METRICS_JSON = JSON.stringify({ resourceMetrics: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] }, scopeMetrics: [{ metrics: [{ name: 'claude_code.cost.usage', sum: { dataPoints: [{ asDouble: 0.0123, attributes: [{ key: 'user.email', value: { stringValue: 'alice@example.com — ✓' } }] }] } }] }] }] });

let receiver: OtlpReceiver;
let setup: SignInSetup;
let token: string;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  setup = await startSignInGateway({
    identity: { otlp: { endpoint: `${receiver.url}/`, headersEnv: 'GATEWAY_OTLP_HEADERS' } },
    harness: { identity: { otlpHeaders: 'x-collector-key=k3y%20with%20space, x-team = ai ,bad header=1,empty' } },
  });
  token = (await signIn(setup.gateway.url, ALICE)).access_token as string;
});

afterAll(async () => {
  await setup.close();
  await receiver.close();
});

async function post(signal: string, body: Buffer | string, headers: Record<string, string>, bearer: string | null = token) {
  const started = Date.now();
  const response = await fetch(`${setup.gateway.url}/first/v1/${signal}`, { method: 'POST', headers: { ...headers, ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) }, body });
  return { status: response.status, type: response.headers.get('content-type'), body: Buffer.from(await response.arrayBuffer()), ms: Date.now() - started };
}


test('JSON and protobuf (plain and gzip) arrive byte for byte at <endpoint>/v1/<signal>, with the configured headers and not the bearer', async () => {
  receiver.received.length = 0;
  const protobuf = otlpLogsProtobuf();
  const gzipped = gzipSync(protobuf);
  const json = await post('metrics', METRICS_JSON, { 'content-type': 'application/json' });
  expect([json.status, json.type, json.body.toString()]).toEqual([200, 'application/json', '{}']);
  const logs = await post('logs', protobuf, { 'content-type': 'application/x-protobuf' });
  expect([logs.status, logs.type, logs.body.length]).toEqual([200, 'application/x-protobuf', 0]);
  expect((await post('traces', gzipped, { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' })).status).toBe(200);

  const received = await receiver.waitFor(3);
  const byPath = Object.fromEntries(received.map((entry) => [entry.path, entry]));
  expect(byPath['/v1/metrics']?.body.toString('utf8')).toBe(METRICS_JSON);
  expect(byPath['/v1/metrics']?.body.equals(Buffer.from(METRICS_JSON, 'utf8'))).toBe(true);
  expect(byPath['/v1/metrics']?.headers['content-type']).toBe('application/json');
  expect(byPath['/v1/logs']?.body.equals(protobuf)).toBe(true);
  expect(byPath['/v1/logs']?.headers['content-type']).toBe('application/x-protobuf');
  expect(byPath['/v1/traces']?.body.equals(gzipped)).toBe(true);
  expect(byPath['/v1/traces']?.headers['content-encoding']).toBe('gzip');
  for (const entry of received) {
    expect(entry.headers['x-collector-key']).toBe('k3y with space');
    expect(entry.headers['x-team']).toBe('ai');
    expect(entry.headers.authorization).toBeUndefined();
    expect(JSON.stringify(entry.headers)).not.toContain(token);
  }
});

test('a failing or unreachable collector costs the client nothing: 200 at once, a log line without the headers', async () => {
  receiver.status = 503;
  receiver.received.length = 0;
  expect((await post('metrics', METRICS_JSON, { 'content-type': 'application/json' })).status).toBe(200);
  await receiver.waitFor(1);
  receiver.status = 200;
  const lines = async () => {
    for (const until = Date.now() + 5_000; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 10))) {
      const found = setup.gateway.logs.filter((line) => line.msg === 'telemetry not forwarded');
      if (found.length > 0) return found;
    }
    return [];
  };
  expect(await lines()).toEqual([expect.objectContaining({ signal: 'metrics', problem: 'the collector answered 503', collector: new URL(receiver.url).host })]);
  expect(setup.gateway.rawLogs.join('\n')).not.toContain('k3y');

  const down = await startSignInGateway({ identity: { otlp: { endpoint: 'http://127.0.0.1:9' } } });
  try {
    const bearer = (await signIn(down.gateway.url, ALICE)).access_token as string;
    const response = await fetch(`${down.gateway.url}/first/v1/logs`, { method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/x-protobuf' }, body: otlpLogsProtobuf() });
    expect(response.status).toBe(200);
  } finally {
    await down.close();
  }
});

test('refusals: no bearer 401, over 1 MiB 413; an unknown media type and a gateway without a collector: 200, nothing forwarded', async () => {
  receiver.received.length = 0;
  expect((await post('metrics', METRICS_JSON, { 'content-type': 'application/json' }, null)).status).toBe(401);
  expect((await post('metrics', METRICS_JSON, { 'content-type': 'application/json' }, 'gwt_not-a-real-token')).status).toBe(401);
  expect((await post('logs', Buffer.alloc(1024 * 1024 + 1, 1), { 'content-type': 'application/x-protobuf' })).status).toBe(413);
  expect((await post('logs', 'hello', { 'content-type': 'text/plain' })).status).toBe(200);
  const discard = await startSignInGateway();
  try {
    const bearer = (await signIn(discard.gateway.url, ALICE)).access_token as string;
    const response = await fetch(`${discard.gateway.url}/first/v1/traces`, { method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(200);
  } finally {
    await discard.close();
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(receiver.received).toEqual([]);
});
