/**
 * The BullMQ states of a job that has yet to run (a held or parked one waits in `delayed`): what
 * the held-jobs count (businesses/held-jobs.ts) and the timers list (timers/list-timers.ts) read.
 */
export const PENDING_STATES = ['waiting', 'delayed', 'prioritized', 'active'] as const;
