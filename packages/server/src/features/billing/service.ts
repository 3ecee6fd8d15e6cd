import { ApiError } from '../../http/errors.js';
import type { BillingRepo, LegacySubscriptionRow, ServerCounts } from './repo.js';

/*
 * Billing is retired: Kiln charges nothing and no plan gates anything. These
 * endpoints stay routable only for accounts that carry a residual legacy
 * subscription (imported historical state, one legacy_subscriptions row).
 *
 * Decisions the spec leaves open:
 * - Without a row the record is the free default: plan `free`, no payment
 *   method, no period, no flags, quota 0. The two server counts are always
 *   computed live from the servers table, with or without a row.
 * - checkout: 410 `gone` for everyone; there is nothing to buy.
 * - portal, resume, downgrade without a row: 409 `no_legacy_subscription`.
 * - resume clears cancel_at_period_end; downgrade sets it (the legacy plan
 *   ends at current_period_end and the account stays on free). Both are
 *   idempotent and answer {success: true, billing}.
 * - portal has no payment provider behind it any more, so it answers
 *   {success: true, url: null, message} instead of a redirect URL.
 * - Stored values are reported as they are: nothing ever renews or charges,
 *   so no job moves a legacy plan to free when its period end passes.
 */
export const PORTAL_RETIRED_MESSAGE =
  'The billing portal is retired and Kiln charges nothing; the legacy subscription ends at current_period_end and the account stays on the free plan.';

export function billingRecord(row: LegacySubscriptionRow | undefined, counts: ServerCounts) {
  return {
    plan: row?.plan ?? 'free',
    has_default_payment_method: row?.has_default_payment_method === 1,
    current_period_end: row?.current_period_end ?? null,
    cancel_at_period_end: row?.cancel_at_period_end === 1,
    billing_enforcement_exempt: row?.billing_enforcement_exempt === 1,
    active_server_count: counts.active,
    suspended_no_card_count: counts.suspendedNoCard,
    free_server_quota: row?.free_server_quota ?? 0,
  };
}

function noLegacySubscription(): ApiError {
  return new ApiError('no_legacy_subscription', 'this account has no legacy subscription; Kiln charges for nothing');
}

export function billingService(deps: { repo: BillingRepo }) {
  const { repo } = deps;

  async function status(accountId: string) {
    const [row, counts] = await Promise.all([repo.findLegacy(accountId), repo.serverCounts(accountId)]);
    return billingRecord(row, counts);
  }

  async function setCancel(accountId: string, cancel: boolean) {
    if (!(await repo.setCancelAtPeriodEnd(accountId, cancel))) throw noLegacySubscription();
    return { success: true as const, billing: await status(accountId) };
  }

  return {
    status,

    checkout(): never {
      throw new ApiError('gone', 'billing checkout is retired: Kiln charges nothing, every feature is available without a plan');
    },

    async portal(accountId: string) {
      if (!(await repo.findLegacy(accountId))) throw noLegacySubscription();
      return { success: true as const, url: null, message: PORTAL_RETIRED_MESSAGE };
    },

    resume: (accountId: string) => setCancel(accountId, false),
    downgrade: (accountId: string) => setCancel(accountId, true),
  };
}

export type BillingService = ReturnType<typeof billingService>;
