import type { Server } from 'node:http';
import { claimDataFolder, describeHolder, type Claim } from './data-folder.ts';
import { portHolder } from './port-holder.ts';

/** A start that cannot go on: one line for the operator, no stack trace. */
export class StartRefused extends Error {}

/** How long a start waits for a key command that holds the data folder (they take a moment). */
const KEY_COMMAND_WAIT_MS = 5_000;

/** Claims the data folder for the gateway; refuses at once when another gateway serves it. */
export async function claimForServer(dataDir: string): Promise<Claim> {
  const until = Date.now() + KEY_COMMAND_WAIT_MS;
  for (;;) {
    const claimed = claimDataFolder(dataDir, 'server');
    if ('claim' in claimed) return claimed.claim;
    const holder = claimed.heldBy;
    if (holder.role === 'server') {
      throw new StartRefused(`The data folder ${dataDir} is already served by ${describeHolder(holder)}. Stop that one first (kill ${holder.pid}), or give this one its own GATEWAY_DATA_DIR.`);
    }
    if (Date.now() > until) throw new StartRefused(`The data folder ${dataDir} is in use by ${describeHolder(holder)}; start the gateway again once that command has finished.`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Listens, or fails with one line saying what holds the address and what to do. */
export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      server.off('listening', listening);
      const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
      if (error.code === 'EADDRINUSE') {
        const holder = portHolder(port);
        reject(new StartRefused(`Port ${port} on ${host} is already in use${holder ? ` by ${holder}` : ' by another process'}. Stop that process, or start with another PORT (PORT=0 picks a free one).`));
      } else if (error.code === 'EACCES') reject(new StartRefused(`Not allowed to listen on ${address} (ports below 1024 need privileges): use a PORT of 1024 or more.`));
      else if (error.code === 'EADDRNOTAVAIL') reject(new StartRefused(`Cannot listen on ${address}: HOST is not an address of this machine.`));
      else reject(error);
    };
    const listening = () => {
      server.off('error', failed);
      resolve();
    };
    server.once('error', failed);
    server.once('listening', listening);
    server.listen(port, host);
  });
}

/**
 * Calls `stop` when the process is asked to stop (`signal`: by a signal, which may come again):
 * SIGTERM or SIGINT to this process, or, when a package manager started it (`npm start`), the end
 * of the process that started it. npm passes SIGTERM and SIGINT on to the script's process; the
 * start script `exec`s node so that this is the gateway itself (through the `sh -c` npm runs
 * scripts with, a SIGTERM ended the shell alone and the gateway lived on as an orphan, still
 * listening and holding the data folder; a SIGINT ended nothing). If the package manager dies
 * without passing a signal on (kill -9, a runner that does not forward), the parent changes: that
 * stops the gateway too. Started directly (`node bin/dev-server.ts`, e.g. under nohup) it keeps
 * running when the shell that started it ends, as asked.
 */
export function onStopRequest(stop: (reason: string, signal: boolean) => void): void {
  process.on('SIGINT', () => stop('SIGINT', true));
  process.on('SIGTERM', () => stop('SIGTERM', true));
  if (process.env.npm_lifecycle_event === undefined) return;
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    stop(`the process that started it (pid ${parent}) ended`, false);
  }, PARENT_CHECK_MS);
  watch.unref();
}

/** How often the parent is checked: a stop by npm's end is seen within this. */
const PARENT_CHECK_MS = 250;
