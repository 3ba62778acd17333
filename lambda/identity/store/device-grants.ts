import { identityKeys, SINGLE } from '../identity-table.ts';
import { DEVICE_CODE_SECONDS, LOGIN_SECONDS, POLL_INTERVAL_SECONDS, POLL_TOLERANCE_MS, SLOW_DOWN_STEP_SECONDS } from '../limits.ts';
import { epochSeconds, live, N, num, S, str, type IdentityTable, type Item } from './table.ts';

export type DeviceStatus = 'pending' | 'approved' | 'denied' | 'consumed';

/** A device authorization (RFC 8628), keyed by the digest of its device code. */
export interface DeviceGrant {
  deviceHash: string;
  status: DeviceStatus;
  /** Digest of the user code (its USERCODE item is keyed by it). */
  userCodeHash: string;
  /** The client application that asked (`claude_code`...), as it said. */
  surface: string;
  ip: string;
  userAgent: string;
  /** Epoch ms. */
  createdAt: number;
  /** Seconds the client must wait between polls (grows with each slow_down). */
  interval: number;
  /** Set once approved: the session minted at the first successful poll. */
  familyId?: string;
  sub?: string;
  email?: string;
}

/** One round trip through the IdP, keyed by the digest of its `state`. */
export interface LoginTransaction {
  /** What the sign-in is for: `device` (detail.deviceHash) or another room's (the console's). */
  purpose: string;
  detail: Record<string, string>;
  /** PKCE code verifier and OIDC nonce: secrets of this server, never sent to the browser. */
  verifier: string;
  nonce: string;
  /** Digest of the cookie that binds the round trip to the browser that started it. */
  bindingHash: string;
  ip: string;
  createdAt: number;
}

/**
 * Device grants, user codes and IdP round trips. Every state change is a conditional write, so
 * that each grant is approved once and its tokens handed out once, whichever instance is asked.
 */
export class DeviceGrantStore {
  readonly #table: IdentityTable;

  constructor(table: IdentityTable) {
    this.#table = table;
  }

