// The cost of the alert rules per snapshot: evaluateRules + rememberSnapshot,
// the pure work ingest adds for alerts, on the large-host and the real-agent
// fixture. Rows for bench/run.ts's table; runnable alone:
//   node --import tsx packages/server/bench/rules.ts
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { SnapshotBody } from '../src/features/ingest/snapshot-schema.js';
import { evaluateRules } from '../src/rules/catalog.js';
import { rememberSnapshot } from '../src/rules/memory.js';
import type { RuleInput } from '../src/rules/types.js';

const ITERATIONS = Number(process.env.BENCH_RULES_ITERATIONS ?? 20_000);
const WARMUP = 2_000;
const fixtures = fileURLToPath(new URL('../test/fixtures/', import.meta.url));

function inputFor(name: string): RuleInput {
  const snapshot = JSON.parse(readFileSync(join(fixtures, name), 'utf8')) as SnapshotBody;
  const now = new Date(Date.parse(snapshot.timestamp) + 500);
  const first: RuleInput = { snapshot, previous: null, thresholds: {}, now: new Date(now.getTime() - 60_000), minAgentVersion: '0.1.0' };
  // A server's usual push: a previous snapshot a minute earlier on the same boot, so the
  // memory-reading rules (reboot, ECC, SEL) do their work too.
  const uptime = snapshot.system.uptime_seconds ?? 60;
  return { ...first, previous: { ...rememberSnapshot(first), uptime_seconds: Math.max(0, uptime - 60) }, now };
}

/** Mean and p99 in microseconds of one evaluateRules + rememberSnapshot. */
function measure(input: RuleInput): { mean: number; p99: number; findings: number } {
  let findings = 0;
  for (let i = 0; i < WARMUP; i++) {
    findings = evaluateRules(input).findings.length;
    rememberSnapshot(input);
  }
  const samples = new Float64Array(ITERATIONS);
  for (let i = 0; i < ITERATIONS; i++) {
    const start = process.hrtime.bigint();
    evaluateRules(input);
    rememberSnapshot(input);
    samples[i] = Number(process.hrtime.bigint() - start) / 1_000;
  }
  samples.sort();
  const mean = samples.reduce((a, b) => a + b, 0) / ITERATIONS;
  return { mean, p99: samples[Math.min(ITERATIONS - 1, Math.floor(ITERATIONS * 0.99))]!, findings };
}

const us = (value: number) => `${value.toFixed(1)} µs`;

export async function benchRules(): Promise<[string, string][]> {
  const rows: [string, string][] = [];
  for (const [label, name] of [['large host', 'snapshot-large-host.json'], ['real agent VM', 'snapshot-vm-debian12.json']] as const) {
    const { mean, p99, findings } = measure(inputFor(name));
    rows.push([`alert rules, ${label} (${findings} findings): mean / p99 per snapshot`, `${us(mean)} / ${us(p99)}`]);
  }
  return rows;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await benchRules();
  console.log(`alert rules: ${ITERATIONS} iterations after ${WARMUP} warm-up, evaluateRules + rememberSnapshot`);
  console.log('\n| measure | result |\n|---|---|');
  for (const [name, value] of rows) console.log(`| ${name} | ${value} |`);
}
