import { isBedrockModelId } from '../../../../lambda/upstream/bedrock/bedrock.ts';

/** Bedrock's model identifier forms (foundation models, system and application inference profiles, model ARNs) against what a client could make of a pass-through name. */
test.each([
  'anthropic.claude-haiku-4-5-20251001-v1:0',
  'anthropic.claude-sonnet-4-6',
  'anthropic.claude-3-5-sonnet-20241022-v2:0:200k',
  'openai.gpt-5.5',
  'us.anthropic.claude-sonnet-5-v1:0',
  'global.anthropic.claude-opus-4-8',
  'us-gov.anthropic.claude-sonnet-4-5-20250929-v1:0',
  'arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0',
  'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-5-v1:0',
  'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6',
  'arn:aws:bedrock:eu-west-1:123456789012:provisioned-model/abcdef012345',
  'arn:aws-us-gov:bedrock:us-gov-west-1:123456789012:custom-model/amazon.titan-text-lite-v1:0:4k/abcdef012345',
])('%s is a Bedrock model id', (id) => expect(isBedrockModelId(id)).toBe(true));

test.each([
  '.',
  '..',
  '',
  'claude',
  'anthropic.',
  '.anthropic.claude',
  'anthropic..claude',
  'anthropic.claude/../../x',
  'anthropic.claude%2f..',
  'Anthropic.Claude',
  'anthropic.claude?x=1',
  'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/..',
  'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a/../../../x',
  'arn:aws:s3:::bucket/key',
  `anthropic.${'a'.repeat(64)}`,
])('%j is refused', (id) => expect(isBedrockModelId(id)).toBe(false));
