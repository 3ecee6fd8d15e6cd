import { sealer } from '../../lib/crypto.js';
import { isChannelType, type ChannelTarget } from '../../notify/channel-types.js';

/**
 * Channel configs at rest: the whole config JSON sealed with AES-256-GCM
 * under a key derived from SECRET_KEY, bound to the channel id (a sealed
 * config copied onto another channel row does not open).
 */
export function channelConfigSealer(secretKey: string) {
  const sealed = sealer(secretKey, 'channel-config');
  return {
    seal(channelId: string, target: ChannelTarget): string {
      return sealed.seal(channelId, JSON.stringify(target.config));
    },
    /** The channel's type and config; null when it was sealed under another SECRET_KEY or altered. */
    open(row: { id: string; channel_type: string; config: string }): ChannelTarget | null {
      const text = sealed.open(row.id, row.config);
      if (text === null || !isChannelType(row.channel_type)) return null;
      return { type: row.channel_type, config: JSON.parse(text) } as ChannelTarget;
    },
  };
}

export type ChannelConfigSealer = ReturnType<typeof channelConfigSealer>;
