import { performance } from 'node:perf_hooks';
import type { Config } from '../../config.js';
import { outboundClient, type OutboundClient } from '../../lib/safe-fetch.js';
import { DASHBOARD_VERSION } from '../../features/meta/agent-version.js';
import type { ChannelTarget, ChannelType, ConfigByType } from '../channel-types.js';
import type { Notification } from '../message.js';
import { discordSender } from './discord.js';
import { emailSender } from './email.js';
import { pagerDutySender } from './pagerduty.js';
import { failureResult, type SendContext, type Sender, type SendResult } from './sender.js';
import { slackSender } from './slack.js';
import { telegramSender } from './telegram.js';
import { webhookSender } from './webhook.js';

export type { SendContext, SendResult } from './sender.js';

export interface Senders {
  /** One attempt to deliver `notification` to the channel; never throws. */
  send(target: ChannelTarget, notification: Notification, ctx: SendContext): Promise<SendResult>;
}

/** Every sender, wired to the settings; one set per process serves the test endpoint and the delivery worker alike. */
export function createSenders(config: Pick<Config, 'delivery' | 'smtpUrl' | 'mailFrom' | 'publicUrl'>, outbound?: OutboundClient): Senders {
  const { delivery, publicUrl } = config;
  const http = outbound ?? outboundClient({
    allowPrivateTargets: delivery.allowPrivateTargets,
    timeoutMs: delivery.timeoutMs,
    userAgent: `Kiln/${DASHBOARD_VERSION} (notifications)`,
  });
  const byType: { [K in ChannelType]: Sender<ConfigByType[K]> } = {
    email: emailSender({ smtpUrl: config.smtpUrl, from: config.mailFrom, timeoutMs: delivery.timeoutMs, publicUrl }),
    telegram: telegramSender(http, delivery.telegramApiUrl, publicUrl),
    slack: slackSender(http, publicUrl),
    discord: discordSender(http, publicUrl),
    pagerduty: pagerDutySender(http, delivery.pagerdutyEventsUrl, publicUrl),
    webhook: webhookSender(http),
  };
  return {
    async send(target, notification, ctx) {
      const started = performance.now();
      const sender = byType[target.type] as Sender<typeof target.config>;
      try {
        return await sender(target.config, notification, ctx);
      } catch (err) {
        // A fault of ours (a rendering bug) must still end as a recorded, retryable attempt, not a lost message.
        return failureResult(err, started);
      }
    },
  };
}
