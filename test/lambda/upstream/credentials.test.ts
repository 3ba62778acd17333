import http from 'node:http';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createRouter, parseRoutingConfig } from '../../../lambda/config/routing.ts';
import { EnvCredentials, SecretsManagerCredentials } from '../../../lambda/upstream/credentials.ts';
import { listen } from '../../support/gateway-harness.ts';

const router = createRouter(
  parseRoutingConfig({
    upstreams: { anthropic: { type: 'anthropic', apiKeyEnv: 'ANTHROPIC_API_KEY' }, vllm: { type: 'openai-chat', baseUrl: 'http://127.0.0.1:1/v1' } },
    routes: [{ model: '*', upstream: 'anthropic' }],
  }),
);
const anthropic = router.upstreams.get('anthropic')!;
const vllm = router.upstreams.get('vllm')!;

/** Loopback Secrets Manager (JSON 1.1 protocol, GetSecretValue only) that the real SDK client talks to. */
async function startSecretsStub(secretString: () => string | undefined) {
  let calls = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      calls++;
      const { SecretId } = JSON.parse(body);
      const value = secretString();
      res.setHeader('content-type', 'application/x-amz-json-1.1');
      if (value === undefined) {
        res.statusCode = 400;
        res.end(JSON.stringify({ __type: 'ResourceNotFoundException', message: 'Secrets Manager can’t find the specified secret.' }));
        return;
      }
      res.end(JSON.stringify({ ARN: `arn:aws:secretsmanager:us-east-1:000000000000:secret:${SecretId}`, Name: SecretId, SecretString: value, VersionId: 'v1', CreatedDate: 1.7e9 }));
    });
  });
  const endpoint = await listen(server);
  const client = new SecretsManagerClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' }, maxAttempts: 1 });
  return { client, calls: () => calls, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe('SecretsManagerCredentials', () => {
  test('reads the member named after the upstream, caches it, and re-reads after invalidate', async () => {
    let secret = '{"anthropic":"sk-ant-one"}';
    const stub = await startSecretsStub(() => secret);
    const credentials = new SecretsManagerCredentials('gateway/upstreams', stub.client);
    const [a, b] = await Promise.all([credentials.get(anthropic), credentials.get(anthropic)]);
    expect([a, b]).toEqual(['sk-ant-one', 'sk-ant-one']);
    expect(stub.calls()).toBe(1);
    secret = '{"anthropic":"sk-ant-two"}';
    expect(await credentials.get(anthropic)).toBe('sk-ant-one');
    credentials.invalidate();
    expect(await credentials.get(anthropic)).toBe('sk-ant-two');
    expect(await credentials.get(vllm)).toBeUndefined();
    await stub.close();
  });

  test('a missing member is a configuration error that names what to add, not the value', async () => {
    const stub = await startSecretsStub(() => '{}');
    const credentials = new SecretsManagerCredentials('gateway/upstreams', stub.client);
    await expect(credentials.get(anthropic)).rejects.toMatchObject({ status: 500, message: expect.stringContaining('"anthropic" member') });
    await stub.close();
  });

  test('failures are not cached', async () => {
    let secret: string | undefined;
    const stub = await startSecretsStub(() => secret);
    const credentials = new SecretsManagerCredentials('gateway/upstreams', stub.client);
    await expect(credentials.get(anthropic)).rejects.toMatchObject({ kind: 'configuration' });
    secret = '{"anthropic":"sk-late"}';
    expect(await credentials.get(anthropic)).toBe('sk-late');
    secret = 'not json';
    credentials.invalidate();
    await expect(credentials.get(anthropic)).rejects.toMatchObject({ message: expect.stringContaining('not a JSON object') });
    await stub.close();
  });
});

describe('EnvCredentials', () => {
  test('reads the named variable and explains a missing one', async () => {
    expect(await new EnvCredentials({ ANTHROPIC_API_KEY: 'sk-env' }).get(anthropic)).toBe('sk-env');
    await expect(new EnvCredentials({}).get(anthropic)).rejects.toMatchObject({ message: expect.stringContaining('ANTHROPIC_API_KEY') });
    expect(await new EnvCredentials({}).get(vllm)).toBeUndefined();
  });
});
