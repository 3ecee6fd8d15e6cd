// Runs every test file under test/ with Node's own test runner (TypeScript through tsx).
// Extra arguments are passed on, so `npm test -- --test-name-pattern=servers` works.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

function find(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return find(path);
    return entry.name.endsWith('.test.ts') ? [relative(root, path)] : [];
  });
}

const args = process.argv.slice(2);
const explicit = args.filter((a) => !a.startsWith('--'));
const flags = args.filter((a) => a.startsWith('--'));
const files = explicit.length > 0 ? explicit : find(join(root, 'test')).sort();
const stores = ['sqlite', ...(process.env.TEST_DATABASE_URL ? ['postgres'] : [])];
const only = process.env.TEST_STORES ? ` (TEST_STORES=${process.env.TEST_STORES})` : '';
console.log(`kiln tests: ${files.length} files; stores: ${stores.join(', ')}${only}`);

const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=120000', ...flags, ...files],
  { cwd: root, stdio: 'inherit', env: process.env },
);
process.exit(result.status ?? 1);
