import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * Which process listens on which TCP port, read from /proc the way `ss -ltnp` does: listening
 * sockets' inodes from /proc/net/tcp{,6}, and the processes holding a descriptor on them. Best
 * effort: empty off Linux, and blind to other users' processes (their descriptors cannot be read).
 */

/** Listening sockets: `socket:[inode]` -> port. */
function listeningSockets(): Map<string, number> {
  const sockets = new Map<string, number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      // local_address is ADDR:PORT in hex; state 0A is LISTEN; the inode is the tenth field.
      const fields = line.trim().split(/\s+/);
      const port = Number.parseInt(fields[1]?.split(':').pop() ?? '', 16);
      if (fields[3] === '0A' && fields[9] !== undefined && Number.isFinite(port)) sockets.set(`socket:[${fields[9]}]`, port);
    }
  }
  return sockets;
}

/** The socket inodes a process holds descriptors on (empty when it cannot be read). */
function socketsOf(pid: string): string[] {
  try {
    return readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
      try {
        return [readlinkSync(`/proc/${pid}/fd/${fd}`)];
      } catch {
        return [];
      }
    });
  } catch {
    return [];
  }
}

/** The process listening on `port`, as `pid 1234 (node bin/dev-server.ts)`. */
export function portHolder(port: number): string | undefined {
  const sockets = new Set([...listeningSockets()].filter(([, listening]) => listening === port).map(([inode]) => inode));
  if (sockets.size === 0) return undefined;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  const pid = pids.find((candidate) => socketsOf(candidate).some((inode) => sockets.has(inode)));
  return pid === undefined ? undefined : `pid ${pid} (${commandOf(pid)})`;
}

/** The ports a process listens on (what another local user finds with `ss -ltn`). */
export function portsOf(pid: number): number[] {
  const listening = listeningSockets();
  return [...new Set(socketsOf(String(pid)).flatMap((inode) => (listening.has(inode) ? [listening.get(inode) as number] : [])))];
}

function commandOf(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ').slice(0, 120) || 'unknown command';
  } catch {
    return 'unknown command';
  }
}
