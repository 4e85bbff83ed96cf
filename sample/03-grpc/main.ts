/**
 * gRPC sample: a Nest app calls a real gRPC Inventory service that fails half its calls
 * (UNAVAILABLE, independently), through `createResilienceInterceptor` on Nest's gRPC client, with
 * the same 3-attempt policy with and without the retry budget, at a steady rate. It prints the
 * attempts that reached the service per logical call, and the share of calls that succeeded.
 *
 *   npm run sample:grpc
 *   node dist-sample/sample/03-grpc/main.js --rate 400 --seconds 5 --failure 0.5 --seed 7
 */
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { NestFactory } from '@nestjs/core';
import { FlakyInventory } from './flaky-inventory.js';
import { POLICIES, Reservations, ReservationsModule } from './reservations.module.js';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '400' },
    seconds: { type: 'string', default: '5' },
    failure: { type: 'string', default: '0.5' },
    seed: { type: 'string', default: '7' },
    json: { type: 'boolean', default: false },
  },
});
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const failure = Number(values.failure);
for (const [name, value, ok] of [
  ['--rate', rate, rate > 0],
  ['--seconds', seconds, seconds > 0],
  ['--failure', failure, failure >= 0 && failure <= 1],
] as const) {
  if (!ok || !Number.isFinite(value)) {
    console.error(`${name}: ${String(value)} is invalid (rate and seconds > 0, failure in [0, 1])`);
    process.exit(2);
  }
}

interface Row {
  policy: string;
  calls: number;
  attempts: number;
  attemptsPerCall: number;
  retriesPerCall: number;
  succeeded: number;
}

/** Offers `rate` calls per second for `seconds` under `policy`, then waits for every call to settle. */
async function drive(
  reservations: Reservations,
  inventory: FlakyInventory,
  policy: string,
): Promise<Row> {
  const before = inventory.received;
  const pending: Promise<boolean>[] = [];
  const total = Math.round(rate * seconds);
  const started = performance.now();
  while (pending.length < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate) + 1);
    while (pending.length < due)
      pending.push(reservations.reserve(policy, `sku-${pending.length}`));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const outcomes = await Promise.all(pending);
  const attempts = inventory.received - before;
  return {
    policy,
    calls: total,
    attempts,
    attemptsPerCall: attempts / total,
    retriesPerCall: (attempts - total) / total,
    succeeded: outcomes.filter(Boolean).length / total,
  };
}

const inventory = await FlakyInventory.start(failure, Number(values.seed));
const app = await NestFactory.createApplicationContext(
  ReservationsModule.forRoot(inventory.address),
  { logger: ['error', 'warn'] },
);
const reservations = app.get(Reservations);
const rows = [
  await drive(reservations, inventory, POLICIES.withoutBudget),
  await drive(reservations, inventory, POLICIES.withBudget),
];
await app.close();
inventory.close();

const [without, withBudget] = rows as [Row, Row];
const cut =
  withBudget.retriesPerCall > 0 ? without.retriesPerCall / withBudget.retriesPerCall : Infinity;
if (values.json) {
  console.log(JSON.stringify({ rate, seconds, failure, rows, retryCut: cut }));
} else {
  console.log(
    `Inventory failing ${Math.round(failure * 100)} % of calls; ${rate} calls/s for ${seconds} s per policy; 3 attempts each.`,
  );
  console.log('policy              calls  attempts  attempts/call  retries/call  succeeded');
  for (const row of rows) {
    console.log(
      `${row.policy.padEnd(18)} ${String(row.calls).padStart(6)} ${String(row.attempts).padStart(9)} ${row.attemptsPerCall.toFixed(3).padStart(14)} ${row.retriesPerCall.toFixed(3).padStart(13)} ${`${(row.succeeded * 100).toFixed(1)} %`.padStart(10)}`,
    );
  }
  console.log(`The retry budget cut retries per call ${cut.toFixed(1)}x.`);
}
