import type { Request, Response, Router } from 'express';
import { describeError } from '../base/errors.js';
import { selectedAdmin } from './admin-http.js';
import type { ConversationDetail } from './admin-views.js';
import { CONVERSATION_STATUSES } from './conversation-status.js';
import type { EmulatorAdmin } from './emulator-admin.js';
import type { EmulatorBusinesses } from './emulator-businesses.js';
import type { InboxClocks } from './inbox-clocks.js';
import { type InboxPageModel, renderInboxPage } from './inbox-page.js';

/**
 * What the inbox page shows for `?business=<id>&status=<tab>&c=<conversation id>`. An unknown
 * business, a conversation that cannot be read, or clocks the bridge cannot give become the
 * page's notice rather than an error page.
 */
async function readInboxModel(businesses: EmulatorBusinesses, req: Request): Promise<InboxPageModel> {
  let notice: string | undefined;
  let admin: EmulatorAdmin;
  try {
    admin = selectedAdmin(businesses, req);
  } catch (error) {
    admin = businesses.first;
    notice = describeError(error);
  }
  const status = typeof req.query.status === 'string' ? req.query.status : '';
  const selectedStatus = CONVERSATION_STATUSES.find((s) => s === status) ?? null;
  const selectedId = typeof req.query.c === 'string' ? req.query.c : undefined;
  let selected: ConversationDetail | null = null;
  if (selectedId !== undefined) {
    try {
      selected = admin.conversation(selectedId);
    } catch (error) {
      notice = describeError(error);
    }
  }
  let clocks: InboxClocks | null = null;
  if (selected !== null) {
    try {
      clocks = await admin.clocks(selected.id);
    } catch (error) {
      notice = `the bridge's clocks could not be read: ${describeError(error)}`;
    }
  }
  const counts = admin.statusCounts();
  return {
    businessName: admin.summary().business.name,
    form: admin.form,
    counts,
    total: Object.values(counts).reduce((sum, n) => sum + n, 0),
    status: selectedStatus,
    conversations: admin.conversations({ status: selectedStatus ?? undefined }),
    selected,
    clocks,
    nowMs: admin.nowMs(),
    notice,
    businesses: businesses.list().map((b) => ({ id: b.businessId, name: b.businessName })),
    business: admin.businessId,
  };
}

/** GET /_emulator/inbox: the emulated dashboard (inbox-page.ts renders it). */
export function registerInboxRoute(router: Router, businesses: EmulatorBusinesses): void {
  router.get('/inbox', async (req: Request, res: Response) => {
    const model = await readInboxModel(businesses, req);
    res.status(200).type('html').send(renderInboxPage(model));
  });
}
