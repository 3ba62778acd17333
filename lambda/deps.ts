import type { Readable } from 'node:stream';
import type { KeyRecord } from './auth/key-table.ts';
import type { Router } from './config/routing.ts';
import type { Settings } from './config/settings.ts';
import type { AdminDoor } from './admin/index.ts';
import type { IdentityDoor } from './identity/index.ts';
import type { CredentialSource } from './upstream/credentials.ts';
import type { UpstreamHealth } from './upstream/upstream-health.ts';
import type { PriceBook } from './usage/prices.ts';
import type { SpendReaders } from './usage/spend-standing.ts';
import type { UsageRecorder } from './usage/usage-recorder.ts';

/** The key-table operations the request path needs. */
export interface KeyLookup {
  get(keyHash: string): Promise<KeyRecord | undefined>;
  touch(keyHash: string, now: Date, intervalSeconds: number): Promise<void>;
}

/** Everything the gateway gets from its runtime; built by `lambda/handler.ts` or by tests. */
export interface GatewayDeps {
  router: Router;
  keys: KeyLookup;
  credentials: CredentialSource;
  /** What this instance learned about its upstreams: targets cooling down, keys resting. */
  health: UpstreamHealth;
  /** Usage metering (per key and person, and the rollups) and limits; without it nothing is metered and only the output ceiling applies. */
  usage?: Pick<UsageRecorder, 'record' | 'admitRequest' | 'days' | 'acquireLease' | 'releaseLease'>;
  /** What groups have spent (the group rollups), for group pools; absent: pools cannot be checked and a person with one is refused (fail closed). */
  poolSpend?: SpendReaders['pools'];
  /** Prices per model (the built-in table plus the routing config's `prices`). */
  prices: PriceBook;
  settings: Settings;
  /** Receives one JSON line per request. */
  log: (line: string) => void;
  fetch: typeof fetch;
  /** Sign-in (the config's `identity`): absent when not configured, and nothing of it is then loaded. */
  identity?: IdentityDoor;
  /** The console and admin API (`/admin…`): loaded on its first request. Absent: those paths are 404. */
  admin?: AdminDoor;
}

export interface HandlerResponse {
  statusCode: number;
  headers: Record<string, string>;
  /** A string is written in one call; a stream (the relay's Node Readable, or a web stream) is piped. */
  body: string | ReadableStream<Uint8Array> | Readable;
  /** `Set-Cookie` values (a Function URL's response carries them apart from the headers). */
  cookies?: string[];
}
