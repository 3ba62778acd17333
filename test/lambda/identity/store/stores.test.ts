import { ensureIdentityTable, localDynamo, startEmbeddedStore, type EmbeddedStore } from '../../../../bin/local/embedded-store.ts';
import { identityKeys } from '../../../../lambda/identity/identity-table.ts';
import { AuditLog } from '../../../../lambda/identity/store/audit.ts';
import { DeviceGrantStore } from '../../../../lambda/identity/store/device-grants.ts';
import { PeopleStore } from '../../../../lambda/identity/store/people.ts';
import { RateLimits } from '../../../../lambda/identity/store/rate-limits.ts';
import { SessionStore } from '../../../../lambda/identity/store/sessions.ts';
import { IdentityTable } from '../../../../lambda/identity/store/table.ts';

/** The sign-in stores against the embedded DynamoDB-compatible store: single use holds under concurrency. */
describe('identity stores', () => {
  let store: EmbeddedStore;
  let table: IdentityTable;
  const now = Date.now();

  beforeAll(async () => {
    store = await startEmbeddedStore(undefined);
    const dynamo = localDynamo(store.endpoint);
    await ensureIdentityTable(dynamo, 'identity-test');
    table = new IdentityTable('identity-test', dynamo);
  });
  afterAll(() => store.close());

  const grant = (n: number) => ({ deviceHash: `device-${n}`, userCodeHash: `code-${n}`, surface: 'claude_code', ip: '10.0.0.1', userAgent: 'claude-code/2', createdAt: now });

  test('a user code in use cannot be given to a second grant; an expired one can', async () => {
    const grants = new DeviceGrantStore(table);
    expect(await grants.create(grant(1))).toBe(true);
    expect(await grants.create({ ...grant(2), userCodeHash: 'code-1' })).toBe(false);
    expect(await grants.create({ ...grant(3), userCodeHash: 'code-1', createdAt: now + 601_000 })).toBe(true);
    expect((await grants.byUserCode('code-1', now + 601_000))?.deviceHash).toBe('device-3');
    expect(await grants.get('device-1', now + 601_000)).toBeUndefined();
  });

  test('a grant is approved once and consumed once, however many ask at the same moment', async () => {
    const grants = new DeviceGrantStore(table);
    await grants.create(grant(10));
    const approvals = await Promise.all(Array.from({ length: 8 }, (_, i) => grants.approve('device-10', { familyId: `ses_${i}`, sub: 'alice' }, now)));
    expect(approvals.filter(Boolean)).toHaveLength(1);
    const consumed = await Promise.all(Array.from({ length: 16 }, () => grants.consume('device-10')));
    expect(consumed.filter((taken) => taken !== undefined)).toHaveLength(1);
    expect(await grants.deny('device-10')).toBe(false);
    expect((await grants.get('device-10', now))?.status).toBe('consumed');
  });

  test('an expired grant cannot be approved', async () => {
    const grants = new DeviceGrantStore(table);
    await grants.create(grant(11));
    expect(await grants.approve('device-11', { familyId: 'ses_x', sub: 'alice' }, now + 601_000)).toBe(false);
  });

  test('polls are paced by the interval; a fast one grows it by 5 s', async () => {
    const grants = new DeviceGrantStore(table);
    await grants.create(grant(12));
    const current = async () => (await grants.get('device-12', now))!;
    expect(await grants.poll(await current(), now)).toBe(true);
    expect(await grants.poll(await current(), now + 2_000)).toBe(false);
    expect((await current()).interval).toBe(10);
    expect(await grants.poll(await current(), now + 11_000)).toBe(true);
  });

  test('an IdP round trip is taken once', async () => {
    const grants = new DeviceGrantStore(table);
    await grants.beginLogin('state-1', { purpose: 'device', detail: { deviceHash: 'd' }, verifier: 'v', nonce: 'n', bindingHash: 'b', ip: '1.2.3.4', createdAt: now });
    const taken = await Promise.all(Array.from({ length: 6 }, () => grants.takeLogin('state-1', now)));
    expect(taken.filter((login) => login !== undefined)).toEqual([expect.objectContaining({ purpose: 'device', detail: { deviceHash: 'd' }, verifier: 'v', nonce: 'n' })]);
    await grants.beginLogin('state-2', { purpose: 'device', detail: {}, verifier: 'v', nonce: 'n', bindingHash: 'b', ip: '', createdAt: now });
    expect(await grants.takeLogin('state-2', now + 601_000)).toBeUndefined();
  });

  test('per-IP counters admit exactly the limit, concurrently, and start over in the next window', async () => {
    const limits = new RateLimits(table);
    const admitted = await Promise.all(Array.from({ length: 45 }, () => limits.admit('device_authorization', '192.0.2.7', now)));
    expect(admitted.filter(Boolean)).toHaveLength(30);
    expect(await limits.admit('device_authorization', '192.0.2.8', now)).toBe(true);
    expect(await limits.admit('device_authorization', '192.0.2.7', now + 600_000)).toBe(true);
  });

  test('a refresh token is claimed once; a claim is given back only by its holder; a session is revoked once', async () => {
    const sessions = new SessionStore(table);
    const person = { sub: 'alice', email: 'a@example.com', groups: ['eng'] };
    await sessions.create({ id: 'ses_a', person, surface: 'claude_code', ip: '1.1.1.1', createdAt: now, expiresAt: Math.floor(now / 1000) + 86_400, idpRefresh: 'v1.sealed' });
    await sessions.putRefresh('r1', { family: 'ses_a', expiresAt: Math.floor(now / 1000) + 86_400 });
    const claims = await Promise.all(Array.from({ length: 8 }, () => sessions.claimRefresh('r1', now)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    await sessions.releaseRefresh('r1', now + 1);
    expect((await sessions.getRefresh('r1', now))?.usedAt).toBe(now);
    await sessions.releaseRefresh('r1', now);
    expect((await sessions.getRefresh('r1', now))?.usedAt).toBeUndefined();
    const revocations = await Promise.all([sessions.revoke('ses_a', 'test', now), sessions.revoke('ses_a', 'test', now)]);
    expect(revocations.filter((session) => session !== undefined)).toHaveLength(1);
    expect(await sessions.refreshed('ses_a', person, now)).toBe(false);
    expect(await sessions.list('alice')).toEqual([expect.objectContaining({ id: 'ses_a', revokedAt: now })]);
  });

  test('people: first seen kept, overrides untouched by sign-ins, found by email in any case', async () => {
    const people = new PeopleStore(table);
    await people.seen({ sub: 'p1', email: 'Pat@Example.com', groups: ['a'] }, now);
    await table.update(identityKeys.people(), 'p1', { expression: 'SET overrides = :o', values: { ':o': { M: { caps: { M: { daily: { N: '5' } } } } } } });
    await people.seen({ sub: 'p1', email: 'pat@example.com', name: 'Pat', groups: ['b'] }, now + 1_000);
    expect(await people.find('PAT@example.COM')).toEqual({ sub: 'p1', email: 'pat@example.com', name: 'Pat', groups: ['b'], firstSeenAt: now, lastSeenAt: now + 1_000, overrides: { caps: { daily: 5 } } });
    await people.seen({ sub: 'p2', email: 'pat@example.com', groups: [] }, now);
    await expect(people.find('pat@example.com')).rejects.toThrow('2 people have the email');
    expect(await people.find('p2')).toMatchObject({ sub: 'p2' });
  });

  test('audit events: one item per event, kept 400 days, and a log line', async () => {
    const lines: string[] = [];
    const audit = new AuditLog(table, (line) => lines.push(line));
    await audit.record({ type: 'sign_in', sub: 'alice', ip: '1.1.1.1', via: '/oauth/callback' }, now);
    const day = new Date(now).toISOString().slice(0, 10);
    expect(await audit.day(day)).toContainEqual(expect.objectContaining({ type: 'sign_in', sub: 'alice', at: new Date(now).toISOString() }));
    const items = await table.partition(identityKeys.audit(day));
    expect(Number(items.at(-1)?.expiresAt?.N) - Math.floor(now / 1000)).toBe(400 * 86_400);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ msg: 'audit', level: 'info', type: 'sign_in', sub: 'alice' });
    // Refusals strangers can repeat without end are logged, never stored (no write per request).
    const stored = items.length;
    await audit.record({ type: 'request_refused', ip: '203.0.113.9', reason: 'csrf', via: '/device' }, now);
    expect(await table.partition(identityKeys.audit(day))).toHaveLength(stored);
    expect(JSON.parse(lines[1] as string)).toMatchObject({ msg: 'audit', level: 'warn', type: 'request_refused', reason: 'csrf' });
  });
});
