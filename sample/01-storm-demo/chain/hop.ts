/**
 * One service of act 2's chain (frontend, backend, data service), a child process of its own so a
 * busy hop does not take the CPU of the others: a Nest app whose `POST /work` calls the next hop's
 * `POST /work` (the last hop calls the database) and answers 200 once that call succeeded.
 * - `defaults`: `ResilienceModule` (one policy, `attempts` per call, every other option the
 *   library's default), `ResilientHttpModule` for the outbound call, `ResilienceContextModule` for
 *   the inbound context (the nested-retry marker and the caller's remaining time), the exception filter.
 * - `naive`: the same app calling through {@link naiveFetch}, no library.
 * It counts the requests it receives per phase, and those that arrived marked as nested retries.
 */
import 'reflect-metadata';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  BadGatewayException,
  Controller,
  type DynamicModule,
  HttpCode,
  HttpException,
  Inject,
  Module,
  Post,
  Req,
  Res,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ambient, ResilienceContextModule, ResilienceModule } from '@nresilience/nestjs';
import {
  type FetchFunction,
  ResilientHttpModule,
  getResilientFetchToken,
  markRepeatable,
} from '@nresilience/nestjs/http';
import { callerSignal } from '../caller-signal.js';
import { MachineMeter } from '../machine.js';
import { naiveFetch } from './naive-fetch.js';
import {
  type FromChild,
  type HopCounts,
  type HopSpec,
  PHASE_HEADER,
  type ToChild,
  bump,
  phaseOf,
} from './protocol.js';

const SPEC = Symbol('HopSpec');
const DOWNSTREAM = Symbol('DownstreamFetch');
const COUNTS = Symbol('HopCounts');
// nginx's "client closed request", as in act 1: keeps a cancelled call out of the error log.
const CLIENT_CLOSED_REQUEST = 499;

@Controller('work')
class WorkController {
  constructor(
    @Inject(SPEC) private readonly spec: HopSpec,
    @Inject(DOWNSTREAM) private readonly downstream: FetchFunction,
    @Inject(COUNTS) private readonly counts: HopCounts,
  ) {}

  @Post()
  @HttpCode(200)
  async work(
    @Req() request: IncomingMessage,
    @Res({ passthrough: true }) response: ServerResponse,
  ): Promise<{ ok: true }> {
    const phase = phaseOf(request.headers[PHASE_HEADER]);
    bump(this.counts.received, phase);
    if (Ambient.current()?.nestedRetry === true) bump(this.counts.nested, phase);
    const signal = callerSignal(request, response);
    let answer: Response;
    try {
      answer = await this.downstream(
        `${this.spec.downstream}/work`,
        markRepeatable({
          method: 'POST',
          headers: { [PHASE_HEADER]: String(phase), 'content-length': '0' },
          signal,
        }),
      );
    } catch (error) {
      if (signal.aborted)
        throw new HttpException('the caller went away', CLIENT_CLOSED_REQUEST, { cause: error });
      // The library's refusals and deadlines reach its exception filter as they are (503, 504).
      if (error instanceof Error && error.name === 'TypeError')
        throw new BadGatewayException(`${this.spec.name}: the next hop is unreachable`, {
          cause: error,
        });
      throw error;
    }
    await answer.body?.cancel();
    if (answer.status >= 400)
      throw new BadGatewayException(`${this.spec.name}: the next hop answered ${answer.status}`);
    return { ok: true };
  }
}

@Module({})
class HopModule {
  static for(spec: HopSpec, counts: HopCounts): DynamicModule {
    const common = [
      { provide: SPEC, useValue: spec },
      { provide: COUNTS, useValue: counts },
    ];
    if (spec.mode === 'naive') {
      const fetchNaively: FetchFunction = (input, init) =>
        naiveFetch(String(input), init ?? {}, spec.attempts);
      return {
        module: HopModule,
        controllers: [WorkController],
        providers: [...common, { provide: DOWNSTREAM, useValue: fetchNaively }],
      };
    }
    return {
      module: HopModule,
      imports: [
        ResilienceModule.forRoot({
          policies: { downstream: { attempts: spec.attempts } },
          exceptionFilter: true,
          telemetry: false,
          logging: 'off',
        }),
        ResilientHttpModule.register({ policy: 'downstream' }),
        ResilienceContextModule.forRoot(),
      ],
      controllers: [WorkController],
      providers: [
        ...common,
        { provide: DOWNSTREAM, useExisting: getResilientFetchToken('downstream') },
      ],
    };
  }
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2]!) as HopSpec;
  const counts: HopCounts = { received: [], nested: [] };
  const meter = new MachineMeter();
  const app = await NestFactory.create(HopModule.for(spec, counts), {
    logger: ['error', 'warn'],
    abortOnError: false,
  });
  const server = app.getHttpServer() as import('node:http').Server;
  server.keepAliveTimeout = 30_000;
  await app.listen(0, '127.0.0.1');
  const send = (message: FromChild): void => void process.send!(message);
  process.on('message', (message: ToChild) => {
    if (message.kind === 'start') meter.start();
    else if (message.kind === 'counts') send({ kind: 'counts', counts, machine: meter.stop() });
  });
  process.on('disconnect', () => process.exit(0));
  send({ kind: 'listening', port: (server.address() as { port: number }).port });
}

main().catch((error: unknown) => {
  console.error('chain hop failed to start:', error);
  process.exit(1);
});
