import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureKeyTable, localDynamo, startEmbeddedStore, type EmbeddedStore } from '../../../bin/local/embedded-store.ts';

/**
 * The embedded store answers only holders of its per-run secret, and never a browser: dynalite
 * alone answers anyone on the port, with `access-control-allow-origin: *`.
 */
let dir: string;
let store: EmbeddedStore;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'store-guard-'));
  store = await startEmbeddedStore(dir);
  await ensureKeyTable(localDynamo(store.endpoint), 'guarded');
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** A DynamoDB call as a raw HTTP request: the path, Host and extra headers chosen by the test. */
function call(path: string, headers: Record<string, string> = {}, method = 'POST'): Promise<Raw> {
  const { hostname, port, host } = new URL(store.endpoint);
  const body = method === 'POST' ? JSON.stringify({ TableName: 'guarded', Key: { keyHash: { S: 'x' } } }) : '';
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: hostname,
        port,
        path,
        method,
        agent: false,
        headers: {
          host,
          'content-type': 'application/x-amz-json-1.0',
          'x-amz-target': 'DynamoDB_20120810.GetItem',
          'x-amz-date': '20261125T000000Z',
          authorization: 'AWS4-HMAC-SHA256 Credential=local/20261125/local/dynamodb/aws4_request, SignedHeaders=host, Signature=00',
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const secretPath = () => `${new URL(store.endpoint).pathname}/`;
const corsHeaders = (answer: Raw) => Object.keys(answer.headers).filter((name) => name.startsWith('access-control-'));

test('a request carrying the secret is served, also through a proxy on another loopback port', async () => {
  expect((await call(secretPath())).status).toBe(200);
  expect((await call(secretPath(), { host: '127.0.0.1:9' })).status).toBe(200);
});

test.each([
  ['no secret', () => '/', {}],
  ['a wrong secret', () => '/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/', {}],
  ['the secret in the query instead of the path', () => `/?${new URL(store.endpoint).pathname.slice(1)}`, {}],
  ['the secret, from a browser page (Origin)', secretPath, { origin: 'https://evil.example' }],
  ['the secret, from a browser (Fetch Metadata)', secretPath, { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' }],
  ['the secret, under a host name that is not a loopback address (DNS rebinding)', secretPath, { host: 'rebound.example:80' }],
])('a request with %s is refused with 403 and no CORS header', async (_case, path, headers) => {
  const answer = await call(path(), headers as Record<string, string>);
  expect(answer.status).toBe(403);
  expect(JSON.parse(answer.text).__type).toMatch(/AccessDeniedException$/);
  expect(corsHeaders(answer)).toEqual([]);
});

test('a browser preflight (OPTIONS with Origin) gets no CORS headers, with or without the secret', async () => {
  for (const path of ['/', secretPath()]) {
    const answer = await call(path, { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-amz-target' }, 'OPTIONS');
    expect(answer.status).toBe(403);
    expect(corsHeaders(answer)).toEqual([]);
  }
});

test("the store's folder is the owner's only (0700, files 0600), also one written by an older version", async () => {
  const older = mkdtempSync(join(tmpdir(), 'store-guard-older-'));
  try {
    const first = await startEmbeddedStore(older);
    await first.close();
    // As an older version left it: the umask's modes.
    chmodSync(join(older, 'dynamodb'), 0o755);
    writeFileSync(join(older, 'dynamodb', 'LOG.old'), 'x', { mode: 0o644 });
    // LevelDB's new files get the process umask, which npm start and the key CLI set to 0077.
    const umask = process.umask(0o077);
    try {
      const again = await startEmbeddedStore(older);
      await again.close();
    } finally {
      process.umask(umask);
    }
    expect(statSync(join(older, 'dynamodb')).mode & 0o777).toBe(0o700);
    const files = readdirSync(join(older, 'dynamodb'));
    expect(files).toContain('LOG.old');
    for (const file of files) expect([file, statSync(join(older, 'dynamodb', file)).mode & 0o777]).toEqual([file, 0o600]);
  } finally {
    rmSync(older, { recursive: true, force: true });
  }
});
