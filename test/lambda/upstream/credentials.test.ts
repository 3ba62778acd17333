import http from 'node:http';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createRouter, parseRoutingConfig } from '../../../lambda/config/routing.ts';
import { EnvCredentials, SecretsManagerCredentials } from '../../../lambda/upstream/credentials.ts';
import { listen } from '../../support/gateway-harness.ts';

const router = createRouter(
  parseRoutingConfig({
    upstreams: {
      anthropic: { type: 'anthropic', apiKeyEnv: 'ANTHROPIC_API_KEY' },
      pool: { type: 'openai', apiKeyEnv: ['OPENAI_KEY_A', 'OPENAI_KEY_B'] },
      vllm: { type: 'openai-chat', baseUrl: 'http://127.0.0.1:1/v1' },
    },
    routes: [{ model: '*', upstream: 'anthropic' }],
  }),
);
const anthropic = router.upstreams.get('anthropic')!;
const vllm = router.upstreams.get('vllm')!;
const pool = router.upstreams.get('pool')!;

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
    const [a, b] = await Promise.all([credentials.keys(anthropic), credentials.keys(anthropic)]);
    expect([a, b]).toEqual([['sk-ant-one'], ['sk-ant-one']]);
    expect(stub.calls()).toBe(1);
    secret = '{"anthropic":"sk-ant-two"}';
    expect(await credentials.keys(anthropic)).toEqual(['sk-ant-one']);
    credentials.invalidate();
    expect(await credentials.keys(anthropic)).toEqual(['sk-ant-two']);
    expect(await credentials.keys(vllm)).toEqual([]);
    await stub.close();
  });

  test('several keys: a list under the upstream\'s name, or one member per configured variable', async () => {
    let secret = '{"pool":["sk-a","sk-b",""]}';
    const stub = await startSecretsStub(() => secret);
    const credentials = new SecretsManagerCredentials('gateway/upstreams', stub.client);
    expect(await credentials.keys(pool)).toEqual(['sk-a', 'sk-b']);
    secret = '{"OPENAI_KEY_A":"sk-1","OPENAI_KEY_B":"sk-2"}';
    credentials.invalidate();
    expect(await credentials.keys(pool)).toEqual(['sk-1', 'sk-2']);
    await stub.close();
  });

  test('a missing member is a configuration error that names what to add, not the value', async () => {
    const stub = await startSecretsStub(() => '{}');
    const credentials = new SecretsManagerCredentials('gateway/upstreams', stub.client);
    await expect(credentials.keys(anthropic)).rejects.toMatchObject({ status: 500, message: expect.stringContaining('"anthropic" member') });
    await stub.close();
  });

  test('failures are not cached', async () => {
    let secret: string | undefined;
    const stub = await startSecretsStub(() => secret);
    const credentials = new SecretsManagerCredentials('gateway/upstreams', stub.client);
    await expect(credentials.keys(anthropic)).rejects.toMatchObject({ kind: 'configuration' });
    secret = '{"anthropic":"sk-late"}';
    expect(await credentials.keys(anthropic)).toEqual(['sk-late']);
    secret = 'not json';
    credentials.invalidate();
    await expect(credentials.keys(anthropic)).rejects.toMatchObject({ message: expect.stringContaining('not a JSON object') });
    await stub.close();
  });
});

describe('EnvCredentials', () => {
  test('reads the named variables and explains a missing one', async () => {
    expect(await new EnvCredentials({ ANTHROPIC_API_KEY: 'sk-env' }).keys(anthropic)).toEqual(['sk-env']);
    await expect(new EnvCredentials({}).keys(anthropic)).rejects.toMatchObject({ message: expect.stringContaining('ANTHROPIC_API_KEY') });
    expect(await new EnvCredentials({}).keys(vllm)).toEqual([]);
    expect(await new EnvCredentials({ OPENAI_KEY_A: 'a', OPENAI_KEY_B: 'b' }).keys(pool)).toEqual(['a', 'b']);
    await expect(new EnvCredentials({ OPENAI_KEY_A: 'a' }).keys(pool)).rejects.toMatchObject({ message: expect.stringContaining('OPENAI_KEY_B') });
  });
});
