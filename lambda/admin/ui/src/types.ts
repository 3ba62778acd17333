/** The admin API's answers, as the page reads them (docs/admin-api.md). */
export type Role = 'admin' | 'viewer';

export interface Session {
  role: Role;
  via: 'session' | 'key' | 'token';
  actor: { label: string; sub: string | null; email: string | null; name: string | null };
  csrfToken?: string;
  expiresAt?: string;
  features: { signIn: boolean; usage: boolean; audit: boolean };
}

export interface PeriodNumbers {
  from: string;
  costMicroUsd: number;
  requests: number;
  errors: number;
  errorRate: number;
  fallbacks: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  ttfbP50Ms: number | null;
  ttfbP99Ms: number | null;
}

export interface TopEntry {
  value: string;
  label: string | null;
  costMicroUsd: number;
  requests: number;
  errors: number;
}

export type Caps = { daily?: number; weekly?: number; monthly?: number };

export interface Overview {
  now: string;
  asOf: string | null;
  live: boolean;
  periods: { day: PeriodNumbers; week: PeriodNumbers; month: PeriodNumbers };
  caps: null | { perPersonDefault: Caps | null; groupMode: string; pools: { group: string; caps: Caps; spentMicroUsd: { day: number; week: number; month: number } }[] };
  top: { period: 'day' | 'week' | 'month'; from: string; person: TopEntry[]; group: TopEntry[]; key: TopEntry[]; model: TopEntry[] };
}

export interface Explorer {
  metric: string;
  unit: string;
  by: string;
  granularity: 'H' | 'D' | 'M';
  from: string;
  to: string;
  buckets: string[];
  bucketStarts: number[];
  series: { value: string; label: string | null; points: number[]; total: number }[];
  other: { count: number; points: number[]; total: number; label: string } | null;
  total: { points: number[]; total: number; label: string };
  note?: string;
  asOf: string | null;
  live: boolean;
}

export type KeyLimits = Partial<Record<'requestsPerMinute' | 'tokensPerDay' | 'tokensPerMonth' | 'maxOutputTokens' | 'microUsdPerDay' | 'microUsdPerMonth' | 'maxInFlight', number>>;

export interface KeyView {
  id: string;
  name: string;
  createdAt: string;
  expiresAt?: string;
  revoked: boolean;
  models?: string[];
  lastUsedAt?: string;
  limits?: KeyLimits;
  owner?: string;
  role?: Role;
  malformed?: string[];
  state: 'active' | 'expired' | 'revoked' | 'malformed';
  costThisMonthMicroUsd: number;
}

export interface IssuedKey {
  id: string;
  name: string;
  key: string;
  /** As the key CLI prints it (lambda/auth/client-setup.ts). */
  setup: {
    claudeCode: { env: Record<string, string>; settingsPath: string; settingsJson: string };
    codex: { profile: string; profilePath: string; profileToml: string; env: Record<string, string> };
    anthropicSdk: string;
    openaiSdk: string;
  };
  previousWorksUntil?: string;
}

export interface PersonRow {
  sub: string;
  email: string | null;
  name: string | null;
  groups: string[];
  firstSeenAt: string;
  lastSeenAt: string;
  spendMicroUsd: { day: number; week: number; month: number };
}

export interface PersonDetail {
  sub: string;
  email: string | null;
  name: string | null;
  groups: string[];
  activeSessions: number;
  sessions: { id: string; surface: string; ip: string; createdAt: string; endsAt: string; revokedAt: string | null }[];
  policy: PersonPolicy;
}

/** A person's effective policy, as `keys people show --json` gives it (lambda/identity/person-summary.ts). */
export interface PersonPolicy {
  models?: string[];
  caps: { period: 'day' | 'week' | 'month'; limitUsd: number | null; source: { from: 'person' | 'default' | 'none' } | { from: 'group'; group: string }; spentUsd: number; resetsAt: string }[];
  pools: { group: string; monthlyUsd: number }[];
  overridesBy?: { by: string; at?: string };
  spendKnown: boolean;
}

/** A person's own caps as the API takes them: dollars, null for no cap, "inherit". */
export type CapChange = number | null | 'inherit';

export interface UpstreamsView {
  instance: { startedAt: string; now: string };
  window: { from: string; to: string; available: boolean; asOf: string | null; live: boolean };
  upstreams: {
    name: string;
    type: string;
    host: string;
    keys: number;
    instance: { targets: { model: string; failures: number; coolingDownUntil: string | null }[]; restingKeys: { index: number; until: string }[] };
    last24h: null | { requests: number; errors: number; errorRate: number; fallbacks: number; ttfbP50Ms: number | null; ttfbP99Ms: number | null; costMicroUsd: number };
  }[];
}

export interface AuditEvent {
  at: string;
  type: string;
  sub?: string;
  email?: string;
  actor?: string;
  ip?: string;
  surface?: string;
  session?: string;
  reason?: string;
  detail?: string;
  via?: string;
  key?: string;
  role?: string;
}
