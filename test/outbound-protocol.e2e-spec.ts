import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { marksNestedRetry } from '../lib/outbound/stamp.js';
import { sources } from './support/sources.js';

const root = process.cwd();

describe('the outbound protocol (lib/outbound)', () => {
  it('decides the nested-retry marker by one rule, with the single-shot scope a transport read', () => {
    expect(marksNestedRetry(3, true, false)).toBe(true);
    expect(marksNestedRetry(3, false, true)).toBe(false);
    expect(marksNestedRetry(1, true, false)).toBe(false);
    // One attempt in a single-shot scope: the layer above retries the call.
    expect(marksNestedRetry(1, true, true)).toBe(true);
    // Without the scope given, the ambient context decides (none here).
    expect(marksNestedRetry(1, true)).toBe(false);
  });

  it('is the only place the marker rule is written (fetch, axios and gRPC ask it)', () => {
    const rule = /attempts\s*>\s*1\s*\|\|/;
    const writers = ['http', 'grpc', 'outbound']
      .flatMap((folder) => sources(join(root, 'lib', folder)))
      .filter((file) => rule.test(readFileSync(file, 'utf8')))
      .map((file) => relative(root, file));
    expect(writers).toEqual([join('lib', 'outbound', 'stamp.ts')]);
  });

  it('is followed by every client through OutboundCall: no adapter stamps or decides the marker itself', () => {
    const rule = /\b(stampAttempt|marksNestedRetry|ambientStamp)\(/;
    const callers = ['http', 'grpc', 'outbound']
      .flatMap((folder) => sources(join(root, 'lib', folder)))
      .filter((file) => rule.test(readFileSync(file, 'utf8')))
      .map((file) => relative(root, file))
      .sort();
    expect(callers).toEqual([
      join('lib', 'outbound', 'outbound-call.ts'),
      join('lib', 'outbound', 'stamp.ts'),
    ]);
  });
});
