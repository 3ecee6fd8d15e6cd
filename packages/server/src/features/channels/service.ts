import type { Static } from '@sinclair/typebox';
import { signedCursor } from '../../http/cursor.js';
import { ApiError, notFound, validationFailed } from '../../http/errors.js';
import { iso, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { DeliveriesRepo, DeliveryPosition, DeliveryRow } from '../../notify/deliveries-repo.js';
import { testNotification } from '../../notify/message.js';
import type { Senders } from '../../notify/senders/index.js';
import { checkName } from '../servers/rules.js';
import { checkChannelType, checkConfig } from './config-rules.js';
import { maskedConfig } from './masking.js';
import type { ChannelChanges, ChannelRow, ChannelsRepo } from './repo.js';
import { DEFAULT_DELIVERIES_PAGE, type CreateChannelBody, type ListDeliveriesQuery, type UpdateChannelBody } from './schemas.js';
import type { ChannelConfigSealer } from './sealed-config.js';

/** Every channel receives every alert of the account, so their number bounds the fan-out of one alert. */
export const CHANNELS_MAX = 50;

function deliveryView(row: DeliveryRow) {
  return {
    id: row.id,
    attempt: row.attempt,
    event: row.event as 'alert.raised' | 'alert.occurred' | 'alert.resolved' | 'channel.test',
    alert_id: row.alert_id,
    status: row.status,
    http_status: row.http_status,
    smtp_reply: row.smtp_reply,
    error: row.error,
    duration_ms: row.duration_ms,
    created_at: row.created_at,
    next_attempt_at: row.next_attempt_at,
  };
}

export function channelsService(deps: { channels: ChannelsRepo; deliveries: DeliveriesRepo; sealer: ChannelConfigSealer; senders: Senders; clock: Clock; secretKey: string }) {
  const { channels, deliveries, sealer, clock } = deps;
  const cursors = signedCursor(deps.secretKey, 'deliveries-cursor', (v): v is [string, string, number] =>
    v.length === 3 && typeof v[0] === 'string' && typeof v[1] === 'string' && Number.isInteger(v[2]));

  function view(row: ChannelRow) {
    const target = sealer.open(row);
    return {
      id: row.id,
      name: row.name,
      channel_type: checkChannelType(row.channel_type),
      config: target ? maskedConfig(target) : null,
      enabled: row.enabled === 1,
      created_at: row.created_at,
      updated_at: row.updated_at,
      last_delivery_at: row.last_delivery_at,
      last_delivery_status: row.last_delivery_status,
    };
  }

  async function owned(accountId: string, channelId: string): Promise<ChannelRow> {
    const row = await channels.find(accountId, channelId);
    if (!row) throw notFound('channel');
    return row;
  }

  return {
    async create(accountId: string, body: Static<typeof CreateChannelBody>) {
      const name = checkName(body.name);
      const target = checkConfig(checkChannelType(body.channel_type), body.config);
      const id = newId('chn');
      const now = iso(clock.now());
      const row: ChannelRow = {
        id, account_id: accountId, name, channel_type: target.type, config: sealer.seal(id, target), enabled: body.enabled === false ? 0 : 1,
        created_at: now, updated_at: now, last_delivery_at: null, last_delivery_status: null,
      };
      if (!(await channels.insertWithinLimit(row, CHANNELS_MAX))) {
        throw new ApiError('channel_limit_reached', `an account can have at most ${CHANNELS_MAX} channels; delete one first`);
      }
      return view(row);
    },

    async list(accountId: string) {
      return { channels: (await channels.list(accountId)).map(view) };
    },

    async get(accountId: string, channelId: string) {
      return view(await owned(accountId, channelId));
    },

    async update(accountId: string, channelId: string, body: Static<typeof UpdateChannelBody>) {
      const row = await owned(accountId, channelId);
      if (body.channel_type !== undefined) throw validationFailed('/channel_type', 'cannot be changed; create a channel of the other type instead');
      const changes: ChannelChanges = { updated_at: iso(clock.now()) };
      if (body.name !== undefined) changes.name = checkName(body.name);
      if (body.enabled !== undefined) changes.enabled = body.enabled ? 1 : 0;
      if (body.config !== undefined) {
        changes.config = sealer.seal(row.id, checkConfig(checkChannelType(row.channel_type), body.config, sealer.open(row)));
      }
      const updated = await channels.update(accountId, channelId, changes);
      if (!updated) throw notFound('channel');
      return view(updated);
    },

    async remove(accountId: string, channelId: string): Promise<void> {
      if (!(await channels.delete(accountId, channelId))) throw notFound('channel');
    },

    /**
     * Sends a channel.test notification now, disabled channels included (a
     * channel is worth testing before it is switched on), and records the
     * attempt. A failed delivery is an answer, not an API error.
     */
    async test(accountId: string, channelId: string): Promise<{ success: boolean; error?: string }> {
      const row = await owned(accountId, channelId);
      const target = sealer.open(row);
      const now = clock.now();
      const deliveryId = newId('dlv');
      const result = target
        ? await deps.senders.send(target, testNotification(row, iso(now)), { deliveryId, now })
        : null;
      const error = result ? result.error : 'the channel\'s stored config cannot be decrypted with the current SECRET_KEY; update its config';
      const ok = result?.ok === true;
      await deliveries.recordAttempt({
        id: deliveryId, attempt: 1, channel_id: row.id, account_id: accountId, outbox_id: null, alert_id: null, event: 'channel.test',
        status: ok ? 'sent' : 'failed', http_status: result?.httpStatus ?? null, smtp_reply: result?.smtpReply ?? null, error,
        duration_ms: result?.durationMs ?? 0, created_at: iso(clock.now()), next_attempt_at: null,
      });
      return ok ? { success: true } : { success: false, error: error ?? 'delivery failed' };
    },

    async deliveries(accountId: string, channelId: string, query: Static<typeof ListDeliveriesQuery>) {
      await owned(accountId, channelId);
      const limit = query.limit ?? DEFAULT_DELIVERIES_PAGE;
      const after: DeliveryPosition | null = query.cursor === undefined ? null : cursors.decode(accountId, query.cursor);
      // One row beyond the page tells whether another page exists without a count query.
      const rows = await deliveries.page(channelId, { after, limit: limit + 1 });
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return {
        deliveries: page.map(deliveryView),
        next_cursor: rows.length > limit && last ? cursors.encode(accountId, [last.created_at, last.id, last.attempt]) : null,
      };
    },
  };
}

export type ChannelsService = ReturnType<typeof channelsService>;
