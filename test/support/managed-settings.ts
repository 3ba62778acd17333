import { createHash } from 'node:crypto';

/**
 * The managed settings checksum as Claude Code's gateway protocol words it, written out here by
 * hand (not the gateway's code): `sha256:` and the hex SHA-256 of the settings as JSON with the
 * keys of every object sorted and no whitespace.
 */
export function expectedChecksum(settings: unknown): string {
  return `sha256:${createHash('sha256').update(canonical(settings)).digest('hex')}`;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value).sort().map((name) => `${JSON.stringify(name)}:${canonical((value as Record<string, unknown>)[name])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}
