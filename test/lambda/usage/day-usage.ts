import type { DayUsage } from '../../../lambda/usage/usage-store.ts';

/** A day item of key_a, zeros unless given. */
export const day = (date: string, fields: Partial<DayUsage> = {}): DayUsage => ({
  keyId: 'key_a',
  day: date,
  model: 'claude-sonnet-5',
  requests: 1,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costMicroUsd: 0,
  ...fields,
});
