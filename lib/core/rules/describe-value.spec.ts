import { PolicyConfigError } from '../errors.js';
import { describeValue } from './describe-value.js';

describe('describeValue (the value in every config error)', () => {
  it('tells 3n from 3 and "3" from 3', () => {
    expect(describeValue(3n)).toBe('3n');
    expect(describeValue(3)).toBe('3');
    expect(describeValue('3')).toBe('"3"');
    expect(describeValue({ fraction: 3n })).toBe('{"fraction":3n}');
  });

  it('keeps apart what JSON merges: NaN, -0, undefined, null', () => {
    expect(describeValue(NaN)).toBe('NaN');
    expect(describeValue(-0)).toBe('-0');
    expect(describeValue([NaN, undefined, null])).toBe('[NaN,undefined,null]');
  });

  it('names objects that are not plain by what they are', () => {
    expect(describeValue(new Map([['attempts', 3]]))).toBe('Map(1)');
    expect(describeValue(new Set())).toBe('Set(0)');
    expect(describeValue(new Date(0))).toBe('Date(1970-01-01T00:00:00.000Z)');
    expect(describeValue(new Date(NaN))).toBe('Date(invalid)');
    expect(describeValue(/x/g)).toBe('RegExp(/x/g)');
    class Settings {
      attempts = 2;
    }
    expect(describeValue(new Settings())).toBe('Settings {"attempts":2}');
    expect(describeValue(Object.create({ attempts: 9 }))).toBe('[inheriting attempts] {}');
  });

  it('never throws: null-prototype objects, symbols, cycles, throwing getters, hostile proxies', () => {
    const bare = Object.assign(Object.create(null), { attempts: 2 });
    expect(describeValue(bare)).toBe('[null prototype] {"attempts":2}');
    expect(describeValue(Symbol('s'))).toBe('Symbol(s)');
    expect(describeValue({ key: Symbol.iterator })).toBe('{"key":Symbol(Symbol.iterator)}');
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(describeValue(cyclic)).toBe('{"a":1,"self":[Circular]}');
    const getter = Object.defineProperty({}, 'attempts', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    expect(describeValue(getter)).toBe('{"attempts":[getter threw]}');
    const hostile = new Proxy(
      {},
      {
        getPrototypeOf() {
          throw new Error('trap');
        },
      },
    );
    expect(describeValue(hostile)).toBe('[a value that cannot be shown]');
  });

  it('shows functions, depth and length within bounds', () => {
    expect(describeValue(() => 1)).toBe('a function');
    expect(describeValue({ now: () => 0 })).toBe('{"now":[function]}');
    expect(describeValue({ a: { b: { c: { d: 1 } } } })).toBe('{"a":{"b":{"c":{…}}}}');
    expect(describeValue('x'.repeat(500))).toHaveLength(200);
  });

  it('is what a PolicyConfigError message shows', () => {
    expect(new PolicyConfigError('budget.fraction', 1n, 'must be a number in [0, 1]').message).toBe(
      'budget.fraction: 1n is invalid: must be a number in [0, 1]',
    );
  });
});
