import { rmSync } from 'node:fs';
import { approveSignIn, launchBrowser, type TestBrowser } from '../support/browser.ts';
import { startGateway, type Harness } from '../support/gateway-harness.ts';
import { startTestIdp, type TestIdp, type TestUser } from '../support/oidc-idp.ts';
import { tempDir } from '../support/processes.ts';
import { ALICE, BOB } from '../support/sign-in-gateway.ts';
import { startLoopbackTls } from '../../bench/lambda/loopback-tls.ts';
import { numberedDirs } from './environment.ts';
import { STUB_FORMAT, UPSTREAM_SECRETS } from './routes.ts';
import { startTap, type Tap } from './tap.ts';
import { ScriptedUpstream } from './upstream/scripted-upstream.ts';

/**
 * The sign-in cells' world: the company IdP (a certified OpenID provider, panva's oidc-provider,
 * with Alice and Bob), a gateway signing people in with it (the production pipeline behind the
 * local server; its sign-in clock can be moved), scripted Anthropic and OpenAI upstreams behind
 * it, the recording tap in front, and Chromium for the person's part. The tap's address (or, with
 * `https`, a TLS front on it) is the gateway's public origin (`identity.publicUrl`): the CLIs,
 * the browser and the IdP's redirect all go through it, so the metadata's endpoints are on the
 * origin Claude Code was given (it revokes at /logout only then).
 */
export const CLAUDE_MODEL = 'claude-sonnet-5';
export const CLAUDE_SMALL_MODEL = 'claude-haiku-4-5-20251001';
export const CODEX_MODEL = 'gpt-5.5';

export interface SignInEnvironment {
  /** The gateway's public origin: the tap, or with `https` a TLS front on the tap. */
  url: string;
  /** With `https`: the test CA that issued the front's certificate (for NODE_EXTRA_CA_CERTS). */
  caFile: string | undefined;
  idp: TestIdp;
  gateway: Harness;
  tap: Tap;
  stubs: { anthropic: ScriptedUpstream; openai: ScriptedUpstream };
  browser: TestBrowser;
  /** A fresh folder under the file's temp root. */
  dir(name: string): string;
  /** Moves the sign-in room's clock (tokens and sessions age; the CLIs' clocks do not). */
  advance(ms: number): void;
  /** The person's part in Chromium: the verification link, Continue, the IdP's form, back at the gateway; the last page's text. */
  approve(link: string, user: Pick<TestUser, 'sub' | 'password'>): Promise<string>;
  close(): Promise<void>;
}

export async function startSignInEnvironment(label: string, identity: Record<string, unknown> = {}, options: { https?: boolean } = {}): Promise<SignInEnvironment> {
  const root = tempDir(`gateway-clients-${label}-`);
  const stubs = { anthropic: await new ScriptedUpstream(STUB_FORMAT.anthropic).start(), openai: await new ScriptedUpstream(STUB_FORMAT.openai).start() };
  // Started first: its address is the public origin the gateway's config names.
  const tap = await startTap('http://127.0.0.1:9');
  // As deployed for /login: https, with a certificate from a CA the machine trusts (a test CA here).
  const tls = options.https ? await startLoopbackTls() : undefined;
  const url = tls ? await tls.front(tap.url) : tap.url;
  const idp = await startTestIdp({ users: [ALICE, BOB] });
  let offset = 0;
  const gateway = await startGateway({
    config: {
      upstreams: {
        anthropic: { type: 'anthropic', baseUrl: stubs.anthropic.url, apiKeyEnv: 'STUB_ANTHROPIC_KEY' },
        openai: { type: 'openai', baseUrl: `${stubs.openai.url}/v1`, apiKeyEnv: 'STUB_OPENAI_KEY' },
      },
      routes: [
        { model: CLAUDE_MODEL, upstream: 'anthropic' },
        { model: CLAUDE_SMALL_MODEL, upstream: 'anthropic' },
        { model: CODEX_MODEL, upstream: 'openai' },
      ],
      identity: {
        issuer: idp.issuer,
        clientId: idp.clientId,
        clientSecretEnv: 'TEST_IDP_SECRET',
        // Refresh tokens from the IdP (offline_access needs prompt=consent at oidc-provider).
        authorizationParams: { prompt: 'consent' },
        publicUrl: url,
        loginNotice: 'Sign in with your Example Corp account.',
        ...identity,
      },
    },
    env: UPSTREAM_SECRETS,
    identity: { clientSecret: idp.clientSecret as string, now: () => Date.now() + offset },
  });
  tap.retarget(gateway.url);
  await idp.allowRedirect(`${url}/oauth/callback`);
  // The browser of a managed machine trusts the company's CA; this one is told to accept the test CA's certificate.
  const browser = await launchBrowser({ ignoreHTTPSErrors: tls !== undefined });
  return {
    url,
    caFile: tls?.caFile,
    idp,
    gateway,
    tap,
    stubs,
    browser,
    dir: numberedDirs(root),
    advance: (ms) => void (offset += ms),
    approve: (link, user) => approveSignIn(browser, link, user),
    async close() {
      await browser.close();
      await tls?.close();
      await tap.close();
      await gateway.close();
      await idp.close();
      for (const stub of Object.values(stubs)) await stub.close();
      if (process.env.CLIENTS_KEEP_TEMP !== '1') rmSync(root, { recursive: true, force: true });
    },
  };
}
