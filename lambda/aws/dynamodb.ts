import type {
  BatchGetItemInput,
  BatchGetItemOutput,
  BatchWriteItemInput,
  BatchWriteItemOutput,
  CreateTableInput,
  CreateTableOutput,
  DeleteItemInput,
  DeleteItemOutput,
  GetItemInput,
  GetItemOutput,
  PutItemInput,
  PutItemOutput,
  QueryInput,
  QueryOutput,
  ScanInput,
  ScanOutput,
  UpdateItemInput,
  UpdateItemOutput,
} from '@aws-sdk/client-dynamodb';
import type { AwsCredentialIdentityProvider } from '@smithy/types';
import { awsJsonCall } from './aws-json.ts';

/** The DynamoDB operations the gateway and its CLI use, with their input and output shapes (types only). */
interface Shapes {
  GetItem: [GetItemInput, GetItemOutput];
  PutItem: [PutItemInput, PutItemOutput];
  UpdateItem: [UpdateItemInput, UpdateItemOutput];
  /** Single-use items (sign-in transactions) are taken with `ReturnValues: ALL_OLD`. */
  DeleteItem: [DeleteItemInput, DeleteItemOutput];
  Query: [QueryInput, QueryOutput];
  Scan: [ScanInput, ScanOutput];
  BatchGetItem: [BatchGetItemInput, BatchGetItemOutput];
  /** Only the benchmark seeds with it (a year of rollups into npm start's store). */
  BatchWriteItem: [BatchWriteItemInput, BatchWriteItemOutput];
  /** Only the local embedded store creates tables (the stack owns the deployed ones). */
  CreateTable: [CreateTableInput, CreateTableOutput];
}
export type DynamoOperation = keyof Shapes;

/**
 * DynamoDB as the stores see it: an operation name and its input, in DynamoDB's own JSON shapes
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Operations.html).
 * The Lambda path uses `bareDynamo` (a signed call, no SDK); the CLI and the tests adapt the SDK
 * client to it (bin/local/sdk-dynamo.ts). Errors carry the service's name for the exception.
 */
export interface DynamoApi {
  call<K extends DynamoOperation>(operation: K, input: Shapes[K][0]): Promise<Shapes[K][1]>;
}

export function bareDynamo(options: { region: string; endpoint?: string; credentials?: AwsCredentialIdentityProvider }): DynamoApi {
  const service = { service: 'dynamodb', targetPrefix: 'DynamoDB_20120810', jsonVersion: '1.0', ...options };
  return { call: <K extends DynamoOperation>(operation: K, input: Shapes[K][0]) => awsJsonCall<Shapes[K][1]>(service, operation, input) };
}

/** DynamoDB refused a conditional write because its condition did not hold. */
export function conditionFailed(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}
