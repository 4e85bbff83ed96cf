/**
 * The Nest route bench's application (issue 15), run in a process of its own: one controller with the
 * same handler twice, `GET /plain` undecorated and `GET /resilient` under `@Resilient('route')`
 * (`Resilience.default` through `ResilienceModule` with its defaults: telemetry on the OpenTelemetry
 * API without an SDK, logging profile `default`). The app logs at `log`/`warn`/`error`, a production
 * setting. Prints `{"port": n}` once listening; exits on SIGTERM.
 */
import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ResilienceModule, Resilient } from '@nresilience/nestjs';

/** What both routes do: a trivial async step, so the route's own cost is what is compared. */
async function work(): Promise<{ ok: boolean }> {
  return { ok: true };
}

@Controller()
class BenchController {
  @Get('plain')
  plain(): Promise<{ ok: boolean }> {
    return work();
  }

  @Get('resilient')
  @Resilient('route')
  resilient(): Promise<{ ok: boolean }> {
    return work();
  }
}

@Module({
  imports: [ResilienceModule.forRoot({ policies: { route: { preset: 'default' } } })],
  controllers: [BenchController],
})
class BenchModule {}

const app = await NestFactory.create(BenchModule, { logger: ['log', 'warn', 'error'] });
app.enableShutdownHooks();
await app.listen(0, '127.0.0.1');
const address = app.getHttpServer().address() as { port: number };
console.log(JSON.stringify({ port: address.port }));
