import { readFileSync } from 'node:fs';
import { priceBrownout, provePolicy } from './fixtures/readme-testing-kit.js';

describe('README examples', () => {
  it('the testing-kit example retries once and succeeds', async () => {
    expect(await provePolicy()).toEqual({ value: 'ok', kinds: ['attempt', 'retrying', 'attempt', 'succeeded'], calls: 2 });
  });

  it('the simulator example prices a brownout deterministically', async () => {
    const first = await priceBrownout();
    const second = await priceBrownout();
    expect(first.calls).toBe(6000);
    expect(JSON.stringify(first.toJSON())).toBe(JSON.stringify(second.toJSON()));
    // The figures the README quotes for this example.
    expect([first.availability, first.loadMultiplier.toFixed(2), first.amplification]).toEqual([0.835, '1.04', 1.36]);
    expect(first.toString()).toContain('Availability');
  });
});

describe('README quick start', () => {
  it('is the quick-start fixture word for word, with the package import', () => {
    const readme = readFileSync('README.md', 'utf8');
    const block = readme.split('## Quick start (Nest)')[1]!.split('```ts\n')[1]!.split('```')[0]!;
    const fixture = readFileSync('test/fixtures/quick-start.ts', 'utf8').split('\n').slice(2).join('\n');
    expect(block.trim()).toBe(fixture.replace("from '../../lib/nest/index.js';", "from '@nresilience/nestjs';").trim());
  });
});

describe('README hot reload', () => {
  it('is the hot-reload fixture word for word, with the package import', () => {
    const readme = readFileSync('README.md', 'utf8');
    const block = readme.split('## Config files and hot reload')[1]!.split('```ts\n')[1]!.split('```')[0]!;
    const fixture = readFileSync('test/fixtures/hot-reload.ts', 'utf8');
    expect(block.trim()).toBe(fixture.replace("from '../../lib/nest/index.js';", "from '@nresilience/nestjs';").trim());
  });
});
