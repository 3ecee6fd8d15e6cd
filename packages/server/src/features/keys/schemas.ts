import { Type } from '@sinclair/typebox';
import { NullableTimestamp, PLAIN_TEXT, Timestamp } from '../../http/schemas.js';
import { PASSWORD_MAX } from '../accounts/schemas.js';

export const SCOPES = ['read', 'write', 'admin'] as const;
export const CAPABILITIES = ['servers:purge'] as const;

export const AccountKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.Union(SCOPES.map((s) => Type.Literal(s)))),
  capabilities: Type.Array(Type.Union(CAPABILITIES.map((c) => Type.Literal(c)))),
  prefix: Type.String({ description: 'The first characters of the secret, to recognise it' }),
  created_at: Timestamp,
  expires_at: NullableTimestamp,
  last_used_at: NullableTimestamp,
});

export const CreateKeyBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, pattern: PLAIN_TEXT }),
  scopes: Type.Array(Type.Union(SCOPES.map((s) => Type.Literal(s))), { minItems: 1, maxItems: 3, uniqueItems: true }),
  capabilities: Type.Optional(Type.Array(Type.Union(CAPABILITIES.map((c) => Type.Literal(c))), { maxItems: 1, uniqueItems: true })),
  expires_at: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
});

export const CreateKeyResponse = Type.Object({
  key: AccountKey,
  secret: Type.String({ description: 'The key itself (`mk_…`); shown only here' }),
});

export const ListKeysResponse = Type.Object({ keys: Type.Array(AccountKey) });

export const VerifyPasswordBody = Type.Object({ password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX }) });
export const VerifyPasswordResponse = Type.Object({ success: Type.Literal(true), verified_until: Timestamp });
