import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { STACK_OUTPUTS } from '../../lib/output-names.ts';

/** What the key CLI needs from a deployed gateway stack. */
export interface DeployedGateway {
  keyTableName: string;
  /** Absent for stacks deployed before usage metering existed. */
  usageTableName: string | undefined;
  /** Absent for stacks without sign-in. */
  identityTableName: string | undefined;
  /**
   * The address clients should use: the custom domain when there is one, else the Function URL,
   * else (a stack whose only way in is the private API) the private API's domain.
   */
  gatewayUrl: string;
}

/**
 * Reads a deployed stack's outputs (CloudFormation DescribeStacks) with the caller's AWS
 * credentials. `client` is for tests; by default one is created for `region` and closed after.
 */
export async function readDeployedGateway(stackName: string, options: { region?: string; client?: CloudFormationClient } = {}): Promise<DeployedGateway> {
  const client = options.client ?? new CloudFormationClient(options.region === undefined ? {} : { region: options.region });
  try {
    const { Stacks: stacks } = await client.send(new DescribeStacksCommand({ StackName: stackName }));
    const stack = stacks?.[0];
    if (stack === undefined) throw new Error(`Stack ${stackName} was not found.`);
    const outputs = new Map((stack.Outputs ?? []).map((output) => [output.OutputKey, output.OutputValue]));
    const required = (key: string): string => {
      const value = outputs.get(key);
      if (!value) throw new Error(`Stack ${stackName} has no ${key} output: is it an agent gateway stack, and is its deployment finished?`);
      return value;
    };
    return {
      keyTableName: required(STACK_OUTPUTS.keyTableName),
      usageTableName: outputs.get(STACK_OUTPUTS.usageTableName) || undefined,
      identityTableName: outputs.get(STACK_OUTPUTS.identityTableName) || undefined,
      gatewayUrl: outputs.get(STACK_OUTPUTS.customDomainUrl) || outputs.get(STACK_OUTPUTS.functionUrl) || outputs.get(STACK_OUTPUTS.privateApiUrl) || required(STACK_OUTPUTS.functionUrl),
    };
  } finally {
    if (options.client === undefined) client.destroy();
  }
}
