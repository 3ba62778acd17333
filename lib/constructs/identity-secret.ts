import { RemovalPolicy, Validations, type CfnResource } from 'aws-cdk-lib';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

/** Fixed logical id: a replaced secret would come back with a new token key, ending every session, and without the client secret. */
export const IDENTITY_SECRET_LOGICAL_ID = 'IdentitySecret';

/** The member holding the random key sign-in seals and signs with (lambda/identity/secrets.ts). */
export const TOKEN_KEY_MEMBER = 'tokenKey';

/**
 * Sign-in's secret, one JSON object (lambda/identity/secrets.ts reads it):
 * `{"tokenKey": "<random>", "<identity.clientSecretEnv>": "<the IdP client secret>"}`.
 *
 * Secrets Manager generates `tokenKey` when the stack creates the secret (64 letters and digits,
 * about 380 bits); the operator adds the client secret member, keeping `tokenKey` (the stack output
 * says how). CloudFormation writes a secret's value only when its template changes, and the
 * generation settings never do, so deploys keep both members.
 */
export class IdentitySecret extends Construct {
  readonly secret: Secret;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.secret = new Secret(this, 'Secret', {
      description: 'Agent gateway sign-in: {"tokenKey": generated, "<identity.clientSecretEnv>": the IdP client secret, added by the operator}.',
      generateSecretString: {
        secretStringTemplate: '{}',
        generateStringKey: TOKEN_KEY_MEMBER,
        passwordLength: 64,
        excludePunctuation: true,
        includeSpace: false,
      },
      // Like the upstream secret: the client secret can be issued again by the IdP, and a
      // destroyed stack should leave no credential behind. A new token key only means signing in again.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    (this.secret.node.defaultChild as CfnResource).overrideLogicalId(IDENTITY_SECRET_LOGICAL_ID);
    Validations.of(this.secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The IdP issues the client secret, so only its console can rotate it (the operator then stores the new one). Replacing tokenKey would end every session at its next refresh, since the IdP refresh tokens it seals no longer open: a scheduled rotation would sign everyone out.',
    });
  }

  /** Its value only: the function reads it once per instance, on the first sign-in request. */
  grantRead(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({ grantee, actions: ['secretsmanager:GetSecretValue'], resourceArns: [this.secret.secretArn] });
  }

  /** How the operator adds the client secret without losing the generated token key. */
  static addClientSecretHint(member: string | undefined): string {
    if (member === undefined) return 'Sign-in secret: {"tokenKey": generated}. The IdP client is public (no clientSecretEnv): nothing to add.';
    return (
      `Sign-in secret: add the IdP client secret as "${member}", keeping tokenKey: ` +
      `aws secretsmanager get-secret-value --secret-id <this> --query SecretString --output text | jq --arg s "$CLIENT_SECRET" '.${member} = $s' | aws secretsmanager put-secret-value --secret-id <this> --secret-string file:///dev/stdin`
    );
  }
}
