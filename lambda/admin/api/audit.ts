import type { AdminContext } from '../context.ts';
import { adminError } from '../http.ts';

/**
 * GET /admin/api/audit[?day=YYYY-MM-DD][&cursor=…]: one UTC day of the audit trail (sign-ins,
 * refusals, revocations, every console and key CLI change), newest first, 100 events per page
 * (one Query). Events are kept 400 days.
 */
const PAGE = 100;

export async function auditTrail(context: AdminContext) {
  if (!context.audit) throw adminError.unavailable('This gateway keeps no audit trail (no identity table): set GATEWAY_IDENTITY_TABLE, as npm start does.');
  const query = context.request.query;
  const day = query.get('day') || new Date(context.now()).toISOString().slice(0, 10);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(Date.parse(`${day}T00:00:00Z`))) throw adminError.invalid('day must be a UTC day, like 2026-11-26.', 'day');
  try {
    const page = await context.audit.page(day, { limit: PAGE, ...(query.get('cursor') ? { cursor: query.get('cursor') as string } : {}) });
    return { day, events: page.events, cursor: page.cursor ?? null };
  } catch (error) {
    if (error instanceof RangeError) throw adminError.invalid(error.message, 'cursor');
    throw error;
  }
}
