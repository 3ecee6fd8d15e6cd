import { Type, type TSchema } from '@sinclair/typebox';
import { NullableTimestamp, Timestamp } from '../../http/schemas.js';
import { HISTORY_METRIC_NAMES, MAX_BUCKETS } from './history.js';
import { RESOLUTIONS } from './rollups.js';
import { DEFAULT_INTERVAL_SECONDS, MISSED_INTERVALS_OFFLINE } from './status.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

// metric and resolution are plain strings here so the service answers an
// unknown value with the list of allowed ones; the descriptions document them.
export const HistoryQuery = Type.Object({
  metric: Type.String({ maxLength: 100, description: `One of: ${HISTORY_METRIC_NAMES.join(', ')}` }),
  from: Type.Optional(Type.String({
    maxLength: 100,
    description: 'ISO 8601 date-time with a zone (or a date, meaning midnight UTC); default: 1 hour before `to`. Buckets whose start lies in [from, to) are returned.',
  })),
  to: Type.Optional(Type.String({ maxLength: 100, description: 'ISO 8601 date-time with a zone; default: now' })),
  resolution: Type.Optional(Type.String({
    maxLength: 100,
    description: `One of: ${RESOLUTIONS.join(', ')}. When omitted: range ≤ 6 h → 1m, ≤ 2 d → 5m, ≤ 60 d → 1h, else 1d. At most ${MAX_BUCKETS} buckets per request.`,
  })),
}, { additionalProperties: false });

const Point = Type.Tuple([Timestamp, Type.Number(), Type.Number(), Type.Number()], {
  description: '[bucket start, avg, min, max], values rounded to 2 decimals',
});

export const HistoryResponse = Type.Object({
  server_id: Type.String(),
  metric: Type.Union(HISTORY_METRIC_NAMES.map((m) => Type.Literal(m))),
  resolution: Type.Union(RESOLUTIONS.map((r) => Type.Literal(r))),
  from: Timestamp,
  to: Timestamp,
  series: Type.Array(Type.Object({
    name: Type.String({ description: 'cpu_percent, ram_percent, swap_used_mb, disk_max_percent, disk:<mount>, rx_mbps, tx_mbps or cpu_temp_c' }),
    unit: Type.String({ description: '%, MB, Mbit/s or °C' }),
    points: Type.Array(Point, { description: 'Oldest first; buckets without data are omitted' }),
  })),
});

const Value = (description: string) => Nullable(Type.Number({ description: `${description}; null when the latest snapshot did not report it` }));

export const HealthResponse = Type.Object({
  server_id: Type.String(),
  status: Type.Union(['pending', 'healthy', 'warning', 'critical', 'offline'].map((s) => Type.Literal(s)), {
    description: `pending before the first snapshot; offline after ${MISSED_INTERVALS_OFFLINE} push intervals without one (config_overrides.interval_seconds, default ${DEFAULT_INTERVAL_SECONDS} s)`,
  }),
  last_seen: NullableTimestamp,
  current: Type.Object({
    cpu_percent: Value('CPU busy, %'),
    ram_percent: Value('RAM in use, %'),
    swap_used_mb: Value('Swap in use, MB'),
    disk_max_percent: Value('Fullest mount, %'),
    network_rx_mbps: Value('Received over all interfaces but lo, Mbit/s'),
    network_tx_mbps: Value('Sent over all interfaces but lo, Mbit/s'),
    cpu_temp_c: Value('Hottest CPU reading, °C'),
    active_alerts: Type.Integer(),
  }),
});
