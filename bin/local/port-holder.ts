import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * The process listening on a TCP port, as `pid 1234 (node bin/dev-server.ts)`, read from /proc
 * the way `ss -ltnp` does: the listening socket's inode in /proc/net/tcp{,6}, then the process
 * with a file descriptor on that inode. Best effort: undefined off Linux, or when the holder
 * belongs to another user (its descriptors cannot be read).
 */
export function portHolder(port: number): string | undefined {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; state 0A is LISTEN; the inode is the tenth field.
      if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '0A' && fields[9] !== undefined) inodes.add(`socket:[${fields[9]}]`);
    }
  }
  if (inodes.size === 0) return undefined;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let descriptors: string[];
    try {
      descriptors = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of descriptors) {
      try {
        if (inodes.has(readlinkSync(`/proc/${pid}/fd/${fd}`))) return `pid ${pid} (${commandOf(pid)})`;
      } catch {
        // Closed meanwhile.
      }
    }
  }
  return undefined;
}

function commandOf(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ').slice(0, 120) || 'unknown command';
  } catch {
    return 'unknown command';
  }
}
