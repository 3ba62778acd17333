import { gzipSync } from 'node:zlib';
import { mintKey } from '../../lambda/auth/issue-key.ts';
import { newTokenKey } from '../../lambda/identity/secrets.ts';
import { runSmokeChecks } from '../../bin/local/smoke-checks.ts';
import { PRIVATE_API_STAGE } from '../../lib/constructs/private-api.ts';
import type { AwsJsonFake } from '../support/aws-json-fake.ts';
import { startRestApiFront } from './rest-api-front.ts';
import { SMOKE_ROUTING, startFunctionSecrets, startRealRuntime, type RealRuntime } from './real-runtime.ts';

/**
 * The private API's path under the real runtime client: the production bundle, invoked with the
 * REST proxy events a private API sends (test/runtime/rest-api-front.ts), answers through the same
 * streaming prelude. The function is configured as the stack configures it (the config file in its
 * task root, GATEWAY_PRIVATE_API_DOMAIN, sign-in's table and secret), and serves the Function URL
 * front beside it.
 */
const DOMAIN = 'gw.corp.example.com';
const ORIGIN_SECRET = 'cloudfront-origin-secret';
let runtime: RealRuntime;
let rest: { url: string; close(): Promise<void> };
let secrets: AwsJsonFake;
let key: string;

beforeAll(async () => {
  secrets = await startFunctionSecrets({ tokenKey: newTokenKey(), GATEWAY_IDP_CLIENT_SECRET: 'idp-secret' });
  runtime = await startRealRuntime({
    routing: {
      ...SMOKE_ROUTING,
      // Nothing here reaches the IdP: metadata and device authorization are the gateway's own.
      identity: { issuer: 'https://idp.invalid', clientId: 'gateway', clientSecretEnv: 'GATEWAY_IDP_CLIENT_SECRET' },
    },
    timeoutMs: 30_000,
    // As beside the CloudFront custom domain with refuseDirectRequests: Function URL requests must carry its header.
    environment: { GATEWAY_PRIVATE_API_DOMAIN: DOMAIN, GATEWAY_ORIGIN_SECRET: ORIGIN_SECRET, GATEWAY_IDENTITY_SECRET: 'gateway/identity', AWS_ENDPOINT_URL_SECRETSMANAGER: secrets.url },
  });
  rest = await startRestApiFront((event) => runtime.lambda.invoke(event), { domainName: DOMAIN, stage: PRIVATE_API_STAGE, vpceId: 'vpce-0a1b2c3d4e5f60718' });
  const minted = mintKey({ name: 'private-api' });
  await runtime.putKey(minted.record);
  key = minted.key;
}, 90_000);

afterAll(async () => {
  await rest?.close();
  await runtime?.close();
  await secrets?.close();
});

test('every smoke check passes through REST proxy events, streams delivered as written', async () => {
  const results = await runSmokeChecks({ url: rest.url, key, messagesModel: 'claude-sim', responsesModel: 'gpt-sim' });
  expect(results.filter((result) => !result.passed)).toEqual([]);
  expect(results.at(-1)).toMatchObject({ detail: expect.stringMatching(/^delivered as written: .* one every 100 ms/) });
});

test('a compressed body arrives byte for byte (every body is binary on the private API)', async () => {
  const body = gzipSync(JSON.stringify({ model: 'claude-sim', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }));
  const response = await fetch(`${rest.url}/first/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': 'gzip' }, body });
  expect(response.status).toBe(200);
  expect(await response.json()).toMatchObject({ type: 'message', role: 'assistant' });
});

test("both fronts are served by the same function instance; only the Function URL needs CloudFront's header", async () => {
  const viaUrl = (headers: Record<string, string>) =>
    fetch(`${runtime.url}/first/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: 'claude-sim', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }),
    });
  const direct = await viaUrl({});
  expect(direct.status).toBe(403);
  await direct.text();
  const throughCloudFront = await viaUrl({ 'x-origin-verify': ORIGIN_SECRET });
  expect(throughCloudFront.status).toBe(200);
  await throughCloudFront.text();
  const refused = await fetch(`${rest.url}/second/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(refused.status).toBe(401);
  expect(await refused.json()).toMatchObject({ error: { type: expect.any(String) } });
  expect(runtime.lambda.starts).toHaveLength(1);
});

test("sign-in names the custom domain on the private API, and the Function URL's own origin beside it", async () => {
  const viaPrivate = (await (await fetch(`${rest.url}/first/.well-known/oauth-authorization-server`)).json()) as Record<string, string>;
  expect(viaPrivate).toMatchObject({ issuer: `https://${DOMAIN}`, token_endpoint: `https://${DOMAIN}/oauth/token`, revocation_endpoint: `https://${DOMAIN}/oauth/revoke` });
  const viaUrl = (await (await fetch(`${runtime.url}/first/.well-known/oauth-authorization-server`, { headers: { 'x-origin-verify': ORIGIN_SECRET } })).json()) as Record<string, string>;
  expect(viaUrl.token_endpoint).toBe(`${runtime.url.replace('http:', 'https:')}/oauth/token`);

  // A form post, base64 on the way in, a device grant stored against the caller's address.
  const response = await fetch(`${rest.url}/oauth/device_authorization`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'claude-code/2.1.332' }, body: 'surface=claude_code' });
  expect(response.status).toBe(200);
  const device = (await response.json()) as { device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string };
  expect(device.verification_uri).toBe(`https://${DOMAIN}/device`);
  expect(device.verification_uri_complete.startsWith(`https://${DOMAIN}/device?`)).toBe(true);
  const poll = await fetch(`${rest.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `grant_type=urn:ietf:params:oauth:grant-type:device_code&device_code=${device.device_code}` });
  expect(poll.status).toBe(400);
  expect(await poll.json()).toMatchObject({ error: 'authorization_pending' });
});
