import { startGateway, type Harness } from '../../support/gateway-harness.ts';
import { adminCall, signInWithLink, type ConsoleSession } from '../../support/console.ts';
import { messagesWith } from '../../support/sign-in-gateway.ts';
import { runKeys } from '../../support/processes.ts';

/**
 * Keys through the admin API, against the key CLI: one service module does both, so a key made
 * or changed by either reads the same through the other, and every change is on the audit trail.
 */
const CONFIG = { upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }] };

describe('console keys', () => {
  let gateway: Harness;
  let session: ConsoleSession;
  beforeAll(async () => {
    gateway = await startGateway({ config: CONFIG, settings: { keyCacheSeconds: 0 } });
    session = await signInWithLink(gateway);
  });
  afterAll(() => gateway.close());

  /** The key CLI against the harness's tables (as against a deployed stack's, with --table). */
  const cli = async (args: string[]) => {
    const { storeInfo } = gateway;
    const result = await runKeys([...args, '--json', '--table', storeInfo.keyTable, '--identity-table', storeInfo.identityTable, '--region', 'us-east-1', '--url', gateway.url], { AWS_ENDPOINT_URL: storeInfo.endpoint, AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' });
    return { ...result, json: result.code === 0 ? JSON.parse(result.stdout) : undefined };
  };
  const call = (method: string, path: string, body?: unknown) => adminCall(gateway.url, method, path, { session, ...(body === undefined ? {} : { body }) });
  const listed = async () => ((await call('GET', '/keys')).body as { keys: Record<string, unknown>[] }).keys;
  const withoutConsoleFields = ({ state: _state, costThisMonthMicroUsd: _cost, ...rest }: Record<string, unknown>) => rest;

  test('a key made in the API works at once, reads the same through the CLI, and is revoked for good', async () => {
    const made = await call('POST', '/keys', { name: 'ci-bot', models: ['claude-*'], expiresInSeconds: 7 * 86_400, limits: { requestsPerMinute: 60, microUsdPerDay: 2_500_000 } });
    expect(made.status).toBe(201);
    const issued = made.body as { id: string; key: string; setup: { claudeCode: { env: Record<string, string> } }; limits: unknown };
    expect(issued).toMatchObject({ name: 'ci-bot', models: ['claude-*'], limits: { requestsPerMinute: 60, microUsdPerDay: 2_500_000 }, revoked: false });
    expect(issued.setup.claudeCode.env).toEqual({ ANTHROPIC_BASE_URL: `${gateway.url}/first`, ANTHROPIC_AUTH_TOKEN: issued.key });
    expect((await messagesWith(gateway.url, issued.key)).status).toBe(200);

    const fromCli = (await cli(['list'])).json as Record<string, unknown>[];
    const viaApi = (await listed()).find((key) => key.id === issued.id) as Record<string, unknown>;
    expect(viaApi.state).toBe('active');
    expect(fromCli.find((key) => key.id === issued.id)).toEqual(withoutConsoleFields(viaApi));

    const revoked = await call('POST', `/keys/${issued.id}/revoke`);
    // As `keys revoke --json` says it: this harness trusts no looked-up key (its key cache is 0 s).
    expect(revoked).toMatchObject({ status: 200, body: { id: issued.id, revoked: true, effectiveWithinSeconds: 0 } });
    expect((await messagesWith(gateway.url, issued.key)).status).toBe(401);
    expect((await listed()).find((key) => key.id === issued.id)).toMatchObject({ state: 'revoked' });
  });

  test('a key made by the CLI reads the same in the API; changes made by either show in the other', async () => {
    const created = await cli(['create', '--name', 'from-cli', '--rpm', '10', '--usd-per-month', '12.5', '--role', 'viewer']);
    expect(created.code).toBe(0);
    const id = created.json.id as string;
    const { key: _key, setup: _setup, ...createdView } = created.json;
    expect(withoutConsoleFields((await listed()).find((key) => key.id === id) as Record<string, unknown>)).toEqual(createdView);

    const changed = await call('PATCH', `/keys/${id}`, { name: 'from-cli-renamed', models: ['gpt-5*'], limits: { requestsPerMinute: null, tokensPerDay: 1_000 } });
    expect(changed.status).toBe(200);
    const afterApi = ((await cli(['list'])).json as Record<string, unknown>[]).find((key) => key.id === id);
    expect(afterApi).toMatchObject({ name: 'from-cli-renamed', models: ['gpt-5*'], limits: { microUsdPerMonth: 12_500_000, tokensPerDay: 1_000 }, role: 'viewer' });
    expect((afterApi as { limits: Record<string, unknown> }).limits.requestsPerMinute).toBeUndefined();

    expect((await cli(['update', id, '--models', 'any', '--usd-per-month', 'none'])).code).toBe(0);
    const afterCli = (await listed()).find((key) => key.id === id) as { models?: string[]; limits: Record<string, number> };
    expect(afterCli.models).toBeUndefined();
    expect(afterCli.limits).toEqual({ tokensPerDay: 1_000 });
  });

  test('rotation: the new key works, the old one until its overlap, the identity and usage carry on', async () => {
    const made = (await call('POST', '/keys', { name: 'rotating' })).body as { id: string; key: string };
    const rotated = await call('POST', `/keys/${made.id}/rotate`, { overlapSeconds: 0 });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body as { id: string; key: string; previousWorksUntil: string };
    expect(fresh.id).toBe(made.id);
    expect(fresh.key).not.toBe(made.key);
    expect((await messagesWith(gateway.url, fresh.key)).status).toBe(200);
    expect((await messagesWith(gateway.url, made.key)).status).toBe(401);
  });

  test('refusals read the same as the CLI\'s: an unknown key is 404 in the API and exit 2 in the CLI', async () => {
    const api = await call('PATCH', '/keys/key_0000000000000000', { name: 'x' });
    expect(api.status).toBe(404);
    expect((api.body as { error: { message: string } }).error.message).toBe('No key with id key_0000000000000000.');
    const cliAnswer = await cli(['update', 'key_0000000000000000', '--name', 'x']);
    expect(cliAnswer.code).toBe(2);
    expect(cliAnswer.stderr).toContain('No key with id key_0000000000000000.');
    const made = (await call('POST', '/keys', { name: 'unchanged' })).body as { id: string };
    const nothing = await call('PATCH', `/keys/${made.id}`, {});
    expect(nothing.status).toBe(400);
    expect((nothing.body as { error: { message: string } }).error.message).toMatch(/^Nothing to change/);
    const owner = await call('POST', '/keys', { name: 'owned', owner: 'nobody@example.com' });
    expect(owner.status).toBe(400);
  });

  test('a name with markup is kept as text, exactly', async () => {
    const name = '<img src=x onerror="globalThis.pwned=1">';
    const made = await call('POST', '/keys', { name });
    expect((made.body as { name: string }).name).toBe(name);
    expect((await listed()).some((key) => key.name === name)).toBe(true);
  });

  test('every change is on the audit trail: who, what, from where; the CLI\'s too', async () => {
    const made = (await call('POST', '/keys', { name: 'audited' })).body as { id: string };
    await call('PATCH', `/keys/${made.id}`, { limits: { requestsPerMinute: 5 } });
    await call('POST', `/keys/${made.id}/rotate`, {});
    await call('POST', `/keys/${made.id}/revoke`);
    const cliMade = (await cli(['create', '--name', 'audited-cli'])).json as { id: string };
    const events = ((await call('GET', '/audit')).body as { events: Record<string, string>[] }).events.filter((event) => event.key === made.id || event.key === cliMade.id);
    // Newest first.
    expect(events.map((event) => [event.type, event.key])).toEqual([
      ['key_created', cliMade.id],
      ['key_revoked', made.id],
      ['key_rotated', made.id],
      ['key_updated', made.id],
      ['key_created', made.id],
    ]);
    for (const event of events.slice(1)) expect(event).toMatchObject({ actor: 'one-time link', ip: '127.0.0.1', via: 'console' });
    expect(events[0]).toMatchObject({ actor: 'operator (key CLI)', via: 'keys create' });
    expect(events.find((event) => event.type === 'key_updated')?.detail).toContain('requestsPerMinute=5');
    // Never the key itself.
    expect(JSON.stringify(events)).not.toMatch(/gwk_/);
  });

  test('the list is paged and filtered; a filter that matches nothing says so with an empty page', async () => {
    const found = (await call('GET', '/keys?q=ROTATING')).body as { keys: { name: string }[]; cursor: string | null };
    expect(found.keys.map((key) => key.name)).toEqual(['rotating', 'rotating']);
    expect(((await call('GET', '/keys?state=revoked')).body as { keys: { state: string }[] }).keys.every((key) => key.state === 'revoked')).toBe(true);
    expect(((await call('GET', '/keys?q=no-such-key-anywhere')).body as { keys: unknown[] }).keys).toEqual([]);
  });
});
