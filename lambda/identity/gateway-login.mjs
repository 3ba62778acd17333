#!/usr/bin/env node
// gateway-login: signs you in to an agent-gateway with your company identity and hands a current
// access token to Claude Code (apiKeyHelper), Codex ([model_providers.<id>.auth]) and scripts.
// The gateway serves this file at <host>/login/helper.mjs. It needs Node 18 or later and nothing
// else (docs/sign-in.md, "The login helper").
//
//   gateway-login <host>            sign in: confirm a code in the browser (OAuth device flow)
//   gateway-login token <host>      print a current access token, refreshing it when needed
//   gateway-login logout <host>     sign out (the gateway revokes the tokens) and forget them
//
// The sign-in is kept in $XDG_CONFIG_HOME/agent-gateway/<host>.json (default ~/.config), readable
// by you alone. `token` prints the token and nothing else on stdout; failures are one line on
// stderr and a non-zero exit.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { homedir, platform } from 'node:os';
import { isAbsolute, join } from 'node:path';

const VERSION = '1';
/** Refresh when less than this is left (or half the token's life, when that is shorter). */
const REFRESH_MARGIN_MS = 5 * 60_000;
/** Asked again for the token handed out this recently: the client was probably refused it (its 401 recovery). */
const RECHECK_WINDOW_MS = 60_000;
/** Another process refreshing holds the lock at most this long; an older lock was left by a killed process. */
const STALE_LOCK_MS = 30_000;
const LOCK_WAIT_MS = 15_000;
const REQUEST_TIMEOUT_MS = 10_000;
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

class Failure extends Error {}
const fail = (message) => {
  throw new Failure(message);
};

// ------------------------------------------------------------------------------ the gateway

/** The gateway's origin from what the developer typed (`https://gw.example.com`, with or without a path). */
function gatewayOrigin(arg) {
  let url;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(arg) ? arg : `https://${arg}`);
  } catch {
    fail(`"${arg}" is not a gateway address (https://gw.example.com)`);
  }
  const loopback = url.hostname === 'localhost' || url.hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) fail(`${url.origin}: the gateway must be https (plain http only on this machine's loopback)`);
  return url.origin;
}

/** One HTTP request: a form body when `form` is given; the answer's status and parsed JSON (or text). */
function request(method, url, { form, bearer } = {}) {
  const body = form ? new URLSearchParams(form).toString() : undefined;
  const headers = { accept: 'application/json', 'user-agent': `gateway-login/${VERSION} node/${process.versions.node}` };
  if (body !== undefined) Object.assign(headers, { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) });
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  const client = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, { method, headers, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      const chunks = [];
      let size = 0;
      res.on('data', (chunk) => {
        size += chunk.length;
        if (size > 1 << 20) req.destroy(new Error('the answer is too large'));
        else chunks.push(chunk);
      });
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, json: json && typeof json === 'object' ? json : {}, text });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** The OAuth endpoints (RFC 8414 metadata), used only on the gateway's own origin, as Claude Code does. */
async function endpoints(origin) {
  let metadata = {};
  try {
    const answer = await request('GET', `${origin}/.well-known/oauth-authorization-server`);
    if (answer.status === 404) fail(`${origin} does not offer sign-in (no OAuth metadata): ask its operator, or use a key`);
    if (answer.status === 200) metadata = answer.json;
  } catch (error) {
    if (error instanceof Failure) throw error;
    fail(`cannot reach ${origin}: ${error.message}`);
  }
  const own = (value, path) => {
    try {
      if (typeof value === 'string' && new URL(value).origin === origin) return value;
    } catch {
      // not a URL: the default path
    }
    return path === undefined ? undefined : `${origin}${path}`;
  };
  return {
    device: own(metadata.device_authorization_endpoint, '/oauth/device_authorization'),
    token: own(metadata.token_endpoint, '/oauth/token'),
    revocation: own(metadata.revocation_endpoint, undefined),
  };
}

/** What the token endpoint answered, as the state this script keeps. */
function stateOf(origin, found, answer, previous = {}) {
  const now = Date.now();
  const lifeMs = Math.max(1, Number(answer.expires_in) || 0) * 1000;
  return {
    gateway: origin,
    tokenEndpoint: found.token,
    ...(found.revocation ? { revocationEndpoint: found.revocation } : {}),
    email: answer.email ?? previous.email,
    accessToken: answer.access_token,
    expiresAt: now + lifeMs,
    refreshAt: now + lifeMs - Math.min(REFRESH_MARGIN_MS, lifeMs / 2),
    // Rotated on every refresh; an answer without one keeps the current one.
    ...(answer.refresh_token ?? previous.refreshToken ? { refreshToken: answer.refresh_token ?? previous.refreshToken } : {}),
  };
}

