// Runs before every test file: the awslambda globals must exist before middy builds a handler,
// and nothing may reach a real AWS endpoint.
import { installAwsLambdaGlobal } from '../../bin/local/awslambda-shim.ts';

Object.assign(process.env, {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
  AWS_EC2_METADATA_DISABLED: 'true',
  // Any AWS call not pointed at a loopback stub fails fast here instead of leaving the machine.
  AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
  CDK_DISABLE_VERSION_CHECK: '1',
});
installAwsLambdaGlobal();
