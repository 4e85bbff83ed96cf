import { RuleTester } from '@typescript-eslint/rule-tester';
import { resilientMethod } from './resilient-method.js';

const tester = new RuleTester();

tester.run('resilient-method', resilientMethod, {
  valid: [
    `@Injectable() class P { @Resilient('payments') async charge(id: string): Promise<string> { return id; } }`,
    `@Injectable() class P { @Resilient('payments') async charge(id: string) { return id; } }`,
    `import { Observable } from 'rxjs'; @Controller('x') class C { @Get() @Resilient('feed') stream(): Observable<number> { return of(1); } }`,
    `@Injectable() class P { @Resilient('payments', { returns: 'observable' }) stream() { return of(1); } }`,
    `@Injectable() class P { @Resilient('p', { returns: 'promise' }) charge() { return fetch(url); } }`,
    `import type { Observable } from 'rxjs'; @Injectable() class P { @Resilient('p', { returns: 'observable' }) s(): Observable<number> { return of(1); } }`,
    {
      code: `@Resolver() class R { @Resilient('p') async q(): Promise<number> { return 1; } }`,
      options: [{ classDecorators: ['Resolver'] }],
    },
    // An abstract base: its concrete @Injectable() subclasses are what Nest creates.
    `abstract class Base { @Resilient('p') async load(): Promise<void> {} }`,
    `@Injectable() class P { charge(): string { return ''; } }`,
    // The iterable mode: an async generator method, or returns: 'iterable'.
    `@Injectable() class P { @Resilient('feed') async *events(): AsyncGenerator<number> { yield 1; } }`,
    `@Injectable() class P { @Resilient('feed', { returns: 'iterable' }) events(): AsyncIterable<number> { return source(); } }`,
  ],
  invalid: [
    {
      code: `@Injectable() class P { @Resilient('feed') events(): AsyncIterable<number> { return source(); } }`,
      errors: [
        {
          messageId: 'notPromise',
          data: { policy: 'feed', method: 'P.events', type: 'AsyncIterable<number>' },
        },
      ],
    },
    {
      code: `@Injectable() class Payments { @Resilient('payments') charge(id: string): string { return id; } }`,
      errors: [
        {
          messageId: 'notPromise',
          data: { policy: 'payments', method: 'Payments.charge', type: 'string' },
        },
      ],
    },
    {
      code: `@Injectable() class Payments { @Resilient('payments') charge(): number[] { return []; } }`,
      errors: [
        {
          messageId: 'notPromise',
          data: { policy: 'payments', method: 'Payments.charge', type: 'number[]' },
        },
      ],
    },
    {
      code: `@Injectable() class Payments { @Resilient('payments') charge() { return 1; } }`,
      errors: [
        { messageId: 'undeclared', data: { policy: 'payments', method: 'Payments.charge' } },
      ],
    },
    {
      code: `import type { Observable } from 'rxjs'; @Controller() class Feed { @Resilient('feed') stream(): Observable<number> { return of(1); } }`,
      errors: [
        { messageId: 'typeOnlyObservable', data: { policy: 'feed', method: 'Feed.stream' } },
      ],
    },
    {
      code: `import { type Observable, of } from 'rxjs'; @Controller() class Feed { @Resilient('feed') stream(): Observable<number> { return of(1); } }`,
      errors: [{ messageId: 'typeOnlyObservable' }],
    },
    {
      // One report per class, however many methods it decorates.
      code: `class Gateway { @Resilient('a') async a(): Promise<void> {} @Resilient('b') async b(): Promise<void> {} }`,
      errors: [
        {
          messageId: 'unmanagedClass',
          data: { policy: 'a', method: 'Gateway.a', class: 'Gateway' },
        },
      ],
    },
    {
      code: `@Resolver() class R { @Resilient('p') async q(): Promise<number> { return 1; } }`,
      errors: [{ messageId: 'unmanagedClass', data: { policy: 'p', method: 'R.q', class: 'R' } }],
    },
  ],
});
