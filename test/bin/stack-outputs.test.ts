import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoKeyStore } from '../../lambda/auth/key-store.ts';
import { ensureKeyTable, localDynamo, startEmbeddedStore, type EmbeddedStore } from '../../bin/local/embedded-store.ts';
import { readDeployedGateway } from '../../bin/local/stack-outputs.ts';
import { STACK_OUTPUTS } from '../../lib/output-names.ts';
import { runKeys } from '../support/processes.ts';
import { startUpstream, type StubHandler, type UpstreamStub } from '../support/upstream-stub.ts';

const FUNCTION_URL = 'https://abc123.lambda-url.eu-west-1.on.aws/';

/** CloudFormation's query API as the SDK sees it: DescribeStacks answers in XML. */
function describeStacks(stacks: Record<string, Record<string, string>>): StubHandler {
  return (request, res) => {
    const form = new URLSearchParams(request.body);
    const name = form.get('StackName') ?? '';
    const outputs = stacks[name];
    res.setHeader('content-type', 'text/xml');
    if (form.get('Action') !== 'DescribeStacks' || outputs === undefined) {
      res.statusCode = 400;
      res.end(`<ErrorResponse><Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id ${name} does not exist</Message></Error><RequestId>r1</RequestId></ErrorResponse>`);
      return;
    }
    const members = Object.entries(outputs).map(([key, value]) => `<member><OutputKey>${key}</OutputKey><OutputValue>${value}</OutputValue></member>`);
    res.end(
      `<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member>` +
        `<StackName>${name}</StackName><StackId>arn:aws:cloudformation:eu-west-1:123456789012:stack/${name}/1</StackId>` +
        `<CreationTime>2026-11-21T00:00:00Z</CreationTime><StackStatus>CREATE_COMPLETE</StackStatus><Outputs>${members.join('')}</Outputs>` +
        `</member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>r1</RequestId></ResponseMetadata></DescribeStacksResponse>`,
    );
  };
}

const STACKS = {
  AgentGateway: { [STACK_OUTPUTS.keyTableName]: 'deployed-keys', [STACK_OUTPUTS.functionUrl]: FUNCTION_URL, [STACK_OUTPUTS.messagesBaseUrl]: `${FUNCTION_URL}first` },
  WithDomain: { [STACK_OUTPUTS.keyTableName]: 'domain-keys', [STACK_OUTPUTS.functionUrl]: FUNCTION_URL, [STACK_OUTPUTS.customDomainUrl]: 'https://ai.example.com/' },
  PrivateOnly: { [STACK_OUTPUTS.keyTableName]: 'private-keys', [STACK_OUTPUTS.privateApiUrl]: 'https://gw.corp.example.com/' },
  NotAGateway: { BucketName: 'something-else' },
};

describe('readDeployedGateway', () => {
  let cloudFormation: UpstreamStub;
  let client: CloudFormationClient;
  beforeAll(async () => {
    cloudFormation = await startUpstream(describeStacks(STACKS));
    client = new CloudFormationClient({ endpoint: cloudFormation.url, region: 'eu-west-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 });
  });
  afterAll(async () => {
    client.destroy();
    await cloudFormation.close();
  });

  test("reads the key table and the Function URL from the stack's outputs", async () => {
    expect(await readDeployedGateway('AgentGateway', { client })).toEqual({ keyTableName: 'deployed-keys', gatewayUrl: FUNCTION_URL });
    expect(new URLSearchParams(cloudFormation.requests.at(-1)?.body).get('StackName')).toBe('AgentGateway');
  });

  test('prefers the custom domain as the gateway address', async () => {
    expect(await readDeployedGateway('WithDomain', { client })).toEqual({ keyTableName: 'domain-keys', gatewayUrl: 'https://ai.example.com/' });
  });

  test('takes the private API domain when the stack has no Function URL', async () => {
    expect(await readDeployedGateway('PrivateOnly', { client })).toEqual({ keyTableName: 'private-keys', gatewayUrl: 'https://gw.corp.example.com/' });
  });

  test('says which output is missing from a stack that is not a gateway', async () => {
    await expect(readDeployedGateway('NotAGateway', { client })).rejects.toThrow('Stack NotAGateway has no KeyTableName output');
  });

  test("passes on CloudFormation's answer for a stack that does not exist", async () => {
    await expect(readDeployedGateway('Missing', { client })).rejects.toThrow('Stack with id Missing does not exist');
  });
});

describe('npm run keys -- --stack', () => {
  let cloudFormation: UpstreamStub;
  let embedded: EmbeddedStore;
  let store: DynamoKeyStore;
  beforeAll(async () => {
    cloudFormation = await startUpstream(describeStacks(STACKS));
    embedded = await startEmbeddedStore(undefined);
    const dynamo = localDynamo(embedded.endpoint);
    await ensureKeyTable(dynamo, 'deployed-keys');
    store = new DynamoKeyStore('deployed-keys', dynamo);
  });
  afterAll(async () => {
    await cloudFormation.close();
    await embedded.close();
  });

  /** The key CLI as an operator runs it, with both AWS APIs pointed at loopback stand-ins. */
  const keys = (...args: string[]) => runKeys(args, { AWS_ENDPOINT_URL_CLOUDFORMATION: cloudFormation.url, AWS_ENDPOINT_URL_DYNAMODB: embedded.endpoint });

  test("creates the key in the stack's table and prints the setup for the deployed address", async () => {
    const result = await keys('create', '--name', 'alice', '--stack', 'AgentGateway', '--region', 'eu-west-1', '--json');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const created = JSON.parse(result.stdout);
    expect(created.setup.claudeCode.env.ANTHROPIC_BASE_URL).toBe(`${FUNCTION_URL}first`);
    expect(created.setup.codex.profileToml).toContain(`base_url = "${FUNCTION_URL}second/v1"`);
    expect((await store.list()).map((record) => record.name)).toContain('alice');
  });

  test('keeps an explicit --url over the stack address', async () => {
    const result = await keys('create', '--name', 'bob', '--stack', 'AgentGateway', '--url', 'https://elsewhere.example.com', '--json');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).setup.claudeCode.env.ANTHROPIC_BASE_URL).toBe('https://elsewhere.example.com/first');
  });

  test('refuses --table together with --stack', async () => {
    const result = await keys('list', '--stack', 'AgentGateway', '--table', 'other');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Use --table or --stack, not both');
  });
});
