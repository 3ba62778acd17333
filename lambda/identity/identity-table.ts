/**
 * The identity table's schema, shared by the CDK stack, the local embedded store, the gateway and
 * the key CLI. One generic table (partition key `pk`, sort key `sk`, TTL on `expiresAt`) holding
 * every sign-in item; secrets (codes, tokens) appear only as SHA-256 digests. Item kinds and
 * their keys: docs/sign-in-reference.md, "Storage".
 */
export const IDENTITY_TABLE = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttlAttribute: 'expiresAt',
} as const;

/** Sort key of the items that are alone in their partition. */
export const SINGLE = '-';

/** Partition keys by item kind; `hash` arguments are hex SHA-256 digests of the secret. */
export const identityKeys = {
  device: (hash: string) => `DEVICE#${hash}`,
  userCode: (code: string) => `USERCODE#${code}`,
  login: (hash: string) => `LOGIN#${hash}`,
  family: (id: string) => `FAMILY#${id}`,
  access: (hash: string) => `ACCESS#${hash}`,
  refresh: (hash: string) => `REFRESH#${hash}`,
  /** Every person who has signed in: one partition, sort key = the person's `sub`. */
  people: () => 'PERSON',
  sessions: (sub: string) => `SESSIONS#${sub}`,
  audit: (day: string) => `AUDIT#${day}`,
  rate: (what: string, client: string, window: number) => `RATE#${what}#${client}#${window}`,
  consoleSession: (hash: string) => `CONSOLE#${hash}`,
  consoleLink: (hash: string) => `CONSOLELINK#${hash}`,
} as const;
