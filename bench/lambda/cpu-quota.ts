import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A Lambda memory size's CPU share, emulated with the Linux CFS bandwidth controller.
 *
 * Lambda gives a function CPU in proportion to its memory: 1,769 MB is one vCPU
 * (https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html), so 512 MB may run
 * 512/1,769 of each scheduling period. Each size gets a cgroup whose quota is that share of a
 * 20 ms period; the runtime process is moved into it before Node starts (`launch`). 20 ms, not the
 * kernel's 100 ms default, because that is the throttling interval practitioners observed on
 * Lambda (https://github.com/pwrdrvr/lambda-dispatch/issues/246): a longer period would let short
 * requests run at full speed on credit and flatter the small sizes.
 *
 * Either controller works: cgroup v2 (`cpu.max`, when the cpu controller is on the unified
 * hierarchy) or cgroup v1 (`cpu.cfs_quota_us` / `cpu.cfs_period_us`). Both need write access to
 * the hierarchy (root, or a delegated subtree). When neither is writable, `openCpuQuota` says why
 * and the caller measures unthrottled instead.
 */
export const ONE_VCPU_MB = 1_769;
export const PERIOD_US = 20_000;

export interface QuotaGroup {
  memoryMb: number;
  /** The share of one CPU this group may use. */
  share: number;
  /** Wraps a command so that it runs inside the group (the shell `exec`s it: same pid). */
  launch(command: string, args: string[]): { command: string; args: string[] };
  /** Time the group's processes spent throttled so far, µs. */
  throttledUs(): number;
  /**
   * Lets the group use one full vCPU until `sizeCpu()`: an on-demand environment's Init phase
   * runs unthrottled on Lambda (see `INIT_BURST`).
   */
  fullCpu(): void;
  /** Back to the size's share (the state a group starts in). */
  sizeCpu(): void;
}

/**
 * Lambda runs the Init phase of an on-demand execution environment at a full vCPU, whatever the
 * memory size, and only then applies the size's share; provisioned concurrency environments get
 * no burst, but they initialize before any request waits for them. Sources: AWS's Serverless Land
 * guide "Effectively running Java on Serverless", section "Utilize initialization phase"
 * (https://serverlessland.com/content/service/lambda/guides/effectively-running-java-on-serverless/init-heavy-lifting),
 * and the AWS Lambda Web Adapter's "Async Initialization"
 * (https://awslabs.github.io/aws-lambda-web-adapter/configuration/async-init.html).
 */
export const INIT_BURST = 'Init at one full vCPU, then the size\'s share';

export interface CpuQuota {
  /** `cgroup v2 cpu.max` or `cgroup v1 cpu.cfs_quota_us`, with the directory. */
  method: string;
  group(memoryMb: number): QuotaGroup;
  /** Removes the groups (their processes must have exited). */
  close(): void;
}

interface Controller {
  method: string;
  root: string;
  prepare(parent: string): void;
  limit(dir: string, quotaUs: number): void;
  throttledUs(dir: string): number;
}

const V2: Controller = {
  method: 'cgroup v2 cpu.max',
  root: '',
  prepare(parent) {
    // The parent must hand the cpu controller down to its children.
    writeFileSync(join(parent, 'cgroup.subtree_control'), '+cpu');
  },
  limit(dir, quotaUs) {
    writeFileSync(join(dir, 'cpu.max'), `${quotaUs} ${PERIOD_US}`);
  },
  throttledUs: (dir) => statField(join(dir, 'cpu.stat'), 'throttled_usec'),
};

const V1: Controller = {
  method: 'cgroup v1 cpu.cfs_quota_us',
  root: '',
  prepare() {},
  limit(dir, quotaUs) {
    // The period first: a quota above the current period would be refused otherwise.
    writeFileSync(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
    writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(quotaUs));
  },
  throttledUs: (dir) => statField(join(dir, 'cpu.stat'), 'throttled_time') / 1000,
};

function statField(file: string, name: string): number {
  const match = new RegExp(`^${name} (\\d+)$`, 'm').exec(readFileSync(file, 'utf8'));
  return match ? Number(match[1]) : Number.NaN;
}

/** Where a cpu controller can be written: a cgroup2 mount with `cpu` enabled, or a v1 cpu hierarchy. */
function findControllers(): Controller[] {
  const found: Controller[] = [];
  let mounts = '';
  try {
    mounts = readFileSync('/proc/self/mounts', 'utf8');
  } catch {
    return found;
  }
  for (const line of mounts.split('\n')) {
    const [, dir, type, options] = line.split(' ');
    if (!dir) continue;
    if (type === 'cgroup2' && existsSync(join(dir, 'cgroup.controllers')) && readFileSync(join(dir, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('cpu')) {
      found.push({ ...V2, root: dir });
    }
    if (type === 'cgroup' && options?.split(',').includes('cpu') && existsSync(join(dir, 'cpu.cfs_quota_us'))) found.push({ ...V1, root: dir });
  }
  return found;
}

/** Opens the first writable controller, or explains why none is usable. */
export function openCpuQuota(): CpuQuota | { unavailable: string } {
  const controllers = findControllers();
  if (controllers.length === 0) return { unavailable: 'no cgroup hierarchy with the cpu controller is mounted (looked for cgroup2 with "cpu" in cgroup.controllers, and cgroup v1 "cpu")' };
  const failures: string[] = [];
  for (const controller of controllers) {
    removeLeftovers(controller.root);
    const parent = join(controller.root, `${PREFIX}${process.pid}`);
    try {
      mkdirSync(parent, { recursive: true });
      controller.prepare(parent);
      return quotaIn(controller, parent);
    } catch (error) {
      failures.push(`${controller.method} in ${controller.root}: ${(error as Error).message}`);
      try {
        rmdirSync(parent);
      } catch {
        // it was never made, or it cannot be removed either
      }
    }
  }
  return { unavailable: `no cgroup is writable by this user (${failures.join('; ')})` };
}

const PREFIX = 'agent-gateway-bench-';

/** Groups of earlier runs that died before closing theirs (their process is gone, so are their members). */
function removeLeftovers(root: string): void {
  let names: string[] = [];
  try {
    names = readdirSync(root).filter((name) => name.startsWith(PREFIX));
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(name.slice(PREFIX.length));
    if (!Number.isInteger(pid) || pid === process.pid || existsSync(`/proc/${pid}`)) continue;
    const dir = join(root, name);
    try {
      for (const child of readdirSync(dir, { withFileTypes: true })) if (child.isDirectory()) rmdirSync(join(dir, child.name));
      rmdirSync(dir);
    } catch {
      // still in use, or not ours to remove: left alone
    }
  }
}

function quotaIn(controller: Controller, parent: string): CpuQuota {
  const made: string[] = [];
  return {
    method: `${controller.method} (${parent}, period ${PERIOD_US / 1000} ms)`,
    group(memoryMb) {
      const dir = join(parent, `mb-${memoryMb}`);
      mkdirSync(dir, { recursive: true });
      made.push(dir);
      const share = memoryMb / ONE_VCPU_MB;
      const sizeQuotaUs = Math.max(1_000, Math.round(share * PERIOD_US));
      controller.limit(dir, sizeQuotaUs);
      const procs = join(dir, 'cgroup.procs');
      return {
        memoryMb,
        share,
        launch: (command, args) => ({ command: '/bin/sh', args: ['-c', `echo $$ > '${procs}' && exec "$0" "$@"`, command, ...args] }),
        throttledUs: () => controller.throttledUs(dir),
        fullCpu: () => controller.limit(dir, PERIOD_US),
        sizeCpu: () => controller.limit(dir, sizeQuotaUs),
      };
    },
    close() {
      for (const dir of [...made.reverse(), parent]) {
        try {
          rmdirSync(dir);
        } catch {
          // still has a process (it will be gone soon) or already removed: left for the kernel to reap
        }
      }
    },
  };
}
