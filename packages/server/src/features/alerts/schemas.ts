import { Type, type TSchema } from '@sinclair/typebox';
import { NullableTimestamp, Timestamp } from '../../http/schemas.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/** One of fixed strings; `enum` rather than a union of literals, so a bad value gets one clear error. */
const OneOf = <T extends string>(values: readonly T[], description?: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...(description && { description }) });

export const SEVERITIES = ['critical', 'warning', 'info'] as const;
export const STATUSES = ['active', 'resolved'] as const;
export const RESOLVED_BY = ['condition', 'manual', 'mute', 'ttl'] as const;
export const DEFAULT_PER_PAGE = 50;

export const Alert = Type.Object({
  id: Type.String(),
  server_id: Type.String(),
  alert_type: Type.String(),
  severity: OneOf(SEVERITIES),
  status: OneOf(STATUSES),
  kind: OneOf(['state', 'event'] as const),
  subject: Nullable(Type.String({ description: 'Mount, device, interface, pool, sensor or GPU index; null for host-wide alerts' })),
  title: Type.String(),
  message: Type.String(),
  evidence: Type.Record(Type.String(), Type.Unknown()),
  recommendation: Type.String(),
  occurrences: Type.Integer({ description: 'Event alerts: occurrences stacked onto this card; state alerts: 1' }),
  first_seen_at: Timestamp,
  last_seen_at: Timestamp,
  resolved_at: NullableTimestamp,
  resolved_by: Nullable(OneOf(RESOLVED_BY)),
  acknowledged: Type.Boolean(),
  acknowledged_at: NullableTimestamp,
});

export const ListAlertsQuery = Type.Object({
  status: Type.Optional(OneOf(['active', 'resolved', 'all'] as const, 'Default all (resolved history included)')),
  severity: Type.Optional(OneOf(SEVERITIES)),
  from: Type.Optional(Type.String({ maxLength: 100, description: 'ISO 8601 with a zone (or a date, midnight UTC): alerts still active at or after this instant' })),
  to: Type.Optional(Type.String({ maxLength: 100, description: 'ISO 8601 with a zone: alerts raised before this instant' })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: DEFAULT_PER_PAGE })),
}, { additionalProperties: false });

export const ListAlertsResponse = Type.Object({
  alerts: Type.Array(Alert),
  page: Type.Integer(),
  per_page: Type.Integer(),
  total: Type.Integer({ description: 'Alerts matching the filters, over all pages' }),
});

export const AlertActionResponse = Type.Object({ success: Type.Literal(true), alert: Alert });

export const MuteBody = Type.Object({
  alert_type: Type.String({ maxLength: 100, description: 'An alert type of GET /alert-rules' }),
}, { additionalProperties: false });

export const MutesResponse = Type.Object({
  server_id: Type.String(),
  muted_rules: Type.Array(Type.String(), { description: 'Muted alert types, alphabetical' }),
});

const Levels = Type.Object({
  info: Type.Optional(Type.Number()),
  warning: Type.Optional(Type.Number()),
  critical: Type.Optional(Type.Number()),
  unit: Type.Optional(Type.String()),
});

export const AlertRulesResponse = Type.Object({
  rules: Type.Array(Type.Object({
    alert_type: Type.String(),
    kind: OneOf(['state', 'event'] as const),
    category: Type.String(),
    description: Type.String(),
    thresholds: Nullable(Levels),
    silenced_by_profiles: Type.Array(Type.String()),
  })),
});

export const HostProfilesResponse = Type.Object({
  profiles: Type.Array(Type.Object({
    id: Type.String(),
    label: Type.String(),
    silenced_alert_types: Type.Array(Type.String()),
  })),
});
