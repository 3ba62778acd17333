import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { bareSecretReader } from '../../../lambda/aws/secrets.ts';
import { createRouter, parseRoutingConfig } from '../../../lambda/config/routing.ts';
import type { GatewayError } from '../../../lambda/errors.ts';
import { EnvCredentials, SecretsManagerCredentials } from '../../../lambda/upstream/credentials.ts';
import { JSON_FAKE_CREDENTIALS, startAwsJsonFake, type JsonAnswer } from '../../support/aws-json-fake.ts';

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

/** Loopback Secrets Manager (GetSecretValue, signatures verified) read by the gateway's own reader. */
async function startSecretsStub(secretString: () => string | undefined) {
  const fake = await startAwsJsonFake({ service: 'secretsmanager', targetPrefix: 'secretsmanager', handlers: { GetSecretValue: (input) => secretAnswer(String(input.SecretId), secretString()) } });
  const client = bareSecretReader({ region: 'us-east-1', endpoint: fake.url, credentials: async () => JSON_FAKE_CREDENTIALS });
  return { client, fake, calls: () => fake.calls.length, close: () => fake.close() };
}

function secretAnswer(secretId: string, value: string | undefined): JsonAnswer {
  if (value === undefined) return { status: 400, error: 'ResourceNotFoundException', message: 'Secrets Manager can’t find the specified secret.' };
  return { output: { ARN: `arn:aws:secretsmanager:us-east-1:000000000000:secret:${secretId}`, Name: secretId, SecretString: value, VersionId: 'v1', CreatedDate: 1.7e9 } };
}

describe('the Secrets Manager fake', () => {
  test('answers the official SDK client as the service does, and refuses a bad signature', async () => {
    const stub = await startSecretsStub(() => '{"anthropic":"sk"}');
    const sdk = (credentials: { accessKeyId: string; secretAccessKey: string }) => new SecretsManagerClient({ endpoint: stub.fake.url, region: 'us-east-1', credentials, maxAttempts: 1 });
    const good = sdk(JSON_FAKE_CREDENTIALS);
    expect((await good.send(new GetSecretValueCommand({ SecretId: 'gateway/upstreams' }))).SecretString).toBe('{"anthropic":"sk"}');
    const forged = sdk({ ...JSON_FAKE_CREDENTIALS, secretAccessKey: 'wrong' });
    await expect(forged.send(new GetSecretValueCommand({ SecretId: 'gateway/upstreams' }))).rejects.toMatchObject({ name: 'InvalidSignatureException' });
    expect(stub.fake.refused).toBe(1);
    const missing = await startSecretsStub(() => undefined);
    const reader = new SecretsManagerClient({ endpoint: missing.fake.url, region: 'us-east-1', credentials: JSON_FAKE_CREDENTIALS, maxAttempts: 1 });
    await expect(reader.send(new GetSecretValueCommand({ SecretId: 'x' }))).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
    reader.destroy();
    good.destroy();
    forged.destroy();
    await Promise.all([stub.close(), missing.close()]);
  });
});

describe('bareSecretReader', () => {
  test('reads the string with a verified signature; a missing secret is the service error by name', async () => {
    const stub = await startSecretsStub(() => '{"a":"b"}');
    expect(await stub.client('gateway/upstreams')).toBe('{"a":"b"}');
    expect(stub.fake.calls).toEqual([{ operation: 'GetSecretValue', input: { SecretId: 'gateway/upstreams' } }]);
    const missing = await startSecretsStub(() => undefined);
    await expect(missing.client('nope')).rejects.toMatchObject({ name: 'ResourceNotFoundException', status: 400 });
    const forged = bareSecretReader({ region: 'us-east-1', endpoint: stub.fake.url, credentials: async () => ({ ...JSON_FAKE_CREDENTIALS, secretAccessKey: 'wrong' }) });
    await expect(forged('gateway/upstreams')).rejects.toMatchObject({ name: 'InvalidSignatureException' });
    await Promise.all([stub.close(), missing.close()]);
  });
});

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

  test('a missing member is a configuration error: the log (its cause) names what to add; the client message names nothing of the setup', async () => {
    const stub = await startSecretsStub(() => '{}');
    const credentials = new SecretsManagerCredentials('gateway/upstreams', stub.client);
    const error = await credentials.keys(anthropic).catch((failure: GatewayError) => failure);
    expect(error).toMatchObject({ status: 500, cause: { message: expect.stringContaining('"anthropic" member') } });
    expect((error as GatewayError).message).not.toMatch(/anthropic|member|secret/i);
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
    await expect(credentials.keys(anthropic)).rejects.toMatchObject({ cause: { message: expect.stringContaining('not a JSON object') } });
    await stub.close();
  });
});

describe('prefetch', () => {
  test('resolves once the secret has been read, and keys() then reads nothing more', async () => {
    const stub = await startSecretsStub(() => '{"anthropic":"sk-ant-init"}');
    const credentials = new SecretsManagerCredentials('gateway/upstreams', stub.client);
    await credentials.prefetch();
    expect(stub.calls()).toBe(1);
    expect(await credentials.keys(anthropic)).toEqual(['sk-ant-init']);
    expect(stub.calls()).toBe(1);
    await stub.close();
  });

  test('starts the one read the next keys() call then uses', async () => {
    const stub = await startSecretsStub(() => '{"anthropic":"sk-ant-early"}');
    const credentials = new SecretsManagerCredentials('gateway/upstreams', stub.client);
    credentials.prefetch();
    credentials.prefetch();
    expect(await credentials.keys(anthropic)).toEqual(['sk-ant-early']);
    expect(stub.calls()).toBe(1);
    await stub.close();
  });

  test('a failed prefetch is not cached and raises nothing by itself; keys() reports the failure', async () => {
    let secret: string | undefined;
    const stub = await startSecretsStub(() => secret);
    const credentials = new SecretsManagerCredentials('gateway/upstreams', stub.client);
    // Resolves once the read has failed, without rejecting.
    await expect(credentials.prefetch()).resolves.toBeUndefined();
    expect(stub.calls()).toBe(1);
    await expect(credentials.keys(anthropic)).rejects.toMatchObject({ kind: 'configuration' });
    expect(stub.calls()).toBe(2);
    secret = '{"anthropic":"sk-after"}';
    expect(await credentials.keys(anthropic)).toEqual(['sk-after']);
    await expect(new EnvCredentials({}).prefetch()).resolves.toBeUndefined();
    await stub.close();
  });
});

describe('EnvCredentials', () => {
  test('reads the named variables and explains a missing one in the log (the cause), not to the client', async () => {
    expect(await new EnvCredentials({ ANTHROPIC_API_KEY: 'sk-env' }).keys(anthropic)).toEqual(['sk-env']);
    await expect(new EnvCredentials({}).keys(anthropic)).rejects.toMatchObject({ message: expect.not.stringContaining('ANTHROPIC_API_KEY'), cause: { message: expect.stringContaining('ANTHROPIC_API_KEY') } });
    expect(await new EnvCredentials({}).keys(vllm)).toEqual([]);
    expect(await new EnvCredentials({ OPENAI_KEY_A: 'a', OPENAI_KEY_B: 'b' }).keys(pool)).toEqual(['a', 'b']);
    await expect(new EnvCredentials({ OPENAI_KEY_A: 'a' }).keys(pool)).rejects.toMatchObject({ cause: { message: expect.stringContaining('OPENAI_KEY_B') } });
  });
});
