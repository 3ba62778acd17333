import { expectedChecksum } from '../../support/managed-settings.ts';
import { refresh, signIn } from '../../support/sign-in.ts';
import { ALICE, BOB, startSignInGateway, type SignInSetup } from '../../support/sign-in-gateway.ts';
import type { TestUser } from '../../support/oidc-idp.ts';

/**
 * `GET /first/managed/settings` as Claude Code's gateway protocol asks, through the real gateway
 * and IdP: the wrapper, the checksum (computed here independently), ETag and 304 only on a
 * matching If-None-Match, `*` answered as without it, 404 for no policy, and a group change at the
 * IdP changing the settings and their checksum at the next refresh.
 */
const CONTRACTOR_SETTINGS = { availableModels: ['haiku'], permissions: { deny: ['WebFetch', 'Bash(curl:*)'] } };
const BASE_SETTINGS = { env: { CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY: '1', TEAM: 'base' }, permissions: { allow: ['Read'] } };
const INTERN: TestUser = { sub: 'ivy', password: 'ivy-password', email: 'ivy@example.com', groups: ['interns'] };

let setup: SignInSetup;

beforeAll(async () => {
  setup = await startSignInGateway({
    idp: { users: [ALICE, BOB, INTERN] },
    identity: {
      policies: [
        { groups: ['contractors'], models: ['claude-haiku-*'], managedSettings: CONTRACTOR_SETTINGS },
        // No base: people in engineering have no managed policy at all; interns an empty one.
        { groups: ['engineering'], models: ['*'] },
        { groups: ['interns'], managedSettings: {} },
      ],
    },
  });
});

afterAll(() => setup.close());

async function settings(bearer: string | undefined, ifNoneMatch?: string) {
  const headers: Record<string, string> = { ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), ...(ifNoneMatch === undefined ? {} : { 'if-none-match': ifNoneMatch }) };
  const response = await fetch(`${setup.gateway.url}/first/managed/settings`, { headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

test('the wrapper with the checksum of the settings and the quoted checksum as ETag; 304 only for a matching If-None-Match', async () => {
  const token = (await signIn(setup.gateway.url, BOB)).access_token as string;
  const answer = await settings(token);
  const checksum = expectedChecksum(CONTRACTOR_SETTINGS);
  expect(answer.status).toBe(200);
  expect(answer.body).toEqual({ uuid: expect.stringMatching(/^[0-9a-f-]{36}$/), checksum, settings: CONTRACTOR_SETTINGS });
  expect(answer.headers.get('etag')).toBe(`"${checksum}"`);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  // Never both of these (Claude Desktop would read it as a deliberate statement).
  expect(answer.headers.get('x-cc-gateway-version')).toBeNull();

  const notModified = await settings(token, `"${checksum}"`);
  expect([notModified.status, notModified.text, notModified.headers.get('etag')]).toEqual([304, '', `"${checksum}"`]);
  expect((await settings(token, `W/"${checksum}"`)).status).toBe(304);
  expect((await settings(token, `"sha256:0000", "${checksum}"`)).status).toBe(304);
  // A stale checksum, an unquoted one, and `*` get the settings (`*`: as if the header were absent).
  for (const stale of [`"sha256:${'0'.repeat(64)}"`, checksum, '*']) {
    const fresh = await settings(token, stale);
    expect([stale, fresh.status, fresh.body?.checksum]).toEqual([stale, 200, checksum]);
  }
});

test('404 for a person no policy gives settings, and for a key not tied to a person; 200 with {} for an empty policy; 401 without a bearer', async () => {
  const alice = (await signIn(setup.gateway.url, ALICE)).access_token as string;
  const none = await settings(alice);
  expect(none.status).toBe(404);
  expect(none.body).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  expect((await settings(alice, '*')).status).toBe(404);
  const { key } = await setup.gateway.issueKey();
  expect((await settings(key)).status).toBe(404);
  const ivy = (await signIn(setup.gateway.url, INTERN)).access_token as string;
  const empty = await settings(ivy);
  expect([empty.status, empty.body?.settings, empty.body?.checksum]).toEqual([200, {}, expectedChecksum({})]);
  expect((await settings(undefined)).status).toBe(401);
  // A key tied to a person gets the person's settings.
  const { key: bobKey } = await setup.gateway.issueKey({ owner: 'bob' });
  expect((await settings(bobKey)).body?.checksum).toBe(expectedChecksum(CONTRACTOR_SETTINGS));
});

test('a group change at the IdP takes effect at the next refresh: other settings, another checksum', async () => {
  const signedIn = await signIn(setup.gateway.url, { sub: 'alice', password: ALICE.password });
  expect((await settings(signedIn.access_token as string)).status).toBe(404);
  setup.idp.setGroups('alice', ['contractors']);
  // The access token in hand still carries the groups of its sign-in; the refresh asks the IdP again.
  expect((await settings(signedIn.access_token as string)).status).toBe(404);
  const refreshed = await refresh(setup.gateway.url, signedIn.refresh_token as string);
  expect(refreshed.status).toBe(200);
  const moved = await settings(refreshed.body.access_token as string);
  expect([moved.status, moved.body?.checksum]).toEqual([200, expectedChecksum(CONTRACTOR_SETTINGS)]);

  setup.idp.setGroups('alice', ['interns']);
  const again = await refresh(setup.gateway.url, refreshed.body.refresh_token as string);
  const changed = await settings(again.body.access_token as string, `"${expectedChecksum(CONTRACTOR_SETTINGS)}"`);
  expect([changed.status, changed.body?.checksum]).toEqual([200, expectedChecksum({})]);
  expect(changed.body?.uuid).not.toBe(moved.body?.uuid);
  setup.idp.setGroups('alice', ALICE.groups);
});

test('a policy with a base: its settings merged under the matching entry (objects recursively, arrays replaced)', async () => {
  const other = await startSignInGateway({ identity: { policies: [{ groups: ['contractors'], managedSettings: CONTRACTOR_SETTINGS }, { managedSettings: BASE_SETTINGS }] } });
  try {
    const bob = (await signIn(other.gateway.url, BOB)).access_token as string;
    const response = await fetch(`${other.gateway.url}/first/managed/settings`, { headers: { authorization: `Bearer ${bob}` } });
    const merged = { env: BASE_SETTINGS.env, permissions: { allow: ['Read'], deny: CONTRACTOR_SETTINGS.permissions.deny }, availableModels: ['haiku'] };
    expect(await response.json()).toMatchObject({ checksum: expectedChecksum(merged), settings: merged });
  } finally {
    await other.close();
  }
});