  /** Stores a new grant and its user code; false when the user code is taken (pick another). */
  async create(grant: Omit<DeviceGrant, 'status' | 'interval'>): Promise<boolean> {
    const expiresAt = N(epochSeconds(grant.createdAt) + DEVICE_CODE_SECONDS);
    if (!(await this.#table.put(identityKeys.userCode(grant.userCodeHash), SINGLE, { device: S(grant.deviceHash), expiresAt }, true))) {
      const taken = await this.#table.get(identityKeys.userCode(grant.userCodeHash));
      if (live(taken, grant.createdAt)) return false;
      // An expired code DynamoDB has not deleted yet is free again.
      await this.#table.put(identityKeys.userCode(grant.userCodeHash), SINGLE, { device: S(grant.deviceHash), expiresAt });
    }
    const item: Item = {
      status: S('pending'),
      userCode: S(grant.userCodeHash),
      surface: S(grant.surface),
      ip: S(grant.ip),
      userAgent: S(grant.userAgent),
      createdAt: N(grant.createdAt),
      interval: N(POLL_INTERVAL_SECONDS),
      expiresAt,
    };
    await this.#table.put(identityKeys.device(grant.deviceHash), SINGLE, item, true);
    return true;
  }

  async get(deviceHash: string, nowMs: number): Promise<DeviceGrant | undefined> {
    const item = await this.#table.get(identityKeys.device(deviceHash));
    return live(item, nowMs) ? toGrant(deviceHash, item) : undefined;
  }

  async byUserCode(userCodeHash: string, nowMs: number): Promise<DeviceGrant | undefined> {
    const pointer = await this.#table.get(identityKeys.userCode(userCodeHash));
    const deviceHash = live(pointer, nowMs) ? str(pointer, 'device') : undefined;
    return deviceHash === undefined ? undefined : this.get(deviceHash, nowMs);
  }

  /**
   * Records a poll of a pending grant. False when it came sooner than the grant's interval
   * after the previous one: the interval then grows by 5 s (RFC 8628 §3.5, `slow_down`).
   * (DynamoDB conditions do no arithmetic: the item keeps when the next poll is due.)
   */
  async poll(grant: DeviceGrant, nowMs: number): Promise<boolean> {
    const key = identityKeys.device(grant.deviceHash);
    const paced = await this.#table.update(key, SINGLE, {
      expression: 'SET nextPollAt = :next',
      condition: 'attribute_not_exists(nextPollAt) OR nextPollAt <= :now',
      values: { ':now': N(nowMs + POLL_TOLERANCE_MS), ':next': N(nowMs + grant.interval * 1000) },
    });
    if (paced) return true;
    await this.#table.update(key, SINGLE, {
      expression: 'SET nextPollAt = :next ADD #interval :step',
      condition: 'attribute_exists(pk)',
      names: { '#interval': 'interval' },
      values: { ':next': N(nowMs + (grant.interval + SLOW_DOWN_STEP_SECONDS) * 1000), ':step': N(SLOW_DOWN_STEP_SECONDS) },
    });
    return false;
  }

  /** Approves a pending, unexpired grant for a session; false when it is no longer pending. */
  async approve(deviceHash: string, session: { familyId: string; sub: string; email?: string }, nowMs: number): Promise<boolean> {
    const email: Item = session.email === undefined ? {} : { ':email': S(session.email) };
    const updated = await this.#table.update(identityKeys.device(deviceHash), SINGLE, {
      expression: `SET #status = :approved, familyId = :family, #sub = :sub${session.email === undefined ? '' : ', email = :email'}`,
      condition: '#status = :pending AND expiresAt > :now',
      names: { '#status': 'status', '#sub': 'sub' },
      values: { ':approved': S('approved'), ':pending': S('pending'), ':family': S(session.familyId), ':sub': S(session.sub), ':now': N(epochSeconds(nowMs)), ...email },
    });
    return updated !== undefined;
  }

  /** Denies a pending grant (the person said no, or the IdP refused them); false when it was not pending. */
  async deny(deviceHash: string): Promise<boolean> {
    return (await this.#transition(deviceHash, 'pending', 'denied')) !== undefined;
  }

  /** Hands an approved grant's session to exactly one poll: the grant as it was, or undefined for every other poll. */
  async consume(deviceHash: string): Promise<DeviceGrant | undefined> {
    const item = await this.#transition(deviceHash, 'approved', 'consumed');
    return item && toGrant(deviceHash, item);
  }

  /** The user code is done with (approved, denied, consumed): it stops resolving at once. */
  async forgetUserCode(userCodeHash: string): Promise<void> {
    await this.#table.delete(identityKeys.userCode(userCodeHash));
  }

  async #transition(deviceHash: string, from: DeviceStatus, to: DeviceStatus): Promise<Item | undefined> {
    return this.#table.update(identityKeys.device(deviceHash), SINGLE, {
      expression: 'SET #status = :to',
      condition: '#status = :from',
      names: { '#status': 'status' },
      values: { ':from': S(from), ':to': S(to) },
    });
  }

  async beginLogin(stateHash: string, login: LoginTransaction): Promise<void> {
    const detail = Object.fromEntries(Object.entries(login.detail).map(([name, value]) => [name, S(value)]));
    await this.#table.put(
      identityKeys.login(stateHash),
      SINGLE,
      {
        purpose: S(login.purpose),
        detail: { M: detail },
        verifier: S(login.verifier),
        nonce: S(login.nonce),
        binding: S(login.bindingHash),
        ip: S(login.ip),
        createdAt: N(login.createdAt),
        expiresAt: N(epochSeconds(login.createdAt) + LOGIN_SECONDS),
      },
      true,
    );
  }

  /** Takes a round trip by its `state` (single use: a replayed callback finds nothing). */
  async takeLogin(stateHash: string, nowMs: number): Promise<LoginTransaction | undefined> {
    const item = await this.#table.take(identityKeys.login(stateHash));
    if (!live(item, nowMs)) return undefined;
    const detail = Object.fromEntries(Object.entries(item.detail?.M ?? {}).flatMap(([name, value]) => (value.S === undefined ? [] : [[name, value.S]])));
    return {
      purpose: str(item, 'purpose') ?? '',
      detail,
      verifier: str(item, 'verifier') ?? '',
      nonce: str(item, 'nonce') ?? '',
      bindingHash: str(item, 'binding') ?? '',
      ip: str(item, 'ip') ?? '',
      createdAt: num(item, 'createdAt') ?? 0,
    };
  }
}

function toGrant(deviceHash: string, item: Item): DeviceGrant {
  const grant: DeviceGrant = {
    deviceHash,
    status: (str(item, 'status') ?? 'denied') as DeviceStatus,
    userCodeHash: str(item, 'userCode') ?? '',
    surface: str(item, 'surface') ?? '',
    ip: str(item, 'ip') ?? '',
    userAgent: str(item, 'userAgent') ?? '',
    createdAt: num(item, 'createdAt') ?? 0,
    interval: num(item, 'interval') ?? POLL_INTERVAL_SECONDS,
  };
  const familyId = str(item, 'familyId');
  if (familyId !== undefined) grant.familyId = familyId;
  const sub = str(item, 'sub');
  if (sub !== undefined) grant.sub = sub;
  const email = str(item, 'email');
  if (email !== undefined) grant.email = email;
  return grant;
}
