import { spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';

/**
 * Inside the loopback-only namespace, a DNS "server" on the resolver addresses of
 * /etc/resolv.conf (added to `lo`) that answers NXDOMAIN to everything and remembers the names
 * asked for. A lookup is how a phone-home attempt shows itself;
 * the run prints them so a client update that starts calling home is noticed.
 */
export interface DnsWatch {
  names(): string[];
  close(): void;
}

function resolvers(): string[] {
  try {
    return readFileSync('/etc/resolv.conf', 'utf8')
      .split('\n')
      .map((line) => /^\s*nameserver\s+(\d+\.\d+\.\d+\.\d+)\s*$/.exec(line)?.[1])
      .filter((address): address is string => address !== undefined);
  } catch {
    return [];
  }
}

function queryName(message: Buffer): { name: string; end: number } {
  const labels: string[] = [];
  let i = 12;
  while (i < message.length && message[i] !== 0) {
    const length = message[i] as number;
    labels.push(message.subarray(i + 1, i + 1 + length).toString('ascii'));
    i += length + 1;
  }
  return { name: labels.join('.'), end: i + 5 };
}

export async function startDnsWatch(): Promise<DnsWatch> {
  const seen: string[] = [];
  const sockets: dgram.Socket[] = [];
  for (const address of resolvers()) {
    if (!address.startsWith('127.')) {
      const added = spawnSync('ip', ['addr', 'add', `${address}/32`, 'dev', 'lo'], { stdio: 'ignore' });
      if (added.status !== 0) continue;
    }
    const socket = dgram.createSocket('udp4');
    socket.on('message', (message, peer) => {
      const { name, end } = queryName(message);
      seen.push(name);
      // Same id and question, flags "response, recursion available, NXDOMAIN", no answers.
      const reply = Buffer.concat([message.subarray(0, 2), Buffer.from([0x81, 0x83]), message.subarray(4, 6), Buffer.alloc(6), message.subarray(12, end)]);
      socket.send(reply, peer.port, peer.address);
    });
    const bound = await new Promise<boolean>((resolve) => {
      socket.once('error', () => resolve(false));
      socket.bind(53, address, () => resolve(true));
    });
    if (bound) sockets.push(socket);
  }
  return {
    names: () => [...new Set(seen)].sort(),
    close: () => sockets.forEach((socket) => socket.close()),
  };
}
