import { RemovalPolicy, SecretValue, Validations, type CfnResource } from 'aws-cdk-lib';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

/** Fixed logical id: a replaced secret would come back empty, dropping the operator's keys. */
export const UPSTREAM_SECRET_LOGICAL_ID = 'UpstreamSecret';

/**
 * The upstream providers' API keys, as one JSON object `{"<upstream name>": "<api key>"}`
 * (read by lambda/upstream/credentials.ts SecretsManagerCredentials, which caches it).
 *
 * The stack creates it holding `{}` and the operator fills it with `put-secret-value`. The
 * template's value never changes, and CloudFormation only writes a secret's value when that
 * template value changes, so deploys never overwrite the keys the operator put there.
 * The keys never enter the template, the function's environment, or the repository.
 */
export class UpstreamSecret extends Construct {
  readonly secret: Secret;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.secret = new Secret(this, 'Secret', {
      description: 'Agent gateway upstream API keys: a JSON object {"<upstream name>": "<api key>"}, set with put-secret-value.',
      secretStringValue: SecretValue.unsafePlainText('{}'),
      // The keys can be re-entered from the providers' consoles; a destroyed stack should not
      // leave credentials behind.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    (this.secret.node.defaultChild as CfnResource).overrideLogicalId(UPSTREAM_SECRET_LOGICAL_ID);
    Validations.of(this.secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason: "The secret holds API keys that the providers issue (Anthropic, OpenAI...); only their consoles can rotate them, so a Secrets Manager rotation function has nothing to call. The operator rotates a key at the provider and stores the new one with put-secret-value.",
    });
  }

  /** Read access to this one secret: its value and its metadata, nothing else. */
  grantRead(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({
      grantee,
      actions: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'],
      resourceArns: [this.secret.secretArn],
    });
  }
}
