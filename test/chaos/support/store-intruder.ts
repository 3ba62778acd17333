import http from 'node:http';

/**
 * Another local process that knows only the embedded store's port (a second user on the machine
 * sees it in `ss -ltn`; it does not hold the per-run secret): it tries every operation dynalite
 * serves on the gateway's tables, the way an attacker would put a key of their choosing or erase a
 * key's spend, then what a web page would send. Prints one JSON line per attempt:
 * `{ "attempt", "status", "cors" }` (cors: the access-control-* headers of the answer).
 *
 *   node test/chaos/support/store-intruder.ts PORT
 */
const port = Number(process.argv[2]);
const KEYS = 'gateway-keys';
const USAGE = 'gateway-usage';
const key = { keyHash: { S: 'a'.repeat(64) } };
const usage = { keyId: { S: 'key_victim' }, period: { S: 'day#2026-11-25' } };

const OPERATIONS: [string, unknown][] = [
  ['ListTables', {}],
  ['DescribeTable', { TableName: KEYS }],
  ['Scan', { TableName: KEYS }],
  ['Query', { TableName: KEYS, KeyConditionExpression: 'keyHash = :k', ExpressionAttributeValues: { ':k': key.keyHash } }],
  ['GetItem', { TableName: KEYS, Key: key }],
  ['PutItem', { TableName: KEYS, Item: { ...key, id: { S: 'key_intruder' }, name: { S: 'intruder' }, createdAt: { S: '2026-11-25T00:00:00Z' } } }],
  ['UpdateItem', { TableName: USAGE, Key: usage, UpdateExpression: 'SET costMicroUsd = :zero', ExpressionAttributeValues: { ':zero': { N: '0' } } }],
  ['DeleteItem', { TableName: USAGE, Key: usage }],
  ['BatchGetItem', { RequestItems: { [KEYS]: { Keys: [key] } } }],
  ['BatchWriteItem', { RequestItems: { [USAGE]: [{ DeleteRequest: { Key: usage } }] } }],
  ['CreateTable', { TableName: 'intruder', AttributeDefinitions: [{ AttributeName: 'k', AttributeType: 'S' }], KeySchema: [{ AttributeName: 'k', KeyType: 'HASH' }], BillingMode: 'PAY_PER_REQUEST' }],
  ['UpdateTable', { TableName: KEYS, BillingMode: 'PAY_PER_REQUEST' }],
  ['DeleteTable', { TableName: USAGE }],
  ['DescribeTimeToLive', { TableName: KEYS }],
  ['ListTagsOfResource', { ResourceArn: `arn:aws:dynamodb:us-east-1:000000000000:table/${KEYS}` }],
  ['TagResource', { ResourceArn: `arn:aws:dynamodb:us-east-1:000000000000:table/${KEYS}`, Tags: [{ Key: 'k', Value: 'v' }] }],
  ['UntagResource', { ResourceArn: `arn:aws:dynamodb:us-east-1:000000000000:table/${KEYS}`, TagKeys: ['k'] }],
];

function attempt(name: string, options: { path?: string; method?: string; headers?: Record<string, string>; body?: string }): Promise<void> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: options.path ?? '/',
        method: options.method ?? 'POST',
        agent: false,
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          authorization: 'AWS4-HMAC-SHA256 Credential=local/20261125/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=00',
          'x-amz-date': '20261125T000000Z',
          ...options.headers,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          const cors = Object.keys(res.headers).filter((header) => header.startsWith('access-control-'));
          console.log(JSON.stringify({ attempt: name, status: res.statusCode, cors }));
          resolve();
        });
      },
    );
    req.on('error', (error) => {
      console.log(JSON.stringify({ attempt: name, status: 0, error: error.message, cors: [] }));
      resolve();
    });
    req.end(options.body ?? '');
  });
}

for (const [operation, input] of OPERATIONS) {
  await attempt(operation, { headers: { 'x-amz-target': `DynamoDB_20120810.${operation}` }, body: JSON.stringify(input) });
}
// A guessed path, and what a page in a browser on this machine can send.
await attempt('PutItem under a guessed path', { path: '/local/', headers: { 'x-amz-target': 'DynamoDB_20120810.PutItem' }, body: JSON.stringify(OPERATIONS[5]?.[1]) });
await attempt('browser preflight', { method: 'OPTIONS', headers: { origin: 'https://page.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-amz-target' } });
await attempt('browser PutItem', { headers: { origin: 'https://page.example', 'x-amz-target': 'DynamoDB_20120810.PutItem' }, body: JSON.stringify(OPERATIONS[5]?.[1]) });
await attempt('browser health check', { method: 'GET', headers: { origin: 'https://page.example' } });
