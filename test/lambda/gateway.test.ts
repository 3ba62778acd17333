import { jest } from '@jest/globals';
import { startGateway, type Harness } from '../support/gateway-harness.ts';
import { messagesWith } from '../support/sign-in-gateway.ts';

/** lambda/gateway.ts: the pipeline's own seams (the preflight npm start runs before reading a body). */
const SIM = { upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }] };

let gateway: Harness;
afterEach(() => gateway.close());

const post = (key: string) => messagesWith(gateway.url, key);

test('the handler takes over the key check of its own request\'s preflight: one key lookup per request', async () => {
  // No key cache: every check reads the key table, so the reads count the checks.
  gateway = await startGateway({ config: SIM, settings: { keyCacheSeconds: 0 } });
  const { key } = await gateway.issueKey();
  const reads = jest.spyOn(gateway.store, 'get');
  for (let i = 0; i < 3; i++) expect((await post(key)).status).toBe(200);
  expect(reads).toHaveBeenCalledTimes(3);
  // An unknown key is refused at the preflight, read once, and nothing is taken over.
  reads.mockClear();
  const unknown = await post(`${key.slice(0, 10)}${key[10] === 'a' ? 'b' : 'a'}${key.slice(11)}`);
  expect(unknown.status).toBe(401);
  expect(reads.mock.calls.length).toBeLessThanOrEqual(1);
});

test('a key revoked after its request was checked refuses the next request at once (key cache off)', async () => {
  gateway = await startGateway({ config: SIM, settings: { keyCacheSeconds: 0 } });
  const { key, id } = await gateway.issueKey();
  expect((await post(key)).status).toBe(200);
  const [record] = await gateway.store.findAllById(id);
  await gateway.store.revoke(record!.keyHash);
  expect((await post(key)).status).toBe(401);
});
