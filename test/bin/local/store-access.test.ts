import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCK_FILE } from '../../../bin/local/data-folder.ts';
import { ensureKeyTable, ensureUsageTable, localDynamo, LOCAL_KEY_TABLE, LOCAL_USAGE_TABLE, startEmbeddedStore } from '../../../bin/local/embedded-store.ts';
import { openLocalStore } from '../../../bin/local/store-access.ts';

/**
 * The key CLI on a data folder: the running gateway's store when one serves the folder (its
 * address and key-cache time come along, for the printed setup and the revoke answer), else the
 * folder's own store, held for the command.
 */
test("with a gateway running on the folder, the CLI uses its store, its address, and its key-cache time", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'store-access-'));
  const running = await startEmbeddedStore(undefined);
  await ensureKeyTable(localDynamo(running.endpoint), LOCAL_KEY_TABLE);
  await ensureUsageTable(localDynamo(running.endpoint), LOCAL_USAGE_TABLE);
  // A live process whose command line is the gateway's.
  const gateway = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)', 'bin/dev-server.ts'], { stdio: 'ignore' });
  try {
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: gateway.pid, role: 'server', startedAt: '', url: 'http://127.0.0.1:9911', store: running.endpoint, keyCacheSeconds: 30 }));
    const opened = await openLocalStore(dir);
    expect(opened.gatewayUrl).toBe('http://127.0.0.1:9911');
    expect(opened.revocation).toEqual({ seconds: 30, text: `The running gateway (pid ${gateway.pid}) accepts it for up to 30 s more if it looked it up recently (its key cache, GATEWAY_KEY_CACHE_SECONDS).` });
    expect(await opened.store.list()).toEqual([]);
    await opened.close();
    // The folder's own store was never opened.
    expect(existsSync(join(dir, 'dynamodb'))).toBe(false);
  } finally {
    gateway.kill();
    await running.close();
  }
});

test('with no gateway running, the CLI opens the folder itself and gives it up after the command', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'store-access-'));
  const opened = await openLocalStore(dir);
  expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
  expect(opened.gatewayUrl).toBeUndefined();
  expect(opened.revocation.seconds).toBe(0);
  await opened.close();
  expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
});
