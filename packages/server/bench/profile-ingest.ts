// Ingest in-process through app.inject: what one steady-state push costs, and
// (PROFILE_OUT=file.cpuprofile) a CPU profile of just those pushes.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { inProcessIngest } from './in-process.js';

const COUNT = Number(process.env.PROFILE_PUSHES ?? 5000);
/** Pushes in flight at once; above 1 they share group commits as under real load. */
const CONCURRENCY = Number(process.env.PROFILE_CONCURRENCY ?? 1);
const ingest = await inProcessIngest({ count: COUNT, concurrency: CONCURRENCY, logLevel: process.env.PROFILE_LOG_LEVEL ?? 'info' });
// The first push of a server raises the fixture's alerts; the measured pass is
// the steady state that follows, where they are already active.
await ingest.pass();
const session = new Session();
const profileTo = process.env.PROFILE_OUT;
if (profileTo) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}
const started = process.hrtime.bigint();
const cpuBefore = process.cpuUsage();
await ingest.pass();
const us = Number(process.hrtime.bigint() - started) / 1000 / COUNT;
// CPU time is steadier than wall time on a shared machine.
const cpu = process.cpuUsage(cpuBefore);
if (profileTo) {
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(profileTo, JSON.stringify(profile));
}
console.log(`${COUNT} pushes, ${us.toFixed(0)} µs each, ${((cpu.user + cpu.system) / COUNT).toFixed(0)} µs CPU `
  + `(user ${(cpu.user / COUNT).toFixed(0)}, system ${(cpu.system / COUNT).toFixed(0)}) (in-process, ${CONCURRENCY} in flight)`);
await ingest.close();
