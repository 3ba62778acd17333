import { machineBusyUs } from '../phase-context.ts';
import type { Deployment } from './deployment.ts';

/**
 * How much CPU processes outside the benchmark used while it measured: the machine's busy time
 * minus this process, the upstream stub and the function's own process.
 */
export class LoadWatch {
  othersShare = 0;
  readonly #deployment: Deployment;

  constructor(deployment: Deployment) {
    this.#deployment = deployment;
  }

  /** `work` returns the CPU time its function process used, µs. */
  async around(work: () => Promise<number>): Promise<void> {
    const machine = machineBusyUs();
    const self = process.cpuUsage();
    const stub = await this.#deployment.stub.sample();
    const at = performance.now();
    const functionCpuUs = await work();
    const own = process.cpuUsage(self);
    const stubUs = (await this.#deployment.stub.sample()).cpuUs - stub.cpuUs;
    const wallUs = (performance.now() - at) * 1000;
    const others = machineBusyUs() - machine - own.user - own.system - stubUs - (Number.isFinite(functionCpuUs) ? functionCpuUs : 0);
    if (Number.isFinite(others) && wallUs > 0) this.othersShare = Math.max(this.othersShare, Math.max(0, others) / wallUs);
  }
}
