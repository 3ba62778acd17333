import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';

/**
 * The AWS credentials the gateway signs with (DynamoDB, Secrets Manager, Bedrock).
 *
 * On Lambda the runtime puts the function role's temporary credentials in the environment
 * (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) for the life of the execution
 * environment (https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime),
 * so they are read from there, at no cost and with nothing in the bundle. Anywhere else
 * (`npm start`) the AWS SDK's standard chain runs (environment, profiles, SSO, container and
 * instance roles), loaded at run time from node_modules: its module name is not a literal, so
 * the bundler leaves it out of the Lambda bundle, which never reaches this branch.
 */
let provider: AwsCredentialIdentityProvider | undefined;

export function awsCredentials(): AwsCredentialIdentityProvider {
  provider ??= process.env.AWS_LAMBDA_FUNCTION_NAME !== undefined ? fromLambdaEnvironment : standardChain();
  return provider;
}

/**
 * Read once: a process's environment is its own (nothing outside can change it), so what the
 * runtime put there at start is what every later call would read, and each read of
 * `process.env` makes its strings anew (three per call, two calls per metered request).
 */
let lambdaIdentity: Promise<AwsCredentialIdentity> | undefined;

function fromLambdaEnvironment(): Promise<AwsCredentialIdentity> {
  lambdaIdentity ??= (async () => {
    const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_SESSION_TOKEN: sessionToken } = process.env;
    if (!accessKeyId || !secretAccessKey) throw new Error('The Lambda environment holds no AWS credentials.');
    return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
  })();
  return lambdaIdentity;
}

function standardChain(): AwsCredentialIdentityProvider {
  let chain: Promise<AwsCredentialIdentityProvider> | undefined;
  return async (options) => {
    chain ??= import(/* not bundled */ CHAIN_MODULE).then((module: { defaultProvider: () => AwsCredentialIdentityProvider }) => module.defaultProvider());
    return (await chain)(options);
  };
}

const CHAIN_MODULE: string = ['@aws-sdk', 'credential-provider-node'].join('/');
