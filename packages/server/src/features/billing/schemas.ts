import { Type } from '@sinclair/typebox';
import { Timestamp } from '../../http/schemas.js';

export const BillingRecord = Type.Object({
  plan: Type.String({ description: '`free` unless the account has a residual legacy subscription' }),
  has_default_payment_method: Type.Boolean(),
  current_period_end: Type.Union([Timestamp, Type.Null()], { description: 'End of the legacy billing period; null without one' }),
  cancel_at_period_end: Type.Boolean({ description: 'The legacy plan ends at current_period_end and the account stays on free' }),
  billing_enforcement_exempt: Type.Boolean(),
  active_server_count: Type.Integer({ description: 'Servers (not in the trash) with status `active`' }),
  suspended_no_card_count: Type.Integer({ description: 'Servers (not in the trash) suspended with reason `no_card_on_file` (historical)' }),
  free_server_quota: Type.Integer({ description: 'Historical; nothing is limited by it' }),
}, { description: 'Legacy billing state; Kiln charges nothing' });

export const BillingActionResponse = Type.Object({
  success: Type.Literal(true),
  billing: BillingRecord,
});

export const PortalResponse = Type.Object({
  success: Type.Literal(true),
  url: Type.Null({ description: 'Always null: there is no payment provider to send you to' }),
  message: Type.String(),
});
