import { ConditionalCheckFailedException, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { conditionFailed } from '../../../lambda/aws/dynamodb.ts';
import { ensureUsageTable, localDynamo, startEmbeddedStore, type EmbeddedStore } from '../../../bin/local/embedded-store.ts';
import { sdkDynamo } from '../../../bin/sdk-dynamo.ts';

/** The Lambda's bare client and the SDK client, against the same DynamoDB, must agree item for item. */
describe('bareDynamo', () => {
  let store: EmbeddedStore;
  let sdk: DynamoDBClient;
  beforeAll(async () => {
    store = await startEmbeddedStore(undefined);
    sdk = new DynamoDBClient({ endpoint: store.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
    await ensureUsageTable(localDynamo(store.endpoint), 'agree');
  });
  afterAll(async () => {
    sdk.destroy();
    await store.close();
  });

  const item = { keyId: { S: 'key#1' }, period: { S: 'day#2026-11-23' }, n: { N: '12' }, list: { L: [{ S: 'é' }, { BOOL: true }, { NULL: true }] } };

  test('what the SDK writes the bare client reads, and the other way round', async () => {
    await sdk.send(new PutItemCommand({ TableName: 'agree', Item: item }));
    const read = await localDynamo(store.endpoint).call('GetItem', { TableName: 'agree', Key: { keyId: item.keyId, period: item.period } });
    expect(read.Item).toEqual(item);
    await localDynamo(store.endpoint).call('UpdateItem', {
      TableName: 'agree',
      Key: { keyId: item.keyId, period: item.period },
      UpdateExpression: 'ADD #n :one',
      ExpressionAttributeNames: { '#n': 'n' },
      ExpressionAttributeValues: { ':one': { N: '1' } },
    });
    expect((await sdk.send(new GetItemCommand({ TableName: 'agree', Key: { keyId: item.keyId, period: item.period } }))).Item?.n).toEqual({ N: '13' });
  });

  test('a failed condition has the SDK\'s name through both clients', async () => {
    const conditional = { TableName: 'agree', Item: item, ConditionExpression: 'attribute_not_exists(keyId)' };
    const bare = await localDynamo(store.endpoint).call('PutItem', conditional).catch((error: unknown) => error);
    const viaSdk = await sdkDynamo(sdk).call('PutItem', conditional).catch((error: unknown) => error);
    expect(viaSdk).toBeInstanceOf(ConditionalCheckFailedException);
    expect([conditionFailed(bare), conditionFailed(viaSdk)]).toEqual([true, true]);
    expect(conditionFailed(new Error('other'))).toBe(false);
  });

  test('concurrent counter updates through the kept-alive pool: each applied once', async () => {
    const dynamo = localDynamo(store.endpoint);
    const key = { keyId: { S: 'key#concurrent' }, period: { S: 'day#2026-11-26' } };
    const add = () => dynamo.call('UpdateItem', { TableName: 'agree', Key: key, UpdateExpression: 'ADD #n :one', ExpressionAttributeNames: { '#n': 'n' }, ExpressionAttributeValues: { ':one': { N: '1' } } });
    await Promise.all(Array.from({ length: 80 }, add));
    for (let i = 0; i < 20; i++) await add();
    expect((await dynamo.call('GetItem', { TableName: 'agree', Key: key, ConsistentRead: true })).Item?.n).toEqual({ N: '100' });
  });
});
