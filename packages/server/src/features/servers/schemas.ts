import { Type, type TSchema } from '@sinclair/typebox';
import { NullableTimestamp, PLAIN_TEXT, Timestamp } from '../../http/schemas.js';
import { INTERVAL_MAX_SECONDS, INTERVAL_MIN_SECONDS } from '../alerts/overrides.js';
import { NAME_MAX_CHARS, PROFILES, TAGS_MAX, TAG_MAX_CHARS } from './rules.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

// Lengths, trimming and control characters are checked by rules.ts (exact
// messages, characters counted after trimming); the schema only bounds the
// size so a huge string is refused before any work.
const NameInput = Type.String({ maxLength: 1000, description: `1-${NAME_MAX_CHARS} characters after trimming; no control characters` });
const TagsInput = Type.Array(Type.String({ maxLength: 1000, description: `1-${TAG_MAX_CHARS} characters after trimming` }), {
  maxItems: TAGS_MAX,
  description: `At most ${TAGS_MAX}; duplicates are removed, keeping the first`,
});
// Any string reaches the service, so an unknown profile gets the spec's exact message.
const ProfileInput = Type.Union([Type.String(), Type.Null()], { description: `null (General) or one of: ${PROFILES.join(', ')}` });

// additionalProperties false with Ajv's removeAdditional: unknown fields are dropped, not rejected.
export const RegisterServerBody = Type.Object({
  name: Type.Optional(NameInput),
  hostname: Type.Optional(Type.String({ maxLength: 1000, description: 'RFC 1035; defaults to the name when that is a hostname; cannot be changed later' })),
  tags: Type.Optional(TagsInput),
  profile: Type.Optional(ProfileInput),
}, { additionalProperties: false });

export const UpdateServerBody = Type.Object({
  name: Type.Optional(NameInput),
  tags: Type.Optional(TagsInput),
  profile: Type.Optional(ProfileInput),
  // Declared so it is not silently dropped: sending it is an error the client must see.
  hostname: Type.Optional(Type.Unknown({ description: 'Not updatable: any value is 400 validation_failed' })),
}, { additionalProperties: false });

export const ListServersQuery = Type.Object({
  tag: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200, pattern: PLAIN_TEXT }), {
    maxItems: TAGS_MAX,
    description: 'Repeatable; a server must carry every given tag',
  })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 100 })),
  cursor: Type.Optional(Type.String({ maxLength: 1000, description: 'next_cursor of the previous page' })),
}, { additionalProperties: false });

export const ConfirmQuery = Type.Object({
  // A string, not a boolean: anything but `true` is a missing confirmation (400 confirmation_required), not a type error.
  confirm: Type.Optional(Type.String({ description: 'Must be `true`' })),
}, { additionalProperties: false });

export const ServerListItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  hostname: Nullable(Type.String()),
  ip: Nullable(Type.String()),
  os_type: Nullable(Type.String()),
  os_version: Nullable(Type.String()),
  status: Type.Union([Type.Literal('active'), Type.Literal('suspended')]),
  suspended_at: NullableTimestamp,
  suspended_reason: Nullable(Type.String()),
  last_seen_at: NullableTimestamp,
  collector_version: Nullable(Type.String()),
  active_alerts: Type.Integer(),
  disk_health_rollup: Type.Union(['healthy', 'declining', 'failing', 'broken'].map((s) => Type.Literal(s))),
  created_at: Timestamp,
  tags: Type.Array(Type.String()),
  dmi_vendor: Nullable(Type.String()),
  dmi_product: Nullable(Type.String()),
  ipmi_sensors_count: Nullable(Type.Integer()),
  profile: Nullable(Type.Union(PROFILES.map((p) => Type.Literal(p)))),
});

export const ConfigOverrides = Type.Object({
  thresholds: Type.Optional(Type.Record(Type.String(), Type.Object({
    warning: Type.Optional(Type.Number()),
    critical: Type.Optional(Type.Number()),
  }))),
  interval_seconds: Type.Optional(Type.Number()),
});

// The level objects keep unknown keys (no additionalProperties: false), so `info` or a typo is
// refused by the catalog check with its exact field instead of being dropped without a word.
export const ConfigOverridesBody = Type.Object({
  thresholds: Type.Optional(Type.Record(
    Type.String({ maxLength: 100 }),
    Type.Object({
      warning: Type.Optional(Type.Number()),
      critical: Type.Optional(Type.Number()),
    }, { maxProperties: 10 }),
    { maxProperties: 100, description: 'Per alert type (GET /alert-rules), replacement warning and critical levels; only levels the rule has' },
  )),
  interval_seconds: Type.Optional(Type.Integer({
    minimum: INTERVAL_MIN_SECONDS,
    maximum: INTERVAL_MAX_SECONDS,
    description: 'The agent\'s push interval: offline status and server_unreachable come after 3 intervals without a snapshot (default 300)',
  })),
}, { additionalProperties: false, description: 'Replaces config_overrides as a whole' });

export const HardwareSummary = Type.Object({
  cpu_cores: Nullable(Type.Integer({ description: 'Length of cpu.cores' })),
  ram_mb: Nullable(Type.Number({ description: 'memory.total_mb' })),
  os: Nullable(Type.String({ description: 'system.os' })),
  kernel: Nullable(Type.String({ description: 'system.kernel' })),
  architecture: Nullable(Type.String({ description: 'system.architecture (or system.arch)' })),
}, { description: 'From the latest snapshot; null until the agent has reported' });

export const Server = Type.Composite([
  ServerListItem,
  Type.Object({ config_overrides: ConfigOverrides, free_analysis_used: Type.Boolean(), hardware: Nullable(HardwareSummary) }),
]);

export const TrashedServer = Type.Composite([ServerListItem, Type.Object({ trashed_at: Timestamp })]);

export const RegisterServerResponse = Type.Object({
  success: Type.Literal(true),
  server: Type.Object({
    id: Type.String(),
    name: Type.String(),
    hostname: Nullable(Type.String()),
    tags: Type.Array(Type.String()),
    api_key: Type.String({ description: 'The collector key (`col_…`); shown only here' }),
  }),
  ingest_url: Type.String(),
  message: Type.String(),
});

export const ListServersResponse = Type.Object({
  servers: Type.Array(ServerListItem),
  next_cursor: Nullable(Type.String()),
});

export const ListTrashedResponse = Type.Object({ servers: Type.Array(TrashedServer) });

export const TrashResponse = Type.Object({
  success: Type.Literal(true),
  id: Type.String(),
  trashed_at: Timestamp,
  permanent: Type.Literal(false),
  restorable: Type.Literal(true),
});

export const RestoreResponse = Type.Object({ success: Type.Literal(true), server: Server });

export const RestoreAllResponse = Type.Object({
  success: Type.Literal(true),
  restored: Type.Integer(),
  server_ids: Type.Array(Type.String()),
});

export const PurgeResponse = Type.Object({
  success: Type.Literal(true),
  id: Type.String(),
  purged: Type.Literal(true),
  permanent: Type.Literal(true),
});

export const RotateKeyResponse = Type.Object({
  success: Type.Literal(true),
  server: Type.Object({ id: Type.String() }),
  collector_key: Type.String({ description: 'The new collector key; shown only here' }),
  rotated_at: Timestamp,
  message: Type.String(),
});
