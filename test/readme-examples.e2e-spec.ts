import { readFileSync } from 'node:fs';
import { Resilience, RetryBudget } from '../lib/core/index.js';
import { priceBrownout } from './fixtures/simulate-brownout.js';
import { provePolicy } from './fixtures/testing-kit.js';

describe('docs/testing.md: the testing kit', () => {
  it('the testing-kit example retries once and succeeds', async () => {
    expect(await provePolicy()).toEqual({
      value: 'ok',
      kinds: ['attempt', 'retrying', 'attempt', 'succeeded'],
      calls: 2,
    });
  });
});

describe('docs/simulation.md', () => {
  it('the simulator example prices a brownout deterministically, with the figures its comment quotes', async () => {
    const first = await priceBrownout();
    const second = await priceBrownout();
    expect(first.calls).toBe(6000);
    expect(JSON.stringify(first.toJSON())).toBe(JSON.stringify(second.toJSON()));
    expect([first.availability, first.loadMultiplier.toFixed(3), first.amplification]).toEqual([
      0.835,
      '1.046',
      1.41,
    ]);
    expect(first.toString()).toContain('Availability     83.50%');
    const off = await priceBrownout(Resilience.default.with({ budget: RetryBudget.none }));
    expect([off.availability, off.loadMultiplier.toFixed(3), off.amplification]).toEqual([
      0.919,
      '1.348',
      2.2,
    ]);
  });
});

describe('README quick start', () => {
  it('is the quick-start fixture word for word, with the package import', () => {
    const readme = readFileSync('README.md', 'utf8');
    const block = readme.split('## Quick start')[1]!.split('```ts\n')[1]!.split('```')[0]!;
    const fixture = readFileSync('test/fixtures/quick-start.ts', 'utf8')
      .split('\n')
      .slice(2)
      .join('\n');
    expect(block.trim()).toBe(
      fixture
        .replace(
          /from '\.\.\/\.\.\/lib\/(\w+)\/index\.js';/g,
          (_, entry: string) => `from '@nresilience/nestjs${entry === 'nest' ? '' : `/${entry}`}';`,
        )
        .trim(),
    );
  });
});

describe('docs/configuration.md: hot reload', () => {
  it('is the hot-reload fixture word for word, with the package import', () => {
    const guide = readFileSync('docs/configuration.md', 'utf8');
    const block = guide
      .split('## Config files and hot reload')[1]!
      .split('```ts\n')[1]!
      .split('```')[0]!;
    const fixture = readFileSync('test/fixtures/hot-reload.ts', 'utf8');
    expect(block.trim()).toBe(
      fixture.replace("from '../../lib/nest/index.js';", "from '@nresilience/nestjs';").trim(),
    );
  });
});
