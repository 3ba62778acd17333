import { randomBytes } from 'node:crypto';
import { secretFromSecretsManager } from '../../../lambda/identity/secrets.ts';
import { IDENTITY_SECRET_LOGICAL_ID } from '../../../lib/constructs/identity-secret.ts';
import { STACK_OUTPUTS } from '../../../lib/output-names.ts';
import { IDENTITY, onlyResource, routingWithIdentity, synthGateway } from '../synth.ts';

describe('IdentitySecret', () => {
  const { template } = synthGateway({ routing: routingWithIdentity() });
  const resource = template.toJSON().Resources[IDENTITY_SECRET_LOGICAL_ID] as { Type: string; DeletionPolicy: string; Properties: Record<string, any> };

  test('exists only when the routing config has identity', () => {
    expect(synthGateway().template.toJSON().Resources[IDENTITY_SECRET_LOGICAL_ID]).toBeUndefined();
    expect(Object.keys(synthGateway().template.toJSON().Outputs)).not.toContain(STACK_OUTPUTS.identitySecretArn);
    expect(resource.Type).toBe('AWS::SecretsManager::Secret');
  });

  test('is generated with a random tokenKey of letters and digits, and no value in the template', () => {
    expect(resource.Properties.GenerateSecretString).toEqual({
      SecretStringTemplate: '{}',
      GenerateStringKey: 'tokenKey',
      // lambda/identity/secrets.ts wants at least 32 characters; 64 of 62 symbols is ~380 bits.
      PasswordLength: 64,
      ExcludePunctuation: true,
      IncludeSpace: false,
    });
    expect(resource.Properties.SecretString).toBeUndefined();
    expect(resource.DeletionPolicy).toBe('Delete');
  });

  test("a value made as the template asks, with the client secret added as the output says, is what sign-in reads", async () => {
    const generation = resource.Properties.GenerateSecretString as { PasswordLength: number; GenerateStringKey: string };
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    const generated = Array.from(randomBytes(generation.PasswordLength), (byte) => alphabet[byte % alphabet.length]).join('');
    const stored = JSON.stringify({ [generation.GenerateStringKey]: generated, [IDENTITY.clientSecretEnv]: 'idp-client-secret' });
    const read = secretFromSecretsManager(async () => stored, 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:IdentitySecret', IDENTITY.clientSecretEnv);
    expect(await read()).toEqual({ tokenKey: generated, clientSecret: 'idp-client-secret' });
  });

  test('the function may read its value only, and is told its ARN', () => {
    const statements = onlyResource(template, 'AWS::IAM::Policy', 'Gateway').properties.PolicyDocument.Statement as Record<string, any>[];
    expect(statements.filter((statement) => JSON.stringify(statement.Resource).includes(IDENTITY_SECRET_LOGICAL_ID))).toEqual([
      { Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: { Ref: IDENTITY_SECRET_LOGICAL_ID } },
    ]);
    expect(onlyResource(template, 'AWS::Lambda::Function', 'Gateway').properties.Environment.Variables.GATEWAY_IDENTITY_SECRET).toEqual({ Ref: IDENTITY_SECRET_LOGICAL_ID });
  });

  test('its output says how to add the client secret under the member the config names, keeping tokenKey', () => {
    const output = template.toJSON().Outputs[STACK_OUTPUTS.identitySecretArn] as { Value: unknown; Description: string };
    expect(output.Value).toEqual({ Ref: IDENTITY_SECRET_LOGICAL_ID });
    expect(output.Description).toContain(`"${IDENTITY.clientSecretEnv}"`);
    expect(output.Description).toContain(`'.${IDENTITY.clientSecretEnv} = $s'`);
    expect(output.Description).toContain('put-secret-value');
    // Outputs take at most 1,024 characters of description.
    expect(output.Description.length).toBeLessThanOrEqual(1024);
    const publicClient = synthGateway({ routing: routingWithIdentity({ issuer: IDENTITY.issuer, clientId: IDENTITY.clientId }) }).template;
    expect(publicClient.toJSON().Outputs[STACK_OUTPUTS.identitySecretArn].Description).toContain('nothing to add');
  });
});
