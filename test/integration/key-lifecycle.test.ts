import { jest } from '@jest/globals';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { localDynamo } from '../../bin/local/embedded-store.ts';
import { listKeys, rotateKey, updateKey } from '../../bin/local/key-commands.ts';
import { mintKey } from '../../lambda/auth/issue-key.ts';
import { toItem } from '../../lambda/auth/key-item.ts';
import { SecretsManagerCredentials } from '../../lambda/upstream/credentials.ts';
import { startGateway, waitForLogs, type Harness } from '../support/gateway-harness.ts';
import { fixture, sendJson, startUpstream } from '../support/upstream-stub.ts';

const config = { upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }] };
const body = JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });

function send(gateway: Harness, key: string) {
  return fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body }).then(async (response) => {
    await response.text();
    return response.status;
  });
}

/**
 * Moves the clock (Date.now, which the key cache reads) `ms` on. A cache entry's time runs out so,
 * not in real time: a TTL short enough to sleep through would also run out, on a loaded machine,
 * between the requests that must still find it.
 */
function later(ms: number): void {
  const realNow = Date.now.bind(Date);
  jest.spyOn(Date, 'now').mockImplementation(() => realNow() + ms);
}

describe('key lifecycle', () => {
  let gateway: Harness;
  afterEach(() => {
    jest.restoreAllMocks();
    return gateway.close();
  });

  test('a key tried before it was stored works once its miss is forgotten (the shorter of 5 s and GATEWAY_KEY_CACHE_SECONDS)', async () => {
    gateway = await startGateway({ config, settings: { keyCacheSeconds: 3 } });
    const { key, record } = await import('../../lambda/auth/issue-key.ts').then((module) => module.mintKey({ name: 'late' }));
    expect(await send(gateway, key)).toBe(401);
    await gateway.store.put(record);
    expect(await send(gateway, key)).toBe(401); // the miss is still remembered
    later(3_050);
    expect(await send(gateway, key)).toBe(200);
  });

  test('an unknown key costs one table read per 5 s, not one per attempt; made-up keys cannot grow the cache without bound', async () => {
    let reads = 0;
    gateway = await startGateway({ config, settings: { keyCacheSeconds: 30 } });
    const originalGet = gateway.store.get.bind(gateway.store);
    gateway.store.get = async (hash) => {
      reads++;
      return originalGet(hash);
    };
    const { key } = await import('../../lambda/auth/issue-key.ts').then((module) => module.mintKey({ name: 'never stored' }));
    const statuses = [];
    for (let attempt = 0; attempt < 10; attempt++) statuses.push(await send(gateway, key));
    expect(statuses).toEqual(Array(10).fill(401));
    expect(reads).toBe(1);
  });

  test('revocation takes effect once the cache entry expires (GATEWAY_KEY_CACHE_SECONDS)', async () => {
    gateway = await startGateway({ config, settings: { keyCacheSeconds: 3 } });
    const { key, id } = await gateway.issueKey();
    expect(await send(gateway, key)).toBe(200);
    const record = await gateway.store.findById(id);
    await gateway.store.revoke(record!.keyHash);
    expect(await send(gateway, key)).toBe(200); // still cached
    later(3_050);
    expect(await send(gateway, key)).toBe(401);
  });

  test('lastUsedAt is stamped, but not on every request', async () => {
    gateway = await startGateway({ config, settings: { lastUsedIntervalSeconds: 3600 } });
    const { key, id } = await gateway.issueKey();
    expect((await gateway.store.findById(id))?.lastUsedAt).toBeUndefined();
    await send(gateway, key);
    await waitForLogs(gateway, 1);
    const stamped = (await gateway.store.findById(id))?.lastUsedAt;
    expect(stamped).toEqual(expect.any(String));
    await Promise.all([send(gateway, key), send(gateway, key), send(gateway, key)]);
    await waitForLogs(gateway, 4);
    expect((await gateway.store.findById(id))?.lastUsedAt).toBe(stamped);
  });

  test('the table condition bounds the stamp rate across instances too', async () => {
    gateway = await startGateway({ config });
    const { id } = await gateway.issueKey();
    const { keyHash } = (await gateway.store.findById(id))!;
    const now = new Date();
    await gateway.store.touch(keyHash, now, 300);
    await gateway.store.touch(keyHash, new Date(now.getTime() + 60_000), 300);
    expect((await gateway.store.findById(id))?.lastUsedAt).toBe(now.toISOString());
    const later = new Date(now.getTime() + 301_000);
    await gateway.store.touch(keyHash, later, 300);
    expect((await gateway.store.findById(id))?.lastUsedAt).toBe(later.toISOString());
  });

  test('a burst with a cold key reads the table once', async () => {
    let reads = 0;
    gateway = await startGateway({ config });
    const { key } = await gateway.issueKey();
    const originalGet = gateway.store.get.bind(gateway.store);
    gateway.store.get = async (hash) => {
      reads++;
      return originalGet(hash);
    };
    const statuses = await Promise.all(Array.from({ length: 20 }, () => send(gateway, key)));
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(reads).toBe(1);
  });

  test('a cold instance reads the upstream secret while it looks the key up, not after; model lists and unknown keys read no secret', async () => {
    const upstream = await startUpstream(sendJson(200, fixture('anthropic/text.json')));
    try {
      const reads: string[] = [];
      const credentials = new SecretsManagerCredentials('gateway/upstreams', async (secretId) => {
        reads.push(secretId);
        return JSON.stringify({ ant: 'sk-ant-secret' });
      });
      gateway = await startGateway({ config: { upstreams: { ant: { type: 'anthropic', baseUrl: upstream.url, apiKeyEnv: 'ANT_KEY' } }, routes: [{ model: '*', upstream: 'ant' }] }, credentials });
      const { key } = await gateway.issueKey();
      const { key: listing } = await gateway.issueKey();
      const readsAtLookup: number[] = [];
      const originalGet = gateway.store.get.bind(gateway.store);
      gateway.store.get = async (hash) => {
        readsAtLookup.push(reads.length);
        return originalGet(hash);
      };
      const models = await fetch(`${gateway.url}/first/v1/models`, { headers: { 'x-api-key': listing } });
      expect(models.status).toBe(200);
      expect(await send(gateway, 'not-a-gateway-key')).toBe(401);
      expect(reads).toEqual([]);
      expect(await send(gateway, key)).toBe(200);
      // The models request's lookup read no secret; the messages request's lookup found the read already started.
      expect(readsAtLookup).toEqual([0, 1]);
      expect(reads).toEqual(['gateway/upstreams']);
      expect(upstream.requests.at(-1)?.headers['x-api-key']).toBe('sk-ant-secret');
    } finally {
      await upstream.close();
    }
  });
});

