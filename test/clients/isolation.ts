import { readFileSync } from 'node:fs';

/**
 * The CLIs must not reach anything but loopback. The suite runs inside a network namespace
 * whose only interface is `lo` (run.ts puts it there); /proc/net/dev lists the interfaces of
 * the calling process's namespace, so this is a cheap check that it really is in one.
 */
export function networkInterfaces(): string[] {
  return readFileSync('/proc/net/dev', 'utf8')
    .split('\n')
    .slice(2)
    .map((line) => line.split(':')[0]?.trim() ?? '')
    .filter((name) => name.length > 0);
}

export function assertIsolated(): void {
  const others = networkInterfaces().filter((name) => name !== 'lo');
  if (others.length > 0) {
    throw new Error(`The client suite must run in a network namespace with only loopback (found ${others.join(', ')}). Run it with: npm run test:clients`);
  }
}
