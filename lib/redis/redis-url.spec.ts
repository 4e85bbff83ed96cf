import { describe, expect, it } from '@jest/globals';
import { redisOptionProblems } from '../nest/module-rate-store.js';
import { connectRedisRateStore } from './redis-connection.js';
import { isRedisUrl } from './redis-url.js';

const RULE =
  'must be a redis:// or rediss:// URL with a host: redis://[[user]:password@]host[:port][/db], db an integer';

describe('Redis URLs (connectRedisRateStore and the module redis option)', () => {
  it.each([
    'redis://127.0.0.1:6379',
    'redis://cache',
    'redis://cache/',
    'redis://:secret@cache:6380/3',
    'rediss://user:secret@cache.example.com:6380/0',
  ])('accepts %s', (url) => {
    expect(isRedisUrl(url)).toBe(true);
  });

  it.each([
    ['not a url'],
    ['http://cache:6379'],
    ['cache:6379'],
    ['redis://'],
    ['redis://cache/db9'],
    ['redis://cache/1/2'],
    [''],
  ])('refuses %j', (url) => {
    expect(isRedisUrl(url)).toBe(false);
  });

  it('connectRedisRateStore rejects a URL ioredis would misread, naming url, the value and the rule, without connecting', async () => {
    await expect(connectRedisRateStore('http://cache:6379')).rejects.toThrow(
      new TypeError(`url: http://cache:6379 is invalid: ${RULE}`),
    );
    await expect(connectRedisRateStore('not a url')).rejects.toThrow(
      new TypeError(`url: not a url is invalid: ${RULE}`),
    );
  });

  it('the module option names redis.url', () => {
    const problems = redisOptionProblems({ url: 'redis://cache/db9' });
    expect(problems.map((problem) => problem.message)).toEqual([
      `redis.url: "redis://cache/db9" is invalid: ${RULE}`,
    ]);
  });
});
