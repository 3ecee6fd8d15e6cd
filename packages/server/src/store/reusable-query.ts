import type { CompiledQuery, Compilable } from 'kysely';

/**
 * Builds a query once and replays its SQL with new values. Building and
 * compiling a Kysely query costs more than SQLite takes to run these
 * statements, and ingest runs them for every snapshot. The query is built
 * with a marker per named value; each execution puts the real values at the
 * markers' positions, whatever order the dialect's SQL has them in.
 */
export function reusable<K extends string, R>(names: readonly K[], build: (values: Record<K, never>) => Compilable<R>) {
  const marker = (name: string) => `\u0000kiln:${name}`;
  const compiled = build(Object.fromEntries(names.map((n) => [n, marker(n)])) as Record<K, never>).compile();
  const slots = compiled.parameters.map((p) => names.find((n) => p === marker(n)) ?? null);
  return (values: Record<K, unknown>): CompiledQuery<R> => ({
    ...compiled,
    parameters: compiled.parameters.map((p, i) => (slots[i] === null ? p : values[slots[i]!])),
  });
}
