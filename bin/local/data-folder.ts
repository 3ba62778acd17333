import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Who holds a data folder. Its embedded store (LevelDB) can be open in one process only, and a
 * second opener used to die on dynalite's "Database is closed" thrown where nothing can catch
 * it. So a process claims the folder first, with a lock record created exclusively: the gateway
 * for as long as it runs, the key CLI for one command when no gateway runs. The gateway's record
 * also says where it listens and where its store answers (the store's secret included: the file
 * is 0600), which is how the key CLI reaches the running store and prints setup for the address
 * the server really has.
 */
export interface Holder {
  pid: number;
  role: 'server' | 'keys';
  startedAt: string;
  /** The gateway's address as clients use it. */
  url?: string;
  /** The embedded store's endpoint, secret included. */
  store?: string;
  /** How long the running gateway trusts a looked-up key (revocations take up to this). */
  keyCacheSeconds?: number;
}

export const LOCK_FILE = 'lock.json';

export interface Claim {
  /** Adds what is known once the process is up (address, store). */
  update(fields: Partial<Holder>): void;
  /** Gives the folder up (only if the record is still this process's). */
  release(): void;
}

/** Takes the data folder for this process, or says who holds it (a live process of the gateway's). */
export function claimDataFolder(dataDir: string, role: Holder['role']): { claim: Claim } | { heldBy: Holder } {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, LOCK_FILE);
  let record: Holder = { pid: process.pid, role, startedAt: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, JSON.stringify(record));
      closeSync(fd);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 2) throw error;
      const holder = readRecord(path);
      if (holder !== undefined && isLive(holder)) return { heldBy: holder };
      // Left behind by a process that is gone (kill -9, a crash, a container restart).
      rmSync(path, { force: true });
    }
  }
  // The marker of versions before this record (world-readable, naming the unguarded store's port).
  rmSync(join(dataDir, 'store-endpoint.json'), { force: true });
  return {
    claim: {
      update(fields) {
        record = { ...record, ...fields };
        const temporary = `${path}.${process.pid}`;
        const fd = openSync(temporary, 'w', 0o600);
        writeSync(fd, JSON.stringify(record));
        closeSync(fd);
        renameSync(temporary, path);
      },
      release() {
        if (readRecord(path)?.pid === process.pid) rmSync(path, { force: true });
      },
    },
  };
}

/** The live holder of the data folder, if any. */
export function dataFolderHolder(dataDir: string): Holder | undefined {
  const holder = readRecord(join(dataDir, LOCK_FILE));
  return holder !== undefined && isLive(holder) ? holder : undefined;
}

function readRecord(path: string): Holder | undefined {
  try {
    const record = JSON.parse(readFileSync(path, 'utf8')) as Partial<Holder>;
    return typeof record.pid === 'number' && (record.role === 'server' || record.role === 'keys') ? (record as Holder) : undefined;
  } catch {
    return undefined;
  }
}

const ENTRIES: Record<Holder['role'], string> = { server: 'dev-server', keys: 'keys' };

/**
 * The recorded process still runs, and is the gateway's (a pid is reused after a restart, in a
 * container always: this process's own pid in a record is a previous run's).
 */
function isLive(holder: Holder): boolean {
  if (holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  let commandLine: string;
  try {
    commandLine = readFileSync(`/proc/${holder.pid}/cmdline`, 'utf8');
  } catch {
    // No /proc (macOS) or not readable: the pid is alive, trust the record.
    return true;
  }
  return commandLine.includes(ENTRIES[holder.role]);
}

/** The holder as one phrase: `the gateway (pid 1234, http://127.0.0.1:8787)`, `npm run keys (pid 1234)`. */
export function describeHolder(holder: Holder): string {
  return holder.role === 'server' ? `the gateway (pid ${holder.pid}${holder.url ? `, ${holder.url}` : ''})` : `npm run keys (pid ${holder.pid})`;
}
