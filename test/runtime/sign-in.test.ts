import { readFileSync } from 'node:fs';
import { newTokenKey } from '../../lambda/identity/secrets.ts';
import type { AwsJsonFake } from '../support/aws-json-fake.ts';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.ts';
import { messagesWith, ALICE } from '../support/sign-in-gateway.ts';
import { approveInBrowser, poll, refresh, revoke, ScriptedBrowser } from '../support/sign-in.ts';
import { startFunctionSecrets, startSignInRuntime, type RealRuntime } from './real-runtime.ts';

/**
 * Sign-in on the Lambda path: the production bundle under the real runtime interface client,
 * behind a Function URL front. The sign-in room is loaded on first use from inside the bundle,
 * its secret read from Secrets Manager (signed with the function's role credentials), cookies
 * travel in the event's `cookies` and the response prelude's, form bodies arrive as Lambda
 * passes them. The Function URL's origin is https (AWS's domain): the front serves it over
 * loopback http, so the test's browser maps one onto the other.
 */
let idp: TestIdp;
let secrets: AwsJsonFake;
let runtime: RealRuntime;
let collector: OtlpReceiver;
const tokenKey = newTokenKey();
const SETTINGS = { env: { CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY: '1' } };

beforeAll(async () => {
  idp = await startTestIdp({ users: [ALICE] });
  // An OTLP/HTTP collector on loopback; its header comes from a member of the identity secret.
  collector = await startOtlpReceiver();
  secrets = await startFunctionSecrets({ tokenKey, IDP_CLIENT_SECRET: idp.clientSecret, OTLP_HEADERS: 'x-collector-key=from-the-secret' });
  runtime = await startSignInRuntime(idp, secrets, {
    authorizationParams: { prompt: 'consent' },
    policies: [{ models: ['claude-*'], managedSettings: SETTINGS }],
    // A pool makes every request of Alice's read the group rollups from the stats table.
    caps: { default: { daily: 50 }, pools: { [ALICE.groups[0] as string]: { monthly: 1000 } } },
    otlp: { endpoint: collector.url, headersEnv: 'OTLP_HEADERS' },
  });
}, 90_000);

afterAll(async () => {
  await runtime?.close();
  await secrets?.close();
  await idp?.close();
  await collector?.close();
});

test('a whole sign-in, a model request with its token, a refresh and a sign-out through the real runtime', async () => {
  const url = runtime.url;
  const https = url.replace('http:', 'https:');
  const metadata = (await (await fetch(`${url}/first/.well-known/oauth-authorization-server`)).json()) as Record<string, string>;
  expect(metadata.token_endpoint).toBe(`${https}/oauth/token`);
  const response = await fetch(`${url}/oauth/device_authorization`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'claude-code/2.1.332' }, body: 'surface=claude_code' });
  const device = (await response.json()) as { device_code: string; user_code: string; verification_uri: string };
  expect(device.verification_uri).toBe(`${https}/device`);

  const browser = new ScriptedBrowser((target) => target.replace(https, url));
  const page = await approveInBrowser(browser, url, device.user_code, ALICE);
  expect(page.text).toContain(`You are signed in as ${ALICE.email}`);
  // On https the cookies are __Host- prefixed and Secure.
  expect([...(browser.cookies.get(url)?.keys() ?? [])]).toContain('__Host-gw_csrf');

  const tokens = await poll(url, device.device_code);
  expect(tokens).toMatchObject({ status: 200, body: { email: ALICE.email } });
  const access = tokens.body.access_token as string;
  const answered = await messagesWith(url, access);
  expect(answered.status).toBe(200);
  await expectPolicyServed(url, access, answered.headers);
  const rotated = await refresh(url, tokens.body.refresh_token as string);
  expect(rotated.status).toBe(200);
  expect(await revoke(url, rotated.body.access_token as string)).toBe(200);
  const refused = await messagesWith(url, rotated.body.access_token as string);
  expect(refused.status).toBe(401);
  expect(refused.headers.get('x-should-retry')).toBe('false');
  // The secret was read once, by the one runtime process, with a signature Secrets Manager accepts.
  expect(secrets.calls).toEqual([{ operation: 'GetSecretValue', input: { SecretId: 'gateway/identity' } }]);
  expect(secrets.refused).toBe(0);
  expect(runtime.lambda.starts).toHaveLength(1);
});

test('a form body over 16 KiB is refused on Lambda too (the runtime hands over whole requests)', async () => {
  const response = await fetch(`${runtime.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `grant_type=refresh_token&pad=${'x'.repeat(20_000)}` });
  expect(response.status).toBe(413);
  expect(await response.json()).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('the limit is 16384 bytes') });
});

test('the login helper is served from beside the bundle, as it is in the repository', async () => {
  const response = await fetch(`${runtime.url}/login/helper.mjs`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  expect(await response.text()).toBe(readFileSync(new URL('../../lambda/identity/gateway-login.mjs', import.meta.url), 'utf8'));
});

/**
 * Policy on the Lambda path (handler.ts's own wiring): the person's cap described in the headers
 * and in /api/oauth/usage (their day items in the usage table), the group pool read from the stats
 * table (a read that failed would refuse the turn: fail closed), models enforced, managed
 * settings, and telemetry forwarded with the header from the identity secret, never the bearer.
 */
async function expectPolicyServed(url: string, access: string, headers: Headers): Promise<void> {
  const bearer = { authorization: `Bearer ${access}` };
  expect(headers.get('anthropic-ratelimit-unified-status')).toBe('allowed');
  expect(Number(headers.get('anthropic-ratelimit-unified-overage-reset'))).toBeGreaterThan(Date.now() / 1000);
  const denied = await fetch(`${url}/first/v1/messages`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-5.5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }) });
  expect([denied.status, ((await denied.json()) as { error: { type: string } }).error.type]).toEqual([400, 'invalid_request_error']);

  const usage = await fetch(`${url}/first/api/oauth/usage`, { headers: bearer });
  expect(usage.status).toBe(200);
  expect(((await usage.json()) as { limits: { group: string }[] }).limits.map((limit) => limit.group)).toEqual(['daily']);

  const settings = await fetch(`${url}/first/managed/settings`, { headers: bearer });
  expect(settings.status).toBe(200);
  const { checksum, settings: body } = (await settings.json()) as { checksum: string; settings: unknown };
  expect(body).toEqual(SETTINGS);
  expect((await fetch(`${url}/first/managed/settings`, { headers: { ...bearer, 'if-none-match': `"${checksum}"` } })).status).toBe(304);

  const metrics = await fetch(`${url}/first/v1/metrics`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: '{"resourceMetrics":[]}' });
  expect(metrics.status).toBe(200);
  // Lambda forwards before the invocation ends (nothing runs between invocations).
  const [forwarded] = await collector.waitFor(1);
  expect([forwarded?.path, forwarded?.headers['x-collector-key'], forwarded?.headers.authorization, forwarded?.body.toString()]).toEqual(['/v1/metrics', 'from-the-secret', undefined, '{"resourceMetrics":[]}']);
}
