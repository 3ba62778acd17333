/**
 * The stack's output keys. They are the CloudFormation logical ids of the outputs, so they stay
 * the same across deploys and refactors; `npm run keys -- --stack NAME` finds the table and the
 * gateway address by these names. No exports (`Export.Name`): nothing else should couple to
 * this stack, and exports would block changing the outputs later.
 *
 * Kept free of CDK imports so the key CLI can use it without loading aws-cdk-lib.
 */
export const STACK_OUTPUTS = {
  functionUrl: 'FunctionUrl',
  messagesBaseUrl: 'MessagesBaseUrl',
  responsesBaseUrl: 'ResponsesBaseUrl',
  keyTableName: 'KeyTableName',
  usageTableName: 'UsageTableName',
  /** Sign-in's table (stacks whose routing config has `identity`). */
  identityTableName: 'IdentityTableName',
  /** Sign-in's secret: the output's description says how to add the IdP client secret. */
  identitySecretArn: 'IdentitySecretArn',
  upstreamSecretName: 'UpstreamSecretName',
  upstreamSecretArn: 'UpstreamSecretArn',
  dashboardUrl: 'DashboardUrl',
  customDomainUrl: 'CustomDomainUrl',
  customDomainMessagesBaseUrl: 'CustomDomainMessagesBaseUrl',
  customDomainResponsesBaseUrl: 'CustomDomainResponsesBaseUrl',
  /** With `privateApi`: the private custom domain, and the endpoint it is reached through. */
  privateApiUrl: 'PrivateApiUrl',
  privateApiMessagesBaseUrl: 'PrivateApiMessagesBaseUrl',
  privateApiResponsesBaseUrl: 'PrivateApiResponsesBaseUrl',
  privateApiVpcEndpointId: 'PrivateApiVpcEndpointId',
  privateApiVpcEndpointDnsName: 'PrivateApiVpcEndpointDnsName',
} as const;
