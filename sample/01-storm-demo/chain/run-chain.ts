import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { type MachineReading, MachineMeter } from '../machine.js';
import { ChainDriver, type PhaseCalls } from './chain-driver.js';
import { type ChainScenario, chainSeconds, hopNames, phaseIndexAt } from './chain-scenario.js';
import type {
  DatabaseCounts,
  FromChild,
  HopCounts,
  HopMode,
  HopSpec,
  ToChild,
} from './protocol.js';

/** Phase index the warm-up's calls carry: counted by nobody's table. */
const WARM_UP_PHASE = 63;
// How long a child may take to start (a Nest app on a busy 2-core machine) or to exit, ms.
const START_BOUND_MS = 30_000;
const EXIT_BOUND_MS = 5_000;
// Retries of abandoned calls still on the wire when the driver is done: let them land before counting.
const SETTLE_MS = 300;

/** Everything one configuration's run recorded, raw. */
export interface ChainRecord {
  readonly mode: HopMode;
  /** The frontend's calls per phase. */
  readonly calls: readonly PhaseCalls[];
  /** Each hop's counts, frontend first. */
  readonly hops: readonly HopCounts[];
  readonly database: DatabaseCounts;
  /** Every process's reading, by name (`load driver`, the hops, `database`). */
  readonly machines: Readonly<Record<string, MachineReading>>;
}

/** A started child: its process and how to talk to it. */
class Child {
  private constructor(
    readonly name: string,
    readonly process: ChildProcess,
    readonly port: number,
  ) {}

  /** Forks `module` with `args` and waits for it to say which port it listens on. */
  static async start(name: string, module: string, args: string[]): Promise<Child> {
    const child = fork(fileURLToPath(new URL(module, import.meta.url)), args, {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const listening = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${name} did not start within ${START_BOUND_MS} ms`)),
        START_BOUND_MS,
      );
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${name} exited with code ${code} while starting`));
      });
      child.on('message', function first(message: FromChild) {
        if (message.kind !== 'listening') return;
        clearTimeout(timer);
        child.off('message', first);
        resolve(message.port);
      });
    });
    try {
      return new Child(name, child, await listening);
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  tell(message: ToChild): void {
    this.process.send(message);
  }

  /** Asks for the child's counts and its machine reading. */
  async counts<T>(): Promise<{ counts: T; machine: MachineReading }> {
    const answer = new Promise<{ counts: T; machine: MachineReading }>((resolve) => {
      const reply = (message: FromChild): void => {
        if (message.kind !== 'counts') return;
        this.process.off('message', reply);
        resolve({ counts: message.counts as T, machine: message.machine });
      };
      this.process.on('message', reply);
    });
    this.tell({ kind: 'counts' });
    return answer;
  }

  /** Closes the IPC channel (the child exits on it) and waits for the exit; kills it past the bound. */
  async stop(): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    const exited = once(this.process, 'exit');
    if (this.process.connected) this.process.disconnect();
    const timer = setTimeout(() => this.process.kill('SIGKILL'), EXIT_BOUND_MS);
    await exited;
    clearTimeout(timer);
  }
}

/**
 * One configuration of act 2: the database and the hops as child processes on 127.0.0.1 (started
 * bottom-up, each told the URL of the one below), a healthy warm-up, then the phases at the
 * scenario's rate. Resolves with every count once all
 * the children have exited.
 * @param onPhase told each phase's name as it starts (for a progress line)
 */
export async function runChain(
  mode: HopMode,
  scenario: ChainScenario,
  onPhase: (name: string) => void = () => {},
): Promise<ChainRecord> {
  const names = hopNames(scenario.hops);
  const children: Child[] = [];
  const meter = new MachineMeter();
  try {
    const database = await Child.start('database', './database.js', [
      JSON.stringify(scenario.phases.map((p) => p.database)),
    ]);
    children.push(database);
    let downstream = database.url;
    const hops: Child[] = [];
    // Bottom-up: each hop is told where the one below listens.
    for (let k = names.length - 1; k >= 0; k--) {
      const spec: HopSpec = { name: names[k]!, mode, downstream, attempts: scenario.attempts };
      const hop = await Child.start(names[k]!, './hop.js', [JSON.stringify(spec)]);
      hops.unshift(hop);
      children.push(hop);
      downstream = hop.url;
    }
    const frontend = hops[0]!;
    if (scenario.warmUpSeconds > 0) {
      await new ChainDriver(frontend.url, scenario.rate, scenario.callTimeoutMs).run(
        scenario.warmUpSeconds * 1000,
        () => WARM_UP_PHASE,
      );
    }

    const driver = new ChainDriver(frontend.url, scenario.rate, scenario.callTimeoutMs);
    let announced = -1;
    const announce = (index: number): void => {
      if (index === announced) return;
      announced = index;
      onPhase(scenario.phases[index]!.name);
    };
    announce(0);
    for (const child of children) child.tell({ kind: 'start' });
    meter.start();
    const calls = await driver.run(chainSeconds(scenario) * 1000, (elapsed) => {
      const index = phaseIndexAt(scenario, elapsed);
      announce(index);
      return index;
    });
    const machine = meter.stop();
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const hopCounts = await Promise.all(hops.map((hop) => hop.counts<HopCounts>()));
    const databaseCounts = await database.counts<DatabaseCounts>();
    const machines: Record<string, MachineReading> = { 'load driver': machine };
    hops.forEach((hop, k) => (machines[hop.name] = hopCounts[k]!.machine));
    machines.database = databaseCounts.machine;
    return {
      mode,
      calls,
      hops: hopCounts.map((c) => c.counts),
      database: databaseCounts.counts,
      machines,
    };
  } finally {
    meter.stop();
    await Promise.all(children.map((child) => child.stop()));
  }
}
