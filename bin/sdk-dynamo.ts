import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  CreateTableCommand,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  UpdateItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { DynamoApi, DynamoOperation } from '../lambda/aws/dynamodb.ts';

const COMMANDS = {
  GetItem: GetItemCommand,
  PutItem: PutItemCommand,
  UpdateItem: UpdateItemCommand,
  DeleteItem: DeleteItemCommand,
  Query: QueryCommand,
  Scan: ScanCommand,
  BatchGetItem: BatchGetItemCommand,
  BatchWriteItem: BatchWriteItemCommand,
  CreateTable: CreateTableCommand,
} as const;

/**
 * The key CLI against a deployed stack keeps the AWS SDK client: it resolves the region and
 * credentials from the operator's profiles exactly as the AWS CLI does. The stores see the
 * same DynamoApi the Lambda's bare client gives them.
 */
export function sdkDynamo(client: DynamoDBClient): DynamoApi {
  return {
    call: async (operation: DynamoOperation, input: object) => {
      const Command = COMMANDS[operation] as unknown as new (input: object) => Parameters<DynamoDBClient['send']>[0];
      return client.send(Command === undefined ? unreachable(operation) : new Command(input));
    },
  } as DynamoApi;
}

function unreachable(operation: string): never {
  throw new Error(`No SDK command for DynamoDB ${operation}`);
}