describe('a key update reaches every live credential of the key (issue 19, item 7)', () => {
  let gateway: Harness;
  afterEach(() => gateway.close());

  test('after a rotation, an update restricts the old key in its overlap as well as the new one; the overlap is never extended', async () => {
    gateway = await startGateway({ config, settings: { keyCacheSeconds: 0 } });
    const { key: oldKey, id } = await gateway.issueKey({ name: 'rotated' });
    const printed: string[] = [];
    const out = { json: true, print: (text: string) => printed.push(text) };
    await rotateKey(gateway.store, id, 3600, gateway.url, out);
    const newKey = JSON.parse(printed[0] as string).key as string;
    const overlapEnd = (await gateway.store.findAllById(id))[0]?.expiresAt as number;
    await updateKey(gateway.store, id, { models: ['claude-haiku-*'], expiresAt: Math.floor(Date.now() / 1000) + 90 * 86400, limits: { set: { requestsPerMinute: 1 }, remove: [] } }, out);

    for (const key of [oldKey, newKey]) expect(await send(gateway, key)).toBe(403); // claude-sonnet-5 is no longer allowed
    const [old, current] = await gateway.store.findAllById(id);
    expect(old).toMatchObject({ models: ['claude-haiku-*'], limits: { requestsPerMinute: 1 }, expiresAt: overlapEnd });
    expect(current).toMatchObject({ models: ['claude-haiku-*'], limits: { requestsPerMinute: 1 } });
    expect(current?.expiresAt).toBeGreaterThan(overlapEnd);
  });

  test('an expiry sooner than the overlap end applies to the old key too; revoked and expired keys are left alone', async () => {
    gateway = await startGateway({ config, settings: { keyCacheSeconds: 0 } });
    const { id } = await gateway.issueKey({ name: 'soon' });
    const out = { json: true, print: () => {} };
    await rotateKey(gateway.store, id, 86400, gateway.url, out);
    await rotateKey(gateway.store, id, 86400, gateway.url, out);
    const [first] = await gateway.store.findAllById(id);
    await gateway.store.revoke(first!.keyHash);
    const soon = Math.floor(Date.now() / 1000) + 600;
    await updateKey(gateway.store, id, { expiresAt: soon, limits: { set: {}, remove: [] } }, out);
    const [revoked, overlap, current] = await gateway.store.findAllById(id);
    expect(revoked).toMatchObject({ revoked: true, expiresAt: first?.expiresAt });
    expect([overlap?.expiresAt, current?.expiresAt]).toEqual([soon, soon]);
  });
});

