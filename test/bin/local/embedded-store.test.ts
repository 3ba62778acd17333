import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureUsageTable, localDynamo, LOCAL_USAGE_TABLE, startEmbeddedStore } from '../../../bin/local/embedded-store.ts';

/**
 * Closing the store while writes are under way (npm start stopping, a test closing the store of
 * a killed Lambda runtime): nothing is thrown where no one can catch it, and exactly the writes
 * the store acknowledged are kept. dynalite used to close its database between the read and the
 * write of an UpdateItem ("Database is closed"), which ended the whole process.
 */
const WRITES = 200;
const ITEM = { keyId: { S: 'key_close' }, period: { S: 'day#2026-11-25' } };

test(`closing the store with ${WRITES} updates arriving keeps exactly the acknowledged ones, and throws nothing`, async () => {
  const { acknowledged, kept } = await closeDuringUpdates(() => false);
  expect(acknowledged).toBeGreaterThan(0);
  expect(kept).toBe(acknowledged);
});

test(`closing the store while ${WRITES} clients reset their connections after sending keeps at least every acknowledged write, and throws nothing`, async () => {
  // Every other client resets once its request has left; the store may be applying it.
  const { acknowledged, kept } = await closeDuringUpdates((i) => i % 2 === 1);
  expect(kept).toBeGreaterThanOrEqual(acknowledged);
  expect(kept).toBeLessThanOrEqual(WRITES);
});

/**
 * Sends WRITES updates of one counter, each on its own connection, closes the store as soon as
 * it has answered one (the others are then being read, queued or applied), and reopens it to
 * read what was kept. `resets(i)`: whether client i resets its connection once its request left.
 */
async function closeDuringUpdates(resets: (i: number) => boolean): Promise<{ acknowledged: number; kept: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'embedded-store-'));
  try {
    let store = await startEmbeddedStore(dir);
    await usageTableReady(store.endpoint);
    const endpoint = new URL(store.endpoint);
    let acknowledged = 0;
    let firstAcknowledged!: () => void;
    const underWay = new Promise<void>((resolve) => (firstAcknowledged = resolve));
    const onAcknowledged = () => {
      acknowledged++;
      firstAcknowledged();
    };
    const clients = Array.from({ length: WRITES }, (_, i) => sendUpdate(endpoint, onAcknowledged, resets(i)));
    await underWay;
    await store.close();
    await Promise.all(clients);

    store = await startEmbeddedStore(dir);
    const { Item } = await localDynamo(store.endpoint).call('GetItem', { TableName: LOCAL_USAGE_TABLE, Key: ITEM, ConsistentRead: true });
    await store.close();
    return { acknowledged, kept: Number(Item?.requests?.N ?? 0) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Creates the usage table and waits until it serves reads (dynalite activates a new table a moment later). */
async function usageTableReady(endpoint: string): Promise<void> {
  const dynamo = localDynamo(endpoint);
  await ensureUsageTable(dynamo, LOCAL_USAGE_TABLE);
  for (let tries = 0; ; tries++) {
    try {
      await dynamo.call('GetItem', { TableName: LOCAL_USAGE_TABLE, Key: ITEM });
      return;
    } catch (error) {
      if (tries >= 100 || (error as Error).name !== 'ResourceNotFoundException') throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

/**
 * One UpdateItem on its own connection; settles when the connection closes, acknowledged or not.
 * `resetAfterSending`: the client resets the connection once the whole request has left (a killed
 * process), so it never learns whether the write was applied.
 */
function sendUpdate(endpoint: URL, onAcknowledged: () => void, resetAfterSending = false): Promise<void> {
  const body = JSON.stringify({ TableName: LOCAL_USAGE_TABLE, Key: ITEM, UpdateExpression: 'ADD requests :one', ExpressionAttributeValues: { ':one': { N: '1' } } });
  const { hostname: host, port } = endpoint;
  const head = [
    `POST ${endpoint.pathname}/ HTTP/1.1`,
    `host: ${endpoint.host}`,
    'content-type: application/x-amz-json-1.0',
    'x-amz-target: DynamoDB_20120810.UpdateItem',
    // The embedded store checks no signature (its endpoint's secret is the check; the gateway's own client signs).
    'authorization: AWS4-HMAC-SHA256 Credential=local/20261125/local/dynamodb/aws4_request, SignedHeaders=host, Signature=00',
    'x-amz-date: 20261125T000000Z',
    `content-length: ${Buffer.byteLength(body)}`,
    '',
    '',
  ].join('\r\n');
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), host, () => socket.write(head + body, () => resetAfterSending && socket.resetAndDestroy()));
    socket.on('data', (data) => {
      if (data.toString('latin1').startsWith('HTTP/1.1 200')) onAcknowledged();
      socket.destroy();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve());
  });
}

test('a client resetting its connection mid-request does not stop the store', async () => {
  const store = await startEmbeddedStore(undefined);
  try {
    const { hostname, port, host, pathname } = new URL(store.endpoint);
    await new Promise<void>((resolve) => {
      // `expect: 100-continue`: the server answers 100 once it has parsed the head and handed
      // the request to the store, so the reset surely lands mid-body.
      const socket = net.connect(Number(port), hostname, () =>
        socket.write(`POST ${pathname}/ HTTP/1.1\r\nhost: ${host}\r\nx-amz-target: DynamoDB_20120810.GetItem\r\ncontent-length: 100\r\nexpect: 100-continue\r\n\r\n`),
      );
      socket.once('data', (data) => {
        expect(data.toString('latin1')).toMatch(/^HTTP\/1\.1 100 /);
        socket.write('{"Table', () => socket.resetAndDestroy());
      });
      socket.on('error', () => undefined);
      socket.on('close', () => resolve());
    });
    // The store still answers (a CreateTable: a read right after it may find the table still being created).
    await expect(ensureUsageTable(localDynamo(store.endpoint), LOCAL_USAGE_TABLE)).resolves.toBeUndefined();
  } finally {
    await store.close();
  }
});
