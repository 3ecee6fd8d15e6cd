/**
 * Turns the JSON Schemas of an OpenAPI document into flat field lists
 * (`user.id`, `tags[]`) for the reference page. Only what a reader needs:
 * type, whether required, constraints and the description.
 */
export type JsonSchema = Record<string, any>;

export interface FieldRow {
  name: string;
  type: string;
  required: boolean;
  notes: string[];
}

const MAX_DEPTH = 5;

export function schemaResolver(components: Record<string, JsonSchema> | undefined) {
  return function resolve(schema: JsonSchema | undefined, seen = 0): JsonSchema | undefined {
    if (!schema || typeof schema.$ref !== 'string' || seen > 10) return schema;
    const name = schema.$ref.replace(/^#\/components\/schemas\//, '');
    return resolve(components?.[name], seen + 1);
  };
}

type Resolve = ReturnType<typeof schemaResolver>;

function variants(schema: JsonSchema): JsonSchema[] | null {
  return Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : null;
}

/** A short human type: `string`, `integer | null`, `"a" | "b"`, `array of string`. */
export function typeName(schema: JsonSchema | undefined, resolve: Resolve, depth = 0): string {
  const s = resolve(schema);
  if (!s || depth > MAX_DEPTH) return 'any';
  if ('const' in s) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return s.enum.map((v: unknown) => JSON.stringify(v)).join(' | ');
  const options = variants(s);
  if (options) return [...new Set(options.map((o) => typeName(o, resolve, depth + 1)))].join(' | ');
  const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (types.length === 0) return Object.keys(s).some((k) => k === 'properties') ? 'object' : 'any';
  return types.map((t) => (t === 'array' ? `array of ${typeName(s.items, resolve, depth + 1)}` : t)).join(' | ');
}

function notesOf(s: JsonSchema): string[] {
  const notes: string[] = [];
  if (s.format) notes.push(`format ${s.format}`);
  if (s.minLength !== undefined || s.maxLength !== undefined) notes.push(`length ${s.minLength ?? 0}–${s.maxLength ?? '∞'}`);
  if (s.minimum !== undefined || s.maximum !== undefined) notes.push(`range ${s.minimum ?? '−∞'}–${s.maximum ?? '∞'}`);
  if (s.minItems !== undefined || s.maxItems !== undefined) notes.push(`${s.minItems ?? 0}–${s.maxItems ?? '∞'} items`);
  if (s.uniqueItems) notes.push('unique items');
  if (s.default !== undefined) notes.push(`default ${JSON.stringify(s.default)}`);
  if (s.description) notes.push(String(s.description));
  return notes;
}

/** The object schema to descend into: the object itself, an array's items, or the object branch of a nullable union. */
function objectInside(schema: JsonSchema | undefined, resolve: Resolve): { schema: JsonSchema; suffix: string } | null {
  const s = resolve(schema);
  if (!s) return null;
  if (s.properties) return { schema: s, suffix: '' };
  const items = resolve(s.items);
  if (items?.properties) return { schema: items, suffix: '[]' };
  const options = variants(s);
  if (options) {
    const objects = options.map((o) => objectInside(o, resolve)).filter((o) => o !== null);
    if (objects.length === 1) return objects[0]!;
  }
  return null;
}

/** The fields of an object schema, nested objects flattened with dotted names. Empty when the schema is not an object. */
export function fieldRows(schema: JsonSchema | undefined, resolve: Resolve, prefix = '', depth = 0): FieldRow[] {
  const inside = objectInside(schema, resolve);
  if (!inside || depth > MAX_DEPTH) return [];
  const required = new Set<string>(inside.schema.required ?? []);
  const rows: FieldRow[] = [];
  if (depth === 0 && inside.suffix) prefix = `${prefix}${inside.suffix}.`;
  for (const [name, raw] of Object.entries(inside.schema.properties as Record<string, JsonSchema>)) {
    const prop = resolve(raw) ?? {};
    const full = `${prefix}${name}`;
    rows.push({ name: full, type: typeName(prop, resolve), required: required.has(name), notes: notesOf(prop) });
    const nested = objectInside(prop, resolve);
    if (nested) rows.push(...fieldRows(prop, resolve, `${full}${nested.suffix}.`, depth + 1));
  }
  return rows;
}
