import { startEmbeddedStore, ensureKeyTable, localDynamo } from '../../bin/local/embedded-store.ts';
import { createFunctionUrlServer, type StreamingHandler } from '../../bin/local/function-url-server.ts';
import { DynamoKeyStore } from '../../lambda/auth/key-store.ts';
import { mintKey } from '../../lambda/auth/issue-key.ts';
import { listen } from '../support/gateway-harness.ts';

/**
 * The Lambda entry module itself, configured only through its environment, as on AWS
 * (with the DynamoDB endpoint pointed at dynalite).
 */
test('lambda/handler.ts serves both endpoints from its environment', async () => {
  const store = await startEmbeddedStore(undefined);
  const dynamo = localDynamo(store.endpoint);
  await ensureKeyTable(dynamo, 'entry-keys');
  const { key, record } = mintKey({ name: 'entry' });
  await new DynamoKeyStore('entry-keys', dynamo).put(record);
  Object.assign(process.env, {
    GATEWAY_CONFIG_JSON: JSON.stringify({ upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }] }),
    GATEWAY_KEYS_TABLE: 'entry-keys',
    AWS_ENDPOINT_URL_DYNAMODB: store.endpoint,
    GATEWAY_LOG: 'off',
  });
  const { handler } = await import('../../lambda/handler.ts');
  expect((handler as unknown as Record<symbol, unknown>)[Symbol.for('aws.lambda.runtime.handler.streaming')]).toBe('response');
  const server = createFunctionUrlServer(handler as unknown as StreamingHandler, { maxBodyBytes: 1 << 20, functionTimeoutMs: 60_000 });
  const url = await listen(server);
  const messages = await fetch(`${url}/first/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }], stream: true }),
  });
  expect(messages.status).toBe(200);
  expect(await messages.text()).toContain('event: message_stop');
  const responses = await fetch(`${url}/second/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', input: 'hi' }),
  });
  expect(((await responses.json()) as { status: string }).status).toBe('completed');
  server.closeAllConnections();
  server.close();
  await store.close();
});
