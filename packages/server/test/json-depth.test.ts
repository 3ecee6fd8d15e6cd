import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { nestsDeeperThan } from '../src/http/json-body.js';

/** The nesting depth of a parsed value: what nestsDeeperThan must judge from the text alone. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

test('brackets, quotes and backslashes inside strings do not count as nesting', () => {
  const tricky = ['[[[[', '{{{', '\\"[[[', 'a\\\\', '\\\\\\"{{', '"', '\\u005b'];
  for (const text of tricky) {
    const body = JSON.stringify({ a: text, b: [text, { c: text }] });
    assert.equal(nestsDeeperThan(body, 3), false, body);
    assert.equal(nestsDeeperThan(body, 2), true, body);
  }
});

test('the deepest point decides, wherever it is', () => {
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
  assert.equal(nestsDeeperThan(deep(128), 128), false);
  assert.equal(nestsDeeperThan(deep(129), 128), true);
  // Many openings side by side are not depth.
  assert.equal(nestsDeeperThan(`[${Array.from({ length: 500 }, () => '{}').join(',')}]`, 128), false);
  assert.equal(nestsDeeperThan(`{"a":${deep(100)},"b":${deep(129)}}`, 128), true);
  // Text that never closes a string is left to the parser, which refuses it.
  assert.equal(nestsDeeperThan(`${'['.repeat(200)}"`, 128), true);
  assert.equal(nestsDeeperThan(`["${'['.repeat(200)}`, 128), false);
});

test('agrees with the depth of the parsed value for any JSON', () => {
  fc.assert(fc.property(fc.jsonValue({ maxDepth: 12 }), fc.integer({ min: 0, max: 12 }), (value, max) => {
    const text = JSON.stringify(value);
    assert.equal(nestsDeeperThan(text, max), depthOf(value) > max, text);
  }), { numRuns: 2000 });
});