describe('a key item with a malformed attribute is refused and flagged (issue 19, item 8)', () => {
  let gateway: Harness;
  afterAll(() => gateway.close());

  /** Each attribute stored with a type the gateway does not write, as another tool or a hand edit might. */
  const MALFORMED: [string, Record<string, AttributeValue>, string][] = [
    ['revoked as a string', { revoked: { S: 'true' } }, 'revoked (BOOL expected, S found)'],
    ['revoked as a number', { revoked: { N: '1' } }, 'revoked (BOOL expected, N found)'],
    ['expiresAt as a string', { expiresAt: { S: '2000-01-01T00:00:00Z' } }, 'expiresAt (N expected, S found)'],
    ['models as a string set', { models: { SS: ['claude-haiku-*'] } }, 'models (L of S expected, SS found)'],
    ['a limit as a string', { limits: { M: { microUsdPerDay: { S: '10000' } } } }, 'limits.microUsdPerDay (N expected, S found)'],
    ['an unknown limit', { limits: { M: { usdPerDay: { N: '1' } } } }, 'limits.usdPerDay (not a limit this gateway knows)'],
    ['a role it does not know', { role: { S: 'root' } }, 'role ("admin" or "viewer" expected, "root" found)'],
  ];

  test.each(MALFORMED)('%s: 401 for the client, the log line names the key and the attribute; keys list flags it', async (_label, attributes, named) => {
    gateway ??= await startGateway({ config });
    const { key, record } = mintKey({ name: 'hand-edited' });
    await localDynamo(gateway.storeInfo.endpoint).call('PutItem', { TableName: gateway.storeInfo.keyTable, Item: { ...toItem(record), ...attributes } });
    const before = gateway.logs.length;
    const response = await fetch(`${gateway.url}/first/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body });
    expect({ status: response.status, error: ((await response.json()) as { error: { type: string } }).error }).toEqual({ status: 401, error: { type: 'authentication_error', message: `Key ${record.id} cannot be used: its entry in the key store is not valid; ask the gateway's operator to fix it or issue a new key.` } });
    const [line] = (await waitForLogs(gateway, before + 1)).slice(before);
    expect(line).toMatchObject({ status: 401, cause: expect.stringContaining(`key ${record.id} refused`) });
    expect(line?.cause).toContain(named);

    const printed: string[] = [];
    await listKeys(gateway.store, { json: false, print: (text) => printed.push(text) });
    expect(printed.find((text) => text.startsWith(record.id))).toMatch(new RegExp(`MALFORMED .*${named.replace(/[().]/g, '\\$&')}`));
    const listed: string[] = [];
    await listKeys(gateway.store, { json: true, print: (text) => listed.push(text) });
    expect(JSON.parse(listed[0] as string).find((entry: { id: string }) => entry.id === record.id)).toMatchObject({ malformed: [named] });
    // Nothing can be built on it: rotating or updating it would copy settings that cannot be read.
    await expect(rotateKey(gateway.store, record.id, 60, gateway.url, { json: true, print: () => {} })).rejects.toThrow(/malformed/);
  });
});
