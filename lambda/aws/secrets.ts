import type { AwsCredentialIdentityProvider } from '@smithy/types';
import { awsJsonCall } from './aws-json.ts';

/** Reads a secret's string value. */
export type SecretReader = (secretId: string) => Promise<string | undefined>;

/**
 * Secrets Manager's GetSecretValue, the one operation the gateway needs
 * (https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html),
 * as a signed JSON 1.1 call.
 */
export function bareSecretReader(options: { region: string; endpoint?: string; credentials?: AwsCredentialIdentityProvider }): SecretReader {
  const service = { service: 'secretsmanager', targetPrefix: 'secretsmanager', jsonVersion: '1.1', ...options };
  return async (secretId) => (await awsJsonCall<{ SecretString?: string }>(service, 'GetSecretValue', { SecretId: secretId })).SecretString;
}
