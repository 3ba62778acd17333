import { newTokenKey } from '../../lambda/identity/secrets.ts';
import type { AwsJsonFake } from '../support/aws-json-fake.ts';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.ts';
import { messagesWith, ALICE } from '../support/sign-in-gateway.ts';
import { approveInBrowser, poll, refresh, revoke, ScriptedBrowser } from '../support/sign-in.ts';
import { startFunctionSecrets, startRealRuntime, type RealRuntime } from './real-runtime.ts';

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
const tokenKey = newTokenKey();

beforeAll(async () => {
  idp = await startTestIdp({ users: [ALICE] });
  secrets = await startFunctionSecrets({ tokenKey, IDP_CLIENT_SECRET: idp.clientSecret });
  runtime = await startRealRuntime({
    routing: {
      upstreams: { sim: { type: 'simulator' } },
      routes: [{ model: '*', upstream: 'sim' }],
      identity: { issuer: idp.issuer, clientId: idp.clientId, clientSecretEnv: 'IDP_CLIENT_SECRET', authorizationParams: { prompt: 'consent' } },
    },
    timeoutMs: 10_000,
    environment: { GATEWAY_IDENTITY_SECRET: 'gateway/identity', AWS_ENDPOINT_URL_SECRETSMANAGER: secrets.url },
  });
  await idp.allowRedirect(`${runtime.url.replace('http:', 'https:')}/oauth/callback`);
}, 90_000);

afterAll(async () => {
  await runtime?.close();
  await secrets?.close();
  await idp?.close();
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
  expect((await messagesWith(url, tokens.body.access_token as string)).status).toBe(200);
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
