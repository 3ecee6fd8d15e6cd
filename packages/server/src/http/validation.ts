import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { ErrorDetail } from './errors.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(options: Options): Ajv {
  // strictNumbers: JSON such as 1e999 parses to Infinity, which no field accepts.
  const ajv = new Ajv({ allErrors: false, removeAdditional: true, useDefaults: true, allowUnionTypes: true, strict: false, strictNumbers: true, ...options });
  addFormats(ajv);
  return ajv;
}

/**
 * Query strings, params and headers arrive as text, so they are coerced
 * (`limit=10` is a number). Bodies are JSON and keep their types: a name sent
 * as a number is a client error, not something to guess at.
 */
const bodyAjv = makeAjv({ coerceTypes: false });
const textAjv = makeAjv({ coerceTypes: 'array' });

/** The first field of a coerced query, params or headers object holding Infinity or NaN, or null. */
function nonFiniteField(data: unknown): string | null {
  if (data === null || typeof data !== 'object') return null;
  for (const [name, value] of Object.entries(data)) {
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (values.some((v) => typeof v === 'number' && !Number.isFinite(v))) return name;
  }
  return null;
}

/**
 * Ajv's coercion turns the text `1e999` (or `Infinity`) into Infinity and
 * then skips strictNumbers and the bounds, so `?limit=1e999` would reach a
 * query as Infinity. Coerced text is therefore checked once more: a number
 * that is not finite is refused at its parameter like any other bad value.
 */
function finiteAfterCoercion(validate: ValidateFunction): ValidateFunction {
  const wrapped = ((data: unknown) => {
    const valid = validate(data);
    const field = valid ? nonFiniteField(data) : null;
    wrapped.errors = field === null ? validate.errors : [{
      instancePath: `/${field}`, schemaPath: '#/type', keyword: 'type', params: {}, message: 'must be a finite number',
    }];
    return valid && field === null;
  }) as ValidateFunction;
  return wrapped;
}

export const buildValidator = (): FastifySchemaCompiler<any> => ({ schema, httpPart }) => {
  if (httpPart === 'body') return bodyAjv.compile(schema as object) as any;
  return finiteAfterCoercion(textAjv.compile(schema as object)) as any;
};

/** Turns Ajv errors into the envelope's `details`: one entry per field, JSON pointers for the body. */
export function validationDetails(errors: ErrorObject[], context: string): ErrorDetail[] {
  const byField = new Map<string, ErrorDetail>();
  for (const error of errors) {
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    let pointer = error.instancePath;
    if (error.keyword === 'required') pointer += `/${String(error.params.missingProperty)}`;
    const field = context === 'body' ? pointer || '/' : pointer.replace(/^\//, '') || context;
    if (!byField.has(field)) byField.set(field, { field, issue: error.message ?? 'is invalid' });
  }
  return [...byField.values()];
}
