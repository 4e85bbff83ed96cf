import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock, PolicyConfigError } from '../core/index.js';
import { ConfigFileError, readConfigFile } from './config-file.js';
import { ConfigFileSource } from './config-file-source.js';

/** A tiny validator with a path-precise message, standing in for the resilience config parser. */
function validate(document: unknown): { attempts: number } {
  const attempts = (document as { attempts?: unknown }).attempts;
  if (typeof attempts !== 'number' || !Number.isInteger(attempts) || attempts < 1) {
    throw new Error(`attempts: ${JSON.stringify(attempts)} is invalid: must be an integer >= 1`);
  }
  return { attempts };
}

/** Waits (bounded, on real time) for the kernel's file events to reach the watcher. */
async function until(predicate: () => boolean, what: string, bound = 3000): Promise<void> {
  const start = performance.now();
  while (!predicate()) {
    if (performance.now() - start > bound) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('ConfigFileSource', () => {
  let dir: string;
  let clock: FakeClock;
  let configs: number[];
  let errors: ConfigFileError[];
  let source: ConfigFileSource<{ attempts: number }> | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'nresilience-config-'));
    clock = new FakeClock();
    configs = [];
    errors = [];
  });
  afterEach(() => {
    source?.close();
    source = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  function open(path: string, debounce?: number): number {
    source = new ConfigFileSource({
      path,
      validate,
      clock,
      debounce,
      onConfig: (c) => configs.push(c.attempts),
      onError: (e) => errors.push(e),
    });
    return source.open().attempts;
  }

  /** An event arrived (the debounce timer is armed); let the quiet period pass and the read finish. */
  async function settle(): Promise<void> {
    await until(() => clock.pending > 0, 'a file event');
    await clock.advance(250);
    await source!.idle();
  }

  it('reads YAML and JSON at open, and refuses an invalid or unparsable file with its path', () => {
    writeFileSync(join(dir, 'a.yaml'), 'attempts: 2\n');
    writeFileSync(join(dir, 'b.json'), '{ "attempts": 4 }');
    expect(open(join(dir, 'a.yaml'))).toBe(2);
    source!.close();
    expect(open(join(dir, 'b.json'))).toBe(4);
    source!.close();
    writeFileSync(join(dir, 'c.yaml'), 'attempts: 0\n');
    expect(() => open(join(dir, 'c.yaml'))).toThrow(
      `${join(dir, 'c.yaml')}: invalid config: attempts: 0 is invalid: must be an integer >= 1`,
    );
    writeFileSync(join(dir, 'd.yaml'), 'attempts: 1\nattempts: 2\n');
    expect(() => readConfigFile(join(dir, 'd.yaml'))).toThrow(
      /d\.yaml: unparsable YAML: Map keys must be unique at line 2, column 1/,
    );
    writeFileSync(join(dir, 'e.json'), '{ "attempts": ');
    expect(() => readConfigFile(join(dir, 'e.json'))).toThrow(/e\.json: unparsable JSON: /);
    expect(() => readConfigFile(join(dir, 'missing.yaml'))).toThrow(
      `${join(dir, 'missing.yaml')}: cannot be read (ENOENT)`,
    );
    writeFileSync(join(dir, 'f.yaml'), '# nothing yet\n');
    expect(() => readConfigFile(join(dir, 'f.yaml'))).toThrow(
      expect.objectContaining({ problem: 'empty' }),
    );
  });

  it('truncate-then-write: never applies the blank file, applies the final content once', async () => {
    const path = join(dir, 'resilience.yaml');
    writeFileSync(path, 'attempts: 3\n');
    open(path);
    // The editor truncates, and the quiet period passes before it writes: nothing is applied.
    const fd = openSync(path, 'w');
    await settle();
    expect(configs).toEqual([]);
    expect(errors).toEqual([]);
    // It writes in two pieces within the quiet period: one read, of the final content.
    writeSync(fd, 'attem');
    writeSync(fd, 'pts: 2\n');
    closeSync(fd);
    await settle();
    await clock.advance(1000);
    await source!.idle();
    expect(configs).toEqual([2]);
    expect(errors).toEqual([]);
    expect(source!.watching).toBe(true);
  });

  it('atomic replace by rename, then an in-place write: both apply (the watch outlives the inode)', async () => {
    const path = join(dir, 'resilience.yaml');
    writeFileSync(path, 'attempts: 3\n');
    open(path);
    writeFileSync(join(dir, '.resilience.yaml.tmp'), 'attempts: 5\n');
    renameSync(join(dir, '.resilience.yaml.tmp'), path);
    await settle();
    expect(configs).toEqual([5]);
    writeFileSync(path, 'attempts: 6\n');
    await settle();
    expect(configs).toEqual([5, 6]);
  });

  it('Kubernetes ConfigMap layout: each ..data symlink swap applies, old versions removed', async () => {
    const swap = (version: string, text: string): void => {
      mkdirSync(join(dir, version));
      writeFileSync(join(dir, version, 'config.yaml'), text);
      symlinkSync(version, join(dir, '..data_tmp'));
      renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    };
    swap('..2026_12_01_08_00_00.1', 'attempts: 3\n');
    symlinkSync('..data/config.yaml', join(dir, 'config.yaml'));
    expect(open(join(dir, 'config.yaml'))).toBe(3);
    swap('..2026_12_01_08_01_00.2', 'attempts: 2\n');
    rmSync(join(dir, '..2026_12_01_08_00_00.1'), { recursive: true });
    await settle();
    expect(configs).toEqual([2]);
    swap('..2026_12_01_08_02_00.3', 'attempts: 7\n');
    rmSync(join(dir, '..2026_12_01_08_01_00.2'), { recursive: true });
    await settle();
    expect(configs).toEqual([2, 7]);
    expect(errors).toEqual([]);
  });

  it('every write pattern in turn on one source: each applies once, the watcher stays alive', async () => {
    const path = join(dir, 'resilience.yaml');
    writeFileSync(path, 'attempts: 1\n');
    open(path);
    const patterns: [string, (attempts: number) => void][] = [
      ['truncate-then-write', (n) => writeFileSync(path, `attempts: ${n}\n`)],
      [
        'rename',
        (n) => (writeFileSync(`${path}.swp`, `attempts: ${n}\n`), renameSync(`${path}.swp`, path)),
      ],
      ['delete-then-create', (n) => (unlinkSync(path), writeFileSync(path, `attempts: ${n}\n`))],
    ];
    let n = 1;
    for (let round = 0; round < 2; round++) {
      for (const [, write] of patterns) {
        write(++n);
        await settle();
        expect(source!.watching).toBe(true);
      }
    }
    expect(configs).toEqual([2, 3, 4, 5, 6, 7]);
    expect(errors).toEqual([]);
  });

  it('invalid content is reported once and changes nothing; the next valid write applies', async () => {
    const path = join(dir, 'resilience.yaml');
    writeFileSync(path, 'attempts: 3\n');
    open(path);
    writeFileSync(path, 'attempts: -1\n');
    await settle();
    writeFileSync(path, 'attempts: -1\n'); // saved again, same content
    await settle();
    writeFileSync(path, 'attempts: [1,\n');
    await settle();
    expect(configs).toEqual([]);
    expect(errors.map((e) => [e.problem, e.message.replace(dir, '<dir>').split('\n')[0]])).toEqual([
      [
        'invalid',
        '<dir>/resilience.yaml: invalid config: attempts: -1 is invalid: must be an integer >= 1',
      ],
      [
        'unparsable',
        '<dir>/resilience.yaml: unparsable YAML: Flow sequence in block collection must be sufficiently indented and end with a ] at line 2, column 1:',
      ],
    ]);
    writeFileSync(path, 'attempts: 2\n');
    await settle();
    expect(configs).toEqual([2]);
  });

  it('a throwing onConfig (the registry refusing) is reported as invalid with its cause', async () => {
    const path = join(dir, 'resilience.yaml');
    writeFileSync(path, 'attempts: 3\n');
    const refusal = new Error('policies.payments: is required');
    source = new ConfigFileSource({
      path,
      validate,
      clock,
      onConfig: () => {
        throw refusal;
      },
      onError: (e) => errors.push(e),
    });
    source.open();
    writeFileSync(path, 'attempts: 2\n');
    await settle();
    expect(errors).toHaveLength(1);
    expect(errors[0]!.problem).toBe('invalid');
    expect(errors[0]!.cause).toBe(refusal);
  });

  it('a vanished file is reported once, and its return applies', async () => {
    const path = join(dir, 'resilience.yaml');
    writeFileSync(path, 'attempts: 3\n');
    open(path);
    unlinkSync(path);
    await settle();
    await source!.check();
    expect(errors.map((e) => e.problem)).toEqual(['unreadable']);
    writeFileSync(path, 'attempts: 4\n');
    await settle();
    expect(configs).toEqual([4]);
  });

  it('check({ force }) re-applies the same content (SIGHUP); close() cancels the debounce and stops watching', async () => {
    const path = join(dir, 'resilience.yaml');
    writeFileSync(path, 'attempts: 3\n');
    open(path);
    await source!.check();
    expect(configs).toEqual([]);
    await source!.check({ force: true });
    expect(configs).toEqual([3]);
    writeFileSync(path, 'attempts: 2\n');
    await until(() => clock.pending > 0, 'a file event');
    source!.close();
    expect(clock.pending).toBe(0);
    expect(source!.watching).toBe(false);
    await clock.advance(1000);
    expect(configs).toEqual([3]);
  });

  it('the quiet period restarts on every event: debounce 100 reads 100 ms after the last one', async () => {
    const path = join(dir, 'resilience.yaml');
    writeFileSync(path, 'attempts: 3\n');
    open(path, 100);
    writeFileSync(path, 'attempts: 4\n');
    await until(() => clock.nextDue === 100, 'a file event');
    await clock.advance(60);
    writeFileSync(path, 'attempts: 5\n');
    await until(() => clock.nextDue === 160, 'the second file event');
    await clock.advance(99);
    expect(configs).toEqual([]);
    await clock.advance(1);
    await source!.idle();
    expect(configs).toEqual([5]);
    const withDebounce = (debounce: unknown) => () =>
      new ConfigFileSource({ path, validate, onConfig: () => {}, debounce: debounce as number });
    expect(withDebounce(-1)).toThrow(
      new PolicyConfigError('debounce', -1, 'must be a finite duration in ms >= 0'),
    );
    expect(withDebounce(Infinity)).toThrow(
      'debounce: Infinity is invalid: must be a finite duration in ms >= 0',
    );
    expect(withDebounce(null)).toThrow(
      'debounce: null is invalid: must be a finite duration in ms >= 0',
    );
  });
});
