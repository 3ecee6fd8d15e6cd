import { Ajv, type ErrorObject, type Options } from 'ajv';
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

export const buildValidator = (): FastifySchemaCompiler<any> => ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  return ajv.compile(schema as object) as any;
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
