import { warmHttpClient } from '../../lambda/http-client-warm-up.ts';

describe('warmHttpClient', () => {
  test('a node:http request answered in memory: it resolves, touches no network and leaves nothing open', async () => {
    const before = new Set(process.getActiveResourcesInfo());
    // `warm-up.invalid` cannot resolve (RFC 6761): had it looked the name up or connected, it would wait on DNS or fail.
    await warmHttpClient();
    await warmHttpClient();
    await new Promise((resolve) => setImmediate(resolve));
    expect(process.getActiveResourcesInfo().filter((resource) => !before.has(resource) && resource !== 'Immediate')).toEqual([]);
  });
});