// ------------------------------------------------------------------------------ the local store

function storeOf(origin) {
  const xdg = process.env.XDG_CONFIG_HOME;
  const dir = join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.config'), 'agent-gateway');
  const file = join(dir, `${new URL(origin).host.replace(/[^A-Za-z0-9.-]/g, '_')}.json`);
  return { dir, file, lock: `${file}.lock`, last: `${file}.last` };
}

function read(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Written whole or not at all (a new file renamed over the old one), readable by the user alone. */
function writePrivate(store, path, value) {
  mkdirSync(store.dir, { recursive: true, mode: 0o700 });
  chmodSync(store.dir, 0o700);
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(value, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}

function remove(path) {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

function signedIn(store, origin) {
  const state = read(store.file);
  return state && state.gateway === origin && typeof state.accessToken === 'string' ? state : undefined;
}

/** One refresh at a time per gateway: a refresh token works once, and clients may ask together. */
async function withLock(store, fn) {
  mkdirSync(store.dir, { recursive: true, mode: 0o700 });
  for (const until = Date.now() + LOCK_WAIT_MS; ; ) {
    try {
      closeSync(openSync(store.lock, 'wx', 0o600));
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      let age = 0;
      try {
        age = Date.now() - statSync(store.lock).mtimeMs;
      } catch {
        continue; // released meanwhile
      }
      if (age > STALE_LOCK_MS) remove(store.lock);
      else if (Date.now() > until) fail(`another gateway-login has been refreshing for ${Math.round(age / 1000)} s; try again`);
      else await sleep(100);
    }
  }
  try {
    return await fn();
  } finally {
    remove(store.lock);
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const fingerprint = (token) => createHash('sha256').update(token).digest('hex').slice(0, 16);

// ------------------------------------------------------------------------------ commands

async function signIn(origin, openBrowser) {
  const store = storeOf(origin);
  const found = await endpoints(origin);
  const started = await request('POST', found.device, { form: { surface: 'gateway_login' } });
  if (started.status === 429 || started.json.error === 'slow_down') fail('too many sign-ins from this address; try again in a few minutes');
  if (started.status !== 200 || typeof started.json.device_code !== 'string') fail(`the gateway refused to start a sign-in (${started.status} ${started.json.error ?? ''})`.trim());
  const { device_code: deviceCode, user_code: userCode, verification_uri: uri, verification_uri_complete: complete, login_notice: notice } = started.json;
  const link = typeof complete === 'string' ? complete : uri;
  process.stderr.write(`To sign in to ${origin}, open\n\n  ${link}\n\nand check that it shows the code ${userCode}.\n${notice ? `\n${notice}\n` : ''}\n`);
  if (openBrowser) open(link);
  process.stderr.write('Waiting for the browser...\n');
  let interval = Math.max(1, Number(started.json.interval) || 5);
  const deadline = Date.now() + Math.max(60, Number(started.json.expires_in) || 600) * 1000;
  for (;;) {
    await sleep(interval * 1000);
    if (Date.now() > deadline) fail('the code expired before the sign-in finished; run gateway-login again');
    const answer = await request('POST', found.token, { form: { grant_type: DEVICE_GRANT, device_code: deviceCode } });
    if (answer.status === 200 && typeof answer.json.access_token === 'string') {
      const previous = signedIn(store, origin);
      writePrivate(store, store.file, stateOf(origin, found, answer.json));
      // The sign-in this one replaces: ended at the gateway too (best effort).
      if (previous?.refreshToken && previous.revocationEndpoint) await request('POST', previous.revocationEndpoint, { form: { token: previous.refreshToken, token_type_hint: 'refresh_token' } }).catch(() => undefined);
      process.stderr.write(`Signed in to ${origin}${answer.json.email ? ` as ${answer.json.email}` : ''}.\n`);
      return;
    }
    const error = answer.json.error;
    if (error === 'authorization_pending') continue;
    if (error === 'slow_down') interval += 5;
    else if (error === 'access_denied') fail('the sign-in was denied in the browser');
    else if (error === 'expired_token') fail('the code expired before the sign-in finished; run gateway-login again');
    else fail(`the gateway refused the sign-in (${answer.status} ${error ?? answer.text.slice(0, 200)})`);
  }
}

async function token(origin) {
  const store = storeOf(origin);
  const notSignedIn = () => fail(`not signed in to ${origin}; sign in with: gateway-login ${origin}`);
  let state = signedIn(store, origin);
  if (!state) notSignedIn();
  const last = read(store.last);
  const askedAgain = last?.token === fingerprint(state.accessToken) && Date.now() - last.at < RECHECK_WINDOW_MS;
  if (Date.now() >= state.refreshAt || (askedAgain && (await refused(origin, state.accessToken)))) {
    state = await withLock(store, async () => {
      const current = signedIn(store, origin);
      if (!current) notSignedIn();
      // Another process refreshed while this one waited for the lock.
      if (current.accessToken !== state.accessToken && Date.now() < current.refreshAt) return current;
      return refresh(store, origin, current);
    });
  }
  writePrivate(store, store.last, { token: fingerprint(state.accessToken), at: Date.now() });
  process.stdout.write(`${state.accessToken}\n`);
}

/** Whether the gateway refuses a token (its 401), asked with a request that costs nothing upstream. */
async function refused(origin, accessToken) {
  try {
    return (await request('GET', `${origin}/first/v1/models`, { bearer: accessToken })).status === 401;
  } catch {
    return false;
  }
}

async function refresh(store, origin, state) {
  const ended = (why) => {
    remove(store.file);
    remove(store.last);
    fail(`${why}; sign in again with: gateway-login ${origin}`);
  };
  if (!state.refreshToken) ended(`your sign-in to ${origin} has ended`);
  let answer;
  try {
    answer = await request('POST', state.tokenEndpoint, { form: { grant_type: 'refresh_token', refresh_token: state.refreshToken } });
  } catch (error) {
    answer = { status: 0, json: {}, text: error.message };
  }
  if (answer.status === 200 && typeof answer.json.access_token === 'string') {
    const next = stateOf(origin, { token: state.tokenEndpoint, revocation: state.revocationEndpoint }, answer.json, state);
    writePrivate(store, store.file, next);
    return next;
  }
  if (answer.json.error === 'invalid_grant') ended(`your sign-in to ${origin} has ended`);
  // The gateway or the IdP cannot be reached: the current token serves while it lasts.
  if (Date.now() < state.expiresAt - 10_000) return state;
  fail(`cannot refresh the sign-in to ${origin} (${answer.status ? `${answer.status} ${answer.json.error ?? ''}`.trim() : answer.text}); try again in a moment`);
}

async function signOut(origin) {
  const store = storeOf(origin);
  const state = signedIn(store, origin);
  if (!state) {
    process.stderr.write(`Not signed in to ${origin}.\n`);
    return;
  }
  const revocation = state.revocationEndpoint ?? (await endpoints(origin).catch(() => ({}))).revocation;
  let revoked = false;
  if (revocation) {
    for (const form of [{ token: state.accessToken }, ...(state.refreshToken ? [{ token: state.refreshToken, token_type_hint: 'refresh_token' }] : [])]) {
      revoked = (await request('POST', revocation, { form }).catch(() => ({ status: 0 }))).status === 200 || revoked;
    }
  }
  remove(store.file);
  remove(store.last);
  process.stderr.write(revoked ? `Signed out of ${origin}.\n` : `Forgot the sign-in to ${origin}; the gateway could not be told, so its tokens work until they expire.\n`);
}

/** Opens the link in the browser when this machine can ($BROWSER, xdg-open, open, start); the link is printed anyway. */
function open(link) {
  const [command, args] =
    process.env.BROWSER ? [process.env.BROWSER, [link]] : platform() === 'darwin' ? ['open', [link]] : platform() === 'win32' ? ['cmd', ['/c', 'start', '', link]] : ['xdg-open', [link]];
  try {
    const child = spawn(command, args, { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // no browser here: the printed link is enough
  }
}

// ------------------------------------------------------------------------------ main

const USAGE = `usage: gateway-login <host>           sign in (opens the browser; --no-browser only prints the link)
       gateway-login token <host>     print a current access token
       gateway-login logout <host>    sign out and forget the tokens`;

async function main(argv) {
  const openBrowser = !argv.includes('--no-browser');
  const args = argv.filter((arg) => arg !== '--no-browser');
  if (args.length === 2 && args[0] === 'token') return token(gatewayOrigin(args[1]));
  if (args.length === 2 && args[0] === 'logout') return signOut(gatewayOrigin(args[1]));
  if (args.length === 2 && args[0] === 'login') return signIn(gatewayOrigin(args[1]), openBrowser);
  if (args.length === 1 && !args[0].startsWith('-') && args[0] !== 'token' && args[0] !== 'logout') return signIn(gatewayOrigin(args[0]), openBrowser);
  process.stderr.write(`${USAGE}\n`);
  process.exitCode = 2;
}

main(process.argv.slice(2)).catch((error) => {
  process.stderr.write(`gateway-login: ${error instanceof Failure ? error.message : `unexpected error: ${error?.message ?? error}`}\n`);
  process.exitCode = 1;
});
