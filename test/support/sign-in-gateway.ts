import { startGateway, type Harness, type HarnessOptions } from './gateway-harness.ts';
import { startTestIdp, type TestIdp, type TestIdpOptions, type TestUser } from './oidc-idp.ts';

/** People of the test organization. */
export const ALICE: TestUser = { sub: 'alice', password: 'alice-password', email: 'alice@example.com', name: 'Alice Example', groups: ['engineering'] };
export const BOB: TestUser = { sub: 'bob', password: 'bob-password', email: 'bob@example.com', groups: ['contractors'] };

export interface SignInSetup {
  idp: TestIdp;
  gateway: Harness;
  /** A clock the sign-in room reads (epoch ms); tests move it with `advance`. */
  advance(ms: number): void;
  close(): Promise<void>;
}

/**
 * A gateway (the harness, with the simulator upstream) signing in against the test IdP: the
 * config's `identity` names the IdP, asks for refresh tokens (offline_access, prompt=consent),
 * and takes `identity` overrides.
 */
export async function startSignInGateway(
  options: { identity?: Record<string, unknown>; idp?: TestIdpOptions; harness?: Partial<HarnessOptions>; clientSecret?: string; routes?: Record<string, unknown>[]; upstreams?: Record<string, unknown> } = {},
): Promise<SignInSetup> {
  const idp = await startTestIdp({ users: [ALICE, BOB], ...options.idp });
  let offset = 0;
  const identity = {
    issuer: idp.issuer,
    clientId: idp.clientId,
    ...(idp.clientSecret ? { clientSecretEnv: 'TEST_IDP_SECRET' } : {}),
    authorizationParams: { prompt: 'consent' },
    ...options.identity,
  };
  const gateway = await startGateway({
    config: { upstreams: options.upstreams ?? { sim: { type: 'simulator' } }, routes: options.routes ?? [{ model: '*', upstream: 'sim' }], identity },
    ...options.harness,
    identity: { ...options.harness?.identity, ...(idp.clientSecret ? { clientSecret: options.clientSecret ?? idp.clientSecret } : {}), now: () => Date.now() + offset },
  });
  await idp.allowRedirect(`${gateway.url}/oauth/callback`);
  return {
    idp,
    gateway,
    advance: (ms) => void (offset += ms),
    async close() {
      await gateway.close();
      await idp.close();
    },
  };
}

/** A Messages request with a bearer: the status and the headers. */
export async function messagesWith(url: string, bearer: string): Promise<{ status: number; headers: Headers; body: string }> {
  const response = await fetch(`${url}/first/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'claude-sonnet-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
}
